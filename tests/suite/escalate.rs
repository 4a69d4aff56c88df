//! The `shell` tool's `escalate` through the real binary (Linux with the sandbox): a call that
//! asks for more than the sandbox gives runs only after a person's yes at a terminal, with
//! exactly what it asked; without a terminal it is denied with its reason, whatever the rules
//! and the mode; a deny rule denies first. A command the sandbox refused tells the model it
//! may escalate.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::fake_model::{FakeModel, Turn, turn_text, turn_tool_call};
use super::harness::{Sandbox, events};
use pretty_assertions::assert_eq;

/// A directory outside the workspace and outside `/tmp` (a command sees a `/tmp` of its own),
/// and the `TMPDIR` given to the agent.
struct Outside {
    _root: tempfile::TempDir,
    tmp: PathBuf,
    dir: PathBuf,
}

impl Outside {
    fn new() -> Self {
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let tmp = root.path().join("tmp");
        let dir = root.path().join("outside");
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        Self {
            _root: root,
            tmp,
            dir,
        }
    }

    /// The file the tests' commands write.
    fn target(&self) -> PathBuf {
        self.dir.join("escalated")
    }

    fn touch(&self) -> String {
        format!("touch {}", self.target().display())
    }
}

/// A turn calling `shell` with `command` and `escalate`.
pub(super) fn escalated(command: &str, escalate: serde_json::Value) -> Turn {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let id = format!("esc_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let arguments = serde_json::json!({
        "command": command,
        "description": "write outside",
        "escalate": escalate,
    });
    Turn::default().with_call(&id, "shell", &arguments.to_string())
}

/// `escalate` asking for no sandbox, with `reason`.
fn unsandboxed(reason: &str) -> serde_json::Value {
    serde_json::json!({"outside_sandbox": true, "reason": reason})
}

/// The first `decision` event of a run's `--json` output.
fn first_decision(stdout: &[u8]) -> serde_json::Value {
    events(stdout)
        .into_iter()
        .find(|event| event["type"] == "decision")
        .unwrap()
}

fn available() -> bool {
    super::sandbox::available()
}

/// Without a terminal an escalation is denied, whatever lets the command itself run: an allow
/// rule, mode `auto`, mode `allow-all`. The result names the reason, what was asked and how
/// a person would allow it; the `decision` event says nobody could be asked.
#[test]
fn without_a_terminal_an_escalation_is_denied_with_its_reason() {
    if !available() {
        return;
    }
    for (mode, allow) in [
        ("ask", None),
        ("ask", Some("touch")),
        ("auto", None),
        ("allow-all", None),
        ("allow-all", Some("touch")),
    ] {
        let sandbox = Sandbox::new();
        let outside = Outside::new();
        let reason = "the build writes its cache there";
        let server = FakeModel::openai_turns([
            escalated(&outside.touch(), unsandboxed(reason)),
            turn_text("done"),
        ]);
        let mut run = sandbox.openai_run(&server);
        run.env("TMPDIR", &outside.tmp)
            .args(["--json", "--mode", mode]);
        if let Some(allow) = allow {
            run.args(["--allow", allow]);
        }
        let output = run.arg("go").output().unwrap();
        let case = format!("{mode} {allow:?}");
        assert!(!outside.target().exists(), "{case}: it ran");
        let result = &server.request(1).tool_results()[0].1;
        for says in [
            "EDENIED",
            reason,
            "asks to run without the sandbox",
            "nobody can be asked",
            "at a terminal",
        ] {
            assert!(result.contains(says), "{case}: no {says:?} in {result}");
        }
        let decision = first_decision(&output.stdout);
        assert_eq!(decision["decision"], "deny", "{case}: {decision}");
        assert_eq!(decision["by"], "no_terminal", "{case}: {decision}");
        assert!(
            decision["reason"].as_str().unwrap().contains(reason),
            "{case}: {decision}"
        );
    }
}

/// A deny rule denies an escalating call first: by the policy, never put to anyone.
#[test]
fn a_deny_rule_beats_an_escalation() {
    if !available() {
        return;
    }
    let sandbox = Sandbox::new();
    let outside = Outside::new();
    let server = FakeModel::openai_turns([
        escalated(&outside.touch(), unsandboxed("needed")),
        turn_text("done"),
    ]);
    let output = sandbox
        .openai_run(&server)
        .env("TMPDIR", &outside.tmp)
        .args(["--json", "--deny", "touch", "go"])
        .output()
        .unwrap();
    assert!(!outside.target().exists());
    let decision = first_decision(&output.stdout);
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["by"], "policy", "{decision}");
    assert!(
        !decision["reason"]
            .as_str()
            .unwrap()
            .contains("nobody can be asked"),
        "{decision}"
    );
}

