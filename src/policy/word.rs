//! Words after quote removal: the text a shell would pass as one argv entry, and whether that
//! text is known before the command runs. Owns the quoting rules (backslash, `'…'`, `"…"`,
//! `$'…'`) and program-name normalisation (basename, case, `.exe`); knows nothing of commands,
//! rules or the parser.

use std::borrow::Cow;

use super::OsFamily;

/// How much of a word is known before the command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum WordKind {
    /// Fully known text.
    Literal,
    /// Known text with an unquoted glob or brace pattern (`*.rs`, `{a,b}`): the shell may turn it
    /// into other words, even options.
    Pattern,
    /// Contains an expansion (`$x`, `$(…)`, `%x%` …): unknown until the command runs, and
    /// possibly several words.
    Expansion,
}

/// One argv word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    /// The text after quote removal (best effort for an expansion; never used for matching then).
    pub(super) text: String,
    /// Whether the text is known.
    pub(super) kind: WordKind,
}

impl Word {
    /// A fully known word.
    pub(super) fn literal(text: impl Into<String>) -> Self {
        Word {
            text: text.into(),
            kind: WordKind::Literal,
        }
    }

    /// A word that is unknown until the command runs.
    pub(super) fn expansion() -> Self {
        Word {
            text: String::new(),
            kind: WordKind::Expansion,
        }
    }

    /// Whether the word could be something other than its text (pattern or expansion).
    pub(super) fn is_wild(&self) -> bool {
        self.kind != WordKind::Literal
    }

    /// The text when the word is fully known.
    pub(super) fn known(&self) -> Option<&str> {
        (self.kind == WordKind::Literal).then_some(self.text.as_str())
    }
}

/// Builds one word from the pieces of a shell word (bare text, quoted strings, expansions).
#[derive(Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // four independent facts about one word
pub(super) struct WordBuilder {
    text: String,
    glob: bool,
    brace_open: bool,
    brace_close: bool,
    expansion: bool,
}

impl WordBuilder {
    /// Adds unquoted text: backslash quotes the next character, `\` + newline is a line
    /// continuation, unquoted `* ? [` are globs and `{ }` may be brace expansion.
    pub(super) fn bare(&mut self, raw: &str) {
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') => {}
                    Some(next) => self.text.push(next),
                    None => self.text.push('\\'),
                },
                '*' | '?' | '[' => {
                    self.glob = true;
                    self.text.push(c);
                }
                '{' => {
                    self.brace_open = true;
                    self.text.push(c);
                }
                '}' => {
                    self.brace_close = true;
                    self.text.push(c);
                }
                '$' | '`' => {
                    self.expansion = true;
                    self.text.push(c);
                }
                _ => self.text.push(c),
            }
        }
    }

    /// Adds text that is taken literally (the inside of `'…'`).
    pub(super) fn literal(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Adds the literal part of a `"…"` string: backslash quotes only `$ \` " \` and newline.
    pub(super) fn double_quoted(&mut self, raw: &str) {
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                if c == '$' || c == '`' {
                    self.expansion = true;
                }
                self.text.push(c);
                continue;
            }
            match chars.peek().copied() {
                Some('\n') => {
                    chars.next();
                }
                Some(next @ ('$' | '`' | '"' | '\\')) => {
                    chars.next();
                    self.text.push(next);
                }
                _ => self.text.push('\\'),
            }
        }
    }

    /// Marks the word as containing an unknown part.
    pub(super) fn expansion(&mut self) {
        self.expansion = true;
    }

    /// Marks the word as a pattern (brace sequence `{1..3}` and the like).
    pub(super) fn pattern(&mut self, text: &str) {
        self.glob = true;
        self.text.push_str(text);
    }

    /// The finished word.
    pub(super) fn finish(self) -> Word {
        let kind = if self.expansion {
            WordKind::Expansion
        } else if self.glob || (self.brace_open && self.brace_close) {
            WordKind::Pattern
        } else {
            WordKind::Literal
        };
        Word {
            text: self.text,
            kind,
        }
    }
}

