//! The real binary against the fake servers: what a person (or CI) sees when a real server is
//! quirky or fails — exit status, stderr, `--json` events, transcripts, `history`.

use predicates::prelude::*;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::suite::fake_model::{FakeModel, Reply, anthropic, openai, turn_text};
use crate::suite::harness::{KEY, Sandbox, events};

fn cut_answer() -> Reply {
    Reply::sse([
        openai::text("The first half of a long"),
        openai::finish("length"),
        openai::done(),
    ])
}

#[test]
fn a_cut_answer_is_printed_with_a_note_and_exits_5() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([cut_answer()]);
    sandbox
        .openai_run(&server)
        .arg("explain")
        .assert()
        .code(5)
        .stdout("The first half of a long\n")
        .stderr(predicate::str::contains(
            "agent: the answer was cut at the model's output limit: raise `max_output_tokens`",
        ));
    sandbox
        .agent()
        .args(["history"])
        .assert()
        .success()
        .stdout(predicate::str::contains("truncated"));
}

#[test]
fn a_cut_answer_is_truncated_in_the_done_event() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([cut_answer()]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "explain"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(5));
    let done = events(&output.stdout).pop().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["outcome"], "truncated");
    assert_eq!(done["answer"], "The first half of a long");
}

#[test]
fn a_call_cut_at_the_output_limit_is_not_run() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([Reply::sse([
        openai::tool_call(0, "c1", "shell", r#"{"command":"touch F","descr"#),
        openai::finish("length"),
        openai::done(),
    ])]);
    sandbox
        .openai_run(&server)
        .args(["--allow", "touch", "x"])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("which was not run"));
    assert!(!sandbox.work().join("F").exists());
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_content_filter_is_an_error_in_done_and_history() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([Reply::sse([
        anthropic::message_start(),
        anthropic::text(0, "I can't"),
        anthropic::message_delta("refusal"),
        anthropic::message_stop(),
    ])]);
    let output = sandbox
        .agent()
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["run", "--json", "--provider", "anthropic", "--base-url"])
        .arg(server.url())
        .arg("x")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("agent: the provider's content filter stopped the model's reply"),
        "{stderr}"
    );
    let events = events(&output.stdout);
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["code"], "content_filter");
    assert_eq!(events.last().unwrap()["outcome"], "content_filter");
    sandbox
        .agent()
        .args(["history"])
        .assert()
        .success()
        .stdout(predicate::str::contains("content_filter"));
}

#[test]
fn reasoning_is_an_event_in_json_and_the_transcript_and_shown_apart_in_plain_output() {
    let sandbox = Sandbox::new();
    let reasoning = || {
        Reply::sse([
            openai::chunk(
                json!({"reasoning_content": "The user greets me. \u{1b}]0;pwned\u{7}"}),
                None,
            ),
            openai::chunk(json!({"reasoning_content": " I greet back."}), None),
            openai::text("Hello!"),
            openai::finish("stop"),
            openai::done(),
        ])
    };
    let server = FakeModel::new([reasoning(), reasoning()]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "hi"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let events = events(&output.stdout);
    let thought: String = events
        .iter()
        .filter(|e| e["type"] == "reasoning_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        thought,
        "The user greets me. \u{1b}]0;pwned\u{7} I greet back."
    );
    let runs = sandbox.state_dir().join("agent/runs");
    let file = std::fs::read_dir(runs).unwrap().next().unwrap().unwrap();
    let transcript = std::fs::read_to_string(file.path()).unwrap();
    assert!(
        transcript.contains(r#""type":"reasoning_delta""#),
        "{transcript}"
    );

    // Plain: the answer alone on stdout; the reasoning on stderr, sanitised, shortened.
    sandbox
        .openai_run(&server)
        .arg("hi")
        .assert()
        .success()
        .stdout("Hello!\n")
        .stderr(
            predicate::str::contains("thinking: The user greets me.")
                .and(predicate::str::contains("\u{1b}").not()),
        );
    let long = "x".repeat(400);
    server.push(Reply::sse([
        openai::chunk(json!({"reasoning": long}), None),
        openai::text("ok"),
        openai::finish("stop"),
        openai::done(),
    ]));
    let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("… (-v shows all)"), "{stderr}");
    assert!(!stderr.contains(&long), "{stderr}");
    server.push(Reply::sse([
        openai::chunk(json!({"reasoning": long}), None),
        openai::text("ok"),
        openai::finish("stop"),
        openai::done(),
    ]));
    let output = sandbox
        .openai_run(&server)
        .args(["-v", "hi"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains(&long));
}

#[test]
fn an_html_page_instead_of_a_stream_exits_1_naming_it() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([Reply::body(
        200,
        "text/html",
        "<html><title>Sign in to the network</title></html>",
    )]);
    sandbox
        .openai_run(&server)
        .arg("x")
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("answered with `text/html` instead of an event stream")
                .and(predicate::str::contains("Sign in to the network")),
        );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_error_inside_a_200_stream_exits_1_with_the_servers_message() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([Reply::raw_sse(
        "data: {\"error\":{\"message\":\"Provider returned error\",\"code\":400}}\n\ndata: [DONE]\n\n",
    )]);
    sandbox
        .openai_run(&server)
        .arg("x")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "agent: the model server reported an error mid-reply: Provider returned error",
        ));
}

