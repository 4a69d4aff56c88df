//! The interactive session through the real binary: bare `agent` (and `run -i`) in tmux
//! against the fake server — messages on one conversation, typing during a turn, Esc
//! stopping a command, slash commands, compaction, the transcript, and the terminal put
//! back; and without a terminal, an immediate exit.

use std::time::Duration;

use predicates::prelude::*;
use serde_json::Value;

use super::fake_model::{FakeModel, Reply, openai, turn_text, turn_tool_call};
use super::harness::{Sandbox, events};
use super::tty::{Tmux, agent_bin, shell_quote};

/// Bare `agent ARGS` in tmux, talking to `server` (settings name it).
fn session(sandbox: &Sandbox, server: &FakeModel, extra_settings: &str, args: &str) -> Tmux {
    sandbox.settings(&format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}\"\n{extra_settings}",
        server.openai_url()
    ));
    let script = format!("{} {args}", shell_quote(&agent_bin()));
    Tmux::start(
        sandbox,
        &[("OPENAI_API_KEY", "sk-session-test-0000")],
        &script,
    )
}

/// The composer's status line when it waits for a message.
const READY: &str = "Enter sends";

/// `(role, text)` of every message sent, tool calls as `call`, results as `tool`.
fn roles(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| {
            let role = m["role"].as_str().unwrap_or_default().to_owned();
            let text = m["content"].as_str().unwrap_or_default().to_owned();
            (role, text)
        })
        .filter(|(role, _)| role != "system")
        .collect()
}

fn transcript_events(sandbox: &Sandbox) -> Vec<Value> {
    let transcripts = sandbox.transcripts();
    assert_eq!(transcripts.len(), 1, "one session, one transcript");
    events(transcripts[0].as_bytes())
}

#[test]
fn two_messages_share_one_conversation_and_ctrl_d_restores_the_terminal() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("first answer"), turn_text("second answer")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["hello one", "Enter"]);
    tmux.wait_for("first answer");
    tmux.keys(&["hello two", "Enter"]);
    tmux.wait_for("second answer");
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(
        screen.contains("TTY=icanon"),
        "terminal not restored:\n{screen}"
    );
    assert!(
        screen.contains("› hello one"),
        "the message is echoed:\n{screen}"
    );

    let sent = roles(&server.request(1).messages());
    assert_eq!(
        sent,
        vec![
            ("user".to_owned(), "hello one".to_owned()),
            ("assistant".to_owned(), "first answer".to_owned()),
            ("user".to_owned(), "hello two".to_owned()),
        ]
    );
    let events = transcript_events(&sandbox);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"start"), "{kinds:?}");
    assert_eq!(events[0]["prompt"], "hello one");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "continue" && e["prompt"] == "hello two"),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "done").count(),
        2,
        "{kinds:?}"
    );
    sandbox
        .agent()
        .arg("history")
        .assert()
        .success()
        .stdout(predicate::str::contains("hello one"));
}

#[test]
fn a_session_is_continued_with_dash_c() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("noted: blue"), turn_text("it was blue")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["remember blue", "Enter"]);
    tmux.wait_for("noted: blue");
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
    let socket = tmux.socket.clone();
    drop(tmux);
    // A fresh tmux server for the second session, whatever the first one is still doing.
    let _ = std::fs::remove_file(socket);
    let tmux = session(&sandbox, &server, "", "-c");
    tmux.wait_for("going on with the earlier conversation (1 turns)");
    tmux.keys(&["which colour", "Enter"]);
    tmux.wait_for("it was blue");
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
    let sent = roles(&server.request(1).messages());
    assert_eq!(sent[0], ("user".to_owned(), "remember blue".to_owned()));
    assert_eq!(sent[1], ("assistant".to_owned(), "noted: blue".to_owned()));
    assert_eq!(sent[2], ("user".to_owned(), "which colour".to_owned()));
    assert_eq!(
        sandbox.transcripts().len(),
        1,
        "appended to the same transcript"
    );
}

#[test]
fn a_message_typed_during_a_turn_is_sent_after_it() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([
        turn_text("slow answer")
            .openai()
            .slow(Duration::from_millis(700)),
        turn_text("answer to the queued one").openai(),
    ]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["take your time", "Enter"]);
    tmux.wait_for("working");
    tmux.keys(&["and then this", "Enter"]);
    let screen = tmux.wait_for("queued: and then this");
    assert!(!screen.contains("answer to the queued one"), "{screen}");
    tmux.wait_for("answer to the queued one");
    assert_eq!(
        server.request(1).last_user_text().as_deref(),
        Some("and then this")
    );
    let sent = roles(&server.request(1).messages());
    assert_eq!(sent[1], ("assistant".to_owned(), "slow answer".to_owned()));
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn esc_stops_a_running_command_and_the_session_goes_on() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("sleep 30", "wait a long time"),
        turn_text("still here"),
    ]);
    let tmux = session(
        &sandbox,
        &server,
        "[permissions.commands]\nallow = [\"sleep\"]\n",
        "",
    );
    tmux.wait_for(READY);
    tmux.keys(&["wait", "Enter"]);
    tmux.wait_for("sleep 30");
    std::thread::sleep(Duration::from_millis(500));
    let started = std::time::Instant::now();
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("interrupted: the conversation keeps what happened");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the command was not stopped:\n{screen}"
    );
    tmux.wait_for(READY);
    tmux.keys(&["go on", "Enter"]);
    tmux.wait_for("still here");
    let request = server.request(1);
    let results = request.tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].1.contains("interrupted"), "{results:?}");
    let sent = roles(&request.messages());
    assert!(
        sent.iter()
            .any(|(role, text)| role == "assistant" && text.contains("[interrupted by the user]")),
        "{sent:?}"
    );
    assert_eq!(request.last_user_text().as_deref(), Some("go on"));
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
    let events = transcript_events(&sandbox);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "done" && e["outcome"] == "interrupted"),
        "{events:?}"
    );
}

