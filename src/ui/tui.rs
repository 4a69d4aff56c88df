//! The terminal experience on stderr: the model's text streams into the
//! scrollback as it arrives ([`super::stream`]: wrapped between words, finished lines'
//! Markdown rendered, the open line redrawn as it grows); while a command runs, the
//! live pane ([`super::pane`]) shows it. When the command ends the pane is cleared
//! and one summary line takes its place, with the last lines the command printed under
//! it ([`super::tail`]: more when it failed, what failed first), so the scrollback keeps
//! what matters. While nothing else moves — a request waits for its first token, or
//! the next call — the working line ([`super::working`]) says so, and the model's
//! reasoning shows on it. `-q` keeps only denials, notes and errors; `-v` adds decisions,
//! a finished command's whole kept output and the whole reasoning.
//!
//! The model's text and command output pass [`super::sanitize`]: escape
//! sequences are shown as text, colour in command output is stripped.
//!
//! The pane exists only between an allow decision and the result, so it never
//! shares the terminal with the confirmation prompt. The cursor is hidden only
//! while it is drawn and shown again on every path (drop and panic hook).

use std::io::Write as _;

use crossterm::style::Stylize as _;

use super::pane::{Pane, PaneState, clean};
use super::sanitize;
use super::stream::LiveText;
use super::summary::{OutputLines, Tone, one_line, summary};
use super::tail::{Kept, Tail};
use super::working::Working;
use crate::event::Event;

mod working_line;

/// The live screen.
pub struct Tui {
    color: bool,
    at_line_start: bool,
    pane: Option<Pane>,
    pending_command: Option<String>,
    /// The call being decided is a file tool's: no pane, one summary line.
    file_call: bool,
    /// The reason of the last deny decision, for the summary line.
    denied: Option<String>,
    /// Show reasoning whole (`-v`), not just its start; decisions; a command's output
    /// after it ends.
    verbose: bool,
    /// `-q`: no model text, no pane, no summaries — but denials, notes and errors.
    quiet: bool,
    /// Characters of reasoning shown this turn (`-v`); `None` while none is being shown.
    reasoning_shown: Option<usize>,
    /// The model's text as it streams.
    text: LiveText,
    /// Lines the current command printed (all of them, not only those kept).
    output_lines: OutputLines,
    /// The current command's last lines, kept under its summary.
    tail: Tail,
    /// What the working line shows.
    working: Working,
    /// Draw the working line (not in a session: its composer says it).
    working_line: bool,
    /// The working line is on screen (the cursor at its start).
    working_drawn: bool,
    /// The hosts the network proxy refused, for the closing line.
    blocked: super::network::Blocked,
    /// Rows a pane keeps under it for the session's composer.
    footer_rows: u16,
    /// Panic messages wait while the screen is on (a caught panic leaves it as it was); the
    /// last field, so they are printed after `Drop` closed the pane.
    _screen: super::panic::Screen,
}

/// Rows under a session's live pane for its composer: the status line, the text, a queued
/// message or two.
const FOOTER_ROWS: u16 = 6;

impl Tui {
    /// A screen on stderr.
    #[must_use]
    pub fn new(color: bool) -> Self {
        Self {
            color,
            at_line_start: true,
            pane: None,
            pending_command: None,
            file_call: false,
            denied: None,
            verbose: false,
            quiet: false,
            reasoning_shown: None,
            text: LiveText::new(color),
            output_lines: OutputLines::default(),
            tail: Tail::default(),
            working: Working::new("Ctrl+C to stop"),
            working_line: true,
            working_drawn: false,
            blocked: super::network::Blocked::default(),
            footer_rows: 0,
            _screen: super::panic::Screen::start(),
        }
    }

    /// A session's screen: its composer shows what the working line would (see
    /// [`Self::working_status`]), and Esc stops a turn.
    #[must_use]
    pub fn in_session(mut self) -> Self {
        self.working_line = false;
        self.working.stop_hint = "Esc to stop";
        self.footer_rows = FOOTER_ROWS;
        self
    }

    /// The rows under the open pane for the composer (`None`: no pane is open).
    #[must_use]
    pub fn footer_rows(&self) -> Option<u16> {
        self.pane.as_ref().map(Pane::footer_rows)
    }

    /// Draws the composer under the open pane (nothing when none is open).
    pub fn set_footer(&mut self, footer: super::composer::Footer) {
        if let Some(pane) = &mut self.pane {
            pane.set_footer(footer);
            pane.draw();
        }
    }

    /// `-q`: shows only denials, notes and errors (the answer then goes to stdout).
    #[must_use]
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    /// Whether the model's text is shown here (not with `-q`).
    #[must_use]
    pub fn shows_text(&self) -> bool {
        !self.quiet
    }

    /// The model's text, shown as it arrives (sanitised, wrapped, Markdown rendered).
    fn text(&mut self, text: &str) {
        let bytes = self.text.push(text, super::stream::width());
        super::stream::show(&bytes);
        if !bytes.is_empty() {
            self.at_line_start = !self.text.is_open();
        }
    }

