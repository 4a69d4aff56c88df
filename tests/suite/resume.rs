//! `agent run --continue` / `--resume ID` through the real binary against the fake servers:
//! the conversation sent again (calls with their ids, results, reasoning to replay), nothing
//! re-run, one transcript with a `continue` marker, `history` showing one run, damaged and
//! older transcripts resumed up to their last complete turn.

use predicates::prelude::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fake_model::{Events, FakeModel, Reply, anthropic, turn_text, turn_tool_call};
use super::harness::{KEY, Sandbox, events};

/// A first run: `touch made` (allowed), then an answer.
fn first_run(sandbox: &Sandbox) {
    let server = FakeModel::openai_turns([
        turn_tool_call("touch made", "make a file").with_text("Making it."),
        turn_text("Made it."),
    ]);
    sandbox
        .openai_run(&server)
        .args(["--allow", "touch", "make a file"])
        .assert()
        .success()
        .stdout("Made it.\n");
    assert!(sandbox.work().join("made").exists());
    std::fs::remove_file(sandbox.work().join("made")).unwrap();
}

#[test]
fn continue_sends_the_conversation_again_runs_nothing_again_and_appends_to_the_run() {
    let sandbox = Sandbox::new();
    first_run(&sandbox);
    let server = FakeModel::openai_turns([turn_text("It is called made.")]);
    sandbox
        .openai_run(&server)
        .args(["--continue", "what is it called?"])
        .assert()
        .success()
        .stdout("It is called made.\n");
    assert!(
        !sandbox.work().join("made").exists(),
        "a command of the earlier part ran again"
    );
    let sent = server.request(0).messages();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(sent[1]["content"], "make a file");
    assert_eq!(sent[2]["content"], "Making it.");
    let call = &sent[2]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "shell");
    assert_eq!(
        serde_json::from_str::<Value>(call["function"]["arguments"].as_str().unwrap()).unwrap(),
        json!({"command": "touch made", "description": "make a file"})
    );
    assert_eq!(sent[3]["tool_call_id"], call["id"]);
    assert!(
        sent[3]["content"]
            .as_str()
            .unwrap()
            .contains("\"exit_code\":0")
    );
    assert_eq!(sent[4]["content"], "Made it.");
    assert_eq!(sent[5]["content"], "what is it called?");

    // One transcript, the new part after a `continue` marker.
    let paths = sandbox.transcript_paths();
    assert_eq!(paths.len(), 1);
    let recorded = events(&std::fs::read(&paths[0]).unwrap());
    let types: Vec<&str> = recorded
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.iter().filter(|t| **t == "start").count(), 1);
    let marker = recorded.iter().find(|e| e["type"] == "continue").unwrap();
    assert_eq!(marker["prompt"], "what is it called?");
    assert_eq!(marker["resumed_turns"], 2);
    assert!(marker.get("note").is_none(), "{marker}");
    assert_eq!(types.last(), Some(&"done"));

    // `history` shows one run: turns and commands summed, the latest outcome.
    let output = sandbox
        .agent()
        .args(["history", "--json"])
        .output()
        .unwrap();
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["parts"], 2);
    assert_eq!(list[0]["turns"], 3);
    assert_eq!(list[0]["commands_run"], 1);
    assert_eq!(list[0]["outcome"], "answered");
    assert_eq!(list[0]["prompt"], "make a file");
    sandbox
        .agent()
        .arg("history")
        .assert()
        .success()
        .stdout(predicate::str::contains("make a file (+1)"));
    let id = paths[0].file_stem().unwrap().to_string_lossy().into_owned();
    sandbox
        .agent()
        .args(["history", "show", &id])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("continued · ").and(predicate::str::contains(
                "> what is it called?\nIt is called made.\n",
            )),
        );
}

#[test]
fn continue_in_json_starts_with_the_marker_and_a_second_continue_goes_on_from_it() {
    let sandbox = Sandbox::new();
    first_run(&sandbox);
    let server = FakeModel::openai_turns([turn_text("Second."), turn_text("Third.")]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "--continue", "again"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let printed = events(&output.stdout);
    assert_eq!(printed[0]["type"], "continue");
    assert_eq!(printed[0]["resumed_turns"], 2);
    sandbox
        .openai_run(&server)
        .args(["--continue", "and again"])
        .assert()
        .success()
        .stdout("Third.\n");
    let sent = server.request(1).messages();
    let users: Vec<&Value> = sent.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 3);
    assert_eq!(sent[sent.len() - 2]["content"], "Second.");
}

