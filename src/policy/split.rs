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

use super::script::is_reserved;
use super::word::{ByteSet, Word, WordKind};

/// The words `sh` would pass as argv, or `None` when the text is outside the modelled subset.
pub(super) fn split(text: &str) -> Option<Vec<Word>> {
    let mut words = Vec::new();
    read(text, |word, kind| {
        words.push(Word {
            text: word.to_owned(),
            kind,
        });
    })?;
    Some(words)
}

/// Whether `sh` would pass exactly `words` as argv (`Some(false)`: other words), or `None`
/// when the text is outside the modelled subset — `split(text).map(|w| w == words)` without
/// building the words.
pub(super) fn agrees(text: &str, words: &[Word]) -> Option<bool> {
    let mut expected = words.iter();
    let mut same = true;
    read(text, |word, kind| {
        same = same
            && expected
                .next()
                .is_some_and(|w| w.kind == kind && w.text == word);
    })?;
    Some(same && expected.next().is_none())
}

/// Reads the words of `text` in order, handing each (after quote removal) to `each`; `None`
/// when the text is outside the subset (the words handed over before that count for nothing).
/// A word's text is a slice of `text` until quoting changes it; then it is built in one
/// buffer shared by all words.
fn read(text: &str, mut each: impl FnMut(&str, WordKind)) -> Option<()> {
    let bytes = text.as_bytes();
    let mut reader = Reader {
        text,
        bytes,
        at: 0,
        scratch: String::new(),
    };
    let mut first = true;
    loop {
        while matches!(bytes.get(reader.at), Some(b' ' | b'\t')) {
            reader.at += 1;
        }
        match bytes.get(reader.at) {
            None => return Some(()),
            // A `#` starts a comment only where a word would start (POSIX 2.3 rule 9).
            // The comment ends at a newline, after which the shell reads more commands.
            Some(b'#') => return (!bytes[reader.at..].contains(&b'\n')).then_some(()),
            Some(_) => {}
        }
        let start = reader.at;
        let word = reader.word()?;
        let word_text = reader.text_of(start, &word);
        let kind = word.finish(word_text, first)?;
        each(word_text, kind);
        first = false;
    }
}

/// The reading position in a text, with the buffer for words that quote removal changes.
struct Reader<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    scratch: String,
}

