//! Taking a snapshot: list what changed since the run's last one (git's stat cache makes
//! that cheap), leave out what the bounds say (untracked files over `max_file_mb`,
//! untracked directories of more than [`MAX_UNTRACKED_DIR_FILES`] files, unreadable files),
//! hash the rest into the run's own index in batches until the time budget runs out, and
//! record the tree. Each run has its own index (a copy of the store's latest), so two runs at
//! once in one workspace never share a lock and each snapshot is consistent.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::git::{self, Git};
use super::record::{Record, RecordKind, Snapshot, StoredPath, now_ms, safe_id};
use super::{MAX_UNTRACKED_DIR_FILES, SnapshotError, Snapshots};

/// Paths hashed per `git update-index` call: the time budget is checked between calls, and a
/// call stopped by the budget loses its batch (not its objects: they are found next time).
const BATCH_PATHS: usize = 500;

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

/// The project repository the workspace belongs to, when it is one.
struct Project {
    git_dir: PathBuf,
    common_dir: PathBuf,
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
        let deadline = Instant::now() + self.limits.time_budget;
        self.ensure_repo(deadline)?;
        let index = self.run_index(run, deadline)?;
        let git = self.git(Some(&index));
        let listing = self.list(&git, deadline)?;
        let (covered_all, uncovered) = hash(&git, &index, &listing, deadline)?;
        let finish = deadline.max(Instant::now() + FINISH_GRACE);
        let tree = git.run_str(&["write-tree"], None, finish)?;
        let tree = String::from_utf8_lossy(&tree.stdout).trim().to_owned();
        let mut record = self.load(run)?.unwrap_or_else(|| Record {
            run: run.to_owned(),
            kind,
            undoes: None,
            workspace: self.workspace.display().to_string(),
            snapshots: Vec::new(),
        });
        let time_ms = now_ms().max(record.last_time_ms() + 1);
        let name = format!("refs/agent/{}/{time_ms}", safe_id(run));
        git.run_str(&["update-ref", &name, &tree], None, finish)?;
        let master = self.dir.join("index");
        if let Ok(bytes) = std::fs::read(&index) {
            let _ = super::record::write_atomically(&master, &bytes);
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
        };
        record.snapshots.push(snapshot.clone());
        self.save(&record)?;
        Ok(snapshot)
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
        // A state directory inside the workspace (an agent run in the home directory) is
        // never snapshotted into itself.
        let state = self.dir.parent().and_then(Path::parent);
        if let Some(inside) = state.and_then(|state| state.strip_prefix(&self.workspace).ok()) {
            let pattern = git::bytes_of(inside);
            let mut line = b"/".to_vec();
            for byte in pattern {
                if b"*?[]\\!# ".contains(&byte) {
                    line.push(b'\\');
                }
                line.push(byte);
            }
            line.extend_from_slice(b"/\n");
            let _ = std::fs::write(info.join("exclude"), line);
        }
        if let Some(project) = self.project(deadline) {
            // Read only: objects already in the project's store are never copied.
            let alternates = temp.join("objects/info/alternates");
            let objects = project.common_dir.join("objects");
            let _ = std::fs::write(&alternates, format!("{}\n", objects.display()));
            // The project's own exclude file is part of what `git add -A` would skip.
            if let Ok(exclude) = std::fs::read(project.common_dir.join("info/exclude")) {
                let mut ours = std::fs::read(info.join("exclude")).unwrap_or_default();
                ours.extend_from_slice(&exclude);
                let _ = std::fs::write(info.join("exclude"), ours);
            }
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
    fn project(&self, deadline: Instant) -> Option<Project> {
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

    /// What changed since the index was written, and what the bounds leave out.
    fn list(&self, git: &Git, deadline: Instant) -> Result<Listing, SnapshotError> {
        let output = git.run_str(
            &[
                "ls-files",
                "-z",
                "-t",
                "--modified",
                "--deleted",
                "--others",
                "--exclude-standard",
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
        if listing.untracked.len() > MAX_UNTRACKED_DIR_FILES {
            skip_large_directories(git, &mut listing, deadline)?;
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
    deadline: Instant,
) -> Result<(), SnapshotError> {
    let output = git.run_str(
        &[
            "ls-files",
            "-z",
            "--others",
            "--directory",
            "--exclude-standard",
        ],
        None,
        deadline,
    )?;
    for dir in git::records(&output.stdout).filter(|r| r.ends_with(b"/")) {
        if listing.skipped.iter().any(|s| s == dir) {
            continue; // a nested repository, already left out
        }
        let inside = listing
            .untracked
            .iter()
            .filter(|path| path.starts_with(dir))
            .count();
        if inside > MAX_UNTRACKED_DIR_FILES {
            listing.untracked.retain(|path| !path.starts_with(dir));
            listing.skipped.push(dir.to_vec());
        }
    }
    Ok(())
}

/// Hashes the listed paths into the index, batch by batch while the budget lasts.
/// Returns whether all were done, and those that were not.
fn hash(
    git: &Git,
    index: &Path,
    listing: &Listing,
    deadline: Instant,
) -> Result<(bool, Vec<Vec<u8>>), SnapshotError> {
    let paths: Vec<&Vec<u8>> = listing
        .removed
        .iter()
        .chain(&listing.modified)
        .chain(&listing.untracked)
        .collect();
    let mut uncovered = Vec::new();
    for (at, batch) in paths.chunks(BATCH_PATHS).enumerate() {
        if Instant::now() >= deadline {
            uncovered.extend(paths[at * BATCH_PATHS..].iter().map(|p| (*p).clone()));
            return Ok((false, uncovered));
        }
        match update(git, batch, deadline) {
            Ok(()) => {}
            Err(SnapshotError::TimedOut { .. }) => {
                // The killed git leaves its lock behind: the index is ours alone.
                let _ = std::fs::remove_file(lock_of(index));
                uncovered.extend(paths[at * BATCH_PATHS..].iter().map(|p| (*p).clone()));
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
