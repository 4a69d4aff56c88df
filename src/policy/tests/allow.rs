//! Allow rules, and the options they do not cover.

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn unix_allow_rules() {
    table(
        OsFamily::Unix,
        &[
            ("git status", Allow),
            ("git status -s", Allow),
            ("git status --porcelain=v2", Allow),
            ("git 'status'", Allow),
            ("git log --oneline -5", Allow),
            ("cargo test", Allow),
            ("cargo test --all -- --nocapture", Allow),
            ("git  status", Allow),
            ("\tgit status\t", Allow),
            ("git status #why", Allow),
            ("git statusx", Ask),
            ("git stat", Ask),
            ("/usr/bin/git status", Ask),
            ("FOO=1 git status", Ask),
            ("git status > x", Ask),
            ("git status | cat", Ask),
            ("git status; ls", Ask),
            ("git status && ls", Ask),
            ("git status $x", Ask),
            ("git status *.rs", Ask),
            ("git status `x`", Ask),
            ("git status\nls", Ask),
            ("git status &", Ask),
            ("git status 'a;b'", Ask),
            ("git status \"$(x)\"", Ask),
            ("(git status)", Ask),
            ("git status <<< x", Ask),
            ("cargo tests", Ask),
        ],
    );
}

#[test]
fn allow_rules_do_not_cover_risky_options() {
    let rules = Rules::new(
        [
            "git log",
            "git diff",
            "cargo test",
            "make",
            "npm test",
            "python -m pytest",
            "git log --output=log.txt",
        ]
        .iter()
        .map(|p| rule(p, Source::User))
        .collect(),
        vec![],
    );
    let cases: &[(&str, Verdict, &str)] = &[
        ("git log --oneline", Allow, "matches allow rule \"git log\""),
        (
            "git log --output=/home/u/.bashrc",
            Ask,
            "`--output=/home/u/.bashrc` writes a file; allow rule \"git log\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "git log --output=log.txt",
            Allow,
            "matches allow rule \"git log --output=log.txt\"",
        ),
        (
            "git log -p --ext-diff",
            Ask,
            "`--ext-diff` runs the external diff program from the configuration; allow rule \"git log\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "git diff --no-index /home/u/.ssh/id_rsa /dev/null",
            Ask,
            "`--no-index` compares files outside the repository; allow rule \"git diff\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "cargo test --config 'target.x.runner=\"/tmp/x\"'",
            Ask,
            "`--config` changes the configuration (`target.….runner` and `build.rustflags` run programs); allow rule \"cargo test\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "make SHELL=/tmp/x",
            Ask,
            "`SHELL=/tmp/x` sets a make variable (`SHELL=…` or `.SHELLFLAGS=…` run any program); allow rule \"make\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "npm test --node-options=--require=/tmp/x.js",
            Ask,
            "`--node-options=--require=/tmp/x.js` runs Node.js with chosen options (`--require` loads any code); allow rule \"npm test\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "python -m pytest --basetemp=/home/u",
            Ask,
            "`--basetemp=/home/u` writes to (and empties) a chosen directory; allow rule \"python -m pytest\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "python -m pytest -x tests",
            Allow,
            "matches allow rule \"python -m pytest\"",
        ),
    ];
    for (command, verdict, reason) in cases {
        let decision = decide(&rules, OsFamily::Unix, command);
        assert_eq!(
            (decision.verdict, decision.reason.as_str()),
            (*verdict, *reason),
            "{command:?}"
        );
    }
    let decision = decide(&rules, OsFamily::Unix, "git log --output=x");
    assert_eq!(
        (decision.source, decision.rule.as_deref()),
        (Source::Builtin, Some("git --output"))
    );
}
