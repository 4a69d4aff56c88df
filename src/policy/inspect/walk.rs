//! The option walk: a listed program's arguments read like getopt (and, for `gnu` programs,
//! again the BSD way), each option on the entry's allowlist and each value checked by kind.

use super::super::path_rule::{is_glob, path, unexpanding};
use super::super::word::{Word, WordKind};
use super::super::{Context, secret_paths};
use super::table::{Entry, Model, Operands, Value};

/// The words of a command after its options are walked.
#[derive(Debug, Default)]
pub(super) struct Walked<'w> {
    pub(super) operands: Vec<&'w Word>,
    /// `-e`/`-f` (or long forms) gave the pattern (grep, rg).
    pub(super) pattern_given: bool,
    /// sed `-n`.
    pub(super) quiet: bool,
    /// sed `-e` scripts.
    pub(super) scripts: Vec<String>,
}

/// Walks the arguments like getopt (options anywhere until `--`) and accepts only the
/// entry's options; values are checked by kind.
pub(super) fn walk<'w>(
    context: &Context,
    entry: &Entry,
    args: &'w [Word],
) -> Result<Walked<'w>, String> {
    let name = entry.name.as_str();
    let not_read_only = |what: &str| format!("`{name}` with `{what}` is not read-only");
    let mut walked = Walked {
        operands: Vec::with_capacity(args.len()),
        ..Walked::default()
    };
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let text = arg.text.as_str();
        if options_done || !text.starts_with('-') || text == "-" {
            walked.operands.push(arg);
            options_done |= entry.model == Model::First;
            continue;
        }
        if text == "--" && arg.kind == WordKind::Literal {
            options_done = true;
            continue;
        }
        // An option word: its name part must be fixed text (a glob could become any option).
        let head = text.split('=').next().unwrap_or(text);
        if head.contains(['*', '?', '[', '{', '}']) || arg.kind == WordKind::Expansion {
            return Err(format!("`{name}` with a glob in an option (`{text}`) asks"));
        }
        let mut record = |option: &str, value: Option<&str>| match (name, option) {
            (_, "-e" | "--regexp" | "-f" | "--file") if entry.operands == Operands::Search => {
                walked.pattern_given = true;
            }
            // Without a pattern: every operand is a path (`rg --files /` lists `/`).
            ("rg", "--files" | "--type-list") => walked.pattern_given = true,
            ("sed", "-n" | "--quiet" | "--silent") => walked.quiet = true,
            ("sed", "-e" | "--expression") => {
                walked.scripts.push(value.unwrap_or("w").to_owned());
            }
            _ => {}
        };
        if let Some(long) = text.strip_prefix("--") {
            let (option_name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let Some((option, kind)) = long_option(entry, option_name) else {
                return Err(not_read_only(&format!("--{option_name}")));
            };
            let value = match (kind, attached) {
                (Value::No, None) | (Value::Optional, _) => None,
                (kind @ (Value::Any | Value::Number | Value::Path), attached) => {
                    let value = match attached {
                        Some(v) => v.to_owned(),
                        None => {
                            let next = args
                                .get(i)
                                .ok_or_else(|| format!("`{name} {option}` is missing its value"))?;
                            i += 1;
                            option_value(context, name, next, kind)?;
                            record(option, next.known());
                            continue;
                        }
                    };
                    value_text(context, name, &value, kind)?;
                    Some(value)
                }
                (Value::No, Some(_)) => return Err(not_read_only(option)),
            };
            record(option, value.as_deref());
            continue;
        }
        let body = &text[1..];
        if entry.numbers && body.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        for (at, letter) in body.char_indices() {
            let rest = &body[at + letter.len_utf8()..];
            let Some((option, kind)) = short_option(entry, letter) else {
                return Err(not_read_only(&format!("-{letter}")));
            };
            match kind {
                Value::No => record(option, None),
                Value::Optional => break,
                kind @ (Value::Any | Value::Number | Value::Path) => {
                    if rest.is_empty() {
                        let next = args
                            .get(i)
                            .ok_or_else(|| format!("`{name} {option}` is missing its value"))?;
                        i += 1;
                        option_value(context, name, next, kind)?;
                        record(option, next.known());
                    } else {
                        value_text(context, name, rest, kind)?;
                        record(option, Some(rest));
                    }
                    break;
                }
            }
        }
    }
    Ok(walked)
}

