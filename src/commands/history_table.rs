//! `agent history`'s table: one row per run — short id, time, counts, tokens, changes,
//! outcome, (with `--all`) the workspace, and the prompt — fitted to the terminal's width by
//! cutting the prompt (then the row) with `…`, so no row wraps. Pure text; the caller
//! sanitises it and says how wide the terminal is.

use std::fmt::Write as _;

use unicode_width::UnicodeWidthChar as _;

use crate::transcript::{RunSummary, short_id};

/// Longest prompt shown when the width is not known (a pipe).
const PROMPT_CHARS: usize = 50;
/// Longest workspace shown (`--all`): its end, which names the project; short enough to
/// leave the prompt room at 120 columns.
const WORKSPACE_CHARS: usize = 16;

/// The table of `runs`; with `workspaces`, a WORKSPACE column; `columns`: the terminal's
/// width, `None` when stdout is not a terminal.
#[must_use]
pub fn table(runs: &[RunSummary], workspaces: bool, columns: Option<usize>) -> String {
    let workspace_head = if workspaces {
        format!("{:<WORKSPACE_CHARS$} ", "WORKSPACE")
    } else {
        String::new()
    };
    let mut out = fit(
        &format!(
            "{:<6} {:<16} {:>5} {:>4} {:>6} {:<11} {:<15} {:<11} {workspace_head}PROMPT",
            "ID", "TIME", "TURNS", "RUN", "DENIED", "TOKENS", "CHANGES", "OUTCOME"
        ),
        columns,
    );
    out.push('\n');
    for run in runs {
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
        // `files (+added −removed)`, or `-` when it changed nothing.
        let changes = run.changes.as_ref().filter(|c| c.files > 0).map_or_else(
            || "-".to_owned(),
            |c| format!("{} (+{} −{})", c.files, c.added, c.removed),
        );
        let workspace = if workspaces {
            format!(
                "{:<WORKSPACE_CHARS$} ",
                tail(&crate::ui::summary::one_line(&run.cwd), WORKSPACE_CHARS)
            )
        } else {
            String::new()
        };
        let mut row = String::new();
        let _ = write!(
            row,
            "{:<6} {:<16} {:>5} {:>4} {:>6} {tokens:<11} {changes:<15} {:<11} {workspace}",
            short_id(&run.id),
            minutes(&run.time),
            run.turns,
            run.commands_run,
            run.commands_denied,
            run.outcome
        );
        // A continued run is one line; `+N` counts its continuations, kept whatever is cut.
        let more = if run.parts > 1 {
            format!(" (+{})", run.parts - 1)
        } else {
            String::new()
        };
        let room = columns.map_or(PROMPT_CHARS, |columns| {
            columns.saturating_sub(width(&row) + width(&more))
        });
        let prompt = head(&crate::ui::summary::one_line(&run.prompt), room);
        row.push_str(&prompt);
        row.push_str(&more);
        out.push_str(&fit(&row, columns));
        out.push('\n');
    }
    out
}

/// `2026-12-05 04:37` of `2026-12-05T04:37:12Z`: the time to the minute (UTC).
fn minutes(time: &str) -> String {
    time.replacen('T', " ", 1).chars().take(16).collect()
}

/// `text` cut to `columns` with `…` at the end (nothing when unknown).
fn fit(text: &str, columns: Option<usize>) -> String {
    match columns {
        Some(columns) => head(text, columns),
        None => text.to_owned(),
    }
    .trim_end()
    .to_owned()
}

/// The start of `text` in at most `room` columns, `…` where cut.
fn head(text: &str, room: usize) -> String {
    if width(text) <= room {
        return text.to_owned();
    }
    let mut out = String::new();
    for c in text.chars() {
        if width(&out) + char_width(c) + 1 > room {
            break;
        }
        out.push(c);
    }
    if room > 0 {
        out.push('…');
    }
    out
}

/// The end of `text` in at most `room` columns, `…` where cut.
fn tail(text: &str, room: usize) -> String {
    if width(text) <= room {
        return text.to_owned();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        if used + char_width(c) > room {
            break;
        }
        used += char_width(c);
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, prompt: &str, cwd: &str, parts: u64) -> RunSummary {
        RunSummary {
            id: id.to_owned(),
            time: "2026-12-05T04:37:12Z".to_owned(),
            prompt: prompt.to_owned(),
            cwd: cwd.to_owned(),
            parts,
            turns: 12,
            commands_run: 140,
            commands_denied: 3,
            usage: None,
            outcome: "interrupted".to_owned(),
            changes: None,
        }
    }

    /// Every row fits every width, with or without the workspace column, whatever the
    /// prompt holds (wide characters included); the short id and `(+N)` stay.
    #[test]
    fn every_row_fits_the_terminal() {
        let prompts = [
            "fix the failing test in src/lib.rs and then run the whole suite again please",
            "短い説明をください、そしてテストを直してください、全部お願いします",
            "x",
            "",
        ];
        let runs: Vec<RunSummary> = prompts
            .iter()
            .enumerate()
            .map(|(i, prompt)| {
                run(
                    &format!("20261205T043712Z-a1b2c{i}"),
                    prompt,
                    "/home/someone/src/a/very/long/path/to/the/project",
                    u64::try_from(i).unwrap_or(0) + 1,
                )
            })
            .collect();
        for workspaces in [false, true] {
            for columns in 60..=200 {
                let shown = table(&runs, workspaces, Some(columns));
                for line in shown.lines() {
                    assert!(
                        width(line) <= columns,
                        "{columns}: {} wide: {line}",
                        width(line)
                    );
                }
                if columns >= 120 {
                    let first = shown.lines().nth(1).unwrap_or_default();
                    assert!(first.contains("fix the failing"), "{columns}: {first}");
                    assert!(shown.contains("\na1b2c0 "), "{shown}");
                    assert!(shown.contains(" (+3)\n"), "{columns}:\n{shown}");
                    assert!(!shown.contains("20261205T043712Z-"), "{shown}");
                }
            }
        }
    }

    #[test]
    fn the_workspace_column_shows_the_path_s_end() {
        let runs = [run(
            "T-abcdef",
            "go",
            "/home/someone/src/deep/path/my-project",
            1,
        )];
        let shown = table(&runs, true, Some(200));
        assert!(shown.contains("WORKSPACE"), "{shown}");
        assert!(shown.contains("…path/my-project go"), "{shown}");
        assert!(shown.contains(" 2026-12-05 04:37 "), "{shown}");
        let shown = table(&runs, false, Some(200));
        assert!(
            !shown.contains("WORKSPACE") && !shown.contains("my-project"),
            "{shown}"
        );
    }

    #[test]
    fn in_a_pipe_the_prompt_is_capped_and_the_row_kept() {
        let long = "word ".repeat(40);
        let shown = table(&[run("T-abcdef", &long, "/w", 1)], false, None);
        let row = shown.lines().nth(1).unwrap_or_default();
        assert!(row.ends_with('…'), "{row}");
        assert!(width(row) < 94 + PROMPT_CHARS + 2, "{row}");
    }
}
