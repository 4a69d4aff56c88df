//! Reading transcripts back: the list of runs for `agent history` and a
//! readable replay of one for `agent history show ID`. Lines that do not parse
//! (a crash mid-write, a newer version) are skipped, never fatal.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::model::Usage;

/// One line of `agent history`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// Run id.
    pub id: String,
    /// Start time (RFC 3339).
    pub time: String,
    /// The prompt.
    pub prompt: String,
    /// The workspace it started in (not in `history --json`: `history` lists this
    /// workspace's runs, `--all` every workspace's).
    #[serde(skip)]
    pub cwd: String,
    /// Parts: 1, plus one per `run --continue` / `--resume`.
    pub parts: u64,
    /// Model turns, over all parts.
    pub turns: u64,
    /// Commands run.
    pub commands_run: u64,
    /// Commands denied.
    pub commands_denied: u64,
    /// Tokens over all parts, when the server reported them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The latest part's outcome: answered, max_turns, interrupted, error — or incomplete when the run never ended.
    pub outcome: String,
    /// What the run changed in the workspace (the latest part's `done` covers the whole run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<crate::snapshot::Changes>,
}

/// The events of one transcript, skipping unreadable lines.
///
/// # Errors
/// When the file cannot be read.
pub fn read_events(path: &Path) -> std::io::Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

fn summarize(id: String, events: &[Value]) -> RunSummary {
    let start = events.iter().find(|e| e["type"] == "start");
    let text = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v[key].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    // A continued run is one run of several parts, each opened by `start` or `continue`.
    let mut parts: Vec<&[Value]> = Vec::new();
    let mut from = 0;
    for (at, event) in events.iter().enumerate() {
        if at > from && event["type"] == "continue" {
            parts.push(&events[from..at]);
            from = at;
        }
    }
    parts.push(&events[from..]);
    let mut summary = RunSummary {
        id,
        time: text(start, "time"),
        prompt: text(start, "prompt"),
        cwd: text(start, "cwd"),
        parts: parts.len() as u64,
        turns: 0,
        commands_run: 0,
        commands_denied: 0,
        usage: None,
        outcome: "incomplete".to_owned(),
        changes: None,
    };
    for part in parts {
        let done = part.iter().rev().find(|e| e["type"] == "done");
        let count = |key: &str, counted: &dyn Fn(&Value) -> bool| {
            done.and_then(|d| d[key].as_u64())
                .unwrap_or_else(|| part.iter().filter(|e| counted(e)).count() as u64)
        };
        summary.turns += count("turns", &|e| e["type"] == "turn_end");
        summary.commands_run += count("commands_run", &|e| {
            e["type"] == "tool_result" && e["result"].is_object()
        });
        summary.commands_denied += count("commands_denied", &|e| {
            e["type"] == "decision" && e["decision"] == "deny"
        });
        let usage = done
            .and_then(|d| serde_json::from_value::<Usage>(d["usage"].clone()).ok())
            .or_else(|| {
                // A part that never ended: its turns' usage.
                part.iter()
                    .filter(|e| e["type"] == "turn_end")
                    .filter_map(|e| serde_json::from_value::<Usage>(e["usage"].clone()).ok())
                    .reduce(|mut sum, turn| {
                        sum += turn;
                        sum
                    })
            });
        if let Some(usage) = usage {
            *summary.usage.get_or_insert_default() += usage;
        }
        summary.outcome =
            done.map_or_else(|| "incomplete".to_owned(), |d| text(Some(d), "outcome"));
        if let Some(changes) = done.and_then(|d| serde_json::from_value(d["changes"].clone()).ok())
        {
            summary.changes = Some(changes);
        }
    }
    summary
}