/// Decodes the body of `$'…'` (with the `$'` and `'`), or `None` when it uses an escape this
/// code does not model (`\c`, a NUL, invalid UTF-8): the caller treats that as unknown.
pub(super) fn decode_ansi_c(raw: &str) -> Option<String> {
    let body = raw.strip_prefix("$'")?.strip_suffix('\'')?;
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let Some(e) = chars.next() else {
            out.push(b'\\');
            break;
        };
        let simple = match e {
            'a' => Some(0x07),
            'b' => Some(0x08),
            'e' | 'E' => Some(0x1b),
            'f' => Some(0x0c),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(0x0b),
            '\\' | '\'' | '"' | '?' => u8::try_from(e).ok(),
            _ => None,
        };
        if let Some(byte) = simple {
            out.push(byte);
            continue;
        }
        match e {
            '0'..='7' => {
                let mut value = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(u8::try_from(value & 0xff).ok()?);
            }
            'x' => out.push(u8::try_from(hex_digits(&mut chars, 2)?).ok()?),
            'u' | 'U' => {
                let max = if e == 'u' { 4 } else { 8 };
                let c = char::from_u32(hex_digits(&mut chars, max)?)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            'c' => return None,
            other => {
                out.push(b'\\');
                let mut buf = [0u8; 4];
                out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    if out.contains(&0) {
        return None;
    }
    String::from_utf8(out).ok()
}

/// Reads 1 to `max` hex digits; `None` when there is none.
fn hex_digits(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, max: usize) -> Option<u32> {
    let mut value: u32 = 0;
    let mut count = 0;
    while count < max {
        match chars.peek().and_then(|d| d.to_digit(16)) {
            Some(d) => {
                value = value.checked_mul(16)?.checked_add(d)?;
                chars.next();
                count += 1;
            }
            None => break,
        }
    }
    (count > 0).then_some(value)
}

/// Whether a glob pattern could expand to `text`: `*` and `?` as usual, any `[…]` class as
/// any one character (an over-approximation, which is the strict direction), a plain brace
/// list (`{a,b}`) as each of its words, and any other brace (nested, a sequence `{1..3}`) as
/// possibly anything.
pub(super) fn glob_could_match(pattern: &str, text: &str) -> bool {
    if let Some(open) = pattern.find('{') {
        let Some(close) = pattern[open..].find('}').map(|at| open + at) else {
            return true;
        };
        let inner = &pattern[open + 1..close];
        if !inner.contains(',') || inner.contains(['{', '[']) || inner.contains("..") {
            return true;
        }
        let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
        return inner
            .split(',')
            .any(|choice| glob_could_match(&format!("{head}{choice}{tail}"), text));
    }
    let mut parts: Vec<Option<char>> = Vec::new();
    let mut stars: Vec<bool> = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => {
                if stars.last() != Some(&true) {
                    parts.push(None);
                    stars.push(true);
                }
            }
            '?' => {
                parts.push(None);
                stars.push(false);
            }
            '[' => {
                for inner in chars.by_ref() {
                    if inner == ']' {
                        break;
                    }
                }
                parts.push(None);
                stars.push(false);
            }
            other => {
                parts.push(Some(other));
                stars.push(false);
            }
        }
    }
    let text: Vec<char> = text.chars().collect();
    // Classic two-pointer wildcard match with backtracking to the last star.
    let (mut p, mut t) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < parts.len() && stars[p] {
            backtrack = Some((p, t));
            p += 1;
        } else if p < parts.len() && parts[p].is_none_or(|c| c == text[t]) {
            p += 1;
            t += 1;
        } else if let Some((star, at)) = backtrack {
            p = star + 1;
            t = at + 1;
            backtrack = Some((star, at + 1));
        } else {
            return false;
        }
    }
    while p < parts.len() && stars[p] {
        p += 1;
    }
    p == parts.len()
}

/// Suffixes Windows runs without being written (`rm.exe` is `rm`).
const WINDOWS_EXTENSIONS: [&str; 4] = [".exe", ".com", ".bat", ".cmd"];

