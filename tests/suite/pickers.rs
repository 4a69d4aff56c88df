//! Where a person picks from a list or fills a form, driven by keys in tmux: the run to
//! resume (`run --resume` without an ID), the rules to remove (`rules remove` without a
//! rule), the model settings (`config init`). Without a terminal each keeps its old answer.

use predicates::prelude::*;
use pretty_assertions::assert_eq;

use super::fake_model::{FakeModel, turn_text};
use super::harness::{KEY, Sandbox, events};
use super::tty::{Tmux, agent_bin, shell_quote};

/// A finished run in the sandbox's workspace with `prompt`.
fn earlier_run(sandbox: &Sandbox, prompt: &str, answer: &str) {
    let server = FakeModel::openai_turns([turn_text(answer)]);
    sandbox.openai_run(&server).arg(prompt).assert().success();
}

#[test]
fn resume_without_an_id_picks_a_recent_run_and_asks_for_the_next_message() {
    let sandbox = Sandbox::new();
    earlier_run(&sandbox, "first task about apples", "Apples noted.");
    // Transcript names carry the second they started: keep the order certain.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    earlier_run(&sandbox, "second task about pears", "Pears noted.");
    let server = FakeModel::openai_turns([turn_text("Still apples.")]);
    let script = format!(
        "{} run --provider openai --base-url {} --resume",
        shell_quote(&agent_bin()),
        shell_quote(&server.openai_url())
    );
    let tmux = Tmux::start(&sandbox, &[("OPENAI_API_KEY", KEY)], &script);
    tmux.wait_for("Resume which run?");
    // The list is drawn after its question: wait for its last row.
    let screen = tmux.wait_on_screen("first task about apples");
    // Newest first, with the first message, turns and outcome.
    let pears = screen.find("second task about pears · 1 turn · answered");
    let apples = screen.find("first task about apples · 1 turn · answered");
    assert!(
        pears.is_some() && apples.is_some() && pears < apples,
        "{screen}"
    );
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Next message:");
    tmux.keys(&["-l", "and the apples?"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(screen.contains("Still apples."), "{screen}");
    let sent = server.request(0).messages();
    let texts: Vec<&str> = sent.iter().filter_map(|m| m["content"].as_str()).collect();
    assert!(texts.contains(&"first task about apples"), "{texts:?}");
    assert!(!texts.contains(&"second task about pears"), "{texts:?}");
    assert_eq!(sent.last().unwrap()["content"], "and the apples?");
    // The picked run goes on: its transcript holds the `continue` marker.
    let recorded = events(&std::fs::read(&sandbox.transcript_paths()[0]).unwrap());
    let marker = recorded.iter().find(|e| e["type"] == "continue").unwrap();
    assert_eq!(marker["prompt"], "and the apples?");
}

#[test]
fn esc_at_the_run_picker_stops_without_a_run() {
    let sandbox = Sandbox::new();
    earlier_run(&sandbox, "a task", "Done.");
    let server = FakeModel::openai_turns([]);
    let script = format!(
        "{} run --provider openai --base-url {} --resume -- 'go on'",
        shell_quote(&agent_bin()),
        shell_quote(&server.openai_url())
    );
    let tmux = Tmux::start(&sandbox, &[("OPENAI_API_KEY", KEY)], &script);
    tmux.wait_for("Resume which run?");
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=130 TTY=icanon"), "{screen}");
    assert!(server.requests().is_empty());
}

#[test]
fn resume_without_an_id_and_without_a_terminal_is_a_usage_error() {
    let sandbox = Sandbox::new();
    earlier_run(&sandbox, "a task", "Done.");
    let server = FakeModel::openai_turns([]);
    sandbox
        .openai_run(&server)
        .args(["--resume", "--", "go on"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "agent: --resume needs a run ID here",
        ));
    assert!(server.requests().is_empty());
}

const RULES: &str = r#"
[permissions.commands]
allow = ["git status", "cargo check", "make"]
deny = ["rm -rf"]
"#;

#[test]
fn rules_remove_without_a_rule_removes_the_marked_ones() {
    let sandbox = Sandbox::new();
    sandbox.settings(RULES);
    let script = format!("{} rules remove", shell_quote(&agent_bin()));
    let tmux = Tmux::start(&sandbox, &[], &script);
    tmux.wait_for("Remove which rules?");
    // The list is drawn after its question: wait for its last row.
    let screen = tmux.wait_on_screen("rm -rf");
    for rule in ["git status", "cargo check", "make", "rm -rf"] {
        assert!(screen.contains(rule), "{rule}: {screen}");
    }
    // Mark the first and the third, then take them.
    tmux.keys(&["Space"]);
    tmux.keys(&["Down"]);
    tmux.keys(&["Down"]);
    tmux.keys(&["Space"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(screen.contains("removed \"git status\""), "{screen}");
    assert!(screen.contains("removed \"make\""), "{screen}");
    let text = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(
        text.contains(r#"allow = ["cargo check"]"#) && text.contains(r#"deny = ["rm -rf"]"#),
        "{text}"
    );
}

#[test]
fn rules_remove_without_a_rule_and_without_a_terminal_is_a_usage_error() {
    let sandbox = Sandbox::new();
    sandbox.settings(RULES);
    sandbox
        .agent()
        .args(["rules", "remove"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`agent rules remove` needs a RULE here",
        ));
    let text = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(text.contains("git status"), "{text}");
}

/// Backspace over `typed`.
fn erase(tmux: &Tmux, typed: &str) {
    for _ in typed.chars() {
        tmux.keys(&["BSpace"]);
    }
}

#[test]
fn config_init_at_a_terminal_asks_for_the_model_and_checks_the_key_variable() {
    let sandbox = Sandbox::new();
    let script = format!("{} config init", shell_quote(&agent_bin()));
    let tmux = Tmux::start(&sandbox, &[("MY_SET_KEY", "sk-x")], &script);
    tmux.wait_for("Provider:");
    tmux.keys(&["Enter"]); // openai, the first
    tmux.wait_for("Model:");
    tmux.keys(&["-l", "gpt-5-mini"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Base URL:");
    tmux.keys(&["-l", "not a url"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("starting with http://");
    erase(&tmux, "not a url");
    tmux.keys(&["-l", "http://127.0.0.1:8000/v1"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Environment variable holding the API key:");
    tmux.keys(&["-l", "MY_SET_KEY"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(screen.contains("agent: MY_SET_KEY is set"), "{screen}");
    let path = sandbox.config_dir().join("settings.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    for line in [
        "provider = \"openai\"\n",
        "model = \"gpt-5-mini\"\n",
        "base_url = \"http://127.0.0.1:8000/v1\"\n",
        "api_key_env = \"MY_SET_KEY\"\n",
        "# The environment variable holding the API key",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // The file it wrote is one the agent reads.
    sandbox
        .agent()
        .args(["config", "show"])
        .assert()
        .success()
        .stdout(predicate::str::contains("gpt-5-mini"));
}

#[test]
fn config_init_says_when_the_key_variable_is_not_set() {
    let sandbox = Sandbox::new();
    let script = format!("{} config init", shell_quote(&agent_bin()));
    let tmux = Tmux::start(&sandbox, &[], &script);
    tmux.wait_for("Provider:");
    tmux.keys(&["Down"]); // anthropic
    tmux.keys(&["Enter"]);
    tmux.wait_for("Model:");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Base URL:");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Environment variable");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(
        screen.contains("agent: note: ANTHROPIC_API_KEY is not set here"),
        "{screen}"
    );
    let text = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(text.contains("provider = \"anthropic\"\n"), "{text}");
    assert!(text.contains("model = \"claude-sonnet-4-5\""), "{text}");
    assert!(text.contains("# base_url = "), "{text}");
    assert!(
        text.contains("api_key_env = \"ANTHROPIC_API_KEY\""),
        "{text}"
    );
}
