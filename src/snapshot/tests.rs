//! The store end to end on real directories: take, diff, undo, undo of the undo, conflicts,
//! bounds, and a git workspace whose `.git` must stay byte for byte as it was.

use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

fn read(root: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(root.join(path)).ok()
}

fn store(state: &Path, work: &Path) -> Snapshots {
    Snapshots::open(state, work, Limits::default()).unwrap()
}

fn undo(store: &Snapshots, run: Option<&str>, force: bool) -> (UndoPlan, UndoReport) {
    let record = store.record(run).unwrap();
    let plan = store.plan_undo(&record).unwrap();
    let report = store
        .apply_undo(&plan, force, &|| false, &mut |_, _| {})
        .unwrap();
    (plan, report)
}

#[test]
fn a_run_in_a_plain_directory_is_diffed_and_undone_and_the_undo_too() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    write(w, "keep.txt", "same\n");
    write(w, "edit.txt", "one\ntwo\n");
    write(w, "gone/old.txt", "old\n");
    let store = store(state.path(), w);
    let recorder = Recorder::new(store.clone(), "run-1");
    recorder.before_change(1);
    write(w, "edit.txt", "one\nTWO\nthree\n");
    std::fs::remove_dir_all(w.join("gone")).unwrap();
    write(w, "new/made.txt", "made\n");
    let changes = recorder.close().unwrap();
    assert_eq!(
        (changes.files, changes.added, changes.removed, changes.undo),
        (3, 3, 2, true),
        "{changes:?}"
    );
    assert_eq!(
        changed_paths(&store),
        vec![
            ("edit.txt".to_owned(), ChangeStatus::Modified),
            ("gone/old.txt".to_owned(), ChangeStatus::Deleted),
            ("new/made.txt".to_owned(), ChangeStatus::Added),
        ]
    );
    let record = store.record(None).unwrap();
    let diff = String::from_utf8(store.diff_text(&record).unwrap()).unwrap();
    assert!(diff.contains("+TWO\n"), "{diff}");

    let (plan, report) = undo(&store, None, false);
    assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
    assert_eq!(report.done.len(), 3);
    assert_eq!(read(w, "edit.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(read(w, "gone/old.txt").as_deref(), Some("old\n"));
    assert!(!w.join("new").exists(), "the created directory goes too");
    assert_eq!(read(w, "keep.txt").as_deref(), Some("same\n"));

    // The undo is the newest run: undoing it puts the changes back.
    let (_, again) = undo(&store, None, false);
    assert_eq!(again.done.len(), 3);
    assert_eq!(read(w, "edit.txt").as_deref(), Some("one\nTWO\nthree\n"));
    assert_eq!(read(w, "new/made.txt").as_deref(), Some("made\n"));
    assert!(!w.join("gone/old.txt").exists());
}

#[test]
fn a_file_changed_since_the_run_is_a_conflict_unless_forced() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    write(w, "a.txt", "before\n");
    let store = store(state.path(), w);
    let recorder = Recorder::new(store.clone(), "run-1");
    recorder.before_change(1);
    write(w, "a.txt", "by the run\n");
    let _ = recorder.close();
    write(w, "a.txt", "by a person\n");
    let record = store.record(Some("run-1")).unwrap();
    let plan = store.plan_undo(&record).unwrap();
    assert_eq!(plan.conflicts, vec![std::path::PathBuf::from("a.txt")]);
    store.discard(&plan);
    assert_eq!(read(w, "a.txt").as_deref(), Some("by a person\n"));
    let (_, report) = undo(&store, Some("run-1"), true);
    assert_eq!(report.done.len(), 1);
    assert_eq!(read(w, "a.txt").as_deref(), Some("before\n"));
}