impl Reader<'_> {
    /// The text of the word that started at `start`, read up to here.
    fn text_of(&self, start: usize, word: &Pending) -> &str {
        if word.quote {
            &self.scratch
        } else {
            &self.text[start..self.at]
        }
    }

    /// One word, from a character that is not a blank up to the blank or end after it.
    fn word(&mut self) -> Option<Pending> {
        let start = self.at;
        let mut word = Pending::default();
        while let Some(&b) = self.bytes.get(self.at) {
            match b {
                // The common case first: a run of simple characters, which `bare` would only
                // add one by one (unless the word is a lone `~`, whose next character it
                // checks).
                b if simple(b) && !(word.tilde && self.text_of(start, &word) == "~") => {
                    let run = self.bytes[self.at..]
                        .iter()
                        .take_while(|&&b| simple(b))
                        .count();
                    if word.quote {
                        self.scratch.push_str(&self.text[self.at..self.at + run]);
                    }
                    self.at += run;
                    word.after_assign = false;
                }
                b' ' | b'\t' => break,
                b'\\' => {
                    let next = self.text[self.at + 1..].chars().next()?;
                    if is_control(next) {
                        return None;
                    }
                    self.quoting(start, &mut word);
                    word.after_assign = false;
                    self.scratch.push(next);
                    self.at += 1 + next.len_utf8();
                }
                b'\'' => {
                    self.quoting(start, &mut word);
                    // Inside '…' every character is literal: operators and `$` are text
                    // (`rg 'a|b'`, `sed -n '$p'`); newlines and control characters are
                    // still outside the subset.
                    let inner = self.at + 1;
                    let close = inner + self.bytes[inner..].iter().position(|&b| b == b'\'')?;
                    if (inner..close).any(|at| control_at(self.bytes, at)) {
                        return None;
                    }
                    self.scratch.push_str(&self.text[inner..close]);
                    self.at = close + 1;
                }
                b'"' => {
                    self.quoting(start, &mut word);
                    self.double_quoted()?;
                }
                // Operators, expansions and parentheses are not modelled outside quotes.
                b'(' | b')' | b';' | b'|' | b'&' | b'<' | b'>' | b'$' | b'`' => return None,
                _ if control_at(self.bytes, self.at) => return None,
                _ => self.bare(start, &mut word)?,
            }
        }
        Some(word)
    }

    /// Quoting starts (`\\`, `'`, `"`): the text so far moves to the buffer, and the unquoted
    /// prefix of the word ends here.
    fn quoting(&mut self, start: usize, word: &mut Pending) {
        if !word.quote {
            self.scratch.clear();
            self.scratch.push_str(&self.text[start..self.at]);
            word.bare_end = Some(self.scratch.len());
        }
        word.quote = true;
    }

    /// A `"…"` string from its opening quote: a backslash inside quotes only `$ \` " \` and
    /// newline. Operators, `#` and glob characters are text inside "…" (`rg "a|b"`, `grep
    /// "<<<"`); expansions, newlines and control characters stay outside the subset.
    fn double_quoted(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            let from = self.at;
            while self.bytes.get(self.at).is_some_and(|&b| {
                !matches!(b, b'"' | b'\\' | b'$' | b'`') && !control_at(self.bytes, self.at)
            }) {
                self.at += 1;
            }
            self.scratch.push_str(&self.text[from..self.at]);
            match self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => match self.bytes.get(self.at + 1)? {
                    &next @ (b'"' | b'\\') => {
                        self.scratch.push(char::from(next));
                        self.at += 2;
                    }
                    b'$' | b'`' | b'\n' => return None,
                    _ => {
                        self.scratch.push('\\');
                        self.at += 1;
                    }
                },
                // `$`, a backtick, a newline or another control character.
                _ => return None,
            }
        }
    }

    /// An unquoted character inside a word, then the run of simple characters after it;
    /// `None` for a tilde form this module does not model.
    fn bare(&mut self, start: usize, word: &mut Pending) -> Option<()> {
        let c = self.text[self.at..].chars().next()?;
        let so_far = self.text_of(start, word);
        if c == '~' && ((so_far.is_empty() && !word.quote) || word.after_assign) {
            // `~` and `~/…` expand to $HOME, which the policy accepts as written; `~user`
            // and bash's `a=~` do not keep their text.
            if !so_far.is_empty() {
                return None;
            }
            word.tilde = true;
        } else if word.tilde && so_far == "~" && c != '/' {
            return None;
        }
        match c {
            '*' | '?' | '[' => word.glob = true,
            '{' => word.brace_open = true,
            '}' => word.brace_close = true,
            _ => {}
        }
        word.after_assign = matches!(c, '=' | ':');
        if word.quote {
            self.scratch.push(c);
        }
        self.at += c.len_utf8();
        // The run of simple characters after it, at once: for each, the above would only
        // add it (unless the word is a lone `~`, whose next character it checks).
        if !(word.tilde && self.text_of(start, word) == "~") {
            let run = self.bytes[self.at..]
                .iter()
                .take_while(|&&b| simple(b))
                .count();
            if run > 0 {
                if word.quote {
                    self.scratch.push_str(&self.text[self.at..self.at + run]);
                }
                self.at += run;
                word.after_assign = false;
            }
        }
        Some(())
    }
}

/// A character that [`Reader::bare`] only adds to a word: no tilde, glob, brace,
/// assignment sign, quoting, blank, comment or operator character (ASCII only).
fn simple(b: u8) -> bool {
    const SIMPLE: ByteSet = ByteSet::new(true, b"_./,@%+-");
    SIMPLE.contains(b)
}

/// A control character other than tab (newline included): outside the subset anywhere.
fn is_control(c: char) -> bool {
    c.is_control() && c != '\t'
}

