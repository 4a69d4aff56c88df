//! How the composer looks: its rows laid out once ([`Footer`]: the queued messages, the
//! status line, the text, a note) and drawn either inline at the cursor with relative moves
//! ([`Composer::render`]) or, while a command's live pane is open, inside the pane's
//! viewport under it ([`Footer::draw`]), so what is typed during a command shows at once.
//! Every row is escaped text: the text area holds only what [`super::Composer`] let in
//! (hidden characters spelled out), queued messages and notes are escaped here.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::Widget as _;
use unicode_width::UnicodeWidthStr as _;

use super::{Composer, GUTTER, MAX_TEXT_ROWS};
use crate::ui::sanitize;

/// The composer laid out in rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footer {
    /// Each row's text (escaped, no wider than the terminal) and whether it is dimmed.
    pub rows: Vec<(String, bool)>,
    /// The insertion point: its row and its terminal column.
    pub cursor: (u16, u16),
    color: bool,
}

impl Footer {
    /// Draws the rows into `area` (those that fit), the insertion point as a reversed cell:
    /// the terminal's own cursor stays with the live pane.
    pub fn draw(&self, area: Rect, buffer: &mut Buffer) {
        let dim = if self.color {
            Style::default().add_modifier(Modifier::DIM)
        } else {
            Style::default()
        };
        for (y, (text, dimmed)) in (0..area.height).zip(&self.rows) {
            let style = if *dimmed { dim } else { Style::default() };
            buffer.set_stringn(area.x, area.y + y, text, usize::from(area.width), style);
        }
        let (row, column) = self.cursor;
        if row < area.height && column < area.width {
            buffer[(area.x + column, area.y + row)]
                .set_style(Style::default().add_modifier(Modifier::REVERSED));
        }
    }
}

/// What [`Composer::render`] writes.
pub(super) struct Frame {
    pub(super) bytes: String,
    pub(super) cursor_row: u16,
}

impl Composer {
    /// The composer in at most `max_rows` rows of `columns`: the text gets the rows it needs
    /// (up to [`MAX_TEXT_ROWS`]) first, then the status and the note; queued messages get
    /// what is left, the last row saying how many more wait when they do not all fit.
    #[must_use]
    pub fn footer(&self, columns: u16, max_rows: u16) -> Footer {
        let width = columns.saturating_sub(GUTTER + 1).max(10);
        let note = u16::from(self.note.is_some());
        let queued = u16::from(!self.queued.is_empty());
        let text_rows = self
            .text_rows(width)
            .min(max_rows.saturating_sub(1 + note + queued))
            .max(1);
        let queued_room = max_rows.saturating_sub(1 + note + text_rows);
        let mut rows: Vec<(String, bool)> = self
            .queued_rows(columns, usize::from(queued_room))
            .into_iter()
            .map(|row| (row, true))
            .collect();
        rows.push((fit(&self.status(), columns), true));
        let area = Rect::new(0, 0, width, text_rows);
        let mut buffer = Buffer::empty(area);
        self.text.render(area, &mut buffer);
        let (scroll_row, _) = self.text.scroll_offset();
        let cursor = self.text.screen_cursor();
        let cursor_text_row = u16::try_from(cursor.row)
            .unwrap_or(0)
            .saturating_sub(scroll_row)
            .min(text_rows.saturating_sub(1));
        let cursor_col = u16::try_from(cursor.col).unwrap_or(0).min(width);
        let first_text_row = u16::try_from(rows.len()).unwrap_or(0);
        for y in 0..text_rows {
            let gutter = if y == 0 { "› " } else { "  " };
            rows.push((format!("{gutter}{}", row_text(&buffer, y, width)), false));
        }
        if let Some(note) = &self.note {
            rows.push((fit(&format!("  {}", sanitize::escape(note)), columns), true));
        }
        Footer {
            rows,
            cursor: (
                first_text_row + cursor_text_row,
                GUTTER + display_column(&buffer, cursor_text_row, cursor_col),
            ),
            color: self.color,
        }
    }

    /// `⏳ queued: …` for each waiting message (its first line, escaped, cut with `…`), in
    /// at most `room` rows.
    fn queued_rows(&self, columns: u16, room: usize) -> Vec<String> {
        let shown = if self.queued.len() > room {
            room.saturating_sub(1)
        } else {
            self.queued.len()
        };
        let mut rows: Vec<String> = self.queued[..shown]
            .iter()
            .map(|message| {
                let first = message.lines().next().unwrap_or_default();
                let more = if message.lines().count() > 1 {
                    " …"
                } else {
                    ""
                };
                fit(
                    &format!("⏳ queued: {}{more}", sanitize::escape(first)),
                    columns,
                )
            })
            .collect();
        if shown < self.queued.len() && room > 0 {
            rows.push(fit(
                &format!("⏳ … and {} more queued", self.queued.len() - shown),
                columns,
            ));
        }
        rows
    }

    /// The bytes that draw the area at the cursor on a terminal `columns` wide, and the row
    /// the cursor is left on.
    pub(super) fn render(&self, columns: u16) -> Frame {
        let footer = self.footer(columns, u16::MAX);
        let (cursor_row, column) = footer.cursor;
        let lines: Vec<String> = footer
            .rows
            .iter()
            .map(|(text, dimmed)| {
                if *dimmed && self.color {
                    format!("\x1b[2m{text}\x1b[0m")
                } else {
                    text.clone()
                }
            })
            .collect();
        let last = u16::try_from(lines.len().saturating_sub(1)).unwrap_or(0);
        let mut bytes = String::from("\r\x1b[J");
        bytes.push_str(&lines.join("\r\n"));
        if last > cursor_row {
            bytes.push_str(&format!("\x1b[{}A", last - cursor_row));
        }
        bytes.push('\r');
        if column > 0 {
            bytes.push_str(&format!("\x1b[{column}C"));
        }
        bytes.push_str("\x1b[?25h");
        Frame { bytes, cursor_row }
    }