#[cfg(unix)]
#[test]
fn odd_names_links_and_unreadable_files_are_handled() {
    use std::os::unix::ffi::OsStrExt as _;
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let odd = std::ffi::OsStr::from_bytes(b"bad\xff\nname");
    std::fs::write(w.join(odd), "odd\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", w.join("out")).unwrap();
    let store = store(state.path(), w);
    let recorder = Recorder::new(store.clone(), "run-1");
    recorder.before_change(1);
    std::fs::write(w.join(odd), "changed\n").unwrap();
    std::fs::remove_file(w.join("out")).unwrap();
    std::os::unix::fs::symlink("/tmp", w.join("out")).unwrap();
    let changes = recorder.close().unwrap();
    assert_eq!(changes.files, 2, "{changes:?}");
    let (_, report) = undo(&store, None, false);
    assert_eq!(report.failed, vec![]);
    assert_eq!(std::fs::read(w.join(odd)).unwrap(), b"odd\n");
    assert_eq!(
        std::fs::read_link(w.join("out")).unwrap(),
        std::path::PathBuf::from("/etc/passwd")
    );
}

#[test]
fn large_untracked_files_and_directories_are_left_out_and_never_removed() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    for i in 0..=MAX_UNTRACKED_DIR_FILES {
        write(w, &format!("vendor/f{i}.js"), "x");
    }
    let limits = Limits {
        max_file_bytes: 10,
        ..Limits::default()
    };
    write(w, "big.bin", "more than ten bytes");
    let store = Snapshots::open(state.path(), w, limits).unwrap();
    let recorder = Recorder::new(store.clone(), "run-1");
    recorder.before_change(1);
    write(w, "big.bin", "small");
    write(w, "vendor/f0.js", "changed");
    let changes = recorder.close().unwrap();
    let note = changes.note.unwrap();
    assert!(
        note.contains("`vendor/`") && note.contains("`big.bin`"),
        "{note}"
    );
    let (plan, _) = undo(&store, None, false);
    assert!(plan.steps.is_empty(), "{:?}", plan.steps);
    assert_eq!(read(w, "big.bin").as_deref(), Some("small"));
}

#[test]
fn a_damaged_store_is_said_and_nothing_changes() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    write(w, "a.txt", "before\n");
    let store = store(state.path(), w);
    let recorder = Recorder::new(store.clone(), "run-1");
    recorder.before_change(1);
    write(w, "a.txt", "after\n");
    let _ = recorder.close();
    std::fs::remove_dir_all(store.dir().join("repo/objects")).unwrap();
    std::fs::create_dir_all(store.dir().join("repo/objects")).unwrap();
    let record = store.record(None).unwrap();
    let error = store.plan_undo(&record).unwrap_err();
    assert!(matches!(error, SnapshotError::Corrupt { .. }), "{error}");
    assert_eq!(read(w, "a.txt").as_deref(), Some("after\n"));
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git::hermetic_command()
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `.git` with its bytes.
fn tree_of(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn a_git_workspace_keeps_its_dot_git_untouched_and_its_ignored_files() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    git(w, &["init", "-q"]);
    write(w, ".gitignore", "target/\n");
    write(w, "src/main.rs", "fn main() {}\n");
    write(w, "staged.txt", "staged\n");
    git(w, &["add", ".gitignore", "src/main.rs"]);
    git(w, &["commit", "-qm", "init"]);
    git(w, &["add", "staged.txt"]);
    write(w, "target/out", "build\n");
    let status = git(w, &["status", "--porcelain"]);
    let dot_git = tree_of(&w.join(".git"));
    let store = store(state.path(), w);
    let recorder = Recorder::new(store.clone(), "run-1");
    recorder.before_change(1);
    write(w, "src/main.rs", "fn main() { println!(); }\n");
    write(w, "target/out", "rebuilt\n");
    write(w, "notes.md", "new\n");
    let changes = recorder.close().unwrap();
    assert_eq!(changes.files, 2, "{changes:?}");
    let alternates = std::fs::read_to_string(store.dir().join("repo/objects/info/alternates"));
    assert!(
        alternates.unwrap().contains(".git"),
        "objects come from the project"
    );
    let _ = undo(&store, None, false);
    assert_eq!(read(w, "src/main.rs").as_deref(), Some("fn main() {}\n"));
    assert!(!w.join("notes.md").exists());
    assert_eq!(
        read(w, "target/out").as_deref(),
        Some("rebuilt\n"),
        "ignored: left alone"
    );
    assert_eq!(
        tree_of(&w.join(".git")),
        dot_git,
        "the project's .git is never written"
    );
    assert_eq!(git(w, &["status", "--porcelain"]), status);
}

