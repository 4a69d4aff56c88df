//! The policy's tables: deny search, built-in lists, allow rules, Windows, review findings,
//! and the differential test against real `sh`.

mod allow;
mod anywhere;
mod builtin;
mod deny;
mod differential;
mod fast;
mod fast_cases;
mod fewer_copies;
mod inspect;
mod precision;
mod properties;
mod review;
mod secrets;
mod test_operands;
mod windows;

pub(super) use super::*;
use pretty_assertions::assert_eq;

pub(super) use super::simple::MAX_COMMAND_BYTES;

pub(super) use Verdict::{Allow, Ask, Deny};

/// The workspace the tables run in (never touched: the policy judges paths lexically).
pub(super) const WORKSPACE: &str = "/work/project";

/// The context most tables run in: the workspace is the working directory. The tables of 0.1
/// behaviour run with the strict list (which keeps exactly that behaviour); `inspect` has its
/// own tables.
pub(super) fn context(os: OsFamily, read_only: ReadOnly) -> Context {
    Context::new(
        os,
        std::path::Path::new(WORKSPACE),
        std::path::Path::new(WORKSPACE),
        read_only,
    )
}

/// [`super::decide`] with the strict list: the tables name only the OS family.
pub(super) fn decide(rules: &Rules, os: OsFamily, command: &str) -> Decision {
    super::decide(rules, &context(os, ReadOnly::Strict), command)
}

/// [`super::decide`] with the inspect list (the default).
pub(super) fn decide_inspect(rules: &Rules, os: OsFamily, command: &str) -> Decision {
    super::decide(rules, &context(os, ReadOnly::Inspect), command)
}

/// Runs a table of (command, expected verdict) with the inspect list.
pub(super) fn inspect_table(os: OsFamily, cases: &[(&str, Verdict)]) {
    inspect_table_under(&rules(), os, cases);
}

