//! Slips seen at a real terminal (issue 36), through the real binary: the session's prompt
//! echoes the answer, an ended session says how to continue it.

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::session::{READY, session};

/// The whole scrollback of `tmux`, soft-wrapped lines joined.
fn scrollback(tmux: &super::tty::Tmux) -> String {
    tmux.tmux_output(&["capture-pane", "-p", "-J", "-S", "-"])
}

#[test]
fn the_session_prompt_echoes_each_answer() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("touch G", "create G"),
        turn_text("made F only"),
    ]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["make F and G", "Enter"]);
    tmux.wait_for("$ touch F");
    tmux.keys(&["y"]);
    tmux.wait_for("$ touch G");
    tmux.keys(&["n"]);
    tmux.wait_for("made F only");
    tmux.wait_for(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=");
    let all = scrollback(&tmux);
    let allowed = all.find("  > allowed").unwrap_or_else(|| panic!("no `> allowed`:\n{all}"));
    let denied = all.find("  > denied").unwrap_or_else(|| panic!("no `> denied`:\n{all}"));
    // Each answer right under its own question.
    let g = all.find("$ touch G").unwrap_or_default();
    assert!(allowed < g && g < denied, "{all}");
}

#[test]
fn an_ended_session_says_how_to_continue_it() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("hello there")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["hi", "Enter"]);
    tmux.wait_for("hello there");
    tmux.wait_for(READY);
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("EXIT=");
    let transcript = sandbox.transcript_paths().into_iter().next().unwrap();
    let id = transcript.file_stem().unwrap().to_string_lossy().into_owned();
    let short = id.rsplit_once('-').unwrap().1;
    assert!(
        screen.contains(&format!("agent -c") ) && screen.contains(&format!("agent --resume {short}")),
        "{screen}"
    );
    // The id it names is taken back.
    sandbox
        .agent()
        .args(["history", "show", short])
        .assert()
        .success()
        .stdout(predicates::str::contains("hello there"));
}

#[test]
fn a_session_with_no_message_names_nothing_to_continue() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(!screen.contains("to continue"), "{screen}");
}
