//! The terminal experience on stderr: the model's text streams straight into
//! the scrollback; while a command runs, a ratatui inline viewport (never the
//! alternate screen) shows the command, a spinner, elapsed time, the last lines
//! of stdout and stderr in arrival order (stderr in red) and a line/byte count.
//! When the command ends the pane is cleared and one summary line takes its
//! place, so the scrollback keeps only what matters.
//!
//! The model's text and command output pass [`super::sanitize`]: escape
//! sequences are shown as text, colour in command output is stripped.
//!
//! The pane exists only between an allow decision and the result, so it never
//! shares the terminal with the confirmation prompt. The cursor is hidden only
//! while it is drawn and shown again on every path (drop and panic hook).

use std::collections::VecDeque;
use std::io::Write as _;
use std::time::{Duration, Instant};

use crossterm::style::Stylize as _;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

use super::backend::StderrBackend;
use super::markdown::Markdown;
use super::sanitize;
use super::summary::{OutputLines, Tone, one_line, summary};
use crate::agent::Event;
use crate::exec::Stream;

/// Rows of the live pane, borders included — enough to follow a build, small
/// enough to leave the conversation in view.
const PANE_ROWS: u16 = 12;
/// Output lines kept for the pane (only the last few are shown).
const KEPT_LINES: usize = 200;
/// Longest line kept, in characters (the pane is never wider).
const KEPT_LINE_CHARS: usize = 500;
/// Minimum time between redraws caused by output — fast enough to feel live,
/// slow enough that a flood of output costs little.
const REDRAW_EVERY: Duration = Duration::from_millis(40);
/// Spinner frames.
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The live screen.
pub struct Tui {
    color: bool,
    at_line_start: bool,
    pane: Option<Pane>,
    pending_command: Option<String>,
    /// The reason of the last deny decision, for the summary line.
    denied: Option<String>,
    /// Show reasoning whole (`-v`), not just its start; decisions; a command's output
    /// after it ends.
    verbose: bool,
    /// `-q`: no model text, no pane, no summaries — but denials, notes and errors.
    quiet: bool,
    /// Characters of reasoning shown this turn; `None` while none is being shown.
    reasoning_shown: Option<usize>,
    /// The model's text since its last newline: a line is rendered when it is whole.
    text_line: String,
    /// The Markdown state of the model's text (inside a code block …).
    markdown: Markdown,
    /// Lines the current command printed (all of them, not only those kept).
    output_lines: OutputLines,
}

/// Characters of a turn's reasoning shown without `-v` — enough to follow the model's drift,
/// short enough not to bury the commands.
const REASONING_PREVIEW_CHARS: usize = 160;

/// What the pane shows, apart from the terminal it draws on.
#[derive(Debug, Default)]
pub struct PaneState {
    /// The running command.
    pub command: String,
    /// Elapsed time.
    pub elapsed: Duration,
    /// Finished lines, oldest first.
    pub lines: VecDeque<(Stream, String)>,
    /// Unfinished last line per stream.
    pub partial: [String; 2],
    /// Bytes received.
    pub bytes: u64,
    /// Lines received.
    pub line_count: u64,
    /// Spinner frame.
    pub frame: usize,
}

struct Pane {
    terminal: Terminal<StderrBackend>,
    state: PaneState,
    started: Instant,
    last_draw: Instant,
    area: Rect,
    color: bool,
    /// The terminal's size (columns, rows) the viewport was made for.
    size: (u16, u16),
}

