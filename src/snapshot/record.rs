//! A run's record in the snapshot store: `runs/<run id>.json`, the trees taken for it in
//! order, with what each one could not cover. Written whole to a temporary file and renamed,
//! so a reader (another run, `agent undo`) sees the old record or the new one, never half.
//! Pruning of old records and their objects lives here too.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{SnapshotError, Snapshots};

/// A path as stored: text when it is UTF-8, its bytes otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum StoredPath {
    Text(String),
    Bytes(Vec<u8>),
}

impl StoredPath {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => StoredPath::Text(text.to_owned()),
            Err(_) => StoredPath::Bytes(bytes.to_vec()),
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            StoredPath::Text(text) => text.as_bytes(),
            StoredPath::Bytes(bytes) => bytes,
        }
    }
}

/// What a record is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// A model run.
    Run,
    /// An `agent undo` (itself undoable).
    Undo,
}

/// One snapshot: a tree of the workspace at a moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The tree's object id in the snapshot repository.
    pub tree: String,
    /// Why it was taken: `turn 2`, `end`, `before undo` …
    pub label: String,
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The time budget ran out: `uncovered` paths keep an older state.
    #[serde(default)]
    pub partial: bool,
    /// Changed paths this snapshot could not record (time budget, unreadable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) uncovered: Vec<StoredPath>,
    /// Untracked files and directories (ending in `/`) left out by the bounds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) skipped: Vec<StoredPath>,
    /// In a record's first snapshot: the files and directories (ending in `/`) its ignore
    /// rules left out. They existed before the run, so undo never removes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) ignored: Vec<StoredPath>,
}

impl Snapshot {
    /// Whether `path` (git's bytes) is outside what this snapshot recorded faithfully.
    pub(crate) fn misses(&self, path: &[u8]) -> bool {
        self.uncovered.iter().any(|p| p.bytes() == path)
            || self.skipped.iter().any(|p| {
                let p = p.bytes();
                p == path || (p.ends_with(b"/") && path.starts_with(p))
            })
    }

    /// Whether `path` (git's bytes) was there but ignored when this snapshot was taken: an
    /// ignored file, or in, or itself, an ignored directory.
    pub(crate) fn was_ignored(&self, path: &[u8]) -> bool {
        self.ignored.iter().any(|p| {
            let p = p.bytes();
            p == path
                || p.strip_suffix(b"/")
                    .is_some_and(|dir| dir == path || path.starts_with(p))
        })
    }

    /// Whether `path` (git's bytes, no trailing `/`; empty for the workspace) is, holds or lies
    /// in something this snapshot left out as ignored.
    pub(crate) fn overlaps_ignored(&self, path: &[u8]) -> bool {
        self.ignored.iter().any(|p| {
            let p = p.bytes();
            let p = p.strip_suffix(b"/").unwrap_or(p);
            let below = |inner: &[u8], outer: &[u8]| {
                inner.len() > outer.len() && inner.starts_with(outer) && inner[outer.len()] == b'/'
            };
            path.is_empty() || p == path || below(p, path) || below(path, p)
        })
    }

    /// How many paths it left out, for notes.
    #[must_use]
    pub fn left_out(&self) -> usize {
        self.uncovered.len() + self.skipped.len()
    }
}

/// The snapshots of one run (or one undo) in one workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The run id (the transcript's), or `undo-…` for an undo.
    pub run: String,
    /// What it is of.
    pub kind: RecordKind,
    /// The run an undo took back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    /// The workspace.
    pub workspace: String,
    /// The snapshots, oldest first.
    pub snapshots: Vec<Snapshot>,
    /// The ignore rules every snapshot of the run lists files with, fixed at its first
    /// (`rules.rs`); absent in records written before they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ignore: Option<StoredPath>,
}

impl Record {
    /// The time of its newest snapshot (for "the newest run").
    #[must_use]
    pub fn last_time_ms(&self) -> u64 {
        self.snapshots.last().map_or(0, |s| s.time_ms)
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A run id that can be a file name and a ref component.
pub(crate) fn safe_id(run: &str) -> String {
    let safe: String = run
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "run".to_owned()
    } else {
        safe
    }
}

impl Snapshots {
    fn record_path(&self, run: &str) -> std::path::PathBuf {
        self.dir.join("runs").join(format!("{}.json", safe_id(run)))
    }

