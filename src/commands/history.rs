//! `agent history [list|show ID]`: this workspace's runs (`--all`: every workspace's, with a
//! workspace column), fitted to the terminal ([`super::history_table`]). The readable forms
//! are sanitised (escape sequences a model or a command wrote are shown, not acted on,
//! wherever the text goes: it may be `cat` to a terminal later); `--json` prints the
//! transcript byte for byte.

use std::process::ExitCode;

use crate::cli::{GlobalArgs, HistoryArgs, HistoryCommand};
use crate::error::{Error, Result, Status};
use crate::settings;
use crate::transcript;
use crate::ui::sanitize;

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
            let mut list = transcript::list(&runs).map_err(io)?;
            if !args.all {
                let workspace = super::workspace(global.cwd.as_deref())?;
                let workspace = workspace.display().to_string();
                list.retain(|run| run.cwd == workspace);
            }
            if global.json {
                let text = serde_json::to_string(&list).unwrap_or_default();
                super::print_stdout(&format!("{text}\n"))?;
            } else if list.is_empty() && !args.all {
                super::print_stdout(
                    "no runs in this workspace yet (`agent history --all` lists every workspace's)\n",
                )?;
            } else if list.is_empty() {
                super::print_stdout(&format!(
                    "no runs yet (transcripts go to {})\n",
                    runs.display()
                ))?;
            } else {
                let out = super::history_table::table(&list, args.all, terminal_columns());
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

/// The terminal's width when stdout is one; `None` for a pipe or a file.
fn terminal_columns() -> Option<usize> {
    use std::io::IsTerminal as _;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    crossterm::terminal::size()
        .ok()
        .map(|(columns, _)| usize::from(columns))
}
