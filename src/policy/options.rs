//! Options an allow rule does not cover (`assets/allow-options.txt`): after a user's allow
//! rule matches, the words after the rule are checked against per-program tables of options
//! that write files, run code chosen on the command line, change the tool's configuration or
//! read outside the workspace. Owns the table and its matching; the decision is `mod.rs`'s.

use std::sync::OnceLock;

use super::OsFamily;
use super::programs::name_table::NameTable;
use super::word::{Word, program_key};

const TABLE: &str = include_str!("../../assets/allow-options.txt");

/// How an option is written on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Form {
    /// `--name`, `--name=…`, or any abbreviation `--na`; compared by [`long_name`].
    Long(String),
    /// Any long option starting with `--name` (`--inspect*`: `--inspect-wait` …).
    LongFamily(String),
    /// A short option letter, anywhere in a single-dash cluster (`-px`, `-xVALUE`).
    Short(char),
    /// `-name` exactly (also `--name`, `-name=…`, `--name=…`, and Go's `-test.name`).
    SingleDash(String),
    /// Any argument with a `=` that is not an option (make variables, `X!=cmd`, `'A = b'`),
    /// nor the value of one of these options (`dotnet test --filter Category=Unit`).
    Assignment(Vec<String>),
    /// An argument file (`@args.txt`) whose options cannot be seen.
    ArgumentFile,
    /// A path argument outside the workspace: absolute, from `~`, or through `..`.
    OutsidePath,
    /// A long or short option whose value (attached or the next word) passes a check
    /// (`--workspace=../other`, `-w ../other`, `--location=global`).
    Valued(Box<Form>, Value),
    /// An operand besides the one the rule names (`make test deploy`, `mvn test deploy`):
    /// a word that is not an option, an assignment or a number, nor the value of one of these
    /// options (`-pl core`). Applies only when the rule itself names an operand (`make
    /// test`), so that a rule of the program alone (`make`) still covers every target.
    Operand(Vec<String>),
}

/// What an option's value must be for the row to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    /// A path outside the workspace (as [`Form::OutsidePath`]).
    Outside,
    /// Exactly this text.
    Is(String),
    /// Text holding this (`--format=*%G*`: a format that runs gpg).
    Contains(String),
}

impl Value {
    fn matches(&self, value: &str) -> bool {
        match self {
            Value::Outside => is_outside(value),
            Value::Is(text) => value == text,
            Value::Contains(text) => value.contains(text.as_str()),
        }
    }
}

/// A path outside the workspace: absolute, from `~`, or through `..`.
fn is_outside(word: &str) -> bool {
    word.starts_with('/')
        || word.starts_with('~')
        || word.split(['/', '\\']).any(|part| part == "..")
}

/// One table row.
#[derive(Debug, Clone)]
struct Row {
    /// Program names; a trailing `*` matches any name starting with the rest.
    programs: Vec<String>,
    /// A word that must be in the command for the row to apply (`git:format-patch`).
    subcommand: Option<String>,
    /// The option as written in the table (for the reason).
    option: String,
    form: Form,
    /// What the option does.
    effect: String,
}

/// An option an allow rule does not cover, found in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Uncovered {
    /// The word as written in the command (`--output=x`).
    pub(super) word: String,
    /// The option from the table (`--output`).
    pub(super) option: String,
    /// What it does ("writes a file").
    pub(super) effect: String,
    /// The table entry, as `program option` (`git --output`).
    pub(super) entry: String,
}

