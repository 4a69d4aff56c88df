//! Where the `.git` entries and the secret files of a workspace are, kept up to date cheaply
//! between commands — and between runs.
//!
//! The first look walks the whole workspace (not inside `.git` directories, not following
//! links) and records every directory with its inode and change time, whether it holds a
//! `.git`, and the names of the secret files in it (`assets/secret-files.txt`). Later looks
//! only `stat` the recorded directories: adding, removing or renaming an entry changes its
//! directory's change time (`ctime`, which no program can set back: `utimensat` moves it to
//! now), so only the directories that changed are read again, and new ones walked. A command
//! then costs a `stat` per directory before and after it, not two walks.
//!
//! In a run or session the workspace is watched besides (`watch.rs`): a look after a command
//! then reads only the directories the watch saw change, whatever the workspace's size; the
//! full look above is what is left when the watch cannot say (not started, events lost, a
//! watch limit).
//!
//! The tree is kept in the state directory too (`<state>/sandbox/tree-…`), so that the next
//! process (`agent exec`, the next run) starts from it instead of walking again. What is read
//! from there is only a starting point: every directory in it is checked as above, and one
//! that changed since is read again, so a stale or foreign file costs a walk, never a miss.
//! (A program that could write the state directory could also change the agent itself; the
//! sandbox keeps commands out of it.)

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::watch::{Changes, Watch};

/// A directory's identity and last change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    changed: (i64, i64),
}
fn stamp(path: &Path) -> Option<Stamp> {
    let meta = path.symlink_metadata().ok()?;
    if !meta.is_dir() {
        return None;
    }
    Some(stamp_of(&meta))
}

/// Whether `path` cannot be looked up for another reason than not being there (a
/// directory above it cannot be searched).
fn hidden(path: &Path) -> bool {
    path.symlink_metadata()
        .is_err_and(|error| error.kind() != std::io::ErrorKind::NotFound)
}

#[cfg(unix)]
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt as _;
    Stamp {
        inode: meta.ino(),
        changed: (meta.ctime(), meta.ctime_nsec()),
    }
}

#[cfg(not(unix))]
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    // No change time here: the modification time (which a program can set back) instead.
    let changed = meta
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or((0, 0), |d| {
            (
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                i64::from(d.subsec_nanos()),
            )
        });
    Stamp { inode: 0, changed }
}

/// One directory of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dir {
    stamp: Stamp,
    /// It holds an entry named `.git`.
    git: bool,
    /// The names of the secret files in it.
    secrets: Vec<OsString>,
}

/// The directories of one workspace, their `.git` entries and secret files.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tree {
    root: PathBuf,
    /// When the tree was last brought up to date (seconds since the epoch).
    looked: i64,
    /// In path order: a directory's descendants follow it.
    dirs: BTreeMap<PathBuf, Dir>,
}

impl Tree {
    fn new(root: &Path) -> Tree {
        Tree {
            root: root.to_path_buf(),
            looked: now_secs(),
            dirs: BTreeMap::new(),
        }
    }

    fn is_secret(&self, file: &Path) -> bool {
        file.strip_prefix(&self.root)
            .is_ok_and(|relative| crate::workspace::SecretFiles::defaults().is_secret(relative))
    }

    /// Walks `dir` and everything below it into the tree, watched first when `watch` is
    /// given (so that what changes after the read is reported).
    fn walk(&mut self, dir: &Path, mut watch: Option<&mut Watch>) {
        if let Some(watch) = watch.as_deref_mut() {
            watch.add(dir);
        }
        let walk = ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(|entry| entry.depth() == 0 || entry.file_name() != ".git")
            .build();
        let mut secrets = Vec::new();
        for entry in walk {
            let Ok(entry) = entry else {
                // A directory that cannot be read holds what the watch cannot vouch for.
                distrust(watch.as_deref_mut());
                continue;
            };
            let Some(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if let Ok(meta) = entry.metadata() {
                    let git = entry.path().join(".git").symlink_metadata().is_ok();
                    let dir = Dir {
                        stamp: stamp_of(&meta),
                        git,
                        secrets: Vec::new(),
                    };
                    self.dirs.insert(entry.path().to_path_buf(), dir);
                }
            } else if kind.is_file() && self.is_secret(entry.path()) {
                secrets.push(entry.into_path());
            }
        }
        for file in secrets {
            if let (Some(parent), Some(name)) = (file.parent(), file.file_name())
                && let Some(dir) = self.dirs.get_mut(parent)
            {
                dir.secrets.push(name.to_owned());
                dir.secrets.sort();
            }
        }
    }

