//! `jq`'s own reader: options, filter and files.

use super::super::Context;
use super::super::path_rule::{path, unexpanding};
use super::super::word::{Word, WordKind};
use super::table::{Entry, Value};
use super::walk::is_number;

/// jq: the entry's flags, `--arg`/`--argjson NAME VALUE`, `--slurpfile`/`--rawfile NAME FILE`
/// and `-f FILE` with the file inside the workspace, `--args`/`--jsonargs`; the filter must
/// not load modules or read the environment; the other operands are files.
pub(super) fn jq(context: &Context, entry: &Entry, args: &[Word]) -> Result<(), String> {
    let flag = |option: &str| {
        entry
            .options
            .iter()
            .any(|(o, v)| o == option && *v == Value::No)
    };
    let mut filter_seen = false;
    let mut positional_are_values = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let text = arg.text.as_str();
        if text.starts_with('-') && text != "-" {
            if arg.kind != WordKind::Literal {
                return Err(format!("`jq` with a glob in an option (`{text}`) asks"));
            }
            match text {
                "--arg" | "--argjson" => {
                    let values = args
                        .get(i..i + 2)
                        .ok_or("`jq --arg` needs a name and a value")?;
                    if values.iter().any(|w| w.kind != WordKind::Literal) {
                        return Err("`jq --arg` with a glob asks".to_owned());
                    }
                    i += 2;
                }
                "--slurpfile" | "--rawfile" => {
                    let values = args
                        .get(i..i + 2)
                        .ok_or("`jq --slurpfile` needs a name and a file")?;
                    path(context, "jq", &values[1], true)?;
                    i += 2;
                }
                "-f" | "--from-file" => {
                    let file = args.get(i).ok_or("`jq -f` needs a file")?;
                    path(context, "jq", file, true)?;
                    filter_seen = true;
                    i += 1;
                }
                "--args" | "--jsonargs" => positional_are_values = true,
                long if long.starts_with("--") => {
                    let name = long.split('=').next().unwrap_or(long);
                    let known = entry.options.iter().any(|(o, _)| o == name);
                    if !known || (long.contains('=') && flag(name)) {
                        return Err(format!("`jq` with `{name}` is not on the read-only list"));
                    }
                    if !long.contains('=') && !flag(name) {
                        // --indent N
                        let value = args.get(i).ok_or("`jq --indent` needs a number")?;
                        if !value.known().is_some_and(is_number) {
                            return Err("`jq --indent` needs a number".to_owned());
                        }
                        i += 1;
                    }
                }
                short => {
                    for letter in short.chars().skip(1) {
                        if !flag(&format!("-{letter}")) {
                            return Err(format!(
                                "`jq` with `-{letter}` is not on the read-only list"
                            ));
                        }
                    }
                }
            }
            continue;
        }
        if !filter_seen {
            filter_seen = true;
            let Some(filter) = arg.known() else {
                return Err("`jq` with a glob as its filter asks".to_owned());
            };
            if let Some(word) = [
                "import",
                "include",
                "env",
                "ENV",
                "modulemeta",
                "get_search_list",
            ]
            .iter()
            .find(|w| filter.contains(*w))
            {
                return Err(format!(
                    "`jq` with a filter using `{word}` asks (it reads modules or the environment)"
                ));
            }
            continue;
        }
        if positional_are_values {
            unexpanding("jq", arg)?;
            continue;
        }
        path(context, "jq", arg, true)?;
    }
    Ok(())
}
