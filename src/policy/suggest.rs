//! The "Always allow" prefix offered at the prompt, and the check that a prefix is acceptable
//! as a user allow rule at all. Owns the tables of multi-word tools and of programs never to
//! offer; does not write settings.
//!
//! A prefix is offered only for one simple command of plain words, and never for a program
//! that runs other programs or code given to it (wrappers, shells, interpreters, `find`,
//! `xargs` …) or is protected, because the rule would then allow anything. For tools whose
//! second word is a subcommand (`git status`) the prefix keeps it; subcommands that run a
//! given command (`npm exec`, `uv run`, `docker exec` …) are never offered, except the test
//! runners' exact forms (`uv run pytest`, `python3 -m pytest`, `npx jest`: `runners`). This
//! is best effort: a person still sees the prefix before accepting it.

use super::OsFamily;
use super::programs::{is_protected, runs_code, runs_other_programs};
use super::runners::runner_prefix;
use super::simple::single_words;
use super::word::{Word, WordKind, program_key};

/// Tools whose first argument is a subcommand, each with the subcommands that run a command
/// given on the line (never offered) and those whose next word names a project script
/// (offered with it: `npm run build`).
const MULTI_WORD_TOOLS: &[(&str, &[&str], &[&str])] = &[
    ("git", &[], &[]),
    ("cargo", &[], &[]),
    ("npm", &["exec", "x"], &["run", "run-script"]),
    ("pnpm", &["exec", "dlx"], &["run"]),
    ("yarn", &["exec", "dlx"], &["run"]),
    ("bun", &["x", "exec"], &["run"]),
    ("deno", &["run", "eval", "repl", "x"], &["task"]),
    ("go", &["run", "tool"], &[]),
    ("docker", &["run", "exec", "compose", "container"], &[]),
    ("podman", &["run", "exec", "container"], &[]),
    ("kubectl", &["exec", "run", "debug", "attach"], &[]),
    ("helm", &[], &[]),
    ("pip", &[], &[]),
    ("pip3", &[], &[]),
    ("uv", &["run", "tool", "x"], &[]),
    ("poetry", &["run", "shell"], &[]),
    ("pipenv", &["run", "shell"], &[]),
    ("conda", &["run"], &[]),
    ("gh", &["alias", "extension", "codespace"], &[]),
    ("rustup", &["run"], &[]),
    ("brew", &[], &[]),
    ("apt", &[], &[]),
    ("apt-get", &[], &[]),
    ("dnf", &[], &[]),
    ("yum", &[], &[]),
    ("systemctl", &[], &[]),
    ("terraform", &[], &[]),
    ("dotnet", &["exec", "tool"], &[]),
    ("gem", &["exec"], &[]),
    ("bundle", &["exec"], &[]),
    ("composer", &["exec"], &["run-script"]),
    // The target, never all of make: `make test` (a rule `make` would run any recipe).
    ("make", &[], &[]),
    ("gmake", &[], &[]),
];

/// The programs offered as a one-word rule (`touch F` → `touch`): known to do their own job
/// with their arguments and to have no option that runs a program, a command or code given
/// on the line.
/// Any other program gets no "always allow" (the person can still allow it once, or write a
/// rule): programs that run what they are given have no end — wrappers (`setarch`, `rr`,
/// `direnv`, `nix-shell`), interpreters (`guile3.0`), multiplexers (`zellij`), database
/// shells (`duckdb`), and tools with one option that does (`gcc -wrapper`, `rustc -C
/// linker=`, `cmake -E`, `just --command`, `tox -x`, `eslint`'s and `mocha`'s JavaScript
/// configuration, `mypy --python-executable`, `install --strip-program`) — so only an
/// allowlist holds (`ninja` is not on it: its `-f`, `-C` and `-t` have no table rows).
/// `make` is offered with its target (`make test`), never alone, with an entry in
/// `assets/allow-options.txt` for each option that runs code and for another target.
const ONE_WORD_PROGRAMS: &[&str] = &[
    // files and directories
    "touch",
    "mkdir",
    "cp",
    "mv",
    "ln",
    "rmdir",
    "tee",
    "truncate",
    "mktemp",
    // formatters and checkers without plugins or programs of their own choosing
    "tsc",
    "ruff",
    "black",
    "rustfmt",
    "gofmt",
    "goimports",
    "shellcheck",
    "shfmt",
    "clang-format",
    "stylua",
    "yamllint",
    "hadolint",
];