    /// Reads `path` (a directory whose change time moved) again: its `.git`, its secret
    /// files, and walks the directories in it that are new. Whether any of that changed (a
    /// new stamp alone is not worth keeping: the next process reads the directory again).
    fn reread(&mut self, path: &Path, stamp: Stamp, mut watch: Option<&mut Watch>) -> bool {
        let git = match path.join(".git").symlink_metadata() {
            Ok(_) => true,
            Err(error) => {
                if error.kind() != std::io::ErrorKind::NotFound {
                    distrust(watch.as_deref_mut());
                }
                false
            }
        };
        let mut secrets = Vec::new();
        let mut new_dirs = Vec::new();
        let entries = std::fs::read_dir(path);
        if entries.is_err() {
            // Unreadable (`chmod 000`): what it holds is unknown until a full look.
            distrust(watch.as_deref_mut());
        }
        if let Ok(entries) = entries {
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let child = entry.path();
                if kind.is_dir() {
                    if entry.file_name() != ".git" && !self.dirs.contains_key(&child) {
                        new_dirs.push(child);
                    }
                } else if kind.is_file() && self.is_secret(&child) {
                    secrets.push(entry.file_name());
                }
            }
        }
        secrets.sort();
        let dir = Dir {
            stamp,
            git,
            secrets,
        };
        let before = self.dirs.insert(path.to_path_buf(), dir);
        let same = before.is_some_and(|before| {
            let now = &self.dirs[path];
            before.git == now.git && before.secrets == now.secrets
        });
        let found = !new_dirs.is_empty();
        for dir in new_dirs {
            self.walk(&dir, watch.as_deref_mut());
        }
        found || !same
    }

    /// Forgets `path` and every directory below it. Whether it knew any.
    fn forget(&mut self, path: &Path) -> bool {
        let below: Vec<PathBuf> = self
            .dirs
            .range(path.to_path_buf()..)
            .map(|(dir, _)| dir)
            .take_while(|dir| dir.starts_with(path))
            .cloned()
            .collect();
        for dir in &below {
            self.dirs.remove(dir);
        }
        !below.is_empty()
    }

    /// `path` (a directory whose inode changed, or made or moved in) walked again from
    /// nothing: what was known below it is forgotten. Whether anything was known or found.
    fn renew(&mut self, path: &Path, watch: Option<&mut Watch>) -> bool {
        let forgot = self.forget(path);
        let is_dir = path.symlink_metadata().is_ok_and(|meta| meta.is_dir());
        if is_dir {
            self.walk(path, watch);
        }
        forgot || is_dir
    }

    /// Brings the tree up to date from what the watch saw: the directories made or moved in
    /// walked again whole, those whose entries changed read again, those gone forgotten.
    /// Whether anything changed.
    fn refresh_from(&mut self, changes: Changes, watch: &mut Watch) -> bool {
        let mut dirty = false;
        // In path order, so a fresh directory inside another fresh one is walked once.
        let mut renewed: Vec<PathBuf> = Vec::new();
        for path in changes.fresh {
            // A new `.git` is its parent's (dirty too), never walked into.
            if renewed.iter().any(|outer| path.starts_with(outer))
                || !self.known_parent(&path)
                || path.file_name().is_some_and(|name| name == ".git")
            {
                continue;
            }
            if hidden(&path) {
                watch.distrust();
            }
            dirty |= self.renew(&path, Some(watch));
            renewed.push(path);
        }
        for path in changes.dirty {
            if renewed.iter().any(|outer| path.starts_with(outer)) {
                continue;
            }
            if hidden(&path) {
                // Behind a directory that cannot be searched (`chmod 000` above it): it
                // comes back when that directory is changed again, which the watch does not
                // report as an entry change.
                watch.distrust();
            }
            let known = self.dirs.get(&path).map(|dir| dir.stamp.inode);
            dirty |= match (known, stamp(&path)) {
                (Some(_), None) => self.forget(&path),
                (Some(inode), Some(now)) if inode != now.inode => {
                    renewed.push(path.clone());
                    self.renew(&path, Some(watch))
                }
                (Some(_), Some(now)) => self.reread(&path, now, Some(watch)),
                // Not known: its parent, which holds it, is read again (also dirty).
                (None, _) => false,
            };
        }
        if self.dirs.is_empty() {
            self.walk(&self.root.clone(), Some(watch));
            dirty = true;
        }
        self.looked = now_secs();
        dirty
    }

    /// Whether `path`'s parent is a directory of the tree (the workspace's own entries and
    /// those of the directories walked), so that `path` belongs in it.
    fn known_parent(&self, path: &Path) -> bool {
        path.parent()
            .is_some_and(|parent| self.dirs.contains_key(parent))
    }

    /// Brings the tree up to date: reads again the directories whose change time moved,
    /// forgets the ones gone, walks the new ones (and the ones replaced: another inode).
    /// Whether anything changed.
    fn refresh(&mut self, mut watch: Option<&mut Watch>) -> bool {
        let mut changed = Vec::new();
        let mut gone = Vec::new();
        let mut replaced = Vec::new();
        // Change times may come from a coarse clock: a directory changed shortly before the
        // last look could change again with the same time, so it is read again anyway.
        let recent = self.looked - RECENT_SECS;
        let looked = now_secs();
        let dirs: Vec<(&PathBuf, &Dir)> = self.dirs.iter().collect();
        for ((path, dir), now) in dirs.iter().zip(stamps(&dirs)) {
            match now {
                Some(now) if now == dir.stamp && dir.stamp.changed.0 < recent => {}
                Some(now) if now.inode != dir.stamp.inode => replaced.push((*path).clone()),
                Some(now) => changed.push(((*path).clone(), now)),
                None => gone.push((*path).clone()),
            }
        }
        let mut dirty = !gone.is_empty() || !replaced.is_empty();
        self.looked = looked;
        for path in gone {
            self.dirs.remove(&path);
        }
        for path in replaced {
            self.renew(&path, watch.as_deref_mut());
        }
        // Stamps alone are kept too once many directories were read again for them (a tree
        // walked right after its directories were made reads them all again until then); a
        // few (the workspace itself, where each command's `.agent` comes and goes) are not
        // worth writing the file for.
        dirty |= changed.len() > STALE_STAMPS_KEPT;
        for (path, now) in changed {
            // Forgotten meanwhile: inside a directory replaced above.
            if self.dirs.contains_key(&path) {
                dirty |= self.reread(&path, now, watch.as_deref_mut());
            }
        }
        if self.dirs.is_empty() {
            // The workspace itself was gone or replaced: start again.
            self.walk(&self.root.clone(), watch);
            dirty = true;
        }
        dirty
    }

    fn git_entries(&self) -> BTreeSet<PathBuf> {
        self.dirs
            .iter()
            .filter(|(_, dir)| dir.git)
            .map(|(path, _)| path.join(".git"))
            .collect()
    }

    fn secret_files(&self) -> BTreeSet<PathBuf> {
        self.dirs
            .iter()
            .flat_map(|(path, dir)| dir.secrets.iter().map(|name| path.join(name)))
            .collect()
    }
}

