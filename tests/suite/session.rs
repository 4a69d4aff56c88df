//! The interactive session through the real binary: bare `agent` (and `run -i`) in tmux
//! against the fake server — messages on one conversation, typing during a turn, Esc
//! stopping a command, slash commands, compaction, the transcript, and the terminal put
//! back; and without a terminal, an immediate exit.

use std::time::Duration;

use predicates::prelude::*;
use serde_json::Value;

use serde_json::json;

use super::fake_model::{FakeModel, Reply, Turn, openai, turn_text, turn_tool_call};
use super::harness::{Sandbox, events, kill_left, left_running, wait_for};
use super::support::gate::{Gate, held_command};
use super::tty::{Tmux, agent_bin, shell_quote};

/// Bare `agent ARGS` in tmux, talking to `server` (settings name it).
pub(super) fn session(
    sandbox: &Sandbox,
    server: &FakeModel,
    extra_settings: &str,
    args: &str,
) -> Tmux {
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

/// Ends the session in `tmux` with Ctrl+D (exit 0) and its tmux server, so the next
/// session gets a fresh one, whatever this one is still doing.
pub(super) fn end_session(tmux: Tmux) {
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
    let socket = tmux.socket.clone();
    drop(tmux);
    let _ = std::fs::remove_file(socket);
}

/// The composer's status line when it waits for a message.
pub(super) const READY: &str = "Enter sends";

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
    tmux.wait_on_screen(READY);
    end_session(tmux);
    let tmux = session(&sandbox, &server, "", "-c");
    tmux.wait_for("going on with the earlier conversation (1 turns)");
    tmux.keys(&["which colour", "Enter"]);
    tmux.wait_for("it was blue");
    tmux.wait_on_screen(READY);
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
    tmux.wait_on_screen(READY);
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
    // Esc while the command runs, not before it started.
    wait_for(super::tty::PATIENCE, "the command to start", || {
        !left_running(&sandbox.work()).is_empty()
    });
    let started = std::time::Instant::now();
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("interrupted: the conversation keeps what happened");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the command was not stopped:\n{screen}"
    );
    tmux.wait_on_screen(READY);
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
    tmux.wait_on_screen(READY);
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
    tmux.wait_on_screen(READY);
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
pub(super) fn text_with_usage(text: &str, prompt: u64, completion: u64) -> Reply {
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
    tmux.wait_on_screen(READY);
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
    tmux.wait_on_screen(READY);
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

/// A turn calling the file tool `tool` with `arguments`.
fn file_call(id: &str, tool: &str, arguments: &Value) -> Turn {
    Turn::default().with_call(id, tool, &arguments.to_string())
}

/// Waits until `needle` is in the whole scrollback `count` times.
fn wait_count(tmux: &Tmux, needle: &str, count: usize) {
    wait_for(super::tty::PATIENCE, needle, || {
        tmux.tmux_output(&["capture-pane", "-p", "-J", "-S", "-"])
            .matches(needle)
            .count()
            >= count
    });
}

fn read(sandbox: &Sandbox, path: &str) -> Option<String> {
    std::fs::read_to_string(sandbox.work().join(path)).ok()
}

#[test]
fn undo_puts_back_what_the_last_message_changed_and_diff_shows_it() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("notes.txt"), "one\ntwo\n").unwrap();
    std::fs::write(sandbox.work().join("keep.txt"), "keep\n").unwrap();
    let server = FakeModel::openai_turns([
        file_call(
            "e1",
            "edit_file",
            &json!({"path": "notes.txt", "old_string": "two", "new_string": "TWO \u{1b}[2J"}),
        ),
        file_call(
            "w1",
            "write_file",
            &json!({"path": "made.txt", "content": "made\n"}),
        ),
        turn_text("changed the notes"),
        turn_text("nothing to change"),
    ]);
    let tmux = session(&sandbox, &server, "", "run -i --mode allow-all");
    tmux.wait_for(READY);
    tmux.keys(&["/diff", "Enter"]);
    tmux.wait_for("no message of this session has changed files yet");
    tmux.keys(&["change the notes", "Enter"]);
    tmux.wait_for("changed the notes");
    tmux.wait_for("changed 2 files (+2 −1) · /diff shows it · /undo reverts it");
    assert_eq!(
        read(&sandbox, "notes.txt").as_deref(),
        Some("one\nTWO \u{1b}[2J\n")
    );
    // A message that changes nothing leaves `/diff` and `/undo` on the one that did.
    tmux.keys(&["anything else", "Enter"]);
    tmux.wait_for("nothing to change");

    tmux.keys(&["/di", "Tab", "Enter"]);
    let screen = tmux.wait_for("what the message «change the notes» changed (2 files, +2 −1)");
    assert!(screen.contains("+TWO \\u{1b}[2J"), "escaped:\n{screen}");
    assert!(screen.contains("-two"), "{screen}");
    assert!(screen.contains("+++ b/made.txt"), "{screen}");

    tmux.keys(&["/undo", "Enter"]);
    let screen = tmux.wait_for("undid the message «change the notes»: 2 files put back");
    assert!(screen.contains("restored notes.txt"), "{screen}");
    assert!(screen.contains("removed made.txt"), "{screen}");
    assert_eq!(read(&sandbox, "notes.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(read(&sandbox, "made.txt"), None);
    assert_eq!(read(&sandbox, "keep.txt").as_deref(), Some("keep\n"));

    // `/undo` again puts the changes back.
    tmux.keys(&["/undo", "Enter"]);
    tmux.wait_for("undid the /undo: 2 files put back");
    assert_eq!(
        read(&sandbox, "notes.txt").as_deref(),
        Some("one\nTWO \u{1b}[2J\n")
    );
    assert_eq!(read(&sandbox, "made.txt").as_deref(), Some("made\n"));

    // A file changed since is named and left alone, unless forced.
    std::fs::write(sandbox.work().join("made.txt"), "mine now\n").unwrap();
    tmux.keys(&["/undo", "Enter"]);
    tmux.wait_for(
        "`made.txt` changed since the /undo: nothing was undone (/undo --force overwrites it)",
    );
    assert_eq!(read(&sandbox, "made.txt").as_deref(), Some("mine now\n"));
    assert_eq!(
        read(&sandbox, "notes.txt").as_deref(),
        Some("one\nTWO \u{1b}[2J\n")
    );
    tmux.keys(&["/undo --force", "Enter"]);
    wait_count(&tmux, "undid the /undo: 2 files put back", 2);
    assert_eq!(read(&sandbox, "made.txt"), None, "overwritten by the undo");
    assert_eq!(read(&sandbox, "notes.txt").as_deref(), Some("one\ntwo\n"));
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");

    // The session's run is in the same history `agent diff` and `agent undo` read.
    let events = transcript_events(&sandbox);
    let id = events[0]["id"].as_str().unwrap().to_owned();
    let done = events.iter().find(|e| e["type"] == "done").expect("a done");
    assert_eq!(done["changes"]["files"], 2, "{done}");
    assert_eq!(done["changes"]["added"], 2, "{done}");
    sandbox
        .agent()
        .args(["diff", "--stat", &id])
        .assert()
        .success()
        .stdout(predicate::str::contains("modified notes.txt"))
        .stdout(predicate::str::contains("created  made.txt"));
    sandbox
        .agent()
        .arg("history")
        .assert()
        .success()
        .stdout(predicate::str::contains("2 (+2 −1)"));
}

#[test]
fn the_prompt_in_a_session_takes_y_n_and_a_saved_rule_holds_for_the_next_message() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("touch G", "create G"),
        turn_text("made F only"),
        turn_tool_call("touch H", "create H"),
        turn_text("made H"),
        turn_tool_call("touch I", "create I"),
        turn_text("made I"),
    ]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["make F and G", "Enter"]);
    tmux.wait_for("$ touch F");
    tmux.keys(&["y"]);
    tmux.wait_for("$ touch G");
    tmux.keys(&["n"]);
    tmux.wait_for("made F only");
    tmux.wait_on_screen(READY);
    tmux.keys(&["make H", "Enter"]);
    tmux.wait_for("$ touch H");
    tmux.keys(&["a"]);
    tmux.wait_for("press y to save the rule");
    tmux.keys(&["y"]);
    tmux.wait_for("made H");
    tmux.wait_on_screen(READY);
    // The rule saved at the prompt holds for the rest of the session: no prompt for I.
    tmux.keys(&["make I", "Enter"]);
    tmux.wait_for("made I");
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0 TTY=icanon"), "{screen}");
    for (name, made) in [("F", true), ("G", false), ("H", true), ("I", true)] {
        assert_eq!(
            sandbox.work().join(name).exists(),
            made,
            "{name}:\n{screen}"
        );
    }
    let all = tmux.tmux_output(&["capture-pane", "-p", "-J", "-S", "-"]);
    assert_eq!(
        all.matches("agent wants to run a command").count(),
        3,
        "asked for F, G and H only:\n{all}"
    );
    let settings = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(settings.contains("allow = [\"touch\"]"), "{settings}");
    let results = server.request(2).tool_results();
    assert!(results[1].1.contains("denied"), "{results:?}");
}