/// The first word after the first `covered` words of `words` that uses an option from the
/// table of any program named in the command.
pub(super) fn uncovered(os: OsFamily, words: &[Word], covered: usize) -> Option<Uncovered> {
    // Nothing after the rule's words, or nothing known there: no word to find (most calls).
    if !words.iter().skip(covered).any(|w| w.known().is_some()) {
        return None;
    }
    let keys: Vec<std::borrow::Cow<'_, str>> = words
        .iter()
        .filter_map(Word::known)
        .map(|w| program_key(w, os))
        .collect();
    let table = table();
    let candidates = rows_naming(&keys);
    // Whether the rule names an operand after the program (`make test`, not `make -k`).
    let rule_names_operand = words
        .get(1..covered)
        .is_some_and(|rule| rule.iter().any(|w| !w.text.starts_with('-')));
    // The rows that apply, apart by the words they can match (a word starting with `-` or
    // not: [`Form::matches_probe`]); each part in table order, so that the first row a word
    // matches in its part is the first in the table.
    let mut option_rows: Vec<&Row> = Vec::with_capacity(candidates.len());
    let mut other_rows: Vec<&Row> = Vec::new();
    for row in candidates.iter().map(|&at| &table[at]) {
        let applies = row
            .subcommand
            .as_ref()
            .is_none_or(|sub| keys.iter().any(|k| k.as_ref() == sub.as_str()))
            && (rule_names_operand || !matches!(row.form, Form::Operand(_)));
        if applies && row.form.needs_dash() {
            option_rows.push(row);
        } else if applies {
            other_rows.push(row);
        }
    }
    if option_rows.is_empty() && other_rows.is_empty() {
        return None;
    }
    // The long option's name as compared, built once per word into one buffer.
    let mut long = String::new();
    words
        .iter()
        .enumerate()
        .skip(covered)
        .find_map(|(at, word)| {
            let text = word.known()?;
            let next = words.get(at + 1).and_then(Word::known);
            let previous = at.checked_sub(1).and_then(|before| words[before].known());
            let probe = Probe::new(text, next, &mut long);
            let rows = if probe.dash {
                &option_rows
            } else {
                &other_rows
            };
            let row = rows.iter().find(|row| match &row.form {
                Form::Long(name) => probe.long.is_some_and(|body| name.starts_with(body)),
                Form::Operand(values) => is_operand(values, previous, text),
                Form::Assignment(values) => {
                    !probe.dash
                        && text.contains('=')
                        && !previous.is_some_and(|option| values.iter().any(|v| v == option))
                }
                form => form.matches_probe(&probe),
            })?;
            let program = keys
                .iter()
                .find(|k| row.names(k))
                .map_or("", |k| k.as_ref());
            Some(Uncovered {
                word: text.to_owned(),
                option: row.option.clone(),
                effect: row.effect.clone(),
                entry: match &row.subcommand {
                    Some(sub) => format!("{program}:{sub} {}", row.option),
                    None => format!("{program} {}", row.option),
                },
            })
        })
}

/// The rows naming a program of `keys` ([`Row::names`]), in table order, through the index:
/// borrowed from it when one program names them all (most commands), merged otherwise.
fn rows_naming(keys: &[std::borrow::Cow<'_, str>]) -> std::borrow::Cow<'static, [usize]> {
    let (by_name, lists, stems) = index();
    let mut hits = keys
        .iter()
        .filter_map(|k| by_name.get(k).map(|at| lists[at].as_slice()))
        .chain(
            stems
                .iter()
                .filter(|(stem, _)| keys.iter().any(|k| k.starts_with(stem)))
                .map(|(_, rows)| rows.as_slice()),
        );
    let Some(first) = hits.next() else {
        return std::borrow::Cow::Borrowed(&[]);
    };
    let mut rest = hits.filter(|rows| *rows != first).peekable();
    if rest.peek().is_none() {
        return std::borrow::Cow::Borrowed(first);
    }
    let mut rows: Vec<usize> = first.iter().chain(rest.flatten()).copied().collect();
    rows.sort_unstable();
    rows.dedup();
    std::borrow::Cow::Owned(rows)
}

/// The table's rows by exact program name (a lookup of the name gives where its rows are
/// listed), and the rows with a `name*` program by their stem (a key starting with the stem
/// names every row of it), built once; each list in table order. A row's exact names are in
/// the first lists even when it has a stem too, so the rows naming some key are those of its
/// name and those of every stem that starts a key.
type Index = (
    NameTable<'static, usize>,
    Vec<Vec<usize>>,
    Vec<(&'static str, Vec<usize>)>,
);

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut by_name: Vec<(&'static str, Vec<usize>)> = Vec::new();
        let mut stems: Vec<(&'static str, Vec<usize>)> = Vec::new();
        for (at, row) in table().iter().enumerate() {
            for program in &row.programs {
                if let Some(stem) = program.strip_suffix('*') {
                    match stems.iter_mut().find(|(known, _)| *known == stem) {
                        Some((_, rows)) => rows.push(at),
                        None => stems.push((stem, vec![at])),
                    }
                } else {
                    match by_name.iter_mut().find(|(known, _)| known == program) {
                        Some((_, rows)) => rows.push(at),
                        None => by_name.push((program.as_str(), vec![at])),
                    }
                }
            }
        }
        let lookup = NameTable::new(
            by_name
                .iter()
                .enumerate()
                .map(|(at, (name, _))| (*name, at)),
            |_, _| {},
        );
        let lists = by_name.into_iter().map(|(_, rows)| rows).collect();
        (lookup, lists, stems)
    })
}

/// A long option's name as compared: lowercase, without `-` and `_` (`--rootDir`,
/// `--root-dir` and `--root_dir` are one option to jest; tsc ignores case).
fn long_name(name: &str) -> String {
    long_chars(name).collect()
}

/// The characters of [`long_name`].
fn long_chars(name: &str) -> impl Iterator<Item = char> + '_ {
    name.chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .map(|c| c.to_ascii_lowercase())
}

/// Whether `word` is an operand: not an option, an assignment or a number (`make -j 4`),
/// nor the value of an option in `values` (`-pl core`, `--tests Foo`).
fn is_operand(values: &[String], previous: Option<&str>, word: &str) -> bool {
    let value_of_option = previous.is_some_and(|option| values.iter().any(|value| value == option));
    !word.starts_with('-')
        && !word.contains('=')
        && !word.chars().all(|c| c.is_ascii_digit())
        && !value_of_option
}

impl Row {
    fn names(&self, key: &str) -> bool {
        self.programs.iter().any(|p| match p.strip_suffix('*') {
            Some(stem) => key.starts_with(stem),
            None => p == key,
        })
    }
}

/// One word as the forms look at it, read once for every row: whether it starts with `-`,
/// and its long option's name as compared ([`long_name`]) when it is `--name…`.
struct Probe<'w> {
    word: &'w str,
    next: Option<&'w str>,
    dash: bool,
    /// The [`long_name`] of a `--name[=…]` word, `None` when it is empty or not long.
    long: Option<&'w str>,
}