/// The prefix to offer for "Always allow", or `None` when no rule would be safe: a test
/// runner's form or a project script's path (`runners`: `python3 -m pytest`,
/// `./run_tests.sh`), program plus subcommand for known multi-word tools (`git status -s` →
/// `git status`, `make test`), the program alone for [`ONE_WORD_PROGRAMS`] (`touch F` →
/// `touch`), otherwise none.
#[must_use]
pub fn suggest_prefix(os: OsFamily, command: &str) -> Option<String> {
    prefix_for(os, &single_words(os, command)?)
}

/// [`suggest_prefix`] for the words of one plain simple command, already parsed.
pub(super) fn prefix_for(os: OsFamily, words: &[Word]) -> Option<String> {
    if words.iter().any(|w| w.kind == WordKind::Expansion) {
        return None;
    }
    if let Some(prefix) = runner_prefix(os, words) {
        return is_valid_allow_prefix(&prefix).then_some(prefix);
    }
    let program = plain(words, 0, true)?;
    let key = program_key(program, os);
    if is_protected(&key) || runs_other_programs(&key) || runs_code(&key) {
        return None;
    }
    let prefix = match MULTI_WORD_TOOLS.iter().find(|(tool, _, _)| *tool == key) {
        Some((_, runners, scripts)) => {
            let sub = plain(words, 1, false)?;
            if runners.contains(&sub) {
                return None;
            }
            if scripts.contains(&sub) {
                format!("{program} {sub} {}", plain(words, 2, false)?)
            } else {
                format!("{program} {sub}")
            }
        }
        None if ONE_WORD_PROGRAMS.contains(&key.as_ref()) => program.to_owned(),
        None => return None,
    };
    is_valid_allow_prefix(&prefix).then_some(prefix)
}

/// Programs that fetch and run a package named on the command line.
const PACKAGE_RUNNERS: &[&str] = &["npx", "bunx", "uvx", "pipx", "pnpx"];

