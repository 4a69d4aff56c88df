//! The built-in read-only lists, one data file per OS family in `assets/`, parsed once. Owns
//! the file format and the argument rules (`needs-args`, `flags=…` …); does not know about
//! quoting or operators: it sees one simple command's words, already checked for those.

use std::sync::OnceLock;

use super::word::{Word, WordKind};
use super::{Context, OsFamily, ReadOnly, builtins_pure, inspect, listings, windows_path};

const UNIX_LIST: &str = include_str!("../../assets/builtin-unix.txt");
const WINDOWS_LIST: &str = include_str!("../../assets/builtin-windows.txt");

/// Which non-option words an entry accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operands {
    Any,
    None,
    /// Only `+FORMAT` (`date +%s`).
    Format,
}

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    No,
    Required,
    /// Only attached (`-Iseconds`, `--iso-8601=seconds`).
    Optional,
}

/// One line of a list file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    name: String,
    needs_args: bool,
    no_args: bool,
    globs: bool,
    flags: Option<Vec<(String, Value)>>,
    operands: Operands,
    only_with: Option<Vec<String>>,
}

/// Parses a list file; an error names the line.
pub(super) fn parse_list(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split_whitespace();
        let Some(name) = parts.next() else { continue };
        let mut entry = Entry {
            name: name.to_owned(),
            needs_args: false,
            no_args: false,
            globs: false,
            flags: None,
            operands: Operands::Any,
            only_with: None,
        };
        for attribute in parts {
            match attribute.split_once('=') {
                None if attribute == "needs-args" => entry.needs_args = true,
                None if attribute == "no-args" => entry.no_args = true,
                None if attribute == "globs" => entry.globs = true,
                Some(("flags", list)) => entry.flags = Some(list.split(',').map(flag).collect()),
                Some(("operands", "any")) => entry.operands = Operands::Any,
                Some(("operands", "none")) => entry.operands = Operands::None,
                Some(("operands", "format")) => entry.operands = Operands::Format,
                Some(("only-with", list)) => {
                    entry.only_with = Some(list.split(',').map(str::to_owned).collect());
                }
                _ => {
                    return Err(format!(
                        "line {}: unknown attribute `{attribute}`",
                        number + 1
                    ));
                }
            }
        }
        entries.push(entry);
    }
    Ok(entries)
}

fn flag(spec: &str) -> (String, Value) {
    if let Some(name) = spec.strip_suffix('=') {
        (name.to_owned(), Value::Required)
    } else if let Some(name) = spec.strip_suffix('?') {
        (name.to_owned(), Value::Optional)
    } else {
        (spec.to_owned(), Value::No)
    }
}

/// The list for an OS family. A list file that does not parse (a bug, caught by the tests)
/// reads as empty: everything asks.
fn list(os: OsFamily) -> &'static [Entry] {
    static UNIX: OnceLock<Vec<Entry>> = OnceLock::new();
    static WINDOWS: OnceLock<Vec<Entry>> = OnceLock::new();
    let (cell, text) = match os {
        OsFamily::Unix => (&UNIX, UNIX_LIST),
        OsFamily::Windows => (&WINDOWS, WINDOWS_LIST),
    };
    cell.get_or_init(|| parse_list(text).unwrap_or_default())
}

/// Checks one simple command (program written as-is, then arguments) against the list.
/// `Ok` carries the entry that allows it (`ls`, `date /t`); `Err` says why it is not read-only.
pub(super) fn check(context: &Context, words: &[Word]) -> Result<String, String> {
    let os = context.os;
    if context.read_only == ReadOnly::Inspect
        && let Some(verdict) = inspect::check(context, words)
    {
        return verdict;
    }
    if context.read_only == ReadOnly::Inspect
        && context.os == OsFamily::Unix
        && let Some(verdict) =
            builtins_pure::check(context, words).or_else(|| listings::check(words))
    {
        return verdict;
    }
    let Some((program, args)) = words.split_first() else {
        return Err("has no program".to_owned());
    };
    let eq = |a: &str, b: &str| match os {
        OsFamily::Unix => a == b,
        OsFamily::Windows => a.eq_ignore_ascii_case(b),
    };
    let name = program.text.as_str();
    let Some(entry) = list(os).iter().find(|e| eq(&e.name, name)) else {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        if base != name && list(os).iter().any(|e| eq(&e.name, base)) {
            return Err(format!(
                "`{name}` is not on the read-only list (the list names programs as written, \
                 not paths)"
            ));
        }
        return Err(format!("`{name}` is not on the read-only list"));
    };
    if let Some(only) = &entry.only_with {
        let exact = only.len() == args.len()
            && only
                .iter()
                .zip(args)
                .all(|(w, a)| a.known().is_some_and(|a| eq(w, a)));
        let form = format!("{} {}", entry.name, only.join(" "));
        return if exact {
            Ok(form)
        } else {
            Err(format!(
                "`{name}` is on the read-only list only as `{form}`"
            ))
        };
    }
    if entry.needs_args && args.is_empty() {
        return Err(format!(
            "`{name}` is on the read-only list only with arguments"
        ));
    }
    if entry.no_args && !args.is_empty() {
        return Err(format!(
            "`{name}` is on the read-only list only without arguments"
        ));
    }
    for arg in args {
        match arg.kind {
            WordKind::Literal => {}
            WordKind::Pattern if entry.globs => {}
            WordKind::Pattern => {
                return Err(format!(
                    "`{name}` with a glob is not on the read-only list (a glob can expand to \
                     options)"
                ));
            }
            WordKind::Expansion => {
                return Err(format!(
                    "`{name}` with an expansion is not on the read-only list"
                ));
            }
        }
    }
    if os == OsFamily::Windows && eq(&entry.name, "dir") {
        dir_paths(args)?;
    }
    if let Some(flags) = &entry.flags {
        check_options(name, flags, entry.operands, args)?;
    } else if entry.operands != Operands::Any {
        check_options(name, &[], entry.operands, args)?;
    }
    Ok(entry.name.clone())
}

