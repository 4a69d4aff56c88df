//! A second, independent reading of a simple command: how POSIX `sh` (dash, bash) splits the
//! subset of shell syntax that an allowed command may contain into argv words. The allow path
//! accepts tree-sitter's words only when this reading gives the same ones, so a quirk of the
//! parser (it skips `\` + blank as whitespace and starts a comment at a `#` glued to a word)
//! can never make the policy allow words other than those the shell runs.
//!
//! Owns only the word splitting of that subset, written from the POSIX rules ("Token
//! Recognition", "Quote Removal"), and checked against real `sh` and `bash` by the
//! differential test in `policy::tests`. Anything outside the subset is `None` (the caller
//! asks): `$`, backticks, operators outside quotes (inside `'…'` and `"…"` they are text),
//! newlines, control characters, parentheses, an unclosed
//! quote, a trailing backslash, an assignment or a reserved word in program position, and
//! tilde forms that expand to something other than `$HOME` (`~user`, bash's `a=~`).

use super::script::RESERVED_WORDS;
use super::word::{Word, WordKind};

#[cfg(test)]
thread_local! {
    /// Tests compare the runs of simple characters taken at once with reading them one by one.
    static CHAR_BY_CHAR: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a run of simple characters is read at once (always, outside tests).
fn runs_at_once() -> bool {
    #[cfg(test)]
    if CHAR_BY_CHAR.get() {
        return false;
    }
    true
}

/// The words `sh` would pass as argv, or `None` when the text is outside the modelled subset.
pub(super) fn split(text: &str) -> Option<Vec<Word>> {
    // Buffers sized once: a word's text is rarely longer than the longest run of non-blank
    // bytes (one with quoted blanks grows), and there are at most as many words as runs.
    let (runs, longest) = text
        .split([' ', '\t'])
        .filter(|run| !run.is_empty())
        .fold((0, 0), |(runs, longest), run| {
            (runs + 1, run.len().max(longest))
        });
    let mut words = Vec::with_capacity(runs);
    let mut chars = text.chars();
    let mut current: Option<Pending> = None;
    let new_word = || Pending {
        text: String::with_capacity(longest),
        ..Pending::default()
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(word) = current.take() {
                    words.push(word.finish(words.is_empty())?);
                }
            }
            // A `#` starts a comment only where a word would start (POSIX 2.3 rule 9).
            // The comment ends at a newline, after which the shell reads more commands.
            '#' if current.is_none() => {
                if chars.any(|c| c == '\n') {
                    return None;
                }
                break;
            }
            '\\' => {
                let next = chars.next()?;
                if next == '\n' || (next.is_control() && next != '\t') {
                    return None;
                }
                current.get_or_insert_with(new_word).quoted(next);
            }
            '\'' => {
                let word = current.get_or_insert_with(new_word);
                word.quoting();
                loop {
                    match chars.next()? {
                        '\'' => break,
                        // Inside '…' every character is literal: operators and `$` are text
                        // (`rg 'a|b'`, `sed -n '$p'`); newlines and control characters are
                        // still outside the subset.
                        c if c == '\n' || (c.is_control() && c != '\t') => return None,
                        c => word.text.push(c),
                    }
                }
            }
            '"' => {
                let word = current.get_or_insert_with(new_word);
                word.quoting();
                loop {
                    match chars.next()? {
                        '"' => break,
                        // Inside "…" a backslash quotes only `$ \` " \` and newline.
                        '\\' => match chars.clone().next()? {
                            next @ ('"' | '\\') => {
                                chars.next();
                                word.text.push(next);
                            }
                            '$' | '`' | '\n' => return None,
                            _ => word.text.push('\\'),
                        },
                        // Operators, `#` and glob characters are text inside "…" (`rg "a|b"`,
                        // `grep "<<<"`); expansions and newlines stay outside the subset.
                        '$' | '`' | '\n' => return None,
                        c if c.is_control() && c != '\t' => return None,
                        c => word.text.push(c),
                    }
                }
            }
            c if unmodelled(c) || matches!(c, '(' | ')') => return None,
            c => {
                let word = current.get_or_insert_with(new_word);
                word.bare(c)?;
                // The run of simple characters after it, at once: for each `bare` would only
                // push it (unless the word is a lone `~`, whose next character it checks).
                if runs_at_once() && !(word.tilde && word.text == "~") {
                    let rest = chars.as_str();
                    let run = rest.bytes().take_while(|&b| simple(b)).count();
                    if run > 0 {
                        word.text.push_str(&rest[..run]);
                        word.after_assign = false;
                        chars = rest[run..].chars();
                    }
                }
            }
        }
    }
    if let Some(word) = current.take() {
        words.push(word.finish(words.is_empty())?);
    }
    Some(words)
}

