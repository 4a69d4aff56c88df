//! Whether a word of a command could name a file that holds secrets: the one list
//! (`assets/secret-files.txt` plus the user's `[permissions.files] ask_read`, in
//! [`Context::secrets`]) applied to a path as written, and — for a glob — whether any name
//! it can expand to could be on that list. Two glob dialects: the shell's (a component at a
//! time; a leading wildcard never matches a leading `.`) and git's pathspecs (a wildcard
//! matches `/` and a leading `.` too). Owns nothing about which words are paths: the callers
//! (`inspect`, `git_read`) decide that.

use std::path::Path;

use super::Context;

/// One element of a glob, for intersecting two globs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?` or a `[…]` class: any one character (an over-approximation).
    One,
    Star,
}

/// A glob as tokens, lowercased: the list matches without regard to case, and so does
/// `:(icase)`.
fn tokens(pattern: &str) -> Vec<Token> {
    let mut out = Vec::new();
    tokens_into(pattern, &mut out);
    out
}

/// [`tokens`], appended to `out` (a buffer used again).
fn tokens_into(pattern: &str, out: &mut Vec<Token>) {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => out.push(Token::Star),
            '?' => out.push(Token::One),
            '[' => {
                for inner in chars.by_ref() {
                    if inner == ']' {
                        break;
                    }
                }
                out.push(Token::One);
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push(Token::Char(next.to_ascii_lowercase()));
                }
            }
            other => out.push(Token::Char(other.to_ascii_lowercase())),
        }
    }
}

/// The pattern of the list that `text` (a path as written, relative to the working
/// directory, or absolute) names, if any: judged relative to the workspace when inside, by
/// its components otherwise.
pub(super) fn named<'c>(context: &'c Context, text: &str) -> Option<&'c str> {
    if let Some(relative) = plain_relative(context, text) {
        return context.secrets.matching(relative);
    }
    let full = crate::workspace::normalize(&context.cwd, Path::new(text));
    let relative = full.strip_prefix(&context.workspace).unwrap_or(&full);
    context.secrets.matching(relative)
}

/// A relative path of plain components (no `.`, `..` or empty one, no `\\` or `:`, not from
/// `~`) in the workspace's root is already its own normalised path relative to the workspace:
/// most words are not built again as paths.
pub(super) fn plain_relative<'t>(context: &Context, text: &'t str) -> Option<&'t Path> {
    let plain = crate::workspace::is_plain_relative(text) && context.cwd == context.workspace;
    plain.then(|| Path::new(text))
}

/// Whether a shell glob component (a leading wildcard never matches a leading `.`) could
/// match a name on the list. Braces could be anything.
pub(super) fn shell_component_could_match(context: &Context, component: &str) -> bool {
    if component.contains(['{', '}']) {
        return true;
    }
    let glob = tokens(component);
    let hides_dot = matches!(glob.first(), Some(Token::Star | Token::One));
    context.secrets.name_patterns().iter().any(|secret| {
        let secret = tokens(secret);
        if hides_dot && secret.first() == Some(&Token::Char('.')) {
            return false;
        }
        intersects(&glob, &secret)
    })
}

/// Whether a shell glob, as a path relative to the workspace, could match one of the list's
/// patterns that hold a `/` (`secrets/**` in `ask_read`).
pub(super) fn shell_path_could_match(context: &Context, relative: &str) -> Option<String> {
    let glob = tokens(relative);
    context
        .secrets
        .path_patterns()
        .iter()
        .find(|pattern| intersects(&glob, &tokens(pattern.trim_start_matches('/'))))
        .cloned()
}

/// Whether a git pathspec (relative to the workspace; `*`, `?` and `[…]` match `/` and a
/// leading `.` as git's default pathspecs do, and `:(glob)`'s `**` is covered by that) could
/// match a secret file: a name pattern as any component, or a pattern with `/` as the path
/// or below it (a pathspec also names everything below a directory it matches). The first
/// such pattern.
pub(super) fn pathspec_could_match(context: &Context, relative: &str) -> Option<String> {
    let glob = tokens(relative);
    let any = [Token::Star, Token::Char('/')];
    let below = [Token::Char('/'), Token::Star];
    let under: Vec<Token> = glob.iter().chain(&below).copied().collect();
    // The pattern's tokens and each form of it, in two buffers used again for every pattern.
    let (mut secret, mut form) = (Vec::new(), Vec::new());
    let names = context.secrets.name_patterns().iter().find(|pattern| {
        secret.clear();
        tokens_into(pattern, &mut secret);
        let forms: [(&[Token], &[Token]); 4] =
            [(&[], &[]), (&any, &[]), (&[], &below), (&any, &below)];
        forms.iter().any(|(before, after)| {
            form.clear();
            form.extend(before.iter().chain(&secret).chain(after.iter()).copied());
            intersects(&glob, &form)
        })
    });
    let paths = || {
        context.secrets.path_patterns().iter().find(|pattern| {
            let secret = tokens(pattern.trim_start_matches('/'));
            intersects(&glob, &secret) || intersects(&under, &secret)
        })
    };
    names.or_else(paths).cloned()
}

