//! Read-only `git`: allowed globals, then a reading subcommand whose options pass the
//! denylist (`branch` and the listings by allowlist).

use super::super::path_rule::path;
use super::super::word::{Word, WordKind};
use super::super::{Context, OsFamily, git_listings, git_read, options};

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
    // Every format holds a `%`, and the atom is nine letters: most words are ruled out
    // without a search or a copy.
    (text.contains('%')
        && ["%G", "%+G", "%-G", "% G"]
            .iter()
            .any(|format| text.contains(format)))
        || (text.len() >= "signature".len() && text.to_ascii_lowercase().contains("signature"))
}

pub(super) fn git(context: &Context, words: &[Word]) -> Result<String, String> {
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