/// The stamps of `dirs` now, in order: on a few threads for a large tree (the time is the
/// kernel's path lookups, which run in parallel).
fn stamps(dirs: &[(&PathBuf, &Dir)]) -> Vec<Option<Stamp>> {
    const PER_THREAD: usize = 256;
    let wanted = dirs.len() / PER_THREAD;
    // Asked only for a large tree: it reads the cgroup's CPU quota files each time.
    let threads = if wanted < 2 {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .min(4)
            .min(wanted)
    };
    if threads == 1 {
        return dirs.iter().map(|(path, _)| stamp(path)).collect();
    }
    let chunk = dirs.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let one = |part: &[(&PathBuf, &Dir)]| -> Vec<Option<Stamp>> {
            part.iter().map(|(path, _)| stamp(path)).collect()
        };
        let handles: Vec<_> = dirs
            .chunks(chunk)
            .map(|part| (part, scope.spawn(move || one(part))))
            .collect();
        handles
            .into_iter()
            // A thread that panicked (it cannot: `stamp` only reads) is done again here.
            .flat_map(|(part, handle)| handle.join().unwrap_or_else(|_| one(part)))
            .collect()
    })
}

/// More directories than this read again for a new stamp alone: the kept tree is written.
const STALE_STAMPS_KEPT: usize = 8;