/// The entry's option `--NAME` (as written there, with its value), compared without building
/// the option's text: this runs for every option of every command.
fn long_option<'e>(entry: &'e Entry, long: &str) -> Option<(&'e str, Value)> {
    entry
        .options
        .iter()
        .find(|(o, _)| o.strip_prefix("--") == Some(long))
        .map(|(o, v)| (o.as_str(), *v))
}

/// The entry's option `-LETTER`, as [`long_option`].
fn short_option(entry: &Entry, letter: char) -> Option<(&str, Value)> {
    entry
        .options
        .iter()
        .find(|(o, _)| {
            o.len() == 1 + letter.len_utf8()
                && o.strip_prefix('-').is_some_and(|l| l.starts_with(letter))
        })
        .map(|(o, v)| (o.as_str(), *v))
}

/// The BSD reading of a `gnu` program: options end at the first operand, so every later word
/// the GNU reading took as an option, an option's value or `--` is an operand too. Each must
/// pass as one, and counts: a program with a positional output file (`uniq a -c`) asks.
pub(super) fn later_words_as_operands(
    context: &Context,
    entry: &Entry,
    args: &[Word],
    operands: &[&Word],
) -> Result<(), String> {
    let name = entry.name.as_str();
    let Some(first) = operands
        .first()
        .and_then(|first| args.iter().position(|w| std::ptr::eq(w, *first)))
    else {
        return Ok(());
    };
    let later: Vec<&Word> = args[first..]
        .iter()
        .filter(|w| !operands.iter().any(|o| std::ptr::eq(*o, *w)))
        .collect();
    let Some(example) = later.first() else {
        return Ok(());
    };
    let bsd = "on BSD and macOS, and with POSIXLY_CORRECT, options end at the first operand";
    if entry.operands == Operands::OneFile && operands.len() + later.len() > 1 {
        return Err(format!(
            "`{name}` with `{}` after a file asks ({bsd}: a second operand is the output file)",
            example.text
        ));
    }
    let content = matches!(
        entry.operands,
        Operands::Files | Operands::OneFile | Operands::Search | Operands::Sed
    );
    for word in later {
        if word.kind == WordKind::Expansion {
            return Err(format!(
                "`{name}` with an expansion after a file asks ({bsd}: it is a file there)"
            ));
        }
        // The option's name is fixed text (the GNU reading checked it); a glob in its value
        // is judged as a file name the shell could expand it to.
        let literal = Word::literal(word.text.clone());
        path(context, name, &literal, content)
            .and_then(|()| match word.kind {
                WordKind::Pattern if content => word
                    .text
                    .split('/')
                    .filter(|part| is_glob(part))
                    .find(|part| secret_paths::shell_component_could_match(context, part))
                    .map_or(Ok(()), |part| {
                        Err(format!("`{part}` could match a file that may hold secrets"))
                    }),
                _ => Ok(()),
            })
            .map_err(|why| {
                format!(
                    "`{name}` with `{}` after a file asks ({bsd}: {why})",
                    word.text
                )
            })?;
    }
    Ok(())
}

/// Checks an option value given as its own word.
fn option_value(context: &Context, name: &str, word: &Word, kind: Value) -> Result<(), String> {
    match kind {
        Value::Path => path(context, name, word, true),
        Value::Number | Value::Any => {
            unexpanding(name, word)?;
            if word.kind != WordKind::Literal && kind == Value::Number {
                return Err(format!(
                    "`{name}` with a glob as a number (`{}`)",
                    word.text
                ));
            }
            value_text(context, name, &word.text, kind)
        }
        Value::No | Value::Optional => Ok(()),
    }
}

/// Checks an option value's text (attached, or a literal word).
fn value_text(context: &Context, name: &str, value: &str, kind: Value) -> Result<(), String> {
    match kind {
        Value::Path => path(context, name, &Word::literal(value), true),
        Value::Number if !is_number(value) => Err(format!(
            "`{name}` with `{value}` where a number belongs is not on the read-only list"
        )),
        Value::Number | Value::Any | Value::No | Value::Optional => Ok(()),
    }
}

/// Digits with an optional sign and unit or base prefix (`50`, `+5`, `-3`, `1K`, `0x10`).
pub(super) fn is_number(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if let Some(hex) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    let digits = unsigned.trim_end_matches(|c: char| "kKMGTPEZYRQbBciw".contains(c));
    unsigned.len() - digits.len() <= 3
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
}