/// The transcript files in `runs_dir`, oldest first (their names start with the time).
pub(super) fn transcript_paths(runs_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(runs_dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ndjson"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// The run id of a transcript path (the file name without `.ndjson`).
fn run_id(path: &Path) -> Option<String> {
    Some(path.file_stem()?.to_string_lossy().into_owned())
}

/// Every run in `runs_dir`, oldest first.
///
/// # Errors
/// When the directory exists but cannot be read.
pub fn list(runs_dir: &Path) -> std::io::Result<Vec<RunSummary>> {
    Ok(transcript_paths(runs_dir)?
        .into_iter()
        .filter_map(|path| {
            let id = run_id(&path)?;
            let events = read_events(&path).ok()?;
            Some(summarize(id, &events))
        })
        .collect())
}

/// The short id shown for run `id`: its random part (`1a2b3c` of
/// `20261205T043712Z-1a2b3c`), which [`find`] takes back; the whole id when it has none.
#[must_use]
pub fn short_id(id: &str) -> &str {
    match id.rsplit_once('-') {
        Some((_, short)) if !short.is_empty() => short,
        _ => id,
    }
}

/// The transcript whose id is `id`, ends with `id` (the short id) or starts with it. Only
/// file names are compared: no transcript is opened.
///
/// # Errors
/// A message naming the id when none or several match.
pub fn find(runs_dir: &Path, id: &str) -> Result<PathBuf, String> {
    let paths = transcript_paths(runs_dir)
        .map_err(|error| format!("cannot read `{}`: {error}", runs_dir.display()))?;
    let id = id.trim_end_matches(".ndjson");
    let matches: Vec<PathBuf> = paths
        .into_iter()
        .filter(|path| {
            run_id(path).is_some_and(|run| {
                !id.is_empty() && (run == id || run.ends_with(id) || run.starts_with(id))
            })
        })
        .collect();
    match matches.as_slice() {
        [path] => Ok(path.clone()),
        [] => Err(format!("no run `{id}`: `agent history` lists the runs")),
        _ => Err(format!(
            "`{id}` matches {} runs: give more of the id",
            matches.len()
        )),
    }
}

/// A `tool_result` event in [`render_show`]: status, then stdout (`│`) and stderr (`!`), or
/// the error.
fn render_result(out: &mut String, event: &Value) {
    let result = &event["result"];
    if !result.is_object() {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let _ = writeln!(
            out,
            "  {}: {}",
            text(&event["error"]["code"]),
            text(&event["error"]["message"])
        );
        return;
    }
    let timed_out = if result["timed_out"] == true {
        " · timed out"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  exit {} · {} ms{timed_out}",
        result["exit_code"], result["duration_ms"]
    );
    for (stream, marker) in [("stdout", "│ "), ("stderr", "! ")] {
        for line in result[stream].as_str().unwrap_or_default().lines() {
            let _ = writeln!(out, "  {marker}{line}");
        }
    }
}

/// A `user_command` in [`render_show`]: the person's `!command` and its result.
fn render_user_command(out: &mut String, event: &Value) {
    let _ = writeln!(
        out,
        "! {}  # run by you; its result went to the model with your next message",
        event["command"].as_str().unwrap_or_default()
    );
    render_result(out, event);
}

/// A file tool's `tool_result` in [`render_show`]: its summary and the diff of a change, or
/// the error.
fn render_file_result(out: &mut String, event: &Value) {
    let summary = event["summary"].as_str().unwrap_or_default();
    if render_error_or(out, event, summary) {
        for line in event["diff"].as_str().unwrap_or_default().lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// An MCP tool's `mcp_result` in [`render_show`]: what it returned (its size and time) or
/// the error.
fn render_mcp_result(out: &mut String, event: &Value) {
    let number = |v: &Value| v.as_u64().unwrap_or_default();
    let summary = crate::ui::summary::mcp_summary(
        usize::try_from(number(&event["chars"])).unwrap_or(usize::MAX),
        number(&event["duration_ms"]),
        event["truncated"] == true,
        event["is_error"] == true,
    );
    render_error_or(out, event, &summary);
}

/// The result's error (`  code: message`), or else `summary`; whether there was no error.
fn render_error_or(out: &mut String, event: &Value, summary: &str) -> bool {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    if event["error"].is_object() {
        let _ = writeln!(
            out,
            "  {}: {}",
            text(&event["error"]["code"]),
            text(&event["error"]["message"])
        );
        return false;
    }
    let _ = writeln!(out, "  {summary}");
    true
}

/// A readable replay of one run's events.
#[must_use]
pub fn render_show(events: &[Value]) -> String {
    let mut out = String::new();
    let mut text_open = false;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    for event in events {
        let ty = event["type"].as_str().unwrap_or_default();
        if ty != "text_delta" && text_open {
            out.push('\n');
            text_open = false;
        }
        match ty {
            "start" => {
                let _ = writeln!(
                    out,
                    "run {} · {} · {} · {}\n> {}",
                    s(&event["id"]),
                    s(&event["time"]),
                    s(&event["model"]),
                    s(&event["cwd"]),
                    s(&event["prompt"]).replace('\n', "\n> ")
                );
            }
            "continue" => {
                let _ = writeln!(
                    out,
                    "continued · {} · {} · {} turns resumed\n> {}",
                    s(&event["time"]),
                    s(&event["model"]),
                    event["resumed_turns"],
                    s(&event["prompt"]).replace('\n', "\n> ")
                );
                if let Some(note) = event["note"].as_str() {
                    let _ = writeln!(out, "note: {note}");
                }
            }
            "text_delta" => {
                out.push_str(&s(&event["text"]));
                text_open = !out.ends_with('\n');
            }
            "tool_call" if event["tool"].is_string() => {
                let _ = writeln!(out, "• {}", s(&event["label"]));
            }
            "tool_result" if event["tool"].is_string() => render_file_result(&mut out, event),
            "mcp_call" => {
                let arguments = match &event["arguments"] {
                    Value::Null => s(&event["raw_arguments"]),
                    arguments => arguments.to_string(),
                };
                let _ = writeln!(
                    out,
                    "• mcp {}/{} {arguments}",
                    s(&event["server"]),
                    s(&event["tool"])
                );
            }
            "mcp_result" => render_mcp_result(&mut out, event),
            "tool_call" => match event["command"].as_str() {
                Some(command) => {
                    let _ = writeln!(out, "$ {command}  # {}", s(&event["description"]));
                }
                None => {
                    let _ = writeln!(out, "$ <invalid call: {}>", s(&event["arguments"]));
                }
            },
            "decision" => {
                let _ = writeln!(out, "  {}: {}", s(&event["decision"]), s(&event["reason"]));
                // The person edited the model's command (above): this one is what ran.
                if let Some(ran) = event["command"].as_str() {
                    let _ = writeln!(out, "$ {ran}  # edited by you; this ran");
                }
            }
            "tool_result" => render_result(&mut out, event),
            "user_command" => render_user_command(&mut out, event),
            "error" => {
                let _ = writeln!(out, "error: {}", s(&event["message"]));
            }
            "done" => {
                let usage = serde_json::from_value::<Usage>(event["usage"].clone())
                    .map(|usage| format!(" · {usage}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "done: {} · {} turns · {} run · {} denied{usage}",
                    s(&event["outcome"]),
                    event["turns"],
                    event["commands_run"],
                    event["commands_denied"]
                );
                if let Some(note) = event["note"].as_str() {
                    let _ = writeln!(out, "note: {note}");
                }
            }
            _ => {}
        }
    }
    if text_open {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A call the person edited shows the command that ran, marked, after the model's.
    #[test]
    fn an_edited_call_shows_the_command_that_ran() {
        let events = [
            json!({"type": "tool_call", "id": "1", "command": "cargo test", "description": "test"}),
            json!({"type": "decision", "id": "1", "decision": "allow", "reason": "allowed at the prompt",
                   "command": "cargo nextest run", "edited_from": "cargo test"}),
            json!({"type": "tool_call", "id": "2", "command": "ls", "description": "list"}),
            json!({"type": "decision", "id": "2", "decision": "allow", "reason": "read-only"}),
        ];
        let shown = render_show(&events);
        assert!(
            shown.contains(
                "$ cargo test  # test\n  allow: allowed at the prompt\n$ cargo nextest run  # edited by you; this ran\n"
            ),
            "{shown}"
        );
        assert_eq!(shown.matches("edited by you").count(), 1, "{shown}");
    }

    #[test]
    fn mcp_calls_and_their_results_are_shown() {
        let events = [
            json!({"type": "mcp_call", "id": "1", "server": "srv", "tool": "echo",
                   "arguments": {"text": "hi"}}),
            json!({"type": "decision", "id": "1", "decision": "allow", "reason": "allowed by mcp:srv"}),
            json!({"type": "mcp_result", "id": "1", "server": "srv", "tool": "echo",
                   "duration_ms": 12, "chars": 8, "truncated": true, "is_error": false,
                   "content": "echo: hi"}),
            json!({"type": "mcp_call", "id": "2", "server": "srv", "tool": "write",
                   "raw_arguments": "{oops"}),
            json!({"type": "mcp_result", "id": "2", "server": "srv", "tool": "write",
                   "duration_ms": 0, "truncated": false, "is_error": false,
                   "error": {"code": "denied", "message": "denied for want of a terminal"}}),
        ];
        assert_eq!(
            render_show(&events),
            "• mcp srv/echo {\"text\":\"hi\"}\n  allow: allowed by mcp:srv\n  8 chars · 12 ms · capped\n\
             • mcp srv/write {oops\n  denied: denied for want of a terminal\n"
        );
    }

    #[test]
    fn the_short_id_is_the_random_part() {
        assert_eq!(short_id("20261205T043712Z-1a2b3c"), "1a2b3c");
        assert_eq!(short_id("plain"), "plain");
        assert_eq!(short_id("x-"), "x-");
    }
}
