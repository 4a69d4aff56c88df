//! Plain output for runs without the terminal UI (`--plain`, or stderr is not
//! a terminal): progress lines on stderr, the final answer left for stdout. At a
//! terminal (`--plain`), the model's text is written as it arrives, appended a word at a
//! time and wrapped between words ([`super::stream::FlowText`]); elsewhere it is held until
//! it is known not to be the answer. A finished command's last lines follow its summary
//! ([`super::tail`]).
//! Everything from the model or a command is sanitised (escape sequences shown,
//! colour stripped from command output) whether or not stderr is a terminal: a
//! log file may be `cat` to one later. The answer on stdout is not written here.

use std::io::Write as _;

use super::sanitize;
use super::summary::summary;
use crate::event::Event;
use crate::policy::Verdict;

/// Turns events into progress lines on stderr.
#[derive(Debug, Default)]
pub struct Plain {
    /// Text of the current turn, held until we know it is not the final answer.
    text: String,
    /// Print command output and allow decisions too.
    pub verbose: bool,
    /// Print nothing but errors.
    pub quiet: bool,
    /// The reason of the last deny decision, for the summary line.
    denied: Option<String>,
    /// Reasoning of the current turn, printed as one block before what follows it.
    reasoning: String,
    /// Print reasoning dimmed (colour is on).
    pub dim: bool,
    /// Lines the current command printed (all of them, not only those kept).
    output_lines: super::summary::OutputLines,
    /// The current command's last lines, kept under its summary.
    tail: super::tail::Tail,
    /// The model's text as it streams, when it is written as it arrives (at a terminal).
    flow: Option<super::stream::FlowText>,
    /// The hosts the network proxy refused, for the closing line.
    blocked: super::network::Blocked,
}

/// Characters of a turn's reasoning shown without `-v` — enough to follow the model's drift,
/// short enough not to bury the commands.
const REASONING_PREVIEW_CHARS: usize = 160;

impl Plain {
    /// Plain output; `verbose` adds command output and allow decisions, `quiet` silences it.
    #[must_use]
    pub fn new(verbose: bool, quiet: bool) -> Self {
        Self {
            text: String::new(),
            verbose,
            quiet,
            denied: None,
            reasoning: String::new(),
            dim: false,
            output_lines: super::summary::OutputLines::default(),
            tail: super::tail::Tail::default(),
            flow: None,
            blocked: super::network::Blocked::default(),
        }
    }