    /// Ends the model's unfinished line for good (the turn ended, or something else is shown).
    fn flush_text(&mut self) {
        let bytes = self.text.finish(super::stream::width());
        if !bytes.is_empty() {
            super::stream::show(&bytes);
            self.at_line_start = false;
        }
    }

    /// Shows the model's reasoning whole (`-v`) instead of its start.
    #[must_use]
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Shows what `event` means.
    #[allow(clippy::too_many_lines)] // one arm per event: a table, not logic
    pub fn handle(&mut self, event: &Event) {
        // Never shown: a background process's output reaches the model (its `processes`
        // tool) and the transcript, not the screen, and moves nothing on it.
        if let Event::BackgroundOutput { .. } = event {
            return;
        }
        self.clear_working();
        self.follow(event);
        if let Event::ReasoningDelta { text } = event {
            self.reasoning(text);
            return;
        }
        if self.reasoning_shown.take().is_some() {
            self.end_line();
        }
        if let Some(line) = self.working.collapse(super::stream::width()) {
            let line = self.dim(&line);
            self.line(&line);
        }
        match event {
            Event::TextDelta { text } => {
                if !self.quiet {
                    self.text(text);
                }
            }
            Event::ToolCall { command, .. } => {
                self.end_line();
                self.file_call = false;
                self.pending_command.clone_from(command);
                self.output_lines = OutputLines::default();
                self.tail = Tail::default();
            }
            Event::Decision {
                decision: crate::policy::Verdict::Allow,
                command: edited,
                reason,
                ..
            } => {
                self.decision_line("allow", reason);
                if self.file_call {
                    return;
                }
                let command = self.pending_command.take().unwrap_or_default();
                let command = edited.clone().unwrap_or(command);
                if !self.quiet {
                    self.pane = Pane::open(command, self.color, self.footer_rows);
                    self.draw(true);
                }
            }
            Event::OutputDelta { stream, text, .. } => {
                self.output_lines.push(*stream, text);
                self.tail.push(*stream, text);
                if let Some(pane) = &mut self.pane {
                    pane.state.push(*stream, text);
                }
                self.draw(false);
            }
            Event::ToolResult {
                command,
                result,
                error,
                ..
            } => {
                let kept = self.close_pane();
                let denied = self.denied.take();
                let (tone, line) = summary(
                    command.as_deref(),
                    result.as_ref(),
                    error.as_ref(),
                    denied.as_deref(),
                    result.as_ref().map(|_| self.output_lines.total()),
                );
                let undone = super::summary::undone(result.as_ref());
                let tail = std::mem::take(&mut self.tail);
                if !self.quiet || tone == Tone::Denied {
                    if self.verbose
                        && let Some(state) = kept
                    {
                        self.output(&state);
                    }
                    self.line(&self.paint(tone, &line));
                    if !self.verbose && result.is_some() {
                        self.kept(tail.kept(tone == Tone::Failure));
                    }
                }
                // Shown even with -q, like a denial.
                for what in undone {
                    self.line(&self.paint(Tone::Denied, &what));
                }
            }
            Event::Decision {
                decision: crate::policy::Verdict::Deny,
                reason,
                ..
            } => {
                self.decision_line("deny", reason);
                self.denied = Some(reason.clone());
            }
            Event::TurnEnd { turn, usage, .. } => {
                self.end_line();
                if let (true, Some(usage)) = (self.verbose, usage) {
                    self.line(&self.dim(&super::summary::turn_usage(*turn, usage)));
                }
            }
            Event::Done {
                note,
                usage,
                changes,
                denials,
                ..
            } => {
                self.done(note.as_deref(), changes.as_ref(), *usage);
                if let Some(line) = super::summary::allow_next_time(denials) {
                    self.line(&line);
                }
                if let Some(line) = self.blocked.summary() {
                    self.line(&line);
                }
            }
            Event::Network(decision) => {
                if let Some(line) = self.blocked.see(decision) {
                    self.end_line();
                    let line = self.dim(&line);
                    self.line(&line);
                }
            }
            Event::Compacted {
                reason, replaced, ..
            } => {
                let line = super::summary::compacted(*reason, *replaced);
                self.line(&self.dim(&line));
            }
            Event::FileCall { .. }
            | Event::FileResult { .. }
            | Event::McpCall { .. }
            | Event::McpResult { .. } => self.file_event(event),
            Event::Warning { code, message } if crate::event::shown_warning(code) => {
                let line = format!("agent: warning: {}", sanitize::escape_prose(message));
                self.line(&self.dim(&line));
            }
            Event::Start { .. }
            | Event::Continue { .. }
            | Event::Decision { .. }
            | Event::Error { .. }
            // Said on stderr by the model's notice as they happen.
            | Event::Retry { .. }
            | Event::Warning { .. }
            | Event::ReasoningDelta { .. }
            // Recorded after it was shown live (as its call, output and result).
            | Event::UserCommand { .. }
            // Said when it was made (`/undo`).
            | Event::ModelNote { .. }
            | Event::BackgroundOutput { .. } => {}
        }
    }

