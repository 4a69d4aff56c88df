//! Package listings and version queries that run no project code and use no network, on the
//! inspect list: `npm ls`/`npm list`, `pip list`/`pip freeze`/`pip show` (also `pip3`),
//! `go version`, and `--version` of interpreters (`node`, `python3` …). Owns their option
//! allowlists. The policy is lexical: it cannot see the workspace's files, so a tool that a
//! workspace file can make run a program is left out, whatever its subcommand.
//!
//! Decisions (the issue leaves them open), each a reason a tool stays off the list:
//! - **`yarn`** asks: `yarnPath` in `.yarnrc.yml` (berry) or `yarn-path` in `.yarnrc` (v1)
//!   runs a JavaScript file of the workspace for any yarn command, `yarn list` included.
//! - **`pnpm`** asks: it switches itself to the version `packageManager` in `package.json`
//!   names (`manage-package-manager-versions`), fetched from the registry `.npmrc` names, and
//!   runs it; and it loads `.pnpmfile.cjs` hooks.
//! - **`cargo tree`/`cargo metadata`** ask: through rustup, a `rust-toolchain.toml` in the
//!   workspace can name a `path` toolchain whose `cargo` runs, and `cargo tree` runs
//!   `build.rustc-wrapper` from `.cargo/config.toml` (it asks rustc for the target's cfg).
//!   `rustc --version` asks for the first reason.
//! - **`python3 -m pip`** asks: `-m` puts the working directory first on `sys.path`, so a
//!   `pip/` directory of the workspace would run. The `pip` program does not.
//! - **`npm ls`** reads `package.json`, the lock file and `node_modules`, and runs no
//!   lifecycle script; `.npmrc` settings that run programs (`script-shell`, `node-options`)
//!   apply only to scripts. `--global`, `--prefix` and configuration options ask.
//! - **Version queries**: exactly one word after the program, `--version` (and the short
//!   form that only prints: `node -v`, `python3 -V`, `perl -v`; not `ruby -v`, which then
//!   reads a script from standard input).

use super::word::{Word, WordKind};

/// `npm ls` options: (spelling, takes a value).
const NPM_LS: &[(&str, bool)] = &[
    ("--all", false),
    ("-a", false),
    ("--depth", true),
    ("--json", false),
    ("--long", false),
    ("-l", false),
    ("--parseable", false),
    ("-p", false),
    ("--prod", false),
    ("--production", false),
    ("--dev", false),
    ("--omit", true),
    ("--include", true),
    ("--link", false),
    ("--unicode", false),
    ("--package-lock-only", false),
    ("--workspaces", false),
    ("--include-workspace-root", false),
    ("--workspace", true),
    ("-w", true),
];

/// `pip list` options (not `--outdated`/`--uptodate`: they ask the index).
const PIP_LIST: &[(&str, bool)] = &[
    ("-l", false),
    ("--local", false),
    ("--user", false),
    ("--format", true),
    ("--not-required", false),
    ("--exclude-editable", false),
    ("--include-editable", false),
    ("-e", false),
    ("--editable", false),
    ("--exclude", true),
];

const PIP_FREEZE: &[(&str, bool)] = &[
    ("-l", false),
    ("--local", false),
    ("--user", false),
    ("--all", false),
    ("--exclude-editable", false),
    ("--exclude", true),
];

const PIP_SHOW: &[(&str, bool)] = &[("-f", false), ("--files", false)];

/// Options every pip command takes that change nothing.
const PIP_GENERAL: &[(&str, bool)] = &[
    ("-q", false),
    ("--quiet", false),
    ("-v", false),
    ("--verbose", false),
    ("--disable-pip-version-check", false),
    ("--no-color", false),
    ("--no-input", false),
    ("--isolated", false),
];

