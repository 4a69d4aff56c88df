//! `agent run` against fake OpenAI-compatible and Anthropic servers on
//! 127.0.0.1: the loop, the policy on the way, transcripts and exit statuses.

use super::fake_model::{FakeModel, Reply, openai, turn_text, turn_tool_call};
use super::harness::{KEY, Sandbox};
use predicates::prelude::*;
use pretty_assertions::assert_eq;

#[test]
fn a_builtin_read_only_command_runs_and_its_output_reaches_the_model() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("hello.txt"), "hi").unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call("ls", "list the files"),
        turn_text("There is one file: hello.txt."),
    ]);
    sandbox
        .openai_run(&server)
        .arg("list the files")
        .assert()
        .success()
        .stdout("There is one file: hello.txt.\n")
        .stderr(predicate::str::contains("✓ ls · exit 0"));
    let second = server.request(1);
    let results = second.tool_results();
    assert_eq!(results.len(), 1);
    assert!(results[0].1.contains("hello.txt"), "{results:?}");
    assert!(results[0].1.contains("\"exit_code\":0"), "{results:?}");
    let first = server.request(0);
    assert_eq!(
        first.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(first.tool_names(), super::support::tools::offered());
    assert_eq!(first.last_user_text().as_deref(), Some("list the files"));
    let system = first.system().unwrap();
    assert!(
        system.contains(&sandbox.work().canonicalize().unwrap().display().to_string()),
        "{system}"
    );
}

#[test]
fn without_a_terminal_an_unsure_command_is_denied_and_the_model_told() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_text("I could not create F."),
    ]);
    sandbox
        .openai_run(&server)
        .arg("create F")
        .assert()
        .success()
        .stdout("I could not create F.\n")
        .stderr(predicate::str::contains("⊘ touch F"));
    assert!(!sandbox.work().join("F").exists(), "F was created");
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("EDENIED"), "{results:?}");
    assert!(
        results[0].1.contains("--allow"),
        "the denial says how to allow it: {results:?}"
    );
}

#[test]
fn an_allow_flag_lets_the_command_run() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("done")]);
    sandbox
        .openai_run(&server)
        .args(["--allow", "touch", "create F"])
        .assert()
        .success();
    assert!(sandbox.work().join("F").exists());
}

#[test]
fn a_user_allow_rule_lets_the_command_run() {
    let sandbox = Sandbox::new();
    sandbox.settings("[permissions.commands]\nallow = [\"touch\"]\n");
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("done")]);
    sandbox
        .openai_run(&server)
        .arg("create F")
        .assert()
        .success();
    assert!(sandbox.work().join("F").exists());
}

#[test]
fn a_deny_rule_beats_an_allow_rule() {
    let sandbox = Sandbox::new();
    sandbox.settings("[permissions.commands]\nallow = [\"touch\"]\n");
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("denied")]);
    sandbox
        .openai_run(&server)
        .args(["--deny", "touch", "create F"])
        .assert()
        .success();
    assert!(!sandbox.work().join("F").exists());
    let results = server.request(1).tool_results();
    assert!(
        results[0].1.contains("EDENIED") && results[0].1.contains("deny"),
        "{results:?}"
    );
}

#[test]
fn a_project_file_cannot_allow_but_can_deny() {
    let sandbox = Sandbox::new();
    std::fs::create_dir(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        "[permissions.commands]\nallow = [\"touch\"]\ndeny = [\"ls\"]\n",
    )
    .unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F").with_shell("ls", "list"),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        .arg("go")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "`permissions.commands.allow` is ignored",
        ));
    assert!(!sandbox.work().join("F").exists());
    let results = server.request(1).tool_results();
    assert_eq!(results.len(), 2, "two calls in one turn both answered");
    assert!(
        results
            .iter()
            .all(|(_, content)| content.contains("EDENIED")),
        "{results:?}"
    );
}

#[test]
fn the_prompt_can_be_piped() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox
        .openai_run(&server)
        .write_stdin("list files\nplease\n")
        .assert()
        .success()
        .stdout("ok\n");
    assert_eq!(
        server.request(0).last_user_text().as_deref(),
        Some("list files\nplease")
    );
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox
        .openai_run(&server)
        .arg("-")
        .write_stdin("from a file")
        .assert()
        .success();
    assert_eq!(
        server.request(0).last_user_text().as_deref(),
        Some("from a file")
    );
}

#[test]
fn an_empty_prompt_is_a_usage_error() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args(["run", "--provider", "demo"])
        .write_stdin("  \n")
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("agent: the prompt is empty"));
    sandbox
        .agent()
        .args(["run", "--provider", "demo", ""])
        .assert()
        .code(2);
}

