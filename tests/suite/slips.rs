//! Slips a new user found (issue 20), in tmux through the real binary: the first line names
//! the provider and model and why; `3 y` / `a y` typed quickly saves the rule while a typed
//! word still saves nothing; the prompt's key lines and the rule's file wrap between words at
//! 120 columns, the file shortened with `~`.

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::{KEY, Sandbox};
use super::tty::{Tmux, agent_bin, exists, run_in_tmux, shell_quote};

/// The screen's rows as the terminal shows them (soft-wrapped lines not joined).
fn rows(tmux: &Tmux) -> Vec<String> {
    let output = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&tmux.socket)
        .args(["capture-pane", "-p", "-S", "-200"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The first line printed: the screen's first row that is not empty.
fn first_row(tmux: &Tmux) -> String {
    rows(tmux)
        .into_iter()
        .find(|row| !row.trim().is_empty())
        .unwrap_or_default()
}

#[test]
fn the_first_line_names_the_provider_the_model_and_why() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("hello")]);
    let script = format!(
        "{} run --base-url {} 'say hi'",
        shell_quote(&agent_bin()),
        shell_quote(&server.openai_url())
    );
    let tmux = Tmux::start(&sandbox, &[("OPENAI_API_KEY", KEY)], &script);
    tmux.wait_for("EXIT=0");
    // A server that is not OpenAI's own is named by its host (issue 36).
    let host = server
        .openai_url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_owned();
    assert_eq!(
        first_row(&tmux),
        format!("agent: openai-compatible · {host} · gpt-4.1-mini · OPENAI_API_KEY is set")
    );

    let sandbox = Sandbox::new();
    let script = format!("{} run 'list the files here'", shell_quote(&agent_bin()));
    let tmux = Tmux::start(&sandbox, &[], &script);
    tmux.wait_for("EXIT=0");
    let first = first_row(&tmux);
    assert!(
        first.starts_with("agent: demo · no provider configured"),
        "{first}"
    );

    let sandbox = Sandbox::new();
    sandbox.settings("[model]\nprovider = \"demo\"\n");
    let script = format!("{} run 'list the files here'", shell_quote(&agent_bin()));
    let tmux = Tmux::start(&sandbox, &[("OPENAI_API_KEY", KEY)], &script);
    tmux.wait_for("EXIT=0");
    let first = first_row(&tmux);
    assert!(
        first.starts_with("agent: demo · ") && first.contains("settings.toml:2"),
        "{first}"
    );
}

#[test]
fn the_provider_line_is_only_for_a_terminal() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("hello")]);
    let output = sandbox.openai_run(&server).arg("say hi").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.contains("gpt-4.1-mini"), "{stderr}");
}

/// `touch F` then `touch G` (the second runs without a prompt once the rule is saved).
fn two_touches() -> FakeModel {
    FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("touch G", "create G"),
        turn_text("made both"),
    ])
}

#[test]
fn three_then_y_typed_at_once_saves_the_rule() {
    let sandbox = Sandbox::new();
    let server = two_touches();
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F and G'");
    tmux.wait_for("3. Allow \"touch\" in this project");
    tmux.keys(&["3", "y"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(exists(&sandbox.work().join("F")) && exists(&sandbox.work().join("G")));
    let saved = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(
        saved.contains("[projects.") && saved.contains("\"touch\""),
        "{saved}"
    );
}

#[test]
fn a_then_y_typed_at_once_saves_the_rule_everywhere() {
    let sandbox = Sandbox::new();
    let server = two_touches();
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F and G'");
    tmux.wait_for("a. Always allow \"touch\"");
    tmux.keys(&["a"]);
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(exists(&sandbox.work().join("G")));
    let saved = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(
        saved.contains("[permissions.commands]") && saved.contains("\"touch\""),
        "{saved}"
    );
}

#[test]
fn a_typed_word_with_a_and_y_in_it_saves_nothing() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("not made")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("a. Always allow \"touch\"");
    // `s` gets the hint, `a` comes too soon after it to be deliberate, so `y` is dropped.
    tmux.keys(&["say"]);
    tmux.wait_for("press y to save the rule");
    std::thread::sleep(std::time::Duration::from_millis(800));
    tmux.keys(&["n"]);
    tmux.wait_for("rule not saved");
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(!exists(&sandbox.work().join("F")), "{screen}");
    let saved =
        std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap_or_default();
    assert!(!saved.contains("touch"), "a rule was written:\n{saved}");
}

#[test]
fn at_120_columns_key_lines_and_the_rule_file_wrap_between_words() {
    let sandbox = Sandbox::new();
    let command = "npm run build:production-bundle-with-sourcemaps";
    let server = FakeModel::openai_turns([turn_tool_call(command, "build"), turn_text("no")]);
    let home = sandbox.root.path().join("home");
    let config = home.join(".config/agent");
    let tmux = run_in_tmux(
        &sandbox,
        &server,
        &[("AGENT_CONFIG_DIR", config.to_str().unwrap())],
        "'build it'",
    );
    tmux.wait_for("Esc: deny and stop");
    let shown = rows(&tmux);
    let allow_here = format!("3. Allow \"{command}\" in this project");
    let allow_always = format!("a. Always allow \"{command}\"");
    for entry in [
        "1. Allow (Enter)",
        "2. Allow for this run",
        &allow_here,
        &allow_always,
    ] {
        assert!(
            shown.iter().any(|row| row.contains(entry)),
            "`{entry}` is split:\n{}",
            shown.join("\n")
        );
    }
    assert!(shown.iter().all(|row| row.chars().count() <= 120));
    tmux.keys(&["a"]);
    tmux.wait_for("press y to save the rule");
    let shown = rows(&tmux);
    assert!(
        shown.iter().any(|row| row
            .trim_end()
            .ends_with("allow in ~/.config/agent/settings.toml")
            || row.trim() == "~/.config/agent/settings.toml"),
        "the file is split or not shortened:\n{}",
        shown.join("\n")
    );
    tmux.keys(&["n"]);
    tmux.wait_for("rule not saved");
    tmux.keys(&["0"]);
    tmux.wait_for("EXIT=0");
    assert!(!config.join("settings.toml").exists());
}
