//! The composer of an interactive session: the input area under the conversation where a
//! person writes the next message. The text editing is `ratatui-textarea`'s (its default
//! keys, plus Ctrl+U as in a shell); this file owns what the keys mean to a session (Enter
//! sends, Alt+Enter, Shift+Enter and a trailing `\` insert a newline, Up/Down on the first
//! and last line walk the history, Tab completes a slash command or an `@path` ([`complete`]),
//! Ctrl+C/Esc interrupt a turn, Ctrl+C twice or Ctrl+D at an empty composer end the session)
//! and how the area is drawn.
//!
//! The area is drawn inline, at the cursor, under what the conversation printed: the
//! widget renders into a ratatui buffer whose rows are written with relative cursor
//! moves only, so the scrollback stays the terminal's own and no cursor position is ever
//! asked of the terminal. [`Composer::hide`] erases it (the cursor back where it began) so
//! the conversation can print, [`Composer::show`] draws it again below. While a command's
//! live pane is open the composer is drawn inside the pane's viewport instead
//! ([`Composer::footer`], see [`draw`]).
//!
//! Text comes in as typed keys and bracketed pastes (a long one collapsed into a
//! placeholder, [`paste`]); a control character (an escape
//! sequence in copied text, a C1 control typed) is kept as its `\u{…}` spelling, so nothing
//! drawn here can act on the terminal. It knows nothing of models, turns or files.

use std::io::Write as _;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use super::sanitize;

mod complete;
mod draw;
mod paste;

pub use complete::Paths;
pub use draw::Footer;
pub use paste::COLLAPSE_LINES;

/// Longest message, in bytes: a large paste is taken up to here and the rest is said to be
/// left out — more than any message a model needs, few enough to keep the editor quick.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;
/// Most rows the text takes on screen; longer text scrolls inside them.
const MAX_TEXT_ROWS: u16 = 10;
/// Columns before the text: `› ` on the first row.
const GUTTER: u16 = 2;

/// What a key meant to the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing for the session (the text or the screen changed, or nothing did).
    None,
    /// Send this message (or queue it during a turn); the composer is empty again.
    Submit(String),
    /// Stop the running turn (Ctrl+C or Esc during a turn).
    Interrupt,
    /// End the session (Ctrl+D, or Ctrl+C twice, at an empty composer).
    Quit,
}

/// Where the area is on screen, for erasing it.
#[derive(Debug, Clone, Copy)]
struct Drawn {
    /// Rows below the area's first row where the cursor was left.
    cursor_row: u16,
}

/// The composer.
pub struct Composer {
    text: TextArea<'static>,
    drawn: Option<Drawn>,
    /// A turn is running: Enter queues, Ctrl+C and Esc interrupt.
    busy: bool,
    /// Messages waiting for the turn to end, shown above the status line.
    queued: Vec<String>,
    /// What the turn is doing (the working line), shown in the status while busy.
    activity: Option<String>,
    /// A one-line note under the text (a hint, a left-out paste), until the next key.
    note: Option<String>,
    /// Ctrl+C was pressed at an empty composer: a second one ends the session.
    quit_armed: bool,
    /// The long pastes behind placeholders in the text.
    pastes: paste::Pastes,
    /// The names that complete what follows an `@` (the session's workspace).
    paths: Option<Paths>,
    /// Earlier messages, oldest first, and where Up/Down are in them (`None`: the draft).
    history: Vec<String>,
    position: Option<usize>,
    draft: String,
    /// Names that Tab completes (`/help` …).
    completions: Vec<String>,
    color: bool,
    /// A prompt has the screen: the area stays hidden (a tick must not draw it over the
    /// question or its echoed answer) until [`Self::come_back`].
    aside: bool,
}