/// Checks a package listing or version query: `None` when the program is not one of these,
/// `Ok(entry)` when it is allowed, `Err(why)` when it asks.
pub(super) fn check(words: &[Word]) -> Option<Result<String, String>> {
    let (program, args) = words.split_first()?;
    let name = program.known()?;
    if let Some(verdict) = version_query(name, args) {
        return Some(verdict);
    }
    // Every other program below is one of these (most commands are none).
    if !known_tool(name) && name != "cargo" {
        return None;
    }
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    if args.iter().any(|w| w.kind != WordKind::Literal) {
        return known_tool(name).then(|| Err(format!("`{name}` with a glob asks")));
    }
    let verdict = match (name, texts.as_slice()) {
        ("npm", [sub @ ("ls" | "list"), rest @ ..]) => {
            options(&format!("npm {sub}"), rest, &[NPM_LS]).map(|()| format!("npm {sub}"))
        }
        (pip, [sub @ ("list" | "freeze" | "show"), rest @ ..]) if is_pip(pip) => {
            let table = match *sub {
                "list" => PIP_LIST,
                "freeze" => PIP_FREEZE,
                _ => PIP_SHOW,
            };
            let entry = format!("pip {sub}");
            let operands = options(&entry, rest, &[table, PIP_GENERAL]);
            match (*sub, operands) {
                ("show", Ok(())) if !rest.iter().any(|w| !w.starts_with('-')) => {
                    Err("`pip show` needs a package name".to_owned())
                }
                (_, verdict) => verdict.map(|()| entry),
            }
        }
        ("go", ["version"]) => Ok("go version".to_owned()),
        ("yarn", _) => Err(
            "`yarn` asks: `yarnPath` in `.yarnrc.yml` (`yarn-path` in `.yarnrc`) runs a file \
             of the workspace for any yarn command"
                .to_owned(),
        ),
        ("pnpm", _) => Err(
            "`pnpm` asks: `packageManager` in `package.json` can make it fetch and run another \
             pnpm, and it loads `.pnpmfile.cjs`"
                .to_owned(),
        ),
        ("cargo", [sub @ ("tree" | "metadata"), ..]) => Err(format!(
            "`cargo {sub}` asks: a `rust-toolchain.toml` in the workspace can make rustup run \
             another cargo, and `.cargo/config.toml` can set a rustc wrapper"
        )),
        _ => return None,
    };
    Some(verdict)
}

/// Whether `name` is a tool this module reads (for the glob reason).
fn known_tool(name: &str) -> bool {
    matches!(name, "npm" | "go" | "yarn" | "pnpm") || is_pip(name)
}

/// `pip`, `pip3`, `pip3.12`.
fn is_pip(name: &str) -> bool {
    name.strip_prefix("pip").is_some_and(|version| {
        version.bytes().all(|b| b.is_ascii_digit() || b == b'.') && !version.starts_with('.')
    })
}

/// `python3 --version` and the like: exactly one word, a version option of that program.
fn version_query(name: &str, args: &[Word]) -> Option<Result<String, String>> {
    let python = name.strip_prefix("python").is_some_and(|version| {
        version.is_empty()
            || version.starts_with('3') && version.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    });
    let forms: &[&str] = match name {
        "node" | "perl" => &["--version", "-v"],
        "ruby" | "npm" => &["--version"],
        _ if python => &["--version", "-V", "-VV"],
        _ => return None,
    };
    match args {
        [only] if forms.contains(&only.text.as_str()) && only.kind == WordKind::Literal => {
            Some(Ok(format!("{name} {}", only.text)))
        }
        // Anything else is not a version query: the usual reason (`npm ls` is read by the
        // caller).
        _ => None,
    }
}

/// Walks the options against the tables; operands (package names) may be any plain word that
/// is not an option.
fn options(entry: &str, words: &[&str], tables: &[&[(&str, bool)]]) -> Result<(), String> {
    let find = |name: &str| {
        tables
            .iter()
            .flat_map(|t| t.iter())
            .find(|(n, _)| *n == name)
    };
    let mut i = 0;
    while let Some(&word) = words.get(i) {
        i += 1;
        if !word.starts_with('-') {
            if word.starts_with(['/', '~', '.']) || word.contains("..") {
                return Err(format!(
                    "`{entry}` with `{word}` asks (a package name is expected)"
                ));
            }
            continue;
        }
        let (name, attached) = match word.split_once('=') {
            Some((name, _)) if word.starts_with("--") => (name, true),
            _ => (word, false),
        };
        match find(name) {
            Some((_, true)) if !attached => {
                words
                    .get(i)
                    .ok_or_else(|| format!("`{entry} {name}` is missing its value"))?;
                i += 1;
            }
            Some((_, true)) => {}
            Some((_, false)) if !attached => {}
            _ => {
                return Err(format!(
                    "`{entry}` with `{word}` is not on the read-only list (only listing options \
                     are)"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_names() {
        for ok in ["pip", "pip3", "pip3.12"] {
            assert!(is_pip(ok), "{ok}");
        }
        for bad in ["pipx", "pip.3", "pipe", "pip3-x"] {
            assert!(!is_pip(bad), "{bad}");
        }
    }
}
