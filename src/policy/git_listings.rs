//! Read-only git plumbing and listings on the inspect list: `merge-base`, `rev-list`,
//! `ls-tree`, `for-each-ref`, `show-ref`, `name-rev`, `reflog` (show, list, exists),
//! `stash list`/`stash show` (summaries), `worktree list`, `remote` (names), `config` (one
//! key that cannot hold a credential), `version`. Each has an option allowlist here; the caller
//! (`inspect`) has read the global options and checks every later word against the git
//! option table and the path and secret rules. Owns only these allowlists.
//!
//! Decisions (the issue leaves them open):
//! - **URLs and credentials ask**: `git remote -v`, `remote get-url`, `remote show` (it also
//!   contacts the remote) and `config --list`/`--get-regexp` print URLs and values that may
//!   embed a token (`https://user:token@host/…`, `http.extraHeader`, `url.*.insteadOf`);
//!   `config --get KEY` asks for any key naming a URL, token, password, secret, credential,
//!   header, cookie, proxy or key. Nothing is redacted: what is printed is what git prints.
//! - **`stash show`** only with a summary option (`--stat`, `--name-only` …): without one it
//!   prints the patch when `stash.showPatch` is set, and a patch is content that may hold a
//!   secret, as for `git show`.
//! - **`reflog`** only bare, `show`, `list` or `exists` (`expire`, `delete`, `drop` write).

use super::word::Word;

