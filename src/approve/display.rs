//! How the command is shown at the prompt, so that a person sees every line
//! that will run or is told exactly what is not shown: hidden characters
//! escaped ([`crate::ui::sanitize::escape_command`]), long runs of blank lines
//! and of spaces collapsed with their count (`…(60 blank lines)…`), a line too
//! long for the screen cut in the middle with a count, and a command taller
//! than the terminal shown as head and tail with the number of lines between.
//! Pure text in, lines out; the prompt measures the terminal.

use unicode_width::UnicodeWidthChar as _;

use crate::ui::sanitize;

/// Blank lines in a row shown as they are; a longer run becomes one
/// `…(N blank lines)…` line, so blank lines cannot push code out of view.
const BLANK_RUN_LINES: usize = 2;
/// Spaces or tabs in a row shown as they are — deep indentation stays
/// readable — while a longer run, which could push text out of view, becomes
/// `…(N spaces)…`.
const SPACE_RUN_CHARS: usize = 16;
/// Columns a tab is counted as: the most a terminal moves for one.
const TAB_COLUMNS: usize = 8;
/// Columns before each command line: the prompt's indent and `$ `.
const LEAD_COLUMNS: usize = 4;

/// One displayed line and how many lines of the command it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    text: String,
    stands_for: usize,
}

/// The command as `$ first line` and `  following lines`, fitted in `rows`
/// screen rows (at least 3) of `columns` columns.
#[must_use]
pub fn command_lines(command: &str, columns: usize, rows: usize) -> Vec<String> {
    let rows = rows.max(3);
    let columns = columns.max(LEAD_COLUMNS + 20);
    let line_rows = (rows / 3).max(1);
    let mut lines = collapse(command);
    for line in &mut lines {
        cut_long(&mut line.text, columns, line_rows);
    }
    let shown = fit(lines, columns, rows);
    shown
        .into_iter()
        .enumerate()
        .map(|(i, text)| format!("{}{text}", if i == 0 { "$ " } else { "  " }))
        .collect()
}

/// `3 lines · 42 characters`.
#[must_use]
pub fn size(command: &str) -> String {
    let lines = command.lines().count().max(1);
    let chars = command.chars().count();
    format!(
        "{lines} line{} · {chars} character{}",
        plural(lines),
        plural(chars)
    )
}

/// Columns before each prompt line: its indent.
const INDENT_COLUMNS: usize = 2;

/// `text` in lines that fit `columns` after the prompt's indent, broken between its entries
/// (separated by three spaces: `1. Allow   2. Allow for this run`) and else between words,
/// never inside one — unless a word alone is wider than the line.
#[must_use]
pub fn wrap(text: &str, columns: usize) -> Vec<String> {
    let room = columns.saturating_sub(INDENT_COLUMNS).max(20);
    let mut lines: Vec<String> = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for entry in paragraph.split("   ") {
            if line.is_empty() || width(&line) + 3 + width(entry) <= room {
                if !line.is_empty() {
                    line.push_str("   ");
                }
                line.push_str(entry);
                if width(&line) <= room {
                    continue;
                }
                // One entry wider than the line: break it between words.
                let long = std::mem::take(&mut line);
                let mut words = wrap_words(&long, room);
                line = words.pop().unwrap_or_default();
                lines.extend(words);
            } else {
                lines.push(std::mem::replace(&mut line, entry.to_owned()));
                if width(&line) > room {
                    let mut words = wrap_words(&line, room);
                    line = words.pop().unwrap_or_default();
                    lines.extend(words);
                }
            }
        }
        lines.push(line);
    }
    lines
}