/// `2` (this command, this run) at the prompt holds for the rest of the session: the same
/// command in the next message runs without a prompt; another one asks.
#[test]
fn allowed_for_this_run_holds_for_the_rest_of_the_session() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_text("made F"),
        turn_tool_call("touch F", "create F again"),
        turn_tool_call("touch G", "create G"),
        turn_text("made G"),
    ]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["make F", "Enter"]);
    tmux.wait_for("$ touch F");
    tmux.keys(&["2"]);
    tmux.wait_for("made F");
    tmux.wait_on_screen(READY);
    tmux.keys(&["make F and G", "Enter"]);
    tmux.wait_for("$ touch G");
    tmux.keys(&["y"]);
    tmux.wait_for("made G");
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0 TTY=icanon"), "{screen}");
    let all = tmux.tmux_output(&["capture-pane", "-p", "-J", "-S", "-"]);
    assert_eq!(
        all.matches("agent wants to run a command").count(),
        2,
        "asked for the first F and for G only:\n{all}"
    );
    let results = server.request(3).tool_results();
    assert!(
        !results.iter().any(|(_, text)| text.contains("denied")),
        "{results:?}"
    );
    assert!(sandbox.work().join("G").exists());
}

/// The signal tests' command holds a FIFO (`held_command`): once the session ended, nothing
/// may hold it (`Gate::held`).
fn signal_case(name: &str, expected: i32) {
    let sandbox = Sandbox::new();
    let gate = Gate::new(&sandbox.work());
    let server = FakeModel::openai_turns([
        turn_tool_call(&held_command(""), "wait"),
        turn_text("never"),
    ]);
    sandbox.settings(&format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}\"\n",
        server.openai_url()
    ));
    let pid_file = sandbox.root.path().join("agent.pid");
    // The agent's pid through an `exec`, and the terminal's echo after it exits.
    let script = format!(
        "sh -c 'echo $$ > {}; exec \"$0\" \"$@\"' {} run -i --mode allow-all 'wait a second'; \
         code=$?; stty -a | tr ' ' '\\n' | grep -x -- '-\\?echo' | sed 's/^/ECHO=/'; (exit $code)",
        shell_quote(&pid_file.display().to_string()),
        shell_quote(&agent_bin()),
    );
    let tmux = Tmux::start(
        &sandbox,
        &[("OPENAI_API_KEY", "sk-session-test-0000")],
        &script,
    );
    wait_for(Duration::from_secs(30), "the command to start", || {
        std::fs::read_to_string(sandbox.work().join("started"))
            .is_ok_and(|text| text == "started\n")
    });
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-s", name, pid.trim()])
        .status()
        .unwrap();
    assert!(status.success());
    let screen = tmux.wait_for("EXIT=");
    let left = left_running(&sandbox.work());
    let held = gate.held();
    kill_left(&sandbox.work());
    assert!(
        screen.contains(&format!("EXIT={expected} TTY=icanon")),
        "SIG{name}:\n{screen}"
    );
    assert!(
        screen.contains("ECHO=echo"),
        "SIG{name}: echo is off:\n{screen}"
    );
    assert!(
        left.is_empty(),
        "SIG{name}: {left:?} of the command survived the session"
    );
    assert!(
        !held,
        "SIG{name}: the command ran on after the session ended"
    );
    let events = transcript_events(&sandbox);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "done", "{events:?}");
    assert_eq!(last["outcome"], "interrupted", "{last}");
    assert!(
        last["note"].as_str().unwrap_or_default().contains(name),
        "{last}"
    );
    assert_eq!(server.requests().len(), 1, "no request after the signal");
}