impl<'w> Probe<'w> {
    /// Reads `word`; the long name is written into `buffer` (reused across words).
    fn new(word: &'w str, next: Option<&'w str>, buffer: &'w mut String) -> Self {
        let long = word.strip_prefix("--").and_then(|body| {
            let body = body.split_once('=').map_or(body, |(b, _)| b);
            buffer.clear();
            buffer.extend(long_chars(body));
            (!buffer.is_empty()).then_some(buffer.as_str())
        });
        Probe {
            word,
            next,
            dash: word.starts_with('-'),
            long,
        }
    }
}

impl Form {
    /// Whether only a word starting with `-` can be this option (every form but the argument
    /// file, the path, the assignment and the operand, which need one that does not).
    fn needs_dash(&self) -> bool {
        !matches!(
            self,
            Form::ArgumentFile | Form::OutsidePath | Form::Assignment(_) | Form::Operand(_)
        )
    }

    /// Whether `word` (followed by `next`, for an option's value) is this option.
    #[cfg(test)]
    fn matches(&self, word: &str, next: Option<&str>) -> bool {
        let mut buffer = String::new();
        self.matches_probe(&Probe::new(word, next, &mut buffer))
    }

    /// [`Form::matches`] of a word read once ([`Probe`]): this runs for every word of a
    /// command against every row of its programs. Every form but the argument file, the path
    /// and the operand needs a word starting with `-`; those three need one that does not.
    fn matches_probe(&self, probe: &Probe<'_>) -> bool {
        let word = probe.word;
        match self {
            // `name` starts with the body.
            Form::Long(name) => probe.long.is_some_and(|body| name.starts_with(body)),
            // The body starts with `stem`.
            Form::LongFamily(stem) => probe
                .long
                .is_some_and(|body| body.starts_with(stem.as_str())),
            Form::Short(letter) => {
                probe.dash
                    && !word.starts_with("--")
                    && word.strip_prefix('-').is_some_and(|cluster| {
                        let cluster = cluster.split_once('=').map_or(cluster, |(c, _)| c);
                        cluster.contains(*letter)
                    })
            }
            Form::SingleDash(name) => {
                probe.dash && {
                    let body = word
                        .strip_prefix("--")
                        .or_else(|| word.strip_prefix('-'))
                        .unwrap_or("");
                    let body = body.split_once('=').map_or(body, |(b, _)| b);
                    body.strip_prefix("test.").unwrap_or(body) == name
                }
            }
            Form::Assignment(_) => !probe.dash && word.contains('='),
            Form::ArgumentFile => word.starts_with('@') && word.len() > 1,
            Form::OutsidePath => !probe.dash && is_outside(word),
            Form::Operand(values) => !probe.dash && is_operand(values, None, word),
            Form::Valued(option, value) => {
                if !probe.dash || !option.matches_probe(probe) {
                    return false;
                }
                let attached = match option.as_ref() {
                    Form::Short(letter) => word
                        .trim_start_matches('-')
                        .split_once(*letter)
                        .map(|(_, rest)| rest.strip_prefix('=').unwrap_or(rest))
                        .filter(|rest| !rest.is_empty()),
                    _ => word.split_once('=').map(|(_, rest)| rest),
                };
                attached.or(probe.next).is_some_and(|v| value.matches(v))
            }
        }
    }
}

