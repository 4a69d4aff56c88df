//! The snapshot store for `agent run`, `agent diff` and `agent undo`: where it is, whether
//! it is on, and the one warning when it cannot be used.

use std::io::Write as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::settings::{self, Settings};
use crate::snapshot::{Recorder, SnapshotError, Snapshots};

/// The recorder for run `id` in `workspace`: off when `[snapshots] enabled = false`; when
/// snapshots cannot be taken, said once (unless -q) and the summary says undo is unavailable.
/// Old snapshot data is pruned here, at the start of the run.
pub(super) fn recorder(settings: &Settings, workspace: &Path, id: &str, quiet: bool) -> Recorder {
    if !settings.snapshots.enabled.value {
        return Recorder::default();
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
        return Recorder::unavailable(why.to_owned());
    };
    let limits = settings.snapshots.limits();
    match Snapshots::open(&state, workspace, limits) {
        Ok(store) => {
            let _ = store.prune(limits.keep);
            let id = if id == "unrecorded" {
                format!("unrecorded-{}", std::process::id())
            } else {
                id.to_owned()
            };
            Recorder::new(store, &id)
        }
        Err(error) => {
            let why = error.to_string();
            warn(&why);
            Recorder::unavailable(why)
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