/// One allowed option: its spelling and whether it takes a value (`--x=v` or the next word).
type Spec = (&'static str, bool);

/// Log-like options that only select or format commits (no patch, no program).
const LOG_OPTIONS: &[Spec] = &[
    ("--all", false),
    ("--branches", false),
    ("--tags", false),
    ("--remotes", false),
    ("--oneline", false),
    ("--abbrev-commit", false),
    ("--no-abbrev-commit", false),
    ("--date", true),
    ("--max-count", true),
    ("-n", true),
    ("--skip", true),
    ("--since", true),
    ("--after", true),
    ("--until", true),
    ("--before", true),
    ("--author", true),
    ("--committer", true),
    ("--grep", true),
    ("--merges", false),
    ("--no-merges", false),
    ("--first-parent", false),
    ("--reverse", false),
    ("--topo-order", false),
    ("--date-order", false),
    ("--format", true),
    ("--pretty", true),
];

const MERGE_BASE: &[Spec] = &[
    ("-a", false),
    ("--all", false),
    ("--octopus", false),
    ("--independent", false),
    ("--is-ancestor", false),
    ("--fork-point", false),
];

const REV_LIST_EXTRA: &[Spec] = &[
    ("--count", false),
    ("--objects", false),
    ("--left-right", false),
    ("--cherry-pick", false),
    ("--cherry-mark", false),
    ("--boundary", false),
    ("--ancestry-path", false),
    ("--parents", false),
    ("--children", false),
    ("--timestamp", false),
    ("--no-walk", false),
    ("--not", false),
    ("--min-parents", true),
    ("--max-parents", true),
    ("--abbrev", true),
];

const LS_TREE: &[Spec] = &[
    ("-r", false),
    ("-t", false),
    ("-d", false),
    ("-l", false),
    ("-z", false),
    ("--long", false),
    ("--name-only", false),
    ("--name-status", false),
    ("--object-only", false),
    ("--full-name", false),
    ("--full-tree", false),
    ("--abbrev", true),
    ("--format", true),
];

const FOR_EACH_REF: &[Spec] = &[
    ("--count", true),
    ("--sort", true),
    ("--format", true),
    ("--shell", false),
    ("--perl", false),
    ("--python", false),
    ("--tcl", false),
    ("--points-at", true),
    ("--merged", true),
    ("--no-merged", true),
    ("--contains", true),
    ("--no-contains", true),
    ("--ignore-case", false),
    ("--omit-empty", false),
    ("--exclude", true),
];

const SHOW_REF: &[Spec] = &[
    ("--head", false),
    ("--heads", false),
    ("--branches", false),
    ("--tags", false),
    ("-d", false),
    ("--dereference", false),
    ("-s", false),
    ("--hash", false),
    ("--abbrev", false),
    ("--verify", false),
    ("-q", false),
    ("--quiet", false),
    ("--exists", false),
];

const NAME_REV: &[Spec] = &[
    ("--tags", false),
    ("--refs", true),
    ("--exclude", true),
    ("--all", false),
    ("--name-only", false),
    ("--no-undefined", false),
    ("--always", false),
];

/// `git stash show` summaries (names and counts, no content).
const STASH_SUMMARIES: &[Spec] = &[
    ("--stat", false),
    ("--name-only", false),
    ("--name-status", false),
    ("--numstat", false),
    ("--shortstat", false),
    ("--summary", false),
];

const STASH_SHOW_EXTRA: &[Spec] = &[
    ("-u", false),
    ("--include-untracked", false),
    ("--only-untracked", false),
];

const WORKTREE_LIST: &[Spec] = &[
    ("--porcelain", false),
    ("-v", false),
    ("--verbose", false),
    ("-z", false),
];

const CONFIG: &[Spec] = &[
    ("--get", false),
    ("--get-all", false),
    ("--global", false),
    ("--system", false),
    ("--local", false),
    ("--worktree", false),
    ("--show-origin", false),
    ("--show-scope", false),
    ("--null", false),
    ("-z", false),
    ("--type", true),
    ("--bool", false),
    ("--int", false),
    ("--path", false),
    ("--default", true),
];

/// Words in a configuration key whose value may be or embed a credential.
const SENSITIVE_KEY_WORDS: &[&str] = &[
    "url",
    "insteadof",
    "token",
    "pass",
    "secret",
    "credential",
    "header",
    "cookie",
    "proxy",
    "key",
    "auth",
];

/// Whether `sub` is one of these listings.
pub(super) fn knows(sub: &str) -> bool {
    matches!(
        sub,
        "merge-base"
            | "rev-list"
            | "ls-tree"
            | "for-each-ref"
            | "show-ref"
            | "name-rev"
            | "reflog"
            | "stash"
            | "worktree"
            | "remote"
            | "config"
            | "version"
    )
}

/// Checks the words after the subcommand: the entry that allows them, or why they ask.
/// `runs_gpg` tells a word that makes git check signatures (the caller's rule).
pub(super) fn check(
    sub: &str,
    rest: &[Word],
    runs_gpg: fn(&str) -> bool,
) -> Result<&'static str, String> {
    let words: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
    if let Some(word) = words.iter().find(|w| runs_gpg(w)) {
        return Err(format!(
            "`git {sub}` with `{word}` runs gpg (a `%G` format or the `signature` atom)"
        ));
    }
    match sub {
        "merge-base" => options(sub, &words, &[MERGE_BASE]).map(|_| "git merge-base"),
        "rev-list" => options(sub, &words, &[LOG_OPTIONS, REV_LIST_EXTRA]).map(|_| "git rev-list"),
        "ls-tree" => options(sub, &words, &[LS_TREE]).map(|_| "git ls-tree"),
        "for-each-ref" => options(sub, &words, &[FOR_EACH_REF]).map(|_| "git for-each-ref"),
        "show-ref" => options(sub, &words, &[SHOW_REF]).map(|_| "git show-ref"),
        "name-rev" => options(sub, &words, &[NAME_REV]).map(|_| "git name-rev"),
        "reflog" => reflog(&words),
        "stash" => stash(&words),
        "worktree" => match words.split_first() {
            Some((&"list", rest)) => {
                options("worktree list", rest, &[WORKTREE_LIST])?;
                no_operands("worktree list", rest, &[WORKTREE_LIST])?;
                Ok("git worktree list")
            }
            _ => Err("`git worktree` is on the read-only list only as `list`".to_owned()),
        },
        "remote" => {
            if words.is_empty() {
                Ok("git remote")
            } else {
                Err(
                    "`git remote` is on the read-only list only without arguments (`-v`, \
                     `get-url` and `show` print URLs, which may embed a credential; `show` \
                     also contacts the remote)"
                        .to_owned(),
                )
            }
        }
        "config" => config(&words),
        "version" => match words.as_slice() {
            [] | ["--build-options"] => Ok("git version"),
            _ => Err("`git version` takes no arguments but `--build-options`".to_owned()),
        },
        _ => Err(format!("`git {sub}` is not on the read-only list")),
    }
}

/// Walks the options against the allowlists and returns the operands. `-NUM` counts (`-10`)
/// and single-letter flags combine (`-rt`) as git reads them; after `--` only operands.
fn options<'w>(
    sub: &str,
    words: &[&'w str],
    lists: &[&'static [Spec]],
) -> Result<Vec<&'w str>, String> {
    let find = |name: &str| {
        lists
            .iter()
            .flat_map(|l| l.iter())
            .find(|(n, _)| *n == name)
    };
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(&word) = words.get(i) {
        i += 1;
        if word == "--" {
            operands.extend_from_slice(&words[i..]);
            break;
        }
        if !word.starts_with('-') || word == "-" {
            operands.push(word);
            continue;
        }
        if word.len() > 1 && word[1..].bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let (name, attached) = match word.split_once('=') {
            Some((name, _)) if word.starts_with("--") => (name, true),
            _ => (word, false),
        };
        if let Some((_, takes_value)) = find(name) {
            if *takes_value && !attached {
                words
                    .get(i)
                    .ok_or_else(|| format!("`git {sub} {name}` is missing its value"))?;
                i += 1;
            } else if !*takes_value && attached {
                return Err(format!("`git {sub} {name}` takes no value"));
            }
            continue;
        }
        // Combined short flags without values (`-rt`), or a short option with its value
        // attached (`-n5`).
        let short = !word.starts_with("--") && word.len() > 2;
        let letters_ok = short && short_letters(word, &find);
        if !letters_ok {
            return Err(format!(
                "`git {sub}` with `{word}` is not on the read-only list (only listing options are)"
            ));
        }
    }
    Ok(operands)
}

