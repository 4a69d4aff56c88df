//! What CI and scripts rely on: `--fail-on-deny` (and `[ci] fail_on_deny`) exits 3 after
//! the answer with the denials in `done`; `-q` never hides a denial; summaries count every
//! line a command printed; an answer going to a file is left exactly as written.

use predicates::prelude::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;

fn done_event(output: &std::process::Output) -> Value {
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|event| event["type"] == "done")
        .unwrap_or_else(|| panic!("no done event:\n{text}"))
}

fn denying_server() -> FakeModel {
    FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("ls", "list"),
        turn_text("could not create F"),
    ])
}

#[test]
fn fail_on_deny_exits_3_after_the_answer_and_lists_the_denials() {
    let sandbox = Sandbox::new();
    let server = denying_server();
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "--fail-on-deny", "make F"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let done = done_event(&output);
    assert_eq!(done["outcome"], "answered");
    assert_eq!(done["answer"], "could not create F");
    assert_eq!(done["commands_denied"], 1);
    assert_eq!(done["denials"].as_array().unwrap().len(), 1);
    assert_eq!(done["denials"][0]["command"], "touch F");
    assert!(
        done["denials"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("nobody can be asked"),
        "{done}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("agent: 1 command was denied; exiting 3"),
        "{stderr}"
    );
}

#[test]
fn without_fail_on_deny_a_denial_still_ends_0_and_done_lists_it() {
    let sandbox = Sandbox::new();
    let server = denying_server();
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "make F"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(done_event(&output)["denials"][0]["command"], "touch F");
}

#[test]
fn fail_on_deny_in_settings_and_a_project_file_cannot_turn_it_off() {
    let sandbox = Sandbox::new();
    sandbox.settings("[ci]\nfail_on_deny = true\n");
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        "[ci]\nfail_on_deny = false\n",
    )
    .unwrap();
    let server = denying_server();
    sandbox
        .openai_run(&server)
        .arg("make F")
        .assert()
        .code(3)
        .stdout("could not create F\n")
        .stderr(predicate::str::contains("can only turn fail_on_deny on"));
    // A run without denials is a success.
    let server = FakeModel::openai_turns([turn_tool_call("ls", "list"), turn_text("listed")]);
    sandbox.openai_run(&server).arg("list").assert().code(0);
    let shown = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["ci.fail_on_deny"]["value"], json!(true));
}

#[test]
fn quiet_never_hides_a_denial() {
    let sandbox = Sandbox::new();
    let server = denying_server();
    let output = sandbox
        .openai_run(&server)
        .args(["-q", "make F"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("⊘ touch F · denied"), "{stderr}");
    assert!(!stderr.contains("✓ ls"), "-q showed progress:\n{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "could not create F\n"
    );
}

#[test]
fn summaries_count_every_line_not_only_those_kept() {
    let sandbox = Sandbox::new();
    sandbox.settings("[limits]\nmax_output_chars = 200\n");
    let server =
        FakeModel::openai_turns([turn_tool_call("seq 1 5000", "count"), turn_text("counted")]);
    sandbox
        .openai_run(&server)
        .arg("count")
        .assert()
        .success()
        .stderr(predicate::str::contains("✓ seq 1 5000 · exit 0 · "))
        .stderr(predicate::str::contains(" · 5000 lines (truncated)"));
}

#[test]
fn an_answer_to_a_file_keeps_its_markdown_exactly() {
    let sandbox = Sandbox::new();
    let answer = "# Result\n\n- **one**\n- `two`\n\n```sh\necho hi\n```";
    let server = FakeModel::openai_turns([turn_text(answer)]);
    sandbox
        .openai_run(&server)
        .arg("answer")
        .assert()
        .success()
        .stdout(format!("{answer}\n"));
}
