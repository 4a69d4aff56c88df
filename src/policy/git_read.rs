//! What a read-only git command can print, for the secret-file rule: git reads committed
//! files out of `.git/objects`, where the sandbox cannot hide them, so the policy judges
//! every word after the subcommand as a possible path and decides which forms print the
//! content of files that were ever committed. Owns the word-by-word path and secret checks
//! of `inspect`'s git subcommands (which subcommands and options are read-only is
//! `inspect`'s).
//!
//! Decisions (DESIGN.md leaves them open):
//! - **Every word, every part of it** goes through the secret list: the word, an `=` or
//!   attached value (`--contents=id_rsa`, `-Oorder`), the path of `REV:PATH`, `:PATH`,
//!   `:0:PATH`, and a pathspec with its magic taken off (`:(icase,glob)*.PEM`, `:!x`,
//!   `:/x`). Words with `/` or starting with `.` or `~` must also stay inside the workspace.
//! - **History content asks unless a path limits it.** A form that prints the content of
//!   committed or staged files — `git show` of a commit, `git log -p` (and `-u`, `-U3`,
//!   `--cc`, `--binary` …), `git diff` with a revision or `--cached`, `git grep` in a
//!   revision or `--cached`, `git cat-file -p` of a hash — asks unless it is limited by a
//!   path: a pathspec after `--`, a word before it written as a file (`src/main.rs`:
//!   see [`written_as_file`]), `REV:PATH`, or `log -L …:FILE`. A word before `--` that is
//!   not written as a file may be a revision (`main`, `v1.2`, `feature/x`) and limits
//!   nothing. `--full-diff` undoes the limit. A pathspec that names the whole tree (`.`,
//!   `:/`, `..` to the root) limits nothing either.
//! - **No content, no ask**: `--stat`, `--numstat`, `--shortstat`, `--name-only`,
//!   `--name-status`, `--summary`, `--raw`, `-s`/`--no-patch`, `--dirstat`, plain `git log`
//!   and `git shortlog` print names and counts only (a secret named as written still asks).
//!   `git show` of a bare hash asks even then: the hash may name a blob, which prints.
//! - **The worktree is the sandbox's business**: `git diff` and `git grep` without a
//!   revision read the working tree, like `cat`: a pathspec that names a secret, or a glob
//!   that could match one, asks; a directory does not (the sandbox hides secret files).
//! - **A directory pathspec limits** (`git log -p -- src`): the policy cannot tell a
//!   directory from a file, and the secret list names files; a directory whose name is on
//!   the list (`credentials`), or that a user pattern with `/` covers, still asks.

use super::word::Word;
use super::{Context, path_rule, secret_paths};

/// Options that make `log`, `show`, `diff`, `whatchanged` print patches (git accepts no
/// abbreviation of these: checked with git 2.4x). Any value attached counts too.
const PATCH_OPTIONS: &[&str] = &[
    "--patch",
    "--patch-with-raw",
    "--patch-with-stat",
    "--unified",
    "--cc",
    "--dd",
    "--remerge-diff",
    "--diff-merges",
    "--combined-all-paths",
    "--binary",
    "--check",
    "--word-diff",
    "--word-diff-regex",
    "--color-words",
    "--function-context",
    "--inter-hunk-context",
    "--color-moved",
];

/// Short options (in a bundle too) that print patches: `-p`, `-u`, `-U3`, `-W`, `-c`.
const PATCH_LETTERS: &[char] = &['p', 'u', 'U', 'W', 'c'];

/// Short options whose value is attached (`-Sneedle`, `-n5`): the letters after them are
/// the value, not options.
const VALUE_LETTERS: &[char] = &['S', 'G', 'O', 'L', 'n', 'l', 'M', 'C', 'B', 'I', 'X'];

/// Options that print names and counts instead of the patch.
const NO_CONTENT_OPTIONS: &[&str] = &[
    "-s",
    "--no-patch",
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--raw",
    "--dirstat",
    "--compact-summary",
    "--quiet",
];

