//! The prefixes offered for the commands people approve most: test runners, type checkers,
//! linters and a project's own scripts. Owns the table of runner forms and the check that a
//! word names a script inside the workspace; the options such a rule does not cover are
//! `assets/allow-options.txt`'s (`options`), the rest of the offer is `suggest`'s.
//!
//! A runner form is a program and the words that must follow it exactly: `python3 -m pytest`
//! (any `python`, `python3`, `python3.X`), `uv run pytest`, `npx jest`. The rule offered is the
//! command's own first words, so it matches the same command with any arguments after them
//! (`python3 -m pytest -x tests/`) and never another use of the program (`python3 -c …`,
//! `python3 -m pip`). A program written as a path inside the workspace (`.venv/bin/python`,
//! `./gradlew`) counts as the program it names; a path to a shell script, not a runner, is
//! offered as a project script (`./run_tests.sh`) unless it names a shell, an interpreter or
//! a wrapper.

use super::OsFamily;
use super::programs::{is_protected, runs_code, runs_other_programs};
use super::word::{Word, WordKind, program_key};

/// How a runner's program is named.
#[derive(Debug, Clone, Copy)]
enum Program {
    /// Exactly this key.
    Named(&'static str),
    /// This key, or it followed by a version of digits and dots (`python3`, `python3.12`).
    Versioned(&'static str),
}

impl Program {
    fn names(self, key: &str) -> bool {
        match self {
            Program::Named(name) => key == name,
            Program::Versioned(stem) => key
                .strip_prefix(stem)
                .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.')),
        }
    }
}

/// The runner forms: the program and the words that must follow it, as written. The rule
/// offered is these words; what follows them is checked by the option table.
const RUNNERS: &[(Program, &[&str])] = &[
    // Python: pytest, directly, as a module, or in the project's environment.
    (Program::Versioned("python"), &["-m", "pytest"]),
    (Program::Named("pytest"), &[]),
    (Program::Named("py.test"), &[]),
    (Program::Named("uv"), &["run", "pytest"]),
    (Program::Named("poetry"), &["run", "pytest"]),
    // JavaScript and TypeScript through the project's own packages.
    (Program::Named("npx"), &["jest"]),
    (Program::Named("npx"), &["vitest"]),
    (Program::Named("npx"), &["playwright", "test"]),
    (Program::Named("npx"), &["tsc"]),
    (Program::Named("npx"), &["eslint"]),
    // Build tools whose test phase or task is the project's.
    (Program::Named("mvn"), &["test"]),
    (Program::Named("mvnw"), &["test"]),
    (Program::Named("gradle"), &["test"]),
    (Program::Named("gradlew"), &["test"]),
];

/// The prefix for a runner form or a project script, `None` when the command is neither.
/// `words` are one plain simple command's (no expansion).
pub(super) fn runner_prefix(os: OsFamily, words: &[Word]) -> Option<String> {
    let program = words.first()?;
    if program.kind != WordKind::Literal
        || !(plain_name(&program.text) || in_workspace(os, program))
    {
        return None;
    }
    let key = program_key(&program.text, os);
    let form = RUNNERS.iter().find(|(name, then)| {
        name.names(&key)
            && then.len() < words.len()
            && then
                .iter()
                .zip(&words[1..])
                .all(|(want, have)| have.known() == Some(*want))
    });
    if let Some((_, then)) = form {
        let prefix: Vec<&str> = words[..=then.len()]
            .iter()
            .map(|w| w.text.as_str())
            .collect();
        return Some(prefix.join(" "));
    }
    // A project's shell script, by its path: not a program that runs what it is given.
    let script = in_workspace(os, program)
        && SCRIPT_EXTENSIONS.iter().any(|ext| key.ends_with(ext))
        && !is_protected(&key)
        && !runs_other_programs(&key)
        && !runs_code(&key);
    script.then(|| program.text.clone())
}

/// The endings of a project script offered by its path. Shell scripts only: a project's other
/// executables often run code given as arguments (`bin/rails runner CODE`, `./manage.py
/// shell -c CODE`, `bin/console`), and a path without an ending may be a link to any
/// program (`bin/curl`).
const SCRIPT_EXTENSIONS: &[&str] = &[".sh", ".bash"];

/// A program name without a path: letters, digits and `._+-`, not starting with `-` or `.`.
fn plain_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(['-', '.'])
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
}

/// A relative path to a file inside the workspace, written plainly (`./run_tests.sh`,
/// `scripts/test.sh`, `.venv/bin/python`): on Unix, holding a `/`, every component a plain
/// name (a leading `.` allowed, `.` alone only first, never `..`), ASCII letters, digits and
/// `._+-` only.
fn in_workspace(os: OsFamily, word: &Word) -> bool {
    if os != OsFamily::Unix || word.kind != WordKind::Literal || !word.text.contains('/') {
        return false;
    }
    let text = word.text.strip_prefix("./").unwrap_or(&word.text);
    !text.is_empty()
        && text.split('/').all(|part| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && !part.starts_with('-')
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn prefix(command: &str) -> Option<String> {
        let words: Vec<Word> = command.split_whitespace().map(Word::literal).collect();
        runner_prefix(OsFamily::Unix, &words)
    }

    #[test]
    fn runner_forms_and_scripts() {
        let cases: &[(&str, Option<&str>)] = &[
            ("python3 -m pytest -x tests/", Some("python3 -m pytest")),
            ("python -m pytest", Some("python -m pytest")),
            ("python3.12 -m pytest -k x", Some("python3.12 -m pytest")),
            (
                ".venv/bin/python -m pytest",
                Some(".venv/bin/python -m pytest"),
            ),
            ("python3 -m pip install x", None),
            ("python3 -c print(1)", None),
            ("python3 x.py", None),
            ("python3-config -m pytest", None),
            ("python3 -m", None),
            ("pytest -x", Some("pytest")),
            ("uv run pytest -q", Some("uv run pytest")),
            ("uv run python x.py", None),
            ("poetry run pytest", Some("poetry run pytest")),
            ("npx jest --ci", Some("npx jest")),
            ("npx vitest run", Some("npx vitest")),
            ("npx playwright test", Some("npx playwright test")),
            ("npx playwright install", None),
            ("npx tsc --noEmit", Some("npx tsc")),
            ("npx eslint .", Some("npx eslint")),
            ("npx cowsay", None),
            ("npx --package=x jest", None),
            ("mvn test -q", Some("mvn test")),
            ("./mvnw test", Some("./mvnw test")),
            ("./gradlew test", Some("./gradlew test")),
            ("./run_tests.sh", Some("./run_tests.sh")),
            ("scripts/test.sh -v", Some("scripts/test.sh")),
            ("ci/test.bash", Some("ci/test.bash")),
            ("bin/rails runner x", None),
            ("./manage.py shell -c x", None),
            ("bin/curl x", None),
            ("scripts/test", None),
            ("./bash x", None),
            ("./node x.js", None),
            ("bin/env ls", None),
            ("./rm x", None),
            ("../x.sh", None),
            ("./a/../x.sh", None),
            ("/usr/local/bin/x.sh", None),
            ("~/x.sh", None),
            ("./", None),
            ("bash run_tests.sh", None),
            ("sh ./run_tests.sh", None),
            ("make", None),
        ];
        for (command, want) in cases {
            assert_eq!(prefix(command).as_deref(), *want, "input: {command:?}");
        }
        let windows: Vec<Word> = ["scripts/test.sh"].map(Word::literal).to_vec();
        assert_eq!(runner_prefix(OsFamily::Windows, &windows), None);
    }
}