/// The parsed table. A table that does not parse (a bug, caught by the tests) reads as one
/// row matching every option of every program: every allow rule then asks for options.
fn table() -> &'static [Row] {
    static TABLE_ROWS: OnceLock<Vec<Row>> = OnceLock::new();
    TABLE_ROWS.get_or_init(|| {
        parse_table(TABLE).unwrap_or_else(|_| {
            vec![Row {
                programs: vec!["*".to_owned()],
                subcommand: None,
                option: "-".to_owned(),
                form: Form::Long(String::new()),
                effect: "cannot be checked (the option table is broken; this is a bug)".to_owned(),
            }]
        })
    })
}

/// The words joined by one space (the rest of a table line), without a list of them.
fn joined<'t>(words: impl Iterator<Item = &'t str>, capacity: usize) -> String {
    let mut text = String::with_capacity(capacity);
    for word in words {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(word);
    }
    text
}

fn parse_table(text: &str) -> Result<Vec<Row>, String> {
    let mut single_dash: Vec<String> = Vec::new();
    // `option-values PROGRAMS OPTION…`: options whose next word is their value, not an operand.
    let mut option_values: Vec<(String, Vec<String>)> = Vec::new();
    let mut rows = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(programs), Some(option)) = (fields.next(), fields.next()) else {
            return Err(format!(
                "line {}: expected PROGRAMS OPTION EFFECT",
                number + 1
            ));
        };
        if programs == "single-dash" {
            single_dash.extend(line.split_whitespace().skip(1).map(str::to_owned));
            continue;
        }
        if programs == "option-values" {
            let values: Vec<String> = line.split_whitespace().skip(2).map(str::to_owned).collect();
            for program in option.split(',') {
                option_values.push((program.to_owned(), values.clone()));
            }
            continue;
        }
        let effect = joined(fields, line.len());
        if effect.is_empty() {
            return Err(format!(
                "line {}: `{option}` has no effect text",
                number + 1
            ));
        }
        let (programs, subcommand) = match programs.split_once(':') {
            Some((p, sub)) => (p, Some(sub.to_owned())),
            None => (programs, None),
        };
        let programs: Vec<String> = programs.split(',').map(str::to_owned).collect();
        let dashless = programs.iter().all(|p| single_dash.contains(p));
        let (option, value) = match option.split_once('=') {
            Some((name, "PATH")) if name.starts_with('-') => (name, Some(Value::Outside)),
            Some((name, text))
                if name.starts_with('-')
                    && text.len() > 2
                    && text.starts_with('*')
                    && text.ends_with('*') =>
            {
                (
                    name,
                    Some(Value::Contains(text[1..text.len() - 1].to_owned())),
                )
            }
            Some((name, text)) if name.starts_with('-') && !text.is_empty() => {
                (name, Some(Value::Is(text.to_owned())))
            }
            _ => (option, None),
        };
        let values = || {
            option_values
                .iter()
                .filter(|(program, _)| programs.contains(program))
                .flat_map(|(_, values)| values.iter().cloned())
                .collect()
        };
        let form = if option == "OPERAND" {
            Form::Operand(values())
        } else if option == "VAR=" {
            Form::Assignment(values())
        } else if option == "@FILE" {
            Form::ArgumentFile
        } else if option == "PATH" {
            Form::OutsidePath
        } else if let Some(stem) = option.strip_prefix("--").and_then(|o| o.strip_suffix('*')) {
            Form::LongFamily(long_name(stem))
        } else if let Some(long) = option.strip_prefix("--") {
            Form::Long(long_name(long))
        } else if let Some(short) = option.strip_prefix('-') {
            let mut letters = short.chars();
            match (letters.next(), letters.next()) {
                (Some(letter), None) if !dashless => Form::Short(letter),
                (Some(_), _) => Form::SingleDash(short.to_owned()),
                (None, _) => return Err(format!("line {}: empty option", number + 1)),
            }
        } else {
            return Err(format!("line {}: `{option}` is not an option", number + 1));
        };
        let form = match value {
            Some(value) => Form::Valued(Box::new(form), value),
            None => form,
        };
        rows.push(Row {
            programs,
            subcommand,
            option: option.to_owned(),
            form,
            effect,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(command: &str) -> Vec<Word> {
        command.split_whitespace().map(Word::literal).collect()
    }

    /// The first row naming a program of the command that a word after `covered` uses, found
    /// the plain way: every row of the table in order, long names compared as [`long_name`]s.
    fn uncovered_reference(words: &[Word], covered: usize) -> Option<String> {
        let keys: Vec<String> = words
            .iter()
            .filter_map(Word::known)
            .map(|w| program_key(w, OsFamily::Unix).into_owned())
            .collect();
        let rule_names_operand = words
            .get(1..covered)
            .is_some_and(|rule| rule.iter().any(|w| !w.text.starts_with('-')));
        let rows: Vec<&Row> = table()
            .iter()
            .filter(|row| keys.iter().any(|k| row.names(k)))
            .filter(|row| {
                row.subcommand.as_ref().is_none_or(|sub| keys.contains(sub))
                    && (rule_names_operand || !matches!(row.form, Form::Operand(_)))
            })
            .collect();
        let long = |word: &str| {
            let body = word.strip_prefix("--")?;
            let body = long_name(body.split_once('=').map_or(body, |(b, _)| b));
            (!body.is_empty()).then_some(body)
        };
        let matches = |form: &Form, word: &str, next: Option<&str>| match form {
            Form::Long(name) => long(word).is_some_and(|body| name.starts_with(&body)),
            Form::LongFamily(stem) => {
                long(word).is_some_and(|body| body.starts_with(stem.as_str()))
            }
            Form::Valued(..) | Form::Short(_) | Form::SingleDash(_) | Form::ArgumentFile => {
                let mut buffer = String::new();
                form.matches_probe(&Probe::new(word, next, &mut buffer))
            }
            Form::OutsidePath => !word.starts_with('-') && is_outside(word),
            Form::Operand(_) | Form::Assignment(_) => unreachable!(),
        };
        words
            .iter()
            .enumerate()
            .skip(covered)
            .find_map(|(at, word)| {
                let text = word.known()?;
                let next = words.get(at + 1).and_then(Word::known);
                let previous = at.checked_sub(1).and_then(|before| words[before].known());
                let row = rows.iter().find(|row| match &row.form {
                    Form::Operand(values) => is_operand(values, previous, text),
                    Form::Assignment(values) => {
                        !text.starts_with('-')
                            && text.contains('=')
                            && !previous.is_some_and(|option| values.iter().any(|v| v == option))
                    }
                    form => matches(form, text, next),
                })?;
                let program = keys
                    .iter()
                    .find(|k| row.names(k))
                    .map_or("", String::as_str);
                Some(match &row.subcommand {
                    Some(sub) => format!("{text} {program}:{sub} {}", row.option),
                    None => format!("{text} {program} {}", row.option),
                })
            })
    }

    /// The uncovered option is the one the plain search finds, for generated commands: the
    /// table's programs, subcommands and options (cut, cased, with values), numbers,
    /// assignments, paths, argument files and other words, after rules of every length.
    #[test]
    fn uncovered_finds_what_the_plain_search_finds() {
        use proptest::prelude::*;
        let mut names: Vec<String> = table()
            .iter()
            .flat_map(|row| row.programs.iter().map(|p| p.replace('*', "3.12")))
            .chain(table().iter().filter_map(|row| row.subcommand.clone()))
            .collect();
        names.extend(["log", "test", "run", "build", "-m", "pytest", "--"].map(str::to_owned));
        let options: Vec<String> = table().iter().map(|row| row.option.clone()).collect();
        let word = prop_oneof![
            prop::sample::select(names),
            (prop::sample::select(options), 0..4usize, 0..6usize).prop_map(
                |(option, cut, tail)| {
                    let end = option.len().saturating_sub(cut).max(2).min(option.len());
                    let option = option.get(..end).unwrap_or(&option).to_owned();
                    let tails = ["", "=x", "=/abs", "=../up", "X", "_x"];
                    let upper = if cut == 3 {
                        option.to_ascii_uppercase()
                    } else {
                        option
                    };
                    format!("{upper}{}", tails[tail])
                }
            ),
            "[a-z0-9@/~.=_-]{0,8}",
            "-[a-zA-Z]{1,3}(=[a-z/.]{0,3})?",
            "--[a-zA-Z_-]{1,10}(=[%a-zG/.]{0,4})?",
        ];
        let words = prop::collection::vec(word, 1..7);
        let mut runner = proptest::test_runner::TestRunner::default();
        let found = std::cell::Cell::new(0usize);
        runner
            .run(&(words, 0..8usize), |(texts, covered)| {
                let words: Vec<Word> = texts.iter().map(Word::literal).collect();
                let got = uncovered(OsFamily::Unix, &words, covered)
                    .map(|u| format!("{} {}", u.word, u.entry));
                let want = uncovered_reference(&words, covered);
                found.set(found.get() + usize::from(want.is_some()));
                prop_assert_eq!(got, want, "{:?}", texts);
                Ok(())
            })
            .expect("uncovered finds what the plain search finds");
        assert!(
            found.get() > 0,
            "no generated command has an uncovered option"
        );
    }

    /// The index finds exactly the rows that name one of the keys, for generated keys (every
    /// program of the table, stems with tails, cut names, other words).
    #[test]
    fn the_index_finds_the_rows_naming_a_key() {
        use proptest::prelude::*;
        let programs: Vec<String> = table()
            .iter()
            .flat_map(|row| row.programs.iter().cloned())
            .collect();
        let key = prop_oneof![
            prop::sample::select(programs.clone()),
            (prop::sample::select(programs), "[a-z0-9.*]{0,3}", 0..4usize).prop_map(
                |(program, tail, cut)| {
                    let stem = program.trim_end_matches('*');
                    let end = stem.len().saturating_sub(cut);
                    format!("{}{tail}", stem.get(..end).unwrap_or(stem))
                }
            ),
            "[a-z.]{0,8}",
        ];
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(&prop::collection::vec(key, 0..5), |keys| {
                let keys: Vec<std::borrow::Cow<'_, str>> = keys
                    .iter()
                    .map(|k| std::borrow::Cow::Borrowed(k.as_str()))
                    .collect();
                let want: Vec<usize> = table()
                    .iter()
                    .enumerate()
                    .filter(|(_, row)| keys.iter().any(|k| row.names(k)))
                    .map(|(at, _)| at)
                    .collect();
                prop_assert_eq!(rows_naming(&keys), want, "{:?}", keys);
                Ok(())
            })
            .expect("the index finds the rows");
    }

    /// Long options are compared without allocating; the answers are those of comparing the
    /// [`long_name`]s, for every long row of the table and generated words.
    #[test]
    fn long_options_match_as_their_long_names() {
        use proptest::prelude::*;
        let reference = |form: &Form, word: &str| {
            let Some(body) = word.strip_prefix("--") else {
                return false;
            };
            let body = long_name(body.split_once('=').map_or(body, |(b, _)| b));
            match form {
                Form::Long(name) => !body.is_empty() && name.starts_with(&body),
                Form::LongFamily(stem) => !body.is_empty() && body.starts_with(stem.as_str()),
                _ => unreachable!(),
            }
        };
        let rows: Vec<&Row> = table()
            .iter()
            .filter(|row| matches!(row.form, Form::Long(_) | Form::LongFamily(_)))
            .collect();
        let mut runner = proptest::test_runner::TestRunner::default();
        let words = prop_oneof![
            "--[a-zA-Z_=-]{0,12}",
            prop::sample::select(rows.clone()).prop_flat_map(|row| {
                let option = row.option.clone();
                (0..=option.len(), "[=_A-Z-]{0,3}").prop_map(move |(cut, tail)| {
                    let cut = option
                        .char_indices()
                        .nth(cut)
                        .map_or(option.len(), |(i, _)| i);
                    format!("{}{tail}", &option[..cut])
                })
            }),
        ];
        runner
            .run(&words, |word| {
                for row in &rows {
                    prop_assert_eq!(
                        row.form.matches(&word, None),
                        reference(&row.form, &word),
                        "{} against {:?}",
                        word,
                        row.form
                    );
                }
                Ok(())
            })
            .expect("long options match alike");
    }

    #[test]
    fn the_table_parses() {
        let rows = parse_table(TABLE).expect("assets/allow-options.txt parses");
        assert!(rows.len() > 80, "{} rows", rows.len());
        let go_o = rows
            .iter()
            .find(|r| r.programs == ["go"] && r.option == "-o")
            .expect("go -o");
        assert_eq!(go_o.form, Form::SingleDash("o".to_owned()));
    }

    #[test]
    #[allow(clippy::too_many_lines)] // one table
    fn options_after_the_rule_are_found() {
        let cases: &[(&str, usize, Option<&str>)] = &[
            ("git log --output=/tmp/x", 2, Some("git --output")),
            ("git log --out=/tmp/x", 2, Some("git --output")),
            ("git log --oneline", 2, None),
            ("git log -p --ext-diff", 2, Some("git --ext-diff")),
            ("git diff --no-index a b", 2, Some("git --no-index")),
            (
                "git format-patch -o out HEAD~1",
                2,
                Some("git:format-patch -o"),
            ),
            ("git ls-files -o", 2, None),
            ("git log --output=x", 3, None),
            (
                "cargo test --config target.x.runner=['sh']",
                2,
                Some("cargo --config"),
            ),
            (
                "cargo check --config=build.rustflags=x",
                2,
                Some("cargo --config"),
            ),
            ("cargo test -- --nocapture", 2, None),
            ("make SHELL=/bin/sh .SHELLFLAGS=-c", 1, Some("make VAR=")),
            ("make test", 1, None),
            ("make -j4 test", 1, None),
            ("make -f evil.mk", 1, Some("make -f")),
            (
                "npm test --node-options=--require=x",
                2,
                Some("npm --node-options"),
            ),
            ("npx jest --node-options=x", 2, Some("npx --node-options")),
            (
                "python -m pytest --basetemp=/home",
                3,
                Some("python --basetemp"),
            ),
            ("python3.12 -m pytest -m slow", 3, None),
            ("python -c print(1)", 1, Some("python -c")),
            ("go test -exec evil ./...", 2, Some("go -exec")),
            ("go test -count=1 -json -timeout=5s", 2, None),
            ("go build -o /tmp/x", 2, Some("go -o")),
            ("node -e x", 1, Some("node -e")),
            ("docker run -it -v /:/host alpine", 2, Some("docker -v")),
            (
                "docker run --privileged alpine",
                2,
                Some("docker --privileged"),
            ),
            ("docker run --rm alpine", 2, None),
            ("ls --output", 1, None),
            (
                "node --experimental_loader=data:x x.js",
                1,
                Some("node --experimental-loader"),
            ),
            (
                "node --inspect_brk=0.0.0.0:9229 x.js",
                1,
                Some("node --inspect*"),
            ),
            (
                "node --inspect-wait=0.0.0.0:9229 x.js",
                1,
                Some("node --inspect*"),
            ),
            ("node x.js", 1, None),
            ("make X@!=/tmp/evil.sh", 1, Some("make VAR=")),
            ("make SHELL = /tmp/evil.sh", 1, Some("make VAR=")),
            (
                "git diff /home/u/.ssh/id_rsa /dev/null",
                2,
                Some("git:diff PATH"),
            ),
            ("git diff ~/.ssh/id_rsa", 2, Some("git:diff PATH")),
            ("git diff ../other/x", 2, Some("git:diff PATH")),
            ("git diff src/main.rs", 2, None),
            ("git log ../x", 2, None),
            (
                "go test -test.cpuprofile=/root/.bashrc ./...",
                2,
                Some("go -cpuprofile"),
            ),
            (
                "cargo test -- --logfile /root/.bashrc",
                2,
                Some("cargo --logfile"),
            ),
            (
                "python -m pytest --config-file=/tmp/x.ini",
                3,
                Some("python --config-file"),
            ),
            (
                "python -m pytest --log-file=/root/.bashrc",
                3,
                Some("python --log-file"),
            ),
            ("python -m pytest --log-file-level=INFO", 3, None),
            (
                "python -m pytest --pastebin=all",
                3,
                Some("python --pastebin"),
            ),
            ("python -m pytest @args.txt", 3, Some("python @FILE")),
            (
                "docker run --env-file /root/.aws/credentials alpine",
                2,
                Some("docker --env-file"),
            ),
            (
                "docker run -p 0.0.0.0:2375:2375 alpine",
                2,
                Some("docker -p"),
            ),
            ("npm test -C ../other", 2, Some("npm -C")),
            ("git log --show-signature", 2, Some("git --show-signature")),
            ("git log --show-sig", 2, Some("git --show-signature")),
            ("git log --format=%G?", 2, Some("git --format")),
            ("git log --format tformat:%GK", 2, Some("git --format")),
            ("git log --form=%GS", 2, Some("git --format")),
            ("git log --format=%-GG", 2, Some("git --format")),
            ("git show --pretty=format:%+GS", 2, Some("git --pretty")),
            (
                "git for-each-ref --format=%(*signature)",
                2,
                Some("git --format"),
            ),
            ("git for-each-ref --sort=signature", 2, Some("git --sort")),
            ("git tag -l --sort=-signature", 2, Some("git --sort")),
            ("git show --pretty=format:%G?", 2, Some("git --pretty")),
            (
                "git for-each-ref --format=%(signature)",
                2,
                Some("git --format"),
            ),
            ("git log --format=%H%n%s", 2, None),
            ("git tag -v v1", 2, Some("git:tag -v")),
            ("npm run build -w ../other", 3, Some("npm -w")),
            ("npm run build -w../other", 3, Some("npm -w")),
            ("npm run build -w=/abs", 3, Some("npm -w")),
            (
                "npm run build --workspace=../other",
                3,
                Some("npm --workspace"),
            ),
            (
                "npm run build --workspace ../other",
                3,
                Some("npm --workspace"),
            ),
            ("npm run build --workspace=packages/a", 3, None),
            ("npm run build -w packages/a", 3, None),
            ("npm run build --workspaces", 3, None),
            ("npm run build -g", 3, Some("npm -g")),
            ("npm run build --global", 3, Some("npm --global")),
            ("npm run build --location=global", 3, Some("npm --location")),
            ("npm run build --location global", 3, Some("npm --location")),
            ("npm run build --location=project", 3, None),
            ("pnpm run build --filter=../other", 3, Some("pnpm --filter")),
            // Another target, phase or task than the rule names (only when it names one).
            ("make test deploy", 2, Some("make OPERAND")),
            ("make test -j 4 -k", 2, None),
            ("make test install", 1, None),
            ("make -k install", 2, None),
            ("mvn test -pl core -P fast -T 4", 2, None),
            ("mvn test deploy", 2, Some("mvn OPERAND")),
            ("mvn test org.x:evil:1.0:run", 2, Some("mvn OPERAND")),
            ("mvn test -DskipTests", 2, Some("mvn -D")),
            ("mvn test -fae", 2, None),
            ("mvn test -f /tmp/pom.xml", 2, Some("mvn -f")),
            ("./gradlew test --tests com.x.FooTest -x lint", 2, None),
            ("./gradlew test publish", 2, Some("gradlew OPERAND")),
            (
                "./gradlew test --init-script=/tmp/x.gradle",
                2,
                Some("gradlew --init-script"),
            ),
            // Long options without regard to case, `-` and `_`.
            ("npx jest --root-dir=/tmp", 2, Some("jest --rootDir")),
            ("npx jest --rootdir /tmp", 2, Some("jest --rootDir")),
            (
                "npx jest --setup-files-after-env=x.js",
                2,
                Some("jest --setupFiles*"),
            ),
            ("npx jest --coverage", 2, None),
            ("npx tsc --noEmit -p tsconfig.json", 2, None),
            ("npx tsc --OUTDIR /tmp/x", 2, Some("tsc PATH")),
            ("npx eslint --fix .", 2, Some("eslint --fix")),
            ("npx eslint -f json src", 2, None),
            ("dotnet test /p:PostBuildEvent=x", 2, Some("dotnet VAR=")),
            ("dotnet test /p:Foo", 2, Some("dotnet PATH")),
            (
                "dotnet test -- RunConfiguration.TestAdaptersPaths=/tmp",
                2,
                Some("dotnet VAR="),
            ),
            ("dotnet test --filter Category=Unit", 2, None),
            ("go test -compiler gccgo ./...", 2, Some("go -compiler")),
            (
                "python3 -m pytest --pyargs pkg",
                3,
                Some("python3 --pyargs"),
            ),
            ("python3 -m pytest /tmp/test_x.py", 3, Some("pytest PATH")),
            ("python3 -m pytest -x tests/ -k slow", 3, None),
        ];
        for (command, covered, want) in cases {
            let got = uncovered(OsFamily::Unix, &words(command), *covered).map(|u| u.entry);
            assert_eq!(got.as_deref(), *want, "{command:?} after {covered} words");
        }
    }
}
