//! A one-line editor for the prompt's `e` (edit the command) and `t` (a note for
//! the model): prefilled text, the cursor keys people expect (←/→, Home/End,
//! Ctrl+A/E, Backspace/Delete, Ctrl+U/K/W), Enter to accept, Esc to go back to
//! the question, Ctrl+C to deny and stop. Runs inside the prompt's raw mode and
//! reads keys the same way (cancellable).
//!
//! What is shown is sanitised like the rest of the prompt: a newline is `⏎`, a
//! tab `⇥`, any other hidden character `\u{…}`; the text itself is kept exactly.
//! A line wider than the terminal scrolls sideways with the cursor.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthStr as _;

use super::keys::{Cancel, Next, next_key, stops};
use crate::ui::sanitize;

/// How an edit ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edited {
    /// Enter: the text.
    Done(String),
    /// Esc: back to the question.
    Back,
    /// Ctrl+C or Ctrl+D, or the prompt was cancelled: deny and stop.
    Stop,
    /// The terminal failed.
    Failed,
}

/// The text being edited and where the cursor is (in characters).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    chars: Vec<char>,
    cursor: usize,
    max_chars: usize,
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Edit,
    Accept,
    Back,
    Stop,
}

impl Line {
    /// `initial` with the cursor at its end; at most `max_chars` characters.
    #[must_use]
    pub fn new(initial: &str, max_chars: usize) -> Self {
        let chars: Vec<char> = initial.chars().take(max_chars).collect();
        Self {
            cursor: chars.len(),
            chars,
            max_chars,
        }
    }

    /// The text as typed.
    #[must_use]
    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    fn key(&mut self, key: &KeyEvent) -> Step {
        if key.code == KeyCode::Esc {
            return Step::Back;
        }
        if stops(key) {
            return Step::Stop;
        }
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter => return Step::Accept,
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(self.chars.len()),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.chars.len(),
            KeyCode::Char('a') if control => self.cursor = 0,
            KeyCode::Char('e') if control => self.cursor = self.chars.len(),
            KeyCode::Char('u') if control => {
                self.chars.drain(..self.cursor);
                self.cursor = 0;
            }
            KeyCode::Char('k') if control => self.chars.truncate(self.cursor),
            KeyCode::Char('w') if control => {
                let mut start = self.cursor;
                while start > 0 && self.chars[start - 1] == ' ' {
                    start -= 1;
                }
                while start > 0 && self.chars[start - 1] != ' ' {
                    start -= 1;
                }
                self.chars.drain(start..self.cursor);
                self.cursor = start;
            }
            KeyCode::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.chars.remove(self.cursor);
            }
            KeyCode::Delete if self.cursor < self.chars.len() => {
                self.chars.remove(self.cursor);
            }
            KeyCode::Tab => self.insert('\t'),
            KeyCode::Char(c) if !control => self.insert(c),
            _ => {}
        }
        Step::Edit
    }

    fn insert(&mut self, c: char) {
        if self.chars.len() < self.max_chars {
            self.chars.insert(self.cursor, c);
            self.cursor += 1;
        }
    }

    /// The visible part for `columns` columns, and the cursor's column in it.
    #[must_use]
    pub fn view(&self, columns: usize) -> (String, usize) {
        let cells: Vec<String> = self.chars.iter().map(|c| shown(*c)).collect();
        let width = |cells: &[String]| cells.iter().map(|c| c.width()).sum::<usize>();
        let columns = columns.max(8);
        // Start as late as needed for the cursor to fit, with room for the markers.
        let mut start = 0;
        while start < self.cursor && width(&cells[start..self.cursor]) + 2 > columns {
            start += 1;
        }
        let mut out = String::new();
        let mut used = 0;
        if start > 0 {
            out.push('…');
            used += 1;
        }
        let cursor_column = used + width(&cells[start..self.cursor]);
        for (i, cell) in cells.iter().enumerate().skip(start) {
            if used + cell.width() + usize::from(i + 1 < cells.len()) > columns {
                out.push('…');
                break;
            }
            out.push_str(cell);
            used += cell.width();
        }
        (out, cursor_column)
    }
}