/// The paths in `tree`, one a line.
fn tree_files(store: &Snapshots, tree: &str) -> String {
    git(
        &store.dir().join("repo"),
        &["--git-dir", ".", "ls-tree", "-r", "--name-only", tree],
    )
}

fn packs(store: &Snapshots) -> usize {
    std::fs::read_dir(store.dir().join("repo/objects/pack")).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
            .count()
    })
}

fn loose_blobs(store: &Snapshots) -> usize {
    let out = git(
        &store.dir().join("repo"),
        &["--git-dir", ".", "count-objects", "-v"],
    );
    out.lines()
        .find_map(|l| l.strip_prefix("count: "))
        .unwrap()
        .parse()
        .unwrap()
}

fn refs(store: &Snapshots) -> usize {
    git(
        &store.dir().join("repo"),
        &["--git-dir", ".", "for-each-ref"],
    )
    .lines()
    .count()
}

#[test]
fn many_new_files_go_into_one_pack_and_an_unchanged_workspace_adds_no_ref() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    for i in 0..300 {
        write(w, &format!("d{}/f{i}.txt", i / 100), &format!("line {i}\n"));
    }
    let store = store(state.path(), w);
    let first = store.take("run-1", "turn 1", RecordKind::Run).unwrap();
    assert!(!first.partial && first.left_out() == 0, "{first:?}");
    assert_eq!(packs(&store), 1, "the files are packed");
    // Only the four trees are loose, not 300 blobs.
    assert_eq!(loose_blobs(&store), 4);
    assert_eq!(refs(&store), 1);

    let same = store.take("run-1", "turn 2", RecordKind::Run).unwrap();
    assert_eq!(same.tree, first.tree);
    assert_eq!(
        refs(&store),
        1,
        "the unchanged tree is kept by the first ref"
    );

    write(w, "d1/f150.txt", "changed\n");
    let changed = store.take("run-1", "end", RecordKind::Run).unwrap();
    assert_ne!(changed.tree, first.tree);
    assert_eq!(refs(&store), 2);
    assert_eq!(packs(&store), 1, "a few files are loose objects");
    let record = store.record(None).unwrap();
    assert_eq!(record.snapshots.len(), 3);
    let (_, report) = undo(&store, None, false);
    assert_eq!(report.done.len(), 1);
    assert_eq!(read(w, "d1/f150.txt").as_deref(), Some("line 150\n"));
}

#[test]
fn directories_are_counted_by_their_own_paths_only() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    // `vendor-x/` and `vendor.txt` sort next to `vendor/` but are not in it.
    for i in 0..=MAX_UNTRACKED_DIR_FILES {
        write(w, &format!("vendor/f{i}.js"), "x");
    }
    for i in 0..MAX_UNTRACKED_DIR_FILES {
        write(w, &format!("vendor-x/f{i}.js"), "y");
        write(w, &format!("vendor0/f{i}.js"), "z");
    }
    write(w, "vendor.txt", "t");
    let store = store(state.path(), w);
    let snapshot = store.take("run-1", "turn 1", RecordKind::Run).unwrap();
    assert_eq!(snapshot.skipped, vec![record::StoredPath::new(b"vendor/")]);
    let files = tree_files(&store, &snapshot.tree);
    assert_eq!(
        files.lines().count(),
        2 * MAX_UNTRACKED_DIR_FILES + 1,
        "{files}"
    );
    assert!(files.contains("vendor-x/f0.js") && files.contains("vendor.txt"));
    assert!(!files.contains("vendor/"));
}

