//! `agent history [list|show ID]`. The readable forms are sanitised (escape
//! sequences a model or a command wrote are shown, not acted on, wherever the
//! text goes: it may be `cat` to a terminal later); `--json` prints the
//! transcript byte for byte.

use std::fmt::Write as _;
use std::process::ExitCode;

use crate::cli::{GlobalArgs, HistoryArgs, HistoryCommand};
use crate::error::{Error, Result, Status};
use crate::settings;
use crate::transcript;
use crate::ui::sanitize;

/// Longest prompt shown in the list before it is shortened.
const PROMPT_CHARS: usize = 50;

/// Runs `agent history`.
pub(crate) fn run(global: &GlobalArgs, args: &HistoryArgs) -> Result<ExitCode> {
    let runs = settings::state_dir(&super::env_var)
        .ok_or_else(|| Error::Runtime("no state directory: set XDG_STATE_HOME or HOME".to_owned()))?
        .join("runs");
    let io = |error: std::io::Error| {
        Error::Runtime(format!("cannot read `{}`: {error}", runs.display()))
    };
    match &args.command {
        None | Some(HistoryCommand::List) => {
            let list = transcript::list(&runs).map_err(io)?;
            if global.json {
                let text = serde_json::to_string(&list).unwrap_or_default();
                super::print_stdout(&format!("{text}\n"))?;
            } else if list.is_empty() {
                super::print_stdout(&format!(
                    "no runs yet (transcripts go to {})\n",
                    runs.display()
                ))?;
            } else {
                let mut out = String::from(
                    "ID                        TIME                  TURNS  RUN  DENIED  TOKENS         CHANGES         OUTCOME      PROMPT\n",
                );
                for run in &list {
                    let prompt = crate::ui::summary::one_line(&run.prompt);
                    let prompt: String = if prompt.chars().count() > PROMPT_CHARS {
                        prompt.chars().take(PROMPT_CHARS - 1).chain(['…']).collect()
                    } else {
                        prompt
                    };
                    // `in/out`, or `-` when the server reported none (the demo).
                    let tokens = run.usage.map_or_else(
                        || "-".to_owned(),
                        |usage| {
                            format!(
                                "{}/{}",
                                crate::model::short_tokens(usage.input),
                                crate::model::short_tokens(usage.output)
                            )
                        },
                    );
                    // A continued run is one line; `+N` counts its continuations.
                    let prompt = if run.parts > 1 {
                        format!("{prompt} (+{})", run.parts - 1)
                    } else {
                        prompt
                    };
                    // `files (+added −removed)`, or `-` when it changed nothing.
                    let changes = run.changes.as_ref().filter(|c| c.files > 0).map_or_else(
                        || "-".to_owned(),
                        |c| format!("{} (+{} −{})", c.files, c.added, c.removed),
                    );
                    let _ = writeln!(
                        out,
                        "{:<25} {:<21} {:>5} {:>4} {:>7}  {tokens:<14} {changes:<15} {:<12} {prompt}",
                        run.id,
                        run.time,
                        run.turns,
                        run.commands_run,
                        run.commands_denied,
                        run.outcome
                    );
                }
                super::print_stdout(&sanitize::escape(&out))?;
            }
        }
        Some(HistoryCommand::Show { id }) => {
            let path = transcript::find(&runs, id).map_err(Error::Usage)?;
            if global.json {
                let text = std::fs::read_to_string(&path).map_err(io)?;
                super::print_stdout(&text)?;
            } else {
                let events = transcript::read_events(&path).map_err(io)?;
                let text = transcript::render_show(&events);
                super::print_stdout(&sanitize::escape_prose(&text))?;
            }
        }
    }
    Ok(Status::Success.into())
}
