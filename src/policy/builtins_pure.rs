//! Shell builtins that only compute an exit status or wait, on the inspect list
//! (`read_only = "inspect"`): `test`/`[ … ]`/`[[ … ]]` with file tests and string or integer
//! comparisons, `sleep N`, `:`. Owns their argument rules; the caller has checked quoting,
//! operators and expansions (a `$` or backtick anywhere asks before this is reached).
//!
//! Decisions (the issue leaves them open):
//! - **Tests**: one test with an optional `!` (POSIX's rules for up to four arguments: no
//!   `-a`/`-o` joining, no parentheses). File tests and `-nt`/`-ot`/`-ef` name files inside the
//!   workspace (a secret file named as written asks, as for `stat`); `-v` and `-R` (bash
//!   evaluates an array subscript, `a[$(cmd)]`, which runs code), `-o` (a shell option, not a
//!   file) and `-t` ask; the integer comparisons (`-eq` …) take plain integers only (`[[`
//!   evaluates their operands as arithmetic, which expands variables and subscripts). A glob
//!   asks (it could change the number of arguments, and `[[` does not expand it).
//! - **`sleep`** takes plain numbers with an optional `s` or `m` suffix, at most
//!   [`MAX_SLEEP_SECONDS`] in all (the runner's timeout ends it sooner): no `infinity`, no
//!   options.
//! - **`:`** with any words does nothing (its redirections are decided like any others).

use super::word::{Word, WordKind};
use super::{Context, path_rule, split};

/// Longest `sleep` allowed without asking, in seconds (all operands together).
const MAX_SLEEP_SECONDS: f64 = 600.0;

/// File tests: the operand names a file, which is looked at, not printed.
const FILE_TESTS: &[&str] = &[
    "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-u", "-w", "-x", "-G",
    "-L", "-N", "-O", "-S",
];

/// String tests: the operand is text.
const STRING_TESTS: &[&str] = &["-n", "-z"];

/// Comparisons of two strings (`<` and `>` only as quoted words in `[`; unquoted in `[[` they
/// are not in the modelled subset).
const STRING_COMPARISONS: &[&str] = &["=", "==", "!=", "<", ">"];

/// Comparisons of two files.
const FILE_COMPARISONS: &[&str] = &["-nt", "-ot", "-ef"];

/// Comparisons of two integers.
const INTEGER_COMPARISONS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Checks one simple command whose program is a pure builtin: `None` when it is not one,
/// `Ok(entry)` when it is allowed, `Err(why)` when it asks.
pub(super) fn check(context: &Context, words: &[Word]) -> Option<Result<String, String>> {
    let (program, args) = words.split_first()?;
    let verdict = match program.known()? {
        "test" => expression(context, "test", args).map(|()| "test".to_owned()),
        "[" => bracket(context, args),
        "sleep" => sleep(args).map(|()| "sleep".to_owned()),
        ":" => Ok(":".to_owned()),
        _ => return None,
    };
    Some(verdict)
}

/// Checks a command that tree-sitter reads as a test (`[ … ]` or `[[ … ]]`), from its text,
/// split as the shell splits it.
pub(super) fn test_command(context: &Context, text: &str) -> Result<String, String> {
    let unreadable = || format!("`{text}` is a test this policy does not read");
    let trimmed = text.trim_matches([' ', '\t']);
    if let Some(rest) = trimmed.strip_prefix("[[") {
        // `[[` and `]]` are reserved words: unquoted, each a word of its own.
        let inner = rest
            .strip_suffix("]]")
            .filter(|inner| inner.starts_with([' ', '\t']) && inner.ends_with([' ', '\t']))
            .ok_or_else(unreadable)?;
        // Split after a plain program word: a leading `!` is no reserved word here.
        let words = split::split(&format!("test{inner}")).ok_or_else(unreadable)?;
        let words = words.get(1..).unwrap_or_default();
        if words.first().is_some_and(|w| w.text.starts_with('-')) && words.len() == 1 {
            return Err(unreadable());
        }
        return expression(context, "[[", words).map(|()| "[[".to_owned());
    }
    let words = split::split(trimmed).ok_or_else(unreadable)?;
    match words.split_first() {
        Some((first, args)) if first.text == "[" => bracket(context, args),
        _ => Err(unreadable()),
    }
}