#[test]
fn sigterm_ends_a_session_like_a_run() {
    signal_case("TERM", 143);
}

#[test]
fn sighup_ends_a_session_like_a_run() {
    signal_case("HUP", 129);
}

#[test]
fn a_resize_while_typing_keeps_the_typed_text() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("got it")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["half of a message typed before"]);
    tmux.wait_for("half of a message typed before");
    for (x, y) in [("50", "15"), ("100", "30")] {
        let status = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&tmux.socket)
            .args(["resize-window", "-x", x, "-y", y])
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(300));
    }
    tmux.keys(&[" and the rest after", "Enter"]);
    tmux.wait_for("got it");
    assert_eq!(
        server.request(0).last_user_text().as_deref(),
        Some("half of a message typed before and the rest after")
    );
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn a_one_megabyte_paste_is_taken_up_to_the_limit_and_the_rest_is_said() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("read the paste")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    // 16,384 lines of 64 bytes: 1 MiB.
    let line = format!("{:-<63}\n", "pasted line");
    let text = line.repeat(16_384);
    assert_eq!(text.len(), 1 << 20);
    tmux.paste(sandbox.root.path(), &text);
    let left = (1 << 20) - 256 * 1024;
    tmux.wait_for(&format!(
        "the paste was cut at the message limit (256 KiB): {left} bytes left out"
    ));
    tmux.keys(&["Enter"]);
    tmux.wait_for("read the paste");
    let sent = server.request(0).last_user_text().unwrap_or_default();
    assert_eq!(
        sent.len(),
        256 * 1024,
        "the message is the paste up to the limit"
    );
    assert!(text.starts_with(&sent), "sent whole, in order");
    assert_eq!(server.requests().len(), 1, "one message, not a line each");
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}