/// The program name used for deny and protected matching: the last path component (`/bin/rm`,
/// `./rm`, and on Windows `C:\x\del`), lowercased (macOS and Windows file systems ignore case),
/// without a Windows executable suffix. Borrowed when nothing changes (the common case: the
/// deny search asks for the key of every word).
pub(super) fn program_key(word: &str, os: OsFamily) -> Cow<'_, str> {
    // A byte search: the separators are ASCII, so the cut is on a character boundary.
    let cut = match os {
        OsFamily::Unix => word.bytes().rposition(|b| b == b'/'),
        OsFamily::Windows => word.bytes().rposition(|b| matches!(b, b'/' | b'\\' | b':')),
    };
    let base = cut.map_or(word, |at| &word[at + 1..]);
    let has_extension = |key: &str| {
        // Every suffix is a dot and three letters: most words are ruled out by one byte.
        let bytes = key.as_bytes();
        if bytes.len() < 4 || bytes[bytes.len() - 4] != b'.' {
            return false;
        }
        WINDOWS_EXTENSIONS.iter().any(|e| {
            key.len() >= e.len()
                && key.is_char_boundary(key.len() - e.len())
                && key[key.len() - e.len()..].eq_ignore_ascii_case(e)
        })
    };
    if !base.bytes().any(|b| b.is_ascii_uppercase()) && !has_extension(base) {
        return Cow::Borrowed(base);
    }
    let mut key = base.to_ascii_lowercase();
    if os == OsFamily::Windows || WINDOWS_EXTENSIONS.iter().any(|e| key.ends_with(e)) {
        for ext in WINDOWS_EXTENSIONS {
            if key.len() > ext.len() && key.ends_with(ext) {
                key.truncate(key.len() - ext.len());
                break;
            }
        }
    }
    Cow::Owned(key)
}

/// Whether `text` holds the two ASCII characters `first` and `second` in a row (as
/// `str::contains` of the two-character string, without setting up a substring search).
pub(super) fn has_pair(text: &str, first: u8, second: u8) -> bool {
    text.as_bytes()
        .windows(2)
        .any(|pair| pair[0] == first && pair[1] == second)
}

/// A quoting character [`without_quoting`] removes.
pub(super) fn is_quoting(c: char, os: OsFamily) -> bool {
    match os {
        OsFamily::Unix => matches!(c, '\'' | '"' | '\\'),
        OsFamily::Windows => matches!(c, '"' | '^'),
    }
}

/// Whether `found` holds for a token of `text` (a run of `is_token` characters) or of the
/// text without its quoting characters (as [`without_quoting`] gives it), read in one pass
/// without copying the text: a run of token and quoting characters gives the tokens between
/// its other characters as written and, when it holds a quoting character, the one token it
/// is without them. Stops at the first token found.
pub(super) fn any_token_either_way(
    text: &str,
    os: OsFamily,
    is_token: impl Fn(char) -> bool,
    mut found: impl FnMut(&str) -> bool,
) -> bool {
    let mut unquoted = String::new();
    text.split(|c: char| !(is_token(c) || is_quoting(c, os)))
        .any(|run| {
            if run
                .split(|c: char| !is_token(c))
                .any(|token| !token.is_empty() && found(token))
            {
                return true;
            }
            if !run.contains(|c: char| is_quoting(c, os)) {
                return false;
            }
            unquoted.clear();
            unquoted.extend(run.chars().filter(|&c| !is_quoting(c, os)));
            !unquoted.is_empty() && found(&unquoted)
        })
}

/// [`any_token_either_way`] for tokens of ASCII characters only, read by bytes: `is_token`
/// is asked about ASCII bytes, and every other byte ends a token (no byte of a multi-byte
/// character is ASCII, so the runs, the tokens, their order and the unquoted tokens are the
/// ones the reading by characters gives with the same predicate on ASCII and `false` above).
pub(super) fn any_ascii_token_either_way(
    text: &str,
    os: OsFamily,
    is_token: impl Fn(u8) -> bool,
    mut found: impl FnMut(&str) -> bool,
) -> bool {
    let bytes = text.as_bytes();
    let token = |b: u8| b.is_ascii() && is_token(b);
    let quoting = |b: u8| b.is_ascii() && is_quoting(char::from(b), os);
    let mut unquoted = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if !token(bytes[i]) && !quoting(bytes[i]) {
            i += 1;
            continue;
        }
        // A run of token and quoting characters: its tokens as written, then, when it holds a
        // quoting character, the run without them.
        let start = i;
        let mut quoted = false;
        loop {
            let from = i;
            while i < bytes.len() && token(bytes[i]) {
                // A character may be both (`\` for the raw-text search).
                quoted |= quoting(bytes[i]);
                i += 1;
            }
            // Both ends are at ASCII bytes or the end: character boundaries.
            if i > from && found(&text[from..i]) {
                return true;
            }
            if i < bytes.len() && quoting(bytes[i]) {
                quoted = true;
                i += 1;
            } else {
                break;
            }
        }
        if quoted {
            unquoted.clear();
            unquoted.extend(
                bytes[start..i]
                    .iter()
                    .filter(|&&b| !quoting(b))
                    .map(|&b| char::from(b)),
            );
            if !unquoted.is_empty() && found(&unquoted) {
                return true;
            }
        }
    }
    false
}

