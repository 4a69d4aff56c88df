//! `run --continue` / `--resume [ID]`: which transcript goes on — `--resume` without an ID
//! at a terminal lets the person pick one of this workspace's recent runs — and its
//! conversation rebuilt for the model, with a warning on stderr when part of it could not be
//! (a damaged transcript, an older format). Appending to it and the `continue` marker are
//! `run`'s.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::settings;
use crate::transcript::{self, Rebuilt};

/// Runs offered by the picker, newest first.
const PICKER_RUNS: usize = 20;

/// The transcript to go on with.
#[derive(Debug)]
pub(crate) struct Earlier {
    /// Its path.
    pub path: PathBuf,
    /// Whether the person picked it from a list (and so may still be asked for the prompt).
    pub picked: bool,
}

/// The transcript `--continue` or `--resume [ID]` names, `None` for a new run.
///
/// # Errors
/// A usage error when there is no such run (no earlier run in this workspace for
/// `--continue` or the picker; no match, or several, for `--resume ID`; no terminal to pick
/// on for `--resume` alone); interrupted when the person cancels the picker.
pub(crate) fn locate(args: &RunArgs, workspace: &Path, color: bool) -> Result<Option<Earlier>> {
    if !args.continue_latest && args.resume.is_none() {
        return Ok(None);
    }
    let runs = runs_dir()?;
    match &args.resume {
        Some(Some(id)) => {
            let path = transcript::find(&runs, id).map_err(Error::Usage)?;
            return Ok(Some(Earlier {
                path,
                picked: false,
            }));
        }
        Some(None) => {
            if let Err(why) = crate::approve::terminal_reachable(false) {
                return Err(Error::Usage(format!(
                    "--resume needs a run ID here ({why}, so no list to pick from):                      `agent history` lists the runs"
                )));
            }
            let path = pick_run(workspace, color)?;
            return Ok(Some(Earlier { path, picked: true }));
        }
        None => {}
    }
    let workspace = workspace.display().to_string();
    let latest = transcript::latest_in(&runs, &workspace)
        .map_err(|error| Error::Runtime(format!("cannot read `{}`: {error}", runs.display())))?;
    match latest {
        Some(path) => Ok(Some(Earlier {
            path,
            picked: false,
        })),
        None => Err(Error::Usage(format!(
            "no earlier run in `{workspace}` to continue: start one with `agent run 'TASK'`, or \
             pick any run with --resume ID (`agent history` lists them)"
        ))),
    }
}

fn runs_dir() -> Result<PathBuf> {
    Ok(settings::state_dir(&super::env_var)
        .ok_or_else(|| {
            Error::Usage(
                "no state directory, so no earlier run to continue: set XDG_STATE_HOME or HOME"
                    .to_owned(),
            )
        })?
        .join("runs"))
}

/// Lets the person pick one of the recent runs of `workspace` (time, first message, turns,
/// outcome); for callers that checked a terminal is reachable (`run --resume`, the
/// interactive session's `--resume`).
///
/// # Errors
/// A usage error when the workspace has no run; interrupted on Esc or Ctrl+C; a runtime
/// error when the runs or the terminal cannot be read.
pub(crate) fn pick_run(workspace: &Path, color: bool) -> Result<PathBuf> {
    pick(&runs_dir()?, workspace, color)
}

fn pick(runs: &Path, workspace: &Path, color: bool) -> Result<PathBuf> {
    let workspace = workspace.display().to_string();
    let all = transcript::list(runs)
        .map_err(|error| Error::Runtime(format!("cannot read `{}`: {error}", runs.display())))?;
    let recent: Vec<_> = all
        .into_iter()
        .rev()
        .filter(|run| run.cwd == workspace)
        .take(PICKER_RUNS)
        .collect();
    if recent.is_empty() {
        return Err(Error::Usage(format!(
            "no earlier run in `{workspace}` to resume: start one with `agent run 'TASK'`, or \
             pick any run with --resume ID (`agent history` lists them)"
        )));
    }
    let labels: Vec<String> = recent.iter().map(label).collect();
    let chosen = crate::ui::pick::one("Resume which run?", &labels, color).map_err(picker_error)?;
    transcript::find(runs, &recent[chosen].id).map_err(Error::Usage)
}

/// `2026-12-03 08:12  list the files … · 3 turns · answered`.
fn label(run: &transcript::RunSummary) -> String {
    /// Characters of the first message shown; the rest is cut with `…`.
    const MESSAGE_CHARS: usize = 60;
    let time = run.time.get(..16).unwrap_or(&run.time).replace('T', " ");
    let message = crate::ui::summary::one_line(&run.prompt);
    let message = if message.chars().count() > MESSAGE_CHARS {
        let cut: String = message.chars().take(MESSAGE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        message
    };
    let turns = if run.turns == 1 { "turn" } else { "turns" };
    format!(
        "{time}  {message} · {} {turns} · {}",
        run.turns, run.outcome
    )
}

/// A picker that ended without an answer: Esc and Ctrl+C stop like Ctrl+C anywhere.
pub(crate) fn picker_error(error: crate::ui::pick::PickError) -> Error {
    match error {
        crate::ui::pick::PickError::Cancelled => Error::Interrupted,
        crate::ui::pick::PickError::Failed(why) => {
            Error::Runtime(format!("the terminal failed while asking: {why}"))
        }
    }
}

/// The next message for a run the person picked without giving one.
///
/// # Errors
/// Interrupted on Esc or Ctrl+C.
pub(crate) fn ask_next_message(color: bool) -> Result<String> {
    fn check(answer: &str) -> Option<String> {
        answer
            .is_empty()
            .then(|| "say what to do next (Esc to stop)".to_owned())
    }
    crate::ui::pick::text("Next message:", "", "", check, color).map_err(picker_error)
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