impl Tui {
    /// A screen on stderr.
    #[must_use]
    pub fn new(color: bool) -> Self {
        install_panic_hook();
        Self {
            color,
            at_line_start: true,
            pane: None,
            pending_command: None,
            denied: None,
            verbose: false,
            quiet: false,
            reasoning_shown: None,
            text_line: String::new(),
            markdown: Markdown::new(color),
            output_lines: OutputLines::default(),
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

    /// The model's text: each whole line rendered (Markdown, sanitised) as it completes.
    fn text(&mut self, text: &str) {
        self.text_line.push_str(text);
        let mut stderr = std::io::stderr().lock();
        while let Some(at) = self.text_line.find('\n') {
            let line: String = self.text_line.drain(..=at).collect();
            let shown = self.markdown.line(line.trim_end_matches('\n'));
            let _ = writeln!(stderr, "{shown}");
            self.at_line_start = true;
        }
        let _ = stderr.flush();
    }

    /// Writes the model's unfinished line (the turn ended, or something else is shown).
    fn flush_text(&mut self) {
        if self.text_line.is_empty() {
            return;
        }
        let line = std::mem::take(&mut self.text_line);
        let shown = self.markdown.line(&line);
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(shown.as_bytes());
        let _ = stderr.flush();
        self.at_line_start = false;
    }

    /// Shows the model's reasoning whole (`-v`) instead of its start.
    #[must_use]
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Streams reasoning dimmed and sanitised; without `-v` only its start, then `…`.
    fn reasoning(&mut self, text: &str) {
        if self.quiet {
            return;
        }
        if !self.text_line.is_empty() {
            self.end_line();
        }
        let shown = self.reasoning_shown.unwrap_or(0);
        let total = text.chars().count();
        let piece: String = if self.verbose {
            text.to_owned()
        } else if shown < REASONING_PREVIEW_CHARS {
            let take = REASONING_PREVIEW_CHARS - shown;
            let mut piece: String = text.chars().take(take).collect();
            if total > take {
                piece.push('…');
            }
            piece
        } else if shown == REASONING_PREVIEW_CHARS && total > 0 {
            "…".to_owned()
        } else {
            String::new()
        };
        self.reasoning_shown = Some(if self.verbose {
            shown + total
        } else {
            (shown + total).min(REASONING_PREVIEW_CHARS + 1)
        });
        if piece.is_empty() {
            return;
        }
        let piece = sanitize::escape_prose(&piece).into_owned();
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(self.dim(&piece).as_bytes());
        let _ = stderr.flush();
        self.at_line_start = piece.ends_with('\n');
    }

    /// Shows what `event` means.
    pub fn handle(&mut self, event: &Event) {
        if let Event::ReasoningDelta { text } = event {
            self.reasoning(text);
            return;
        }
        if self.reasoning_shown.take().is_some() {
            self.end_line();
        }
        match event {
            Event::TextDelta { text } => {
                if !self.quiet {
                    self.text(text);
                }
            }
            Event::ToolCall { command, .. } => {
                self.end_line();
                self.pending_command.clone_from(command);
                self.output_lines = OutputLines::default();
            }
            Event::Decision {
                decision: crate::policy::Verdict::Allow,
                command: edited,
                reason,
                ..
            } => {
                self.decision_line("allow", reason);
                let command = self.pending_command.take().unwrap_or_default();
                let command = edited.clone().unwrap_or(command);
                if !self.quiet {
                    self.pane = Pane::open(command, self.color);
                    self.draw(true);
                }
            }
            Event::OutputDelta { stream, text, .. } => {
                self.output_lines.push(*stream, text);
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
                if self.quiet && tone != Tone::Denied {
                    return;
                }
                if self.verbose
                    && let Some(state) = kept
                {
                    self.output(&state);
                }
                self.line(&self.paint(tone, &line));
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
            Event::Done { note, usage, .. } => {
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
                if let Some(usage) = usage.filter(|_| !self.quiet) {
                    self.line(&self.dim(&super::summary::run_usage(&usage)));
                }
            }
            Event::Start { .. }
            | Event::Continue { .. }
            | Event::Decision { .. }
            | Event::Error { .. }
            | Event::ReasoningDelta { .. } => {}
        }
    }

    /// Redraws the pane (spinner, elapsed time) when one is open.
    pub fn tick(&mut self) {
        self.draw(true);
    }

    /// Puts the terminal back: pane gone, cursor shown, line ended.
    pub fn finish(&mut self) {
        self.close_pane();
        self.end_line();
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

    fn line(&mut self, text: &str) {
        self.end_line();
        let _ = writeln!(std::io::stderr(), "{text}");
    }

    fn draw(&mut self, force: bool) {
        if let Some(pane) = &mut self.pane
            && (force || pane.last_draw.elapsed() >= REDRAW_EVERY)
        {
            pane.draw();
        }
    }

    /// Clears the pane away; returns what it showed.
    fn close_pane(&mut self) -> Option<PaneState> {
        let mut pane = self.pane.take()?;
        let _ = pane.terminal.clear();
        let _ = pane.terminal.set_cursor_position(pane.area.as_position());
        let _ = pane.terminal.show_cursor();
        Some(pane.state)
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

/// The screen handle the approver pauses: the live screen, or none (plain output).
impl crate::approve::Screen for Option<std::sync::Arc<std::sync::Mutex<Tui>>> {
    fn pause(&mut self) {
        if let Some(tui) = self
            && let Ok(mut tui) = tui.lock()
        {
            tui.close_pane();
            tui.end_line();
        }
    }

    fn resume(&mut self) {}
}

/// An inline viewport of the pane's height at the cursor, on a terminal of `rows` rows.
fn viewport(rows: u16) -> Option<Terminal<StderrBackend>> {
    let height = PANE_ROWS.min(rows.saturating_sub(1)).max(3);
    let mut terminal = Terminal::with_options(
        StderrBackend::new(),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )
    .ok()?;
    let _ = terminal.hide_cursor();
    Some(terminal)
}

impl Pane {
    fn open(command: String, color: bool) -> Option<Self> {
        let size = crossterm::terminal::size().ok()?;
        let terminal = viewport(size.1)?;
        let now = Instant::now();
        let state = PaneState {
            command,
            ..PaneState::default()
        };
        Some(Self {
            terminal,
            state,
            started: now,
            last_draw: now,
            area: Rect::default(),
            color,
            size,
        })
    }

    /// After a resize: clears the old pane from its first cell (where the cursor waits,
    /// carried along by the terminal's re-wrap) and opens a new viewport there. Ratatui's own
    /// resize would clear the whole screen on a narrower terminal, pushing a copy of
    /// everything, the pane included, into the scrollback.
    fn follow_resize(&mut self) {
        let Ok(size) = crossterm::terminal::size() else {
            return;
        };
        if size == self.size {
            return;
        }
        {
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(b"\r\x1b[J");
            let _ = stderr.flush();
        }
        if let Some(terminal) = viewport(size.1) {
            self.terminal = terminal;
            self.area = Rect::default();
        }
        self.size = size;
    }

    fn draw(&mut self) {
        self.follow_resize();
        self.state.elapsed = self.started.elapsed();
        self.state.frame = self.state.frame.wrapping_add(1);
        let state = &self.state;
        let color = self.color;
        let mut area = self.area;
        let _ = self.terminal.draw(|frame| {
            area = frame.area();
            render(frame, state, color);
        });
        self.area = area;
        // The (hidden) cursor waits at the pane's first cell: a terminal that re-wraps on
        // a resize carries it along, so the pane is found again and cleared from there.
        let _ = self.terminal.set_cursor_position(area.as_position());
        self.last_draw = Instant::now();
    }
}

impl PaneState {
    /// Adds output, splitting it into lines per stream.
    pub fn push(&mut self, stream: Stream, text: &str) {
        self.bytes += text.len() as u64;
        let index = stream as usize;
        let mut rest = text;
        while let Some(at) = rest.find('\n') {
            let mut line = std::mem::take(&mut self.partial[index]);
            line.push_str(&rest[..at]);
            rest = &rest[at + 1..];
            self.line_count += 1;
            self.lines.push_back((stream, clean(&line)));
            if self.lines.len() > KEPT_LINES {
                self.lines.pop_front();
            }
        }
        let partial = &mut self.partial[index];
        if partial.chars().count() < KEPT_LINE_CHARS {
            partial.push_str(rest);
        }
    }
}

/// Makes a line safe to draw (see [`sanitize::command_output`]): colour
/// stripped, other escape sequences shown as text, tabs as spaces, only what
/// follows the last carriage return (progress bars).
fn clean(line: &str) -> String {
    sanitize::command_output(line)
        .chars()
        .take(KEPT_LINE_CHARS)
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect()
}

/// Draws the pane: the command on top, the last lines under a bar on the left, spinner,
/// time and counts at the bottom. Rows are only as long as their text (no right border,
/// no fill): when the terminal narrows, it re-wraps only what is longer than the new width,
/// so the pane keeps its place and is cleared whole.
pub fn render(frame: &mut Frame<'_>, state: &PaneState, color: bool) {
    let area = frame.area();
    let style = |c: Color| {
        if color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    };
    let inner_rows = usize::from(area.height.saturating_sub(2));
    let partials = state
        .partial
        .iter()
        .zip([Stream::Stdout, Stream::Stderr])
        .filter(|(text, _)| !text.is_empty())
        .map(|(text, stream)| (stream, clean(text)));
    let all: Vec<(Stream, String)> = state.lines.iter().cloned().chain(partials).collect();
    let shown: Vec<&(Stream, String)> = all
        .iter()
        .skip(all.len().saturating_sub(inner_rows))
        .collect();
    let bar = || Span::styled("│ ", style(Color::DarkGray));
    let mut lines: Vec<Line<'_>> = vec![Line::from(vec![
        Span::styled("┌ ", style(Color::DarkGray)),
        Span::styled(
            format!("$ {}", one_line(&state.command)),
            style(Color::Yellow),
        ),
    ])];
    for (stream, text) in &shown {
        let text = Span::styled(
            text.clone(),
            match stream {
                Stream::Stdout => Style::default(),
                Stream::Stderr => style(Color::Red),
            },
        );
        lines.push(Line::from(vec![bar(), text]));
    }
    for _ in shown.len()..inner_rows {
        lines.push(Line::from(Span::styled("│", style(Color::DarkGray))));
    }
    let status = format!(
        "{} {:.1} s · {} line{} · {}",
        SPINNER[state.frame % SPINNER.len()],
        state.elapsed.as_secs_f64(),
        state.line_count,
        if state.line_count == 1 { "" } else { "s" },
        human_bytes(state.bytes),
    );
    lines.push(Line::from(vec![
        Span::styled("└ ", style(Color::DarkGray)),
        Span::styled(status, style(Color::Cyan)),
    ]));
    frame.render_widget(Paragraph::new(lines), area);
}

fn human_bytes(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss, reason = "display only")]
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if value < 1024.0 * 1024.0 {
        format!("{:.1} KiB", value / 1024.0)
    } else if value < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", value / 1024.0 / 1024.0)
    } else {
        format!("{:.2} GiB", value / 1024.0 / 1024.0 / 1024.0)
    }
}