/// Options of `log`, `show`, `diff` and `blame` whose value is the next word (only those:
/// reading a revision as an option's value would hide it).
const SEPARATE_VALUES: &[&str] = &[
    "-n",
    "--max-count",
    "--skip",
    "--author",
    "--committer",
    "--grep",
    "--since",
    "--after",
    "--until",
    "--before",
    "-G",
    "-S",
    "-O",
    "-L",
    "--contents",
];

/// The same for `git grep`.
const GREP_SEPARATE_VALUES: &[&str] = &[
    "-e",
    "-f",
    "-A",
    "-B",
    "-C",
    "-m",
    "--max-count",
    "--max-depth",
    "--threads",
    "--regexp",
    "--file",
    "--after-context",
    "--before-context",
    "--context",
];

/// File extensions that make a word before `--` a file rather than a revision: a branch or
/// tag is almost never named `x.rs`. Source, text and configuration files.
const FILE_EXTENSIONS: &[&str] = &[
    "rs",
    "toml",
    "lock",
    "md",
    "txt",
    "json",
    "yaml",
    "yml",
    "py",
    "pyi",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "go",
    "mod",
    "sum",
    "java",
    "kt",
    "kts",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "rb",
    "php",
    "swift",
    "m",
    "mm",
    "scala",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "vue",
    "svelte",
    "sql",
    "xml",
    "ini",
    "cfg",
    "conf",
    "gradle",
    "properties",
    "proto",
    "graphql",
    "rst",
    "adoc",
    "tex",
    "csv",
    "tsv",
    "svg",
    "dart",
    "lua",
    "pl",
    "r",
    "jl",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "zig",
    "nix",
    "tf",
    "dockerfile",
    "cmake",
    "mk",
    "ipynb",
];

/// What the words of a read-only git subcommand say about what it prints.
#[derive(Debug, Default)]
struct Form<'w> {
    /// Words before `--` that are not options or option values (revisions or paths).
    operands: Vec<&'w str>,
    /// Words after `--`.
    pathspecs: Vec<&'w str>,
    /// A patch option (`-p` …) is given.
    patch: bool,
    /// An option that prints names and counts instead is given.
    no_content: bool,
    /// `--cached`/`--staged`: the index, whose blobs are committed content too.
    index: bool,
    /// `log -L …:FILE`: only that file's lines.
    line_range: bool,
    /// `--full-diff`: the whole commit, whatever the paths.
    full_diff: bool,
    /// `--untracked`/`--no-index` (grep): files of the working tree only.
    worktree_only: bool,
}