/// Whether a word of single letters (`-rt`) holds only flags without values, or is one value
/// option with a number attached (`-n5`).
fn short_letters(word: &str, find: &dyn Fn(&str) -> Option<&'static Spec>) -> bool {
    let letters = &word[1..];
    letters
        .chars()
        .all(|c| find(&format!("-{c}")).is_some_and(|(_, value)| !*value))
        // `-é`: byte 2 may fall inside a character; only a whole two-character head is looked up.
        || word.get(..2).and_then(find).is_some_and(|(_, value)| *value)
            && word[2..].bytes().all(|b| b.is_ascii_digit())
}

fn no_operands(sub: &str, words: &[&str], lists: &[&'static [Spec]]) -> Result<(), String> {
    match options(sub, words, lists)?.first() {
        Some(operand) => Err(format!("`git {sub}` with the operand `{operand}` asks")),
        None => Ok(()),
    }
}

/// `git reflog`, `reflog show …`, `reflog list`, `reflog exists REF`.
fn reflog(words: &[&str]) -> Result<&'static str, String> {
    let (form, rest) = match words.split_first() {
        Some((&sub @ ("show" | "list" | "exists"), rest)) => (sub, rest),
        _ => ("show", words),
    };
    let operands = options("reflog", rest, &[LOG_OPTIONS])?;
    // Bare `git reflog WORD`: WORD may be a subcommand that writes (`expire`, `delete`,
    // `drop`, later ones too); only a ref that cannot be one is read.
    if form == "show"
        && words.first() != Some(&"show")
        && let Some(first) = operands.first()
        && !(first.contains(['@', '/', '~', '^']) || first.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Err(format!(
            "`git reflog {first}` asks (write `git reflog show {first}`; `expire`, `delete` \
             and `drop` write)"
        ));
    }
    if form == "list" && !operands.is_empty() {
        return Err("`git reflog list` takes no operands".to_owned());
    }
    Ok("git reflog")
}

/// `git stash list [log options]`, `git stash show SUMMARY [STASH]`.
fn stash(words: &[&str]) -> Result<&'static str, String> {
    match words.split_first() {
        Some((&"list", rest)) => {
            options("stash list", rest, &[LOG_OPTIONS, STASH_SUMMARIES])?;
            Ok("git stash list")
        }
        Some((&"show", rest)) => {
            let operands = options("stash show", rest, &[STASH_SUMMARIES, STASH_SHOW_EXTRA])?;
            if !rest
                .iter()
                .any(|w| STASH_SUMMARIES.iter().any(|(name, _)| name == w))
            {
                return Err(
                    "`git stash show` asks without `--stat`, `--name-only` or another \
                            summary (it may print the patch, which is content)"
                        .to_owned(),
                );
            }
            if operands.len() > 1 {
                return Err("`git stash show` takes one stash".to_owned());
            }
            Ok("git stash show")
        }
        _ => Err("`git stash` is on the read-only list only as `list` and `show`".to_owned()),
    }
}

/// `git config [--get|--get-all] KEY`, `git config get KEY`: one key that cannot hold a
/// credential.
fn config(words: &[&str]) -> Result<&'static str, String> {
    let rest = match words.split_first() {
        Some((&"get", rest)) => rest,
        _ => words,
    };
    let operands = options("config", rest, &[CONFIG])?;
    let [key] = operands.as_slice() else {
        return Err(
            "`git config` is on the read-only list only to read one key (`--list` and \
                    `--get-regexp` print values that may be credentials)"
                .to_owned(),
        );
    };
    let lower = key.to_ascii_lowercase();
    if let Some(word) = SENSITIVE_KEY_WORDS.iter().find(|w| lower.contains(*w)) {
        return Err(format!(
            "`git config {key}` asks (a key naming `{word}` may hold a credential)"
        ));
    }
    if !key.contains('.') {
        return Err(format!(
            "`git config {key}` asks (not a `section.name` key)"
        ));
    }
    Ok("git config")
}