    /// The record of `run`, when there is one.
    pub(crate) fn load(&self, run: &str) -> Result<Option<Record>, SnapshotError> {
        let path = self.record_path(run);
        match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|error| SnapshotError::Corrupt {
                        run: run.to_owned(),
                        message: format!("`{}` does not parse: {error}", path.display()),
                    })
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(SnapshotError::io("read", &path, &error)),
        }
    }

    /// Writes `record` whole (temporary file, then rename).
    pub(crate) fn save(&self, record: &Record) -> Result<(), SnapshotError> {
        let path = self.record_path(&record.run);
        let text = serde_json::to_vec_pretty(record).map_err(|error| SnapshotError::Io {
            what: "encode",
            path: path.clone(),
            message: error.to_string(),
        })?;
        write_atomically(&path, &text)
    }

    /// Every record of this workspace, oldest first (by their newest snapshot); records that
    /// do not parse are left out.
    ///
    /// # Errors
    /// When the store cannot be read.
    pub fn records(&self) -> Result<Vec<Record>, SnapshotError> {
        let runs = self.dir.join("runs");
        let entries =
            std::fs::read_dir(&runs).map_err(|error| SnapshotError::io("read", &runs, &error))?;
        let mut records: Vec<Record> = entries
            .flatten()
            .filter(|entry| entry.path().extension().is_some_and(|e| e == "json"))
            .filter_map(|entry| std::fs::read(entry.path()).ok())
            .filter_map(|bytes| serde_json::from_slice::<Record>(&bytes).ok())
            .filter(|record| !record.snapshots.is_empty())
            .collect();
        records.sort_by_key(Record::last_time_ms);
        Ok(records)
    }

    /// The record of `run`, or the newest one in this workspace.
    ///
    /// # Errors
    /// When there is none, or it cannot be read.
    pub fn record(&self, run: Option<&str>) -> Result<Record, SnapshotError> {
        match run {
            Some(run) => self
                .load(run)?
                .filter(|record| !record.snapshots.is_empty())
                .ok_or_else(|| SnapshotError::UnknownRun(run.to_owned())),
            None => self
                .records()?
                .pop()
                .ok_or_else(|| SnapshotError::NoSnapshots(self.workspace.clone())),
        }
    }

    /// Drops records whose newest snapshot is older than `keep`, their refs, and the objects
    /// nothing else refers to. Returns how many records went.
    ///
    /// # Errors
    /// When the store cannot be read; git's failures to prune are ignored.
    pub fn prune(&self, keep: Duration) -> Result<usize, SnapshotError> {
        let cutoff = now_ms().saturating_sub(u64::try_from(keep.as_millis()).unwrap_or(u64::MAX));
        let records = self.records()?;
        let all = records.len();
        let old: Vec<Record> = records
            .into_iter()
            .filter(|record| record.last_time_ms() < cutoff)
            .collect();
        if old.is_empty() {
            return Ok(0);
        }
        let git = self.git(None);
        let deadline = Instant::now() + self.limits.time_budget;
        for record in &old {
            let _ = std::fs::remove_file(self.record_path(&record.run));
            let _ = std::fs::remove_file(self.index_path(&record.run));
            self.forget_rules(&record.run);
            let refs = git.run_str(
                &[
                    "for-each-ref",
                    "--format=%(refname)",
                    &format!("refs/agent/{}/", safe_id(&record.run)),
                ],
                None,
                deadline,
            );
            if let Ok(refs) = refs {
                let input: String = String::from_utf8_lossy(&refs.stdout)
                    .lines()
                    .map(|name| format!("delete {name}\n"))
                    .collect();
                let _ = git.run_str(&["update-ref", "--stdin"], Some(input.as_bytes()), deadline);
            }
        }
        if old.len() == all {
            // Its objects may be pruned now: the next run's index starts from nothing.
            let _ = std::fs::remove_file(self.dir.join("index"));
        }
        if packs(&self.repo()) > MAX_PACKS {
            // Packed objects are never pruned: into one pack with what refs still reach,
            // the rest loose with their pack's age, for the prune below.
            let _ = git.run_str(
                &["repack", "-A", "-d", "-l", "-q"],
                None,
                Instant::now() + 4 * self.limits.time_budget,
            );
        }
        // Only loose objects older than the cutoff: another run's snapshot being written
        // right now has objects no ref points at yet.
        let days = keep.as_secs() / 86_400;
        let expire = format!("--expire={days}.days.ago");
        let _ = git.run_str(
            &["prune", &expire],
            None,
            Instant::now() + 4 * self.limits.time_budget,
        );
        Ok(old.len())
    }
}