/// A character that `Pending::bare` only pushes inside a word: no tilde, glob, brace,
/// assignment sign, quoting, blank, comment or operator character (ASCII only).
fn simple(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b',' | b'@' | b'%' | b'+' | b'-')
}

/// Characters this reading does not model anywhere: operators, expansions, newlines and other
/// control characters (tab is a blank).
fn unmodelled(c: char) -> bool {
    matches!(c, ';' | '|' | '&' | '<' | '>' | '$' | '`' | '\n') || (c.is_control() && c != '\t')
}

/// A word being read.
#[derive(Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // independent facts about one word
struct Pending {
    /// The text after quote removal.
    text: String,
    /// Some character was quoted (`\x`, `'…'`, `"…"`): the word cannot be a reserved word or
    /// an assignment name, and its glob characters may be literal.
    quote: bool,
    /// An unquoted `* ? [` (a glob).
    glob: bool,
    /// An unquoted `{` and `}` (bash brace expansion).
    brace_open: bool,
    brace_close: bool,
    /// Where the unquoted prefix of the word ends in `text`: the length of the text at the
    /// first quoted character (to spot `NAME=`).
    bare_end: Option<usize>,
    /// The previous character was an unquoted `=` or `:` (bash expands `~` after them).
    after_assign: bool,
    /// The word starts with an unquoted `~`.
    tilde: bool,
}

impl Pending {
    /// Quoting starts (`\\`, `'`, `"`): the unquoted prefix ends here.
    fn quoting(&mut self) {
        if !self.quote {
            self.bare_end = Some(self.text.len());
        }
        self.quote = true;
    }

    /// A quoted character: literal.
    fn quoted(&mut self, c: char) {
        self.quoting();
        self.after_assign = false;
        self.text.push(c);
    }

    /// An unquoted character inside a word; `None` for a tilde form this module does not model.
    fn bare(&mut self, c: char) -> Option<()> {
        if c == '~' && ((self.text.is_empty() && !self.quote) || self.after_assign) {
            // `~` and `~/…` expand to $HOME, which the policy accepts as written; `~user`
            // and bash's `a=~` do not keep their text.
            if !self.text.is_empty() {
                return None;
            }
            self.tilde = true;
        } else if self.tilde && self.text == "~" && c != '/' {
            return None;
        }
        match c {
            '*' | '?' | '[' => self.glob = true,
            '{' => self.brace_open = true,
            '}' => self.brace_close = true,
            _ => {}
        }
        self.after_assign = matches!(c, '=' | ':');
        self.text.push(c);
        Some(())
    }

    /// The finished word; `None` for a reserved word or an assignment in program position.
    fn finish(self, first: bool) -> Option<Word> {
        if first {
            let unquoted = !self.quote;
            if unquoted && RESERVED_WORDS.contains(&self.text.as_str()) {
                return None;
            }
            let bare_prefix = &self.text[..self.bare_end.unwrap_or(self.text.len())];
            if let Some((name, _)) = bare_prefix.split_once('=')
                && is_name(name)
            {
                return None;
            }
        }
        let kind = if self.glob || (self.brace_open && self.brace_close) {
            WordKind::Pattern
        } else {
            WordKind::Literal
        };
        Some(Word {
            text: self.text,
            kind,
        })
    }
}