#[test]
fn pruning_everything_leaves_a_store_that_snapshots_again() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    write(w, "a.txt", "a\n");
    let store = store(state.path(), w);
    store.take("run-1", "turn 1", RecordKind::Run).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(store.prune(std::time::Duration::ZERO).unwrap(), 1);
    // The objects went with the record; a seed index naming them would break the next run.
    assert!(!store.dir().join("index").exists());
    write(w, "b.txt", "b\n");
    let snapshot = store.take("run-2", "turn 1", RecordKind::Run).unwrap();
    let files = tree_files(&store, &snapshot.tree);
    assert_eq!(files, "a.txt\nb.txt\n");
}

#[test]
fn many_packs_are_packed_into_one_when_old_runs_are_pruned() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let store = store(state.path(), w);
    for round in 0..=17 {
        for i in 0..120 {
            write(w, &format!("r{round}/f{i}.txt"), &format!("{round} {i}\n"));
        }
        store
            .take(&format!("old-{round}"), "turn 1", RecordKind::Run)
            .unwrap();
    }
    assert_eq!(packs(&store), 18);
    let keep = std::time::Duration::from_secs(1);
    std::thread::sleep(keep + std::time::Duration::from_millis(100));
    write(w, "r0/f0.txt", "kept\n");
    let recent = store.take("recent", "turn 1", RecordKind::Run).unwrap();
    assert_eq!(store.prune(keep).unwrap(), 18);
    assert!(packs(&store) <= 1, "{}", packs(&store));
    // What the recent run's snapshot refers to is all still there.
    git(
        &store.dir().join("repo"),
        &["--git-dir", ".", "ls-tree", "-r", &recent.tree],
    );
    let blob = git(
        &store.dir().join("repo"),
        &[
            "--git-dir",
            ".",
            "cat-file",
            "-p",
            &format!("{}:r17/f5.txt", recent.tree),
        ],
    );
    assert_eq!(blob, "17 5\n");
}

#[test]
fn many_new_files_in_a_git_workspace_are_packed_into_the_store_not_the_project() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    git(w, &["init", "-q"]);
    write(w, "src/main.rs", "fn main() {}\n");
    git(w, &["add", "."]);
    git(w, &["commit", "-qm", "init"]);
    let dot_git = tree_of(&w.join(".git"));
    for i in 0..150 {
        write(w, &format!("gen/f{i}.txt"), &format!("generated {i}\n"));
    }
    let store = store(state.path(), w);
    let snapshot = store.take("run-1", "turn 1", RecordKind::Run).unwrap();
    assert!(!snapshot.partial, "{snapshot:?}");
    assert_eq!(packs(&store), 1);
    let blob = git(
        &store.dir().join("repo"),
        &[
            "--git-dir",
            ".",
            "cat-file",
            "-p",
            &format!("{}:gen/f7.txt", snapshot.tree),
        ],
    );
    assert_eq!(blob, "generated 7\n");
    assert_eq!(
        tree_of(&w.join(".git")),
        dot_git,
        "the project's .git is never written"
    );
}

