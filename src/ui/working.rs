//! The working line: what the screen shows while nothing else moves — from a request until
//! its first token, and between tool calls —
//! `⠹ working · 5 s · ↓ 1.2k tokens · Ctrl+C to stop` (a spinner, the seconds waited, the
//! output tokens of the run so far when the server said them), or, while the model reasons,
//! `⠹ thinking: …` with the latest of its reasoning on one line. When the answer starts the
//! reasoning collapses into one line: its start.
//!
//! Pure: it says what to show for a width; [`super::tui`] draws and erases it. The reasoning
//! is the model's text: it passes [`super::sanitize`] here.

use std::time::{Duration, Instant};

use unicode_width::UnicodeWidthChar as _;

use super::sanitize;
use super::stream::visible_width;

/// Spinner frames.
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Characters of reasoning remembered for the live line (its end) — more than any
/// terminal is wide.
const REASONING_TAIL_CHARS: usize = 1000;

/// The state behind the working line.
#[derive(Debug, Default)]
pub struct Working {
    /// When the wait began; `None` while something else moves.
    since: Option<Instant>,
    /// Output tokens of the run so far, when the server said.
    tokens: Option<u64>,
    /// The reasoning being received: its start (for the collapsed line) …
    reasoning_start: String,
    /// … and its latest characters, on one line.
    reasoning_tail: String,
    frame: usize,
    /// How to stop, as the screen's keys have it (`Ctrl+C to stop`).
    pub stop_hint: &'static str,
}

impl Working {
    /// A working line telling how to stop.
    #[must_use]
    pub fn new(stop_hint: &'static str) -> Self {
        Self {
            stop_hint,
            ..Self::default()
        }
    }

    /// A wait begins now (a request went out, a call ended), unless one is on.
    pub fn wait(&mut self) {
        self.since.get_or_insert_with(Instant::now);
    }

    /// Something else moves: no working line.
    pub fn stop(&mut self) {
        self.since = None;
    }

    /// Adds a turn's output tokens.
    pub fn count(&mut self, output_tokens: u64) {
        *self.tokens.get_or_insert(0) += output_tokens;
    }

    /// Adds reasoning (the line shows its end while it streams).
    pub fn reason(&mut self, text: &str) {
        self.wait();
        let flat = text.replace(['\n', '\r', '\t'], " ");
        if self.reasoning_start.chars().count() < REASONING_TAIL_CHARS {
            self.reasoning_start.push_str(&flat);
        }
        self.reasoning_tail.push_str(&flat);
        let extra = self
            .reasoning_tail
            .chars()
            .count()
            .saturating_sub(REASONING_TAIL_CHARS);
        if extra > 0 {
            let cut = self
                .reasoning_tail
                .char_indices()
                .nth(extra)
                .map_or(0, |(at, _)| at);
            self.reasoning_tail.drain(..cut);
        }
    }

    /// Ends the reasoning: its collapsed line (`thinking: <start>…`) fitted to `width`, or
    /// `None` when there was none.
    pub fn collapse(&mut self, width: usize) -> Option<String> {
        let start = std::mem::take(&mut self.reasoning_start);
        self.reasoning_tail.clear();
        let words = start.split_whitespace().collect::<Vec<_>>().join(" ");
        if words.is_empty() {
            return None;
        }
        Some(fit("thinking: ", &words, width, false))
    }

    /// The line to draw now, fitted to `width` columns (one short: the cursor's column), the
    /// spinner moved on; `None` when nothing waits.
    pub fn line(&mut self, width: usize) -> Option<String> {
        let since = self.since?;
        self.frame = self.frame.wrapping_add(1);
        let spinner = SPINNER[self.frame % SPINNER.len()];
        let width = width.saturating_sub(1);
        let tail = self.reasoning_tail.trim();
        if !tail.is_empty() {
            return Some(fit(&format!("{spinner} thinking: "), tail, width, true));
        }
        let line = status(since.elapsed(), self.tokens, self.stop_hint);
        Some(fit("", &format!("{spinner} {line}"), width, false))
    }
}

/// `working · 5 s · ↓ 1.2k tokens · Ctrl+C to stop`.
fn status(waited: Duration, tokens: Option<u64>, stop_hint: &str) -> String {
    let tokens = tokens.map_or_else(String::new, |tokens| {
        format!(" · ↓ {} tokens", crate::model::short_tokens(tokens))
    });
    format!("working · {} s{tokens} · {stop_hint}", waited.as_secs())
}

/// `label` then `body` sanitised, cut with `…` to fit `width` columns: the body's end kept
/// (`keep_end`: the latest of a stream) or its start.
fn fit(label: &str, body: &str, width: usize, keep_end: bool) -> String {
    let body = sanitize::escape_prose(body);
    let room = width.saturating_sub(visible_width(label));
    if visible_width(&body) <= room {
        return format!("{label}{body}");
    }
    let room = room.saturating_sub(1);
    let mut chars: Vec<char> = body.chars().collect();
    if keep_end {
        chars.reverse();
    }
    let mut used = 0;
    let mut taken: Vec<char> = Vec::new();
    for c in chars {
        let c_width = c.width().unwrap_or(0);
        if used + c_width > room {
            break;
        }
        used += c_width;
        taken.push(c);
    }
    if keep_end {
        taken.reverse();
        format!("{label}…{}", taken.into_iter().collect::<String>())
    } else {
        format!("{label}{}…", taken.into_iter().collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_line_says_what_it_waits_for() {
        assert_eq!(
            status(Duration::from_millis(5400), Some(1234), "Esc to stop"),
            "working · 5 s · ↓ 1.2k tokens · Esc to stop"
        );
        assert_eq!(
            status(Duration::ZERO, None, "Ctrl+C to stop"),
            "working · 0 s · Ctrl+C to stop"
        );
        let mut working = Working::new("Ctrl+C to stop");
        assert_eq!(working.line(80), None);
        working.wait();
        let line = working.line(80).unwrap();
        assert!(line.ends_with("working · 0 s · Ctrl+C to stop"), "{line}");
        working.stop();
        assert_eq!(working.line(80), None);
    }

    #[test]
    fn reasoning_shows_its_end_then_collapses_to_its_start() {
        let mut working = Working::new("Ctrl+C to stop");
        working.reason("First I look at the\nfiles, ");
        working.reason("then \u{1b}[31mI change the one that matters most of all");
        let line = working.line(40).unwrap();
        assert!(line.contains("thinking: …"), "{line}");
        assert!(line.ends_with("that matters most of all"), "{line}");
        assert!(!line.contains('\u{1b}'), "{line}");
        assert!(visible_width(&line) <= 39, "{line}");
        let collapsed = working.collapse(30).unwrap();
        assert_eq!(collapsed, "thinking: First I look at the…");
        assert_eq!(working.collapse(30), None);
    }

    #[test]
    fn every_width_fits() {
        let mut working = Working::new("Ctrl+C to stop");
        working.wait();
        working.count(1_234_567);
        for width in 0..100 {
            let line = working.line(width).unwrap();
            assert!(visible_width(&line) <= width.max(3), "{width}: {line}");
        }
    }
}
