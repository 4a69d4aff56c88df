//! `run --continue` / `--resume ID`: which transcript goes on, and its conversation rebuilt
//! for the model, with a warning on stderr when part of it could not be (a damaged
//! transcript, an older format). Appending to it and the `continue` marker are `run`'s.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::settings;
use crate::transcript::{self, Rebuilt};

/// The transcript `--continue` or `--resume ID` names, `None` for a new run.
///
/// # Errors
/// A usage error when there is no such run (no earlier run in this workspace for
/// `--continue`; no match, or several, for `--resume`).
pub(crate) fn locate(args: &RunArgs, workspace: &Path) -> Result<Option<PathBuf>> {
    if !args.continue_latest && args.resume.is_none() {
        return Ok(None);
    }
    let runs = settings::state_dir(&super::env_var)
        .ok_or_else(|| {
            Error::Usage(
                "no state directory, so no earlier run to continue: set XDG_STATE_HOME or HOME"
                    .to_owned(),
            )
        })?
        .join("runs");
    if let Some(id) = &args.resume {
        return transcript::find(&runs, id).map(Some).map_err(Error::Usage);
    }
    let workspace = workspace.display().to_string();
    let latest = transcript::latest_in(&runs, &workspace)
        .map_err(|error| Error::Runtime(format!("cannot read `{}`: {error}", runs.display())))?;
    match latest {
        Some(path) => Ok(Some(path)),
        None => Err(Error::Usage(format!(
            "no earlier run in `{workspace}` to continue: start one with `agent run 'TASK'`, or \
             pick any run with --resume ID (`agent history` lists them)"
        ))),
    }
}

/// The conversation recorded in `path`, for a model described as `model`; says on stderr
/// what could not be rebuilt (even with -q: the model sees less than the person expects).
///
/// # Errors
/// When the transcript cannot be read.
pub(crate) fn load(path: &Path, model: &str) -> Result<Rebuilt> {
    let bytes = std::fs::read(path).map_err(|error| {
        Error::Runtime(format!(
            "cannot read the transcript `{}`: {error}",
            path.display()
        ))
    })?;
    let rebuilt = transcript::rebuild(&String::from_utf8_lossy(&bytes), model);
    if let Some(note) = &rebuilt.note {
        let note = crate::ui::sanitize::escape_prose(note);
        let _ = writeln!(
            std::io::stderr(),
            "agent: warning: resuming `{}`: {note}",
            path.file_stem().unwrap_or_default().to_string_lossy()
        );
    }
    Ok(rebuilt)
}
