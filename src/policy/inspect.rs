//! The inspection programs (`cat`, `head`, `sed -n`, `rg`, `find`, `jq` …, read-only `git`,
//! Windows `type`): on the built-in list with `[permissions] read_only = "inspect"`, allowed
//! only when every option is on the program's allowlist (`assets/builtin-inspect.txt`) and
//! every word that can name a file stays inside the workspace, lexically, and is not a secret
//! file (`assets/secret-files.txt`, the file tools' list). Owns the option walk, the path rule
//! and the checks of sed scripts, jq filters, find expressions and git subcommands; it sees one
//! simple command's words, already checked for quoting, operators and expansions.
//!
//! Decisions (the issue leaves them open):
//! - **Allowlists everywhere** but for read-only `git`, whose subcommands have hundreds of
//!   options: there the git option table (`assets/allow-options.txt`) plus a few more
//!   (`--show-signature`, `%G` formats: they run gpg) is the denylist, globals are an allowlist,
//!   and `branch` and `cat-file` are allowlists (their other forms write).
//! - **GNU abbreviations ask** (`--out`, `rg --pr`): long options match only in full. git
//!   abbreviates too; its denylist matches every prefix of a listed option.
//! - **Globs** are fine where every expansion starts with the same literal character that is
//!   not `-` (`src/*.rs`, never `*.rs`: a file named `-o.rs` would become an option), no part
//!   can match `..`, and — for programs that print content — no expansion can be a secret
//!   file (`cat src/*.rs` asks: `credentials.rs` would match). `find` and `git` take no globs.
//! - **`sed`** needs `-n`; scripts are line or `/regex/` addresses with `p`, `P`, `=`, `l`,
//!   `q`, `Q` (quitting is as harmless as printing).
//! - **`jq`** filters that `import`, `include` or read the environment (`env`, `$ENV`) ask.
//! - A word starting with `@` asks where a file is expected (binutils read options from it).

use std::path::Path;
use std::sync::OnceLock;

use super::word::{Word, WordKind, glob_could_match};
use super::{Context, OsFamily, git_listings, git_read, options, secret_paths, windows_path};
use crate::workspace;

const LIST: &str = include_str!("../../assets/builtin-inspect.txt");

/// What the words that are not options are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operands {
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
enum Model {
    /// GNU getopt permutes; BSD, macOS and `POSIXLY_CORRECT` stop at the first operand.
    Gnu,
    /// Anywhere, on every system.
    Anywhere,
    /// Only before the first operand.
    First,
}

/// What an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    No,
    Any,
    Number,
    Path,
    /// Only attached (`--color=auto`, `-w80`).
    Optional,
}

/// One program of the list.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    operands: Operands,
    model: Model,
    /// `-NUM` is an option (`head -20`).
    numbers: bool,
    options: Vec<(String, Value)>,
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
fn list() -> &'static [Entry] {
    static LIST_CELL: OnceLock<Vec<Entry>> = OnceLock::new();
    LIST_CELL.get_or_init(|| parse_list(LIST).unwrap_or_default())
}

/// Whether `program` is an inspection program (for the reason when a path form asks).
pub(super) fn knows(os: OsFamily, program: &str) -> bool {
    match os {
        OsFamily::Unix => program == "git" || list().iter().any(|e| e.name == program),
        OsFamily::Windows => program.eq_ignore_ascii_case("type"),
    }
}

/// Checks one simple command against the inspection list: `None` when its program is not an
/// inspection program, `Ok(entry)` when it is allowed, `Err(why)` when it asks.
pub(super) fn check(context: &Context, words: &[Word]) -> Option<Result<String, String>> {
    let (program, args) = words.split_first()?;
    let name = program.known()?;
    if !knows(context.os, name) {
        return None;
    }
    if context.os == OsFamily::Windows {
        return Some(windows_type(context, args).map(|()| "type".to_owned()));
    }
    if name == "git" {
        return Some(git(context, words));
    }
    let entry = list().iter().find(|e| e.name == name)?;
    Some(program_check(context, entry, args))
}

