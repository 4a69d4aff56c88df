//! The screen while the model works, in a real pseudo-terminal (tmux) and through pipes:
//! the answer streams as it arrives (`run`, `--plain`, a session), escape sequences split
//! between deltas stay text, the working line shows while nothing else moves (and never in
//! a pipe), reasoning shows on it and collapses, and a finished command's last lines stay
//! under its summary. The fake server holds a reply at a gate until the test has seen what
//! came before it on screen: nothing here sleeps.

use predicates::prelude::*;
use serde_json::json;

use super::fake_model::{FakeModel, Gate, Reply, openai, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::session::{READY, session};
use super::tty::{Tmux, run_in_tmux};

/// A reply streaming `pieces` of text, held before piece number `held` until `gate` opens.
fn text_held(pieces: &[&str], held: usize, gate: &Gate) -> Reply {
    let mut events: Vec<_> = pieces.iter().map(|piece| openai::text(piece)).collect();
    events.extend([openai::finish("stop"), openai::done()]);
    Reply::sse(events).hold_before(held, gate)
}

/// A reply calling `shell` with `command`, held before its first event until `gate` opens,
/// saying it produced `tokens` output tokens.
fn call_held(command: &str, tokens: u64, gate: &Gate) -> Reply {
    let arguments = json!({"command": command, "description": "look"}).to_string();
    Reply::sse([
        openai::tool_call(0, "call_live_1", "shell", &arguments),
        openai::finish("tool_calls"),
        openai::usage(100, tokens, 0),
        openai::done(),
    ])
    .hold_before(0, gate)
}

/// The answer the streaming tests get: a first part, then (after the gate) the rest.
fn held_answer(gate: &Gate) -> FakeModel {
    FakeModel::new([text_held(
        &["The answer ", "begins here ", "and ends now.\n"],
        2,
        gate,
    )])
}

/// The first part of [`held_answer`] is on screen before the rest is sent; then the rest.
fn streams(tmux: &Tmux, gate: &Gate) {
    let screen = tmux.wait_for("The answer begins here");
    assert!(!screen.contains("ends now"), "{screen}");
    gate.open();
    tmux.wait_for("ends now.");
}

#[test]
fn the_answer_streams_as_it_arrives() {
    let sandbox = Sandbox::new();
    let gate = Gate::new();
    let server = held_answer(&gate);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'say it'");
    streams(&tmux, &gate);
    let screen = tmux.wait_for("EXIT=0");
    assert_eq!(
        screen
            .matches("The answer begins here and ends now.")
            .count(),
        1,
        "shown once, whole:\n{screen}"
    );
}

#[test]
fn a_long_answer_wraps_between_words_at_the_terminal_width() {
    let sandbox = Sandbox::new();
    let gate = Gate::new();
    let words: Vec<String> = (0..60).map(|n| format!("word{n:02}")).collect();
    let pieces: Vec<String> = words.iter().map(|word| format!("{word} ")).collect();
    let mut pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    pieces.push("end.\n");
    let held = pieces.len() - 1;
    let server = FakeModel::new([text_held(&pieces, held, &gate)]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'say it'");
    tmux.wait_for("word59");
    gate.open();
    let screen = tmux.wait_for("EXIT=0");
    let rows: Vec<&str> = screen.lines().filter(|row| row.contains("word")).collect();
    assert!(rows.len() >= 4, "wrapped at 120 columns:\n{screen}");
    for row in &rows {
        assert!(row.chars().count() <= 120, "{row}");
        for word in row.split_whitespace() {
            assert!(
                words.iter().any(|w| w == word) || word == "end.",
                "a word broken across rows: `{word}`\n{screen}"
            );
        }
    }
}

#[test]
fn the_answer_streams_with_plain_at_a_terminal() {
    let sandbox = Sandbox::new();
    let gate = Gate::new();
    let server = held_answer(&gate);
    let tmux = run_in_tmux(&sandbox, &server, &[], "--plain 'say it'");
    streams(&tmux, &gate);
    let screen = tmux.wait_for("EXIT=0");
    assert_eq!(
        screen.matches("ends now.").count(),
        1,
        "shown once (stdout is the same terminal):\n{screen}"
    );
}

#[test]
fn the_answer_streams_in_a_session() {
    let sandbox = Sandbox::new();
    let gate = Gate::new();
    let server = held_answer(&gate);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["say it", "Enter"]);
    streams(&tmux, &gate);
    // Ctrl+D ends the session only once the turn is over (while it runs it says so).
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn an_escape_split_between_deltas_is_shown_not_run() {
    let sandbox = Sandbox::new();
    let gate = Gate::new();
    let server = FakeModel::new([text_held(
        &["plain \u{1b}", "[31mnot red", " at all\n"],
        2,
        &gate,
    )]);
    let tmux = run_in_tmux(&sandbox, &server, &[("NO_COLOR", "1")], "'say it'");
    tmux.wait_for("[31mnot red");
    gate.open();
    let screen = tmux.wait_for("EXIT=0");
    assert!(
        screen.contains("plain \\u{1b}[31mnot red at all"),
        "{screen}"
    );
    let styled = tmux.styled_screen();
    assert!(!styled.contains("\u{1b}[31m"), "turned red:\n{styled:?}");
}

#[test]
fn a_working_line_shows_until_the_first_token_and_between_calls() {
    let sandbox = Sandbox::new();
    let first = Gate::new();
    let second = Gate::new();
    let server = FakeModel::new([
        call_held("echo hi", 1234, &first),
        text_held(&["all done\n"], 0, &second),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'look'");
    let screen = tmux.wait_for("working · 1 s");
    assert!(screen.contains("Ctrl+C to stop"), "{screen}");
    first.open();
    tmux.wait_for("✓ echo hi");
    let screen = tmux.wait_for("↓ 1.2k tokens");
    assert!(screen.contains("working · "), "{screen}");
    second.open();
    let screen = tmux.wait_for("EXIT=0");
    assert!(screen.contains("all done"), "{screen}");
    assert!(!screen.contains("working ·"), "erased:\n{screen}");
}

#[test]
fn reasoning_shows_on_one_line_and_collapses_when_the_answer_starts() {
    let sandbox = Sandbox::new();
    let gate = Gate::new();
    let thoughts = ["First I look ", "at the files,\nthen ", "I answer."];
    let mut events: Vec<_> = thoughts
        .iter()
        .map(|t| openai::chunk(json!({"reasoning_content": t}), None))
        .collect();
    events.extend([
        openai::text("The answer.\n"),
        openai::finish("stop"),
        openai::done(),
    ]);
    let server = FakeModel::new([Reply::sse(events).hold_before(3, &gate)]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'think'");
    let screen = tmux.wait_for("thinking: First I look at the files, then I answer.");
    assert!(!screen.contains("The answer."), "{screen}");
    gate.open();
    let screen = tmux.wait_for("EXIT=0");
    assert_eq!(
        screen.matches("thinking: First I look").count(),
        1,
        "one collapsed line:\n{screen}"
    );
    assert!(screen.contains("The answer."), "{screen}");
}

/// A command printing 30 numbered lines, an error on stderr, then failing.
const FAILING: &str = "seq 1 30; echo 'error: boom' >&2; exit 3";

#[test]
fn a_failed_command_keeps_its_last_lines_under_the_summary() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_tool_call(FAILING, "fail"), turn_text("it failed")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'fail'");
    tmux.wait_for("1. Allow");
    tmux.keys(&["1"]);
    let screen = tmux.wait_for("EXIT=0");
    let after: String = screen
        .split("· exit 3 ·")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary:\n{screen}"))
        .to_owned();
    for kept in ["  error: boom", "  30", "  26", "lines …"] {
        assert!(after.contains(kept), "`{kept}` not kept:\n{screen}");
    }
}

#[test]
fn plain_output_keeps_the_last_lines_and_quiet_keeps_one_line() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call(FAILING, "fail"),
        turn_text("it failed"),
        turn_tool_call("seq 1 9", "count"),
        turn_text("counted"),
        turn_tool_call(FAILING, "fail"),
        turn_text("it failed"),
    ]);
    sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "fail"])
        .assert()
        .success()
        .stderr(
            predicate::str::contains("exit 3")
                .and(predicate::str::contains("\n  error: boom\n"))
                .and(predicate::str::contains("\n  30\n"))
                .and(predicate::str::contains("working").not()),
        );
    sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "count"])
        .assert()
        .success()
        .stderr(
            predicate::str::contains("exit 0 · ").and(predicate::str::contains(
                "  … 4 lines …\n  5\n  6\n  7\n  8\n  9\n",
            )),
        );
    sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "-q", "fail"])
        .assert()
        .success()
        .stderr(predicate::str::contains("boom").not());
}
