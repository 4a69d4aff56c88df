//! Allow rules cover a program and subcommand, not every option (`assets/allow-options.txt`),
//! and a repository's git configuration cannot run code under a command no person approved.

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::support::git::git_ok;
use pretty_assertions::assert_eq;

#[test]
fn an_allow_rule_does_not_cover_an_option_that_writes_a_file() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .agent()
        .args([
            "check",
            "--json",
            "--allow",
            "git log",
            "--",
            "git log --output=x",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let mut decision = super::harness::json(&output);
    // Whether it runs sandboxed depends on this machine (`check::check_json_says_whether_…`).
    let sandboxed = decision.as_object_mut().unwrap().remove("sandboxed");
    assert!(sandboxed.is_some_and(|value| value.is_boolean()));
    assert_eq!(
        decision,
        serde_json::json!({
            "decision": "ask",
            "reason": "`--output=x` writes a file; allow rule \"git log\" covers the program, \
                       not this option (a rule that contains the option allows it)",
            "source": "builtin",
            "rule": "git --output",
            "prefix": "git log",
        })
    );
    // A rule that contains the option allows that exact form.
    sandbox
        .agent()
        .args([
            "check",
            "--allow",
            "git log --output=x",
            "--",
            "git log --output=x",
        ])
        .assert()
        .code(0);
}

/// A repository whose `.git/config` runs `touch PWNED` from `core.fsmonitor`.
fn booby_trapped_repository(sandbox: &Sandbox) {
    let git = |args: &[&str]| git_ok(&sandbox.work(), args);
    git(&["init", "-q", "."]);
    std::fs::write(sandbox.work().join("f"), "a\n").unwrap();
    git(&["config", "core.fsmonitor", "touch PWNED; false"]);
}

#[test]
fn repository_config_cannot_run_code_under_an_allowed_git_command() {
    let sandbox = Sandbox::new();
    booby_trapped_repository(&sandbox);
    let server = FakeModel::openai_turns([
        turn_tool_call("git status --short", "see what changed"),
        turn_text("f is new"),
    ]);
    sandbox
        .agent()
        .env("OPENAI_API_KEY", "sk-test")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(["--allow", "git status", "what changed?"])
        .assert()
        .success();
    assert!(
        !sandbox.work().join("PWNED").exists(),
        "core.fsmonitor ran under an allowed `git status`"
    );
    // The same command typed by the user runs git as configured: the trap is real.
    sandbox
        .agent()
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["exec", "--sandbox", "off", "git status --short"])
        .assert()
        .success();
    assert!(
        sandbox.work().join("PWNED").exists(),
        "the trap did not fire"
    );
}

/// A repository whose `.git/config` allows `ext::` URLs, which run a program of the URL's
/// choosing: under a command no person approved (an allow rule, mode allow-all) git is told
/// `protocol.ext.allow=never`, and the person's own `GIT_CONFIG_COUNT` entries stay in force
/// beside it. Typed by the person the URL runs its program (the control: the trap is real).
#[test]
fn an_ext_url_runs_nothing_under_a_command_no_person_approved() {
    const EXT: &str = "git ls-remote 'ext::sh -c touch% PWNED'";
    for (flags, users_entries) in [
        (&["--allow", "git ls-remote"][..], false),
        (&["--allow", "git ls-remote"], true),
        (&["--mode", "allow-all"], false),
        (&["--mode", "allow-all"], true),
    ] {
        let case = format!("{flags:?}, the person's GIT_CONFIG_COUNT: {users_entries}");
        let sandbox = Sandbox::new();
        let git = |args: &[&str]| git_ok(&sandbox.work(), args);
        git(&["init", "-q", "."]);
        git(&["config", "protocol.ext.allow", "always"]);
        let server = FakeModel::openai_turns([
            turn_tool_call("git config user.name", "who"),
            turn_tool_call(EXT, "list the remote"),
            turn_text("done"),
        ]);
        let mut run = sandbox.openai_run(&server);
        run.env("GIT_CONFIG_NOSYSTEM", "1");
        if users_entries {
            run.env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "user.name")
                .env("GIT_CONFIG_VALUE_0", "Person From Env");
        }
        run.args(flags).arg("look").assert().success();
        let results = server.request(2).tool_results();
        let work = sandbox.work();
        assert!(!work.join("PWNED").exists(), "{case}: {results:?}");
        assert_eq!(
            results[0].1.contains("Person From Env"),
            users_entries,
            "{case}: {results:?}"
        );
    }
    let sandbox = Sandbox::new();
    let git = |args: &[&str]| git_ok(&sandbox.work(), args);
    git(&["init", "-q", "."]);
    git(&["config", "protocol.ext.allow", "always"]);
    let _ = sandbox
        .agent()
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["exec", "--sandbox", "off", EXT])
        .output()
        .unwrap();
    assert!(
        sandbox.work().join("PWNED").exists(),
        "the trap did not fire"
    );
}
