//! The one sanitiser for text that reaches a terminal from a model or a
//! command: the model's streamed text and descriptions, command output, the
//! command at the prompt, summary lines, notices and `agent history`.
//!
//! A terminal acts on some characters instead of showing them: escape
//! sequences (CSI, OSC, DCS …) can write the clipboard (OSC 52), set the
//! title, clear the screen or hide text (SGR 8); C1 controls do the same in
//! one character; bidirectional overrides reorder what is read; zero-width
//! characters, variation selectors and tags hide what is there. Which
//! characters are hidden is decided by Unicode property, from the tables of
//! `icu_properties` (the Unicode Consortium's ICU4X), never by a hand list:
//! every Default_Ignorable_Code_Point, every control (Cc), format (Cf),
//! private-use (Co) and unassigned (Cn) character, and the line and paragraph
//! separators (Zl, Zp). Each is written visibly as `\u{…}` (lowercase hex), so
//! an escape sequence becomes inert text such as `\u{1b}]52;c;…\u{7}`.
//! Newline and tab are kept.
//!
//! What a person must still read is kept: letters of every script, combining
//! marks, and emoji. Two joiners are kept only where they join what shows:
//! a zero-width joiner between two pictographs (`👩‍💻`), a text or emoji
//! variation selector right after a pictograph (`❤️`), and — in prose and
//! output, never in a command to approve — a zero-width (non-)joiner between
//! two letters or marks of a non-Latin script (Persian `می‌خواهم`, Devanagari
//! conjuncts). The context is the piece being escaped: at a cut between
//! streamed pieces a joiner is escaped, which shows more, never less.
//!
//! It does not decide what is written where: JSON output and an answer
//! redirected to a file stay byte-exact (the callers decide).

use std::borrow::Cow;
use std::fmt::Write as _;

use icu_properties::props::{
    DefaultIgnorableCodePoint, EmojiModifier, ExtendedPictographic, GeneralCategory,
    GeneralCategoryGroup,
};
use icu_properties::{CodePointMapData, CodePointSetData};

/// General categories a terminal shows nothing (or something else) for: control,
/// format, private-use, unassigned (and surrogates, which no `char` is), line and
/// paragraph separators.
const HIDDEN_CATEGORIES: GeneralCategoryGroup = GeneralCategoryGroup::Other
    .union(GeneralCategoryGroup::LineSeparator)
    .union(GeneralCategoryGroup::ParagraphSeparator);

/// Zero width joiner: joins emoji into one picture, Indic letters into a conjunct.
const ZWJ: char = '\u{200d}';
/// Zero width non-joiner: keeps Persian or Indic letters from joining.
const ZWNJ: char = '\u{200c}';
/// Text and emoji presentation selectors (VS15, VS16).
const PRESENTATION_SELECTORS: [char; 2] = ['\u{fe0e}', '\u{fe0f}'];

fn category(c: char) -> GeneralCategory {
    CodePointMapData::<GeneralCategory>::new().get(c)
}

/// Whether a terminal would act on `c`, or show nothing for it, rather than
/// show it, when it stands alone: see the module's list. Newline and tab are not
/// hidden. (In context, [`escape`] keeps the joiners that join what shows.)
#[must_use]
pub fn is_hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control() && c != '\n' && c != '\t';
    }
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || HIDDEN_CATEGORIES.contains(category(c))
}

fn is_pictograph(c: char) -> bool {
    CodePointSetData::new::<ExtendedPictographic>().contains(c)
}

/// A letter or mark outside ASCII that shows (a script that joins with ZWJ/ZWNJ).
fn is_script_letter(c: char) -> bool {
    !c.is_ascii()
        && !is_hidden(c)
        && GeneralCategoryGroup::Letter
            .union(GeneralCategoryGroup::Mark)
            .contains(category(c))
}

/// Whitespace the shell does not split words on, which looks like a space:
/// `ls\u{a0}-la` is one word although it reads as `ls -la`.
fn is_lookalike_space(c: char) -> bool {
    c.is_whitespace() && !matches!(c, ' ' | '\t' | '\n')
}

/// Where the text goes: a command a person approves is read strictest.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Prose and output.
    Text,
    /// A command at the prompt.
    Command,
}