    /// Writes the model's text as it arrives (stderr is a terminal), not with `-q`.
    #[must_use]
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.flow = (streaming && !self.quiet).then(super::stream::FlowText::default);
        self
    }

    /// Whether the model's text is written here as it arrives (the answer included).
    #[must_use]
    pub fn streams_text(&self) -> bool {
        self.flow.is_some()
    }

    /// Ends the row the streamed text is on, before another line is written.
    fn end_flow(&mut self) {
        let Some(flow) = &mut self.flow else {
            return;
        };
        let mut rest = flow.finish(super::stream::width());
        if flow.mid_line() {
            rest.push('\n');
            flow.line_ended();
        }
        super::stream::show(&rest);
    }

    /// Prints the reasoning held so far: whole with `-v`, else its start on one line; always
    /// sanitised, dimmed when colour is on.
    fn flush_reasoning(&mut self) {
        let reasoning = std::mem::take(&mut self.reasoning);
        let reasoning = reasoning.trim();
        if reasoning.is_empty() {
            return;
        }
        let shown = if self.verbose {
            sanitize::escape_prose(reasoning).into_owned()
        } else {
            let one_line = reasoning.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut start: String = one_line.chars().take(REASONING_PREVIEW_CHARS).collect();
            if one_line.chars().nth(REASONING_PREVIEW_CHARS).is_some() {
                start.push_str("… (-v shows all)");
            }
            sanitize::escape_prose(&start).into_owned()
        };
        let line = format!("thinking: {shown}");
        if self.dim {
            self.write(&format!("\x1b[2m{line}\x1b[0m"));
        } else {
            self.write(&line);
        }
    }

    /// Prints what `event` means for a person watching stderr.
    #[allow(clippy::too_many_lines)] // one arm per event: a table, not logic
    pub fn handle(&mut self, event: &Event) {
        // Never shown (the transcript and `--json` have it), nor does it break a line.
        if let Event::BackgroundOutput { .. } = event {
            return;
        }
        if let Event::Decision {
            decision: Verdict::Deny,
            reason,
            ..
        } = event
        {
            self.denied = Some(reason.clone());
        }
        if let Event::ReasoningDelta { text } = event {
            self.reasoning.push_str(text);
            return;
        }
        match event {
            Event::ToolCall { .. } => {
                self.output_lines = super::summary::OutputLines::default();
                self.tail = super::tail::Tail::default();
            }
            Event::OutputDelta { stream, text, .. } => {
                self.output_lines.push(*stream, text);
                self.tail.push(*stream, text);
            }
            _ => {}
        }
        if !matches!(event, Event::TextDelta { .. }) {
            self.end_flow();
        }
        self.flush_reasoning();
        let line = match event {
            Event::TextDelta { text } => {
                if let Some(flow) = &mut self.flow {
                    super::stream::show(&flow.push(text, super::stream::width()));
                } else {
                    self.text.push_str(text);
                }
                return;
            }
            Event::ToolCall {
                command,
                description,
                ..
            } => {
                let said = std::mem::take(&mut self.text);
                let mut lines = String::new();
                if !said.trim().is_empty() {
                    lines.push_str(&sanitize::escape_prose(said.trim_end()));
                    lines.push('\n');
                }
                match (command, description) {
                    (Some(command), Some(description)) => {
                        lines.push_str(&format!(
                            "→ {}  ({})",
                            super::summary::one_line(command),
                            sanitize::escape_prose(description).replace('\n', "⏎")
                        ));
                    }
                    _ => lines.push_str("→ <invalid tool call>"),
                }
                lines
            }
            Event::FileCall { .. }
            | Event::FileResult { .. }
            | Event::McpCall { .. }
            | Event::McpResult { .. } => {
                let Some(line) = self.file_line(event) else {
                    return;
                };
                line
            }
            Event::Decision {
                decision, reason, ..
            } if self.verbose => {
                let verdict = match decision {
                    Verdict::Allow => "allow",
                    Verdict::Ask => "ask",
                    Verdict::Deny => "deny",
                };
                format!("  {verdict}: {}", sanitize::escape_prose(reason))
            }
            Event::OutputDelta { text, .. } if self.verbose => {
                self.write(&sanitize::command_output(text.trim_end_matches('\n')));
                return;
            }
            Event::ToolResult {
                command,
                result,
                error,
                ..
            } => {
                let denied = self.denied.take();
                let (tone, line) = summary(
                    command.as_deref(),
                    result.as_ref(),
                    error.as_ref(),
                    denied.as_deref(),
                    result.as_ref().map(|_| self.output_lines.total()),
                );
                let undone = super::summary::undone(result.as_ref());
                if tone == super::summary::Tone::Denied {
                    // -q hides progress, never a denial.
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                } else {
                    self.write(&line);
                    if !self.verbose && result.is_some() {
                        let tail = std::mem::take(&mut self.tail);
                        let failed = tone == super::summary::Tone::Failure;
                        for line in super::tail::shown(tail.kept(failed), self.dim) {
                            self.write(&line);
                        }
                    }
                }
                // Nor what the sandbox had to undo.
                for what in undone {
                    let _ = writeln!(std::io::stderr().lock(), "{what}");
                }
                return;
            }
            Event::TurnEnd {
                turn,
                usage: Some(usage),
                ..
            } if self.verbose => super::summary::turn_usage(*turn, usage),
            Event::Done {
                note,
                usage,
                changes,
                denials,
                ..
            } => {
                self.text.clear();
                // Even with -q, like a denial: it is how a CI job learns what to allow.
                if let Some(line) = super::summary::allow_next_time(denials) {
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                }
                if let Some(line) = self.blocked.summary() {
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                }
                done_lines(note.as_deref(), changes.as_ref(), usage.as_ref())
            }
            Event::Warning { code, message } if crate::event::shown_warning(code) => {
                format!("agent: warning: {}", sanitize::escape_prose(message))
            }
            Event::Network(decision) => {
                // Even with -q, like a denial.
                if let Some(line) = self.blocked.see(decision) {
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                }
                return;
            }
            _ => return,
        };
        self.write(&line);
    }

    /// A file tool's call (the model's text before it, if any) or its one summary line; a
    /// denial goes to stderr even with -q. `None`: nothing more to print.
    fn file_line(&mut self, event: &Event) -> Option<String> {
        match event {
            Event::FileCall { .. } | Event::McpCall { .. } => {
                let said = std::mem::take(&mut self.text);
                (!said.trim().is_empty())
                    .then(|| sanitize::escape_prose(said.trim_end()).into_owned())
            }
            Event::FileResult { .. } | Event::McpResult { .. } => {
                let denied = self.denied.take();
                let (tone, line) = super::summary::result_line(event, denied.as_deref())?;
                if tone == super::summary::Tone::Denied {
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                    return None;
                }
                Some(line)
            }
            _ => None,
        }
    }

    fn write(&self, line: &str) {
        if !self.quiet && !line.is_empty() {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }
}

/// The lines at the end of a run: its note, what it changed, its tokens.
fn done_lines(
    note: Option<&str>,
    changes: Option<&crate::snapshot::Changes>,
    usage: Option<&crate::model::Usage>,
) -> String {
    let mut lines = Vec::new();
    if let Some(note) = note {
        lines.push(format!("agent: {}", sanitize::escape_prose(note)));
    }
    if let Some(line) = changes.and_then(super::summary::changes) {
        lines.push(line);
    }
    if let Some(usage) = usage {
        lines.push(super::summary::run_usage(usage));
    }
    lines.join("\n")
}