/// The benchmark's case in a debug build, for a quick look (`cargo test --lib -- --ignored
/// resnapshot_timing --nocapture`); `cargo bench -- snapshot` is the measurement.
#[test]
#[ignore = "timing, not a check"]
fn resnapshot_timing() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    for i in 0..10_000 {
        write(
            w,
            &format!("d{:03}/f{i}.txt", i / 100),
            &format!("line {i}\n"),
        );
    }
    if std::env::var_os("TIMING_GIT").is_some() {
        git(w, &["init", "-q"]);
        git(w, &["add", "."]);
        git(w, &["commit", "-qm", "files"]);
    }
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let store = store(state.path(), w);
    let start = std::time::Instant::now();
    let first = store.take("t", "first", RecordKind::Run).unwrap();
    eprintln!("first {:?} partial {}", start.elapsed(), first.partial);
    for round in 0..5 {
        for i in 0..3 {
            let n = (round * 7 + i * 1000) % 10_000;
            write(
                w,
                &format!("d{:03}/f{n}.txt", n / 100),
                &format!("changed {round}\n"),
            );
        }
        let start = std::time::Instant::now();
        let s = store.take("t", "turn", RecordKind::Run).unwrap();
        eprintln!("again {:?} partial {}", start.elapsed(), s.partial);
    }
}

/// A run's ignore rules are those of its first snapshot, in a git workspace and a plain
/// directory alike (both read `.gitignore` files).
fn workspace(git_repo: bool) -> (tempfile::TempDir, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    if git_repo {
        git(work.path(), &["init", "-q"]);
    }
    (state, work)
}

fn changed_paths(store: &Snapshots) -> Vec<(String, ChangeStatus)> {
    let record = store.record(None).unwrap();
    let mut files: Vec<_> = store
        .changes(&record)
        .unwrap()
        .into_iter()
        .map(|c| (c.path.display().to_string(), c.status))
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

#[test]
fn a_run_that_unignores_a_file_neither_creates_nor_removes_it() {
    for git_repo in [true, false] {
        let (state, work) = workspace(git_repo);
        let w = work.path();
        write(w, ".gitignore", "*.db\n");
        write(w, "data/.gitignore", "cache/\n");
        write(w, "local.db", "a person's data\n");
        write(w, "data/cache/blob", "cached\n");
        if git_repo {
            git(w, &["add", ".gitignore", "data/.gitignore"]);
            git(w, &["commit", "-qm", "init"]);
        }
        let store = store(state.path(), w);
        let recorder = Recorder::new(store.clone(), "run-1");
        recorder.before_change(1);
        write(w, ".gitignore", "# nothing ignored\n");
        std::fs::remove_file(w.join("data/.gitignore")).unwrap();
        recorder.before_change(2);
        write(w, "notes.md", "new\n");
        let changes = recorder.close().unwrap();
        assert_eq!(changes.files, 3, "git {git_repo}: {changes:?}");
        assert_eq!(
            changed_paths(&store),
            vec![
                (".gitignore".to_owned(), ChangeStatus::Modified),
                ("data/.gitignore".to_owned(), ChangeStatus::Deleted),
                ("notes.md".to_owned(), ChangeStatus::Added),
            ],
            "git {git_repo}"
        );
        let (_, report) = undo(&store, None, false);
        assert_eq!(report.failed, vec![], "git {git_repo}");
        assert_eq!(read(w, ".gitignore").as_deref(), Some("*.db\n"));
        assert_eq!(read(w, "data/.gitignore").as_deref(), Some("cache/\n"));
        assert!(!w.join("notes.md").exists());
        assert_eq!(
            read(w, "local.db").as_deref(),
            Some("a person's data\n"),
            "git {git_repo}: an ignored file that was there survives"
        );
        assert_eq!(read(w, "data/cache/blob").as_deref(), Some("cached\n"));
    }
}

#[test]
fn ignore_files_written_by_a_run_hide_nothing_of_what_it_made() {
    for git_repo in [true, false] {
        let (state, work) = workspace(git_repo);
        let w = work.path();
        write(w, "keep.txt", "keep\n");
        // A `.gitignore` that is a link is not read (git does not follow it either), so
        // what it points at may change: `local.db` is snapshotted all the same.
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "rules", "*.db\n");
        write(w, "l/local.db", "data\n");
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path().join("rules"), w.join("l/.gitignore")).unwrap();
        let store = store(state.path(), w);
        let recorder = Recorder::new(store.clone(), "run-1");
        recorder.before_change(1);
        write(w, "x/.gitignore", "*\n");
        write(w, "x/payload.sh", "echo pwned\n");
        write(w, ".gitignore", "/y\n");
        write(w, "y", "hidden by the root\n");
        // The other files git or a walker could read: none counts.
        write(w, ".git/info/exclude", "z/\n");
        write(w, "z/.ignore", "*\n");
        write(w, "z/payload", "z\n");
        write(outside.path(), "rules", "*\n");
        write(w, "l/local.db", "changed\n");
        let changes = recorder.close().unwrap();
        assert_eq!(
            changed_paths(&store),
            vec![
                (".gitignore".to_owned(), ChangeStatus::Added),
                ("l/local.db".to_owned(), ChangeStatus::Modified),
                ("x/.gitignore".to_owned(), ChangeStatus::Added),
                ("x/payload.sh".to_owned(), ChangeStatus::Added),
                ("y".to_owned(), ChangeStatus::Added),
                ("z/.ignore".to_owned(), ChangeStatus::Added),
                ("z/payload".to_owned(), ChangeStatus::Added),
            ],
            "git {git_repo}: {changes:?}"
        );
        let (_, report) = undo(&store, None, false);
        assert_eq!(report.done.len(), 7, "git {git_repo}: {report:?}");
        assert!(!w.join("x").exists() && !w.join("y").exists() && !w.join("z").exists());
        assert_eq!(read(w, "keep.txt").as_deref(), Some("keep\n"));
        assert_eq!(read(w, "l/local.db").as_deref(), Some("data\n"));
    }
}