/// The text with every quoting character removed (`'`, `"`, `\` for POSIX shells; `"` and
/// `^` for cmd.exe), or `None` when it has none. The raw-text searches read this too, so a
/// program hidden by quotes from a misread parse (`r''m`, `r\m`, `d^el`) is still found.
pub(super) fn without_quoting(text: &str, os: OsFamily) -> Option<String> {
    text.contains(|c: char| is_quoting(c, os)).then(|| {
        let mut unquoted = String::with_capacity(text.len());
        unquoted.extend(text.chars().filter(|&c| !is_quoting(c, os)));
        unquoted
    })
}

/// Whether every character is one that no shell treats specially, so the word means itself
/// and cannot hide a second command.
pub(super) fn is_plain(text: &str) -> bool {
    // By bytes: every allowed character is ASCII, and no byte of a longer one is.
    !text.is_empty() && text.bytes().all(is_plain_byte)
}

/// The bytes of plain words: ASCII letters, digits and these.
const PLAIN: ByteSet = ByteSet::new(true, b"_./:,@%+=-");

/// A byte of a plain word ([`is_plain`]); no byte of a non-ASCII character is one.
pub(super) fn is_plain_byte(b: u8) -> bool {
    PLAIN.contains(b)
}

/// A set of bytes as a table, for the character classes read byte by byte on every command
/// (a lookup instead of a chain of comparisons).
pub(super) struct ByteSet([bool; 256]);

impl ByteSet {
    /// The ASCII letters and digits (when `alphanumeric`) and the bytes of `others`.
    pub(super) const fn new(alphanumeric: bool, others: &[u8]) -> ByteSet {
        let mut table = [false; 256];
        let mut b: u8 = 0;
        loop {
            table[b as usize] = alphanumeric && b.is_ascii_alphanumeric();
            if b == u8::MAX {
                break;
            }
            b += 1;
        }
        let mut i = 0;
        while i < others.len() {
            table[others[i] as usize] = true;
            i += 1;
        }
        ByteSet(table)
    }

    /// Whether `b` is in the set.
    pub(super) fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ansi_c_strings_decode() {
        let cases: &[(&str, Option<&str>)] = &[
            ("$'rm'", Some("rm")),
            ("$'\\x72m'", Some("rm")),
            ("$'\\162\\155'", Some("rm")),
            ("$'\\u0072m'", Some("rm")),
            ("$'\\U00000072m'", Some("rm")),
            ("$'a\\tb'", Some("a\tb")),
            ("$'\\''", Some("'")),
            ("$'\\q'", Some("\\q")),
            ("$'\\cA'", None),
            ("$'\\0'", None),
            ("$'\\xff'", None),
            ("'x'", None),
        ];
        for (raw, want) in cases {
            assert_eq!(decode_ansi_c(raw).as_deref(), *want, "input: {raw}");
        }
    }

    #[test]
    fn bare_and_double_quoted_text() {
        let mut b = WordBuilder::default();
        b.bare("\\r\\m");
        assert_eq!(b.finish(), Word::literal("rm"));
        let mut b = WordBuilder::default();
        b.double_quoted("a\\\"b\\$c\\x");
        assert_eq!(b.finish(), Word::literal("a\"b$c\\x"));
        let mut b = WordBuilder::default();
        b.bare("\\*");
        assert_eq!(
            b.finish().kind,
            WordKind::Literal,
            "escaped glob is literal"
        );
        let mut b = WordBuilder::default();
        b.bare("*.rs");
        assert_eq!(b.finish().kind, WordKind::Pattern);
        let mut b = WordBuilder::default();
        b.bare("{");
        b.bare("a,b");
        b.bare("}");
        assert_eq!(b.finish().kind, WordKind::Pattern);
    }