/// Whether the character starting at byte `at` is one for [`is_control`]: an ASCII control
/// byte, or a C1 control (U+0080–U+009F, encoded `C2 80`–`C2 9F`). Every byte a loop steps
/// on by bytes is either the first byte of a character or a continuation byte, which never
/// looks like one of these.
fn control_at(bytes: &[u8], at: usize) -> bool {
    match bytes[at] {
        b'\t' => false,
        b if b < 0x20 || b == 0x7f => true,
        0xc2 => bytes.get(at + 1).is_some_and(|b| (0x80..=0x9f).contains(b)),
        _ => false,
    }
}

/// A word being read (its text is the reader's: a slice of the input, or the buffer).
#[derive(Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // independent facts about one word
struct Pending {
    /// Some character was quoted (`\x`, `'…'`, `"…"`): the word cannot be a reserved word or
    /// an assignment name, and its glob characters may be literal. Its text is in the
    /// reader's buffer from then on.
    quote: bool,
    /// An unquoted `* ? [` (a glob).
    glob: bool,
    /// An unquoted `{` and `}` (bash brace expansion).
    brace_open: bool,
    brace_close: bool,
    /// Where the unquoted prefix of the word ends in its text: the length of the text at the
    /// first quoted character (to spot `NAME=`).
    bare_end: Option<usize>,
    /// The previous character was an unquoted `=` or `:` (bash expands `~` after them).
    after_assign: bool,
    /// The word starts with an unquoted `~`.
    tilde: bool,
}

