//! What changed between two snapshots: per file the status, the line counts and both sides'
//! objects (for undo), and the unified diff text (for `agent diff`), all from git's plumbing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::git;
use super::record::Record;
use super::{Changes, SnapshotError, Snapshots};

/// Diffs are not bound by the snapshot budget, only kept from hanging.
const DIFF_DEADLINE: Duration = Duration::from_secs(60);

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Created.
    Added,
    /// Content or mode changed.
    Modified,
    /// Deleted.
    Deleted,
    /// A file became a link or the other way round.
    TypeChanged,
}

/// One side of a change: git's mode and object id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Side {
    pub mode: String,
    pub oid: String,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path relative to the workspace.
    pub path: PathBuf,
    /// The same, as git's bytes.
    pub(crate) raw: Vec<u8>,
    /// How it changed.
    pub status: Status,
    /// Lines added (`None`: binary).
    pub added: Option<u64>,
    /// Lines removed (`None`: binary).
    pub removed: Option<u64>,
    /// Before (absent when created).
    pub(crate) old: Option<Side>,
    /// After (absent when deleted).
    pub(crate) new: Option<Side>,
}

impl Snapshots {
    /// The files that differ between trees `from` and `to`.
    ///
    /// # Errors
    /// When git fails (a missing object: the snapshot is damaged).
    pub fn changes_between(&self, from: &str, to: &str) -> Result<Vec<FileChange>, SnapshotError> {
        let git = self.git(None);
        let deadline = Instant::now() + DIFF_DEADLINE;
        let base = ["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff"];
        let mut raw_args = base.to_vec();
        raw_args.extend(["--raw", from, to]);
        let raw = git.run_str(&raw_args, None, deadline)?;
        let mut num_args = base.to_vec();
        num_args.extend(["--numstat", from, to]);
        let numstat = git.run_str(&num_args, None, deadline)?;
        let counts = parse_numstat(&numstat.stdout);
        Ok(parse_raw(&raw.stdout)
            .into_iter()
            .map(|mut change| {
                if let Some((added, removed)) = counts.get(&change.raw) {
                    change.added = *added;
                    change.removed = *removed;
                }
                change
            })
            .collect())
    }

    /// What `record`'s run changed: its first snapshot against its last.
    ///
    /// # Errors
    /// When the snapshots cannot be read.
    pub fn changes(&self, record: &Record) -> Result<Vec<FileChange>, SnapshotError> {
        let (first, last) = ends(record)?;
        self.changes_between(first, last)
            .map_err(|error| corrupt(record, &error))
    }

    /// The unified diff of `record`'s run (`a/` and `b/` prefixes, 3 lines of context), as
    /// git prints it: bytes, not necessarily UTF-8.
    ///
    /// # Errors
    /// When the snapshots cannot be read.
    pub fn diff_text(&self, record: &Record) -> Result<Vec<u8>, SnapshotError> {
        let (first, last) = ends(record)?;
        let git = self.git(None);
        let output = git
            .run_str(
                &[
                    "diff-tree",
                    "-r",
                    "-p",
                    "--no-renames",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-color",
                    "--src-prefix=a/",
                    "--dst-prefix=b/",
                    first,
                    last,
                ],
                None,
                Instant::now() + DIFF_DEADLINE,
            )
            .map_err(|error| corrupt(record, &error))?;
        Ok(output.stdout)
    }
}

/// The counts for the summary and the `done` event.
#[must_use]
pub fn summarize(changes: &[FileChange]) -> Changes {
    Changes {
        files: changes.len() as u64,
        added: changes.iter().filter_map(|c| c.added).sum(),
        removed: changes.iter().filter_map(|c| c.removed).sum(),
        undo: true,
        note: None,
    }
}

fn ends(record: &Record) -> Result<(&str, &str), SnapshotError> {
    match (record.snapshots.first(), record.snapshots.last()) {
        (Some(first), Some(last)) => Ok((&first.tree, &last.tree)),
        _ => Err(SnapshotError::Corrupt {
            run: record.run.clone(),
            message: "the record holds no snapshot".to_owned(),
        }),
    }
}

pub(crate) fn corrupt(record: &Record, error: &SnapshotError) -> SnapshotError {
    match error {
        SnapshotError::Git { message, .. } => SnapshotError::Corrupt {
            run: record.run.clone(),
            message: message.clone(),
        },
        other => other.clone(),
    }
}

/// `--raw -z`: `:old-mode new-mode old-oid new-oid status\0path\0` per file.
fn parse_raw(stdout: &[u8]) -> Vec<FileChange> {
    let mut changes = Vec::new();
    let mut fields = stdout.split(|b| *b == 0);
    while let Some(head) = fields.next() {
        let Some(head) = head.strip_prefix(b":") else {
            continue;
        };
        let Some(path) = fields.next() else { break };
        let head = String::from_utf8_lossy(head);
        let parts: Vec<&str> = head.split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, status] = parts[..] else {
            continue;
        };
        let side = |mode: &str, oid: &str| {
            (!mode.trim_start_matches('0').is_empty()).then(|| Side {
                mode: mode.to_owned(),
                oid: oid.to_owned(),
            })
        };
        let status = match status.chars().next() {
            Some('A') => Status::Added,
            Some('D') => Status::Deleted,
            Some('T') => Status::TypeChanged,
            _ => Status::Modified,
        };
        changes.push(FileChange {
            path: git::path_of(path),
            raw: path.to_vec(),
            status,
            added: None,
            removed: None,
            old: side(old_mode, old_oid),
            new: side(new_mode, new_oid),
        });
    }
    changes
}

type Counts = HashMap<Vec<u8>, (Option<u64>, Option<u64>)>;

/// `--numstat -z`: `added\tremoved\tpath\0` per file (`-` for binary).
fn parse_numstat(stdout: &[u8]) -> Counts {
    git::records(stdout)
        .filter_map(|record| {
            let mut parts = record.splitn(3, |b| *b == b'\t');
            let added = parts.next()?;
            let removed = parts.next()?;
            let path = parts.next()?;
            let number = |bytes: &[u8]| std::str::from_utf8(bytes).ok()?.parse::<u64>().ok();
            Some((path.to_vec(), (number(added), number(removed))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn raw_records_become_changes() {
        let z = "0000000000000000000000000000000000000000";
        let a = "1111111111111111111111111111111111111111";
        let out = format!(
            ":000000 100644 {z} {a} A\0new\nline\0:100644 000000 {a} {z} D\0gone\0:100644 120000 {a} {a} T\0link\0"
        );
        let changes = parse_raw(out.as_bytes());
        assert_eq!(changes.len(), 3);
        assert_eq!(changes[0].status, Status::Added);
        assert_eq!(changes[0].raw, b"new\nline");
        assert!(changes[0].old.is_none());
        assert_eq!(changes[1].status, Status::Deleted);
        assert!(changes[1].new.is_none());
        assert_eq!(changes[2].status, Status::TypeChanged);
        assert_eq!(changes[2].new.as_ref().unwrap().mode, "120000");
    }

    #[test]
    fn numstat_counts_and_binary_files() {
        let counts = parse_numstat(b"3\t1\ta.txt\0-\t-\tlogo.png\0");
        assert_eq!(counts[&b"a.txt".to_vec()], (Some(3), Some(1)));
        assert_eq!(counts[&b"logo.png".to_vec()], (None, None));
    }
}