    #[test]
    fn globs_could_match() {
        let cases: &[(&str, &str, bool)] = &[
            ("*", "push", true),
            ("*.rs", "push", false),
            ("p*", "push", true),
            ("p?sh", "push", true),
            ("p[aeiou]sh", "push", true),
            ("-r*", "-rf", true),
            ("-r?", "-rf", true),
            ("-x*", "-rf", false),
            ("*a*b*", "xaxb", true),
            ("*a*b*", "xbxa", false),
            ("{a,b}", "push", false),
            ("{a,pu}sh", "push", true),
            ("{a,b}{c,d}", "bd", true),
            ("{1..3}", "push", true),
            ("{a,{b,c}}", "push", true),
            ("{a}", "push", true),
            ("pu**", "push", true),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(
                glob_could_match(pattern, text),
                *want,
                "{pattern:?} on {text:?}"
            );
        }
    }

    proptest::proptest! {
        /// A pair of ASCII characters is found as the substring search finds it, in any text
        /// (non-ASCII characters' bytes are never ASCII).
        #[test]
        fn pairs_are_found_as_substrings(
            text in "[=~(&>\\\\\n a\u{e9}\u{3b1}\u{1f600}]{0,12}",
            first in proptest::sample::select(&b"=(&\\\na"[..]),
            second in proptest::sample::select(&b"=~(>\n\\a"[..]),
        ) {
            let pair: String = [char::from(first), char::from(second)].iter().collect();
            proptest::prop_assert_eq!(has_pair(&text, first, second), text.contains(&pair));
        }
    }

    proptest::proptest! {
        /// Read by bytes, the tokens of an ASCII token class are the ones, in the same order,
        /// that the reading by characters gives (as written and without quoting, both
        /// families, multi-byte characters anywhere), and it stops at the same one.
        #[test]
        fn ascii_tokens_read_by_bytes_as_by_characters(
            text in "[a-z.+_:/\\\\'\"^ |;é\u{3b1}\u{1f600}\u{a0}\u{200b}ſK-]{0,24}",
            windows in proptest::bool::ANY,
            stop in 0usize..6,
        ) {
            let os = if windows { OsFamily::Windows } else { OsFamily::Unix };
            let is_token = |b: u8| {
                b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'/' | b'+' | b'\\' | b':')
            };
            let visit = |by_bytes: bool| {
                let mut seen = Vec::new();
                let record = |token: &str| {
                    seen.push(token.to_owned());
                    seen.len() > stop
                };
                let hit = if by_bytes {
                    any_ascii_token_either_way(&text, os, is_token, record)
                } else {
                    let by_char = |c: char| u8::try_from(c).is_ok_and(|b| b.is_ascii() && is_token(b));
                    any_token_either_way(&text, os, by_char, record)
                };
                (hit, seen)
            };
            proptest::prop_assert_eq!(visit(true), visit(false));
        }
    }

    #[test]
    fn byte_sets_hold_their_bytes() {
        let set = ByteSet::new(true, b"_-");
        let none = ByteSet::new(false, b"|");
        for b in 0..=u8::MAX {
            let want = b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
            assert_eq!(set.contains(b), want, "byte {b}");
            assert_eq!(none.contains(b), b == b'|', "byte {b}");
        }
        let plain = |b: u8| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'.' | b'/' | b':' | b',' | b'@' | b'%' | b'+' | b'=' | b'-'
                )
        };
        for b in 0..=u8::MAX {
            assert_eq!(is_plain_byte(b), plain(b), "byte {b}");
        }
    }

    #[test]
    fn program_keys() {
        let cases: &[(&str, OsFamily, &str)] = &[
            ("/bin/rm", OsFamily::Unix, "rm"),
            ("./rm", OsFamily::Unix, "rm"),
            ("RM", OsFamily::Unix, "rm"),
            ("rm.exe", OsFamily::Unix, "rm"),
            ("C:\\Windows\\System32\\DEL.EXE", OsFamily::Windows, "del"),
            ("c:/x/rd.cmd", OsFamily::Windows, "rd"),
            ("C:del", OsFamily::Windows, "del"),
            ("format.com", OsFamily::Windows, "format"),
            (".exe", OsFamily::Windows, ".exe"),
        ];
        for (word, os, want) in cases {
            assert_eq!(program_key(word, *os), *want, "input: {word}");
        }
    }
}
