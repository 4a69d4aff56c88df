//! The working line: what the screen says while nothing else moves (a request waits for its
//! first token, or the next call), and the model's reasoning on it or, with `-v`, streamed
//! whole.

use std::io::Write as _;

use super::Tui;
use crate::event::Event;
use crate::ui::{sanitize, stream};

impl Tui {
    /// A request went out: the working line shows until something moves.
    pub fn request_sent(&mut self) {
        self.working.wait();
    }

    /// What the working line would say now (for a session's composer); `None` while
    /// something else moves.
    pub fn working_status(&mut self) -> Option<String> {
        if self.quiet {
            return None;
        }
        self.working.line(usize::from(u16::MAX))
    }

    /// Draws the working line where the cursor waits at a line's start; the cursor stays at
    /// its start, so anything printed next begins there (after [`Self::clear_working`]).
    pub(super) fn draw_working(&mut self) {
        if !self.working_line || self.quiet || self.pane.is_some() || !self.at_line_start {
            return;
        }
        if let Some(line) = self.working.line(stream::width()) {
            stream::show(&format!("\r{}\x1b[K\r", self.dim(&line)));
            self.working_drawn = true;
        }
    }

    /// Erases the working line, if it is on screen.
    pub(super) fn clear_working(&mut self) {
        if std::mem::take(&mut self.working_drawn) {
            stream::show("\r\x1b[K");
        }
    }

    /// What moves next, for the working line: a wait begins or ends with these events.
    pub(super) fn follow(&mut self, event: &Event) {
        match event {
            Event::Start { .. }
            | Event::Continue { .. }
            | Event::ToolResult { .. }
            | Event::FileResult { .. }
            | Event::McpResult { .. }
            | Event::TurnEnd { .. } => self.working.wait(),
            Event::TextDelta { .. }
            | Event::ToolCall { .. }
            | Event::FileCall { .. }
            | Event::McpCall { .. }
            | Event::Decision { .. }
            | Event::OutputDelta { .. }
            | Event::Done { .. }
            | Event::Error { .. } => self.working.stop(),
            Event::Compacted { .. }
            | Event::Network(_)
            | Event::ReasoningDelta { .. }
            | Event::Retry { .. }
            | Event::Warning { .. }
            | Event::BackgroundOutput { .. }
            | Event::ModelNote { .. }
            | Event::UserCommand { .. } => {}
        }
        if let Event::TurnEnd {
            usage: Some(usage), ..
        } = event
        {
            self.working.count(usage.output);
        }
    }

    /// Reasoning: on the working line (its latest words, one line; in a session on the
    /// composer's status) until the answer starts; with `-v` streamed whole, dimmed and
    /// sanitised.
    pub(super) fn reasoning(&mut self, text: &str) {
        if self.quiet {
            return;
        }
        if !self.verbose {
            if self.text.is_open() {
                self.end_line();
            }
            self.working.reason(text);
            self.draw_working();
            return;
        }
        if self.text.is_open() {
            self.end_line();
        }
        let shown = self.reasoning_shown.unwrap_or(0);
        self.reasoning_shown = Some(shown + text.chars().count());
        let piece = sanitize::escape_prose(text).into_owned();
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(self.dim(&piece).as_bytes());
        let _ = stderr.flush();
        self.at_line_start = piece.ends_with('\n');
    }
}
