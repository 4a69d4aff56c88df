//! The model's text as it streams onto a terminal, a delta at a time, wrapped between
//! words at the terminal's width.
//!
//! [`LiveText`] (the live screen) renders each finished line's Markdown
//! ([`super::markdown`]) for good; the open line — the text since the last newline — is
//! drawn as it grows and redrawn in place on every delta (its rows erased, then written
//! again), so a person reads the answer as it is written. An open line taller than
//! [`LIVE_ROWS`] is cut between words and its head kept for good, so the rows redrawn
//! always fit on the screen. [`FlowText`] (`--plain` at a terminal) only appends: words as
//! they complete, a newline where the next word would not fit.
//!
//! Every piece of the model's text passes [`super::sanitize`] before it is written: the open
//! line is sanitised whole on each redraw, so an escape sequence split between two deltas
//! (`ESC` in one, `[31m` in the next) is shown as text, never joined into a sequence.
//! Neither knows where the bytes go: they return what to write ([`show`] writes it on
//! stderr).

use unicode_width::UnicodeWidthChar as _;

use super::markdown::Markdown;
use super::sanitize;

/// Most rows the open line is redrawn over — few enough to stay on any screen (rows
/// scrolled into the scrollback cannot be redrawn), enough for a long paragraph to be
/// rewrapped as it grows.
const LIVE_ROWS: usize = 6;

/// The live screen's streaming text: finished lines rendered, the open line redrawn.
#[derive(Debug, Clone)]
pub struct LiveText {
    markdown: Markdown,
    /// The model's text since its last newline, as it came.
    open: String,
    /// The open line continues a line whose head was kept for good (no block Markdown).
    continued: bool,
    /// Columns of each row of the open line as drawn (empty: nothing drawn).
    drawn: Vec<usize>,
}

impl LiveText {
    /// Text rendered with colour or not.
    #[must_use]
    pub fn new(color: bool) -> Self {
        Self {
            markdown: Markdown::new(color),
            open: String::new(),
            continued: false,
            drawn: Vec::new(),
        }
    }

    /// Whether the open line has text on screen (the cursor is after it).
    #[must_use]
    pub fn is_open(&self) -> bool {
        !self.drawn.is_empty()
    }

    /// Adds a delta; the bytes that show it on a terminal `width` columns wide. The cursor
    /// ends after the open line (or at the start of a line when there is none).
    pub fn push(&mut self, text: &str, width: usize) -> String {
        let width = width.max(1);
        let mut out = self.erase(width);
        self.open.push_str(text);
        while let Some(at) = self.open.find('\n') {
            let line: String = self.open.drain(..=at).collect();
            let line = line.strip_suffix('\n').unwrap_or(&line);
            let shown = self.render(line.strip_suffix('\r').unwrap_or(line), true);
            self.continued = false;
            out.push_str(&wrap(&shown, width).join("\n"));
            out.push('\n');
        }
        if self.open.is_empty() {
            return out;
        }
        let mut rows = wrap(&self.render(&self.open.clone(), false), width);
        if rows.len() > LIVE_ROWS
            && let Some(cut) = head_cut(&self.open)
        {
            let head: String = self.open.drain(..cut).collect();
            let shown = self.render(head.trim_end(), true);
            self.continued = true;
            out.push_str(&wrap(&shown, width).join("\n"));
            out.push('\n');
            self.open = self.open.trim_start().to_owned();
            rows = wrap(&self.render(&self.open.clone(), false), width);
        }
        self.drawn = rows.iter().map(|row| visible_width(row)).collect();
        out.push_str(&rows.join("\n"));
        out
    }

    /// Ends the open line for good (the turn ended, or something else is shown): its rows
    /// redrawn rendered, the cursor left at its end (not on a new line).
    pub fn finish(&mut self, width: usize) -> String {
        if self.open.is_empty() {
            self.drawn.clear();
            return String::new();
        }
        let width = width.max(1);
        let mut out = self.erase(width);
        let line = std::mem::take(&mut self.open);
        let shown = self.render(&line, true);
        self.continued = false;
        out.push_str(&wrap(&shown, width).join("\n"));
        out
    }