#[test]
fn continue_with_no_earlier_run_here_is_a_usage_error() {
    let sandbox = Sandbox::new();
    first_run(&sandbox);
    let elsewhere = sandbox.root.path().join("home");
    let server = FakeModel::start();
    sandbox
        .openai_run(&server)
        .arg("-C")
        .arg(&elsewhere)
        .args(["--continue", "go on"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("agent: no earlier run in `").and(
            predicate::str::contains("to continue: start one with `agent run 'TASK'`"),
        ));
    assert_eq!(server.requests().len(), 0);
    sandbox
        .openai_run(&server)
        .args(["--resume", "nosuchid", "go on"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run `nosuchid`"));
}

/// An Anthropic turn with a signed thinking block and a call.
fn thinking_turn() -> Reply {
    let thinking = Events::named(
        "content_block_start",
        &json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
    )
    .then(Events::named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Where am I?"}}),
    ))
    .then(Events::named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "SIG=="}}),
    ))
    .then(anthropic::block_stop(0));
    Reply::sse([
        anthropic::message_start(),
        thinking,
        anthropic::tool_use(
            1,
            "toolu_9",
            "shell",
            r#"{"command":"pwd","description":"where"}"#,
        ),
        anthropic::message_delta("tool_use"),
        anthropic::message_stop(),
    ])
}

#[test]
fn resume_by_short_id_sends_the_signed_thinking_back_from_any_workspace() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([thinking_turn(), turn_text("Here.").anthropic()]);
    let run = |server: &FakeModel| {
        let mut cmd = sandbox.agent();
        cmd.env("ANTHROPIC_API_KEY", KEY)
            .args(["run", "--provider", "anthropic", "--base-url"])
            .arg(server.url());
        cmd
    };
    run(&server).arg("where?").assert().success();
    let id = sandbox.transcript_paths()[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let short = &id[id.len() - 6..];
    let again = FakeModel::anthropic_turns([turn_text("Still here.")]);
    run(&again)
        .arg("-C")
        .arg(sandbox.root.path().join("home"))
        .args(["--resume", short, "and now?"])
        .assert()
        .success()
        .stdout("Still here.\n");
    let sent = again.request(0).messages();
    assert_eq!(
        sent[1]["content"],
        json!([
            {"type": "thinking", "thinking": "Where am I?", "signature": "SIG=="},
            {"type": "tool_use", "id": "toolu_9", "name": "shell",
             "input": {"command": "pwd", "description": "where"}},
        ])
    );
    assert_eq!(sent[2]["content"][0]["tool_use_id"], "toolu_9");
    assert_eq!(sandbox.transcript_paths().len(), 1);
}

#[test]
fn a_cut_transcript_resumes_after_its_last_complete_turn_and_says_so() {
    let sandbox = Sandbox::new();
    first_run(&sandbox);
    let path = sandbox.transcript_paths().remove(0);
    let text = std::fs::read_to_string(&path).unwrap();
    // Cut in the middle of the second turn's `turn_end`, as a crash would.
    let second_end = text.rfind("{\"type\":\"turn_end\"").unwrap();
    std::fs::write(&path, &text[..second_end + 15]).unwrap();
    let server = FakeModel::openai_turns([turn_text("Resumed.")]);
    sandbox
        .openai_run(&server)
        .args(["--continue", "go on"])
        .assert()
        .success()
        .stdout("Resumed.\n")
        .stderr(predicate::str::contains("agent: warning: resuming `").and(
            predicate::str::contains(
                "of the transcript was cut: continuing after the last complete turn before it",
            ),
        ));
    let sent = server.request(0).messages();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    // The first turn and its result; the cut answer is gone.
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    let text = std::fs::read_to_string(&path).unwrap();
    let marker = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|e| e["type"] == "continue")
        .expect("the marker starts a line of its own after the cut one");
    assert!(marker["note"].as_str().unwrap().contains("was cut"));
    assert_eq!(marker["resumed_turns"], 1);
    // Garbage in the middle: resumed up to the turn before it.
    let mut lines: Vec<&str> = text.lines().collect();
    let first_end = lines
        .iter()
        .position(|l| l.contains("\"type\":\"turn_end\""))
        .unwrap();
    lines.insert(first_end, "garbage");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let server = FakeModel::openai_turns([turn_text("Again.")]);
    sandbox
        .openai_run(&server)
        .args(["--continue", "once more"])
        .assert()
        .success()
        .stderr(predicate::str::contains("is unreadable"));
    let roles: Vec<String> = server
        .request(0)
        .messages()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect();
    // The prompt with no answer left and the new one go as one message: turns alternate.
    assert_eq!(roles, ["system", "user"]);
    assert_eq!(
        server.request(0).messages()[1]["content"],
        "make a file\n\nonce more"
    );
}

#[test]
fn an_older_transcript_is_resumed_from_its_commands() {
    let sandbox = Sandbox::new();
    first_run(&sandbox);
    let path = sandbox.transcript_paths().remove(0);
    // What an earlier version wrote: `turn_end` with its number only.
    let older: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| {
            let mut event: Value = serde_json::from_str(line).unwrap();
            if event["type"] == "turn_end" {
                event = json!({"type": "turn_end", "turn": event["turn"]});
            }
            format!("{event}\n")
        })
        .collect();
    std::fs::write(&path, older).unwrap();
    let server = FakeModel::openai_turns([turn_text("Fine.")]);
    sandbox
        .openai_run(&server)
        .args(["--continue", "go on"])
        .assert()
        .success()
        .stderr(predicate::str::contains("recorded by an older agent"));
    let sent = server.request(0).messages();
    assert_eq!(sent.len(), 6);
    let arguments = sent[2]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"command": "touch made", "description": "make a file"})
    );
}
