//! The one-line summary a finished call collapses into, shared by the
//! terminal pane and the plain progress lines:
//! `✓ ls -la · exit 0 · 12 ms · 3 lines`, `✗ … exit 1`, `⏱ … timed out`,
//! `⊘ … denied: reason`. Every piece of it is sanitised (see
//! [`super::sanitize`]): the command and the reasons can come from a model.

use crate::exec::{ErrorCode, ExecResult};
use crate::model::Usage;
use crate::tool_error::{ToolError, ToolErrorCode};

/// Longest command shown in a summary before it is shortened with `…`.
const MAX_COMMAND_CHARS: usize = 80;

/// The command on one line, shortened, hidden characters escaped.
#[must_use]
pub fn one_line(command: &str) -> String {
    let flat: String = super::sanitize::escape_command(command.trim())
        .chars()
        .map(|c| if c == '\n' { '⏎' } else { c })
        .collect();
    if flat.chars().count() > MAX_COMMAND_CHARS {
        let cut: String = flat.chars().take(MAX_COMMAND_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// The flags that would have allowed what was denied for want of a terminal, once each:
/// `agent: denied for want of a terminal; to allow next time, run with: --allow 'npx jest'
/// --allow-edits`. `None` when no denial has one.
#[must_use]
pub fn allow_next_time(denials: &[crate::event::Denial]) -> Option<String> {
    let mut flags: Vec<&str> = Vec::new();
    for flag in denials.iter().filter_map(|denial| denial.allow.as_deref()) {
        if !flags.contains(&flag) {
            flags.push(flag);
        }
    }
    (!flags.is_empty()).then(|| {
        let flags = super::sanitize::escape_command(&flags.join(" ")).replace('\n', "⏎");
        format!("agent: denied for want of a terminal; to allow next time, run with: {flags}")
    })
}

/// `path` for a person: under the home directory it starts with `~` (`~/.config/agent/…`),
/// hidden characters escaped. Only for showing: what is written keeps the full path.
#[must_use]
pub fn home_path(path: &std::path::Path) -> String {
    let home = directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_owned());
    let shown = match home
        .as_deref()
        .and_then(|home| path.strip_prefix(home).ok())
    {
        Some(rest)
            if !home.is_some_and(|home| {
                home.as_os_str().is_empty() || home == std::path::Path::new("/")
            }) =>
        {
            if rest.as_os_str().is_empty() {
                "~".to_owned()
            } else {
                format!("~{}{}", std::path::MAIN_SEPARATOR, rest.display())
            }
        }
        _ => path.display().to_string(),
    };
    super::sanitize::escape_command(&shown).replace('\n', "⏎")
}

/// What kind of line it is, for colouring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Ran and exited 0.
    Success,
    /// Ran and failed, or could not run.
    Failure,
    /// Denied.
    Denied,
}

/// Lines a command printed, counted as its output streams: the real count, not that of
/// what was kept under `max_output_chars`. A last line without a newline counts too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputLines {
    newlines: u64,
    /// A stream's last line is still open (stdout, stderr).
    open: [bool; 2],
}

impl OutputLines {
    /// Counts a chunk of `stream`.
    pub fn push(&mut self, stream: crate::exec::Stream, text: &str) {
        if text.is_empty() {
            return;
        }
        self.newlines += text.bytes().filter(|b| *b == b'\n').count() as u64;
        self.open[stream as usize] = !text.ends_with('\n');
    }

    /// Lines so far.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.newlines + self.open.iter().map(|open| u64::from(*open)).sum::<u64>()
    }
}