#[test]
fn an_ignored_directory_the_run_replaced_with_a_file_is_not_removed() {
    let (state, work) = workspace(false);
    let w = work.path();
    write(w, ".gitignore", "logs/\n");
    write(w, "logs/today", "log\n");
    let store = store(state.path(), w);
    let recorder = Recorder::new(store.clone(), "run-1");
    recorder.before_change(1);
    std::fs::remove_dir_all(w.join("logs")).unwrap();
    write(w, "logs", "now a file\n");
    let _ = recorder.close().unwrap();
    assert_eq!(
        changed_paths(&store),
        vec![("logs".to_owned(), ChangeStatus::Added)]
    );
    let (plan, _) = undo(&store, None, false);
    assert_eq!(plan.not_covered, vec![std::path::PathBuf::from("logs")]);
    assert_eq!(read(w, "logs").as_deref(), Some("now a file\n"));
}

/// A small deterministic generator (xorshift), for the cases below.
struct Cases(u64);

impl Cases {
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        &items[usize::try_from(self.0 % items.len() as u64).unwrap()]
    }
}

/// The fixed rules list exactly what git lists with the live `.gitignore` files, global and
/// project excludes, for generated trees of nested ignore files (negations, anchors,
/// directory patterns, `**`, escapes, odd directory names).
#[test]
fn fixed_rules_list_what_git_lists_with_the_live_ones() {
    const DIRS: &[&str] = &["", "a", "a/b", "a/b/c", "d", "d/e", "s p[1]", "a/#x"];
    const FILES: &[&str] = &[
        "x.log", "y.txt", "keep", "build/o", "z.db", "#h", "!n", "c", "b", "e/f", "t ",
    ];
    const PATTERNS: &[&str] = &[
        "*.log",
        "!keep",
        "build/",
        "/y.txt",
        "b/*.txt",
        "**/z.db",
        "*",
        "!*.txt",
        "c/",
        "/b",
        "x.log ",
        "\\#h",
        "\\!n",
        "e/**",
        "!/b/keep",
        "!build/",
        "**/b/c",
        "#comment",
        "",
        "?.db",
        "[xy].*",
        "!c",
        "/*",
        "!/d",
        "t\\ ",
        "a/**/x.log",
        "b/",
    ];
    for seed in 1..=30_u64 {
        let mut cases = Cases(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let state = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        git(w, &["init", "-q"]);
        for dir in DIRS {
            std::fs::create_dir_all(w.join(dir)).unwrap();
        }
        for dir in DIRS {
            for _ in 0..3 {
                // A name that is a directory of the tree already is passed over.
                let file = w.join(format!("{dir}/{}", cases.pick(FILES)).trim_start_matches('/'));
                let _ = std::fs::create_dir_all(file.parent().unwrap());
                let _ = std::fs::write(file, "x");
            }
            if *cases.pick(&[true, false]) {
                let lines: Vec<&str> = (0..4).map(|_| *cases.pick(PATTERNS)).collect();
                let name = format!("{dir}/.gitignore");
                write(w, name.trim_start_matches('/'), &lines.join("\n"));
            }
        }
        let exclude: Vec<&str> = (0..2).map(|_| *cases.pick(PATTERNS)).collect();
        write(w, ".git/info/exclude", &exclude.join("\n"));
        let store = store(state.path(), w);
        store.take("run-1", "turn 1", RecordKind::Run).unwrap();
        let rules = store.dir().join("ignore/run-1");
        let fixed = format!("--exclude-from={}", rules.display());
        for extra in [&[][..], &["--ignored", "--directory"][..]] {
            let live = git(
                w,
                &[&["ls-files", "--others", "--exclude-standard"], extra].concat(),
            );
            let frozen = git(
                w,
                &[&["ls-files", "--others", fixed.as_str()], extra].concat(),
            );
            assert_eq!(
                frozen,
                live,
                "seed {seed} {extra:?}, rules:\n{}",
                std::fs::read_to_string(&rules).unwrap()
            );
        }
    }
}

#[test]
fn a_nested_repository_the_run_makes_hides_nothing_and_one_from_before_stays_out() {
    for git_repo in [true, false] {
        let (state, work) = workspace(git_repo);
        let w = work.path();
        write(w, ".gitignore", "*.log\n");
        write(w, "old/theirs.txt", "theirs\n");
        git(&w.join("old"), &["init", "-q"]);
        let store = store(state.path(), w);
        let recorder = Recorder::new(store.clone(), "run-1");
        recorder.before_change(1);
        std::fs::create_dir_all(w.join("new/sub")).unwrap();
        git(&w.join("new"), &["init", "-q"]);
        write(w, "new/payload.sh", "echo pwned\n");
        write(w, "new/sub/more.sh", "echo more\n");
        write(w, "new/build.log", "ignored by the run's rules\n");
        write(w, "old/theirs.txt", "changed in their repository\n");
        let changes = recorder.close().unwrap();
        assert_eq!(
            changed_paths(&store),
            vec![
                ("new/payload.sh".to_owned(), ChangeStatus::Added),
                ("new/sub/more.sh".to_owned(), ChangeStatus::Added),
            ],
            "git {git_repo}: {changes:?}"
        );
        let note = changes.note.unwrap_or_default();
        assert!(note.contains("`old/`") && !note.contains("new/"), "{note}");
        let (_, report) = undo(&store, None, false);
        assert_eq!(report.done.len(), 2, "git {git_repo}: {report:?}");
        assert!(!w.join("new/payload.sh").exists() && !w.join("new/sub").exists());
        assert!(w.join("new/.git").is_dir() && w.join("new/build.log").exists());
        assert_eq!(
            read(w, "old/theirs.txt").as_deref(),
            Some("changed in their repository\n")
        );
    }
}

#[test]
fn a_state_directory_inside_the_workspace_stays_out_whatever_the_rules_say() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    write(w, ".gitignore", "!.local/\n!*\n");
    write(w, "a.txt", "a\n");
    let store = store(&w.join(".local/state"), w);
    let snapshot = store.take("run-1", "turn 1", RecordKind::Run).unwrap();
    let files = tree_files(&store, &snapshot.tree);
    assert_eq!(files, ".gitignore\na.txt\n");
}