#[test]
fn json_mode_prints_one_event_per_line() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("echo hi", "say hi"), turn_text("said hi")]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "say hi"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let events: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let without_deltas: Vec<&str> = types
        .iter()
        .copied()
        .filter(|t| *t != "text_delta" && *t != "output_delta")
        .collect();
    assert_eq!(
        without_deltas,
        [
            "start",
            "turn_end",
            "tool_call",
            "decision",
            "tool_result",
            "turn_end",
            "done"
        ]
    );
    assert!(
        types.contains(&"text_delta") && types.contains(&"output_delta"),
        "{types:?}"
    );
    let decision = events.iter().find(|e| e["type"] == "decision").unwrap();
    assert_eq!(decision["decision"], "allow");
    assert_eq!(decision["source"], "builtin");
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["result"]["stdout"], "hi\n");
    assert_eq!(events.last().unwrap()["answer"], "said hi");
}

#[test]
fn the_fourth_identical_call_is_refused_with_eloop() {
    let sandbox = Sandbox::new();
    let call = || turn_tool_call("echo again", "repeat");
    let server = FakeModel::openai_turns([call(), call(), call(), call(), turn_text("stopped")]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "loop"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let results = server.request(4).tool_results();
    assert_eq!(results.len(), 4);
    assert!(
        results[..3]
            .iter()
            .all(|(_, c)| c.contains("\"exit_code\":0")),
        "{results:?}"
    );
    assert!(results[3].1.contains("ELOOP"), "{:?}", results[3]);
}

#[test]
fn max_turns_stops_the_run_with_a_note_and_exit_zero() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("echo 1", "one"),
        turn_tool_call("echo 2", "two"),
    ]);
    sandbox
        .openai_run(&server)
        .args(["--max-turns", "2", "count"])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("stopped after 2 turns"));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn malformed_tool_arguments_go_back_to_the_model() {
    let sandbox = Sandbox::new();
    let bad = super::fake_model::Turn::default().with_call("call_bad", "shell", "{\"command\": ");
    let server = FakeModel::openai_turns([bad, turn_text("sorry")]);
    sandbox
        .openai_run(&server)
        .arg("x")
        .assert()
        .success()
        .stdout("sorry\n");
    let results = server.request(1).tool_results();
    assert!(
        results[0].1.contains("EINVAL") && results[0].1.contains("not valid JSON"),
        "{results:?}"
    );
}

#[test]
fn the_transcript_records_the_run_and_never_the_key() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("echo $OPENAI_API_KEY sk-test-key-0123456789", "leak"),
        turn_text("the key is sk-test-key-0123456789"),
    ]);
    sandbox
        .openai_run(&server)
        .args(["--allow", "echo", "go"])
        .assert()
        .success();
    let files = sandbox.transcripts();
    assert_eq!(files.len(), 1);
    let text = &files[0];
    assert!(
        !text.contains(KEY),
        "the key reached the transcript:\n{text}"
    );
    assert!(!text.to_lowercase().contains("bearer"), "{text}");
    for ty in [
        "\"start\"",
        "\"tool_call\"",
        "\"decision\"",
        "\"tool_result\"",
        "\"done\"",
    ] {
        assert!(
            text.contains(&format!("\"type\":{ty}")),
            "{ty} missing:\n{text}"
        );
    }
    assert!(text.contains("[REDACTED]"), "{text}");
}

/// `--json` on stdout is redacted like the transcript: CI logs keep it.
#[test]
fn json_output_never_shows_the_key() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call(&format!("echo {KEY}"), "leak"),
        turn_text(&format!("the key is {KEY}")),
    ]);
    let output = sandbox
        .openai_run(&server)
        .args(["--allow", "echo", "--json", "go"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("[REDACTED]"), "{stdout}");
    assert!(!stdout.contains(KEY), "the key reached stdout: {stdout}");
}

#[test]
fn history_lists_and_shows_runs() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_tool_call("pwd", "where"), turn_text("here")]);
    sandbox
        .openai_run(&server)
        .arg("where am i")
        .assert()
        .success();
    let output = sandbox
        .agent()
        .args(["history", "--json"])
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(list[0]["prompt"], "where am i");
    assert_eq!(list[0]["turns"], 2);
    assert_eq!(list[0]["commands_run"], 1);
    assert_eq!(list[0]["outcome"], "answered");
    let id = list[0]["id"].as_str().unwrap();
    sandbox
        .agent()
        .arg("history")
        .assert()
        .success()
        .stdout(predicate::str::contains("where am i"));
    let short = &id[id.len() - 6..];
    sandbox
        .agent()
        .args(["history", "show", short])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("$ pwd  # where")
                .and(predicate::str::contains("done: answered")),
        );
    sandbox
        .agent()
        .args(["history", "show", "nope"])
        .assert()
        .code(2);
}

/// `history show ID` finds the transcript by its file name and opens no other: a FIFO
/// posing as another run's transcript would block a reader forever.
#[cfg(unix)]
#[test]
fn history_show_opens_only_the_transcript_it_shows() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("here")]);
    sandbox
        .openai_run(&server)
        .arg("where am i")
        .assert()
        .success();
    let runs = sandbox.state_dir().join("agent/runs");
    let fifo = runs.join("0000-blocking.ndjson");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo");
    let id = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p != &fifo)
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap();
    sandbox
        .agent()
        .args(["history", "show", &id])
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .success()
        .stdout(predicate::str::contains("done: answered"));
}

