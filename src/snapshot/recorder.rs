//! The run's side of snapshots: the loop (and every tool that changes files) calls
//! [`Recorder::before_change`] before it changes anything; the first call of each model turn
//! takes a snapshot, later ones in the same turn cost nothing. [`Recorder::close`] takes the
//! closing snapshot after the run's last command and says what the run changed. A snapshot
//! that fails never stops the run: it is remembered and said in the summary.

use std::sync::{Arc, Mutex, PoisonError};

use super::record::{Record, RecordKind, Snapshot};
use super::{Changes, Snapshots};

/// Paths named in a note before "and N more".
const NAMED_PATHS: usize = 3;

/// Takes a run's snapshots. Cloning shares it; the default one does nothing.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    inner: Option<Arc<Mutex<State>>>,
}

#[derive(Debug)]
struct State {
    store: Option<Snapshots>,
    run: String,
    /// Why there are no snapshots at all (git missing, no state directory).
    unavailable: Option<String>,
    last_turn: Option<u32>,
    /// The snapshot of `last_turn` was taken whole: not partial, nothing left out.
    whole: bool,
    taken: Vec<Snapshot>,
    failures: Vec<String>,
    /// The record had snapshots before this invocation (`run --continue`).
    earlier: bool,
    closed: Closed,
}

/// Whether the closing snapshot was taken, and what it said.
#[derive(Debug, Clone)]
enum Closed {
    Open,
    Done(Option<Changes>),
}

impl Recorder {
    /// Snapshots for `run` into `store`.
    #[must_use]
    pub fn new(store: Snapshots, run: &str) -> Self {
        let earlier = store.load(run).ok().flatten().is_some();
        Self::with(State {
            store: Some(store),
            run: run.to_owned(),
            unavailable: None,
            last_turn: None,
            whole: false,
            taken: Vec::new(),
            failures: Vec::new(),
            earlier,
            closed: Closed::Open,
        })
    }

    /// No snapshots can be taken (`why`): a run that changes files says undo is unavailable.
    #[must_use]
    pub fn unavailable(why: String) -> Self {
        Self::with(State {
            store: None,
            run: String::new(),
            unavailable: Some(why),
            last_turn: None,
            whole: false,
            taken: Vec::new(),
            failures: Vec::new(),
            earlier: false,
            closed: Closed::Open,
        })
    }

    fn with(state: State) -> Self {
        Self {
            inner: Some(Arc::new(Mutex::new(state))),
        }
    }

    /// Call before changing the workspace in model turn `turn` (an approved command that is
    /// not read-only, a file edit): the first call of a turn takes a snapshot. Returns whether
    /// the turn's snapshot is whole (taken, not partial, nothing left out): only then can
    /// undo put back everything a command removes.
    pub fn before_change(&self, turn: u32) -> bool {
        let Some(inner) = &self.inner else {
            return false;
        };
        let mut state = inner.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(state.closed, Closed::Done(_)) {
            return false;
        }
        if state.last_turn == Some(turn) {
            return state.whole;
        }
        state.last_turn = Some(turn);
        state.whole = false;
        let Some(store) = state.store.clone() else {
            return false;
        };
        match store.take(&state.run, &format!("turn {turn}"), RecordKind::Run) {
            Ok(snapshot) => {
                state.whole = !snapshot.partial && snapshot.left_out() == 0;
                state.taken.push(snapshot);
            }
            Err(error) => state.failures.push(format!("turn {turn}: {error}")),
        }
        state.whole
    }

    /// Before a command in turn `turn` that removes or moves `paths` (relative to the
    /// workspace): takes the turn's snapshot as [`Recorder::before_change`] does, and says
    /// whether undo can put back everything under those paths: the snapshot is whole and none
    /// of them holds, is or lies in something the run's snapshots leave out as ignored.
    pub fn restorable(&self, turn: u32, paths: &[std::path::PathBuf]) -> bool {
        if !self.before_change(turn) {
            return false;
        }
        let Some(inner) = &self.inner else {
            return false;
        };
        let state = inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(store) = &state.store else {
            return false;
        };
        // The ignored paths are listed in the record's first snapshot.
        let Ok(Some(record)) = store.load(&state.run) else {
            return false;
        };
        let Some(first) = record.snapshots.first() else {
            return false;
        };
        paths.iter().all(|path| {
            let path = path.to_string_lossy().replace('\\', "/");
            !first.overlaps_ignored(path.trim_end_matches('/').as_bytes())
        })
    }

    /// Whether snapshots can be taken at all (on, and a store that opened).
    #[must_use]
    pub fn available(&self) -> bool {
        self.inner.as_ref().is_some_and(|inner| {
            inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .store
                .is_some()
        })
    }

    /// The snapshots this recorder took, oldest first: an interactive session's one message,
    /// as a record of its own (`/diff`, `/undo` of the last message). `None` before two were
    /// taken (nothing can have changed between them).
    #[must_use]
    pub fn taken(&self) -> Option<Record> {
        let inner = self.inner.as_ref()?;
        let state = inner.lock().unwrap_or_else(PoisonError::into_inner);
        let store = state.store.as_ref()?;
        if state.taken.len() < 2 {
            return None;
        }
        // The run's rules, which its snapshots were listed with (an undo lists with them too).
        let ignore = store.load(&state.run).ok().flatten().and_then(|r| r.ignore);
        Some(Record {
            run: state.run.clone(),
            kind: RecordKind::Run,
            undoes: None,
            workspace: store.workspace().display().to_string(),
            snapshots: state.taken.clone(),
            ignore,
        })
    }