/// A shell variable name (`[A-Za-z_][A-Za-z0-9_]*`).
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn texts(text: &str) -> Option<Vec<(String, WordKind)>> {
        split(text).map(|words| words.into_iter().map(|w| (w.text, w.kind)).collect())
    }

    #[test]
    fn words_as_sh_splits_them() {
        use WordKind::{Literal as L, Pattern as P};
        let cases: &[(&str, &[(&str, WordKind)])] = &[
            ("ls -la", &[("ls", L), ("-la", L)]),
            ("ls\t 'a b' \"c d\"", &[("ls", L), ("a b", L), ("c d", L)]),
            ("a x\\ #y", &[("a", L), ("x #y", L)]),
            ("date +%s\\\t#x", &[("date", L), ("+%s\t#x", L)]),
            ("ls ] ]#x", &[("ls", L), ("]", L), ("]#x", L)]),
            ("ls ''#x", &[("ls", L), ("#x", L)]),
            ("ls # comment", &[("ls", L)]),
            ("ls \\\\ #x", &[("ls", L), ("\\", L)]),
            ("echo \"a\\\"b\\\\c\\d\"", &[("echo", L), ("a\"b\\c\\d", L)]),
            ("echo 'a\\'", &[("echo", L), ("a\\", L)]),
            ("ls *.rs '*'", &[("ls", L), ("*.rs", P), ("*", L)]),
            ("ls {a,b} {", &[("ls", L), ("{a,b}", P), ("{", L)]),
            ("ls ~ ~/x", &[("ls", L), ("~", L), ("~/x", L)]),
            ("ls \u{a0}x", &[("ls", L), ("\u{a0}x", L)]),
            ("\\if x", &[("if", L), ("x", L)]),
            ("a\\=b", &[("a=b", L)]),
            ("rg 'a|b;c&d<e>f$g`h'", &[("rg", L), ("a|b;c&d<e>f$g`h", L)]),
            (
                "rg \"a|b;c&d<e>f#(g){h}\"",
                &[("rg", L), ("a|b;c&d<e>f#(g){h}", L)],
            ),
            (
                "grep \"a\\|b\" \"*.pem\" \"[x]?\"",
                &[("grep", L), ("a\\|b", L), ("*.pem", L), ("[x]?", L)],
            ),
        ];
        for (input, want) in cases {
            let want: Vec<(String, WordKind)> =
                want.iter().map(|(t, k)| ((*t).to_owned(), *k)).collect();
            assert_eq!(texts(input), Some(want), "input: {input:?}");
        }
    }

    use proptest::prelude::*;

    proptest::proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Runs of simple characters read at once give the words (or `None`) that reading
        /// every character one by one gives.
        #[test]
        fn runs_read_at_once_split_alike(
            pieces in prop::collection::vec(
                prop_oneof![
                    "[a-z0-9_./,@%+-]{1,6}",
                    prop::sample::select(vec![
                        " ", "\t", "~", "~/", "=", ":", "a=", "x:", "*", "?", "[", "{", "}", "#",
                        "'", "\"", "\\", "\\ ", "'a b'", "\"a\\\"b\"", "$", "|", "(", "\n",
                        "if", "é", "\u{a0}",
                    ])
                    .prop_map(str::to_owned),
                ],
                0..10,
            ),
        ) {
            let text = pieces.concat();
            let at_once = split(&text);
            CHAR_BY_CHAR.set(true);
            let one_by_one = split(&text);
            CHAR_BY_CHAR.set(false);
            prop_assert_eq!(at_once, one_by_one, "{:?}", text);
        }
    }

    #[test]
    fn what_it_does_not_model_is_none() {
        for input in [
            "ls $x",
            "ls `x`",
            "ls; x",
            "ls | x",
            "ls & x",
            "ls > x",
            "ls\nx",
            "ls # a\nx",
            "ls (x)",
            "ls 'x",
            "ls \"x",
            "ls x\\",
            "ls \\\nx",
            "ls \r",
            "x=1 ls",
            "if x",
            "! x",
            "{ x",
            "ls ~root",
            "ls a=~",
            "ls x:~",
            "echo \"$x\"",
            "echo \"\\$\"",
            "echo 'a\nb'",
            "echo \"a\nb\"",
            "echo \"a`b`\"",
        ] {
            assert_eq!(texts(input), None, "input: {input:?}");
        }
    }
}