/// Checks the words after a read-only git subcommand `sub` (`rest`): every part of every
/// word through the path and secret rules, then whether the form prints committed content
/// without a path limiting it.
pub(super) fn check(context: &Context, sub: &str, rest: &[Word]) -> Result<(), String> {
    for word in rest {
        word_paths(context, sub, &word.text)?;
    }
    let form = read_form(sub, rest);
    if prints_content(sub, &form) {
        // grep's first operand is its pattern.
        let operands = form.operands.iter().skip(usize::from(sub == "grep"));
        for spec in form.pathspecs.iter().chain(operands) {
            pathspec(context, sub, spec)?;
        }
    }
    match sub {
        "show" => show(context, &form),
        "log" | "whatchanged" | "shortlog" if form.patch || form.line_range => limited(
            context,
            sub,
            &form,
            "prints the patches of every commit it lists",
        ),
        "diff" => {
            let history = form.index || form.operands.iter().any(|w| maybe_revision(w));
            if history && (form.patch || !form.no_content) {
                limited(context, sub, &form, "prints committed content")
            } else {
                Ok(())
            }
        }
        "grep" => {
            let history = !form.worktree_only
                && (form.index || form.operands.iter().skip(1).any(|w| maybe_revision(w)));
            if history {
                limited(context, sub, &form, "searches committed content")
            } else {
                Ok(())
            }
        }
        "cat-file" => match rest.iter().map(|w| w.text.as_str()).collect::<Vec<_>>()[..] {
            ["-p", object] if may_be_blob(object) => Err(format!(
                "`git cat-file -p {object}` asks (a hash may name a committed file that holds \
                 secrets)"
            )),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Whether the form prints the content of files (from the worktree or from git), not only
/// names and counts.
fn prints_content(sub: &str, form: &Form<'_>) -> bool {
    match sub {
        "grep" | "blame" | "cat-file" => true,
        "show" | "diff" => form.patch || !form.no_content,
        "log" | "whatchanged" => form.patch || form.line_range,
        _ => false,
    }
}

/// `git show`: a commit prints its patch unless only names and counts are asked for; a
/// bare hash may be a blob and prints it whatever the options.
fn show(context: &Context, form: &Form<'_>) -> Result<(), String> {
    if let Some(hash) = form.operands.iter().find(|w| may_be_blob(w)) {
        return Err(format!(
            "`git show {hash}` asks (a hash may name a committed file that holds secrets)"
        ));
    }
    let commits = form.operands.is_empty() || form.operands.iter().any(|w| maybe_revision(w));
    if commits && (form.patch || !form.no_content) {
        return limited(
            context,
            "show",
            form,
            "prints the patch of every commit it shows",
        );
    }
    Ok(())
}

/// Asks unless a path limits the output (see the module's decisions).
fn limited(context: &Context, sub: &str, form: &Form<'_>, what: &str) -> Result<(), String> {
    let limit = form.line_range
        || form
            .pathspecs
            .iter()
            .chain(form.operands.iter().filter(|w| written_as_file(w)))
            .any(|spec| limits(context, spec));
    if limit && !form.full_diff {
        return Ok(());
    }
    Err(format!(
        "`git {sub}` {what}, and committed files may hold secrets (the sandbox cannot hide \
         them): name the files after `--`, or use `--stat`/`--name-only`"
    ))
}

/// Whether a pathspec limits the output to part of the tree: not an exclusion, not the
/// whole tree.
fn limits(context: &Context, spec: &str) -> bool {
    let Some(parsed) = Pathspec::parse(spec) else {
        return false;
    };
    if parsed.exclude {
        return false;
    }
    let path = parsed.path.trim_end_matches('/');
    if path.is_empty() || path == "." {
        return false;
    }
    let base = if parsed.top {
        &context.workspace
    } else {
        &context.cwd
    };
    let full = crate::workspace::normalize(base, std::path::Path::new(path));
    full.starts_with(&context.workspace) && full != context.workspace
}

/// A pathspec: its magic (`:(top,icase)`, `:/`, `:!`) and its path.
struct Pathspec<'s> {
    path: &'s str,
    top: bool,
    exclude: bool,
}

impl<'s> Pathspec<'s> {
    /// `None` for magic this module does not know (`:(attr:…)`): it selects files by
    /// attributes, which the policy cannot judge.
    fn parse(spec: &'s str) -> Option<Self> {
        let mut parsed = Pathspec {
            path: spec,
            top: false,
            exclude: false,
        };
        let Some(magic) = spec.strip_prefix(':') else {
            return Some(parsed);
        };
        if let Some(long) = magic.strip_prefix('(') {
            let (words, path) = long.split_once(')')?;
            for word in words.split(',') {
                match word.trim() {
                    "top" => parsed.top = true,
                    "exclude" => parsed.exclude = true,
                    "glob" | "icase" | "literal" | "" => {}
                    _ => return None,
                }
            }
            parsed.path = path;
            return Some(parsed);
        }
        let mut rest = magic;
        while let Some(c) = rest.chars().next().filter(|c| matches!(c, '/' | '!' | '^')) {
            if c == '/' {
                parsed.top = true;
            } else {
                parsed.exclude = true;
            }
            rest = &rest[1..];
        }
        parsed.path = rest.strip_prefix(':').unwrap_or(rest);
        Some(parsed)
    }
}

/// A pathspec of a form that prints content: one that could match a secret file asks — a
/// glob (git's wildcards cross `/` and match a leading `.`), or a directory a pattern with
/// `/` covers (`vault` for `vault/**`); an exclusion narrows and is fine; magic the policy
/// cannot judge asks.
fn pathspec(context: &Context, sub: &str, spec: &str) -> Result<(), String> {
    let Some(parsed) = Pathspec::parse(spec) else {
        return Err(format!(
            "`git {sub}` with the pathspec `{spec}` asks (its magic selects files the policy \
             cannot judge)"
        ));
    };
    if parsed.exclude {
        return Ok(());
    }
    let base = if parsed.top {
        &context.workspace
    } else {
        &context.cwd
    };
    let full = crate::workspace::normalize(base, std::path::Path::new(parsed.path));
    let relative = full.strip_prefix(&context.workspace).unwrap_or(&full);
    match secret_paths::pathspec_could_match(context, &relative.to_string_lossy()) {
        Some(pattern) => Err(format!(
            "`git {sub}` with the pathspec `{spec}` asks (it could match a file that may hold \
             secrets, `{pattern}`)"
        )),
        None => Ok(()),
    }
}

/// Reads the options and operands of one subcommand's words.
fn read_form<'w>(sub: &str, rest: &'w [Word]) -> Form<'w> {
    let mut form = Form::default();
    let mut pattern_given = false;
    let separate = if sub == "grep" {
        GREP_SEPARATE_VALUES
    } else {
        SEPARATE_VALUES
    };
    let mut words = rest.iter().map(|w| w.text.as_str());
    while let Some(text) = words.next() {
        if text == "--" {
            form.pathspecs.extend(words.by_ref());
            break;
        }
        let Some(option) = text.strip_prefix('-').filter(|o| !o.is_empty()) else {
            form.operands.push(text);
            continue;
        };
        let name = text.split('=').next().unwrap_or(text);
        if option.starts_with('-') {
            form.patch |= PATCH_OPTIONS.contains(&name) && sub != "grep";
            form.no_content |= NO_CONTENT_OPTIONS.contains(&name)
                || name.starts_with("--stat")
                || name.starts_with("--dirstat");
            form.index |= matches!(name, "--cached" | "--staged");
            form.full_diff |= name == "--full-diff";
            form.worktree_only |= matches!(name, "--untracked" | "--no-index");
            pattern_given |= matches!(name, "--regexp" | "--file") && sub == "grep";
            if text.contains('=') || !separate.contains(&name) {
                continue;
            }
        } else {
            form.no_content |= text == "-s" && sub != "grep";
            pattern_given |= matches!(option.chars().next(), Some('e' | 'f')) && sub == "grep";
            if sub != "grep" && sub != "blame" {
                for letter in option.chars() {
                    form.patch |= PATCH_LETTERS.contains(&letter);
                    if VALUE_LETTERS.contains(&letter) || letter == 'U' {
                        break;
                    }
                }
            }
            form.line_range |= option.starts_with('L') && sub == "log";
            if option.chars().count() > 1 || !separate.contains(&text) {
                continue;
            }
        }
        // The next word is this option's value.
        words.next();
    }
    if sub == "grep" && !pattern_given && !form.operands.is_empty() {
        // The first operand is the pattern: keep it first, for `skip(1)`.
        return form;
    }
    if sub == "grep" {
        // With `-e`/`-f`, no operand is the pattern: a placeholder keeps `skip(1)` right.
        form.operands.insert(0, "");
    }
    form
}