fn program_check(context: &Context, entry: &Entry, args: &[Word]) -> Result<String, String> {
    let name = entry.name.as_str();
    match entry.operands {
        Operands::Jq => return jq(context, entry, args).map(|()| "jq".to_owned()),
        Operands::Find => return find(context, args).map(|()| "find".to_owned()),
        _ if name == "xxd" => return xxd(context, args).map(|()| "xxd".to_owned()),
        _ => {}
    }
    let walked = walk(context, entry, args)?;
    if entry.model == Model::Gnu {
        later_words_as_operands(context, entry, args, &walked.operands)?;
    }
    let mut operands = walked.operands.iter();
    match entry.operands {
        Operands::Files | Operands::Names => {
            let content = entry.operands == Operands::Files;
            for word in operands {
                // `tail +1f FILE`: the old `+NUM[bcl][f]` form, which can follow forever.
                if name == "tail" && word.text.starts_with('+') {
                    return Err(format!(
                        "`tail {}` asks (an old `+NUM` form, which can follow the file)",
                        word.text
                    ));
                }
                path(context, name, word, content)?;
            }
        }
        Operands::OneFile => {
            if walked.operands.len() > 1 {
                return Err(format!(
                    "`{name}` with a second operand writes to it (it is the output file)"
                ));
            }
            for word in operands {
                path(context, name, word, true)?;
            }
        }
        Operands::Search => {
            if !walked.pattern_given {
                let pattern = operands.next();
                if let Some(pattern) = pattern {
                    unexpanding(name, pattern)?;
                }
            }
            // Files whose lines are printed: content paths (a glob that could match a
            // secret asks); a directory is searched, and what is inside is the sandbox's.
            for word in operands {
                path(context, name, word, true)?;
            }
        }
        Operands::Sets => {
            if let Some(word) = operands.find(|w| w.kind != WordKind::Literal) {
                return Err(format!(
                    "`{name}` with a glob (`{}`) is not on the read-only list",
                    word.text
                ));
            }
        }
        Operands::Sed => {
            if !walked.quiet {
                return Err("`sed` is on the read-only list only with `-n`".to_owned());
            }
            let mut scripts = walked.scripts.clone();
            if scripts.is_empty() {
                let Some(script) = operands.next() else {
                    return Err("`sed` without a script".to_owned());
                };
                scripts.push(script.known().unwrap_or("w").to_owned());
            }
            for script in &scripts {
                sed_script(script)?;
            }
            for word in operands {
                path(context, name, word, true)?;
            }
            return Ok("sed -n".to_owned());
        }
        Operands::Jq | Operands::Find => {}
    }
    Ok(name.to_owned())
}

/// The words of a command after its options are walked.
#[derive(Debug, Default)]
struct Walked<'w> {
    operands: Vec<&'w Word>,
    /// `-e`/`-f` (or long forms) gave the pattern (grep, rg).
    pattern_given: bool,
    /// sed `-n`.
    quiet: bool,
    /// sed `-e` scripts.
    scripts: Vec<String>,
}

