//! The snapshot store for `agent run`, `agent diff` and `agent undo`: where it is, whether
//! it is on, and the one warning when it cannot be used.

use std::io::Write as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::settings::{self, Settings};
use crate::snapshot::{Recorder, SnapshotError, Snapshots, Source};

/// The recorder for run `id` in `workspace` (see [`source`]).
pub(super) fn recorder(settings: &Settings, workspace: &Path, id: &str, quiet: bool) -> Recorder {
    source(settings, workspace, quiet).recorder(id)
}

/// Where the recorders of this invocation come from: off when `[snapshots] enabled = false`;
/// when snapshots cannot be taken, said once (unless -q) and the summary says undo is
/// unavailable. Old snapshot data is pruned here, at the start of the run.
pub(super) fn source(settings: &Settings, workspace: &Path, quiet: bool) -> Source {
    if !settings.snapshots.enabled.value {
        return Source::Off;
    }
    let warn = |why: &str| {
        if !quiet {
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: {why}: this run takes no snapshots (no `agent undo`)"
            );
        }
    };
    let Some(state) = settings::state_dir(&super::env_var) else {
        let why = "no state directory (set XDG_STATE_HOME or HOME)";
        warn(why);
        return Source::Unavailable(why.to_owned());
    };
    let limits = settings.snapshots.limits();
    match Snapshots::open(&state, workspace, limits) {
        Ok(store) => {
            let _ = store.prune(limits.keep);
            Source::Store(store)
        }
        Err(error) => {
            let why = error.to_string();
            warn(&why);
            Source::Unavailable(why)
        }
    }
}

/// The existing store of `workspace`, for `agent diff` and `agent undo`.
pub(super) fn existing(workspace: &Path) -> Result<Snapshots> {
    let state = settings::state_dir(&super::env_var).ok_or_else(|| {
        Error::Runtime("no state directory: set XDG_STATE_HOME or HOME".to_owned())
    })?;
    Snapshots::existing(&state, workspace).map_err(runtime)
}

/// A snapshot error as a command's error line.
pub(super) fn runtime(error: SnapshotError) -> Error {
    Error::Runtime(error.to_string())
}
