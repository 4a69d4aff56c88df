//! The live pane of a running command: a ratatui inline viewport (never the
//! alternate screen) under the conversation with the command, a spinner, the
//! elapsed time, the last lines of stdout and stderr in arrival order (stderr in
//! red) and line and byte counts. Rows are only as long as their text, and a
//! terminal resize opens a fresh viewport where the old pane was, so it always
//! collapses cleanly into its summary line (the caller's, see [`super::tui`]).
//! Command output passes [`super::sanitize`] on its way in.
//!
//! In a session the viewport has rows for the composer below the pane
//! ([`super::composer::Footer`]): what is typed while the command runs shows at once, and
//! goes when the pane goes.

use std::collections::VecDeque;
use std::io::Write as _;
use std::time::{Duration, Instant};

use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

use super::backend::StderrBackend;
use super::composer::Footer;
use super::sanitize;
use super::summary::one_line;
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

pub(super) struct Pane {
    terminal: Terminal<StderrBackend>,
    pub(super) state: PaneState,
    started: Instant,
    last_draw: Instant,
    area: Rect,
    color: bool,
    /// The terminal's size (columns, rows) the viewport was made for.
    size: (u16, u16),
    /// Rows asked for under the pane (a session's composer), and those the terminal had.
    footer_wanted: u16,
    footer_rows: u16,
    /// What is drawn there.
    footer: Option<Footer>,
}

/// Rows of the pane and of the footer under it on a terminal of `rows` rows: the pane keeps
/// at least 3, the footer gets at most `footer` of what is left.
fn heights(rows: u16, footer: u16) -> (u16, u16) {
    let total = (PANE_ROWS + footer).min(rows.saturating_sub(1)).max(3);
    let footer = footer.min(total - 3);
    (total - footer, footer)
}

/// An inline viewport at the cursor for the pane and `footer` rows under it, on a terminal
/// of `rows` rows; the footer rows it has.
fn viewport(rows: u16, footer: u16) -> Option<(Terminal<StderrBackend>, u16)> {
    let (pane, footer) = heights(rows, footer);
    let mut terminal = Terminal::with_options(
        StderrBackend::new(),
        TerminalOptions {
            viewport: Viewport::Inline(pane + footer),
        },
    )
    .ok()?;
    let _ = terminal.hide_cursor();
    Some((terminal, footer))
}

impl Pane {
    /// A pane for `command` at the cursor, with `footer` rows under it for
    /// [`Self::set_footer`]; `None` when the terminal cannot have one.
    pub(super) fn open(command: String, color: bool, footer: u16) -> Option<Self> {
        let size = crossterm::terminal::size().ok()?;
        let (terminal, footer_rows) = viewport(size.1, footer)?;
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
            footer_wanted: footer,
            footer_rows,
            footer: None,
        })
    }

    /// What the rows under the pane show from the next draw on.
    pub(super) fn set_footer(&mut self, footer: Footer) {
        self.footer = Some(footer);
    }

    /// The rows under the pane.
    pub(super) fn footer_rows(&self) -> u16 {
        self.footer_rows
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
        if let Some((terminal, footer_rows)) = viewport(size.1, self.footer_wanted) {
            self.terminal = terminal;
            self.footer_rows = footer_rows;
            self.area = Rect::default();
        }
        self.size = size;
    }

    /// Whether output should redraw it now (at most every [`REDRAW_EVERY`]).
    pub(super) fn due(&self) -> bool {
        self.last_draw.elapsed() >= REDRAW_EVERY
    }

    /// Clears the pane away, leaving the cursor where it began; returns what it showed.
    pub(super) fn close(mut self) -> PaneState {
        let _ = self.terminal.clear();
        let _ = self.terminal.set_cursor_position(self.area.as_position());
        let _ = self.terminal.show_cursor();
        self.state
    }

    /// Draws the pane (spinner, clock and counts move on).
    pub(super) fn draw(&mut self) {
        self.follow_resize();
        self.state.elapsed = self.started.elapsed();
        self.state.frame = self.state.frame.wrapping_add(1);
        let state = &self.state;
        let color = self.color;
        let footer = self.footer.as_ref();
        let footer_rows = self.footer_rows;
        let mut area = self.area;
        let _ = self.terminal.draw(|frame| {
            area = frame.area();
            let (pane, below) = split(area, footer_rows);
            render(frame, pane, state, color);
            if let Some(footer) = footer {
                footer.draw(below, frame.buffer_mut());
            }
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
        let lines = &mut self.lines;
        let line_count = &mut self.line_count;
        whole_lines(&mut self.partial[stream as usize], text, |line| {
            *line_count += 1;
            lines.push_back((stream, clean(&line)));
            if lines.len() > KEPT_LINES {
                lines.pop_front();
            }
        });
    }
}

/// Splits a chunk of one stream into whole lines: `line` gets each (what `partial` held
/// first), and the unfinished rest is added to `partial` — while it is shorter than
/// [`KEPT_LINE_CHARS`], so memory stays bounded on output without newlines.
pub(super) fn whole_lines(partial: &mut String, text: &str, mut line: impl FnMut(String)) {
    let mut rest = text;
    while let Some(at) = rest.find('\n') {
        let mut whole = std::mem::take(partial);
        whole.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        line(whole);
    }
    if partial.chars().count() < KEPT_LINE_CHARS {
        partial.push_str(rest);
    }
}

/// Makes a line safe to draw (see [`sanitize::command_output`]): colour
/// stripped, other escape sequences shown as text, tabs as spaces, only what
/// follows the last carriage return (progress bars).
pub(super) fn clean(line: &str) -> String {
    sanitize::command_output(line)
        .chars()
        .take(KEPT_LINE_CHARS)
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect()
}

/// The viewport's `area` split into the pane's rows and the `footer` rows under them.
fn split(area: Rect, footer: u16) -> (Rect, Rect) {
    let footer = footer.min(area.height);
    let pane = Rect {
        height: area.height - footer,
        ..area
    };
    let below = Rect {
        y: area.y + pane.height,
        height: footer,
        ..area
    };
    (pane, below)
}

/// Draws the pane in `area` of the frame: the command on top, the last lines under a bar on
/// the left, spinner, time and counts at the bottom. Rows are only as long as their text (no
/// right border, no fill): when the terminal narrows, it re-wraps only what is longer than
/// the new width, so the pane keeps its place and is cleared whole.
pub fn render(frame: &mut Frame<'_>, area: Rect, state: &PaneState, color: bool) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;

    fn screen(state: &PaneState, width: u16, height: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|frame| {
                let area = frame.area();
                render(frame, area, state, false);
            })
            .unwrap();
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
    fn the_pane_keeps_three_rows_and_the_footer_takes_what_is_left() {
        for rows in 0..60 {
            for footer in 0..10 {
                let (pane, below) = heights(rows, footer);
                assert!(pane >= 3, "{rows} {footer}");
                assert!(below <= footer, "{rows} {footer}");
                assert!(
                    pane + below <= rows.saturating_sub(1).max(3),
                    "{rows} {footer}: {pane} + {below}"
                );
                if rows > PANE_ROWS + footer {
                    assert_eq!((pane, below), (PANE_ROWS, footer));
                }
            }
        }
        let (pane, below) = split(Rect::new(0, 5, 80, 16), 4);
        assert_eq!((pane.y, pane.height, below.y, below.height), (5, 12, 17, 4));
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(2048), "2.0 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.0 MiB");
    }
}