    /// The open line's rendering; `commit` moves the Markdown state on (a finished line),
    /// else a copy renders it (a fence opened on the open line is not yet one).
    fn render(&mut self, line: &str, commit: bool) -> String {
        let mut markdown = if commit {
            std::mem::replace(&mut self.markdown, Markdown::new(false))
        } else {
            self.markdown.clone()
        };
        let shown = if self.continued {
            markdown.continuation(line)
        } else {
            markdown.line(line)
        };
        if commit {
            self.markdown = markdown;
        }
        shown
    }

    /// Moves to the open line's first row and erases to the end of the screen. Rows the
    /// terminal rewrapped after a resize are counted at the new width.
    fn erase(&mut self, width: usize) -> String {
        let drawn = std::mem::take(&mut self.drawn);
        if drawn.is_empty() {
            return String::new();
        }
        let rows: usize = drawn.iter().map(|w| w.div_ceil(width).max(1)).sum();
        let up = rows - 1;
        if up == 0 {
            "\r\x1b[J".to_owned()
        } else {
            format!("\x1b[{up}A\r\x1b[J")
        }
    }
}

/// Characters of a long open line left open when its head is kept for good: about a row.
const OPEN_TAIL_CHARS: usize = 40;

/// Where to cut a long open line: after the last blank that leaves [`OPEN_TAIL_CHARS`]
/// open (so the kept head is most of it), or there when there is no blank before (a long
/// word, a blob); `None` when it is too short to cut.
fn head_cut(open: &str) -> Option<usize> {
    let total = open.chars().count();
    let limit = open
        .char_indices()
        .nth(total.saturating_sub(OPEN_TAIL_CHARS))
        .map_or(open.len(), |(at, _)| at);
    open[..limit]
        .rfind(char::is_whitespace)
        .filter(|at| *at > 0)
        .map(|at| at + 1)
        .or(Some(limit))
        .filter(|at| *at > 0)
}

/// `--plain` at a terminal: the model's text appended as it comes, a word at a time,
/// wrapped between words; nothing is redrawn.
#[derive(Debug, Clone, Default)]
pub struct FlowText {
    /// The word being received (not yet written).
    word: String,
    /// Columns written on the current row.
    column: usize,
}

impl FlowText {
    /// Adds a delta; the bytes to write at a terminal `width` columns wide. A word is written
    /// when the blank after it arrives.
    pub fn push(&mut self, text: &str, width: usize) -> String {
        let mut out = String::new();
        for c in text.chars() {
            if c == '\n' {
                if self.word.ends_with('\r') {
                    self.word.pop();
                }
                out.push_str(&self.word_out(width));
                out.push('\n');
                self.column = 0;
            } else if c == ' ' || c == '\t' {
                out.push_str(&self.word_out(width));
                if self.column < width {
                    out.push(' ');
                    self.column += 1;
                }
            } else {
                self.word.push(c);
            }
        }
        out
    }

    /// Writes what is held (the end of the text, or something else is shown).
    pub fn finish(&mut self, width: usize) -> String {
        self.word_out(width)
    }

    /// Whether text is written on the current row (a newline is needed before other output).
    #[must_use]
    pub fn mid_line(&self) -> bool {
        self.column > 0 || !self.word.is_empty()
    }

    /// Forgets the row (the caller ended it).
    pub fn line_ended(&mut self) {
        self.column = 0;
    }

    fn word_out(&mut self, width: usize) -> String {
        if self.word.is_empty() {
            return String::new();
        }
        let word = sanitize::escape_prose(&std::mem::take(&mut self.word)).into_owned();
        let word_width = visible_width(&word);
        let mut out = String::new();
        if self.column > 0 && self.column + word_width > width.max(1) {
            // The blank before it was written: the row ends with it, harmlessly.
            out.push('\n');
            self.column = 0;
        }
        for row in wrap(&word, width) {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
                self.column = 0;
            }
            self.column += visible_width(&row);
            out.push_str(&row);
        }
        out
    }
}

/// Writes `bytes` on stderr at once (nothing when empty).
pub fn show(bytes: &str) {
    use std::io::Write as _;
    if bytes.is_empty() {
        return;
    }
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(bytes.as_bytes());
    let _ = stderr.flush();
}

