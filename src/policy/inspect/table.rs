//! The inspection list (`assets/builtin-inspect.txt`): each program's operands, where it reads
//! options, and each option's value, parsed once.

use std::sync::OnceLock;

use super::super::programs::name_table::NameTable;

const LIST: &str = include_str!("../../../assets/builtin-inspect.txt");

/// What the words that are not options are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operands {
    Files,
    Names,
    OneFile,
    Search,
    Sets,
    Sed,
    Jq,
    Find,
}

/// Where a program reads options (`MODEL` in the list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Model {
    /// GNU getopt permutes; BSD, macOS and `POSIXLY_CORRECT` stop at the first operand.
    Gnu,
    /// Anywhere, on every system.
    Anywhere,
    /// Only before the first operand.
    First,
}

/// What an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Value {
    No,
    Any,
    Number,
    Path,
    /// Only attached (`--color=auto`, `-w80`).
    Optional,
}

/// One program of the list.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) name: String,
    pub(super) operands: Operands,
    pub(super) model: Model,
    /// `-NUM` is an option (`head -20`).
    pub(super) numbers: bool,
    pub(super) options: Vec<(String, Value)>,
}

fn parse_list(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(name), Some(kind), Some(model)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!(
                "line {}: a name, an operand kind and an option model",
                number + 1
            ));
        };
        let model = match model {
            "gnu" => Model::Gnu,
            "anywhere" => Model::Anywhere,
            "first" => Model::First,
            other => {
                return Err(format!(
                    "line {}: unknown option model `{other}`",
                    number + 1
                ));
            }
        };
        let operands = match kind {
            "files" => Operands::Files,
            "names" => Operands::Names,
            "one-file" => Operands::OneFile,
            "search" => Operands::Search,
            "sets" => Operands::Sets,
            "sed" => Operands::Sed,
            "jq" => Operands::Jq,
            "find" => Operands::Find,
            other => {
                return Err(format!(
                    "line {}: unknown operand kind `{other}`",
                    number + 1
                ));
            }
        };
        let mut entry = Entry {
            name: name.to_owned(),
            operands,
            model,
            numbers: false,
            options: Vec::new(),
        };
        for option in parts {
            if option == "-NUM" {
                entry.numbers = true;
                continue;
            }
            if !option.starts_with('-') || option.len() < 2 {
                return Err(format!("line {}: `{option}` is not an option", number + 1));
            }
            let spec = if let Some(name) = option.strip_suffix("=path") {
                (name, Value::Path)
            } else if let Some(name) = option.strip_suffix("=#") {
                (name, Value::Number)
            } else if let Some(name) = option.strip_suffix('=') {
                (name, Value::Any)
            } else if let Some(name) = option.strip_suffix('?') {
                (name, Value::Optional)
            } else {
                (option, Value::No)
            };
            entry.options.push((spec.0.to_owned(), spec.1));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// The list; a file that does not parse (a bug, caught by the tests) reads as empty.
pub(super) fn list() -> &'static [Entry] {
    static LIST_CELL: OnceLock<Vec<Entry>> = OnceLock::new();
    LIST_CELL.get_or_init(|| parse_list(LIST).unwrap_or_default())
}

/// The first entry of the list named `name`, through a lookup built once (asked for every
/// command).
pub(super) fn find(name: &str) -> Option<&'static Entry> {
    static INDEX: OnceLock<NameTable<'static, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let names = list()
            .iter()
            .enumerate()
            .map(|(at, e)| (e.name.as_str(), at));
        NameTable::new(names, |_, _| {})
    });
    index.get(name).map(|at| &list()[at])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn list_file_parses() {
        let parsed = parse_list(LIST);
        assert!(parsed.is_ok(), "{parsed:?}");
        assert_eq!(list().len(), parsed.map_or(0, |l| l.len()));
        assert!(list().iter().any(|e| e.name == "rg"));
    }

    /// The lookup finds the entry the search in list order finds, for every name of the
    /// list and names close to them.
    #[test]
    fn entries_are_found_as_in_order() {
        for entry in list() {
            let name = entry.name.as_str();
            let cut = &name[..name.len() - 1];
            for key in [
                name,
                cut,
                &format!("{name}x"),
                &name.to_uppercase(),
                "git",
                "",
            ] {
                let want = list().iter().find(|e| e.name == key);
                assert_eq!(find(key).map(|e| &e.name), want.map(|e| &e.name), "{key}");
            }
        }
    }
}