#[test]
fn a_server_error_is_retried() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([Reply::error(500, "overloaded"), turn_text("fine").openai()]);
    sandbox
        .openai_run(&server)
        .arg("x")
        .assert()
        .success()
        .stdout("fine\n")
        .stderr(predicate::str::contains(
            "trying again in 0.5 s (try 2 of 3)",
        ));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_unreachable_server_is_a_runtime_error() {
    let sandbox = Sandbox::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    sandbox
        .agent()
        .env("OPENAI_API_KEY", KEY)
        .args([
            "run",
            "--provider",
            "openai",
            "--base-url",
            &format!("http://127.0.0.1:{port}/v1"),
            "x",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot reach the model server"));
}

#[test]
fn anthropic_streams_tool_use_and_gets_tool_results_back() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("notes.md"), "x").unwrap();
    let server =
        FakeModel::anthropic_turns([turn_tool_call("ls", "list"), turn_text("notes.md is here")]);
    sandbox
        .agent()
        .env("ANTHROPIC_API_KEY", KEY)
        .args([
            "run",
            "--provider",
            "anthropic",
            "--base-url",
            &server.url(),
            "list",
        ])
        .assert()
        .success()
        .stdout("notes.md is here\n");
    let first = server.request(0);
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("x-api-key"), Some(KEY));
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("notes.md"), "{results:?}");
}

#[test]
fn the_demo_model_runs_offline_end_to_end() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("demo-file.txt"), "x").unwrap();
    sandbox
        .agent()
        .args(["run", "list the files here"])
        .assert()
        .success()
        .stdout(predicate::str::contains("demo-file.txt"))
        .stderr(
            predicate::str::contains("offline demo model")
                .and(predicate::str::contains("✓ list . · 1 file")),
        );
    assert_eq!(sandbox.transcripts().len(), 1);
}

#[test]
fn mode_off_offers_no_tool() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_tool_call("ls", "list"), turn_text("ok")]);
    sandbox
        .openai_run(&server)
        .args(["--mode", "off", "x"])
        .assert()
        .success();
    assert!(server.request(0).tool_names().is_empty());
    assert!(
        server.request(1).tool_results()[0]
            .1
            .contains("ETOOL_DISABLED")
    );
}

#[test]
fn a_missing_key_is_a_usage_error_naming_the_variable() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args(["run", "--provider", "openai", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("OPENAI_API_KEY"));
}

#[test]
fn stream_helpers_exist_for_split_arguments() {
    // Two tool calls in one turn, arguments split over many chunks.
    let sandbox = Sandbox::new();
    let events = vec![
        openai::tool_call_split(
            0,
            "c1",
            "shell",
            &["{\"comm", "and\":\"echo a\",\"descr", "iption\":\"a\"}"],
        ),
        openai::tool_call_split(
            1,
            "c2",
            "shell",
            &["{\"command\":\"echo b\",", "\"description\":\"b\"}"],
        ),
        openai::finish("tool_calls"),
        openai::done(),
    ];
    let server = FakeModel::new([Reply::sse(events), turn_text("ab").openai()]);
    sandbox
        .openai_run(&server)
        .arg("x")
        .assert()
        .success()
        .stdout("ab\n");
    let results = server.request(1).tool_results();
    assert_eq!(results.len(), 2);
    assert!(
        results[0].1.contains("a\\n") && results[1].1.contains("b\\n"),
        "{results:?}"
    );
}

#[test]
fn a_stream_cut_after_text_is_reported_and_recorded() {
    let sandbox = Sandbox::new();
    let events = vec![
        openai::text("partial answ"),
        openai::text("er"),
        openai::finish("stop"),
        openai::done(),
    ];
    let server = FakeModel::new([Reply::sse(events).cut_after(2)]);
    sandbox
        .openai_run(&server)
        .arg("x")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "agent: the model's reply stream failed",
        ));
    let text = &sandbox.transcripts()[0];
    assert!(
        text.contains("\"type\":\"error\"") && text.contains("\"outcome\":\"error\""),
        "{text}"
    );
    assert!(
        text.contains("partial answ"),
        "what streamed before the cut is kept:\n{text}"
    );
}

#[test]
fn an_unwritable_state_directory_warns_and_the_run_goes_on() {
    let sandbox = Sandbox::new();
    let not_a_dir = sandbox.root.path().join("state-file");
    std::fs::write(&not_a_dir, "").unwrap();
    let server = FakeModel::openai_turns([turn_text("still answered")]);
    sandbox
        .openai_run(&server)
        .env("XDG_STATE_HOME", &not_a_dir)
        .arg("x")
        .assert()
        .success()
        .stdout("still answered\n")
        .stderr(predicate::str::contains("this run is not recorded"));
}

#[test]
fn json_runs_report_failures_as_error_events_with_a_code() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .agent()
        .args(["run", "--json", "--profile", "nope", "x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let event: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(event["type"], "error");
    assert_eq!(event["code"], "settings");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = sandbox
        .agent()
        .env("OPENAI_API_KEY", KEY)
        .args([
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &format!("http://127.0.0.1:{port}/v1"),
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stdout).unwrap();
    let error = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["type"] == "error")
        .unwrap();
    assert_eq!(error["code"], "connect");
}