/// Why `rule` may not be written as an allow rule (`agent rules add`, and the prefix the
/// prompt offers for `3`/`a`), or `None` when it may: it must be plain words
/// ([`is_valid_allow_prefix`]), and name more than a program that runs what it is given —
/// a wrapper (`env`, `sudo`, `xargs` …) never, a protected program never, a shell,
/// interpreter or `make` only with an operand (`bash ./run_tests.sh`, `python3 -m pytest`,
/// `make test`), a subcommand that runs a given command (`uv run`, `npm exec`) only with the
/// command (`uv run pytest`).
#[must_use]
pub fn allow_rule_problem(os: OsFamily, rule: &str) -> Option<String> {
    if !is_valid_allow_prefix(rule) {
        return Some(
            "a rule is plain words separated by single spaces (letters, digits and `_ - . / : \
             @ + , =`; no quotes, globs, `$`, `;`, `|`, `&` or `>`), the first neither an \
             option nor an assignment"
                .to_owned(),
        );
    }
    let words: Vec<&str> = rule.split(' ').collect();
    let program = words[0];
    let key = program_key(program, os);
    let operand = words[1..].iter().any(|w| !w.starts_with('-'));
    if is_protected(&key) {
        return Some(format!(
            "`{program}` is a protected program: it asks every time (allow it once at the prompt)"
        ));
    }
    // A runner's form, or more (`npx jest`, `uv run pytest -x`): what the prompt offers.
    let literal: Vec<Word> = words.iter().map(|w| Word::literal(*w)).collect();
    if runner_prefix(os, &literal).is_some() {
        return None;
    }
    let example = if key.starts_with("python") {
        "`python3 -m pytest`".to_owned()
    } else if key == "npx" {
        "`npx jest`".to_owned()
    } else if PACKAGE_RUNNERS.contains(&key.as_ref()) {
        format!("`{program} PACKAGE`")
    } else if key == "make" || key == "gmake" {
        format!("`{program} test`")
    } else if runs_other_programs(&key) {
        format!("`{program} ./run_tests.sh`")
    } else {
        format!("`{program} scripts/test.js`")
    };
    // A package runner with the package named (`npx cowsay`) runs that package.
    if PACKAGE_RUNNERS.contains(&key.as_ref()) {
        return (!operand).then(|| {
            format!(
                "`{rule}` runs any package it is given, so the rule would allow anything: allow \
                 the package you use, e.g. {example}"
            )
        });
    }
    if super::programs::is_wrapper(&key) || super::programs::JOINERS.contains(&key.as_ref()) {
        return Some(format!(
            "`{program}` runs the command given after it, so the rule would allow anything: \
             allow that command itself"
        ));
    }
    if !operand && (runs_other_programs(&key) || runs_code(&key) || key == "make" || key == "gmake")
    {
        let what = if key == "make" || key == "gmake" {
            "runs any target (and `SHELL=…` any program)"
        } else if runs_other_programs(&key) {
            "runs any command it is given"
        } else {
            "runs code or commands given on the command line"
        };
        return Some(format!(
            "`{rule}` {what}, so the rule would allow anything: allow the form you use, e.g. \
             {example}"
        ));
    }
    if let (Some((_, runners, _)), [_, sub]) = (
        MULTI_WORD_TOOLS.iter().find(|(tool, _, _)| *tool == key),
        words.as_slice(),
    ) && runners.contains(sub)
    {
        return Some(format!(
            "`{rule}` runs the command given after it, so the rule would allow anything: \
             allow the command too, e.g. `{rule} pytest`"
        ));
    }
    None
}

/// Word `at` when it is a plain name: letters, digits and `._+-:`, not starting with `-` (an
/// option) or `.`, and for a program no path.
fn plain(words: &[Word], at: usize, program: bool) -> Option<&str> {
    let word = words.get(at)?;
    if word.kind != WordKind::Literal {
        return None;
    }
    let text = word.text.as_str();
    let ok = !text.starts_with(['-', '.'])
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c) || (!program && c == ':'));
    (ok && !text.is_empty()).then_some(text)
}

/// Whether a prefix is acceptable as a user allow rule: non-empty, plain ASCII words (letters,
/// digits and `_ - . / : @ + , =`) separated by single spaces, the first neither an option nor
/// an assignment. No shell or cmd.exe metacharacter, quote, glob or control character.
#[must_use]
pub fn is_valid_allow_prefix(prefix: &str) -> bool {
    if prefix.is_empty() {
        return false;
    }
    let mut words = prefix.split(' ');
    let first_ok = words
        .next()
        .is_some_and(|w| valid_word(w) && !w.starts_with('-') && !w.contains('='));
    first_ok && words.all(valid_word)
}