/// Whether two globs match a common string. Most calls pair a glob with a literal path, or
/// two globs whose fixed first or last characters differ: those are answered without the
/// search (a test compares both ways on generated globs).
fn intersects(left: &[Token], right: &[Token]) -> bool {
    let literal = |glob: &[Token]| glob.iter().all(|t| matches!(t, Token::Char(_)));
    // A common string starts (ends) with both globs' fixed first (last) characters.
    let differ = |a: Option<&Token>, b: Option<&Token>| matches!((a, b), (Some(Token::Char(x)), Some(Token::Char(y))) if x != y);
    if differ(left.first(), right.first()) || differ(left.last(), right.last()) {
        return false;
    }
    if literal(left) {
        return matches_literal(right, left);
    }
    if literal(right) {
        return matches_literal(left, right);
    }
    search(left, right)
}

/// Whether `glob` matches the fixed text `text` (only [`Token::Char`]s): `*` any run, `?` any
/// one character; a star backtracks to the last one seen.
fn matches_literal(glob: &[Token], text: &[Token]) -> bool {
    let (mut g, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match glob.get(g) {
            Some(Token::Star) => {
                star = Some((g, t));
                g += 1;
            }
            Some(Token::One) => {
                g += 1;
                t += 1;
            }
            Some(c) if *c == text[t] => {
                g += 1;
                t += 1;
            }
            _ => match star {
                Some((star_at, from)) => {
                    g = star_at + 1;
                    t = from + 1;
                    star = Some((star_at, from + 1));
                }
                None => return false,
            },
        }
    }
    glob[g..].iter().all(|t| *t == Token::Star)
}

/// Whether two globs match a common string: a search over pairs of positions.
fn search(left: &[Token], right: &[Token]) -> bool {
    let mut seen = vec![false; (left.len() + 1) * (right.len() + 1)];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        let key = i * (right.len() + 1) + j;
        if seen[key] {
            continue;
        }
        seen[key] = true;
        if i == left.len() && j == right.len() {
            return true;
        }
        let (here, there) = (left.get(i), right.get(j));
        if here == Some(&Token::Star) {
            stack.push((i + 1, j));
        }
        if there == Some(&Token::Star) {
            stack.push((i, j + 1));
        }
        match (here, there) {
            (Some(Token::Star), Some(Token::Char(_) | Token::One)) => stack.push((i, j + 1)),
            (Some(Token::Char(_) | Token::One), Some(Token::Star)) => stack.push((i + 1, j)),
            (Some(Token::Char(mine)), Some(Token::Char(theirs))) if mine == theirs => {
                stack.push((i + 1, j + 1));
            }
            (Some(Token::One), Some(Token::Char(_) | Token::One))
            | (Some(Token::Char(_)), Some(Token::One)) => stack.push((i + 1, j + 1)),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// The shortcuts of `intersects` (fixed ends, a literal side) answer as the search.
        #[test]
        fn intersects_answers_as_the_search(left in "[ab.*?/]{0,7}", right in "[ab.*?/]{0,7}") {
            let (left, right) = (tokens(&left), tokens(&right));
            prop_assert_eq!(intersects(&left, &right), search(&left, &right));
            prop_assert_eq!(intersects(&right, &left), search(&left, &right));
        }
    }
    use crate::policy::{OsFamily, ReadOnly};

    fn context() -> Context {
        Context::new(
            OsFamily::Unix,
            Path::new("/w"),
            Path::new("/w"),
            ReadOnly::Inspect,
        )
    }

    #[test]
    fn shell_globs_that_could_be_secrets() {
        let context = context();
        for (glob, want) in [
            ("*.rs", true),
            ("*.md", true),
            ("main.*", true),
            ("*.pem", true),
            (".e*", true),
            ("src*", true),
            ("{a,b}", true),
            ("README.?d", false),
            ("*", true),
            // A leading wildcard hides a leading dot from the shell.
            ("?env", false),
        ] {
            assert_eq!(shell_component_could_match(&context, glob), want, "{glob}");
        }
    }

    #[test]
    fn pathspecs_cross_slashes_and_dots() {
        let context = context();
        for (spec, want) in [
            ("*.pem", true),
            ("src/*.pem", true),
            ("*", true),
            ("?env", true),
            ("src/**", true),
            ("config/*", true),
            ("README.?d", false),
            ("src/main.rs", false),
            ("docs/*.md", true),
            ("a/b/c.t?t", false),
        ] {
            assert_eq!(
                pathspec_could_match(&context, spec).is_some(),
                want,
                "{spec}"
            );
        }
    }

    #[test]
    fn user_patterns_count_too() {
        let secrets = crate::workspace::SecretFiles::with_extra(["*.tfstate", "vault/**"]);
        let context = context().with_secrets(Arc::new(secrets.unwrap()));
        assert_eq!(named(&context, "infra/prod.tfstate"), Some("*.tfstate"));
        assert_eq!(named(&context, "vault/x"), Some("vault/**"));
        assert!(shell_component_could_match(&context, "prod.tf*"));
        assert_eq!(
            shell_path_could_match(&context, "vault/*").as_deref(),
            Some("vault/**")
        );
        assert_eq!(
            pathspec_could_match(&context, "vault").as_deref(),
            Some("vault/**")
        );
        assert_eq!(
            pathspec_could_match(&context, "infra/prod.tf?tate").as_deref(),
            Some("*.tfstate")
        );
    }
}
