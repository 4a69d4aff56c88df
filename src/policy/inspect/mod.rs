//! The inspection programs (`cat`, `head`, `sed -n`, `rg`, `find`, `jq` …, read-only `git`,
//! Windows `type`): on the built-in list with `[permissions] read_only = "inspect"`, allowed
//! only when every option is on the program's allowlist (`assets/builtin-inspect.txt`) and
//! every word that can name a file stays inside the workspace, lexically, and is not a secret
//! file (`assets/secret-files.txt`, the file tools' list). The option walk, the checks of
//! sed scripts, jq filters, find expressions and git subcommands live in the files below; the
//! path rule is `policy::path_rule`'s. It sees one simple command's words, already checked for
//! quoting, operators and expansions.
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

mod find;
mod git;
mod jq;
mod readers;
mod sed;
mod table;
mod walk;
mod windows_type;
mod xxd;

use super::word::Word;
use super::{Context, OsFamily};
use git::git;
use readers::program_check;
use windows_type::windows_type;

/// Whether `program` is an inspection program (for the reason when a path form asks).
pub(super) fn knows(os: OsFamily, program: &str) -> bool {
    match os {
        OsFamily::Unix => program == "git" || table::find(program).is_some(),
        OsFamily::Windows => program.eq_ignore_ascii_case("type"),
    }
}

/// Checks one simple command against the inspection list: `None` when its program is not an
/// inspection program, `Ok(entry)` when it is allowed, `Err(why)` when it asks.
pub(super) fn check(context: &Context, words: &[Word]) -> Option<Result<String, String>> {
    let (program, args) = words.split_first()?;
    let name = program.known()?;
    // As [`knows`], with the list's entry found once.
    match context.os {
        OsFamily::Windows if knows(context.os, name) => {
            Some(windows_type(context, args).map(|()| "type".to_owned()))
        }
        OsFamily::Windows => None,
        OsFamily::Unix if name == "git" => Some(git(context, words)),
        OsFamily::Unix => {
            let entry = table::find(name)?;
            Some(program_check(context, entry, args))
        }
    }
}