/// Malformed `escalate` objects are tool errors naming what is wrong; nothing runs.
#[test]
fn a_malformed_escalation_is_a_clear_tool_error() {
    let sandbox = Sandbox::new();
    let outside = Outside::new();
    let server = FakeModel::openai_turns([
        escalated(
            &outside.touch(),
            serde_json::json!({"outside_sandbox": true}),
        ),
        escalated(
            &outside.touch(),
            serde_json::json!({"network": ["evil.test:22"], "reason": "x"}),
        ),
        escalated(
            &outside.touch(),
            serde_json::json!({"outside_sandbox": true, "reason": "x", "sudo": true}),
        ),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        .env("TMPDIR", &outside.tmp)
        .args(["--allow", "touch", "go"])
        .assert()
        .success();
    assert!(!outside.target().exists());
    for (request, says) in [
        (1, "`reason` must say why"),
        (2, "not a plain host name"),
        (3, "unknown key `sudo`"),
    ] {
        let result = &server.request(request).tool_results()[request - 1].1;
        assert!(
            result.contains("EINVAL") && result.contains(says),
            "{says}: {result}"
        );
    }
}

/// At a terminal: the command the sandbox refused tells the model it may escalate; the
/// escalating call is asked about with its reason (escaped) and "without the sandbox", Enter
/// alone does not allow it, `1` runs it without the sandbox, `0` does not.
fn at_a_terminal(key: &str) -> (bool, Vec<serde_json::Value>, FakeModel) {
    let sandbox = Sandbox::new();
    let outside = Outside::new();
    let server = FakeModel::openai_turns([
        turn_tool_call(&outside.touch(), "write outside"),
        escalated(
            &outside.touch(),
            unsandboxed("the marker lives there \u{1b}[2J"),
        ),
        turn_text("done"),
    ]);
    let tmp = outside.tmp.display().to_string();
    let tmux = super::tty::run_in_tmux(
        &sandbox,
        &server,
        &[("TMPDIR", tmp.as_str())],
        "--allow touch 'write it'",
    );
    let screen = tmux.wait_for("with more than the sandbox gives");
    assert!(
        !outside.target().exists(),
        "it ran before the answer:\n{screen}"
    );
    for says in [
        "this command asks to run without the sandbox",
        "the marker lives there",
        "⚠ without the sandbox",
        "1. Allow\n  0. Deny",
    ] {
        assert!(screen.contains(says), "no {says:?} on screen:\n{screen}");
    }
    assert!(!screen.contains("2. Allow for this run"), "{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Enter does not allow");
    tmux.keys(&[key]);
    tmux.wait_for("EXIT=");
    let path = sandbox.transcript_paths().into_iter().next().unwrap();
    let events = super::harness::events(&std::fs::read(path).unwrap());
    (outside.target().exists(), events, server)
}

#[test]
fn at_a_terminal_a_yes_runs_the_escalation_without_the_sandbox() {
    if !available() {
        return;
    }
    let (written, events, server) = at_a_terminal("1");
    assert!(written, "`1` did not run it without the sandbox");
    let first = &server.request(1).tool_results()[0].1;
    assert!(
        first.contains("sandbox_denied") && first.contains("escalate_hint"),
        "{first}"
    );
    let decisions: Vec<&serde_json::Value> = events
        .iter()
        .filter(|event| event["type"] == "decision")
        .collect();
    assert_eq!(decisions.len(), 2, "{decisions:?}");
    assert_eq!(decisions[1]["by"], "person", "{decisions:?}");
    assert!(
        decisions[1]["reason"]
            .as_str()
            .unwrap()
            .starts_with("allowed at the prompt, once: this command asks to run without"),
        "{decisions:?}"
    );
}

#[test]
fn at_a_terminal_a_no_keeps_the_sandbox() {
    if !available() {
        return;
    }
    let (written, events, _) = at_a_terminal("0");
    assert!(!written, "`0` ran it anyway");
    assert!(
        events
            .iter()
            .any(|event| event["type"] == "decision" && event["decision"] == "deny"),
        "{events:?}"
    );
}

/// An escalation of a destructive command keeps the destructive warning beside what it asks
/// for (and Enter stays withheld); `0` runs nothing.
#[test]
fn an_escalated_destructive_command_is_marked_destructive() {
    if !available() {
        return;
    }
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.work().join("build")).unwrap();
    let server = FakeModel::openai_turns([
        escalated(
            "rm -rf build",
            serde_json::json!({"network": true, "reason": "clean and fetch"}),
        ),
        turn_text("done"),
    ]);
    let tmux = super::tty::run_in_tmux(&sandbox, &server, &[], "'clean'");
    let screen = tmux.wait_for("with more than the sandbox gives");
    for says in [
        "⚠ more than the sandbox gives",
        "⚠ destructive",
        "this command asks with the whole network",
    ] {
        assert!(screen.contains(says), "no {says:?} on screen:\n{screen}");
    }
    tmux.keys(&["0"]);
    tmux.wait_for("EXIT=");
    assert!(sandbox.work().join("build").exists());
}
