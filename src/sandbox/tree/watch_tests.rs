//! The watched tree against a walk from nothing: after every change, made in every way a
//! command could (nested `mkdir -p` at every depth, a `rename` from outside or inside, a
//! directory replaced, moved away and back, a `.git` file, a secret file made or renamed), a
//! look that reads only what the watch reported finds exactly the `.git` entries and secret
//! files a full walk finds. Each case goes on for a second round inside what the first made,
//! so a directory the watch missed would be missed there.
#![cfg(target_os = "linux")]

use super::*;
use pretty_assertions::assert_eq;
use std::fs;

/// The directories every case starts from, below the workspace.
const BASE: &[&str] = &["a/b/c/d", "x/y", "node_modules/p/q"];

/// Existing directories at each depth (0 is the workspace itself).
const EXISTING: &[&str] = &["", "a", "a/b", "a/b/c", "a/b/c/d", "node_modules/p/q"];

struct Case {
    root: tempfile::TempDir,
    work: PathBuf,
    outside: PathBuf,
    tree: Tree,
    watch: Watch,
}

impl Case {
    fn new() -> Case {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let work = base.join("work");
        let outside = base.join("outside");
        for dir in BASE {
            fs::create_dir_all(work.join(dir)).unwrap();
        }
        fs::create_dir_all(&outside).unwrap();
        fs::create_dir_all(work.join(".git/objects")).unwrap();
        let watch = Watch::start(&work).expect("inotify works here");
        let mut tree = Tree::new(&work);
        tree.walk(&work, None);
        Case {
            root,
            work,
            outside,
            tree,
            watch,
        }
    }

    /// A look through the watch alone (it must be able to say), checked against a walk.
    fn look(&mut self, what: &str) {
        let changes = self
            .watch
            .changes()
            .unwrap_or_else(|| panic!("{what}: the watch could not say what changed"));
        self.tree.refresh_from(changes, &mut self.watch);
        let mut walked = Tree::new(&self.work);
        walked.walk(&self.work, None);
        assert_eq!(self.tree.git_entries(), walked.git_entries(), "{what}");
        assert_eq!(self.tree.secret_files(), walked.secret_files(), "{what}");
        let known: BTreeSet<&PathBuf> = self.tree.dirs.keys().collect();
        let all: BTreeSet<&PathBuf> = walked.dirs.keys().collect();
        assert_eq!(known, all, "{what}");
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.work.join(relative)
    }
}

/// `n1/n2/…` of `depth` new directories (empty for 0).
fn chain(name: &str, depth: usize) -> String {
    (1..=depth)
        .map(|n| format!("{name}{n}"))
        .collect::<Vec<_>>()
        .join("/")
}

fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .filter(|part| !part.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn nested_mkdir_at_every_depth_is_seen() {
    for at in EXISTING {
        for depth in 0..=4 {
            let mut case = Case::new();
            let made = join(&[at, &chain("n", depth)]);
            fs::create_dir_all(case.path(&join(&[&made, ".git"]))).unwrap();
            case.look(&format!("mkdir -p {made}/.git"));
            // Inside what was made: watched too.
            let deeper = join(&[&made, "m/.git"]);
            fs::create_dir_all(case.path(&deeper)).unwrap();
            fs::write(case.path(&join(&[&made, ".env"])), "K=1").unwrap();
            case.look(&format!("then mkdir -p {deeper}"));
        }
    }
}

#[test]
fn a_tree_renamed_in_from_outside_is_seen() {
    for at in EXISTING {
        for depth in 0..=3 {
            let mut case = Case::new();
            let inner = chain("t", depth);
            let built = case.outside.join("tree");
            fs::create_dir_all(built.join(&inner).join(".git")).unwrap();
            fs::write(built.join(&inner).join("id_rsa"), "key").unwrap();
            let target = join(&[at, "moved"]);
            fs::rename(&built, case.path(&target)).unwrap();
            case.look(&format!("mv tree {target}"));
            let deeper = join(&[&target, &inner, "u/.git"]);
            fs::create_dir_all(case.path(&deeper)).unwrap();
            case.look(&format!("then mkdir -p {deeper}"));
        }
    }
}

/// A change a command makes, named.
type Step<'a> = (&'a str, &'a dyn Fn(&Case));

#[test]
fn renames_inside_and_moves_away_and_back_are_seen() {
    let steps: &[Step] = &[
        ("mv a/b x/b2", &|case| {
            fs::rename(case.path("a/b"), case.path("x/b2")).unwrap();
        }),
        ("mkdir -p x/b2/c/d/e/.git", &|case| {
            fs::create_dir_all(case.path("x/b2/c/d/e/.git")).unwrap();
        }),
        ("mv x/b2/c/d a/d2 && touch a/d2/.git", &|case| {
            fs::rename(case.path("x/b2/c/d"), case.path("a/d2")).unwrap();
            fs::write(case.path("a/d2/.git"), "gitdir: z").unwrap();
        }),
        ("mv a t && mv t a", &|case| {
            fs::rename(case.path("a"), case.path("t")).unwrap();
            fs::rename(case.path("t"), case.path("a")).unwrap();
        }),
        ("mkdir -p a/d2/e/f/.git", &|case| {
            fs::create_dir_all(case.path("a/d2/e/f/.git")).unwrap();
        }),
        ("mv x ../outside/x && mkdir -p x/y/.git", &|case| {
            fs::rename(case.path("x"), case.outside.join("x")).unwrap();
            fs::create_dir_all(case.path("x/y/.git")).unwrap();
        }),
        (
            "mkdir ../outside/x/z/.git (moved away: not ours)",
            &|case| {
                fs::create_dir_all(case.outside.join("x/z/.git")).unwrap();
            },
        ),
        ("rm -rf a && mkdir -p a/b/.git", &|case| {
            fs::remove_dir_all(case.path("a")).unwrap();
            fs::create_dir_all(case.path("a/b/.git")).unwrap();
        }),
        ("mkdir a/b/c && mkdir a/b/c/.git", &|case| {
            fs::create_dir(case.path("a/b/c")).unwrap();
            fs::create_dir(case.path("a/b/c/.git")).unwrap();
        }),
        (
            "touch node_modules/p/.env && mv node_modules/p/.env node_modules/p/env",
            &|case| {
                fs::write(case.path("node_modules/p/.env"), "K=1").unwrap();
                fs::rename(
                    case.path("node_modules/p/.env"),
                    case.path("node_modules/p/env"),
                )
                .unwrap();
            },
        ),
        ("mv node_modules/p/env node_modules/p/q/.env", &|case| {
            fs::rename(
                case.path("node_modules/p/env"),
                case.path("node_modules/p/q/.env"),
            )
            .unwrap();
        }),
        (
            "ln -s ../outside a/b/link && mkdir ../outside/w/.git",
            &|case| {
                std::os::unix::fs::symlink(&case.outside, case.path("a/b/link")).unwrap();
                fs::create_dir_all(case.outside.join("w/.git")).unwrap();
            },
        ),
        ("rm -rf a/b/.git (a `.git` gone)", &|case| {
            fs::remove_dir_all(case.path("a/b/.git")).unwrap();
        }),
    ];
    let mut case = Case::new();
    for (what, step) in steps {
        step(&case);
        case.look(what);
    }
    // Nothing left unread: a look with no change reports nothing.
    let changes = case.watch.changes().unwrap();
    assert!(
        !case.tree.refresh_from(changes, &mut case.watch),
        "a look with no change changed the tree"
    );
    drop(case.root);
}

/// A directory that cannot be read when the watch looks (`chmod 000` of it, or of one above
/// it) makes the watch give up, since making it readable again is no entry change the watch
/// reports: the next look is a full one, which finds what the directory held by then.
#[test]
fn an_unreadable_directory_hands_over_to_the_full_look() {
    use std::os::unix::fs::PermissionsExt as _;
    for (locked, made) in [
        ("d", "d/.git"),
        ("p", "p/d/.git"),
        ("p", "p/d/e/.git"),
        ("a/b", "a/b/c/d/.git"),
    ] {
        let mut case = Case::new();
        let parent = Path::new(made)
            .parent()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        fs::create_dir_all(case.path(&parent)).unwrap();
        case.look(&format!("mkdir -p {parent}"));
        fs::create_dir_all(case.path(made)).unwrap();
        fs::write(case.path(&format!("{made}/config")), "[core]\n").unwrap();
        let mode = |mode| fs::Permissions::from_mode(mode);
        fs::set_permissions(case.path(locked), mode(0o000)).unwrap();
        if let Some(changes) = case.watch.changes() {
            case.tree.refresh_from(changes, &mut case.watch);
        }
        fs::set_permissions(case.path(locked), mode(0o755)).unwrap();
        match case.watch.changes() {
            Some(changes) => {
                case.tree.refresh_from(changes, &mut case.watch);
            }
            None => {
                case.tree.refresh(None);
            }
        }
        let mut walked = Tree::new(&case.work);
        walked.walk(&case.work, None);
        assert_eq!(
            case.tree.git_entries(),
            walked.git_entries(),
            "mkdir {made}; chmod 000 {locked}; look; chmod 755 {locked}; look"
        );
    }
}

/// Events lost (the kernel's queue overflowed while a command ran): that look is a full one,
/// and the watch goes on — its watches stand, and what the full look finds new, moved or
/// replaced is walked and so watched again under its path. The looks after it, through the
/// watch alone, still see everything, inside what moved or was replaced during the overflow.
#[test]
fn after_lost_events_the_watch_goes_on() {
    let queued: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(16384);
    let mut case = Case::new();
    for n in 0..=queued {
        fs::write(case.path(&format!("x/y/f{n}")), "").unwrap();
    }
    fs::rename(case.path("a/b"), case.path("x/b2")).unwrap();
    fs::rename(case.path("x"), case.path("t")).unwrap();
    fs::rename(case.path("t"), case.path("x")).unwrap();
    fs::remove_dir_all(case.path("node_modules/p/q")).unwrap();
    fs::create_dir_all(case.path("node_modules/p/q/r")).unwrap();
    assert!(case.watch.changes().is_none(), "the queue did not overflow");
    assert!(case.watch.usable());
    case.tree.refresh(Some(&mut case.watch));
    let steps: &[Step] = &[
        ("mkdir -p x/b2/c/d/.git", &|case| {
            fs::create_dir_all(case.path("x/b2/c/d/.git")).unwrap();
        }),
        ("mkdir node_modules/p/q/r/.git && touch x/y/.env", &|case| {
            fs::create_dir(case.path("node_modules/p/q/r/.git")).unwrap();
            fs::write(case.path("x/y/.env"), "K=1").unwrap();
        }),
        ("mkdir -p x/b2/c/e/.git a/n/.git", &|case| {
            fs::create_dir_all(case.path("x/b2/c/e/.git")).unwrap();
            fs::create_dir_all(case.path("a/n/.git")).unwrap();
        }),
    ];
    for (what, step) in steps {
        step(&case);
        case.look(what);
    }
}