/// Whether a word before `--` may be a revision rather than a path: anything not written as
/// a file, and not `REV:PATH` (a blob: exact) — except `:/text`, which searches commits.
fn maybe_revision(word: &str) -> bool {
    if word.starts_with(":/") {
        return true;
    }
    !word.contains(':') && !written_as_file(word)
}

/// Whether a word is written as a file: it ends in a known file extension and holds no
/// revision syntax, or it cannot be a ref name at all (`./x`, `x/`, a component starting
/// with `.`).
pub(super) fn written_as_file(word: &str) -> bool {
    if word.is_empty() || word.contains(['~', '^', '@', ':']) || word.contains("..") {
        return false;
    }
    if word.starts_with("./") || word.ends_with('/') || word.split('/').any(|c| c.starts_with('.'))
    {
        return true;
    }
    let last = word.rsplit('/').next().unwrap_or(word);
    last.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && FILE_EXTENSIONS
                .iter()
                .any(|known| known.eq_ignore_ascii_case(extension))
    })
}

/// Whether an object name may name a blob: a bare hash (4 to 64 hex digits), or one peeled
/// to something that is not a commit or tree (`^{}`, `^{blob}`).
fn may_be_blob(word: &str) -> bool {
    let (hash, peel) = word.split_once('^').unwrap_or((word, ""));
    (4..=64).contains(&hash.len())
        && hash.chars().all(|c| c.is_ascii_hexdigit())
        && matches!(peel, "" | "{}" | "{blob}" | "{object}" | "{tag}")
}

