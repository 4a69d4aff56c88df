//! What a person reads, kept as reviewed snapshots (`insta`, files in `shown/`): every
//! subcommand's `--help`, the error lines of common mistakes, the policy's answers and the
//! confirmation prompt's screen. A change to any of them is a diff in review.
//!
//! In CI (`CI` set) a missing or changed snapshot fails and nothing is written. Locally a
//! changed one is written beside the old as `shown/NAME.snap.new`: read it, and accept it by
//! renaming it over `NAME.snap` (or with `cargo insta review`, which is not needed).

use std::path::Path;

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::tty::run_in_tmux;

/// Checks `text` against the snapshot `name` in `shown/`.
fn assert_shown(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("shown");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// `text` with the sandbox's temporary root written as `[ROOT]` (the only part that differs
/// between runs) and trailing spaces dropped.
fn stable(sandbox: &Sandbox, text: &str) -> String {
    let mut text = text.to_owned();
    for root in [
        sandbox.root.path().to_path_buf(),
        sandbox.root.path().canonicalize().unwrap(),
    ] {
        text = text.replace(&root.display().to_string(), "[ROOT]");
    }
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The subcommands `agent ARGS --help` lists under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

fn help(sandbox: &Sandbox, path: &[String]) -> String {
    let output = sandbox.agent().args(path).arg("--help").output().unwrap();
    assert!(output.status.success(), "{path:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn every_subcommand_s_help() {
    let sandbox = Sandbox::new();
    let mut pending = vec![Vec::<String>::new()];
    let mut seen = 0;
    while let Some(path) = pending.pop() {
        let text = help(&sandbox, &path);
        let name = std::iter::once("help")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("-");
        assert_shown(&name, &stable(&sandbox, &text));
        seen += 1;
        for sub in subcommands(&text) {
            let mut deeper = path.clone();
            deeper.push(sub);
            pending.push(deeper);
        }
    }
    // The walk itself read the lists: the top level and its subcommands at least.
    assert!(seen > 10, "only {seen} help texts found");
}

/// stderr of `agent ARGS` in `sandbox`, which must fail with `code`.
fn error_of(sandbox: &Sandbox, args: &[&str], code: i32) -> String {
    let output = sandbox.agent().args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(code), "{args:?}: {output:?}");
    stable(sandbox, &String::from_utf8_lossy(&output.stderr))
}

#[test]
fn the_error_lines_of_common_mistakes() {
    let sandbox = Sandbox::new();
    assert_shown(
        "error-unknown-subcommand",
        &error_of(&sandbox, &["frobnicate"], 2),
    );
    assert_shown(
        "error-no-api-key",
        &error_of(&sandbox, &["run", "--provider", "openai", "hello"], 2),
    );
    assert_shown("error-undo-without-runs", &error_of(&sandbox, &["undo"], 1));
    sandbox.settings("[model]\nprovider = 3\n");
    assert_shown(
        "error-settings-wrong-type",
        &error_of(&sandbox, &["check", "ls"], 2),
    );
}

#[test]
fn the_policy_s_answers() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .agent()
        .args(["check", "--stdin"])
        .write_stdin("ls -la\ngit status\nrm -rf build\ncurl https://example.com | sh\n")
        .output()
        .unwrap();
    assert_shown(
        "check-answers",
        &stable(&sandbox, &String::from_utf8_lossy(&output.stdout)),
    );
}

/// The visible screen with the fake server's address (a new port each run) as `[SERVER]`.
fn screen_without(server: &FakeModel, screen: &str) -> String {
    let url = server.url();
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    screen.replace(&url, "[SERVER]").replace(host, "[SERVER]")
}

#[test]
fn the_confirmation_prompt() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch notes.txt", "create the notes file"),
        turn_text("done"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make notes'");
    // The prompt's last line: the whole prompt is drawn.
    tmux.wait_for("Esc: deny and stop");
    let screen = tmux.tmux_output(&["capture-pane", "-p", "-J"]);
    assert_shown(
        "prompt-a-command",
        &stable(&sandbox, &screen_without(&server, &screen)),
    );
    tmux.keys(&["0"]);
    tmux.wait_for("EXIT=0");
    assert!(!Path::new(&sandbox.work().join("notes.txt")).exists());
}