    /// After the run's last command: the closing snapshot and what the run changed. `None`
    /// when nothing was about to change. The second call returns the first's answer.
    #[must_use]
    pub fn close(&self) -> Option<Changes> {
        let inner = self.inner.as_ref()?;
        let mut state = inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Closed::Done(changes) = &state.closed {
            return changes.clone();
        }
        let changes = state.finish();
        state.closed = Closed::Done(changes.clone());
        changes
    }
}

/// Where the recorders of one invocation come from: an interactive session makes one per
/// message, all into the same run's record (as `run --continue` does).
#[derive(Debug, Clone, Default)]
pub enum Source {
    /// `[snapshots] enabled = false`: no recorder takes anything.
    #[default]
    Off,
    /// The workspace's store.
    Store(Snapshots),
    /// Snapshots cannot be taken, and why (said in the summary when a run changes files).
    Unavailable(String),
}

impl Source {
    /// A recorder for run `run` (an unrecorded run gets an id of its own process).
    #[must_use]
    pub fn recorder(&self, run: &str) -> Recorder {
        match self {
            Source::Off => Recorder::default(),
            Source::Unavailable(why) => Recorder::unavailable(why.clone()),
            Source::Store(store) => {
                let run = if run == "unrecorded" {
                    format!("unrecorded-{}", std::process::id())
                } else {
                    run.to_owned()
                };
                Recorder::new(store.clone(), &run)
            }
        }
    }

    /// The store, when there is one.
    #[must_use]
    pub fn store(&self) -> Option<&Snapshots> {
        match self {
            Source::Store(store) => Some(store),
            Source::Off | Source::Unavailable(_) => None,
        }
    }
}

impl State {
    fn finish(&mut self) -> Option<Changes> {
        self.last_turn?;
        if let Some(why) = &self.unavailable {
            return Some(unavailable(why));
        }
        let store = self.store.clone()?;
        if self.taken.is_empty() && !self.earlier {
            let why = self.failures.first().cloned().unwrap_or_default();
            return Some(unavailable(&why));
        }
        match store.take(&self.run, "end", RecordKind::Run) {
            Ok(snapshot) => self.taken.push(snapshot),
            Err(error) => self.failures.push(format!("end: {error}")),
        }
        let changes = store
            .record(Some(&self.run))
            .and_then(|record| store.changes(&record));
        let mut changes = match changes {
            Ok(files) => super::diff::summarize(&files),
            Err(error) => return Some(unavailable(&error.to_string())),
        };
        changes.note = self.note();
        Some(changes)
    }

    /// What undo cannot cover: failed, partial and bounded snapshots, in one note.
    fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.failures.is_empty() {
            parts.push(format!(
                "a snapshot failed ({}): undo covers only what the others recorded",
                self.failures.join("; ")
            ));
        }
        let uncovered = unique(self.taken.iter().flat_map(|s| &s.uncovered));
        if !uncovered.is_empty() {
            let why = if self.taken.iter().any(|s| s.partial) {
                "the snapshot ran out of time or could not read them"
            } else {
                "they could not be read"
            };
            parts.push(format!(
                "undo cannot cover {} ({why})",
                name_paths(&uncovered)
            ));
        }
        let skipped = unique(self.taken.iter().flat_map(|s| &s.skipped));
        if !skipped.is_empty() {
            parts.push(format!(
                "left out of snapshots: {} (untracked and over the size bounds, or nested \
                 repositories)",
                name_paths(&skipped)
            ));
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

fn unavailable(why: &str) -> Changes {
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(": {why}")
    };
    Changes {
        undo: false,
        note: Some(format!("undo is not available for this run{why}")),
        ..Changes::default()
    }
}

fn unique<'a>(paths: impl Iterator<Item = &'a super::record::StoredPath>) -> Vec<String> {
    let mut names: Vec<String> = paths
        .map(|p| String::from_utf8_lossy(p.bytes()).into_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}

fn name_paths(paths: &[String]) -> String {
    let mut named: Vec<String> = paths
        .iter()
        .take(NAMED_PATHS)
        .map(|p| format!("`{p}`"))
        .collect();
    if paths.len() > NAMED_PATHS {
        named.push(format!("and {} more", paths.len() - NAMED_PATHS));
    }
    named.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_without_snapshots_does_nothing() {
        let recorder = Recorder::default();
        recorder.before_change(1);
        assert_eq!(recorder.close(), None);
    }

    #[test]
    fn unavailable_snapshots_are_said_only_when_something_was_to_change() {
        let recorder = Recorder::unavailable("git is missing".into());
        assert_eq!(recorder.clone().close(), None);
        let recorder = Recorder::unavailable("git is missing".into());
        recorder.before_change(1);
        let changes = recorder.close().unwrap();
        assert!(!changes.undo);
        assert_eq!(
            changes.note.as_deref(),
            Some("undo is not available for this run: git is missing")
        );
    }

    #[test]
    fn long_path_lists_are_shortened() {
        let paths: Vec<String> = (0..5).map(|i| format!("f{i}")).collect();
        assert_eq!(name_paths(&paths), "`f0`, `f1`, `f2`, and 2 more");
    }
}
