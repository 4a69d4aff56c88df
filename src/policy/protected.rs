//! The raw text's search for protected programs (mode allow-all still asks for a command
//! that may touch one): any word of the text, as written and without its quoting
//! characters, that names a protected program (`programs`) or a word that renames what a
//! later word runs. Errs wide: it reads no structure. ASCII text is read by a table of byte
//! classes; other text by characters (`word::any_token_either_way`).

use super::{OsFamily, programs, word};

/// Words that rename or redefine what a later word runs (`alias g=git`, `hash -p /bin/rm r`):
/// their presence makes the protected-program search unreliable.
const RENAMING_WORDS: &[&str] = &["alias", "unalias", "hash", "enable", "doskey"];

/// Conservative text search for mode allow-all: a protected program or a renaming word
/// anywhere, as any word of the raw text (`git -c core.pager='rm -rf x' log` counts), or a
/// Windows `@`-prefixed or control-character-separated name.
pub(super) fn mentions_protected(os: OsFamily, command: &str) -> bool {
    if !command.is_ascii() {
        return word::any_token_either_way(command, os, is_token_character, |token| {
            names_protected(os, token)
        });
    }
    // ASCII text, read by bytes: the same runs of token and quoting characters, the same
    // tokens in each, and the run without its quoting characters.
    let quote = match os {
        OsFamily::Unix => QUOTE_UNIX,
        OsFamily::Windows => QUOTE_WINDOWS,
    };
    let bytes = command.as_bytes();
    let class = |at: usize| BYTE_CLASSES[usize::from(bytes[at])];
    let mut i = 0;
    while i < bytes.len() {
        if class(i) & (TOKEN | quote) == 0 {
            i += 1;
            continue;
        }
        // A run: tokens separated by quoting characters.
        let start = i;
        let mut quoted = false;
        loop {
            let from = i;
            let mut own_key = true;
            while i < bytes.len() && class(i) & TOKEN != 0 {
                own_key &= class(i) & OWN_KEY != 0;
                i += 1;
            }
            if i > from {
                let token = &command[from..i];
                let protected = if own_key {
                    names_protected_as_is(token)
                } else {
                    names_protected(os, token)
                };
                if protected {
                    return true;
                }
            }
            if i < bytes.len() && class(i) & quote != 0 {
                quoted = true;
                i += 1;
            } else {
                break;
            }
        }
        if quoted {
            let unquoted: String = bytes[start..i]
                .iter()
                .filter(|&&b| BYTE_CLASSES[usize::from(b)] & quote == 0)
                .map(|&b| char::from(b))
                .collect();
            if !unquoted.is_empty() && names_protected(os, &unquoted) {
                return true;
            }
        }
    }
    false
}

/// [`BYTE_CLASSES`]: a character of a word for [`mentions_protected`] ([`is_token_character`]).
const TOKEN: u8 = 1;
/// [`BYTE_CLASSES`]: a character of a token that is its own program key and has no `.`/`+`
/// suffix for cmd.exe: lower-case ASCII letters, digits, `_` and `-` (no path, case or
/// extension to take off).
const OWN_KEY: u8 = 2;
/// [`BYTE_CLASSES`]: a quoting character of POSIX shells (`word::is_quoting`).
const QUOTE_UNIX: u8 = 4;
/// [`BYTE_CLASSES`]: a quoting character of cmd.exe (`word::is_quoting`).
const QUOTE_WINDOWS: u8 = 8;

/// What each ASCII byte is to [`mentions_protected`] (bytes above ASCII: nothing; such text
/// is read by characters).
const BYTE_CLASSES: [u8; 256] = {
    let mut classes = [0; 256];
    let mut b: u8 = 0;
    while b < 128 {
        let mut class = 0;
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'+') {
            class |= TOKEN;
        }
        if b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-') {
            class |= OWN_KEY;
        }
        if matches!(b, b'\'' | b'"' | b'\\') {
            class |= QUOTE_UNIX;
        }
        if matches!(b, b'"' | b'^') {
            class |= QUOTE_WINDOWS;
        }
        classes[b as usize] = class;
        b += 1;
    }
    classes
};

/// [`names_protected`] for a token that is its own program key ([`OWN_KEY`]).
fn names_protected_as_is(token: &str) -> bool {
    programs::is_protected(token) || RENAMING_WORDS.contains(&token)
}

/// A character of a word for [`mentions_protected`].
fn is_token_character(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+')
}

/// Whether one word of the raw text names a protected program or a renaming word.
fn names_protected(os: OsFamily, token: &str) -> bool {
    if token.is_empty() {
        return false;
    }
    // cmd.exe ends a built-in's name at `.` and `+` too (`del.`, `del+`).
    let name = match os {
        OsFamily::Unix => token,
        OsFamily::Windows => token.split(['.', '+']).next().unwrap_or(token),
    };
    let candidates: &[&str] = if name == token {
        &[token]
    } else {
        &[token, name]
    };
    candidates.iter().any(|candidate| {
        let key = word::program_key(candidate, os);
        programs::is_protected(&key) || RENAMING_WORDS.contains(&key.as_ref())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_classes_agree_with_the_characters() {
        for b in 0..=u8::MAX {
            let class = BYTE_CLASSES[usize::from(b)];
            if !b.is_ascii() {
                assert_eq!(class, 0, "{b:#x}");
                continue;
            }
            let c = char::from(b);
            assert_eq!(class & TOKEN != 0, is_token_character(c), "{c:?}");
            let unix = word::is_quoting(c, OsFamily::Unix);
            let windows = word::is_quoting(c, OsFamily::Windows);
            assert_eq!(class & QUOTE_UNIX != 0, unix, "{c:?}");
            assert_eq!(class & QUOTE_WINDOWS != 0, windows, "{c:?}");
            if class & OWN_KEY != 0 {
                // A token of such bytes is its own program key, with no `.`/`+` to cut at.
                assert!(class & TOKEN != 0, "{c:?}");
                assert!(!matches!(c, '.' | '+' | '/' | '\\' | ':') && !c.is_ascii_uppercase());
                let token = c.to_string().repeat(4);
                for os in [OsFamily::Unix, OsFamily::Windows] {
                    assert_eq!(word::program_key(&token, os), token.as_str(), "{c:?}");
                }
            }
        }
    }

    #[test]
    fn protected_words_are_found_in_the_raw_text() {
        let unix = [
            "rm -rf x",
            "echo sudo",
            "ls; r'm' x",
            "git -c core.pager='rm -rf x' log",
            "RM.EXE x",
            "/bin/rm x",
            "mkfs.ext4 /dev/x",
            "alias g=git",
            "x|doas y",
        ];
        for text in unix {
            assert!(mentions_protected(OsFamily::Unix, text), "{text:?}");
        }
        for text in ["del. x", "Del+ x", "^r^d x", "format.com c:"] {
            assert!(mentions_protected(OsFamily::Windows, text), "{text:?}");
        }
        for text in [
            "git status",
            "rmx",
            "ls -la src",
            "firm",
            "cat ./mvx",
            "é rmé",
        ] {
            assert!(!mentions_protected(OsFamily::Unix, text), "{text:?}");
        }
    }
}