impl Composer {
    /// An empty composer; `history` holds earlier messages, oldest first.
    #[must_use]
    pub fn new(history: Vec<String>, completions: Vec<String>, color: bool) -> Self {
        Self {
            text: empty_area(),
            drawn: None,
            busy: false,
            queued: Vec::new(),
            activity: None,
            note: None,
            quit_armed: false,
            history,
            position: None,
            draft: String::new(),
            completions,
            color,
            aside: false,
            pastes: paste::Pastes::default(),
            paths: None,
        }
    }

    /// Tab after `@…` completes with `paths`.
    pub fn complete_paths_with(&mut self, paths: Paths) {
        self.paths = Some(paths);
    }

    /// Whether a turn is running (changes what Enter, Ctrl+C and Esc do, and the status).
    pub fn set_busy(&mut self, busy: bool) {
        self.busy = busy;
    }

    /// What the turn is doing, for the status line while busy; whether that changed.
    pub fn set_activity(&mut self, activity: Option<String>) -> bool {
        let changed = self.activity != activity;
        self.activity = activity;
        changed
    }

    /// The messages waiting for the turn to end, as shown.
    pub fn set_queued(&mut self, queued: Vec<String>) {
        self.queued = queued;
    }

    /// Messages queued during a turn that was stopped, back for editing: each on its own
    /// lines, oldest first, before what was being written.
    pub fn take_back(&mut self, queued: Vec<String>) {
        if queued.is_empty() {
            return;
        }
        let count = queued.len();
        let mut parts = queued;
        let draft = self.text();
        if !draft.trim().is_empty() {
            parts.push(draft);
        }
        self.set_text(&parts.join("\n"));
        self.queued.clear();
        self.position = None;
        self.note = Some(format!(
            "{count} queued message{} not sent: {} back here to edit",
            if count == 1 { " was" } else { "s were" },
            if count == 1 { "it is" } else { "they are" }
        ));
    }

    /// The composer for the `rows` under a running command's live pane (`None` while a
    /// prompt has the screen).
    #[must_use]
    pub fn under_pane(&self, rows: u16) -> Option<Footer> {
        if self.aside {
            return None;
        }
        let (columns, _) = crossterm::terminal::size().unwrap_or((80, 24));
        Some(self.footer(columns, rows))
    }

    /// A note under the text until the next key.
    pub fn set_note(&mut self, note: impl Into<String>) {
        self.note = Some(note.into());
    }

    /// The text as it stands.
    #[must_use]
    pub fn text(&self) -> String {
        self.text.lines().join("\n")
    }

    /// Whether the composer holds no text.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Adds a sent message to the history Up walks.
    pub fn remember(&mut self, message: &str) {
        if self.history.last().is_none_or(|last| last != message) {
            self.history.push(message.to_owned());
        }
    }