/// More packs than this in the snapshot repository are packed into one when old records
/// are pruned (each snapshot that hashes many files at once writes a pack).
const MAX_PACKS: usize = 16;

/// How many packs `repo` has.
fn packs(repo: &Path) -> usize {
    std::fs::read_dir(repo.join("objects/pack")).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|entry| entry.path().extension().is_some_and(|e| e == "pack"))
            .count()
    })
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), SnapshotError> {
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&temp, bytes).map_err(|error| SnapshotError::io("write", &temp, &error))?;
    std::fs::rename(&temp, path).map_err(|error| {
        let _ = std::fs::remove_file(&temp);
        SnapshotError::io("write", path, &error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn paths_that_are_not_utf8_keep_their_bytes() {
        let bytes = b"bad\xffname\n";
        let stored = StoredPath::new(bytes);
        let json = serde_json::to_string(&stored).unwrap();
        let back: StoredPath = serde_json::from_str(&json).unwrap();
        assert_eq!(back.bytes(), bytes);
        let text = StoredPath::new(b"ok.txt");
        assert_eq!(serde_json::to_string(&text).unwrap(), "\"ok.txt\"");
    }

    #[test]
    fn a_skipped_directory_covers_what_is_under_it() {
        let snapshot = Snapshot {
            tree: String::new(),
            label: String::new(),
            time_ms: 0,
            partial: false,
            uncovered: vec![StoredPath::new(b"slow.txt")],
            skipped: vec![StoredPath::new(b"vendor/"), StoredPath::new(b"big.bin")],
            ignored: vec![StoredPath::new(b"target/"), StoredPath::new(b"local.db")],
        };
        // A removal of, in or around something ignored cannot be undone.
        for path in ["target", "target/debug/x", "local.db", ""] {
            assert!(snapshot.overlaps_ignored(path.as_bytes()), "{path}");
        }
        for path in ["targets", "local.db2", "src", "tar"] {
            assert!(!snapshot.overlaps_ignored(path.as_bytes()), "{path}");
        }
        let around = Snapshot {
            ignored: vec![StoredPath::new(b"build/cache/")],
            ..snapshot.clone()
        };
        assert!(
            around.overlaps_ignored(b"build"),
            "a directory holding an ignored one"
        );
        assert!(!around.overlaps_ignored(b"buil"));
        assert!(snapshot.was_ignored(b"target/debug/x"));
        assert!(snapshot.was_ignored(b"target"), "the directory itself");
        assert!(snapshot.was_ignored(b"local.db"));
        assert!(!snapshot.was_ignored(b"targets"));
        assert!(!snapshot.was_ignored(b"local.db2"));
        assert!(snapshot.misses(b"vendor/a/b.js"));
        assert!(snapshot.misses(b"big.bin"));
        assert!(snapshot.misses(b"slow.txt"));
        assert!(!snapshot.misses(b"vendorx/a"));
        assert!(!snapshot.misses(b"big.bin2"));
    }

    #[test]
    fn run_ids_become_safe_names() {
        assert_eq!(safe_id("20260101T000000-ab12"), "20260101T000000-ab12");
        assert_eq!(safe_id("../x"), "___x");
        assert_eq!(safe_id(""), "run");
    }
}
