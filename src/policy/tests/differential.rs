//! The differential test: commands generated from a grammar of tricky pieces (escapes, quotes,
//! `#`, `]`, blanks of every kind, `\` + newline, operators, operators inside `"…"`) run through real `sh -c` (and
//! `bash -c`) with fake programs on `PATH` that record their argv. Whenever the policy allows
//! a command, the words it decided must be exactly the argv the shell passed; whenever the
//! shell really ran the denied program `zap`, the policy must not allow the command, not even
//! in mode allow-all. Stand-ins for wrappers that no table names (`w` runs its arguments, `w1`
//! skips one first, `hf` runs its first argument as a script, like `hyperfine`) check that a
//! deny rule is found wherever the program really ran. Proptest explores a fixed sequence in CI (`PROPTEST_RNG_SEED`) and a
//! random one elsewhere; every case it ever found is kept in `FOUND`.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::super::{
    Context, Mode, OsFamily, ReadOnly, Rule, Rules, Source, Verdict, apply_mode, split,
};
use super::decide;
use crate::policy::word::WordKind;

/// Programs on the fake `PATH`: `a` and `b` are allowed by rules, `ls` and `date` by the
/// built-in list, `zap` is denied.
/// `cat`, `head`, `tail`, `wc`, `grep`, `sed` stand in for the inspection programs.
const FAKES: &[&str] = &[
    "a", "b", "ls", "date", "zap", "cat", "head", "tail", "wc", "grep", "sed",
];

/// Wrapper stand-ins on the fake `PATH`, named in no table of the policy: they run another
/// program without recording themselves.
const WRAPPERS: &[(&str, &str)] = &[
    ("w", "exec \"$@\""),
    ("w1", "shift; exec \"$@\""),
    ("hf", "exec /bin/sh -c \"$1\""),
];

/// Ends one invocation's record in the log (the grammar never produces it).
const RECORD_END: &str = "\u{1e}END";

/// Longest a generated command may run before the test calls it hung.
const PATIENCE: Duration = Duration::from_secs(10);

/// Where generated commands run: fake programs, a log, an empty working directory.
struct Bench {
    root: tempfile::TempDir,
}