    /// Handles one terminal event; the area is redrawn when it is on screen.
    pub fn handle(&mut self, event: &Event) -> Action {
        let action = match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.key(*key),
            Event::Paste(text) => {
                self.paste(text);
                Action::None
            }
            Event::Resize(..) => {
                // The old rows were written for the old width: erase from where the cursor
                // is now (the terminal carried it along) and draw for the new one.
                if self.drawn.is_some() {
                    self.hide();
                    self.show();
                }
                return Action::None;
            }
            _ => return Action::None,
        };
        if self.drawn.is_some() {
            self.hide();
            self.show();
        }
        action
    }

    fn key(&mut self, key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let armed = std::mem::take(&mut self.quit_armed);
        self.note = None;
        match key.code {
            KeyCode::Char('c') if ctrl => {
                if self.busy {
                    return Action::Interrupt;
                }
                if !self.is_empty() {
                    self.set_text("");
                    self.pastes.clear();
                    return Action::None;
                }
                if armed {
                    return Action::Quit;
                }
                self.quit_armed = true;
                self.note = Some("press Ctrl+C again (or Ctrl+D) to end the session".to_owned());
                Action::None
            }
            KeyCode::Char('d') if ctrl && self.is_empty() => {
                if self.busy {
                    self.note = Some("a turn is running: Esc stops it".to_owned());
                    Action::None
                } else {
                    Action::Quit
                }
            }
            KeyCode::Esc if self.busy => Action::Interrupt,
            KeyCode::Enter if alt || shift => {
                self.text.insert_newline();
                Action::None
            }
            KeyCode::Enter => self.enter(),
            KeyCode::Char('j' | 'm') if ctrl => self.enter(),
            KeyCode::Backspace if !ctrl && !alt => {
                let cursor = self.text.cursor();
                let before: String = self.text.lines()[cursor.0].chars().take(cursor.1).collect();
                let chars = self.pastes.take_ending(&before).unwrap_or(1);
                for _ in 0..chars {
                    self.text.delete_char();
                }
                Action::None
            }
            KeyCode::Char('u') if ctrl => {
                self.text.delete_line_by_head();
                Action::None
            }
            KeyCode::Up if !ctrl && !alt && self.text.cursor().0 == 0 => {
                self.older();
                Action::None
            }
            KeyCode::Down
                if !ctrl && !alt && self.text.cursor().0 + 1 == self.text.lines().len() =>
            {
                self.newer();
                Action::None
            }
            KeyCode::Tab => {
                self.complete();
                Action::None
            }
            KeyCode::Char(c)
                if !ctrl && self.message_bytes() + c.len_utf8() > MAX_MESSAGE_BYTES =>
            {
                self.note = Some(format!(
                    "the message is at its limit ({} KiB): send it or shorten it",
                    MAX_MESSAGE_BYTES / 1024
                ));
                Action::None
            }
            // A control or invisible character typed (a C1 control, a bidi override) is
            // spelled out, as in a paste: nothing drawn or sent hides what it is.
            KeyCode::Char(c) if !ctrl && !alt && sanitize::is_hidden(c) => {
                self.text
                    .insert_str(sanitize::escape(c.encode_utf8(&mut [0; 4])));
                Action::None
            }
            _ => {
                self.text.input(key);
                Action::None
            }
        }
    }

    /// Enter: a trailing `\` before the cursor becomes a newline; otherwise the text is sent.
    fn enter(&mut self) -> Action {
        let cursor = self.text.cursor();
        let (row, col) = (cursor.0, cursor.1);
        let line = &self.text.lines()[row];
        let at_end = col == line.chars().count();
        if at_end && line.ends_with('\\') {
            self.text.delete_char();
            self.text.insert_newline();
            return Action::None;
        }
        let message = self.text();
        if message.trim().is_empty() {
            return Action::None;
        }
        self.set_text("");
        self.position = None;
        self.draft.clear();
        Action::Submit(self.pastes.expand(&message))
    }

    /// Inserts pasted text whole (line ends as newlines, hidden characters spelled out), up
    /// to [`MAX_MESSAGE_BYTES`]; says what was left out. A paste of more than
    /// [`COLLAPSE_LINES`] lines stands as a placeholder (see [`paste`]).
    fn paste(&mut self, text: &str) {
        self.note = None;
        let text = text
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\t', "    ");
        let text = sanitize::escape(&text).into_owned();
        let room = MAX_MESSAGE_BYTES.saturating_sub(self.message_bytes());
        let (kept, left) = if text.len() > room {
            let mut end = room;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            (&text[..end], text.len() - end)
        } else {
            (text.as_str(), 0)
        };
        match self.pastes.collapse(kept.to_owned()) {
            Some(placeholder) => self.text.insert_str(placeholder),
            None => self.text.insert_str(kept),
        };
        if left > 0 {
            self.note = Some(format!(
                "the paste was cut at the message limit ({} KiB): {left} bytes left out",
                MAX_MESSAGE_BYTES / 1024
            ));
        }
    }

    /// Bytes of the message as it would be sent (the pastes behind placeholders counted).
    fn message_bytes(&self) -> usize {
        self.text.text_len_bytes() + self.pastes.bytes()
    }

    /// Up on the first line: the previous message of the history.
    fn older(&mut self) {
        let next = match self.position {
            None if self.history.is_empty() => return,
            None => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(0) => return,
            Some(at) => at - 1,
        };
        self.position = Some(next);
        let text = self.history[next].clone();
        self.set_text(&text);
    }

    /// Down on the last line: the next message of the history, then the draft again.
    fn newer(&mut self) {
        let Some(at) = self.position else {
            return;
        };
        if at + 1 < self.history.len() {
            self.position = Some(at + 1);
            let text = self.history[at + 1].clone();
            self.set_text(&text);
        } else {
            self.position = None;
            let draft = std::mem::take(&mut self.draft);
            self.set_text(&draft);
        }
    }

    fn set_text(&mut self, text: &str) {
        self.text = empty_area();
        self.text.insert_str(text);
        self.text.move_cursor(CursorMove::Bottom);
        self.text.move_cursor(CursorMove::End);
    }

    /// Hides the area and keeps it hidden while a prompt has the screen.
    pub fn step_aside(&mut self) {
        self.hide();
        self.aside = true;
    }

    /// The prompt is answered: [`Self::show`] draws the area again.
    pub fn come_back(&mut self) {
        self.aside = false;
    }

    /// Draws the area at the cursor (which must be at the start of a line) and leaves the
    /// cursor at the text's insertion point; nothing while a prompt has the screen.
    pub fn show(&mut self) {
        if self.aside {
            return;
        }
        let (columns, _) = crossterm::terminal::size().unwrap_or((80, 24));
        let frame = self.render(columns);
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(frame.bytes.as_bytes());
        let _ = stderr.flush();
        self.drawn = Some(Drawn {
            cursor_row: frame.cursor_row,
        });
    }

    /// Erases the area; the cursor is left where the area began.
    pub fn hide(&mut self) {
        let Some(drawn) = self.drawn.take() else {
            return;
        };
        let mut out = String::new();
        if drawn.cursor_row > 0 {
            out.push_str(&format!("\x1b[{}A", drawn.cursor_row));
        }
        out.push_str("\r\x1b[J");
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(out.as_bytes());
        let _ = stderr.flush();
    }

    /// Whether the area is on screen.
    #[must_use]
    pub fn is_shown(&self) -> bool {
        self.drawn.is_some()
    }
}

