//! The API key never leaves the agent through a command: it is not in a command's
//! environment (nor is the loader's injection), and output that prints it anyway is redacted
//! on the stream, however the reads cut it, before the screen, `--json`, the transcript or
//! the model see it.

use super::fake_model::{FakeModel, Turn, turn_text, turn_tool_call};
use super::harness::{KEY, Sandbox, events};
use pretty_assertions::assert_eq;

/// The text of every `output_delta` event in `events`, in order, joined.
fn streamed(events: &[serde_json::Value]) -> String {
    events
        .iter()
        .filter(|event| event["type"] == "output_delta")
        .filter_map(|event| event["text"].as_str())
        .collect()
}

/// The `tool_result` events' stdout, in order.
fn result_stdouts(events: &[serde_json::Value]) -> Vec<String> {
    events
        .iter()
        .filter(|event| event["type"] == "tool_result")
        .map(|event| event["result"]["stdout"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Runs a command that prints the key in two pieces from two files, with a pause between, so
/// the pieces come in two reads (the command line itself holds no piece of the key), with
/// `flags`: the sandbox, the server and the output.
fn print_the_key_in_two_pieces(flags: &[&str]) -> (Sandbox, FakeModel, std::process::Output) {
    let sandbox = Sandbox::new();
    let (first, second) = KEY.split_at(8);
    std::fs::write(sandbox.work().join("first.txt"), first).unwrap();
    std::fs::write(sandbox.work().join("second.txt"), second).unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call(
            "cat first.txt; sleep 0.2; cat second.txt",
            "print the pieces",
        ),
        turn_text("done"),
    ]);
    let output = sandbox
        .openai_run(&server)
        .args(["--allow", "sleep"])
        .args(flags)
        .arg("go")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    (sandbox, server, output)
}

#[test]
fn a_key_printed_in_two_pieces_is_redacted_in_json_the_transcript_and_for_the_model() {
    let (sandbox, server, output) = print_the_key_in_two_pieces(&["--json"]);
    let json = events(&output.stdout);
    assert_eq!(streamed(&json), "[REDACTED]", "--json");
    assert_eq!(result_stdouts(&json), ["[REDACTED]"], "--json");
    let transcript = events(sandbox.transcripts()[0].as_bytes());
    assert_eq!(streamed(&transcript), "[REDACTED]", "transcript");
    assert_eq!(result_stdouts(&transcript), ["[REDACTED]"], "transcript");
    let sent = server.request(1).tool_results();
    assert!(
        sent[0].1.contains("[REDACTED]") && !sent[0].1.contains(KEY),
        "the model was sent {sent:?}"
    );
}

#[test]
fn a_key_printed_in_two_pieces_is_redacted_on_the_plain_screen() {
    let (_sandbox, _server, output) = print_the_key_in_two_pieces(&["--plain", "--verbose"]);
    let screen = String::from_utf8_lossy(&output.stderr);
    let (first, second) = KEY.split_at(8);
    assert!(
        !screen.contains(first) && !screen.contains(second) && screen.contains("[REDACTED]"),
        "{screen}"
    );
}

/// Generated cases: the key straddles the end of a full 64 KiB pipe read at every offset
/// of a few, from one character in to one character short.
#[test]
fn a_key_across_the_end_of_a_full_read_is_redacted() {
    const READ_BYTES: usize = 64 * 1024;
    let sandbox = Sandbox::new();
    let offsets = [1, 2, 8, KEY.len() / 2, KEY.len() - 1];
    let mut turns = Vec::new();
    for (index, offset) in offsets.iter().enumerate() {
        let text = format!("{}{KEY}\n", "a".repeat(READ_BYTES - offset));
        std::fs::write(sandbox.work().join(format!("big{index}.txt")), text).unwrap();
        turns.push(turn_tool_call(&format!("cat big{index}.txt"), "print"));
    }
    turns.push(turn_text("done"));
    let server = FakeModel::openai_turns(turns);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "go"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let json = events(&output.stdout);
    let streamed = streamed(&json);
    assert!(!streamed.contains(KEY), "the key streamed out whole");
    assert_eq!(streamed.matches("[REDACTED]").count(), offsets.len());
    for stdout in result_stdouts(&json) {
        assert!(
            stdout.ends_with("a[REDACTED]\n"),
            "{}",
            &stdout[stdout.len() - 40..]
        );
    }
}

/// `[model] api_key_env` names the key's variable: it is kept from commands like the two
/// default names, and its value is redacted from what they print; the loader's injection
/// variables are kept from commands too.
#[test]
fn the_configured_key_variable_and_loader_variables_never_reach_a_command() {
    const OWN_KEY: &str = "sk-own-variable-0123456789";
    let sandbox = Sandbox::new();
    sandbox.settings("[model]\napi_key_env = \"MY_KEY\"\n");
    std::fs::write(sandbox.work().join("key.txt"), OWN_KEY).unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call("printenv MY_KEY", "look for the key"),
        turn_tool_call("env", "list the environment"),
        turn_tool_call("cat key.txt", "print the key"),
        Turn::default().with_call("call_read", "read_file", r#"{"path": "key.txt"}"#),
        turn_text("done"),
    ]);
    let output = sandbox
        .agent()
        .env("MY_KEY", OWN_KEY)
        .env("LD_LIBRARY_PATH", "/nonexistent-lib")
        .env("LD_PRELOAD", "")
        .env("DYLD_INSERT_LIBRARIES", "/nonexistent.dylib")
        .env("KEEP_ME", "kept")
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(["--allow", "printenv", "--allow", "env", "--json", "go"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        server.request(0).header("authorization"),
        Some(format!("Bearer {OWN_KEY}").as_str())
    );
    let json = events(&output.stdout);
    let results: Vec<&serde_json::Value> = json
        .iter()
        .filter(|event| event["type"] == "tool_result")
        .map(|event| &event["result"])
        .collect();
    assert_eq!(
        results[0]["exit_code"], 1,
        "printenv MY_KEY: {}",
        results[0]
    );
    let env = results[1]["stdout"].as_str().unwrap();
    assert!(env.contains("KEEP_ME=kept"), "{env}");
    for name in [
        "MY_KEY",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "DYLD_INSERT_LIBRARIES",
        "OPENAI_API_KEY",
    ] {
        assert!(
            !env.contains(&format!("{name}=")),
            "{name} reached `env`:\n{env}"
        );
    }
    assert_eq!(results[2]["stdout"], "[REDACTED]");
    let transcript = sandbox.transcripts().remove(0);
    for text in [output.stdout.as_slice(), transcript.as_bytes()] {
        assert!(!String::from_utf8_lossy(text).contains(OWN_KEY));
    }
    let sent = server.request(4).tool_results();
    assert_eq!(sent.len(), 4);
    for (_, content) in &sent {
        assert!(!content.contains(OWN_KEY), "the model was sent {content}");
    }
    assert!(sent[3].1.contains("[REDACTED]"), "read_file: {}", sent[3].1);
}

/// The model's own text streams in deltas too (the fake server cuts every text in two, here
/// inside the key): the deltas, the answer in `done` and the answer on stdout are redacted.
#[test]
fn a_key_the_model_writes_in_two_deltas_is_redacted() {
    let sandbox = Sandbox::new();
    let said = format!("the key is {KEY}");
    let server = FakeModel::openai_turns([turn_text(&said)]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "go"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let json = events(&output.stdout);
    let deltas: String = json
        .iter()
        .filter(|event| event["type"] == "text_delta")
        .filter_map(|event| event["text"].as_str())
        .collect();
    assert_eq!(deltas, "the key is [REDACTED]");
    let done = json.iter().find(|event| event["type"] == "done").unwrap();
    assert_eq!(done["answer"], "the key is [REDACTED]");

    let server = FakeModel::openai_turns([turn_text(&said)]);
    let output = sandbox.openai_run(&server).arg("go").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "the key is [REDACTED]\n"
    );
}
