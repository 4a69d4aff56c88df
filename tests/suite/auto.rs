//! Mode `auto` through the real binary, without a terminal (`CI=true`, stdin null): what the
//! sandbox contains runs with no prompt and `agent undo` takes it back; a write outside the
//! workspace fails in the sandbox; `sudo` and deny rules still deny; a project file cannot
//! choose `auto`; with the sandbox off `auto` acts as `ask` and says so.

use std::path::PathBuf;

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::{Sandbox, events, git};
use super::support::{require, require_program};
use pretty_assertions::assert_eq;
use serde_json::Value;

/// A sandbox whose `TMPDIR` is its own `tmp/` (so `/tmp`, around the test's directories, is
/// not writable to commands), with `outside/` beside the workspace.
pub(super) fn dirs() -> (Sandbox, PathBuf, PathBuf) {
    let sandbox = Sandbox::new();
    let tmp = sandbox.root.path().join("tmp");
    let outside = sandbox.root.path().join("outside");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (sandbox, tmp, outside)
}

/// Whether mode `auto` applies on this machine (the sandbox fully active): `agent check
/// --mode auto` allows `touch x` only then; tests that need it skip elsewhere ([`require`]).
pub(super) fn auto_applies(sandbox: &Sandbox, tmp: &PathBuf) -> bool {
    let output = sandbox
        .agent()
        .env("TMPDIR", tmp)
        .args(["check", "--mode", "auto", "touch", "x"])
        .output()
        .unwrap();
    require("sandbox", output.status.success())
}

/// `agent run --mode auto --json` as CI runs it, with `args` and `prompt`: its events and
/// stderr.
pub(super) fn ci_run(
    sandbox: &Sandbox,
    tmp: &PathBuf,
    server: &FakeModel,
    args: &[&str],
) -> (Vec<Value>, String) {
    let output = sandbox
        .openai_run(server)
        .env("CI", "true")
        .env("TMPDIR", tmp)
        .args(["--mode", "auto", "--json"])
        .args(args)
        .arg("do it")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    (
        events(&output.stdout),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Each decision's verdict and who decided.
pub(super) fn verdicts<'a>(decisions: &[&'a Value]) -> Vec<(&'a str, &'a str)> {
    decisions
        .iter()
        .map(|d| (d["decision"].as_str().unwrap(), d["by"].as_str().unwrap()))
        .collect()
}