fn empty_area() -> TextArea<'static> {
    let mut area = TextArea::default();
    area.set_wrap_mode(WrapMode::Glyph);
    area.set_cursor_line_style(ratatui::style::Style::default());
    area.set_cursor_style(ratatui::style::Style::default());
    area.set_placeholder_text("");
    area
}

/// How many bytes the text holds.
trait TextLen {
    fn text_len_bytes(&self) -> usize;
}

impl TextLen for TextArea<'_> {
    fn text_len_bytes(&self) -> usize {
        self.lines()
            .iter()
            .map(|line| line.len() + 1)
            .sum::<usize>()
            - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn key(code: KeyCode) -> Event {
        Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn with(code: KeyCode, modifiers: KeyModifiers) -> Event {
        Event::Key(KeyEvent::new(code, modifiers))
    }

    fn typed(composer: &mut Composer, text: &str) {
        for c in text.chars() {
            composer.handle(&key(KeyCode::Char(c)));
        }
    }

    fn composer() -> Composer {
        Composer::new(
            vec!["first".into(), "second".into()],
            vec!["/help".into(), "/compact".into(), "/clear".into()],
            false,
        )
    }

    #[test]
    fn enter_sends_and_alt_enter_or_a_backslash_make_a_new_line() {
        let mut c = composer();
        typed(&mut c, "one");
        assert_eq!(
            c.handle(&with(KeyCode::Enter, KeyModifiers::ALT)),
            Action::None
        );
        typed(&mut c, "two\\");
        assert_eq!(c.handle(&key(KeyCode::Enter)), Action::None);
        typed(&mut c, "three");
        assert_eq!(
            c.handle(&key(KeyCode::Enter)),
            Action::Submit("one\ntwo\nthree".into())
        );
        assert!(c.is_empty());
        assert_eq!(
            c.handle(&key(KeyCode::Enter)),
            Action::None,
            "nothing to send"
        );
    }

    #[test]
    fn shell_keys_edit_the_line() {
        let mut c = composer();
        typed(&mut c, "hello big world");
        c.handle(&with(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(c.text(), "hello big ");
        c.handle(&with(KeyCode::Char('a'), KeyModifiers::CONTROL));
        typed(&mut c, "> ");
        c.handle(&with(KeyCode::Char('e'), KeyModifiers::CONTROL));
        typed(&mut c, "end");
        assert_eq!(c.text(), "> hello big end");
        c.handle(&with(KeyCode::Char('b'), KeyModifiers::ALT));
        c.handle(&with(KeyCode::Char('k'), KeyModifiers::CONTROL));
        assert_eq!(c.text(), "> hello big ");
        c.handle(&with(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(c.text(), "");
    }

    #[test]
    fn up_and_down_walk_the_history_and_come_back_to_the_draft() {
        let mut c = composer();
        typed(&mut c, "draft");
        c.handle(&key(KeyCode::Up));
        assert_eq!(c.text(), "second");
        c.handle(&key(KeyCode::Up));
        assert_eq!(c.text(), "first");
        c.handle(&key(KeyCode::Up));
        assert_eq!(c.text(), "first");
        c.handle(&key(KeyCode::Down));
        c.handle(&key(KeyCode::Down));
        assert_eq!(c.text(), "draft");
    }

    #[test]
    fn ctrl_c_twice_or_ctrl_d_at_an_empty_composer_quit_and_interrupt_during_a_turn() {
        let mut c = composer();
        let ctrl_c = with(KeyCode::Char('c'), KeyModifiers::CONTROL);
        let ctrl_d = with(KeyCode::Char('d'), KeyModifiers::CONTROL);
        typed(&mut c, "x");
        assert_eq!(c.handle(&ctrl_c), Action::None, "clears the text");
        assert!(c.is_empty());
        assert_eq!(c.handle(&ctrl_c), Action::None, "arms");
        assert_eq!(c.handle(&ctrl_c), Action::Quit);
        assert_eq!(c.handle(&ctrl_d), Action::Quit);
        c.set_busy(true);
        assert_eq!(c.handle(&ctrl_c), Action::Interrupt);
        assert_eq!(c.handle(&key(KeyCode::Esc)), Action::Interrupt);
        assert_eq!(c.handle(&ctrl_d), Action::None, "no quitting mid-turn");
    }

    #[test]
    fn a_paste_is_inserted_whole_escaped_and_cut_at_the_limit() {
        let mut c = composer();
        c.handle(&Event::Paste("line 1\r\nline 2\u{1b}[31m".into()));
        assert_eq!(c.text(), "line 1\nline 2\\u{1b}[31m");
        let mut c = composer();
        c.handle(&Event::Paste("x".repeat(1024 * 1024)));
        assert_eq!(c.text().len(), MAX_MESSAGE_BYTES);
        assert!(c.note.as_deref().is_some_and(|n| n.contains("left out")));
    }

    #[test]
    fn a_long_paste_stands_as_a_placeholder_and_is_sent_whole() {
        let mut c = composer();
        typed(&mut c, "see ");
        let long: String = (0..=COLLAPSE_LINES).map(|n| format!("l{n}\r\n")).collect();
        c.handle(&Event::Paste(long.clone()));
        assert_eq!(
            c.text(),
            format!("see [pasted {} lines]", COLLAPSE_LINES + 1)
        );
        typed(&mut c, " ok");
        assert_eq!(
            c.handle(&key(KeyCode::Enter)),
            Action::Submit(format!("see {} ok", long.replace("\r\n", "\n")))
        );
        // Backspace right after it takes the placeholder whole; a short paste is text.
        c.handle(&Event::Paste(long));
        c.handle(&key(KeyCode::Backspace));
        assert_eq!(c.text(), "");
        c.handle(&Event::Paste("a\nb".into()));
        c.handle(&key(KeyCode::Backspace));
        assert_eq!(c.text(), "a\n");
    }

    #[test]
    fn a_typed_control_character_is_spelled_out() {
        let mut c = composer();
        typed(&mut c, "a\u{9b}b\u{202e}");
        assert_eq!(c.text(), "a\\u{9b}b\\u{202e}");
    }

    #[test]
    fn esc_gives_queued_messages_back_before_the_draft() {
        let mut c = composer();
        c.set_busy(true);
        typed(&mut c, "draft");
        c.set_queued(vec!["one".into(), "two".into()]);
        c.take_back(vec!["one".into(), "two\nlines".into()]);
        assert_eq!(c.text(), "one\ntwo\nlines\ndraft");
        assert!(c.queued.is_empty());
        assert!(
            c.note
                .as_deref()
                .is_some_and(|n| n.contains("2 queued messages"))
        );
        c.take_back(Vec::new());
        assert_eq!(c.text(), "one\ntwo\nlines\ndraft", "nothing to give back");
    }

    #[test]
    fn tab_completes_the_mention_before_the_cursor() {
        let mut c = composer();
        c.complete_paths_with(Box::new(|partial: &str| {
            ["src/main.rs", "src/mod.rs", "src/model/"]
                .iter()
                .filter(|name| name.starts_with(partial))
                .map(|name| (*name).to_owned())
                .collect()
        }));
        typed(&mut c, "see @src/ma");
        c.handle(&key(KeyCode::Tab));
        assert_eq!(c.text(), "see @src/main.rs ");
        typed(&mut c, "and @src/m");
        c.handle(&key(KeyCode::Tab));
        assert_eq!(c.text(), "see @src/main.rs and @src/m");
        assert_eq!(c.note.as_deref(), Some("main.rs  mod.rs  model/"));
        typed(&mut c, "ode");
        c.handle(&key(KeyCode::Tab));
        assert_eq!(
            c.text(),
            "see @src/main.rs and @src/model/",
            "a directory: no space"
        );
        typed(&mut c, " @x");
        c.handle(&key(KeyCode::Tab));
        assert_eq!(
            c.note.as_deref(),
            Some("nothing in the workspace starts with x")
        );
    }

    #[test]
    fn tab_completes_a_slash_command() {
        let mut c = composer();
        typed(&mut c, "/h");
        c.handle(&key(KeyCode::Tab));
        assert_eq!(c.text(), "/help ");
        let mut c = composer();
        typed(&mut c, "/c");
        c.handle(&key(KeyCode::Tab));
        assert_eq!(c.text(), "/c");
        assert_eq!(c.note.as_deref(), Some("/compact  /clear"));
        typed(&mut c, "om");
        c.handle(&key(KeyCode::Tab));
        assert_eq!(c.text(), "/compact ");
    }

    #[test]
    fn the_area_draws_the_status_the_text_and_puts_the_cursor_in_it() {
        let mut c = composer();
        typed(&mut c, "ab\u{4e16}");
        let frame = c.render(40);
        assert_eq!(frame.cursor_row, 1);
        assert!(frame.bytes.contains("› ab\u{4e16}"), "{:?}", frame.bytes);
        // gutter 2 + "ab" 2 + one wide character 2
        assert!(
            frame.bytes.ends_with("\r\x1b[6C\x1b[?25h"),
            "{:?}",
            frame.bytes
        );
        c.set_queued(vec!["next one".into()]);
        c.set_busy(true);
        let frame = c.render(40);
        assert!(
            frame.bytes.contains("queued: next one"),
            "{:?}",
            frame.bytes
        );
        assert_eq!(frame.cursor_row, 2);
    }
}