impl Pending {
    /// The finished word's kind; `None` for a reserved word or an assignment in program
    /// position.
    fn finish(&self, text: &str, first: bool) -> Option<WordKind> {
        if first {
            if !self.quote && is_reserved(text) {
                return None;
            }
            // By bytes: `=` is ASCII, so the cut is on a character boundary.
            let bare_prefix = &text.as_bytes()[..self.bare_end.unwrap_or(text.len())];
            if let Some(name_end) = bare_prefix.iter().position(|&b| b == b'=')
                && is_name(&text[..name_end])
            {
                return None;
            }
        }
        Some(if self.glob || (self.brace_open && self.brace_close) {
            WordKind::Pattern
        } else {
            WordKind::Literal
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

    /// The reading this module had before it read by bytes and slices: character by
    /// character, each word built in its own `String`. The fast reading must agree with it.
    mod reference {
        use super::super::is_name;
        use crate::policy::script::RESERVED_WORDS;
        use crate::policy::word::{Word, WordKind};

        pub(super) fn split(text: &str) -> Option<Vec<Word>> {
            let mut words = Vec::new();
            let mut chars = text.chars();
            let mut current: Option<Pending> = None;
            while let Some(c) = chars.next() {
                match c {
                    ' ' | '\t' => {
                        if let Some(word) = current.take() {
                            words.push(word.finish(words.is_empty())?);
                        }
                    }
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
                        current.get_or_insert_with(Pending::default).quoted(next);
                    }
                    '\'' => {
                        let word = current.get_or_insert_with(Pending::default);
                        word.quoting();
                        loop {
                            match chars.next()? {
                                '\'' => break,
                                c if c == '\n' || (c.is_control() && c != '\t') => return None,
                                c => word.text.push(c),
                            }
                        }
                    }
                    '"' => {
                        let word = current.get_or_insert_with(Pending::default);
                        word.quoting();
                        loop {
                            match chars.next()? {
                                '"' => break,
                                '\\' => match chars.clone().next()? {
                                    next @ ('"' | '\\') => {
                                        chars.next();
                                        word.text.push(next);
                                    }
                                    '$' | '`' | '\n' => return None,
                                    _ => word.text.push('\\'),
                                },
                                '$' | '`' | '\n' => return None,
                                c if c.is_control() && c != '\t' => return None,
                                c => word.text.push(c),
                            }
                        }
                    }
                    c if unmodelled(c) || matches!(c, '(' | ')') => return None,
                    c => current.get_or_insert_with(Pending::default).bare(c)?,
                }
            }
            if let Some(word) = current.take() {
                words.push(word.finish(words.is_empty())?);
            }
            Some(words)
        }

        fn unmodelled(c: char) -> bool {
            matches!(c, ';' | '|' | '&' | '<' | '>' | '$' | '`' | '\n')
                || (c.is_control() && c != '\t')
        }

        #[derive(Debug, Default)]
        #[allow(clippy::struct_excessive_bools)]
        struct Pending {
            text: String,
            quote: bool,
            glob: bool,
            brace_open: bool,
            brace_close: bool,
            bare_end: Option<usize>,
            after_assign: bool,
            tilde: bool,
        }

        impl Pending {
            fn quoting(&mut self) {
                if !self.quote {
                    self.bare_end = Some(self.text.len());
                }
                self.quote = true;
            }

            fn quoted(&mut self, c: char) {
                self.quoting();
                self.after_assign = false;
                self.text.push(c);
            }

            fn bare(&mut self, c: char) -> Option<()> {
                if c == '~' && ((self.text.is_empty() && !self.quote) || self.after_assign) {
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

            fn finish(self, first: bool) -> Option<Word> {
                if first {
                    if !self.quote && RESERVED_WORDS.contains(&self.text.as_str()) {
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
    }

    use proptest::prelude::*;

    /// Pieces of commands for the comparison with the reference reading: plain runs, every
    /// character the reading treats specially, quotes with and without their ends, non-ASCII
    /// text (a C1 control, a no-break space, multi-byte letters), reserved words, assignments.
    fn pieces() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                "[a-z0-9_./,@%+-]{1,6}",
                prop::sample::select(vec![
                    " ",
                    "\t",
                    "~",
                    "~/",
                    "=",
                    ":",
                    "a=",
                    "x:",
                    "*",
                    "?",
                    "[",
                    "]",
                    "{",
                    "}",
                    "#",
                    "'",
                    "\"",
                    "\\",
                    "\\ ",
                    "\\\t",
                    "\\\n",
                    "'a b'",
                    "\"a\\\"b\"",
                    "\"\\\\\"",
                    "\"a\\x\"",
                    "\"\\$\"",
                    "$",
                    "`",
                    "|",
                    ";",
                    "&",
                    "<",
                    ">",
                    "(",
                    ")",
                    "\n",
                    "\r",
                    "\u{7f}",
                    "\u{85}",
                    "\u{9f}",
                    "\u{a0}",
                    "é",
                    "日",
                    "if",
                    "!",
                    "{",
                    "x=1",
                    "'\u{85}'",
                    "\"\u{a0}\u{85}\"",
                    "\\é",
                    "\\\u{85}",
                    "#x",
                    "\"#\"",
                    "''",
                ])
                .prop_map(str::to_owned),
            ],
            0..12,
        )
        .prop_map(|pieces| pieces.concat())
    }

    proptest::proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// The reading by bytes and slices gives the words (or `None`) that the reading
        /// character by character gives, and `agrees` answers as comparing them would.
        #[test]
        fn reads_as_the_reference_reads(text in pieces(), other in pieces()) {
            let want = reference::split(&text);
            prop_assert_eq!(&split(&text), &want, "{:?}", text);
            if let Some(words) = &want {
                prop_assert_eq!(agrees(&text, words), Some(true), "{:?}", text);
            }
            // Against the words of another text (mostly different, sometimes equal).
            if let Some(words) = reference::split(&other) {
                prop_assert_eq!(
                    agrees(&text, &words),
                    want.as_ref().map(|want| *want == words),
                    "{:?} against {:?}", text, other
                );
            }
        }

        /// `agrees` tells apart word lists that differ in one place only: a word's text, its
        /// kind, a word more or a word less.
        #[test]
        fn agrees_sees_every_difference(text in pieces(), change in 0usize..4, at in 0usize..12) {
            let Some(words) = split(&text) else { return Ok(()) };
            let mut changed = words.clone();
            let at = at % (words.len() + 1);
            match change {
                0 if at < words.len() => changed[at].text.push('x'),
                1 if at < words.len() => {
                    changed[at].kind = match changed[at].kind {
                        WordKind::Literal => WordKind::Pattern,
                        _ => WordKind::Literal,
                    };
                }
                2 if at < words.len() => {
                    changed.remove(at);
                }
                _ => changed.insert(at, Word::literal("x")),
            }
            prop_assert_eq!(agrees(&text, &changed), Some(false), "{:?}", text);
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