/// Walks the arguments like getopt (options anywhere until `--`) and accepts only the
/// entry's options; values are checked by kind.
fn walk<'w>(context: &Context, entry: &Entry, args: &'w [Word]) -> Result<Walked<'w>, String> {
    let name = entry.name.as_str();
    let lookup = |option: &str| {
        entry
            .options
            .iter()
            .find(|(o, _)| o == option)
            .map(|(_, v)| *v)
    };
    let not_read_only = |what: &str| format!("`{name}` with `{what}` is not read-only");
    let mut walked = Walked::default();
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
            let option = format!("--{option_name}");
            let value = match (lookup(&option), attached) {
                (Some(Value::No), None) | (Some(Value::Optional), _) => None,
                (Some(kind @ (Value::Any | Value::Number | Value::Path)), attached) => {
                    let value = match attached {
                        Some(v) => v.to_owned(),
                        None => {
                            let next = args
                                .get(i)
                                .ok_or_else(|| format!("`{name} {option}` is missing its value"))?;
                            i += 1;
                            option_value(context, name, next, kind)?;
                            record(&option, next.known());
                            continue;
                        }
                    };
                    value_text(context, name, &value, kind)?;
                    Some(value)
                }
                (Some(Value::No) | None, _) => return Err(not_read_only(&option)),
            };
            record(&option, value.as_deref());
            continue;
        }
        let body = &text[1..];
        if entry.numbers && body.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        for (at, letter) in body.char_indices() {
            let option = format!("-{letter}");
            let rest = &body[at + letter.len_utf8()..];
            match lookup(&option) {
                Some(Value::No) => record(&option, None),
                Some(Value::Optional) => break,
                Some(kind @ (Value::Any | Value::Number | Value::Path)) => {
                    if rest.is_empty() {
                        let next = args
                            .get(i)
                            .ok_or_else(|| format!("`{name} {option}` is missing its value"))?;
                        i += 1;
                        option_value(context, name, next, kind)?;
                        record(&option, next.known());
                    } else {
                        value_text(context, name, rest, kind)?;
                        record(&option, Some(rest));
                    }
                    break;
                }
                None => return Err(not_read_only(&option)),
            }
        }
    }
    Ok(walked)
}