/// Whether a hidden `c`, between `before` (what was last shown) and `after`, joins what shows.
fn joins_what_shows(
    reading: Reading,
    emoji: bool,
    before: Option<char>,
    c: char,
    after: Option<char>,
) -> bool {
    if PRESENTATION_SELECTORS.contains(&c) {
        return before.is_some_and(is_pictograph);
    }
    if c == ZWJ && emoji && after.is_some_and(is_pictograph) {
        return true;
    }
    reading == Reading::Text
        && (c == ZWJ || c == ZWNJ)
        && before.is_some_and(is_script_letter)
        && after.is_some_and(is_script_letter)
}

fn push_escaped(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
}

fn escape_as(text: &str, reading: Reading) -> Cow<'_, str> {
    let hide = |c: char| is_hidden(c) || (reading == Reading::Command && is_lookalike_space(c));
    let Some(first) = text.find(hide) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut before = text[..first].chars().next_back();
    // Inside an emoji: a pictograph, then its selectors, skin tones and joiners.
    let mut emoji = before.is_some_and(is_pictograph);
    let mut rest = text[first..].chars().peekable();
    while let Some(c) = rest.next() {
        if !hide(c) {
            emoji =
                is_pictograph(c) || (emoji && CodePointSetData::new::<EmojiModifier>().contains(c));
            before = Some(c);
            out.push(c);
        } else if joins_what_shows(reading, emoji, before, c, rest.peek().copied()) {
            // A joiner joins once: a second selector or joiner in a row is escaped.
            before = None;
            out.push(c);
        } else {
            emoji = false;
            before = None;
            push_escaped(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every hidden character (see [`is_hidden`]) written as `\u{…}`;
/// newline and tab kept. Borrows when there is nothing to escape.
#[must_use]
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_as(text, Reading::Text)
}

/// Like [`escape`], for prose (the model's text, notices): a `\r\n` line end
/// reads as a newline instead of showing the carriage return.
#[must_use]
pub fn escape_prose(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(escape(&text.replace("\r\n", "\n")).into_owned())
    } else {
        escape(text)
    }
}

/// Like [`escape`], for a command a person is asked to approve: spaces that
/// are not spaces to the shell (no-break, ideographic …) are escaped too, and
/// joiners only stay inside emoji.
#[must_use]
pub fn escape_command(text: &str) -> Cow<'_, str> {
    escape_as(text, Reading::Command)
}

/// Command output for a terminal: colour and style sequences (SGR, `ESC [ … m`)
/// removed, only what follows a line's last carriage return kept (as a
/// terminal would show a progress bar), every other hidden character escaped.
#[must_use]
pub fn command_output(text: &str) -> String {
    let stripped = strip_sgr(text);
    let mut out = String::with_capacity(stripped.len());
    for (i, line) in stripped.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let shown = line
            .rsplit('\r')
            .find(|part| !part.is_empty())
            .unwrap_or("");
        out.push_str(&escape(shown));
    }
    out
}

