//! `if … ; then … ; [elif … ; then … ;] [else … ;] fi` in a composed command (`compose`):
//! the keywords are taken off the parts, which are then decided like the parts of any list.
//! The shell runs a subset of those parts, so when each is allowed the whole is. Owns only
//! the reading of that structure, on the parts `compose` split at `|`, `&&`, `||` and `;`.
//!
//! A keyword counts only unquoted at the start of a part, and only after `;` (or, for `if`,
//! at the start or after any operator); anything else (`then` after `&&`, a nested `if`, a
//! missing `fi`, `then` without a command) asks. `!` may start a condition. Other compound
//! commands (`for`, `while`, `case`, `{ … }`) are not read: their parts ask as before.

/// A part as `compose` split it: whether it follows `;`, whether it starts with a
/// redirection (a reserved word after one is a plain word: `2>/dev/null else x` runs a
/// program named `else`), and its text without the redirection.
pub(super) type Part<'t> = (bool, bool, &'t str);

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Outside,
    Condition,
    Body,
    Else,
}

/// The parts' texts without the `if` keywords, one per part (`None` for a `fi`, which is no
/// command), or `Ok(None)` when no part starts with a keyword, or why the structure is not
/// read.
pub(super) fn without_keywords(parts: &[Part<'_>]) -> Result<Option<Vec<Option<String>>>, String> {
    let keyword_of = |redirected: bool, text: &str| {
        if redirected {
            return None;
        }
        let trimmed = text.trim_start_matches([' ', '\t']);
        ["if", "then", "elif", "else", "fi"]
            .into_iter()
            .find(|k| trimmed == *k || trimmed.strip_prefix(k).is_some_and(starts_blank))
    };
    if !parts
        .iter()
        .any(|&(_, r, text)| keyword_of(r, text).is_some())
    {
        return Ok(None);
    }
    let unread = |what: &str| Err(format!("contains {what} (only a plain `if` is read)"));
    let mut state = State::Outside;
    let mut out = Vec::with_capacity(parts.len());
    for &(after_semicolon, redirected, text) in parts {
        let Some(keyword) = keyword_of(redirected, text) else {
            let body = match state {
                State::Condition => strip_bang(text),
                State::Outside | State::Body | State::Else => text,
            };
            out.push(Some(body.to_owned()));
            continue;
        };
        let rest = text.trim_start_matches([' ', '\t'])[keyword.len()..].trim_matches([' ', '\t']);
        if keyword == "fi" {
            if !rest.is_empty() || !after_semicolon || !matches!(state, State::Body | State::Else) {
                return unread("a misplaced `fi`");
            }
            state = State::Outside;
            out.push(None);
            continue;
        }
        if rest.is_empty() {
            return unread(&format!("`{keyword}` without a command after it"));
        }
        state = match (keyword, state) {
            ("if", State::Outside) => State::Condition,
            ("if", _) => return unread("a nested `if`"),
            _ if !after_semicolon => return unread(&format!("`{keyword}` after an operator")),
            ("then", State::Condition) => State::Body,
            ("elif", State::Body) => State::Condition,
            ("else", State::Body) => State::Else,
            _ => return unread(&format!("a misplaced `{keyword}`")),
        };
        let rest = if state == State::Condition {
            strip_bang(rest)
        } else {
            rest
        };
        out.push(Some(rest.to_owned()));
    }
    if state != State::Outside {
        return unread("an `if` without `fi`");
    }
    Ok(Some(out))
}

fn starts_blank(text: &str) -> bool {
    text.starts_with([' ', '\t'])
}

/// A condition's `!` (it only inverts the exit status).
fn strip_bang(text: &str) -> &str {
    let trimmed = text.trim_start_matches([' ', '\t']);
    trimmed
        .strip_prefix('!')
        .filter(|rest| starts_blank(rest))
        .unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Splits at `;` (true) and ` && ` (false), for the tests.
    fn read(text: &str) -> Result<Option<Vec<String>>, String> {
        let mut parts = Vec::new();
        for (i, chunk) in text.split(';').enumerate() {
            for (j, part) in chunk.split(" && ").enumerate() {
                let redirected = part.starts_with('>');
                parts.push((i > 0 && j == 0, redirected, part.trim_start_matches('>')));
            }
        }
        without_keywords(&parts).map(|out| {
            out.map(|texts| {
                texts
                    .iter()
                    .flatten()
                    .map(|t| t.trim_matches([' ', '\t']).to_owned())
                    .collect()
            })
        })
    }

    #[test]
    fn if_statements_lose_their_keywords() {
        let cases: &[(&str, &[&str])] = &[
            ("if a; then b; fi", &["a", "b"]),
            ("if a; then b; else c; fi", &["a", "b", "c"]),
            (
                "if a; then b; elif c; then d; else e; fi",
                &["a", "b", "c", "d", "e"],
            ),
            ("if ! a; then b; fi", &["a", "b"]),
            ("if a && b; then c && d; fi; e", &["a", "b", "c", "d", "e"]),
            ("x && if a; then b; fi", &["x", "a", "b"]),
            ("if\ta; then\tb; fi", &["a", "b"]),
        ];
        for (text, want) in cases {
            let want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(read(text), Ok(Some(want)), "{text:?}");
        }
        assert_eq!(read("a; b && c"), Ok(None));
        assert_eq!(read("iff a; thenx b"), Ok(None));
        assert_eq!(read(">fi"), Ok(None));
        // After a redirection `else` is a plain word: the part stays a command (which asks).
        let kept = read("if a; then b;>else c; fi").ok().flatten();
        assert!(kept.is_some_and(|parts| parts.contains(&"else c".to_owned())));
    }

    #[test]
    fn other_structures_are_not_read() {
        for text in [
            "if a; then b",
            "if a; fi",
            "then b; fi",
            "if a && then b; fi",
            "if a; then b && fi",
            "if a; then if b; then c; fi; fi",
            "if a; then; fi",
            "if; then a; fi",
            "if a; then b; fi x",
            "if a; else b; fi",
            "if a; then b; else c; elif d; then e; fi",
            "fi",
        ] {
            assert!(read(text).is_err(), "{text:?}: {:?}", read(text));
        }
    }
}
