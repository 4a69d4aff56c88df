//! Taking a snapshot: list what changed since the run's last one (git's stat cache makes
//! that cheap) with the ignore rules fixed at the run's first (`rules.rs`), leave out what
//! the bounds say (untracked files over `max_file_mb`,
//! untracked directories of more than [`MAX_UNTRACKED_DIR_FILES`] files, unreadable files),
//! hash the rest into the run's own index in batches until the time budget runs out, and
//! record the tree. Each run has its own index (a copy of the store's latest), so two runs at
//! once in one workspace never share a lock and each snapshot is consistent.

use std::ffi::OsStr;
use std::io::{Read as _, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::git::{self, Git};
use super::nested::open_new_repositories;
use super::record::{Record, RecordKind, Snapshot, StoredPath, now_ms, safe_id};
use super::rules::{exclude_from, ignored};
use super::{MAX_UNTRACKED_DIR_FILES, SnapshotError, Snapshots};

/// Paths hashed by the first `git update-index` call: the time budget is checked between
/// calls, and a call stopped by the budget loses its batch (not its objects: they are found
/// next time). A batch that took less than a tenth of the time left doubles the next one,
/// up to [`MAX_BATCH_PATHS`]: every call writes the whole index again.
const BATCH_PATHS: usize = 500;
const MAX_BATCH_PATHS: usize = 8000;

/// From this many files to hash on, their contents go into one pack first
/// ([`Snapshots::pack_contents`]); below it, loose objects cost less than a pack each.
const PACK_MIN_PATHS: usize = 100;

/// Writing the tree and the ref after the budget ran out may take this long: a partial
/// snapshot is still a snapshot.
const FINISH_GRACE: Duration = Duration::from_secs(1);

/// Our attributes win over the workspace's `.gitattributes`: content is stored byte for
/// byte (no end-of-line conversion, no filters), so undo puts back exactly what was there.
const ATTRIBUTES: &str = "* -text !eol -filter -ident !working-tree-encoding\n";

/// What the listing found.
#[derive(Debug, Default)]
struct Listing {
    removed: Vec<Vec<u8>>,
    modified: Vec<Vec<u8>>,
    untracked: Vec<Vec<u8>>,
    skipped: Vec<Vec<u8>>,
    unreadable: Vec<Vec<u8>>,
}

impl Listing {
    /// What goes into the index: removals, then changed and new files.
    fn changed(&self) -> Vec<&Vec<u8>> {
        self.removed
            .iter()
            .chain(&self.modified)
            .chain(&self.untracked)
            .collect()
    }
}

/// The project repository the workspace belongs to, when it is one.
pub(super) struct Project {
    git_dir: PathBuf,
    pub(super) common_dir: PathBuf,
    toplevel: PathBuf,
}

impl Snapshots {
    pub(crate) fn git(&self, index: Option<&Path>) -> Git {
        Git {
            git_dir: self.repo(),
            work_tree: self.workspace.clone(),
            index: index.map(Path::to_path_buf),
        }
    }

    pub(crate) fn index_path(&self, run: &str) -> PathBuf {
        self.dir.join("indexes").join(safe_id(run))
    }

    /// Takes a snapshot for `run` labelled `label` and appends it to the run's record.
    ///
    /// # Errors
    /// When git fails or the store cannot be written; a budget that runs out is not an
    /// error but a partial snapshot.
    pub fn take(
        &self,
        run: &str,
        label: &str,
        kind: RecordKind,
    ) -> Result<Snapshot, SnapshotError> {
        self.take_with(run, label, kind, None)
    }

    /// [`Snapshots::take`]; a run without ignore rules yet (its first snapshot) takes those
    /// of `seed` (an undo's: the run it takes back), else the workspace's now. What was
    /// there before is `seed`'s first snapshot then.
    pub(crate) fn take_with(
        &self,
        run: &str,
        label: &str,
        kind: RecordKind,
        seed: Option<&Record>,
    ) -> Result<Snapshot, SnapshotError> {
        let deadline = Instant::now() + self.limits.time_budget;
        self.ensure_repo(deadline)?;
        let index = self.run_index(run, deadline)?;
        let git = self.git(Some(&index));
        let mut record = self.load(run)?.unwrap_or_else(|| Record {
            run: run.to_owned(),
            kind,
            undoes: None,
            workspace: self.workspace.display().to_string(),
            snapshots: Vec::new(),
            ignore: None,
        });
        let rules = match (&record.ignore, seed.and_then(|seed| seed.ignore.as_ref())) {
            (Some(rules), _) | (None, Some(rules)) => rules.clone(),
            (None, None) => self.freeze_rules(&git, run, deadline)?,
        };
        let (rules_file, rules_text) = self.write_rules(run, rules.bytes())?;
        let before =
            (record.snapshots.first()).or_else(|| seed.and_then(|seed| seed.snapshots.first()));
        let listing = self.list(&git, (&rules_file, &rules_text), before, deadline)?;
        // What the rules leave out of the run's first snapshot was there before the run.
        let ignored = if record.snapshots.is_empty() {
            ignored(&git, &rules_file, deadline)?
        } else {
            Vec::new()
        };
        record.ignore = Some(rules);
        let changed = listing.changed();
        let (covered_all, uncovered) = if changed.is_empty() {
            // Nothing to hash: the index is the last snapshot's, its tree is cached.
            (true, Vec::new())
        } else {
            if changed.len() >= PACK_MIN_PATHS {
                self.pack_contents(&git, &changed, deadline);
            }
            hash(&git, &index, &changed, deadline)?
        };
        let finish = deadline.max(Instant::now() + FINISH_GRACE);
        let tree = git.run_str(&["write-tree"], None, finish)?;
        let tree = String::from_utf8_lossy(&tree.stdout).trim().to_owned();
        let time_ms = now_ms().max(record.last_time_ms() + 1);
        // The same tree as the run's last snapshot is kept by that snapshot's ref already.
        if record.snapshots.last().is_none_or(|last| last.tree != tree) {
            let name = format!("refs/agent/{}/{time_ms}", safe_id(run));
            git.run_str(&["update-ref", &name, &tree], None, finish)?;
            self.publish_index(&index);
        }
        let mut uncovered: Vec<StoredPath> = uncovered.iter().map(|p| StoredPath::new(p)).collect();
        uncovered.extend(listing.unreadable.iter().map(|p| StoredPath::new(p)));
        let snapshot = Snapshot {
            tree,
            label: label.to_owned(),
            time_ms,
            partial: !covered_all,
            uncovered,
            skipped: listing.skipped.iter().map(|p| StoredPath::new(p)).collect(),
            ignored,
        };
        record.snapshots.push(snapshot.clone());
        self.save(&record)?;
        Ok(snapshot)
    }

    /// Makes the run's index the store's latest, the seed of the next run's. Git never
    /// writes an index in place (it writes a lock file and renames it), so a hard link is a
    /// copy that costs nothing; where links are not allowed, it is copied.
    fn publish_index(&self, index: &Path) {
        let master = self.dir.join("index");
        let temp = master.with_extension(format!("tmp-{}", std::process::id()));
        let _ = std::fs::remove_file(&temp);
        if std::fs::hard_link(index, &temp).is_ok() && std::fs::rename(&temp, &master).is_ok() {
            return;
        }
        let _ = std::fs::remove_file(&temp);
        if let Ok(bytes) = std::fs::read(index) {
            let _ = super::record::write_atomically(&master, &bytes);
        }
    }

    /// Writes the contents of many files into one pack with `git fast-import` before they
    /// are hashed into the index, where `update-index` then finds each of them: written
    /// one by one, every file would be a loose object of its own (a dozen system calls and
    /// a directory entry each; ten seconds for the first snapshot of a plain directory of
    /// 10,000 files on a busy machine, against half a second this way). Only regular files
    /// within `max_file_mb` are read; what this misses or gets wrong (a file changed in
    /// between) costs nothing but time: `update-index` writes whatever it does not find.
    fn pack_contents(&self, git: &Git, paths: &[&Vec<u8>], deadline: Instant) {
        let files: Vec<PathBuf> = paths
            .iter()
            .map(|path| self.workspace.join(git::path_of(path)))
            .collect();
        let max = self.limits.max_file_bytes;
        let feed = move |stdin: &mut dyn Write| {
            for file in files {
                if Instant::now() >= deadline {
                    break;
                }
                let Some(bytes) = regular_contents(&file, max) else {
                    continue;
                };
                let head = format!("blob\ndata {}\n", bytes.len());
                let written = stdin
                    .write_all(head.as_bytes())
                    .and_then(|()| stdin.write_all(&bytes))
                    .and_then(|()| stdin.write_all(b"\n"));
                if written.is_err() {
                    break;
                }
            }
        };
        // No deltas: their cost grows with the files, and the snapshot's budget does not.
        let _ = git.run_feeding(
            &["fast-import", "--quiet", "--depth=0"],
            feed,
            deadline + FINISH_GRACE,
        );
    }

    /// Creates the snapshot repository on first use (in a temporary directory, renamed into
    /// place, so two runs starting at once both find a whole one).
    fn ensure_repo(&self, deadline: Instant) -> Result<(), SnapshotError> {
        let repo = self.repo();
        if repo.join("HEAD").is_file() {
            return Ok(());
        }
        let temp = self.dir.join(format!("repo.tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&temp);
        let mut init = git::hermetic_command();
        init.args(["init", "--quiet", "--bare"]).arg(&temp);
        git::run_command(init, &[OsStr::new("init")], None, deadline)?;
        let info = temp.join("info");
        std::fs::create_dir_all(&info).map_err(|e| SnapshotError::io("create", &info, &e))?;
        let attributes = info.join("attributes");
        std::fs::write(&attributes, ATTRIBUTES)
            .map_err(|e| SnapshotError::io("write", &attributes, &e))?;
        // The ignore rules are not the store's (`info/exclude`) but each run's (`rules.rs`).
        if let Some(project) = self.project(deadline) {
            // Read only: objects already in the project's store are never copied.
            let alternates = temp.join("objects/info/alternates");
            let objects = project.common_dir.join("objects");
            let _ = std::fs::write(&alternates, format!("{}\n", objects.display()));
        }
        match std::fs::rename(&temp, &repo) {
            Ok(()) => Ok(()),
            Err(_) if repo.join("HEAD").is_file() => {
                let _ = std::fs::remove_dir_all(&temp);
                Ok(())
            }
            Err(error) => {
                let _ = std::fs::remove_dir_all(&temp);
                Err(SnapshotError::io("create", &repo, &error))
            }
        }
    }

    /// The git repository the workspace is in, asked of git itself (hermetic, read only).
    pub(super) fn project(&self, deadline: Instant) -> Option<Project> {
        let mut command = git::hermetic_command();
        command.current_dir(&self.workspace).args([
            "rev-parse",
            "--path-format=absolute",
            "--git-dir",
            "--git-common-dir",
            "--show-toplevel",
        ]);
        let output = git::run_command(command, &[OsStr::new("rev-parse")], None, deadline).ok()?;
        let mut lines = output
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty());
        let git_dir = git::line_path(lines.next()?)?;
        let common_dir = git::line_path(lines.next()?)?;
        let toplevel = git::line_path(lines.next()?)?;
        Some(Project {
            git_dir,
            common_dir,
            toplevel,
        })
    }

    /// The run's index: kept from its last snapshot, else a copy of the store's latest, else
    /// (first snapshot in a git workspace) a copy of the worktree's own index, whose stat
    /// data spares hashing every tracked file again.
    fn run_index(&self, run: &str, deadline: Instant) -> Result<PathBuf, SnapshotError> {
        let index = self.index_path(run);
        if index.is_file() {
            return Ok(index);
        }
        let dir = self.dir.join("indexes");
        std::fs::create_dir_all(&dir).map_err(|e| SnapshotError::io("create", &dir, &e))?;
        let master = self.dir.join("index");
        if std::fs::copy(&master, &index).is_ok() {
            return Ok(index);
        }
        let Some(project) = self.project(deadline) else {
            return Ok(index);
        };
        let same_root = project.toplevel.canonicalize().ok() == Some(self.workspace.clone());
        if !same_root || std::fs::copy(project.git_dir.join("index"), &index).is_err() {
            return Ok(index);
        }
        // Refresh the copied stat data; an index this git cannot use (a split index, a newer
        // format) is dropped and the snapshot starts from nothing.
        let git = self.git(Some(&index));
        match git.run_str(&["update-index", "-q", "--refresh"], None, deadline) {
            Ok(_) => {}
            Err(SnapshotError::Git { message, .. }) if !message.starts_with("fatal") => {}
            Err(_) => {
                let _ = std::fs::remove_file(&index);
                let _ = std::fs::remove_file(index.with_extension("lock"));
            }
        }
        Ok(index)
    }

    /// What changed since the index was written, and what the bounds leave out, listed
    /// with the run's fixed `rules` (the file and its text); `before` is the run's first
    /// snapshot (none when this is it).
    fn list(
        &self,
        git: &Git,
        (rules, rules_text): (&Path, &[u8]),
        before: Option<&Snapshot>,
        deadline: Instant,
    ) -> Result<Listing, SnapshotError> {
        let exclude = exclude_from(rules);
        let output = git.run(
            &[
                "ls-files".as_ref(),
                "-z".as_ref(),
                "-t".as_ref(),
                "--modified".as_ref(),
                "--deleted".as_ref(),
                "--others".as_ref(),
                &exclude,
            ],
            None,
            deadline,
        )?;
        let mut listing = Listing::default();
        let mut removed = std::collections::HashSet::new();
        for record in git::records(&output.stdout) {
            let (tag, path) = match record {
                [tag, b' ', path @ ..] => (*tag, path.to_vec()),
                _ => continue,
            };
            match tag {
                b'R' => {
                    removed.insert(path.clone());
                    listing.removed.push(path);
                }
                b'C' => listing.modified.push(path),
                b'?' if path.ends_with(b"/") => listing.skipped.push(path),
                b'?' => listing.untracked.push(path),
                _ => {}
            }
        }
        listing.modified.retain(|path| !removed.contains(path));
        if let Some(before) = before {
            open_new_repositories(
                &self.workspace,
                rules_text,
                before,
                &mut listing.skipped,
                &mut listing.untracked,
            );
        }
        if listing.untracked.len() > MAX_UNTRACKED_DIR_FILES {
            skip_large_directories(git, &mut listing, &exclude, deadline)?;
        }
        let max = self.limits.max_file_bytes;
        let workspace = &self.workspace;
        let mut unreadable = Vec::new();
        let mut skipped = Vec::new();
        listing.untracked.retain(|path| {
            match check(workspace, path, max) {
                Check::Fine => return true,
                Check::TooLarge => skipped.push(path.clone()),
                Check::Unreadable => unreadable.push(path.clone()),
            }
            false
        });
        listing
            .modified
            .retain(|path| match check(workspace, path, u64::MAX) {
                Check::Fine | Check::TooLarge => true,
                Check::Unreadable => {
                    unreadable.push(path.clone());
                    false
                }
            });
        listing.skipped.extend(skipped);
        listing.unreadable = unreadable;
        Ok(listing)
    }
}

/// Leaves out wholly untracked directories with more than [`MAX_UNTRACKED_DIR_FILES`]
/// files.
fn skip_large_directories(
    git: &Git,
    listing: &mut Listing,
    exclude: &OsStr,
    deadline: Instant,
) -> Result<(), SnapshotError> {
    let output = git.run(
        &[
            "ls-files".as_ref(),
            "-z".as_ref(),
            "--others".as_ref(),
            "--directory".as_ref(),
            exclude,
        ],
        None,
        deadline,
    )?;
    // Sorted, the paths under a directory are one run that starts where the directory
    // would be: counting them is a search, not a scan of every path for every directory.
    listing.untracked.sort_unstable();
    let mut left_out = Vec::new();
    for dir in git::records(&output.stdout).filter(|r| r.ends_with(b"/")) {
        if listing.skipped.iter().any(|s| s == dir) {
            continue; // a nested repository, already left out
        }
        let start = listing
            .untracked
            .partition_point(|path| path.as_slice() < dir);
        let inside = listing.untracked[start..]
            .iter()
            .take_while(|path| path.starts_with(dir))
            .count();
        if inside > MAX_UNTRACKED_DIR_FILES {
            left_out.push(start..start + inside);
            listing.skipped.push(dir.to_vec());
        }
    }
    if !left_out.is_empty() {
        left_out.sort_by_key(|range| range.start);
        let mut ranges = left_out.into_iter().peekable();
        let mut kept = Vec::with_capacity(listing.untracked.len());
        for (at, path) in std::mem::take(&mut listing.untracked)
            .into_iter()
            .enumerate()
        {
            while ranges.peek().is_some_and(|range| range.end <= at) {
                ranges.next();
            }
            if !ranges.peek().is_some_and(|range| range.contains(&at)) {
                kept.push(path);
            }
        }
        listing.untracked = kept;
    }
    Ok(())
}

/// Hashes `paths` into the index, batch by batch while the budget lasts. Returns whether
/// all were done, and those that were not.
fn hash(
    git: &Git,
    index: &Path,
    paths: &[&Vec<u8>],
    deadline: Instant,
) -> Result<(bool, Vec<Vec<u8>>), SnapshotError> {
    let mut uncovered = Vec::new();
    let mut at = 0;
    let mut size = BATCH_PATHS;
    while at < paths.len() {
        let started = Instant::now();
        if started >= deadline {
            uncovered.extend(paths[at..].iter().map(|p| (*p).clone()));
            return Ok((false, uncovered));
        }
        let batch = &paths[at..paths.len().min(at + size)];
        match update(git, batch, deadline) {
            Ok(()) => {}
            Err(SnapshotError::TimedOut { .. }) => {
                // The killed git leaves its lock behind: the index is ours alone.
                let _ = std::fs::remove_file(lock_of(index));
                uncovered.extend(paths[at..].iter().map(|p| (*p).clone()));
                return Ok((false, uncovered));
            }
            Err(SnapshotError::GitMissing) => return Err(SnapshotError::GitMissing),
            Err(_) => {
                // One bad path fails the batch: go through it one by one.
                let _ = std::fs::remove_file(lock_of(index));
                for path in batch {
                    if update(git, &[*path], deadline).is_err() {
                        let _ = std::fs::remove_file(lock_of(index));
                        uncovered.push((*path).clone());
                    }
                }
            }
        }
        at += batch.len();
        let now = Instant::now();
        if (now - started) * 10 < deadline.saturating_duration_since(now) {
            size = (size * 2).min(MAX_BATCH_PATHS);
        }
    }
    let complete = uncovered.is_empty();
    Ok((complete, uncovered))
}

fn lock_of(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// `git update-index --add --remove --replace -z --stdin` for `paths`.
fn update(git: &Git, paths: &[&Vec<u8>], deadline: Instant) -> Result<(), SnapshotError> {
    let mut input = Vec::new();
    for path in paths {
        input.extend_from_slice(path);
        input.push(0);
    }
    git.run_str(
        &[
            "update-index",
            "--add",
            "--remove",
            "--replace",
            "-z",
            "--stdin",
        ],
        Some(&input),
        deadline,
    )
    .map(|_| ())
}

/// The bytes of `file` when it is a regular file of at most `max_bytes` (never follows a
/// link, never blocks on a pipe).
fn regular_contents(file: &Path, max_bytes: u64) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(file).ok()?;
    if !meta.file_type().is_file() || meta.len() > max_bytes {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?);
    // A file that grew in between is read to the bound only: what is read is what is packed.
    std::fs::File::open(file)
        .ok()?
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= max_bytes).then_some(bytes)
}

enum Check {
    Fine,
    TooLarge,
    Unreadable,
}

/// Whether an untracked or modified file can go into the snapshot. Symlinks are recorded as
/// links, never followed.
fn check(workspace: &Path, path: &[u8], max_bytes: u64) -> Check {
    let full = workspace.join(git::path_of(path));
    let Ok(meta) = std::fs::symlink_metadata(&full) else {
        return Check::Fine; // gone already: git records it as removed
    };
    if !meta.file_type().is_file() {
        return Check::Fine;
    }
    if meta.len() > max_bytes {
        return Check::TooLarge;
    }
    match std::fs::File::open(&full) {
        Ok(_) => Check::Fine,
        Err(_) => Check::Unreadable,
    }
}