#[test]
fn compact_replaces_the_earlier_turns_by_the_models_summary() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_text("answer one"),
        turn_text("answer two"),
        turn_text("SUMMARY: the user said one and two"),
        turn_text("answer three"),
    ]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["message one", "Enter"]);
    tmux.wait_for("answer one");
    tmux.keys(&["message two", "Enter"]);
    tmux.wait_for("answer two");
    tmux.keys(&["/comp", "Tab", "Enter"]);
    tmux.wait_for("replaced by a summary");
    tmux.keys(&["message three", "Enter"]);
    tmux.wait_for("answer three");
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");

    let summary_request = server.request(2);
    assert!(
        summary_request.tool_names().is_empty(),
        "no tools for the summary"
    );
    let asked = summary_request.last_user_text().unwrap_or_default();
    assert!(
        asked.contains("message one") && asked.contains("answer two"),
        "{asked}"
    );

    let sent = roles(&server.request(3).messages());
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(
        sent[0].1.contains("SUMMARY: the user said one and two"),
        "{sent:?}"
    );
    assert_eq!(sent[1], ("user".to_owned(), "message three".to_owned()));
    let events = transcript_events(&sandbox);
    assert!(
        events.iter().any(|e| e["type"] == "compacted"
            && e["reason"] == "asked"
            && e["replaced"] == 4
            && e["summary"] == "SUMMARY: the user said one and two"),
        "{events:?}"
    );
}

/// A text reply that reports `prompt` input and `completion` output tokens.
fn text_with_usage(text: &str, prompt: u64, completion: u64) -> Reply {
    Reply::sse([
        openai::text(text),
        openai::finish("stop"),
        openai::usage(prompt, completion, 0),
        openai::done(),
    ])
}

const TOO_LONG: &str = "This model's maximum context length is 8192 tokens. However, your \
    messages resulted in 9100 tokens. Please reduce the length of the messages.";

#[test]
fn a_context_length_error_compacts_once_and_retries_once_never_in_a_loop() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([
        turn_text("answer one").openai(),
        Reply::error(400, TOO_LONG),
        turn_text("SUMMARY of one").openai(),
        Reply::error(400, TOO_LONG),
        turn_text("answer three").openai(),
    ]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["message one", "Enter"]);
    tmux.wait_for("answer one");
    tmux.keys(&["message two", "Enter"]);
    tmux.wait_for("said the conversation is too long");
    let screen = tmux.wait_for("too long for the model");
    assert_eq!(
        server.requests().len(),
        4,
        "one summary, one retry:\n{screen}"
    );
    let retry = roles(&server.request(3).messages());
    assert!(retry[0].1.contains("SUMMARY of one"), "{retry:?}");
    assert_eq!(retry[1], ("user".to_owned(), "message two".to_owned()));
    assert_eq!(retry.len(), 2, "{retry:?}");
    // The session stays open after the failed turn.
    tmux.keys(&["message three", "Enter"]);
    tmux.wait_for("answer three");
    assert_eq!(server.requests().len(), 5);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn a_conversation_near_the_context_window_is_compacted_before_the_next_message() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([
        text_with_usage("answer one", 850, 20),
        turn_text("SUMMARY so far").openai(),
        text_with_usage("answer two", 100, 10),
    ]);
    let tmux = session(
        &sandbox,
        &server,
        "context_window = 1000\nprice_in = 2.0\nprice_out = 10.0\n",
        "",
    );
    tmux.wait_for(READY);
    tmux.keys(&["message one", "Enter"]);
    tmux.wait_for("answer one");
    tmux.keys(&["message two", "Enter"]);
    tmux.wait_for("neared the model's context window");
    tmux.wait_for("answer two");
    let sent = roles(&server.request(2).messages());
    assert!(sent[0].1.contains("SUMMARY so far"), "{sent:?}");
    assert_eq!(sent[1], ("user".to_owned(), "message two".to_owned()));
    tmux.keys(&["/usage", "Enter"]);
    // 950 in, 30 out (the summary reported none): 950 × $2 + 30 × $10 per million.
    tmux.wait_for("this session: 950 in · 30 out (3 model requests) · about $0.0022");
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn slash_commands_answer_in_the_session() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([]);
    let tmux = session(
        &sandbox,
        &server,
        "[permissions.commands]\ndeny = [\"git push\"]\n",
        "",
    );
    tmux.wait_for(READY);
    tmux.keys(&["/help", "Enter"]);
    tmux.wait_for("/compact  replace the conversation");
    tmux.keys(&["/rules", "Enter"]);
    tmux.wait_for("deny  git push");
    tmux.keys(&["/mode deny", "Enter"]);
    tmux.wait_for("mode deny from now on");
    tmux.keys(&["/usage", "Enter"]);
    tmux.wait_for("this session: 0 in · 0 out (0 model requests)");
    tmux.keys(&["/nope", "Enter"]);
    tmux.wait_for("there is no session command /nope");
    tmux.keys(&["/exit", "Enter"]);
    tmux.wait_for("EXIT=0");
    assert!(
        server.requests().is_empty(),
        "no slash command reached the model"
    );
}

#[test]
fn bare_agent_without_a_terminal_prints_the_short_help_and_exits_2_at_once() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .timeout(Duration::from_secs(10))
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Usage: agent"))
        .stdout(predicate::str::is_empty());
}

#[test]
fn run_interactive_without_a_terminal_is_a_usage_error() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args(["run", "-i", "hello"])
        .timeout(Duration::from_secs(10))
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs a terminal"));
}