/// The summary of one call's result: (tone, text). `denied` is the decision's reason,
/// shown instead of the message meant for the model; `lines` the output's real line count
/// when it was counted as it streamed (else it is counted from the kept output).
#[must_use]
pub fn summary(
    command: Option<&str>,
    result: Option<&ExecResult>,
    error: Option<&ToolError>,
    denied: Option<&str>,
    lines: Option<u64>,
) -> (Tone, String) {
    let command = one_line(command.unwrap_or("<invalid call>"));
    if let Some(result) = result {
        let lines = lines
            .unwrap_or_else(|| (count_lines(&result.stdout) + count_lines(&result.stderr)) as u64);
        let lines = format!("{lines} line{}", if lines == 1 { "" } else { "s" });
        let ms =
            crate::exec::describe_duration(std::time::Duration::from_millis(result.duration_ms));
        if result.timed_out {
            return (
                Tone::Failure,
                format!("⏱ {command} · timed out · {ms} · {lines}"),
            );
        }
        let status = match (result.exit_code, result.signal) {
            (Some(code), _) => format!("exit {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "no exit status".to_owned(),
        };
        let truncated = if result.truncated { " (truncated)" } else { "" };
        let tone = if result.exit_code == Some(0) {
            Tone::Success
        } else {
            Tone::Failure
        };
        let mark = if tone == Tone::Success { '✓' } else { '✗' };
        let hint = match &result.error {
            Some(error) if error.code == ErrorCode::NotFound => " · command not found",
            _ => "",
        };
        return (
            tone,
            format!("{mark} {command} · {status} · {ms} · {lines}{truncated}{hint}"),
        );
    }
    match error {
        Some(error) if error.code == ToolErrorCode::Denied => {
            let why = denied.unwrap_or(&error.message);
            let why = super::sanitize::escape_prose(why).replace('\n', "⏎");
            (Tone::Denied, format!("⊘ {command} · denied: {why}"))
        }
        Some(error) => (
            Tone::Failure,
            format!("✗ {command} · {}", super::sanitize::escape(&error.message)),
        ),
        None => (Tone::Failure, format!("✗ {command}")),
    }
}

/// What the sandbox undid after a command (a hook or a `.git` it planted …), one line each,
/// escaped: shown whatever the verbosity, like a denial.
#[must_use]
pub fn undone(result: Option<&ExecResult>) -> Vec<String> {
    result
        .map(|result| {
            result
                .sandbox_undone
                .iter()
                .map(|what| format!("  ⚠ sandbox: {}", super::sanitize::escape(what)))
                .collect()
        })
        .unwrap_or_default()
}

/// The summary of a file tool's call: `✓ read src/lib.rs · 120 lines`,
/// `✓ edit src/lib.rs · +1 −1`, `✗ read x · <error>`, `⊘ edit x · denied: <why>`.
#[must_use]
pub fn file_summary(
    label: &str,
    summary: Option<&str>,
    error: Option<&ToolError>,
    denied: Option<&str>,
) -> (Tone, String) {
    let label = one_line(label);
    match error {
        None => {
            let summary = summary.map_or_else(String::new, |s| {
                format!(" · {}", super::sanitize::escape(s))
            });
            (Tone::Success, format!("✓ {label}{summary}"))
        }
        Some(error) if error.code == ToolErrorCode::Denied => {
            let why = denied.unwrap_or(&error.message);
            let why = super::sanitize::escape_prose(why).replace('\n', "⏎");
            (Tone::Denied, format!("⊘ {label} · denied: {why}"))
        }
        Some(error) => (
            Tone::Failure,
            format!(
                "✗ {label} · {}",
                super::sanitize::escape(&error.message).replace('\n', "⏎")
            ),
        ),
    }
}

/// What an MCP result was: `8 chars · 12 ms`, `· capped`, `· the tool reported an error`.
#[must_use]
pub fn mcp_summary(chars: usize, duration_ms: u64, truncated: bool, is_error: bool) -> String {
    let mut summary = format!("{chars} chars · {duration_ms} ms");
    if truncated {
        summary.push_str(" · capped");
    }
    if is_error {
        summary.push_str(" · the tool reported an error");
    }
    summary
}

/// The one summary line of a file tool's or an MCP tool's result, and its tone (`✓ mcp
/// srv/echo · 8 chars · 12 ms`); `denied` is the decision's reason when it was denied. `None`
/// for any other event.
#[must_use]
pub fn result_line(event: &crate::event::Event, denied: Option<&str>) -> Option<(Tone, String)> {
    match event {
        crate::event::Event::FileResult {
            label,
            summary,
            error,
            ..
        } => Some(file_summary(
            label,
            summary.as_deref(),
            error.as_ref(),
            denied,
        )),
        crate::event::Event::McpResult {
            server,
            tool,
            duration_ms,
            chars,
            truncated,
            is_error,
            error,
            ..
        } => {
            let summary =
                chars.map(|chars| mcp_summary(chars, *duration_ms, *truncated, *is_error));
            let label = format!("mcp {server}/{tool}");
            Some(file_summary(
                &label,
                summary.as_deref(),
                error.as_ref(),
                denied,
            ))
        }
        _ => None,
    }
}

/// The run's tokens at its end: `agent: tokens: 12.4k in (9.1k cached) · 1.3k out`.
#[must_use]
pub fn run_usage(usage: &Usage) -> String {
    format!("agent: tokens: {usage}")
}

/// What the run changed, at its end: `agent: changed 3 files (+20 −4) · agent undo to revert`
/// (paths in the note sanitised).
#[must_use]
pub fn changes(changes: &crate::snapshot::Changes) -> Option<String> {
    changes
        .summary()
        .map(|line| format!("agent: {}", super::sanitize::escape_prose(&line)))
}

/// One turn's tokens, with `-v`: `  turn 2 · 1.2k in · 300 out`.
#[must_use]
pub fn turn_usage(turn: u32, usage: &Usage) -> String {
    format!("  turn {turn} · {usage}")
}

fn count_lines(text: &str) -> usize {
    text.lines().count()
}

/// What replacing a session's conversation did, for the screen.
#[must_use]
pub fn compacted(reason: crate::event::CompactReason, replaced: usize) -> String {
    use crate::event::CompactReason;
    let messages = if replaced == 1 { "message" } else { "messages" };
    match reason {
        CompactReason::Clear => {
            format!("agent: a new conversation ({replaced} earlier {messages} set aside)")
        }
        CompactReason::Asked => format!(
            "agent: the conversation is compacted: {replaced} earlier {messages} replaced by a \
             summary the model wrote"
        ),
        CompactReason::ContextWindow => format!(
            "agent: the conversation neared the model's context window: {replaced} earlier \
             {messages} replaced by a summary the model wrote"
        ),
        CompactReason::ContextError => format!(
            "agent: the model said the conversation is too long: {replaced} earlier {messages} \
             replaced by a summary the model wrote; trying again"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn result(exit: Option<i32>, stdout: &str) -> ExecResult {
        ExecResult {
            exit_code: exit,
            stdout: stdout.into(),
            duration_ms: 12,
            error: None,
            ..ExecResult::failed(crate::exec::ExecError::new(ErrorCode::Io, "unused"))
        }
    }

    #[test]
    fn summaries_read_as_designed() {
        let ok = result(Some(0), "a\nb\nc\n");
        assert_eq!(
            summary(Some("ls -la"), Some(&ok), None, None, None).1,
            "✓ ls -la · exit 0 · 12 ms · 3 lines"
        );
        let failed = result(Some(1), "x");
        assert_eq!(
            summary(Some("false"), Some(&failed), None, None, None).1,
            "✗ false · exit 1 · 12 ms · 1 line"
        );
        let denied = ToolError::new(
            ToolErrorCode::Denied,
            "Denied by the policy: no. Do not retry.",
        );
        assert_eq!(
            summary(Some("touch F"), None, Some(&denied), Some("no"), None),
            (Tone::Denied, "⊘ touch F · denied: no".into())
        );
    }

    #[test]
    fn escape_sequences_in_commands_and_reasons_are_shown_not_run() {
        let denied = ToolError::new(ToolErrorCode::Denied, "no");
        assert_eq!(
            summary(
                Some("ls\u{1b}[8m; touch x"),
                None,
                Some(&denied),
                Some("because \u{1b}]0;t\u{7}"),
                None
            )
            .1,
            "⊘ ls\\u{1b}[8m; touch x · denied: because \\u{1b}]0;t\\u{7}"
        );
    }

    #[test]
    fn lines_are_counted_as_the_output_streams() {
        use crate::exec::Stream;
        let mut lines = OutputLines::default();
        lines.push(Stream::Stdout, "a\nb");
        lines.push(Stream::Stderr, "warn\n");
        assert_eq!(lines.total(), 3);
        lines.push(Stream::Stdout, "c\nd\n");
        assert_eq!(lines.total(), 4);
        let kept = result(Some(0), "[… 99 characters omitted …]\n");
        assert_eq!(
            summary(
                Some("seq 1 4"),
                Some(&kept),
                None,
                None,
                Some(lines.total())
            )
            .1,
            "✓ seq 1 4 · exit 0 · 12 ms · 4 lines"
        );
    }

    #[test]
    fn long_and_multiline_commands_fit_one_line() {
        assert_eq!(one_line("a\nb"), "a⏎b");
        assert_eq!(
            one_line(&"x".repeat(200)).chars().count(),
            MAX_COMMAND_CHARS
        );
    }
}