/// How long before a look a directory's change counts as recent (see [`Tree::refresh`]).
const RECENT_SECS: i64 = 2;

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Stops trusting `watch`, when there is one (see [`Watch::distrust`]).
fn distrust(watch: Option<&mut Watch>) {
    if let Some(watch) = watch {
        watch.distrust();
    }
}

/// A workspace's tree and its watch in this process.
#[derive(Debug)]
struct Kept {
    tree: Tree,
    /// Watching it (`watch.rs`): `None` until started, and once it stopped.
    watch: Option<Watch>,
    /// A watch was started once (it is not started again after it stopped).
    started: bool,
    /// What the tree holds, as last gathered (the sets are not gathered again from every
    /// directory while nothing in them changed).
    found: Option<Found>,
    /// The tree changed since it was last kept in the state directory.
    unsaved: bool,
    /// When it was last kept there by this process.
    saved: Option<std::time::Instant>,
}

/// While a watch stands, the tree is kept in the state directory at most this often: writing
/// it is O(directories), and the file is only the next process's starting point (what changed
/// since it was written is found there by its change times, never missed).
const SAVED_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// The trees of the workspaces this process has looked at.
static TREES: Mutex<Option<HashMap<PathBuf, Kept>>> = Mutex::new(None);

/// What a look at a workspace found, up to date now.
#[derive(Debug, Default, Clone)]
pub(super) struct Found {
    /// Every entry named `.git` below the workspace (its own included).
    pub git_entries: BTreeSet<PathBuf>,
    /// Every secret file in it (not inside `.git` directories).
    pub secret_files: BTreeSet<PathBuf>,
}

/// Looks at `workspace` (canonical): from this process's tree of it, else from the one kept
/// in `cache` (a directory of the agent's state), else by walking it. Keeps the tree in
/// `cache` again when it changed.
pub(super) fn look(workspace: &Path, cache: Option<&Path>) -> Found {
    let mut trees = TREES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let trees = trees.get_or_insert_with(HashMap::new);
    let file = cache.map(|dir| dir.join(store::file_name(workspace)));
    let mut dirty = false;
    let kept = trees.entry(workspace.to_path_buf()).or_insert_with(|| {
        let tree = file
            .as_deref()
            .and_then(|file| store::load(file, workspace))
            .unwrap_or_else(|| {
                dirty = true;
                let mut tree = Tree::new(workspace);
                tree.walk(workspace, None);
                tree
            });
        Kept {
            tree,
            watch: None,
            started: false,
            found: None,
            unsaved: false,
            saved: None,
        }
    });
    let mut full = true;
    if let Some(watch) = &mut kept.watch {
        if let Some(changes) = watch.changes() {
            dirty |= kept.tree.refresh_from(changes, watch);
            full = false;
        } else if !watch.usable() {
            kept.watch = None;
        }
        // Else events were lost: the full look below, the watch kept. Its watches stand
        // (the kernel ends one only with its directory), and every directory the full look
        // finds new or replaced (one made again, moved in, moved back) is walked, and so
        // watched again under its path.
    } else if !kept.started && super::watch::watching() {
        // Started before the full look below, which then sees what changed before it.
        kept.started = true;
        kept.watch = Watch::start(workspace);
    }
    if full {
        dirty |= kept.tree.refresh(kept.watch.as_mut());
    }
    let tree = &kept.tree;
    kept.unsaved |= dirty;
    let due = kept.watch.is_none() || kept.saved.is_none_or(|at| at.elapsed() >= SAVED_EVERY);
    if kept.unsaved
        && due
        && let Some(file) = &file
    {
        store::save(file, tree);
        kept.unsaved = false;
        kept.saved = Some(std::time::Instant::now());
    }
    if dirty {
        kept.found = None;
    }
    kept.found
        .get_or_insert_with(|| Found {
            git_entries: tree.git_entries(),
            secret_files: tree.secret_files(),
        })
        .clone()
}