pub(super) fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[test]
fn in_ci_auto_runs_what_the_sandbox_contains_and_undo_takes_it_back() {
    let (sandbox, tmp, _) = dirs();
    if !auto_applies(&sandbox, &tmp) {
        return;
    }
    let w = sandbox.work();
    std::fs::write(w.join("scratch.txt"), "scratch\n").unwrap();
    // An ignored file is left out of snapshots: removing it could not be undone, so it asks.
    assert!(git(&w, &["init", "-q"]).status.success());
    std::fs::write(w.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(w.join("target")).unwrap();
    std::fs::write(w.join("target/out"), "built\n").unwrap();
    // Outside the workspace, and not below `/tmp` (a command has a `/tmp` of its own).
    let elsewhere = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let escape = elsewhere.path().join("outside-f");
    let server = FakeModel::openai_turns([
        turn_tool_call("touch made.txt", "make a file"),
        turn_tool_call("rm scratch.txt", "remove scratch"),
        turn_tool_call("rm -rf target", "remove the ignored build"),
        turn_tool_call(&format!("touch '{}'", escape.display()), "write outside"),
        turn_tool_call("sudo touch x", "as root"),
        turn_tool_call("git push origin main", "push"),
        turn_text("done"),
    ]);
    let (events, _) = ci_run(&sandbox, &tmp, &server, &["--deny", "git push"]);
    let start = &of_type(&events, "start")[0];
    assert_eq!(start.get("mode_note"), None, "{start}");
    let decisions = of_type(&events, "decision");
    assert_eq!(
        verdicts(&decisions),
        [
            ("allow", "mode"),
            ("allow", "mode"),
            ("deny", "no_terminal"),
            ("allow", "mode"),
            ("deny", "no_terminal"),
            ("deny", "policy"),
        ],
        "{decisions:?}"
    );
    for allowed in [decisions[0], decisions[1], decisions[3]] {
        let reason = allowed["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("allowed by mode `auto`: runs in the sandbox"),
            "{reason}"
        );
    }
    for asked in [decisions[2], decisions[4]] {
        let reason = asked["reason"].as_str().unwrap();
        assert!(reason.contains("mode `auto` still asks"), "{reason}");
    }
    assert!(w.join("target/out").exists());
    assert!(w.join("made.txt").exists());
    assert!(!w.join("scratch.txt").exists());
    // The write outside ran, in the sandbox, and was refused there; no rerun was offered.
    assert!(!escape.exists(), "the sandbox let a write outside through");
    let results = of_type(&events, "tool_result");
    let outside = results
        .iter()
        .find(|r| r["command"].as_str().unwrap().contains("outside"))
        .unwrap();
    assert_eq!(outside["result"]["sandbox_denied"], true, "{outside}");
    assert_eq!(results.len(), 6, "{results:?}");

    sandbox.agent().arg("undo").assert().success();
    assert!(!w.join("made.txt").exists(), "undo left the command's file");
    assert_eq!(
        std::fs::read_to_string(w.join("scratch.txt"))
            .ok()
            .as_deref(),
        Some("scratch\n"),
        "undo did not bring back what rm removed"
    );
}

#[test]
fn check_shows_what_auto_would_do() {
    let (sandbox, tmp, _) = dirs();
    if !auto_applies(&sandbox, &tmp) {
        return;
    }
    let check = |command: &str| {
        let output = sandbox
            .agent()
            .env("TMPDIR", &tmp)
            .args(["check", "--json", "--mode", "auto", command])
            .output()
            .unwrap();
        let decision: Value = serde_json::from_slice(&output.stdout).unwrap();
        (
            output.status.code(),
            decision["reason"].as_str().unwrap().to_owned(),
        )
    };
    let (code, reason) = check("python3 -m pytest");
    assert_eq!(code, Some(0), "{reason}");
    assert!(reason.contains("mode `auto`"), "{reason}");
    for asks in [
        "sudo ls",
        "rm -rf /",
        "rm -rf ../x",
        "mkfs.ext4 /dev/sda",
        "dd of=/dev/sda",
    ] {
        let (code, reason) = check(asks);
        assert_eq!(code, Some(3), "{asks}: {reason}");
    }
}

#[test]
fn a_project_file_cannot_choose_auto() {
    let (sandbox, tmp, _) = dirs();
    let w = sandbox.work();
    std::fs::create_dir_all(w.join(".agent")).unwrap();
    std::fs::write(
        w.join(".agent/settings.toml"),
        "[permissions]\nmode = \"auto\"\n",
    )
    .unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch made.txt", "make a file"),
        turn_text("done"),
    ]);
    let output = sandbox
        .openai_run(&server)
        .env("CI", "true")
        .env("TMPDIR", &tmp)
        .args(["--json", "do it"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`permissions.mode` is ignored: a project file cannot choose mode `auto`"),
        "{stderr}"
    );
    let events = events(&output.stdout);
    assert_eq!(of_type(&events, "decision")[0]["decision"], "deny");
    assert!(!w.join("made.txt").exists());
}

#[test]
fn with_the_sandbox_off_auto_acts_as_ask_and_says_so() {
    let (sandbox, tmp, _) = dirs();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch made.txt", "make a file"),
        turn_text("done"),
    ]);
    let (events, stderr) = ci_run(&sandbox, &tmp, &server, &["--sandbox", "off"]);
    let says = "mode `auto` acts as `ask` here: the sandbox is off";
    assert_eq!(stderr.matches(says).count(), 1, "{stderr}");
    let start = &of_type(&events, "start")[0];
    assert!(
        start["mode_note"].as_str().unwrap().starts_with(says),
        "{start}"
    );
    let decision = &of_type(&events, "decision")[0];
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["by"], "no_terminal", "{decision}");
    assert!(!sandbox.work().join("made.txt").exists());
}