/// Shows the cursor and leaves raw mode before any panic message is printed.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = crossterm::terminal::disable_raw_mode();
            let _ = crossterm::execute!(std::io::stderr(), crossterm::cursor::Show);
            let _ = writeln!(std::io::stderr());
            previous(info);
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;

    fn screen(state: &PaneState, width: u16, height: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| render(frame, state, false)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol().to_owned())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn the_pane_shows_the_last_lines_in_arrival_order() {
        let mut state = PaneState {
            command: "cargo build".into(),
            ..PaneState::default()
        };
        state.push(Stream::Stdout, "one\ntwo\n");
        state.push(Stream::Stderr, "warn: x\n");
        state.push(Stream::Stdout, "three\nfour\npart");
        state.elapsed = Duration::from_millis(1500);
        let lines: Vec<String> = screen(&state, 40, 6)
            .into_iter()
            .map(|line| line.trim_end().to_owned())
            .collect();
        assert_eq!(
            lines,
            [
                "┌ $ cargo build",
                "│ warn: x",
                "│ three",
                "│ four",
                "│ part",
                "└ ⠋ 1.5 s · 5 lines · 31 B"
            ]
        );
    }

    #[test]
    fn escapes_and_progress_bars_are_made_safe() {
        assert_eq!(clean("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(clean("\u{1b}]52;c;eA==\u{7}x"), "\\u{1b}]52;c;eA==\\u{7}x");
        assert_eq!(clean("\u{1b}[2Jx\u{200b}"), "\\u{1b}[2Jx\\u{200b}");
        assert_eq!(clean("10%\r50%\r100%"), "100%");
        assert_eq!(clean("a\tb"), "a b");
    }

    #[test]
    fn long_lines_are_cut_not_wrapped_and_memory_is_bounded() {
        let mut state = PaneState::default();
        for _ in 0..1000 {
            state.push(Stream::Stdout, &"x".repeat(2000));
            state.push(Stream::Stdout, "\n");
        }
        assert_eq!(state.lines.len(), KEPT_LINES);
        assert!(
            state
                .lines
                .iter()
                .all(|(_, l)| l.chars().count() <= KEPT_LINE_CHARS)
        );
        assert_eq!(screen(&state, 20, 4)[1], format!("│ {}", "x".repeat(18)));
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(2048), "2.0 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.0 MiB");
    }
}
