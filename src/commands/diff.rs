//! `agent diff [RUN]`: what a run changed in this workspace, from its snapshots — a
//! unified diff (coloured on a terminal, the exact bytes otherwise), `--stat`, `--json`.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use serde_json::json;

use crate::cli::{DiffArgs, GlobalArgs};
use crate::error::{Error, Result, Status};
use crate::snapshot::{ChangeStatus, FileChange};
use crate::ui::{changes, sanitize};
use changes::paint;

/// Runs `agent diff`.
pub(crate) fn run(global: &GlobalArgs, args: &DiffArgs) -> Result<ExitCode> {
    let workspace = super::workspace(global.cwd.as_deref())?;
    let store = super::snapshots::existing(&workspace)?;
    let record = store
        .record(args.run.as_deref())
        .map_err(super::snapshots::runtime)?;
    let changes = store.changes(&record).map_err(super::snapshots::runtime)?;
    let totals = crate::snapshot::summarize(&changes);
    if global.json {
        let mut value = json!({
            "run": record.run,
            "kind": record.kind,
            "files": changes.iter().map(file_json).collect::<Vec<_>>(),
            "changes": {"files": totals.files, "added": totals.added, "removed": totals.removed},
        });
        if let Some(undoes) = &record.undoes {
            value["undoes"] = json!(undoes);
        }
        if !args.stat {
            let text = store
                .diff_text(&record)
                .map_err(super::snapshots::runtime)?;
            value["diff"] = json!(String::from_utf8_lossy(&text));
        }
        super::print_stdout(&format!("{value}\n"))?;
        return Ok(Status::Success.into());
    }
    if changes.is_empty() {
        if !global.quiet {
            let run = sanitize::escape(&record.run).into_owned();
            let _ = writeln!(std::io::stderr(), "agent: run `{run}` changed no files");
        }
        return Ok(Status::Success.into());
    }
    let color = stdout_color(global);
    let terminal = std::io::stdout().is_terminal();
    if args.stat {
        super::print_stdout(&stat(&changes, &totals, terminal, color))?;
        return Ok(Status::Success.into());
    }
    let text = store
        .diff_text(&record)
        .map_err(super::snapshots::runtime)?;
    if terminal {
        super::print_stdout(&changes::diff(&text, color))?;
    } else {
        write_bytes(&text)?;
    }
    Ok(Status::Success.into())
}

fn file_json(change: &FileChange) -> serde_json::Value {
    json!({
        "path": change.path.to_string_lossy(),
        "status": change.status,
        "added": change.added,
        "removed": change.removed,
    })
}

/// `--stat`: one line per file and a total.
fn stat(
    changes: &[FileChange],
    totals: &crate::snapshot::Changes,
    terminal: bool,
    color: bool,
) -> String {
    let mut out = String::new();
    for change in changes {
        let path = change.path.to_string_lossy();
        let path = if terminal {
            sanitize::escape(&path).replace('\n', "⏎")
        } else {
            path.into_owned()
        };
        let mark = match change.status {
            ChangeStatus::Added => "created",
            ChangeStatus::Deleted => "deleted",
            ChangeStatus::Modified | ChangeStatus::TypeChanged => "modified",
        };
        let counts = match (change.added, change.removed) {
            (Some(added), Some(removed)) => {
                let plus = paint(&format!("+{added}"), "32", color);
                let minus = paint(&format!("−{removed}"), "31", color);
                format!("{plus} {minus}")
            }
            _ => "binary".to_owned(),
        };
        out.push_str(&format!("{mark:<8} {path} | {counts}\n"));
    }
    let files = if totals.files == 1 { "file" } else { "files" };
    out.push_str(&format!(
        "{} {files} changed (+{} −{})\n",
        totals.files, totals.added, totals.removed
    ));
    out
}

/// Colour on stdout: `--color`, then NO_COLOR, then whether it is a terminal.
pub(super) fn stdout_color(global: &GlobalArgs) -> bool {
    match global.color {
        crate::cli::Color::Always => true,
        crate::cli::Color::Never => false,
        crate::cli::Color::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

/// The exact bytes to stdout (a pipe or a file), a closed pipe being a quiet end.
fn write_bytes(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(error) => Err(Error::Runtime(format!("cannot write to stdout: {error}"))),
    }
}