/// One character as the editor shows it.
fn shown(c: char) -> String {
    match c {
        '\n' => "⏎".to_owned(),
        '\t' => "⇥".to_owned(),
        _ => sanitize::escape_command(&c.to_string()).into_owned(),
    }
}

/// Edits `initial` after `label` on the current line of `out` until Enter, Esc or a stop.
pub fn edit(
    label: &str,
    initial: &str,
    max_chars: usize,
    cancel: &Cancel,
    out: &mut impl std::io::Write,
) -> Edited {
    let mut line = Line::new(initial, max_chars);
    let lead = format!("  {label}");
    loop {
        let (columns, _) = crossterm::terminal::size().unwrap_or((80, 24));
        let room = usize::from(columns).saturating_sub(lead.width() + 1);
        let (view, cursor) = line.view(room);
        let column = lead.width() + cursor;
        let _ = write!(out, "\r\u{1b}[2K{lead}{view}\r");
        if column > 0 {
            let _ = write!(out, "\u{1b}[{column}C");
        }
        let _ = out.flush();
        let key = match next_key(cancel, None) {
            Next::Key(key) => key,
            Next::Cancelled => return Edited::Stop,
            Next::TimeUp | Next::Failed => return Edited::Failed,
        };
        match line.key(&key) {
            Step::Edit => {}
            Step::Accept => {
                let _ = write!(out, "\r\n");
                return Edited::Done(line.text());
            }
            Step::Back => return Edited::Back,
            Step::Stop => return Edited::Stop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventKind;
    use pretty_assertions::assert_eq;

    fn press(line: &mut Line, code: KeyCode, modifiers: KeyModifiers) -> Step {
        line.key(&KeyEvent::new_with_kind(
            code,
            modifiers,
            KeyEventKind::Press,
        ))
    }

    fn typed(line: &mut Line, text: &str) {
        for c in text.chars() {
            press(line, KeyCode::Char(c), KeyModifiers::NONE);
        }
    }

    #[test]
    fn keys_edit_the_line() {
        let mut line = Line::new("cargo test", 100);
        typed(&mut line, " --all");
        assert_eq!(line.text(), "cargo test --all");
        press(&mut line, KeyCode::Home, KeyModifiers::NONE);
        press(&mut line, KeyCode::Delete, KeyModifiers::NONE);
        typed(&mut line, "C");
        assert_eq!(line.text(), "Cargo test --all");
        press(&mut line, KeyCode::End, KeyModifiers::NONE);
        press(&mut line, KeyCode::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(line.text(), "Cargo test ");
        press(&mut line, KeyCode::Backspace, KeyModifiers::NONE);
        press(&mut line, KeyCode::Left, KeyModifiers::NONE);
        press(&mut line, KeyCode::Char('k'), KeyModifiers::CONTROL);
        assert_eq!(line.text(), "Cargo tes");
        press(&mut line, KeyCode::Left, KeyModifiers::NONE);
        press(&mut line, KeyCode::Char('u'), KeyModifiers::CONTROL);
        assert_eq!(line.text(), "s");
        assert_eq!(
            press(&mut line, KeyCode::Enter, KeyModifiers::NONE),
            Step::Accept
        );
        assert_eq!(
            press(&mut line, KeyCode::Esc, KeyModifiers::NONE),
            Step::Back
        );
        assert_eq!(
            press(&mut line, KeyCode::Char('c'), KeyModifiers::CONTROL),
            Step::Stop
        );
    }

    #[test]
    fn the_length_is_capped() {
        let mut line = Line::new("abc", 4);
        typed(&mut line, "xyz");
        assert_eq!(line.text(), "abcx");
    }

    #[test]
    fn hidden_characters_are_shown_escaped_and_the_view_follows_the_cursor() {
        let line = Line::new("ls\u{1b}[8m\nx", 100);
        assert_eq!(line.view(80), ("ls\\u{1b}[8m⏎x".to_owned(), 13));
        let long = Line::new(&"x".repeat(100), 200);
        let (view, cursor) = long.view(20);
        assert!(view.starts_with('…'), "{view}");
        assert!(view.width() <= 20 && cursor <= 20, "{view} {cursor}");
        let mut start = long.clone();
        start.cursor = 0;
        let (view, cursor) = start.view(20);
        assert!(view.ends_with('…') && cursor == 0, "{view}");
    }
}