#[test]
fn a_rejected_key_shows_the_servers_words_and_the_variable_used() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([Reply::error(401, "Incorrect API key provided: sk-te***789")]);
    sandbox
        .openai_run(&server)
        .arg("x")
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("rejected the key in `OPENAI_API_KEY`")
                .and(predicate::str::contains("Incorrect API key provided"))
                .and(predicate::str::contains("set `OPENAI_API_KEY`").not()),
        );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn max_output_tokens_comes_from_the_flag_or_the_settings() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("a"), turn_text("b")]);
    sandbox
        .openai_run(&server)
        .args(["--max-output-tokens", "777", "x"])
        .assert()
        .success();
    assert_eq!(server.request(0).body["max_tokens"], json!(777));
    sandbox.settings("[model]\nmax_output_tokens = 555\n");
    sandbox.openai_run(&server).arg("x").assert().success();
    assert_eq!(server.request(1).body["max_tokens"], json!(555));
    sandbox
        .agent()
        .args(["config", "show"])
        .assert()
        .success()
        .stdout(predicate::str::contains("model.max_output_tokens = 555"));
    sandbox.settings("[model]\nmax_output_tokens = 0\n");
    sandbox
        .agent()
        .args(["run", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`model.max_output_tokens` must be a positive integer",
        ));
}

#[test]
fn a_base_url_without_a_scheme_is_a_settings_error_saying_so() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .env("OPENAI_API_KEY", KEY)
        .args(["run", "--base-url", "localhost:8080/v1", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::diff(
            "agent: base URL `localhost:8080/v1` (flag --base-url) must start with http:// or \
             https://: write `http://localhost:8080/v1` (or https://) instead\n",
        ));
    sandbox.settings("[model]\nprovider = \"openai\"\nbase_url = \"127.0.0.1:11434/v1\"\n");
    sandbox
        .agent()
        .args(["run", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "base URL `127.0.0.1:11434/v1` (user ",
        ));
}

#[test]
fn a_model_without_a_key_is_an_error_never_the_demo() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args(["run", "--model", "gpt-4.1", "x"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            predicate::str::contains("no API key: set `OPENAI_API_KEY`")
                .and(predicate::str::contains("demo model").not()),
        );
    sandbox
        .agent()
        .env("AGENT_MODEL", "claude-sonnet-4-5")
        .args(["run", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("set `ANTHROPIC_API_KEY`"));
    sandbox
        .agent()
        .args(["run", "--provider", "openai", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("set `OPENAI_API_KEY`"));
    // A local server needs no key: a base URL alone means an OpenAI-compatible server.
    let server = FakeModel::openai_turns([turn_text("local")]);
    sandbox
        .agent()
        .args(["run", "--base-url"])
        .arg(server.openai_url())
        .arg("x")
        .assert()
        .success()
        .stdout("local\n");
    assert_eq!(server.request(0).header("authorization"), None);
    // Nothing configured at all: the demo, said so.
    sandbox
        .agent()
        .args(["run", "list the files here"])
        .assert()
        .success()
        .stderr(predicate::str::contains("offline demo model"));
}
