//! The one sanitiser for text that reaches a terminal from a model or a
//! command: the model's streamed text and descriptions, command output, the
//! command at the prompt, summary lines, notices and `agent history`.
//!
//! A terminal acts on some characters instead of showing them: escape
//! sequences (CSI, OSC, DCS …) can write the clipboard (OSC 52), set the
//! title, clear the screen or hide text (SGR 8); C1 controls do the same in
//! one character; bidirectional overrides reorder what is read; zero-width
//! characters hide what is there. Every such character is written visibly as
//! `\u{…}` (lowercase hex), so an escape sequence becomes inert text such as
//! `\u{1b}]52;c;…\u{7}`. Newline and tab are kept. Escaping is per character
//! and stateless, so text streamed in pieces is safe whatever the cut.
//!
//! It does not decide what is written where: JSON output and an answer
//! redirected to a file stay byte-exact (the callers decide).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether a terminal would act on `c`, or show nothing for it, rather than
/// show it: control characters (C0, DEL, C1) other than newline and tab,
/// bidirectional controls, zero-width and other invisible format characters.
#[must_use]
pub fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_invisible(c)
}

/// Invisible or reordering characters that are not control characters.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}' // soft hyphen
            | '\u{34f}' // combining grapheme joiner
            | '\u{61c}' // arabic letter mark (bidi)
            | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' // hangul fillers: blank, not spaces
            | '\u{17b4}' | '\u{17b5}' // khmer inherent vowels (invisible)
            | '\u{180b}'..='\u{180f}' // mongolian selectors and vowel separator
            | '\u{200b}'..='\u{200f}' // ZWSP, ZWNJ, ZWJ, LRM, RLM
            | '\u{2028}'..='\u{202e}' // line/paragraph separators, bidi embeddings and overrides
            | '\u{2060}'..='\u{206f}' // word joiner, invisible operators, bidi isolates
            | '\u{feff}' // byte order mark, zero-width no-break space
            | '\u{fff9}'..='\u{fffb}' // interlinear annotation
            | '\u{e0000}'..='\u{e007f}' // tags: invisible look-alikes of ASCII
    )
}

/// Whitespace the shell does not split words on, which looks like a space:
/// `ls\u{a0}-la` is one word although it reads as `ls -la`.
fn is_lookalike_space(c: char) -> bool {
    c.is_whitespace() && !matches!(c, ' ' | '\t' | '\n')
}

fn push_escaped(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
}

fn escape_where(text: &str, hide: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&hide) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hide(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every hidden character (see [`is_hidden`]) written as `\u{…}`;
/// newline and tab kept. Borrows when there is nothing to escape.
#[must_use]
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_where(text, is_hidden)
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
/// are not spaces to the shell (no-break, ideographic …) are escaped too.
#[must_use]
pub fn escape_command(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| is_hidden(c) || is_lookalike_space(c))
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
}