/// The BSD reading of a `gnu` program: options end at the first operand, so every later word
/// the GNU reading took as an option, an option's value or `--` is an operand too. Each must
/// pass as one, and counts: a program with a positional output file (`uniq a -c`) asks.
fn later_words_as_operands(
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
fn is_number(text: &str) -> bool {
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

/// A glob word that the shell could expand into an option asks: every expansion must start
/// with the same literal character, and that character must not be `-`.
fn unexpanding(name: &str, word: &Word) -> Result<(), String> {
    if word.kind == WordKind::Literal {
        return Ok(());
    }
    let first = word.text.chars().next();
    if first.is_none_or(|c| matches!(c, '*' | '?' | '[' | '{' | '-')) {
        return Err(format!(
            "`{name}` with the glob `{}` asks (it could expand to an option)",
            word.text
        ));
    }
    Ok(())
}

/// The path rule: a word that names a file must stay inside the workspace (lexically, from
/// the working directory), and — where the program prints content, or the name is written
/// out — must not be a secret file.
pub(super) fn path(
    context: &Context,
    name: &str,
    word: &Word,
    content: bool,
) -> Result<(), String> {
    let text = word.text.as_str();
    if word.kind == WordKind::Expansion {
        return Err(format!(
            "`{name}` with an expansion is not on the read-only list"
        ));
    }
    if text == "-" || text.is_empty() {
        return Ok(());
    }
    if text.starts_with('@') {
        return Err(format!(
            "`{name}` with `{text}` asks (a word starting with `@` can be a file of options)"
        ));
    }
    let pattern = word.kind == WordKind::Pattern;
    if pattern {
        unexpanding(name, word)?;
        if text
            .split('/')
            .any(|part| is_glob(part) && glob_could_match(part, ".."))
        {
            return Err(format!(
                "`{name}` with the glob `{text}` asks (it could climb out with `..`)"
            ));
        }
    }
    // `workspace::lexically_inside`, keeping the normalised path for the secret check.
    let full = workspace::normalize(&context.cwd, Path::new(text));
    if text.starts_with('~') || !full.starts_with(&context.workspace) {
        return Err(format!(
            "`{name}` names `{text}`, outside the workspace `{}`",
            context.workspace.display()
        ));
    }
    let relative = full.strip_prefix(&context.workspace).unwrap_or(&full);
    if let Some(secret) = context.secrets.matching(relative) {
        return Err(format!(
            "`{name}` names `{text}`, a file that may hold secrets (`{secret}`)"
        ));
    }
    if pattern && content {
        let part = text
            .split('/')
            .filter(|p| is_glob(p))
            .find(|p| secret_paths::shell_component_could_match(context, p))
            .map(str::to_owned)
            .or_else(|| secret_paths::shell_path_could_match(context, &relative.to_string_lossy()));
        if let Some(part) = part {
            return Err(format!(
                "`{name}` with the glob `{text}` asks (`{part}` could match a file that may \
                 hold secrets)"
            ));
        }
    }
    Ok(())
}

fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// A sed script made only of printing commands: `;`-separated commands, each an optional
/// address or range (line numbers, `$`, `first~step`, `+N`, `/regex/` with `I`/`M`), an
/// optional `!`, and one of `p P = l q Q` (`l`, `q`, `Q` may take a number).
fn sed_script(script: &str) -> Result<(), String> {
    let bad = |why: &str| {
        Err(format!(
            "`sed -n` with the script `{script}` is not read-only ({why}; only addresses with \
             p, =, l, q are)"
        ))
    };
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_blanks = |i: &mut usize| {
        while chars.get(*i).is_some_and(|c| *c == ' ' || *c == '\t') {
            *i += 1;
        }
    };
    let mut commands = 0;
    loop {
        skip_blanks(&mut i);
        if i >= chars.len() {
            break;
        }
        if chars[i] == ';' {
            i += 1;
            continue;
        }
        // Address, then an optional second address.
        for second in [false, true] {
            if second {
                if chars.get(i) != Some(&',') {
                    break;
                }
                i += 1;
                if matches!(chars.get(i), Some('+' | '~')) {
                    i += 1;
                }
            }
            match chars.get(i) {
                Some(c) if c.is_ascii_digit() => {
                    while chars.get(i).is_some_and(char::is_ascii_digit) {
                        i += 1;
                    }
                    if chars.get(i) == Some(&'~') {
                        i += 1;
                        while chars.get(i).is_some_and(char::is_ascii_digit) {
                            i += 1;
                        }
                    }
                }
                Some('$') => i += 1,
                Some('/') => {
                    i += 1;
                    loop {
                        match chars.get(i) {
                            None | Some('\n') => return bad("an unclosed regex"),
                            Some('\\') => i += 2,
                            Some('/') => break,
                            Some(_) => i += 1,
                        }
                    }
                    i += 1;
                    while matches!(chars.get(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                _ if second => return bad("a range without its end"),
                _ => {}
            }
        }
        skip_blanks(&mut i);
        if chars.get(i) == Some(&'!') {
            i += 1;
            skip_blanks(&mut i);
        }
        match chars.get(i) {
            Some('p' | 'P' | '=') => i += 1,
            Some('l' | 'q' | 'Q') => {
                i += 1;
                skip_blanks(&mut i);
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
            }
            Some(c) => return bad(&format!("the command `{c}`")),
            None => return bad("an address without a command"),
        }
        commands += 1;
        skip_blanks(&mut i);
        match chars.get(i) {
            None => break,
            Some(';') => i += 1,
            Some(c) => return bad(&format!("`{c}` after a command")),
        }
    }
    if commands == 0 {
        return bad("no command");
    }
    Ok(())
}

/// jq: the entry's flags, `--arg`/`--argjson NAME VALUE`, `--slurpfile`/`--rawfile NAME FILE`
/// and `-f FILE` with the file inside the workspace, `--args`/`--jsonargs`; the filter must
/// not load modules or read the environment; the other operands are files.
fn jq(context: &Context, entry: &Entry, args: &[Word]) -> Result<(), String> {
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

/// xxd's options, matched as whole words (xxd is not getopt: `-ps` is `-p`, not `-p -s`).
const XXD_FLAGS: &[&str] = &[
    "-p",
    "-ps",
    "-plain",
    "-postscript",
    "-a",
    "-autoskip",
    "-C",
    "-capitalize",
    "-e",
    "-i",
    "-include",
    "-u",
    "-uppercase",
    "-b",
    "-bits",
    "-d",
    "-decimal",
];

/// xxd's options that take a number as the next word.
const XXD_NUMBERS: &[&str] = &[
    "-c",
    "-cols",
    "-g",
    "-groupsize",
    "-l",
    "-len",
    "-o",
    "-s",
    "-seek",
];

/// xxd: whole-word options, at most one file (a second operand is written; `-r` writes too).
fn xxd(context: &Context, args: &[Word]) -> Result<(), String> {
    let mut files = 0;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let text = word.text.as_str();
        // Options end at the first operand: `xxd a -p` writes a file named `-p`.
        if files == 0 && XXD_FLAGS.contains(&text) {
            continue;
        }
        if files == 0 && XXD_NUMBERS.contains(&text) {
            let value = args.get(i).and_then(Word::known).unwrap_or("");
            if !is_number(value) {
                return Err(format!("`xxd {text}` takes a number"));
            }
            i += 1;
            continue;
        }
        if files == 0 && text.starts_with('-') && text != "-" {
            return Err(format!("`xxd` with `{text}` is not read-only"));
        }
        files += 1;
        if files > 1 {
            return Err(
                "`xxd` with a second operand writes to it (it is the output file)".to_owned(),
            );
        }
        path(context, "xxd", word, true)?;
    }
    Ok(())
}

/// find's expression words that take no argument.
const FIND_FLAGS: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-true",
    "-false",
    "-empty",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-xdev",
    "-mount",
    "-noleaf",
    "-ignore_readdir_race",
    "-daystart",
    "-not",
    "-a",
    "-and",
    "-o",
    "-or",
    "!",
    "(",
    ")",
    ",",
];

/// find's expression words that take one argument that is not a file.
const FIND_VALUES: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-regextype",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-fstype",
    "-printf",
    "-lname",
    "-ilname",
];

/// find's expression words that take a file (read for its times or identity).
const FIND_FILES: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile"];

/// find: `-P` (not `-H`/`-L`, which follow links out of the workspace), start directories
/// inside the workspace, then only the expression
/// words above (never `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`, `-fls`, `-fprint*`).
fn find(context: &Context, args: &[Word]) -> Result<(), String> {
    if let Some(word) = args.iter().find(|w| w.kind != WordKind::Literal) {
        return Err(format!(
            "`find` with the glob `{}` asks (quote the pattern)",
            word.text
        ));
    }
    let mut i = 0;
    while args.get(i).is_some_and(|w| w.text == "-P") {
        i += 1;
    }
    let starts_expression =
        |w: &Word| w.text.starts_with('-') || matches!(w.text.as_str(), "!" | "(" | ")" | ",");
    while let Some(word) = args.get(i).filter(|w| !starts_expression(w)) {
        path(context, "find", word, false)?;
        i += 1;
    }
    while let Some(word) = args.get(i) {
        i += 1;
        let text = word.text.as_str();
        if FIND_FLAGS.contains(&text) {
            continue;
        }
        let takes_file = FIND_FILES.contains(&text);
        if !takes_file && !FIND_VALUES.contains(&text) {
            return Err(format!("`find` with `{text}` is not read-only"));
        }
        let value = args
            .get(i)
            .ok_or_else(|| format!("`find {text}` is missing its value"))?;
        i += 1;
        if takes_file {
            path(context, "find", value, false)?;
        }
    }
    Ok(())
}

/// git's global options allowed before a read-only subcommand (and `-C` with a path inside
/// the workspace). `--git-dir`, `--work-tree` and `--bare` are not: they make git use a
/// directory of plain files (a bare repository a cloned project can carry) as a repository,
/// with its own configuration (`diff.external`, `core.pager` … run programs). The runner also
/// forces `safe.bareRepository=explicit`, so `-C some.git` cannot find one either.
const GIT_GLOBAL_FLAGS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-replace-objects",
];

/// Read-only git subcommands whose options are checked against the denylist.
const GIT_READERS: &[&str] = &[
    "status",
    "log",
    "show",
    "diff",
    "blame",
    "ls-files",
    "rev-parse",
    "grep",
    "describe",
    "shortlog",
];

/// Options of the read-only subcommands that run programs or write, beyond the git table in
/// `assets/allow-options.txt`; any prefix of one matches (git accepts abbreviations).
const GIT_DENIED: &[(&str, &str)] = &[
    ("--show-signature", "runs gpg"),
    ("--output", "writes a file"),
    ("--ext-diff", "runs the external diff program"),
    ("--textconv", "runs the textconv filters"),
    ("--open-files-in-pager", "runs a pager program"),
    ("--paginate", "runs a pager program"),
    ("--exec", "runs a program"),
];

/// `git branch` options that only list.
const GIT_BRANCH: &[&str] = &[
    "-a",
    "-r",
    "-l",
    "-v",
    "-vv",
    "-i",
    "--list",
    "--all",
    "--remotes",
    "--verbose",
    "--ignore-case",
    "--show-current",
    "--no-color",
    "--no-column",
    "--no-abbrev",
];

/// `git branch` options that take a value and only list.
const GIT_BRANCH_VALUES: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
    "--abbrev",
    "--color",
    "--column",
];

/// Whether a git argument asks for signatures to be checked, which runs `gpg.program`: a
/// `%G` format (also with a `+`, `-` or space modifier: `%-GG`) or the `signature` atom of
/// `--format`/`--sort` (`%(*signature)`, `--sort=signature`).
fn runs_gpg(text: &str) -> bool {
    ["%G", "%+G", "%-G", "% G"]
        .iter()
        .any(|format| text.contains(format))
        || text.to_ascii_lowercase().contains("signature")
}

fn git(context: &Context, words: &[Word]) -> Result<String, String> {
    if let Some(word) = words.iter().find(|w| w.kind != WordKind::Literal) {
        return Err(format!(
            "`git` with the glob `{}` asks (quote pathspecs)",
            word.text
        ));
    }
    let args = &words[1..];
    let mut i = 0;
    // Globals, before the subcommand.
    let sub = loop {
        let Some(word) = args.get(i) else {
            return Err("`git` without a subcommand".to_owned());
        };
        let text = word.text.as_str();
        i += 1;
        if !text.starts_with('-') {
            break text;
        }
        if GIT_GLOBAL_FLAGS.contains(&text) {
            continue;
        }
        let (option, attached) = match text.split_once('=') {
            Some((o, v)) => (o, Some(v)),
            None => (text, None),
        };
        if matches!(option, "--git-dir" | "--work-tree" | "--bare") {
            return Err(format!(
                "`git {option}` may name a repository whose configuration runs programs"
            ));
        }
        if option != "-C" || attached.is_some() {
            return Err(format!("`git {option}` is not on the read-only list"));
        }
        let value = match attached {
            Some(v) => v.to_owned(),
            None => {
                let next = args
                    .get(i)
                    .ok_or_else(|| format!("`git {option}` is missing its value"))?;
                i += 1;
                next.text.clone()
            }
        };
        path(context, "git", &Word::literal(value), false)?;
    };
    let rest = &args[i..];
    let entry = match sub {
        "branch" => {
            git_branch(rest)?;
            "git branch"
        }
        "cat-file" => {
            let form = rest.iter().map(|w| w.text.as_str()).collect::<Vec<_>>();
            if !matches!(form.as_slice(), [flag, _] if matches!(*flag, "-p" | "-t" | "-s" | "-e")) {
                return Err("`git cat-file` is on the read-only list only as `-p`, `-t`, `-s` or `-e` with one object".to_owned());
            }
            "git cat-file"
        }
        reader if GIT_READERS.contains(&reader) => git_reader(reader, rest)?,
        listing if git_listings::knows(listing) => git_listings::check(listing, rest, runs_gpg)?,
        other => return Err(format!("`git {other}` is not on the read-only list")),
    };
    // The git option table (what allow rules do not cover) applies too.
    let covered = words.len() - rest.len();
    if let Some(option) = options::uncovered(OsFamily::Unix, words, covered) {
        return Err(format!("`git` with `{}` {}", option.word, option.effect));
    }
    git_read::check(context, sub, rest)?;
    Ok(entry.to_owned())
}

fn git_reader(sub: &str, rest: &[Word]) -> Result<&'static str, String> {
    for word in rest {
        let text = word.text.as_str();
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let body = long.split('=').next().unwrap_or(long);
            if let Some((option, effect)) = GIT_DENIED
                .iter()
                .find(|(option, _)| body.len() >= 2 && option[2..].starts_with(body))
            {
                return Err(format!("`git {sub}` with `{text}` {effect} (`{option}`)"));
            }
        } else if sub == "grep" && text.starts_with('-') && text[1..].contains('O') {
            return Err(format!(
                "`git grep` with `{text}` runs a pager program (`-O`)"
            ));
        }
        if runs_gpg(text) {
            return Err(format!(
                "`git {sub}` with `{text}` runs gpg (a `%G` format or the `signature` atom)"
            ));
        }
    }
    Ok(GIT_READERS
        .iter()
        .map(|r| match *r {
            "status" => "git status",
            "log" => "git log",
            "show" => "git show",
            "diff" => "git diff",
            "blame" => "git blame",
            "ls-files" => "git ls-files",
            "rev-parse" => "git rev-parse",
            "grep" => "git grep",
            "describe" => "git describe",
            _ => "git shortlog",
        })
        .zip(GIT_READERS)
        .find(|(_, r)| **r == sub)
        .map_or("git", |(entry, _)| entry))
}