/// `[ … ]`: the arguments end with `]`.
fn bracket(context: &Context, args: &[Word]) -> Result<String, String> {
    match args.split_last() {
        Some((last, inner)) if last.text == "]" && last.kind == WordKind::Literal => {
            expression(context, "[", inner).map(|()| "[".to_owned())
        }
        _ => Err("`[` without a closing `]` asks".to_owned()),
    }
}

/// One test, optionally negated, by POSIX's rules for up to four arguments.
fn expression(context: &Context, name: &str, args: &[Word]) -> Result<(), String> {
    if let Some(word) = args.iter().find(|w| w.kind != WordKind::Literal) {
        return Err(format!(
            "`{name}` with the glob or expansion `{}` asks",
            word.text
        ));
    }
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    match texts.as_slice() {
        [] | [_] => Ok(()),
        [a, op, b] if is_binary(op) => binary(context, name, &args[0], op, &args[2], a, b),
        ["!", ..] if args.len() <= 4 => expression(context, name, &args[1..]),
        [op, _] => unary(context, name, op, &args[1]),
        _ => Err(format!(
            "`{name}` asks with more than one test or an unknown operator (only one test, \
             optionally negated with `!`)"
        )),
    }
}

fn is_binary(op: &str) -> bool {
    [STRING_COMPARISONS, FILE_COMPARISONS, INTEGER_COMPARISONS]
        .iter()
        .any(|ops| ops.contains(&op))
}

fn unary(context: &Context, name: &str, op: &str, operand: &Word) -> Result<(), String> {
    if FILE_TESTS.contains(&op) {
        return path_rule::path(context, name, operand, false);
    }
    if STRING_TESTS.contains(&op) {
        return Ok(());
    }
    Err(format!(
        "`{name} {op}` is not a file or string test (`-v`, `-R`, `-o` and `-t` ask)"
    ))
}

fn binary(
    context: &Context,
    name: &str,
    left: &Word,
    op: &str,
    right: &Word,
    a: &str,
    b: &str,
) -> Result<(), String> {
    if FILE_COMPARISONS.contains(&op) {
        path_rule::path(context, name, left, false)?;
        return path_rule::path(context, name, right, false);
    }
    if INTEGER_COMPARISONS.contains(&op) && !(is_integer(a) && is_integer(b)) {
        return Err(format!(
            "`{name}` compares `{a}` and `{b}` as numbers; only plain integers are read-only \
             (`[[` evaluates other operands as arithmetic)"
        ));
    }
    Ok(())
}

/// An optional sign and decimal digits.
fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `sleep N…`: plain numbers with an optional `s` or `m` suffix, bounded in all.
fn sleep(args: &[Word]) -> Result<(), String> {
    if args.is_empty() {
        return Err("`sleep` needs a number".to_owned());
    }
    let mut total = 0.0;
    for word in args {
        let seconds = duration(&word.text).ok_or_else(|| {
            format!(
                "`sleep {}` asks (only plain numbers of seconds or minutes are read-only)",
                word.text
            )
        })?;
        total += seconds;
    }
    if total > MAX_SLEEP_SECONDS {
        return Err(format!(
            "`sleep` for more than {MAX_SLEEP_SECONDS} seconds asks"
        ));
    }
    Ok(())
}

/// Seconds in `N`, `N.N`, `Ns` or `Nm`.
fn duration(text: &str) -> Option<f64> {
    let (number, unit) = match text.strip_suffix('m') {
        Some(number) => (number, 60.0),
        None => (text.strip_suffix('s').unwrap_or(text), 1.0),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
        return None;
    }
    // At most a few digits: the total is bounded anyway, and a long string is no number.
    if number.len() > 12 {
        return None;
    }
    number.parse::<f64>().ok().map(|n| n * unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        for (text, want) in [
            ("1", Some(1.0)),
            ("0.5", Some(0.5)),
            (".5", Some(0.5)),
            ("2s", Some(2.0)),
            ("3m", Some(180.0)),
            ("1.", Some(1.0)),
            ("", None),
            (".", None),
            ("inf", None),
            ("infinity", None),
            ("1e3", None),
            ("0x10", None),
            ("1h", None),
            ("-1", None),
            ("1d", None),
            ("s", None),
        ] {
            assert_eq!(duration(text), want, "{text:?}");
        }
    }

    #[test]
    fn integers() {
        for ok in ["0", "12", "-3", "+4"] {
            assert!(is_integer(ok), "{ok}");
        }
        for bad in ["", "-", "a", "a[0]", "1+1", "0x1", "1.0", " 1"] {
            assert!(!is_integer(bad), "{bad}");
        }
    }
}