fn valid_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:@+,=".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn prefixes_offered() {
        let cases: &[(OsFamily, &str, Option<&str>)] = &[
            (OsFamily::Unix, "git status -s", Some("git status")),
            (OsFamily::Unix, "cargo test --all", Some("cargo test")),
            (OsFamily::Unix, "touch F", Some("touch")),
            (OsFamily::Unix, "make test", Some("make test")),
            (OsFamily::Unix, "make -j4 test", None),
            (OsFamily::Unix, "make", None),
            (OsFamily::Unix, "make SHELL=/bin/sh test", None),
            (
                OsFamily::Unix,
                "python3 -m pytest -x tests/",
                Some("python3 -m pytest"),
            ),
            (OsFamily::Unix, "uv run pytest", Some("uv run pytest")),
            (OsFamily::Unix, "./run_tests.sh", Some("./run_tests.sh")),
            (
                OsFamily::Unix,
                "npm run build -- --watch",
                Some("npm run build"),
            ),
            (OsFamily::Unix, "npm test", Some("npm test")),
            (OsFamily::Unix, "  git  diff  ", Some("git diff")),
            (OsFamily::Unix, "git", None),
            (OsFamily::Unix, "git -C x status", None),
            (OsFamily::Unix, "npm exec foo", None),
            (OsFamily::Unix, "uv run python x.py", None),
            (OsFamily::Unix, "docker exec -it x sh", None),
            (OsFamily::Unix, "npm run", None),
            (OsFamily::Unix, "rm -rf x", None),
            (OsFamily::Unix, "sudo ls", None),
            (OsFamily::Unix, "bash -c ls", None),
            (OsFamily::Unix, "env ls", None),
            (OsFamily::Unix, "xargs ls", None),
            (OsFamily::Unix, "python3 x.py", None),
            (OsFamily::Unix, "python3.12 x.py", None),
            (OsFamily::Unix, "pypy3.10 x.py", None),
            (OsFamily::Unix, "node20 x.js", None),
            (OsFamily::Unix, "perl5.36 x.pl", None),
            (OsFamily::Unix, "setarch x86_64 make", None),
            (OsFamily::Unix, "linux64 make", None),
            (OsFamily::Unix, "hyperfine make", None),
            (OsFamily::Unix, "unbuffer make", None),
            (OsFamily::Unix, "sqlite3 x.db", None),
            (OsFamily::Unix, "tmux new -d make", None),
            (OsFamily::Unix, "screen -dm make", None),
            (OsFamily::Unix, "psql -c x", None),
            (OsFamily::Unix, "find . -name x", None),
            (OsFamily::Unix, "/usr/bin/touch x", None),
            (OsFamily::Unix, "../script.sh", None),
            (OsFamily::Unix, "FOO=1 touch x", None),
            (OsFamily::Unix, "touch x > y", None),
            (OsFamily::Unix, "touch x; ls", None),
            (OsFamily::Unix, "touch $X", None),
            (OsFamily::Unix, "(touch x)", None),
            (OsFamily::Unix, "'touch' x", Some("touch")),
            (OsFamily::Unix, "t*ch x", None),
            (OsFamily::Unix, "ｔｏｕｃｈ x", None),
            (OsFamily::Unix, "", None),
            // Programs not known to be safe as one word (third review): none is offered.
            (OsFamily::Unix, "guile3.0 x.scm", None),
            (OsFamily::Unix, "zellij run -- make", None),
            (OsFamily::Unix, "duckdb x.db", None),
            (OsFamily::Unix, "rr record make", None),
            (OsFamily::Unix, "direnv exec . make", None),
            (OsFamily::Unix, "nix-shell --run make", None),
            (OsFamily::Unix, "qemu-x86_64 ./a.out", None),
            (OsFamily::Unix, "dc -e x", None),
            (OsFamily::Unix, "nu -c ls", None),
            (OsFamily::Unix, "somethingnew x", None),
            (OsFamily::Unix, "gcc -wrapper sh,-c,x a.c", None),
            (OsFamily::Unix, "ruff check .", Some("ruff")),
            (OsFamily::Unix, "mkdir -p build", Some("mkdir")),
            (OsFamily::Windows, "git status", Some("git status")),
            (OsFamily::Windows, "mkdir build", Some("mkdir")),
            (OsFamily::Windows, "del x", None),
            (OsFamily::Windows, "cmd /c dir", None),
            (OsFamily::Windows, "powershell -c ls", None),
            (OsFamily::Windows, "mkdir \"a b\"", None),
            (OsFamily::Windows, "echo %PATH%", None),
            (OsFamily::Windows, "C:\\tools\\x.exe", None),
        ];
        for (os, command, want) in cases {
            assert_eq!(
                suggest_prefix(*os, command).as_deref(),
                *want,
                "input: {command:?}"
            );
        }
    }

    #[test]
    fn allow_rules_that_would_allow_anything_are_refused() {
        let cases: &[(&str, Option<&str>)] = &[
            ("python", Some("`python3 -m pytest`")),
            ("python3", Some("`python3 -m pytest`")),
            ("python3 -c", Some("runs code")),
            ("bash", Some("`bash ./run_tests.sh`")),
            ("sh", Some("runs any command")),
            ("bash -c", Some("runs any command")),
            ("make", Some("`make test`")),
            ("make -k", Some("runs any target")),
            ("npx", Some("`npx jest`")),
            ("node", Some("runs code")),
            ("env", Some("runs the command given after it")),
            ("sudo apt", Some("protected program")),
            ("xargs ls", Some("runs the command given after it")),
            ("timeout 10", Some("runs the command given after it")),
            ("eval", Some("runs the command given after it")),
            ("rm -rf build", Some("protected program")),
            ("uv run", Some("`uv run pytest`")),
            ("npm exec", Some("`npm exec pytest`")),
            ("npx jest --ci", None),
            ("npx cowsay", None),
            ("npx -y", Some("runs any package")),
            ("uvx", Some("runs any package")),
            ("uv run pytest -x", None),
            ("git status; rm", Some("plain words")),
            ("", Some("plain words")),
            ("python3 -m pytest", None),
            ("python3 manage.py test", None),
            ("bash ./run_tests.sh", None),
            ("make test", None),
            ("npx jest", None),
            ("uv run pytest", None),
            ("./run_tests.sh", None),
            ("cargo test", None),
            ("git", None),
            ("touch", None),
        ];
        for (rule, want) in cases {
            let got = allow_rule_problem(OsFamily::Unix, rule);
            match want {
                None => assert_eq!(got, None, "input: {rule:?}"),
                Some(part) => assert!(
                    got.as_deref().is_some_and(|why| why.contains(part)),
                    "input: {rule:?}: {got:?}"
                ),
            }
        }
    }

    /// Every prefix the prompt offers is one `agent rules add` accepts.
    #[test]
    fn every_offered_prefix_is_an_acceptable_rule() {
        let commands = [
            "git status -s",
            "cargo test --all",
            "touch F",
            "make test",
            "npm run build",
            "python3 -m pytest -x",
            ".venv/bin/python -m pytest",
            "uv run pytest",
            "poetry run pytest",
            "npx jest",
            "npx playwright test",
            "./run_tests.sh",
            "scripts/ci/test.sh -v",
            "./gradlew test",
            "mvn test",
            "go test ./...",
            "dotnet test",
            "bun test",
            "pytest -x",
            "ruff check .",
        ];
        for command in commands {
            let prefix = suggest_prefix(OsFamily::Unix, command)
                .unwrap_or_else(|| panic!("no prefix for {command:?}"));
            assert_eq!(
                allow_rule_problem(OsFamily::Unix, &prefix),
                None,
                "{command:?} → {prefix:?}"
            );
        }
    }

    #[test]
    fn valid_allow_prefixes() {
        let cases: &[(&str, bool)] = &[
            ("git status", true),
            ("cargo test --all", true),
            ("./gradlew build", true),
            ("make test:unit", true),
            ("", false),
            (" git", false),
            ("git  status", false),
            ("git status ", false),
            ("git\tstatus", false),
            ("git status; rm", false),
            ("git status | x", false),
            ("ls >x", false),
            ("echo $HOME", false),
            ("echo `x`", false),
            ("a & b", false),
            ("ls *", false),
            ("ls 'x'", false),
            ("echo %PATH%", false),
            ("a^b", false),
            ("FOO=1 ls", false),
            ("-rf", false),
            ("ｌｓ", false),
            ("ls\nrm", false),
        ];
        for (prefix, want) in cases {
            assert_eq!(is_valid_allow_prefix(prefix), *want, "input: {prefix:?}");
        }
    }
}