fn git_branch(rest: &[Word]) -> Result<(), String> {
    let listing = rest
        .iter()
        .any(|w| matches!(w.text.as_str(), "-l" | "--list"));
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        i += 1;
        let text = word.text.as_str();
        if GIT_BRANCH.contains(&text) {
            continue;
        }
        let option = text.split('=').next().unwrap_or(text);
        if GIT_BRANCH_VALUES.contains(&option) {
            if !text.contains('=') {
                i += 1;
            }
            continue;
        }
        if text.starts_with('-') || !listing {
            return Err(format!(
                "`git branch` with `{text}` is not read-only (only the listing forms are)"
            ));
        }
    }
    Ok(())
}

/// Windows `type FILE …`: relative paths inside the workspace, no wildcards, no drive or
/// stream names, not a secret file.
fn windows_type(context: &Context, args: &[Word]) -> Result<(), String> {
    if args.is_empty() {
        return Err("`type` is on the read-only list only with a file".to_owned());
    }
    for arg in args {
        let word = arg.known().ok_or("`type` with an expansion asks")?;
        // cmd.exe's built-ins split their arguments at `,`, `;` and `=` too: `type a,.env`
        // prints both files.
        for text in word.split([',', ';', '=']).filter(|text| !text.is_empty()) {
            if text.contains(['*', '?', ':', '<', '>', '|']) || text.starts_with(['/', '\\']) {
                return Err(format!(
                    "`type {word}` asks (only a relative path inside the workspace is read-only)"
                ));
            }
            // As Win32 opens it: trailing dots and spaces dropped (`server.pem.`); short
            // names (`ENV~1`) and devices (`src\\nul`, `con.txt`) ask.
            let unix = windows_path::normalise(text)
                .map_err(|why| format!("`type {word}` asks ({why})"))?;
            path(context, "type", &Word::literal(unix), true)?;
        }
    }
    Ok(())
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

    #[test]
    fn sed_scripts() {
        for ok in [
            "1p",
            "120,240p",
            "$p",
            "1~2p",
            "5,+3p",
            "/a/,/b/p",
            "/a\\/b/Ip",
            "10q",
            "=",
            "1,5!p",
            "1p;3p",
            " 2 p ; $= ",
            "l",
            "l 5",
        ] {
            assert_eq!(sed_script(ok), Ok(()), "{ok:?}");
        }
        for bad in [
            "",
            "1w x",
            "1,3d",
            "s/a/b/",
            "s/a/b/w x",
            "1r /etc/passwd",
            "e date",
            "1p;w x",
            "1{p}",
            "/a",
            "1,p",
            "1pp",
            "R x",
            "W x",
        ] {
            assert!(sed_script(bad).is_err(), "{bad:?}");
        }
    }
}
