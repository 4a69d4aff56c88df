//! Deny rules match anywhere (issue 17 §2, §3): behind wrappers no table names, in arguments
//! that look like scripts, through git aliases and other spellings — counted next to the
//! commands that must not be denied (over-denial), so that tightening one side shows its cost
//! on the other.

use super::*;

/// Prefixes that run the program named by a later word, known to a table or not.
const WRAPPER_PREFIXES: &[&str] = &[
    "setarch x86_64",
    "setarch x86_64 -R",
    "linux64",
    "linux32 --",
    "unbuffer",
    "unbuffer -p",
    "rlwrap",
    "rlwrap -a",
    "sshpass -p x",
    "sshpass -e",
    "xvfb-run",
    "xvfb-run -a",
    "catchsegv",
    "perf stat",
    "perf record -g --",
    "perf trace",
    "dbus-run-session",
    "dbus-run-session --",
    "cgexec -g cpu:x",
    "runcon -t unconfined_t",
    "bwrap --bind / /",
    "bwrap --dev-bind / / --",
    "chpst -u nobody",
    "mpirun -np 2",
    "mpiexec -n 1",
    "entr -r",
    "gosu nobody",
    "tini --",
    "nice -n 5 setarch x86_64",
    "some-wrapper-nobody-listed",
    "some-wrapper --opt value",
    "/opt/tools/bin/launcher",
];

/// Deny rules of every shape, with a command each denies and spellings of that command.
const RULE_SHAPES: &[(&str, &[&str])] = &[
    (
        "rm -rf",
        &[
            "rm -rf x",
            "/bin/rm -fr x",
            "'rm' -r -f x",
            "\\rm --recursive --force x",
        ],
    ),
    (
        "git push",
        &[
            "git push",
            "git -C repo push origin",
            "/usr/bin/git push --force",
        ],
    ),
    (
        "sudo",
        &["sudo ls", "/usr/bin/sudo -u root id", "'sudo' ls"],
    ),
    ("chmod -R 777", &["chmod -R 777 x", "chmod 777 -R x"]),
    ("curl --data=x", &["curl --data=x http://h"]),
    ("find -delete", &["find . -delete"]),
    ("npm publish", &["npm publish", "npm --prefix x publish"]),
    ("docker rm", &["docker rm c", "docker container rm c"]),
];

fn rules_for(deny: &str) -> Rules {
    Rules::new(vec![], vec![rule(deny, Source::User)])
}

/// The commands a rule must deny: every wrapper prefix before every spelling, and the
/// spelling as a script argument of a benchmark-like program.
fn must_deny() -> Vec<(&'static str, String)> {
    let mut cases = Vec::new();
    for (deny, spellings) in RULE_SHAPES {
        for spelling in *spellings {
            cases.push((*deny, (*spelling).to_owned()));
            for prefix in WRAPPER_PREFIXES {
                cases.push((*deny, format!("{prefix} {spelling}")));
            }
            let quoted = spelling.replace('\'', "");
            cases.push((*deny, format!("hyperfine '{quoted}'")));
            cases.push((*deny, format!("hyperfine --warmup 3 '{quoted}' 'true'")));
            cases.push((*deny, format!("some-runner --cmd='{quoted}'")));
            cases.push((*deny, format!("some-runner \"{quoted}\"")));
        }
    }
    cases
}

/// Commands that must not be denied by the rule (they ask or are allowed): arguments that are
/// data, words that are not consecutive, other subcommands.
const MUST_NOT_DENY: &[(&str, &str)] = &[
    ("rm -rf", "grep 'rm -rf' notes.txt"),
    ("rm -rf", "grep -n -i 'rm -rf' notes.txt"),
    ("rm -rf", "grep -e 'rm -rf' -e other notes.txt"),
    ("rm -rf", "rg 'rm -rf' src"),
    ("rm -rf", "rg -n --glob '*.md' 'rm -rf'"),
    ("rm -rf", "git commit -m 'rm -rf old'"),
    ("rm -rf", "git commit -am 'rm -rf old'"),
    ("rm -rf", "git commit --message='rm -rf old'"),
    ("rm -rf", "git tag -a v1 -m 'rm -rf'"),
    ("rm -rf", "echo rm -rf x"),
    ("rm -rf", "echo 'rm -rf x'"),
    ("rm -rf", "printf '%s\\n' 'rm -rf x'"),
    ("rm -rf", "rm -r x"),
    ("rm -rf", "cat 'notes (draft).txt'"),
    ("sudo", "echo sudo"),
    ("sudo", "grep sudo /var/log/auth.log"),
    ("sudo", "git commit -m 'drop sudo'"),
    ("git push", "git stash push"),
    ("git push", "git stash push -m wip"),
    ("git push", "git status push"),
    ("git push", "git pusher"),
    ("git push", "git commit -m 'git push later'"),
    ("git push", "git -c alias.p=push status"),
    ("git push", "git -c core.editor=vim commit"),
    ("docker rm", "docker ps"),
    ("npm publish", "npm run publish-docs"),
];