/// `text` without SGR sequences (`ESC [` digits, `;` and `:`, then `m`). Other
/// sequences are left for [`escape`] to show.
#[must_use]
pub fn strip_sgr(text: &str) -> Cow<'_, str> {
    if !text.contains("\u{1b}[") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\u{1b}[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let params = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';' || c == ':'))
            .unwrap_or(after.len());
        if after[params..].starts_with('m') {
            rest = &after[params + 1..];
        } else {
            out.push_str("\u{1b}[");
            rest = after;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn osc_52_clipboard_writes_are_inert() {
        assert_eq!(
            escape("hi\u{1b}]52;c;cm0gLXJmIH4=\u{7}there"),
            "hi\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}there"
        );
    }

    #[test]
    fn title_sequences_with_bel_and_st_terminators_are_inert() {
        assert_eq!(escape("\u{1b}]0;pwned\u{7}"), "\\u{1b}]0;pwned\\u{7}");
        assert_eq!(escape("\u{1b}]2;pwned\u{1b}\\"), "\\u{1b}]2;pwned\\u{1b}\\");
        assert_eq!(escape("\u{1b}]2;pwned\u{9c}"), "\\u{1b}]2;pwned\\u{9c}");
    }

    #[test]
    fn clear_screen_and_cursor_moves_are_inert() {
        assert_eq!(escape("\u{1b}[2J\u{1b}[H"), "\\u{1b}[2J\\u{1b}[H");
        assert_eq!(escape("\u{1b}c"), "\\u{1b}c");
        assert_eq!(escape("\u{1b}P1$r\u{1b}\\"), "\\u{1b}P1$r\\u{1b}\\");
    }

    #[test]
    fn hidden_text_sgr_8_is_shown() {
        assert_eq!(
            escape("ls -la\u{1b}[8m; touch pwned\u{1b}[0m"),
            "ls -la\\u{1b}[8m; touch pwned\\u{1b}[0m"
        );
        assert_eq!(
            command_output("ok\u{1b}[8msecret\u{1b}[28m"),
            "oksecret",
            "in output SGR is stripped, so hidden text shows"
        );
    }

    #[test]
    fn c1_controls_are_escaped() {
        assert_eq!(escape("a\u{9b}2Jb"), "a\\u{9b}2Jb");
        assert_eq!(escape("\u{85}\u{7f}\u{0}\r"), "\\u{85}\\u{7f}\\u{0}\\u{d}");
    }

    #[test]
    fn bidi_controls_are_escaped() {
        assert_eq!(escape("echo \u{202e}txt.exe"), "echo \\u{202e}txt.exe");
        assert_eq!(
            escape("a\u{2066}b\u{2069}c\u{200f}"),
            "a\\u{2066}b\\u{2069}c\\u{200f}"
        );
    }

    #[test]
    fn zero_width_characters_are_escaped() {
        assert_eq!(
            escape("r\u{200b}m \u{2060}-rf\u{feff}"),
            "r\\u{200b}m \\u{2060}-rf\\u{feff}"
        );
        assert_eq!(escape("a\u{200c}\u{200d}b"), "a\\u{200c}\\u{200d}b");
        assert_eq!(escape("tag\u{e0041}"), "tag\\u{e0041}");
    }

    #[test]
    fn plain_text_newlines_tabs_and_utf8_are_untouched() {
        let text = "ls -la\n\tgrüße, 日本語, emoji 🦀, “quotes” — dash\n";
        assert!(matches!(escape(text), Cow::Borrowed(_)));
        assert_eq!(escape(text), text);
        assert_eq!(command_output(text), text);
        assert_eq!(escape_command("echo 'grüße 🦀'"), "echo 'grüße 🦀'");
    }

    #[test]
    fn prose_keeps_crlf_as_a_newline() {
        assert_eq!(escape_prose("a\r\nb\rc"), "a\nb\\u{d}c");
    }

    #[test]
    fn commands_show_spaces_the_shell_does_not_split_on() {
        assert_eq!(escape_command("ls\u{a0}-la"), "ls\\u{a0}-la");
        assert_eq!(escape_command("a\u{3000}b\n\tc"), "a\\u{3000}b\n\tc");
        assert_eq!(escape("ls\u{a0}-la"), "ls\u{a0}-la", "prose keeps them");
    }

    #[test]
    fn colour_is_stripped_from_output_and_other_sequences_escaped() {
        assert_eq!(strip_sgr("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(strip_sgr("\u{1b}[1;38;5;208mx\u{1b}[m"), "x");
        assert_eq!(strip_sgr("\u{1b}[38:2::1:2:3mx"), "x");
        assert_eq!(strip_sgr("\u{1b}[2Jx"), "\u{1b}[2Jx");
        assert_eq!(strip_sgr("end\u{1b}["), "end\u{1b}[");
        assert_eq!(
            command_output("\u{1b}[32mok\u{1b}[0m \u{1b}[2J\u{1b}]52;c;eA==\u{7}"),
            "ok \\u{1b}[2J\\u{1b}]52;c;eA==\\u{7}"
        );
    }

    #[test]
    fn output_keeps_what_a_carriage_return_leaves_visible() {
        assert_eq!(command_output("10%\r50%\r100%\nnext\r\n"), "100%\nnext\n");
        assert_eq!(command_output("line\r\n"), "line\n");
    }

    /// Every code point, alone between two ASCII letters: escaped exactly when the crate's
    /// tables, read range by range, say it is default-ignorable or of a hidden category.
    #[test]
    fn every_code_point_is_escaped_exactly_when_its_properties_say() {
        let ignorable = CodePointSetData::new::<DefaultIgnorableCodePoint>();
        let mut expected = vec![false; 0x11_0000];
        for range in ignorable.iter_ranges() {
            for code in range {
                expected[code as usize] = true;
            }
        }
        let categories = CodePointMapData::<GeneralCategory>::new();
        for (name, category) in [
            ("Cc", GeneralCategory::Control),
            ("Cf", GeneralCategory::Format),
            ("Co", GeneralCategory::PrivateUse),
            ("Cn", GeneralCategory::Unassigned),
            ("Zl", GeneralCategory::LineSeparator),
            ("Zp", GeneralCategory::ParagraphSeparator),
        ] {
            let mut count = 0;
            for range in categories.iter_ranges_for_value(category) {
                for code in range {
                    expected[code as usize] = true;
                    count += 1;
                }
            }
            assert!(count > 0, "no {name} code points in the tables");
        }
        expected[usize::from(b'\n')] = false;
        expected[usize::from(b'\t')] = false;
        let mut escaped = 0;
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            let want = expected[c as usize];
            assert_eq!(is_hidden(c), want, "U+{:04X}", u32::from(c));
            escaped += usize::from(want);
            // Whole text for every assigned code point; the unassigned and private-use
            // planes (most of the space, one category each) every 61st.
            let vast = matches!(
                category(c),
                GeneralCategory::Unassigned | GeneralCategory::PrivateUse
            );
            if vast && u32::from(c) % 61 != 0 {
                continue;
            }
            let text = format!("x{c}y");
            for (reading, got) in [("text", escape(&text)), ("command", escape_command(&text))] {
                if want {
                    assert_eq!(got, format!("x\\u{{{:x}}}y", u32::from(c)), "{reading}");
                } else if reading == "text" || !is_lookalike_space(c) {
                    assert_eq!(got, text, "{reading} U+{:04X}", u32::from(c));
                }
            }
        }
        // Unassigned and private use alone are over 900,000 code points.
        assert!(escaped > 900_000, "{escaped}");
    }

    /// The same, against a second, independent set of tables (regex-syntax's, generated
    /// from the UCD by ucd-generate). They may be of an older Unicode version: a code point
    /// unassigned there may be assigned here; nothing else may differ.
    #[test]
    fn every_code_point_agrees_with_a_second_set_of_tables() {
        let hidden = regex::Regex::new(
            r"^[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]$",
        )
        .unwrap();
        let unassigned = regex::Regex::new(r"^\p{Cn}$").unwrap();
        let mut newly_assigned = 0;
        let mut buffer = [0; 4];
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            if c == '\n' || c == '\t' {
                continue;
            }
            let text = c.encode_utf8(&mut buffer);
            let theirs = hidden.is_match(text);
            if theirs == is_hidden(c) {
                continue;
            }
            assert!(
                unassigned.is_match(text) && category(c) != GeneralCategory::Unassigned,
                "U+{:04X}: ours {}, theirs {theirs}",
                u32::from(c),
                is_hidden(c)
            );
            newly_assigned += 1;
        }
        assert!(newly_assigned < 20_000, "{newly_assigned}");
    }

    #[test]
    fn ranges_a_hand_list_missed_are_escaped() {
        for range in [
            0xfe00..=0xfe0f,   // variation selectors
            0xe0100..=0xe01ef, // variation selectors supplement
            0x1d173..=0x1d17a, // musical symbol format controls
            0x1bca0..=0x1bca3, // shorthand format controls
            0x13430..=0x1343f, // egyptian hieroglyph format controls
            0x180b..=0x180f,   // mongolian selectors
        ] {
            for code in range {
                let c = char::from_u32(code).unwrap();
                let want = format!("ls\\u{{{code:x}}} -la");
                assert_eq!(escape(&format!("ls{c} -la")), want);
                assert_eq!(escape_command(&format!("ls{c} -la")), want);
            }
        }
    }

    #[test]
    fn text_people_read_is_kept() {
        for text in [
            "café, naïve, Ångström, Tiếng Việt, e\u{301}, a\u{308}\u{323}", // accents, combining marks
            "日本語のテキスト, 中文, 한국어",                               // CJK, Hangul
            "नमस्ते, שָׁלוֹם, مرحبا, ไทย", // Indic, Hebrew points, Arabic, Thai
            "👩\u{200d}💻 👨\u{200d}👩\u{200d}👧\u{200d}👦 ❤\u{fe0f} ☺\u{fe0e}", // ZWJ sequences, presentation
            "🏳\u{fe0f}\u{200d}🌈 ❤\u{fe0f}\u{200d}🔥 👍🏽 👩🏽\u{200d}🚀 🇫🇷", // flags, skin tones
        ] {
            assert_eq!(escape(text), text);
            assert_eq!(escape_command(text), text);
            assert_eq!(command_output(text), text);
        }
    }

    #[test]
    fn joiners_between_letters_are_kept_in_prose_and_shown_in_commands() {
        let persian = "می\u{200c}خواهم";
        let devanagari = "क्\u{200d}ष";
        assert_eq!(escape(persian), persian);
        assert_eq!(escape(devanagari), devanagari);
        assert_eq!(escape_command(persian), "می\\u{200c}خواهم");
        assert_eq!(escape_command(devanagari), "क्\\u{200d}ष");
    }

    #[test]
    fn joiners_that_join_nothing_shown_are_escaped() {
        for (text, want) in [
            ("r\u{200d}m -rf", "r\\u{200d}m -rf"), // between ASCII letters
            ("ls\u{fe0f}", "ls\\u{fe0f}"),         // selector after a letter
            ("❤\u{fe0f}\u{fe0f}", "❤\u{fe0f}\\u{fe0f}"), // a second selector
            ("👩\u{200d}", "👩\\u{200d}"),         // a joiner at the end
            ("👩\u{200d}x", "👩\\u{200d}x"),       // a joiner before a letter
            ("👩\u{200d}\u{200d}💻", "👩\\u{200d}\\u{200d}💻"), // two in a row
            ("x\u{200d}💻", "x\\u{200d}💻"),       // a joiner after a letter
            ("\u{fe0f}", "\\u{fe0f}"),             // at the start of a piece
            (
                "🏴\u{e0067}\u{e0062}\u{e007f}",
                "🏴\\u{e0067}\\u{e0062}\\u{e007f}",
            ), // tags carry ASCII
            ("日\u{200c}本", "日\u{200c}本"),      // letters: kept in prose
        ] {
            assert_eq!(escape(text), want, "{text:?}");
        }
        assert_eq!(escape_command("日\u{200c}本"), "日\\u{200c}本");
        assert_eq!(escape_command("é\u{200d}é"), "é\\u{200d}é");
    }

    proptest::proptest! {
        /// Whatever the input, the only hidden characters left are joiners and selectors
        /// beside what they join; in a command, only inside emoji.
        #[test]
        fn no_hidden_character_survives_but_a_joiner_in_place(
            text in "(\\PC|\\p{Cf}|\\p{Cc}|[\u{200c}\u{200d}\u{fe0f}\u{fe0e}👩💻❤a日é ])*"
        ) {
            for (command, out) in [(false, escape(&text)), (true, escape_command(&text))] {
                let chars: Vec<char> = out.chars().collect();
                for (at, &c) in chars.iter().enumerate() {
                    if !is_hidden(c) {
                        proptest::prop_assert!(!command || !is_lookalike_space(c), "{out:?}");
                        continue;
                    }
                    let before = at.checked_sub(1).map(|i| chars[i]);
                    let after = chars.get(at + 1).copied();
                    let emoji_join = (PRESENTATION_SELECTORS.contains(&c) && before.is_some_and(is_pictograph))
                        || (c == ZWJ && after.is_some_and(is_pictograph));
                    let letter_join = !command
                        && (c == ZWJ || c == ZWNJ)
                        && before.is_some_and(is_script_letter)
                        && after.is_some_and(is_script_letter);
                    proptest::prop_assert!(emoji_join || letter_join, "U+{:04X} in {out:?}", u32::from(c));
                }
            }
        }
    }
}