mod store;

#[cfg(test)]
mod watch_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn new_and_removed_git_entries_are_seen_without_a_walk() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().canonicalize().unwrap();
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(work.join("a/b")).unwrap();
        assert_eq!(
            look(&work, None).git_entries,
            BTreeSet::from([work.join(".git")])
        );
        std::fs::create_dir_all(work.join("a/b/c/.git")).unwrap();
        std::fs::write(work.join("a/.git"), "gitdir: x").unwrap();
        std::fs::create_dir_all(work.join("new/deep")).unwrap();
        std::fs::write(work.join("new/deep/.git"), "gitdir: y").unwrap();
        assert_eq!(
            look(&work, None).git_entries,
            BTreeSet::from([
                work.join(".git"),
                work.join("a/.git"),
                work.join("a/b/c/.git"),
                work.join("new/deep/.git"),
            ])
        );
        std::fs::remove_dir_all(work.join("a/b")).unwrap();
        std::fs::rename(work.join("new"), work.join("moved")).unwrap();
        assert_eq!(
            look(&work, None).git_entries,
            BTreeSet::from([
                work.join(".git"),
                work.join("a/.git"),
                work.join("moved/deep/.git"),
            ])
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_kept_tree_is_read_back_and_brought_up_to_date() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().canonicalize().unwrap().join("work");
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(work.join("a/b")).unwrap();
        std::fs::write(work.join("a/.env"), "SECRET=1").unwrap();
        std::fs::write(work.join("a/b/ok.txt"), "x").unwrap();
        let mut tree = Tree::new(&work);
        tree.walk(&work, None);
        let file = root.path().join("cache").join(store::file_name(&work));
        store::save(&file, &tree);
        let read = store::load(&file, &work).expect("the kept tree reads back");
        assert_eq!(read, tree);
        assert_eq!(read.secret_files(), BTreeSet::from([work.join("a/.env")]));
        // Another workspace's file, and a damaged one, are not taken.
        assert!(store::load(&file, &work.join("a")).is_none());
        let bytes = std::fs::read(&file).unwrap();
        for cut in 1..bytes.len() {
            std::fs::write(&file, &bytes[..cut]).unwrap();
            assert!(store::load(&file, &work).is_none(), "cut at {cut}");
        }
        // What changed after the tree was kept is seen when it is read back.
        std::fs::write(&file, &bytes).unwrap();
        std::fs::create_dir_all(work.join("a/b/c/.git")).unwrap();
        std::fs::write(work.join("a/b/id_rsa"), "key").unwrap();
        std::fs::remove_file(work.join("a/.env")).unwrap();
        let mut read = store::load(&file, &work).unwrap();
        read.refresh(None);
        assert_eq!(
            read.git_entries(),
            BTreeSet::from([work.join(".git"), work.join("a/b/c/.git")])
        );
        assert_eq!(
            read.secret_files(),
            BTreeSet::from([work.join("a/b/id_rsa")])
        );
    }
}
