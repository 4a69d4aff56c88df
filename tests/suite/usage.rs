//! Token usage from both wires, Anthropic prompt-caching marks, and the `--max-tokens` /
//! `--max-time` budgets, through the real binary against the fake servers.

use std::time::{Duration, Instant};

use predicates::prelude::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fake_model::{FakeModel, Reply, anthropic, openai, turn_text, turn_tool_call};
use super::harness::{Sandbox, events};

/// An OpenAI turn: `call` as a tool call, or `text` as the answer, then the usage chunk.
fn openai_turn(text: &str, call: Option<(&str, &str)>, usage: (u64, u64, u64)) -> Reply {
    let mut events = Vec::new();
    let reason = match call {
        Some((id, command)) => {
            let arguments = json!({"command": command, "description": "d"}).to_string();
            events.push(openai::tool_call(0, id, "shell", &arguments));
            "tool_calls"
        }
        None => {
            events.push(openai::text(text));
            "stop"
        }
    };
    events.extend([
        openai::finish(reason),
        openai::usage(usage.0, usage.1, usage.2),
        openai::done(),
    ]);
    Reply::sse(events)
}

#[test]
fn openai_usage_is_asked_for_and_shown_in_done_the_summary_and_history() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([
        openai_turn("", Some(("c1", "pwd")), (4_000, 300, 0)),
        openai_turn("Done.", None, (8_400, 1_000, 7_100)),
    ]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "where?"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        server.request(0).body["stream_options"],
        json!({"include_usage": true})
    );
    let printed = events(&output.stdout);
    let turn_ends: Vec<&Value> = printed.iter().filter(|e| e["type"] == "turn_end").collect();
    assert_eq!(
        turn_ends[0]["usage"],
        json!({"input": 4000, "output": 300, "cache_read": 0, "cache_write": 0})
    );
    assert_eq!(
        printed.last().unwrap()["usage"],
        json!({"input": 12400, "output": 1300, "cache_read": 7100, "cache_write": 0})
    );

    // The same on a person's screen (plain), with -v per turn.
    let server = FakeModel::new([
        openai_turn("", Some(("c1", "pwd")), (4_000, 300, 0)),
        openai_turn("Done.", None, (8_400, 1_000, 7_100)),
    ]);
    sandbox
        .openai_run(&server)
        .args(["-v", "where?"])
        .assert()
        .success()
        .stderr(
            predicate::str::contains("  turn 1 · 4.0k in · 300 out\n")
                .and(predicate::str::contains(
                    "  turn 2 · 8.4k in (7.1k cached) · 1.0k out\n",
                ))
                .and(predicate::str::contains(
                    "agent: tokens: 12.4k in (7.1k cached) · 1.3k out\n",
                )),
        );
    let list = sandbox.agent().args(["history"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains(" TOKENS "), "{list}");
    assert!(list.contains("12.4k/1.3k"), "{list}");
    let json_list = sandbox
        .agent()
        .args(["history", "--json"])
        .output()
        .unwrap();
    let json_list: Value = serde_json::from_slice(&json_list.stdout).unwrap();
    assert_eq!(json_list[0]["usage"]["input"], 12400);
    let id = json_list[0]["id"].as_str().unwrap().to_owned();
    sandbox
        .agent()
        .args(["history", "show", &id])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "· 12.4k in (7.1k cached) · 1.3k out",
        ));
}

#[test]
fn a_server_refusing_stream_options_is_asked_again_without_them() {
    let sandbox = Sandbox::new();
    // Mistral's answer to the option.
    let refusal = r#"{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted","input":true}]},"type":"invalid_request_error","param":null,"code":null}"#;
    let server = FakeModel::new([
        Reply::body(422, "application/json", refusal),
        turn_text("Fine.").openai(),
        turn_text("Still fine.").openai(),
    ]);
    sandbox
        .openai_run(&server)
        .arg("hi")
        .assert()
        .success()
        .stdout("Fine.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].body.get("stream_options").is_some());
    assert!(requests[1].body.get("stream_options").is_none());
}

#[test]
fn anthropic_requests_carry_cache_marks_and_usage_reports_the_cache() {
    let sandbox = Sandbox::new();
    let turn = |events: Vec<super::fake_model::Events>| Reply::sse(events);
    let server = FakeModel::new([
        turn(vec![
            anthropic::message_start_usage(50, 0, 2_000),
            anthropic::tool_use(
                0,
                "toolu_1",
                "shell",
                r#"{"command":"pwd","description":"d"}"#,
            ),
            anthropic::message_delta_usage("tool_use", 40),
            anthropic::message_stop(),
        ]),
        turn(vec![
            anthropic::message_start_usage(30, 2_000, 100),
            anthropic::text(0, "Here."),
            anthropic::message_delta_usage("end_turn", 20),
            anthropic::message_stop(),
        ]),
    ]);
    let output = sandbox
        .anthropic_run(&server)
        .args(["--json", "where?"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let second = server.request(1).body;
    let marks = second.to_string().matches("\"cache_control\"").count();
    assert!(marks <= 4, "{marks} breakpoints: {second}");
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(second["system"][0]["cache_control"], ephemeral);
    let tools = second["tools"].as_array().unwrap();
    assert_eq!(tools.last().unwrap()["cache_control"], ephemeral);
    let messages = second["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let last_block = last["content"].as_array().unwrap().last().unwrap();
    assert_eq!(last_block["type"], "tool_result");
    assert_eq!(last_block["cache_control"], ephemeral);
    let done = events(&output.stdout).pop().unwrap();
    assert_eq!(
        done["usage"],
        json!({"input": 4180, "output": 60, "cache_read": 2000, "cache_write": 2100})
    );
}

#[test]
fn max_tokens_stops_before_the_next_command_with_exit_6() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([
        openai_turn("", Some(("c1", "touch one")), (900, 50, 0)),
        openai_turn("", Some(("c2", "touch two")), (1_000, 50, 0)),
        openai_turn("never", None, (1, 1, 0)),
    ]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "--allow", "touch", "--max-tokens", "1500", "go"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(6));
    assert!(sandbox.work().join("one").exists());
    assert!(!sandbox.work().join("two").exists());
    assert_eq!(server.requests().len(), 2);
    let done = events(&output.stdout).pop().unwrap();
    assert_eq!(done["outcome"], "budget");
    assert!(
        done["note"]
            .as_str()
            .unwrap()
            .starts_with("stopped: 2.0k tokens used of --max-tokens 1500"),
        "{done}"
    );
    sandbox
        .openai_run(&server)
        .args(["--max-tokens", "0", "go"])
        .assert()
        .code(2);
}

#[test]
fn max_time_stops_a_running_command_like_a_timeout_with_exit_6() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_tool_call("sleep 30", "wait"), turn_text("never")]);
    let started = Instant::now();
    let output = sandbox
        .openai_run(&server)
        .args(["--allow", "sleep", "--max-time", "1s", "wait"])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(6));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("⏱ sleep 30 · timed out"), "{stderr}");
    assert!(
        stderr.contains("agent: stopped: --max-time 1 s passed"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn max_time_also_bounds_a_silent_model() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([Reply::sse([openai::text("thinking")]).stall_after(1)]);
    let started = Instant::now();
    sandbox
        .openai_run(&server)
        .args(["--max-time", "500ms", "hi"])
        .assert()
        .code(6)
        .stderr(predicate::str::contains("--max-time"));
    assert!(started.elapsed() < Duration::from_secs(20));
    sandbox
        .openai_run(&server)
        .args(["--max-time", "soon", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a duration like `90s`"));
}