impl Bench {
    fn new() -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        let bin = root.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir bin");
        std::fs::create_dir_all(root.path().join("work/src")).expect("mkdir work");
        std::fs::write(root.path().join("work/x"), "x\n").expect("write x");
        for name in FAKES {
            let script = format!(
                "#!/bin/sh\nprintf '%s\\0' {name} \"$@\" '{RECORD_END}' >> \"$ARGV_LOG.$$\"\n"
            );
            let path = bin.join(name);
            std::fs::write(&path, script).expect("write fake");
            make_executable(&path);
        }
        for (name, body) in WRAPPERS {
            let path = bin.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write wrapper");
            make_executable(&path);
        }
        Self { root }
    }

    /// The policy's context: the working directory is the workspace.
    fn context(&self) -> Context {
        let work = self.root.path().join("work");
        Context::new(OsFamily::Unix, &work, &work, ReadOnly::Inspect)
    }

    /// The per-process logs of one run (`log` is its prefix).
    fn logs(&self, log: &Path) -> Vec<PathBuf> {
        let prefix = format!(
            "{}.",
            log.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("argv.log")
        );
        let mut logs: Vec<PathBuf> = std::fs::read_dir(self.root.path())
            .expect("read bench")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .collect();
        logs.sort();
        logs
    }

    /// A fresh log prefix per run: a process a command left in the background (dash reads
    /// `&>` as `&` then `>`) may still write after the run, into its own run's logs.
    fn log(&self) -> PathBuf {
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.root.path().join(format!("argv-{run}.log"))
    }

    /// Runs `command` with `shell -c` and returns every recorded argv, or `None` when the
    /// shell is not installed.
    fn run(&self, shell: &str, command: &str) -> Option<Vec<Vec<String>>> {
        let path = Path::new(shell);
        if !path.exists() {
            return None;
        }
        let log = self.log();
        let mut child = Command::new(path)
            .arg("-c")
            .arg(command)
            .env_clear()
            .env("PATH", self.root.path().join("bin"))
            // `~` and `~/x` expand to $HOME; with HOME=`~` they keep their text, which is
            // what the policy decides on (it accepts $HOME as written).
            .env("HOME", "~")
            .env("ARGV_LOG", &log)
            .current_dir(self.root.path().join("work"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn shell");
        let start = Instant::now();
        while child.try_wait().expect("wait").is_none() {
            assert!(
                start.elapsed() < PATIENCE,
                "{shell} -c {command:?} hung; kill it"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        // One log per process (`$ARGV_LOG.$$`): the parts of a pipeline run at once.
        let mut bytes = Vec::new();
        for path in self.logs(&log) {
            if let Ok(mut file) = std::fs::File::open(&path) {
                file.read_to_end(&mut bytes).expect("read log");
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut calls = Vec::new();
        let mut call = Vec::new();
        for arg in text.split('\0') {
            if arg == RECORD_END {
                calls.push(std::mem::take(&mut call));
            } else if !arg.is_empty() || !call.is_empty() || !calls.is_empty() {
                call.push(arg.to_owned());
            }
        }
        Some(calls)
    }
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[cfg(not(unix))]
fn make_executable(_: &Path) {}

fn rules() -> Rules {
    let rule = |prefix: &str| Rule {
        prefix: prefix.to_owned(),
        source: Source::User,
    };
    Rules::new(vec![rule("a"), rule("b")], vec![rule("zap")])
}

/// Checks one command against every installed shell; `Err` says what disagreed.
fn check(bench: &Bench, command: &str) -> Result<(), String> {
    let rules = rules();
    let decision = super::super::decide(&rules, &bench.context(), command);
    let all = apply_mode(decision.clone(), Mode::AllowAll);
    for shell in ["/bin/sh", "/bin/bash"] {
        let Some(calls) = bench.run(shell, command) else {
            continue;
        };
        let zapped = calls.iter().any(|c| c.first().is_some_and(|p| p == "zap"));
        if zapped && all.verdict == Verdict::Allow {
            return Err(format!(
                "{shell} ran `zap` but the policy allows under allow-all: {command:?} ({})",
                all.reason
            ));
        }
        if decision.verdict != Verdict::Allow {
            continue;
        }
        if !decision.parts.is_empty() {
            composed(shell, command, &decision.parts, &calls)?;
            continue;
        }
        let words =
            split::split(command).ok_or_else(|| format!("allowed but not split: {command:?}"))?;
        let [call] = calls.as_slice() else {
            return Err(format!(
                "allowed {command:?} as one command, but {shell} ran {calls:?}"
            ));
        };
        if words.iter().any(|w| w.kind == WordKind::Pattern) {
            // A glob or brace pattern is allowed only where any expansion is fine; the
            // program itself is never a pattern.
            if call.first() != words.first().map(|w| &w.text) {
                return Err(format!(
                    "{shell} ran {call:?} for pattern command {command:?}"
                ));
            }
            continue;
        }
        let texts: Vec<&String> = words.iter().map(|w| &w.text).collect();
        let argv: Vec<&String> = call.iter().collect();
        if texts != argv {
            return Err(format!(
                "allowed {command:?} as {texts:?}, but {shell} ran {argv:?}"
            ));
        }
    }
    Ok(())
}

/// An allowed composition: every program the shell ran must be one of the parts, with exactly
/// that part's words (so nothing else ran and no other word — no path outside the workspace —
/// was named).
fn composed(
    shell: &str,
    command: &str,
    parts: &[super::super::PartDecision],
    calls: &[Vec<String>],
) -> Result<(), String> {
    let allowed: Vec<Vec<String>> = parts
        .iter()
        .filter_map(|part| split::split(&part.command))
        .map(|words| words.into_iter().map(|w| w.text).collect())
        .collect();
    for call in calls {
        if !allowed.contains(call) {
            return Err(format!(
                "allowed {command:?} as the parts {allowed:?}, but {shell} ran {call:?}"
            ));
        }
    }
    Ok(())
}

/// Parts for generated compositions: allowed ones, tricky ones and ones that must ask.
const PARTS: &[&str] = &[
    "a",
    "b -l",
    "ls",
    "date +%s",
    "cat x",
    "head -n 5 x",
    "tail -n 2",
    "wc -l",
    "grep -n 'a b' x",
    "sed -n 1p x",
    "sed -n '1,2p' x",
    "cat src/../x",
    "cat ../x",
    "cat /etc/passwd",
    "cat .env",
    "zap",
    "true",
    "echo ok",
    ":",
    "cd src",
    "cat '#x'",
    "a #c",
    "x=1 a",
    "\\cat x",
    "sed -ni 1p x",
    "grep \"a|b\" x",
    "grep -E \"(a;b)&c\" x",
    "grep \"<x\" x",
    "cat \"x\"",
];

/// Joints between parts: the harmless operators and redirections, and ones that must ask.
const JOINTS: &[&str] = &[
    " | ",
    "|",
    " && ",
    "&&",
    " || ",
    "; ",
    ";",
    " 2>/dev/null | ",
    " 2>&1 | ",
    " >/dev/null; ",
    " &>/dev/null && ",
    " &>/dev/null ",
    " &>>/dev/null ",
    " < x | ",
    " 2>/dev/null || ",
    " & ",
    " > out; ",
    " |& ",
    " 2>x | ",
    "\n",
    " ;; ",
];

fn composition_strategy() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(PARTS),
        proptest::collection::vec(
            (
                proptest::sample::select(JOINTS),
                proptest::sample::select(PARTS),
            ),
            1..5,
        ),
    )
        .prop_map(|(first, rest)| {
            let mut command = first.to_owned();
            for (joint, part) in rest {
                command.push_str(joint);
                command.push_str(part);
            }
            command
        })
}

/// Program words: plain, quoted, escaped, and ones that are not programs at all.
const PROGRAMS: &[&str] = &[
    "a", "b", "ls", "date", "zap", "w", "w1 x", "w w1 -", "hf", "'a'", "\"b\"", "\\a", "a\\ ",
    "l's'", "#a", "]", "[", "{", "!", "x=1", "\\#", "~", "a\\\t", "'a'\\ ", "\\\\a", "x=1\\ ",
];

/// Argument pieces: escapes, quotes, comment characters, brackets, blanks and operators.
const PIECES: &[&str] = &[
    "x",
    "-l",
    "--set=2001-01-01",
    "+%s",
    "#",
    "#x",
    "]",
    "[",
    "]]",
    "[[",
    "\\#",
    "\\ ",
    "\\\\",
    "\\\t",
    "\\'",
    "\\\"",
    "'q q'",
    "\"d d\"",
    "\"a\\\"b\"",
    "\"\\\\\"",
    "\"\\x\"",
    "''",
    "\"\"",
    "'#'",
    "\"#\"",
    "~",
    "~/x",
    "~x",
    "a=~",
    "x:~",
    "{a,b}",
    "{",
    "}",
    "*",
    "?",
    "!",
    "=",
    "é",
    "\u{a0}",
    "\u{3000}",
    "\u{200b}",
    "\r",
    "\u{b}",
    "\u{c}",
    "\\\n",
    "\n",
    "`zap`",
    "\\`",
    "$(zap)",
    "<<E\n",
    "<<-E\n\t",
    "\nE\n",
    "((",
    "))",
    "\r\n",
    "$'",
    "${x-'}",
    "'\\'",
    "\"'\"",
    "'\"'",
    "\\\\\\ ",
    "; zap",
    "&& zap",
    "\nzap",
    "| zap",
    "zap",
    "(",
    ")",
    "\\",
    "'",
    "\"",
    "\\\r",
    "-",
    // Operators, `#` and glob characters inside "…" are text; `$`, backticks and newlines
    // are not.
    "\"a|b\"",
    "\"x; zap\"",
    "\"&& zap\"",
    "\"<<<<\"",
    "\"(a|b)\"",
    "\"a\\|b\"",
    "\"> out\"",
    "\"{a,b}\"",
    "\"*.x\"",
    "\"[x]?\"",
    "\"&\"",
    "\"$(zap)\"",
    "\"`zap`\"",
    "\"a\nzap\"",
];

/// What goes between pieces: blanks, nothing (glued), escaped blanks, line continuations.
const SEPARATORS: &[&str] = &[" ", "\t", "", "  ", "\\\t", "\\ ", " \\\n", "\\\n", " \t "];

/// Every case the generator ever found (and the review's), kept as a table.
const FOUND: &[&str] = &[
    "date +%s\\\t#x --set=2001-01-01",
    "date +%s\\\t#x && zap",
    "a 'q'\\ #x; zap",
    "ls ] ]#x --foo",
    "ls ] ]#x; zap",
    "a\\\t#x",
    "a x\\ #y",
    "a ''#x",
    "a \\\\ #x",
    "a ~x",
    "a a=~",
    "a \u{a0}#x",
    "a \\\n#x",
    "a x\\\n#y; zap",
    "x=1\\\t\\' zap",
    "[ \t # \nzap ]",
    "cat x &>/dev/null zap",
    "a &>/dev/null a",
    "ls &>/dev/null w zap",
    "hf zap\\ {a,b}",
];

#[test]
fn found_cases_agree_with_the_shell() {
    let bench = Bench::new();
    let failures: Vec<String> = FOUND
        .iter()
        .filter_map(|command| check(&bench, command).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How `zap` may be written after a wrapper.
const ZAP_SPELLINGS: &[&str] = &[
    "zap",
    "'zap'",
    "\"zap\"",
    "\\zap",
    "z''ap",
    "./../bin/zap",
    "zap x",
    "'zap' -r x",
];

#[test]
fn wrappers_no_table_names_never_hide_the_denied_program() {
    let bench = Bench::new();
    let mut cases = Vec::new();
    for spelling in ZAP_SPELLINGS {
        for prefix in ["w", "w1 x", "w1 -", "w w1 x", "w -- w", "a w", "w a"] {
            cases.push(format!("{prefix} {spelling}"));
        }
        let unquoted = spelling.replace(['\'', '"', '\\'], "");
        cases.push(format!("hf '{unquoted}'"));
        cases.push(format!("hf \"{unquoted}\" x"));
        cases.push(format!("w hf '{unquoted}'"));
    }
    let mut ran = 0;
    let mut failures = Vec::new();
    for command in &cases {
        if let Err(failure) = check(&bench, command) {
            failures.push(failure);
        }
        let calls = bench.run("/bin/sh", command).unwrap_or_default();
        if calls.iter().any(|c| c.first().is_some_and(|p| p == "zap")) {
            ran += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The stand-ins work: the denied program really ran behind most of them (`./../bin/zap`
    // in `work/` reaches it; `a w` and the like do not run it at all).
    assert!(
        ran * 2 > cases.len(),
        "zap ran in only {ran} of {} cases",
        cases.len()
    );
}

#[test]
fn hidden_commands_are_denied() {
    let rules = rules();
    for command in ["date +%s\\\t#x && zap", "a 'q'\\ #x; zap", "ls ] ]#x; zap"] {
        let decision = decide(&rules, OsFamily::Unix, command);
        assert_eq!(decision.verdict, Verdict::Deny, "{command:?}: {decision:?}");
    }
    for command in ["date +%s\\\t#x --set=2001-01-01", "ls ] ]#x --foo"] {
        let decision = decide(&rules, OsFamily::Unix, command);
        assert_eq!(decision.verdict, Verdict::Ask, "{command:?}: {decision:?}");
        assert!(decision.destructive, "{command:?}: allow-all must ask too");
    }
}

fn command_strategy() -> impl Strategy<Value = String> {
    let program = proptest::sample::select(PROGRAMS);
    let rest = proptest::collection::vec(
        (
            proptest::sample::select(SEPARATORS),
            proptest::sample::select(PIECES),
        ),
        0..6,
    );
    (program, rest).prop_map(|(program, rest)| {
        let mut command = program.to_owned();
        for (separator, piece) in rest {
            command.push_str(separator);
            command.push_str(piece);
        }
        command
    })
}

thread_local! {
    /// One bench per test thread: creating the fake programs costs more than a case.
    static BENCH: Bench = Bench::new();
}

/// Cases per run: 1,500 unless `PROPTEST_CASES` asks for more (a long local campaign).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn policy_words_are_the_shell_words(command in command_strategy()) {
        BENCH.with(|bench| check(bench, &command)).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn composed_commands_run_only_their_allowed_parts(command in composition_strategy()) {
        BENCH.with(|bench| check(bench, &command)).map_err(TestCaseError::fail)?;
    }
}