/// Every part of one word that may name a file: the word, an `=` value, an attached short
/// value, the path of `REV:PATH`, `:N:PATH` and `log -L …:FILE`, a pathspec without its
/// magic. Each through the secret list; those that look like paths (`/`, a leading `.` or
/// `~`) also through the workspace rule.
fn word_paths(context: &Context, sub: &str, text: &str) -> Result<(), String> {
    // In this order; a part the word does not have stays empty, and is passed over.
    let mut candidates = [""; 7];
    candidates[0] = text;
    if text.starts_with('-')
        && let Some((_, value)) = text.split_once('=')
    {
        candidates[1] = value;
    }
    if let Some(short) = text.strip_prefix('-').filter(|t| !t.starts_with('-')) {
        candidates[2] = short.get(1..).unwrap_or("");
    }
    if let Some((_, after)) = text.split_once(':') {
        candidates[3] = after;
        // `:0:PATH`, `:(magic)PATH`, `:/PATH`, `:!PATH`.
        if let Some((stage, path)) = after.split_once(':')
            && stage.len() == 1
            && stage.chars().all(|c| c.is_ascii_digit())
        {
            candidates[4] = path;
        }
        if let Some(spec) = Pathspec::parse(text) {
            candidates[5] = spec.path;
        }
        // `-L 5,9:FILE`, `-L:name:FILE`.
        candidates[6] = text.rsplit(':').next().unwrap_or("");
    }
    for candidate in candidates {
        if candidate.is_empty() || candidate.starts_with('-') {
            continue;
        }
        if candidate.contains('/') || candidate.starts_with(['~', '.']) {
            path_rule::path(context, "git", &Word::literal(candidate), true)?;
        }
        // A path in `REV:PATH` is from the top of the repository, a pathspec from here:
        // the components decide for the list's name patterns either way.
        let relative = candidate.trim_start_matches('/');
        if let Some(pattern) = secret_paths::named(context, relative) {
            return Err(format!(
                "`git {sub}` names `{candidate}`, a file that may hold secrets (`{pattern}`)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_written_as_files() {
        for (word, want) in [
            ("src/main.rs", true),
            ("Cargo.toml", true),
            ("./x", true),
            ("src/", true),
            (".github/workflows", true),
            ("main", false),
            ("v1.2", false),
            ("v1.2.0", false),
            ("origin/main", false),
            ("HEAD~1", false),
            ("HEAD:src/main.rs", false),
            ("a..b.rs", false),
            ("feature/x", false),
            (".rs", true),
        ] {
            assert_eq!(written_as_file(word), want, "{word}");
        }
    }

    #[test]
    fn hashes_may_be_blobs() {
        for (word, want) in [
            ("abc1", true),
            ("0123456789abcdef0123456789abcdef01234567", true),
            ("abc1^{}", true),
            ("abc1^{commit}", false),
            ("abc", false),
            ("HEAD", false),
            ("deadbeefx", false),
        ] {
            assert_eq!(may_be_blob(word), want, "{word}");
        }
    }

    #[test]
    fn pathspec_magic() {
        for (spec, path, top, exclude) in [
            ("src", "src", false, false),
            (":/src", "src", true, false),
            (":!x", "x", false, true),
            (":^x", "x", false, true),
            (":/!x", "x", true, true),
            (":(top,icase)x", "x", true, false),
            (":(exclude,glob)*.pem", "*.pem", false, true),
            (":/:x", "x", true, false),
        ] {
            let parsed = Pathspec::parse(spec).unwrap();
            assert_eq!(
                (parsed.path, parsed.top, parsed.exclude),
                (path, top, exclude),
                "{spec}"
            );
        }
        assert!(Pathspec::parse(":(attr:secret)x").is_none());
        assert!(Pathspec::parse(":(glob").is_none());
    }
}
