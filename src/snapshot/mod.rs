//! Snapshots of the workspace, so that every change a run made can be seen (`agent diff`)
//! and taken back (`agent undo`). Before the first change of each model turn, and once after
//! the run's last command, the workspace is recorded into a git repository that belongs to
//! the agent, outside the project: `<state dir>/snapshots/<workspace id>/repo`, its own
//! `GIT_DIR` with the workspace as work tree. In a git workspace its objects come from the
//! project's store (`objects/info/alternates`, read only) and its first index from the
//! worktree's own, so the first snapshot of a large repository costs little. The project's
//! `.git` is never written.
//!
//! This module owns the snapshot repository, its run records and undo. It knows nothing of
//! models, prompts or terminals: the loop calls [`Recorder::before_change`], `agent diff`
//! and `agent undo` (and later the interactive session's `/diff`, `/undo`) call
//! [`Snapshots`].

mod diff;
mod git;
mod nested;
mod record;
mod recorder;
mod rules;
mod take;
#[cfg(test)]
mod tests;
mod undo;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use diff::{FileChange, Status as ChangeStatus, summarize};
pub use record::{Record, RecordKind, Snapshot};
pub use recorder::{Recorder, Source};
pub use undo::{Step, StepKind, UndoPlan, UndoReport};

/// Untracked directories with more files than this are left out of a snapshot: a
/// `node_modules/` or a build output without a `.gitignore` would cost more than it is worth.
pub const MAX_UNTRACKED_DIR_FILES: usize = 200;

/// What a snapshot may cost (`[snapshots]` in the settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Untracked files larger than this are left out (`max_file_mb`, 10 MB).
    pub max_file_bytes: u64,
    /// A snapshot that takes longer stops and is marked partial (`time_budget_ms`, 2 s).
    pub time_budget: Duration,
    /// Snapshot records older than this are pruned when a run starts (`keep_days`, 7).
    pub keep: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 10 * 1024 * 1024,
            time_budget: Duration::from_secs(2),
            keep: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

/// What a run changed, for the `done` event and the summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Changes {
    /// Files created, modified or deleted.
    pub files: u64,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
    /// Whether `agent undo` can take them back (false when a snapshot failed).
    pub undo: bool,
    /// What undo cannot cover (a partial or failed snapshot, skipped files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Changes {
    /// The summary line: `changed 3 files (+20 −4) · agent undo to revert`, or what went
    /// wrong; `None` when there is nothing to say.
    #[must_use]
    pub fn summary(&self) -> Option<String> {
        let mut line = if self.files == 0 {
            String::new()
        } else {
            let files = if self.files == 1 { "file" } else { "files" };
            let mut line = format!(
                "changed {} {files} (+{} −{})",
                self.files, self.added, self.removed
            );
            if self.undo {
                line.push_str(" · agent undo to revert");
            }
            line
        };
        if let Some(note) = &self.note {
            if !line.is_empty() {
                line.push_str(" · ");
            }
            line.push_str(note);
        }
        (!line.is_empty()).then_some(line)
    }
}

/// What can go wrong with snapshots. None of it stops a run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SnapshotError {
    /// The `git` program cannot be started.
    #[error("the `git` program is not installed: install git to get snapshots and `agent undo`")]
    GitMissing,
    /// A git call failed.
    #[error("`{what}` failed: {message}")]
    Git {
        /// The call (subcommand and flags).
        what: String,
        /// Git's last line on stderr.
        message: String,
    },
    /// A git call ran past the time budget and was stopped.
    #[error("`{what}` took longer than the snapshot time budget and was stopped")]
    TimedOut {
        /// The call.
        what: String,
    },
    /// Reading or writing the snapshot store failed.
    #[error("cannot {what} `{path}`: {message}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
    /// No snapshot was ever taken in this workspace.
    #[error("no run has changed files in `{0}` yet (snapshots are taken when a run changes files)")]
    NoSnapshots(PathBuf),
    /// The named run has no snapshots here.
    #[error("no run `{0}` with snapshots in this workspace: see `agent history`")]
    UnknownRun(String),
    /// The snapshot data is damaged or gone.
    #[error("the snapshots of run `{run}` are damaged ({message}): nothing was changed")]
    Corrupt {
        /// The run.
        run: String,
        /// What was found.
        message: String,
    },
}