/// `text` broken between words into lines of at most `room` columns; a word wider than
/// that is broken where the line ends.
fn wrap_words(text: &str, room: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && width(&line) + 1 + width(word) > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        for c in word.chars() {
            if width(&line) + char_width(c) > room {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    lines.push(line);
    lines
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Screen rows `text` takes after the lead, wrapped at `columns`.
#[must_use]
pub fn screen_rows(text: &str, columns: usize) -> usize {
    text.split('\n')
        .map(|line| (LEAD_COLUMNS + width(line)).div_ceil(columns.max(1)).max(1))
        .sum()
}

fn char_width(c: char) -> usize {
    if c == '\t' {
        TAB_COLUMNS
    } else {
        c.width().unwrap_or(0)
    }
}

fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// Escaped lines with runs of blank lines and of spaces collapsed.
fn collapse(command: &str) -> Vec<Row> {
    let escaped = sanitize::escape_command(command);
    let mut rows = Vec::new();
    let mut blanks = 0;
    for line in escaped.split('\n') {
        if line.chars().all(|c| c == ' ' || c == '\t') {
            blanks += 1;
            continue;
        }
        push_blanks(&mut rows, blanks);
        blanks = 0;
        rows.push(Row {
            text: collapse_spaces(line),
            stands_for: 1,
        });
    }
    push_blanks(&mut rows, blanks);
    rows
}

fn push_blanks(rows: &mut Vec<Row>, blanks: usize) {
    if blanks > BLANK_RUN_LINES {
        rows.push(Row {
            text: format!("…({blanks} blank lines)…"),
            stands_for: blanks,
        });
    } else {
        rows.extend((0..blanks).map(|_| Row {
            text: String::new(),
            stands_for: 1,
        }));
    }
}

fn collapse_spaces(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut run = String::new();
    let flush = |out: &mut String, run: &mut String| {
        if run.chars().count() > SPACE_RUN_CHARS {
            let n = run.chars().count();
            let what = if run.chars().all(|c| c == ' ') {
                "spaces"
            } else if run.chars().all(|c| c == '\t') {
                "tabs"
            } else {
                "spaces and tabs"
            };
            out.push_str(&format!("…({n} {what})…"));
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in line.chars() {
        if c == ' ' || c == '\t' {
            run.push(c);
        } else {
            flush(&mut out, &mut run);
            out.push(c);
        }
    }
    flush(&mut out, &mut run);
    out
}

/// Cuts the middle out of a line taking more than `max_rows` screen rows.
fn cut_long(text: &mut String, columns: usize, max_rows: usize) {
    if screen_rows(text, columns) <= max_rows {
        return;
    }
    // Room for the kept text: the rows minus the lead and the marker.
    let marker_room = 40;
    let room = (max_rows * columns).saturating_sub(LEAD_COLUMNS + marker_room + 1);
    let head = take_width(text.chars(), room / 2);
    let tail_rev = take_width(text.chars().rev(), room - room / 2);
    let kept = head.chars().count() + tail_rev.chars().count();
    let cut = text.chars().count().saturating_sub(kept);
    let tail: String = tail_rev.chars().rev().collect();
    *text = format!("{head}…({cut} characters not shown)…{tail}");
}

fn take_width(chars: impl Iterator<Item = char>, room: usize) -> String {
    let mut used = 0;
    let mut out = String::new();
    for c in chars {
        used += char_width(c);
        if used > room {
            break;
        }
        out.push(c);
    }
    out
}

/// Everything when it fits in `rows`; otherwise as many lines from the top and
/// the bottom as fit, with a line saying how many are not shown between them.
fn fit(lines: Vec<Row>, columns: usize, rows: usize) -> Vec<String> {
    let height = |row: &Row| screen_rows(&row.text, columns);
    let total: usize = lines.iter().map(height).sum();
    if total <= rows {
        return lines.into_iter().map(|row| row.text).collect();
    }
    let marker_rows = screen_rows(&hidden_marker(usize::MAX), columns);
    let budget = rows.saturating_sub(marker_rows).max(2);
    let (mut head, mut used) = (0, 0);
    while head < lines.len() && used + height(&lines[head]) <= budget / 2 {
        used += height(&lines[head]);
        head += 1;
    }
    let mut tail = lines.len();
    while tail > head && used + height(&lines[tail - 1]) <= budget {
        used += height(&lines[tail - 1]);
        tail -= 1;
    }
    let hidden: usize = lines[head..tail].iter().map(|row| row.stands_for).sum();
    let mut shown: Vec<String> = lines[..head].iter().map(|row| row.text.clone()).collect();
    shown.push(hidden_marker(hidden));
    shown.extend(lines[tail..].iter().map(|row| row.text.clone()));
    shown
}

fn hidden_marker(hidden: usize) -> String {
    format!(
        "… {hidden} more line{} not shown; the full command is in the transcript …",
        plural(hidden)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_short_command_is_shown_whole() {
        assert_eq!(
            command_lines("cd src &&\n  ls", 80, 20),
            ["$ cd src &&", "    ls"]
        );
        assert_eq!(size("cd src &&\n  ls"), "2 lines · 14 characters");
        assert_eq!(size("ls"), "1 line · 2 characters");
    }

    #[test]
    fn runs_of_blank_lines_and_spaces_are_counted() {
        let command = format!("ls{}touch x", "\n".repeat(61));
        assert_eq!(
            command_lines(&command, 80, 20),
            ["$ ls", "  …(60 blank lines)…", "  touch x"]
        );
        assert_eq!(command_lines("a\n\nb", 80, 20), ["$ a", "  ", "  b"]);
        let command = format!("ls{}; touch x", " ".repeat(200));
        assert_eq!(
            command_lines(&command, 80, 20),
            ["$ ls…(200 spaces)…; touch x"]
        );
        assert_eq!(
            command_lines(&format!("a{}b", "\t".repeat(20)), 80, 20),
            ["$ a…(20 tabs)…b"]
        );
        let indented = format!("{}x", " ".repeat(12));
        assert_eq!(command_lines(&indented, 80, 20), [format!("$ {indented}")]);
    }

    #[test]
    fn hidden_characters_are_escaped() {
        assert_eq!(
            command_lines("ls\u{1b}[8m\ntouch x", 80, 20),
            ["$ ls\\u{1b}[8m", "  touch x"]
        );
    }

    #[test]
    fn a_tall_command_shows_head_and_tail_and_counts_the_rest() {
        let command: Vec<String> = (1..=200).map(|i| format!("echo {i}")).collect();
        let shown = command_lines(&command.join("\n"), 120, 11);
        assert_eq!(shown.len(), 11, "{shown:#?}");
        assert_eq!(shown[0], "$ echo 1");
        assert_eq!(shown[4], "  echo 5");
        assert_eq!(
            shown[5],
            "  … 190 more lines not shown; the full command is in the transcript …"
        );
        assert_eq!(shown[6], "  echo 196");
        assert_eq!(shown[10], "  echo 200");
    }

    #[test]
    fn a_very_long_line_is_cut_in_the_middle_with_a_count() {
        let command = format!("echo {}END", "x".repeat(10_000));
        let shown = command_lines(&command, 80, 12);
        assert_eq!(shown.len(), 1);
        assert!(shown[0].starts_with("$ echo xxx"), "{shown:?}");
        assert!(shown[0].ends_with("xxEND"), "{shown:?}");
        assert!(shown[0].contains(" characters not shown)…"), "{shown:?}");
        assert!(screen_rows(&shown[0][2..], 80) <= 4, "{shown:?}");
    }

    #[test]
    fn nothing_is_hidden_without_saying_so() {
        for rows in 3..30 {
            for lines in [1, 5, 29, 30, 31, 100] {
                let command: Vec<String> = (0..lines).map(|i| format!("l{i}")).collect();
                let shown = command_lines(&command.join("\n"), 80, rows);
                let rows_used: usize = shown.iter().map(|l| screen_rows(&l[2..], 80)).sum();
                assert!(
                    rows_used <= rows.max(3),
                    "{rows} rows, {lines} lines: {shown:#?}"
                );
                let told: usize = shown
                    .iter()
                    .filter_map(|l| l.strip_prefix("  … "))
                    .filter_map(|l| l.split(' ').next()?.parse::<usize>().ok())
                    .sum();
                assert_eq!(shown.len() - usize::from(told > 0) + told, lines);
            }
        }
    }

    #[test]
    fn wrap_breaks_between_entries_then_words_never_inside_one() {
        let keys = "1. Allow (Enter)   2. Allow for this run   3. Allow \"npm run build\" in this project   a. Always allow \"npm run build\"";
        assert_eq!(
            wrap(keys, 80),
            [
                "1. Allow (Enter)   2. Allow for this run",
                "3. Allow \"npm run build\" in this project   a. Always allow \"npm run build\"",
            ]
        );
        assert_eq!(wrap("short   one\nnext", 120), ["short   one", "next"]);
        let rule = "always allow \"touch\": adds it to [permissions.commands] allow in ~/.config/agent/settings.toml";
        assert_eq!(
            wrap(rule, 60),
            [
                "always allow \"touch\": adds it to [permissions.commands]",
                "allow in ~/.config/agent/settings.toml",
            ]
        );
        // A word wider than the line is broken where the line ends.
        assert_eq!(wrap(&"x".repeat(50), 32), ["x".repeat(30), "x".repeat(20)]);
    }

    proptest::proptest! {
        /// Every line fits, no word is split unless it alone is too wide, nothing is lost.
        #[test]
        fn wrapped_lines_fit_and_keep_every_word(
            words in proptest::collection::vec("[a-z\"\\[\\]./~]{1,12}", 1..40),
            columns in 24usize..140,
        ) {
            let text = words.join(" ");
            let lines = wrap(&text, columns);
            for line in &lines {
                proptest::prop_assert!(width(line) <= columns - 2, "{line:?}");
            }
            let rejoined: Vec<&str> = lines.iter().flat_map(|line| line.split(' ')).collect();
            proptest::prop_assert_eq!(rejoined, words.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
}