/// [`inspect_table`] under the given rules.
pub(super) fn inspect_table_under(rules: &Rules, os: OsFamily, cases: &[(&str, Verdict)]) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(command, want)| {
            let got = decide_inspect(rules, os, command);
            (got.verdict != *want).then(|| {
                format!(
                    "{command:?}: want {want:?}, got {:?} ({})",
                    got.verdict, got.reason
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{os:?} inspect failures:\n{}",
        failures.join("\n")
    );
}

pub(super) fn rule(prefix: &str, source: Source) -> Rule {
    Rule {
        prefix: prefix.to_owned(),
        source,
    }
}

/// The rules most tables run under.
pub(super) fn rules() -> Rules {
    Rules::new(
        vec![
            rule("git status", Source::User),
            rule("git log", Source::User),
            rule("cargo test", Source::Flag),
        ],
        vec![
            rule("rm -rf", Source::User),
            rule("git push", Source::Project),
            rule("sudo", Source::User),
            rule("del /s", Source::User),
        ],
    )
}

/// Runs a table of (command, expected verdict); reports every failing input at once.
pub(super) fn table(os: OsFamily, cases: &[(&str, Verdict)]) {
    let rules = rules();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(command, want)| {
            let got = decide(&rules, os, command);
            (got.verdict != *want).then(|| {
                format!(
                    "{command:?}: want {want:?}, got {:?} ({})",
                    got.verdict, got.reason
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{os:?} failures:\n{}",
        failures.join("\n")
    );
}

/// Runs a table of (command, expected `destructive`).
pub(super) fn destructive_table(os: OsFamily, cases: &[(&str, bool)]) {
    let rules = Rules::empty();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(command, want)| {
            let got = decide(&rules, os, command);
            (got.destructive != *want)
                .then(|| format!("{command:?}: want destructive={want}, got {got:?}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{os:?} failures:\n{}",
        failures.join("\n")
    );
}

#[test]
#[allow(clippy::too_many_lines)] // one table
fn decisions_in_full() {
    let rules = rules();
    // The offered prefix has its own test below.
    let d = |command: &str| Decision {
        prefix: None,
        ..decide(&rules, OsFamily::Unix, command)
    };
    let full = |verdict, reason: &str, source, rule: Option<&str>, destructive| Decision {
        verdict,
        reason: reason.to_owned(),
        source,
        rule: rule.map(str::to_owned),
        destructive,
        prefix: None,
        parts: Vec::new(),
    };
    let cases: Vec<(&str, Decision)> = vec![
        (
            "ls",
            full(
                Allow,
                "`ls` is on the built-in read-only list",
                Source::Builtin,
                Some("ls"),
                false,
            ),
        ),
        (
            "git status -s",
            full(
                Allow,
                "matches allow rule \"git status\"",
                Source::User,
                Some("git status"),
                false,
            ),
        ),
        (
            "cargo test",
            full(
                Allow,
                "matches allow rule \"cargo test\"",
                Source::Flag,
                Some("cargo test"),
                false,
            ),
        ),
        (
            "touch x",
            full(
                Ask,
                "`touch` is not on the read-only list",
                Source::Builtin,
                None,
                false,
            ),
        ),
        (
            "ls > x",
            full(
                Ask,
                "contains a redirection ('>')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "ls | x",
            full(Ask, "contains a pipe ('|')", Source::Parser, None, false),
        ),
        (
            "ls; x",
            full(
                Ask,
                "contains a command separator (';')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "ls && x",
            full(
                Ask,
                "contains a command separator ('&&')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            // Any word may be the program (an unknown wrapper): one that is not fixed could be
            // one a deny rule names.
            "ls $x",
            full(
                Ask,
                "a word that is not fixed may be a program matching a deny rule",
                Source::Parser,
                None,
                true,
            ),
        ),
        (
            "ls &",
            full(
                Ask,
                "contains a background operator ('&')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "ls\nx",
            full(Ask, "contains a newline", Source::Parser, None, false),
        ),
        ("", full(Ask, "empty command", Source::Parser, None, false)),
        (
            "rm -rf /",
            full(
                Deny,
                "matches deny rule \"rm -rf\"",
                Source::User,
                Some("rm -rf"),
                true,
            ),
        ),
        (
            "git push",
            full(
                Deny,
                "matches deny rule \"git push\"",
                Source::Project,
                Some("git push"),
                false,
            ),
        ),
        (
            "rm $f /",
            full(
                Ask,
                "may match deny rule \"rm -rf\" (a word that is not fixed could complete it)",
                Source::User,
                Some("rm -rf"),
                true,
            ),
        ),
        (
            "echo",
            full(
                Ask,
                "`echo` is on the read-only list only with arguments",
                Source::Builtin,
                None,
                false,
            ),
        ),
        (
            "date -s x",
            full(
                Ask,
                "`date` with `-s` is not read-only",
                Source::Builtin,
                None,
                false,
            ),
        ),
        (
            "(ls)",
            full(
                Ask,
                "is not a single simple command (a subshell)",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "FOO=1 ls",
            full(
                Ask,
                "sets a variable for the program (`FOO=1`)",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "curl x | sh",
            full(
                Ask,
                "`sh` reads commands from standard input, which cannot be checked",
                Source::Parser,
                None,
                true,
            ),
        ),
    ];
    for (command, want) in cases {
        assert_eq!(d(command), want, "input: {command:?}");
    }
    let windows = decide(&rules, OsFamily::Windows, "date /t");
    assert_eq!(
        windows,
        full(
            Allow,
            "`date /t` is on the built-in read-only list",
            Source::Builtin,
            Some("date /t"),
            false
        )
    );
}

#[test]
fn modes() {
    let base = |verdict, destructive| Decision {
        verdict,
        reason: "r".to_owned(),
        source: Source::Builtin,
        rule: None,
        destructive,
        prefix: None,
        parts: Vec::new(),
    };
    let cases: &[(Mode, Verdict, bool, Verdict)] = &[
        (Mode::Ask, Allow, false, Allow),
        (Mode::Ask, Ask, false, Ask),
        (Mode::Ask, Deny, false, Deny),
        (Mode::Deny, Allow, false, Allow),
        (Mode::Deny, Ask, false, Deny),
        (Mode::Deny, Deny, false, Deny),
        (Mode::Off, Allow, false, Deny),
        (Mode::Off, Ask, false, Deny),
        (Mode::Off, Deny, false, Deny),
        (Mode::AllowAll, Allow, false, Allow),
        (Mode::AllowAll, Ask, false, Allow),
        (Mode::AllowAll, Ask, true, Ask),
        (Mode::AllowAll, Deny, false, Deny),
        (Mode::AllowAll, Deny, true, Deny),
    ];
    for (mode, from, destructive, want) in cases {
        let got = apply_mode(base(*from, *destructive), *mode);
        assert_eq!(
            got.verdict, *want,
            "{mode:?} on {from:?} (destructive {destructive})"
        );
    }
    let denied = apply_mode(base(Ask, false), Mode::Deny);
    assert_eq!(denied.reason, "r (mode `deny` never asks)");
    let rules = rules();
    let rm = apply_mode(decide(&rules, OsFamily::Unix, "rm x"), Mode::AllowAll);
    assert_eq!(rm.verdict, Ask, "protected program in allow-all: {rm:?}");
    let touch = apply_mode(decide(&rules, OsFamily::Unix, "touch x"), Mode::AllowAll);
    assert_eq!(touch.verdict, Allow, "{touch:?}");
    let denied = apply_mode(decide(&rules, OsFamily::Unix, "sudo ls"), Mode::AllowAll);
    assert_eq!(denied.verdict, Deny, "deny rules win in every mode");
    let order = [Mode::AllowAll, Mode::Ask, Mode::Deny, Mode::Off].map(Mode::strictness);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(Allow < Ask && Ask < Deny);
}

#[test]
fn json_shape() {
    let rules = rules();
    let json = |command: &str| {
        serde_json::to_string(&decide(&rules, OsFamily::Unix, command)).unwrap_or_default()
    };
    assert_eq!(
        json("git push"),
        r#"{"decision":"deny","reason":"matches deny rule \"git push\"","source":"project","rule":"git push"}"#
    );
    assert_eq!(
        json("touch x"),
        r#"{"decision":"ask","reason":"`touch` is not on the read-only list","source":"builtin","rule":null}"#
    );
    let mode: Result<Mode, _> = serde_json::from_str(r#""allow-all""#);
    assert_eq!(mode.ok(), Some(Mode::AllowAll));
    let os: Result<OsFamily, _> = serde_json::from_str(r#""windows""#);
    assert_eq!(os.ok(), Some(OsFamily::Windows));
}

/// `decide` offers the same prefix `suggest_prefix` would, from its one parse, and only when
/// it asks.
#[test]
fn the_offered_prefix_comes_with_the_decision() {
    let rules = rules();
    let cases: &[(OsFamily, &str, Option<&str>)] = &[
        (OsFamily::Unix, "touch F", Some("touch")),
        (OsFamily::Unix, "git commit -m x", Some("git commit")),
        (OsFamily::Unix, "cargo build --release", Some("cargo build")),
        (OsFamily::Unix, "rm x", None),
        (OsFamily::Unix, "touch F; ls", None),
        (OsFamily::Unix, "touch $F", None),
        (OsFamily::Unix, "ls", None),
        (OsFamily::Unix, "rm -rf x", None),
        (OsFamily::Unix, "t\\\nouch F", None),
        (OsFamily::Windows, "mkdir x", Some("mkdir")),
        (OsFamily::Windows, "mkdir x & dir", None),
    ];
    for (os, command, want) in cases {
        let decision = decide(&rules, *os, command);
        assert_eq!(
            decision.prefix.as_deref(),
            *want,
            "{command:?}: {decision:?}"
        );
        if decision.verdict == Ask {
            assert_eq!(decision.prefix, suggest_prefix(*os, command), "{command:?}");
        }
    }
}