    /// A file tool's call (no pane: it is quick) and its one summary line.
    fn file_event(&mut self, event: &Event) {
        match event {
            Event::FileCall { .. } | Event::McpCall { .. } => {
                self.end_line();
                self.file_call = true;
                self.pending_command = None;
            }
            Event::FileResult { .. } | Event::McpResult { .. } => {
                // A shell call answered like a file tool (started in the background) opened
                // a pane at its decision: it ends here, or it would take what follows and be
                // closed as interrupted.
                let _ = self.close_pane();
                let denied = self.denied.take();
                let Some((tone, line)) = super::summary::result_line(event, denied.as_deref())
                else {
                    return;
                };
                if self.quiet && tone != Tone::Denied {
                    return;
                }
                self.line(&self.paint(tone, &line));
            }
            _ => {}
        }
    }

    /// The end of a run (or of a session's turn): a pane still open is said to be
    /// interrupted, then the note, what the run changed, and the tokens.
    fn done(
        &mut self,
        note: Option<&str>,
        changes: Option<&crate::snapshot::Changes>,
        usage: Option<crate::model::Usage>,
    ) {
        if let Some(pane) = &self.pane {
            let line = format!("✗ {} · interrupted", one_line(&pane.state.command));
            self.close_pane();
            let line = self.paint(Tone::Failure, &line);
            self.line(&line);
        }
        self.end_line();
        if let Some(note) = note {
            let note = sanitize::escape_prose(note);
            self.line(&self.dim(&format!("agent: {note}")));
        }
        if let Some(line) = changes.and_then(super::summary::changes) {
            self.line(&self.dim(&line));
        }
        if let Some(usage) = usage.filter(|_| !self.quiet) {
            self.line(&self.dim(&super::summary::run_usage(&usage)));
        }
    }

    /// Whether the live pane of a running command is on screen.
    #[must_use]
    pub fn pane_open(&self) -> bool {
        self.pane.is_some()
    }

    /// Whether the cursor is at the start of a line (nothing half-written above it).
    #[must_use]
    pub fn at_line_start(&self) -> bool {
        self.at_line_start
    }

    /// Redraws the pane (spinner, elapsed time) when one is open, else the working line
    /// when nothing moves.
    pub fn tick(&mut self) {
        self.draw(true);
        self.draw_working();
    }

    /// Puts the terminal back: pane and working line gone, cursor shown, line ended.
    pub fn finish(&mut self) {
        self.working.stop();
        self.clear_working();
        self.close_pane();
        self.end_line();
    }

    /// The last lines of a finished command, under its summary.
    fn kept(&mut self, kept: Vec<Kept>) {
        let mut stderr = std::io::stderr().lock();
        for line in super::tail::shown(kept, self.color) {
            let _ = writeln!(stderr, "{line}");
        }
    }

    /// `-v`: the decision on a call, dimmed (`  allow: on the read-only list`).
    fn decision_line(&mut self, verdict: &str, reason: &str) {
        if self.verbose {
            let reason = sanitize::escape_prose(reason).replace('\n', "⏎");
            self.line(&self.dim(&format!("  {verdict}: {reason}")));
        }
    }

    /// `-v`: what a finished command printed, as the pane kept it, above its summary.
    fn output(&mut self, state: &PaneState) {
        let kept: Vec<String> = state
            .lines
            .iter()
            .map(|(_, line)| line.clone())
            .chain(
                state
                    .partial
                    .iter()
                    .filter(|text| !text.is_empty())
                    .map(|text| clean(text)),
            )
            .collect();
        let left_out = self.output_lines.total().saturating_sub(kept.len() as u64);
        self.end_line();
        let mut stderr = std::io::stderr().lock();
        if left_out > 0 {
            let _ = writeln!(
                stderr,
                "{}",
                self.dim(&format!("  … {left_out} earlier lines not kept …"))
            );
        }
        for line in kept {
            let _ = writeln!(stderr, "  {line}");
        }
    }

    /// Ends a half-written line of model text.
    pub fn end_line(&mut self) {
        self.flush_text();
        if !self.at_line_start {
            let _ = writeln!(std::io::stderr());
            self.at_line_start = true;
        }
    }

    /// Clears the live pane and the working line away and ends the line, so that a prompt
    /// can be drawn below.
    pub fn step_aside(&mut self) {
        self.working.stop();
        self.clear_working();
        self.close_pane();
        self.end_line();
    }

    fn line(&mut self, text: &str) {
        self.end_line();
        let _ = writeln!(std::io::stderr(), "{text}");
    }

    fn draw(&mut self, force: bool) {
        if let Some(pane) = &mut self.pane
            && (force || pane.due())
        {
            pane.draw();
        }
    }

    /// Clears the pane away; returns what it showed.
    fn close_pane(&mut self) -> Option<PaneState> {
        self.pane.take().map(Pane::close)
    }

    fn paint(&self, tone: Tone, text: &str) -> String {
        if !self.color {
            return text.to_owned();
        }
        match tone {
            Tone::Success => text.green().to_string(),
            Tone::Failure => text.red().to_string(),
            Tone::Denied => text.yellow().to_string(),
        }
    }

    fn dim(&self, text: &str) -> String {
        if self.color {
            text.dim().to_string()
        } else {
            text.to_owned()
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        self.finish();
    }
}