/// cmd.exe's `dir`: every path (its arguments split at `,` `;` `=` as cmd's built-ins do,
/// switches left out) as Win32 opens it: a device name or an 8.3 short name asks
/// (`windows_path`).
fn dir_paths(args: &[Word]) -> Result<(), String> {
    let paths = args
        .iter()
        .flat_map(|arg| arg.text.split([',', ';', '=']))
        .filter(|text| !text.starts_with('/'));
    for path in paths {
        windows_path::normalise(path).map_err(|why| format!("`dir {path}` asks ({why})"))?;
    }
    Ok(())
}

/// Walks the arguments like getopt (options anywhere until `--`) and accepts only the listed
/// options and operands.
fn check_options(
    name: &str,
    flags: &[(String, Value)],
    operands: Operands,
    args: &[Word],
) -> Result<(), String> {
    let lookup = |option: &str| flags.iter().find(|(f, _)| f == option).map(|(_, v)| *v);
    let not_read_only = |what: &str| format!("`{name}` with `{what}` is not read-only");
    let mut words = args.iter().map(|w| w.text.as_str());
    let mut options_done = false;
    while let Some(arg) = words.next() {
        if !options_done && arg == "--" {
            options_done = true;
            continue;
        }
        if !options_done && let Some(long) = arg.strip_prefix("--") {
            let (option_name, attached) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let option = format!("--{option_name}");
            match lookup(&option) {
                Some(Value::No) if !attached => {}
                Some(Value::Optional) => {}
                Some(Value::Required) => {
                    if !attached && words.next().is_none() {
                        return Err(format!("`{name} {option}` is missing its value"));
                    }
                }
                Some(Value::No) | None => return Err(not_read_only(&option)),
            }
            continue;
        }
        if !options_done && arg.len() > 1 && arg.starts_with('-') {
            let letters: Vec<char> = arg.chars().skip(1).collect();
            for (i, letter) in letters.iter().enumerate() {
                let option = format!("-{letter}");
                match lookup(&option) {
                    Some(Value::No) => {}
                    Some(Value::Optional) => break,
                    Some(Value::Required) => {
                        if i + 1 == letters.len() && words.next().is_none() {
                            return Err(format!("`{name} {option}` is missing its value"));
                        }
                        break;
                    }
                    None => return Err(not_read_only(&option)),
                }
            }
            continue;
        }
        let allowed = match operands {
            Operands::Any => true,
            Operands::None => false,
            Operands::Format => arg.starts_with('+'),
        };
        if !allowed {
            return Err(match operands {
                Operands::Format => format!(
                    "`{name}` with the operand `{arg}` is not read-only (only `+FORMAT` is)"
                ),
                Operands::Any | Operands::None => {
                    format!("`{name}` with an operand (`{arg}`) is not read-only")
                }
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn list_files_parse() {
        for (os, text) in [
            (OsFamily::Unix, UNIX_LIST),
            (OsFamily::Windows, WINDOWS_LIST),
        ] {
            let parsed = parse_list(text);
            assert!(parsed.is_ok(), "{os:?} list: {parsed:?}");
            assert_eq!(list(os).len(), parsed.map_or(0, |l| l.len()));
        }
    }

    #[test]
    fn list_files_hold_the_design_lists() {
        let names = |os| {
            list(os)
                .iter()
                .map(|e| e.name.clone())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            names(OsFamily::Unix),
            "pwd whoami true false echo printf cd uname hostname uptime arch which id logname \
             tty cal seq getconf pathchk basename dirname realpath ls date"
        );
        // DESIGN.md's Windows list, less the entries that are programs rather than cmd.exe
        // built-ins (cmd runs a same-named file from the current directory first).
        assert_eq!(names(OsFamily::Windows), "echo cd ver dir date time vol");
    }

    #[test]
    fn bad_attribute_is_an_error() {
        assert_eq!(
            parse_list("ls\nls needs-arg\n"),
            Err("line 2: unknown attribute `needs-arg`".to_owned())
        );
    }
}