#[test]
fn what_auto_lets_through_runs_with_the_network_closed_even_when_settings_open_it() {
    let (sandbox, tmp, _) = dirs();
    if !require_program("bash") || !auto_applies(&sandbox, &tmp) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'");
    let server = FakeModel::openai_turns([turn_tool_call(&command, "connect"), turn_text("done")]);
    let (events, _) = ci_run(&sandbox, &tmp, &server, &["--network"]);
    assert_eq!(of_type(&events, "decision")[0]["by"], "mode");
    assert!(
        listener.accept().is_err(),
        "the command reached the listener"
    );
    let result = &of_type(&events, "tool_result")[0]["result"];
    assert_eq!(result["sandbox_denied"], true, "{result}");
}

/// Snapshots keep the working tree, not git's history: what `auto` runs meets git's
/// directory read-only as a whole (a write through a link to it too), and what may run git
/// still asks (denied here, with no terminal).
#[cfg(unix)]
#[test]
fn what_auto_runs_cannot_change_git_history_and_git_itself_asks() {
    let (sandbox, tmp, _) = dirs();
    if !auto_applies(&sandbox, &tmp) {
        return;
    }
    let w = sandbox.work();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["commit", "-q", "--allow-empty", "-m", "first"],
    ] {
        assert!(git(&w, args).status.success());
    }
    // A link to git's directory an earlier, approved command left: its name says nothing.
    std::os::unix::fs::symlink(".git", w.join("g")).unwrap();
    let head = std::fs::read(w.join(".git/HEAD")).unwrap();
    let main = std::fs::read(w.join(".git/refs/heads/main")).unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call("truncate -s 0 g/HEAD", "empty HEAD"),
        turn_tool_call("cp /dev/null g/refs/heads/main", "empty the branch"),
        turn_tool_call("truncate -s 0 .git/HEAD", "empty HEAD"),
        turn_tool_call("git branch -D main", "drop the branch"),
        turn_text("done"),
    ]);
    let (events, _) = ci_run(&sandbox, &tmp, &server, &[]);
    let decisions = of_type(&events, "decision");
    assert_eq!(
        verdicts(&decisions),
        [
            ("allow", "mode"),
            ("allow", "mode"),
            ("deny", "no_terminal"),
            ("deny", "no_terminal"),
        ],
        "{decisions:?}"
    );
    for asked in [decisions[2], decisions[3]] {
        let reason = asked["reason"].as_str().unwrap();
        assert!(reason.contains("it may run git"), "{reason}");
    }
    let results = of_type(&events, "tool_result");
    for at in [0, 1] {
        assert_ne!(results[at]["result"]["exit_code"], 0, "{}", results[at]);
    }
    assert_eq!(std::fs::read(w.join(".git/HEAD")).unwrap(), head);
    assert_eq!(std::fs::read(w.join(".git/refs/heads/main")).unwrap(), main);
}

/// `[sandbox] writable` opens more paths to commands a person approved; what `auto` runs
/// without a yes gets the workspace alone, since no snapshot keeps the rest.
#[test]
fn what_auto_runs_writes_only_the_workspace_whatever_writable_adds() {
    let (sandbox, tmp, outside) = dirs();
    if !auto_applies(&sandbox, &tmp) {
        return;
    }
    sandbox.settings(&format!(
        "[sandbox]\nwritable = [{:?}]\n",
        outside.display().to_string()
    ));
    std::fs::write(outside.join("cache"), "kept\n").unwrap();
    let command = format!("truncate -s 0 '{}'", outside.join("cache").display());
    let server =
        FakeModel::openai_turns([turn_tool_call(&command, "empty a cache"), turn_text("done")]);
    let (events, _) = ci_run(&sandbox, &tmp, &server, &[]);
    let decisions = of_type(&events, "decision");
    assert_eq!(decisions[0]["by"], "mode", "{decisions:?}");
    let results = of_type(&events, "tool_result");
    assert_ne!(results[0]["result"]["exit_code"], 0, "{}", results[0]);
    assert_eq!(
        std::fs::read_to_string(outside.join("cache")).unwrap(),
        "kept\n"
    );
    // The same command approved by a rule (not by `auto`) may write there.
    let server =
        FakeModel::openai_turns([turn_tool_call(&command, "empty a cache"), turn_text("done")]);
    let (events, _) = ci_run(&sandbox, &tmp, &server, &["--allow", "truncate"]);
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["result"]["exit_code"], 0, "{}", results[0]);
    assert_eq!(std::fs::read_to_string(outside.join("cache")).unwrap(), "");
}