    /// Rows the text needs at `width` columns (wrapped), at most [`MAX_TEXT_ROWS`].
    fn text_rows(&self, width: u16) -> u16 {
        let width = usize::from(width.max(1));
        let rows: usize = self
            .text
            .lines()
            .iter()
            .map(|line| line.width().div_ceil(width).max(1))
            .sum();
        u16::try_from(rows)
            .unwrap_or(MAX_TEXT_ROWS)
            .clamp(1, MAX_TEXT_ROWS)
    }

    fn status(&self) -> String {
        if self.busy {
            match &self.activity {
                Some(activity) => format!("{activity} · Enter queues a message"),
                None => {
                    "working · Esc or Ctrl+C stops the turn · Enter queues a message".to_owned()
                }
            }
        } else {
            "Enter sends · Alt+Enter or \\ at the end: new line · ↑ history · /help · Ctrl+D ends"
                .to_owned()
        }
    }
}

/// Row `y` of the rendered text, without trailing blanks.
fn row_text(buffer: &Buffer, y: u16, width: u16) -> String {
    let mut out = String::new();
    let mut x = 0;
    while x < width {
        let symbol = buffer[(x, y)].symbol();
        out.push_str(symbol);
        x += u16::try_from(symbol.width().max(1)).unwrap_or(1);
    }
    out.trim_end().to_owned()
}

/// The terminal column of cell `x` of row `y` (wide characters take two).
fn display_column(buffer: &Buffer, y: u16, x: u16) -> u16 {
    let width = buffer.area.width;
    let mut column = 0;
    let mut cell = 0;
    while cell < x.min(width) {
        let symbol = buffer[(cell, y)].symbol();
        let wide = u16::try_from(symbol.width().max(1)).unwrap_or(1);
        column += wide;
        cell += wide;
    }
    column
}

/// `text` on one row of `columns`, cut with `…`.
pub(super) fn fit(text: &str, columns: u16) -> String {
    let room = usize::from(columns.saturating_sub(1));
    if text.width() <= room {
        return text.to_owned();
    }
    let mut out = String::new();
    for c in text.chars() {
        if out.width() + 2 > room {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn composer() -> Composer {
        Composer::new(Vec::new(), Vec::new(), false)
    }

    #[test]
    fn a_queued_message_is_one_escaped_line_cut_to_the_width() {
        let mut c = composer();
        c.set_busy(true);
        c.set_queued(vec![
            "a\u{1b}]52;c;eA==\u{7}b\nsecond line".into(),
            "x".repeat(300),
        ]);
        let footer = c.footer(40, 20);
        assert_eq!(footer.rows[0].0, "⏳ queued: a\\u{1b}]52;c;eA==\\u{7}b …");
        assert!(footer.rows[1].0.ends_with('…'), "{:?}", footer.rows[1]);
        for (row, _) in &footer.rows {
            assert!(row.width() < 40, "{row:?}");
            assert!(!row.chars().any(sanitize::is_hidden), "{row:?}");
        }
    }

    #[test]
    fn in_few_rows_the_text_comes_first_and_the_queue_is_counted() {
        for max_rows in 2..12 {
            for queued in 0..6 {
                let mut c = composer();
                c.set_busy(true);
                c.set_queued((0..queued).map(|n| format!("message {n}")).collect());
                c.set_text("one\ntwo\nthree");
                let footer = c.footer(60, max_rows);
                let rows = &footer.rows;
                assert!(
                    rows.len() <= usize::from(max_rows.max(2)),
                    "{max_rows} {queued}: {rows:?}"
                );
                assert!(
                    rows.iter().any(|(row, _)| row.starts_with("› ")),
                    "{rows:?}"
                );
                let (cursor_row, _) = footer.cursor;
                assert!(
                    rows[usize::from(cursor_row)].0.contains("three"),
                    "the cursor's row shows: {rows:?}"
                );
                let listed = rows.iter().filter(|(r, _)| r.contains("queued: ")).count();
                let counted = rows
                    .iter()
                    .find_map(|(r, _)| {
                        r.strip_prefix("⏳ … and ")
                            .and_then(|r| r.strip_suffix(" more queued"))
                    })
                    .map_or(0, |n| n.parse::<usize>().unwrap());
                if queued > 0 && max_rows > 2 {
                    assert_eq!(listed + counted, queued, "{max_rows}: {rows:?}");
                }
            }
        }
    }

    #[test]
    fn the_footer_draws_its_rows_and_a_reversed_insertion_point() {
        let mut c = composer();
        c.set_text("hello");
        let footer = c.footer(30, 4);
        let area = Rect::new(0, 2, 30, 4);
        let mut buffer = Buffer::empty(Rect::new(0, 0, 30, 8));
        footer.draw(area, &mut buffer);
        let row = |y: u16| -> String {
            (0..30)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
                .trim_end()
                .to_owned()
        };
        assert!(row(2).starts_with("Enter sends"), "{}", row(2));
        assert_eq!(row(3), "› hello");
        assert!(
            buffer[(7, 3)].modifier.contains(Modifier::REVERSED),
            "the insertion point after `hello`"
        );
        assert_eq!(row(1), "", "nothing above the area");
    }
}