impl SnapshotError {
    fn io(what: &'static str, path: &Path, error: &std::io::Error) -> Self {
        SnapshotError::Io {
            what,
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}

/// The snapshot store of one workspace.
#[derive(Debug, Clone)]
pub struct Snapshots {
    /// `<state dir>/snapshots/<workspace id>`.
    dir: PathBuf,
    /// The workspace (canonical).
    workspace: PathBuf,
    limits: Limits,
}

impl Snapshots {
    /// The store of `workspace` under `state_dir`, created when missing.
    ///
    /// # Errors
    /// When git is not installed or the directory cannot be made.
    pub fn open(state_dir: &Path, workspace: &Path, limits: Limits) -> Result<Self, SnapshotError> {
        if !git::available() {
            return Err(SnapshotError::GitMissing);
        }
        let store = Self::locate(state_dir, workspace, limits);
        std::fs::create_dir_all(store.dir.join("runs"))
            .map_err(|error| SnapshotError::io("create", &store.dir, &error))?;
        Ok(store)
    }

    /// The store of `workspace`, which must exist already (for `agent diff`, `agent undo`).
    ///
    /// # Errors
    /// When no snapshot was ever taken here, or git is not installed.
    pub fn existing(state_dir: &Path, workspace: &Path) -> Result<Self, SnapshotError> {
        let store = Self::locate(state_dir, workspace, Limits::default());
        if !store.dir.join("runs").is_dir() {
            return Err(SnapshotError::NoSnapshots(store.workspace));
        }
        if !git::available() {
            return Err(SnapshotError::GitMissing);
        }
        Ok(store)
    }

    fn locate(state_dir: &Path, workspace: &Path, limits: Limits) -> Self {
        let workspace = workspace
            .canonicalize()
            .unwrap_or_else(|_| workspace.to_path_buf());
        Self {
            dir: state_dir.join("snapshots").join(workspace_id(&workspace)),
            workspace,
            limits,
        }
    }

    /// The workspace this store snapshots.
    #[must_use]
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The directory of the store.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn repo(&self) -> PathBuf {
        self.dir.join("repo")
    }
}

/// A directory name for `workspace`: its last component (made safe) and a hash of the
/// whole path, so two checkouts named `app` never share a store.
#[must_use]
pub fn workspace_id(workspace: &Path) -> String {
    let bytes = git::bytes_of(workspace);
    // FNV-1a, 64 bits: stable across versions and platforms (std's hasher is not).
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in &bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let name: String = workspace
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    if name.is_empty() {
        format!("{hash:016x}")
    } else {
        format!("{name}-{hash:016x}")
    }
}

#[cfg(test)]
mod unit {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn workspace_ids_are_stable_and_distinct() {
        let a = workspace_id(Path::new("/home/me/app"));
        let b = workspace_id(Path::new("/srv/app"));
        assert!(a.starts_with("app-"), "{a}");
        assert_ne!(a, b);
        assert_eq!(a, workspace_id(Path::new("/home/me/app")));
        assert!(
            workspace_id(Path::new("/"))
                .chars()
                .all(|c| c.is_ascii_hexdigit())
        );
        assert!(!workspace_id(Path::new("/x/../..")).contains('/'));
    }

    #[test]
    fn the_summary_reads_as_designed() {
        let changes = Changes {
            files: 3,
            added: 20,
            removed: 4,
            undo: true,
            note: None,
        };
        assert_eq!(
            changes.summary().as_deref(),
            Some("changed 3 files (+20 −4) · agent undo to revert")
        );
        let failed = Changes {
            note: Some("undo is not available for this run: x".into()),
            ..Changes::default()
        };
        assert_eq!(
            failed.summary().as_deref(),
            Some("undo is not available for this run: x")
        );
        assert_eq!(Changes::default().summary(), None);
    }
}