/// The terminal's width in columns (80 when it cannot be asked).
#[must_use]
pub fn width() -> usize {
    crossterm::terminal::size().map_or(80, |(columns, _)| usize::from(columns))
}

/// Columns `text` takes on screen: SGR sequences (`ESC [ … m`, the only escapes rendered
/// text holds) take none.
#[must_use]
pub fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            width += c.width().unwrap_or(0);
        }
    }
    width
}

/// A rendered line as rows of at most `width` columns, broken at blanks (the blank dropped)
/// and inside a word only when the word alone is wider than a row. SGR sequences are kept
/// and take no room.
#[must_use]
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut row_width = 0;
    for (i, word) in line.split(' ').enumerate() {
        let word_width = visible_width(word);
        if i > 0 {
            if row_width > 0 && row_width + 1 + word_width > width {
                rows.push(std::mem::take(&mut row));
                row_width = 0;
            } else {
                row.push(' ');
                row_width += 1;
            }
        }
        if row_width + word_width <= width {
            row.push_str(word);
            row_width += word_width;
            continue;
        }
        // Wider than a row: broken where each row ends.
        let mut chars = word.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' && chars.peek() == Some(&'[') {
                row.push(c);
                for c in chars.by_ref() {
                    row.push(c);
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
                continue;
            }
            let c_width = c.width().unwrap_or(0);
            if row_width + c_width > width && row_width > 0 {
                rows.push(std::mem::take(&mut row));
                row_width = 0;
            }
            row.push(c);
            row_width += c_width;
        }
    }
    rows.push(row);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// What a terminal `width` wide shows after `bytes` (a tiny emulator: printable text,
    /// `\n`, `\r`, cursor up, erase to the end of the screen; SGR ignored).
    fn screen(bytes: &str, width: usize) -> Vec<String> {
        let mut rows: Vec<Vec<char>> = vec![Vec::new()];
        let (mut row, mut col) = (0usize, 0usize);
        let mut chars = bytes.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\n' => {
                    row += 1;
                    col = 0;
                    if rows.len() <= row {
                        rows.push(Vec::new());
                    }
                }
                '\r' => col = 0,
                '\x1b' => {
                    assert_eq!(chars.next(), Some('['), "{bytes:?}");
                    let mut arg = String::new();
                    let end = loop {
                        let c = chars.next().unwrap();
                        if c.is_ascii_alphabetic() {
                            break c;
                        }
                        arg.push(c);
                    };
                    match end {
                        'A' => row -= arg.parse::<usize>().unwrap(),
                        'J' => {
                            rows[row].truncate(col);
                            rows.truncate(row + 1);
                        }
                        'm' => {}
                        other => panic!("unexpected sequence {other}"),
                    }
                }
                c => {
                    if col == width {
                        row += 1;
                        col = 0;
                        if rows.len() <= row {
                            rows.push(Vec::new());
                        }
                    }
                    let line = &mut rows[row];
                    if line.len() <= col {
                        line.resize(col, ' ');
                        line.push(c);
                    } else {
                        line[col] = c;
                    }
                    col += 1;
                }
            }
        }
        rows.into_iter().map(|r| r.into_iter().collect()).collect()
    }

    fn live(deltas: &[&str], width: usize) -> Vec<String> {
        let mut text = LiveText::new(false);
        let mut bytes = String::new();
        for delta in deltas {
            bytes.push_str(&text.push(delta, width));
        }
        bytes.push_str(&text.finish(width));
        screen(&bytes, width)
    }

    #[test]
    fn the_open_line_shows_as_it_grows_and_wraps_between_words() {
        let mut text = LiveText::new(false);
        let mut bytes = text.push("The answer beg", 20);
        assert_eq!(screen(&bytes, 20), ["The answer beg"]);
        bytes.push_str(&text.push("ins here and goes on", 20));
        assert_eq!(
            screen(&bytes, 20),
            ["The answer begins", "here and goes on"]
        );
        bytes.push_str(&text.push(".\n- item\n", 20));
        assert_eq!(
            screen(&bytes, 20),
            ["The answer begins", "here and goes on.", "• item", ""]
        );
    }

    #[test]
    fn every_split_of_a_text_shows_the_same_screen() {
        let text = "# Plan\nFirst we read the file, then we change one line of it.\n- a **bold** \
                    step\n```\nlet x = 1;\n```\nDone, all of it.";
        let whole = live(&[text], 24);
        for at in text.char_indices().map(|(at, _)| at) {
            assert_eq!(
                live(&[&text[..at], &text[at..]], 24),
                whole,
                "split at {at}"
            );
        }
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(live(&pieces, 24), whole);
        assert!(
            whole.iter().all(|row| row.chars().count() <= 24),
            "{whole:?}"
        );
    }

    #[test]
    fn a_long_open_line_keeps_its_head_and_redraws_only_a_few_rows() {
        let words: Vec<String> = (0..200).map(|n| format!("w{n}")).collect();
        let mut text = LiveText::new(false);
        let mut bytes = String::new();
        for word in &words {
            let piece = text.push(&format!("{word} "), 30);
            if let Some(up) = piece.strip_prefix("\x1b[") {
                let rows: usize = up[..up.find('A').unwrap()].parse().unwrap();
                assert!(rows < LIVE_ROWS, "{rows} rows redrawn");
            }
            bytes.push_str(&piece);
        }
        bytes.push_str(&text.finish(30));
        let shown = screen(&bytes, 30).join(" ");
        let shown: Vec<&str> = shown.split_whitespace().collect();
        assert_eq!(shown, words, "every word once, in order");
    }

    #[test]
    fn a_long_line_without_blanks_is_kept_in_pieces_too() {
        let blob: String = "abcdefghijklmnopqrstuvwxyz"
            .chars()
            .cycle()
            .take(3000)
            .collect();
        let mut text = LiveText::new(false);
        let mut bytes = String::new();
        for piece in blob.as_bytes().chunks(7) {
            let piece = text.push(std::str::from_utf8(piece).unwrap(), 30);
            if let Some(up) = piece.strip_prefix("\x1b[") {
                let rows: usize = up[..up.find('A').unwrap()].parse().unwrap();
                assert!(rows < LIVE_ROWS, "{rows} rows redrawn");
            }
            bytes.push_str(&piece);
        }
        bytes.push_str(&text.finish(30));
        assert_eq!(screen(&bytes, 30).concat(), blob);
    }

    #[test]
    fn an_escape_split_between_deltas_stays_text() {
        for color in [false, true] {
            let mut text = LiveText::new(color);
            let mut bytes = text.push("red \u{1b}", 80);
            bytes.push_str(&text.push("[31mnot red\u{1b}", 80));
            bytes.push_str(&text.push("]52;c;eA==\u{7}\n", 80));
            assert!(!bytes.contains("\u{1b}[31m"), "{bytes:?}");
            assert!(!bytes.contains("\u{1b}]"), "{bytes:?}");
            assert!(bytes.contains("\\u{1b}[31mnot red"), "{bytes:?}");
        }
        let mut flow = FlowText::default();
        let mut bytes = flow.push("red \u{1b}", 80);
        bytes.push_str(&flow.push("[31mnot red", 80));
        bytes.push_str(&flow.finish(80));
        assert_eq!(bytes, "red \\u{1b}[31mnot red");
    }

    #[test]
    fn flowing_text_wraps_between_words_without_redrawing() {
        let mut flow = FlowText::default();
        let mut bytes = String::new();
        for piece in [
            "The ans",
            "wer begins here ",
            "and goes on and on.",
            "\nNext",
        ] {
            bytes.push_str(&flow.push(piece, 16));
        }
        bytes.push_str(&flow.finish(16));
        assert!(!bytes.contains('\u{1b}'), "{bytes:?}");
        let rows: Vec<&str> = bytes.split('\n').map(str::trim_end).collect();
        assert_eq!(
            rows,
            ["The answer", "begins here and", "goes on and on.", "Next"]
        );
    }

    #[test]
    fn wrapping_counts_columns_not_escapes() {
        let bold = "\u{1b}[1mbold\u{1b}[0m";
        assert_eq!(visible_width(bold), 4);
        assert_eq!(
            wrap(&format!("{bold} words here"), 10),
            [format!("{bold} words"), "here".to_owned()]
        );
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), [""]);
    }
}