#[test]
fn deny_rules_match_anywhere_and_data_stays_data() {
    let mut misses = Vec::new();
    let cases = must_deny();
    for (deny, command) in &cases {
        let decision = apply_mode(
            decide(&rules_for(deny), OsFamily::Unix, command),
            Mode::AllowAll,
        );
        if decision.verdict != Deny {
            misses.push(format!("deny {deny:?}: {command:?} → {decision:?}"));
        }
    }
    let mut over = Vec::new();
    for (deny, command) in MUST_NOT_DENY {
        let decision = decide(&rules_for(deny), OsFamily::Unix, command);
        if decision.verdict == Deny {
            over.push(format!("deny {deny:?}: {command:?} → {}", decision.reason));
        }
    }
    assert!(
        misses.is_empty() && over.is_empty(),
        "{} of {} commands missed, {} of {} over-denied:\n{}\n{}",
        misses.len(),
        cases.len(),
        over.len(),
        MUST_NOT_DENY.len(),
        misses.join("\n"),
        over.join("\n")
    );
}

#[test]
fn git_aliases_and_plumbing() {
    let rules = Rules::new(
        vec![rule("git status", Source::User)],
        vec![rule("git push", Source::User)],
    );
    let cases: &[(&str, Verdict)] = &[
        ("git -c alias.p=push p origin main", Deny),
        ("git -c alias.P=push p", Deny),
        ("git -c alias.p=push P", Deny),
        ("git -c alias.p='push --force' p", Deny),
        ("git -c alias.p='-c x.y=z push' p", Deny),
        ("git -c alias.q=push -c alias.p=q p", Deny),
        ("git -c 'alias.p=!git push' p", Deny),
        ("git -c 'alias.p=!sh -c \"git push\"' p", Deny),
        ("git --config-env=alias.p=X p", Deny),
        ("git --config-env alias.p=X p", Deny),
        ("git -c alias.x=status p", Deny),
        ("git -c include.path=/tmp/x p", Deny),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p",
            Deny,
        ),
        ("env GIT_CONFIG_PARAMETERS=x git p", Deny),
        ("git send-pack origin main", Deny),
        ("git http-push url", Deny),
        ("git -C x send-pack origin", Deny),
        ("git -c alias.p=push status", Ask),
        ("git -c alias.p=status p", Ask),
        ("git p", Ask),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(command, want)| {
            let got = decide(&rules, OsFamily::Unix, command);
            (got.verdict != *want).then(|| format!("{command:?}: want {want:?}, got {got:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn other_spellings_of_a_subcommand_are_denied() {
    let cases: &[(&str, &str)] = &[
        ("npm install", "npm i left-pad"),
        ("npm install", "npm isntall left-pad"),
        ("npm install", "npm add left-pad"),
        ("npm i", "npm install left-pad"),
        ("npm run", "npm run-script build"),
        ("npm run-script", "npm run build"),
        ("npm uninstall", "npm rm x"),
        ("cargo build", "cargo b"),
        ("cargo b", "cargo build --release"),
        ("cargo test", "cargo +nightly t"),
        ("docker rm", "docker container rm x"),
        ("docker run", "docker container run -it alpine"),
        ("git fetch", "git fetch-pack url"),
        ("yarn publish", "yarn workspace app publish"),
        ("yarn publish", "yarn npm publish"),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(deny, command)| {
            let got = decide(&rules_for(deny), OsFamily::Unix, command);
            (got.verdict != Deny).then(|| format!("deny {deny:?}: {command:?} → {got:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
