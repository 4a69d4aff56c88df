//! Resuming a session (`-c`) redraws the last exchanges before the composer (issue 36).

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::session::{READY, end_session, session};

#[test]
fn resuming_redraws_the_last_exchanges_then_the_composer() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("echo said-hi", "say hi"),
        turn_text("done: said hi"),
        turn_text("second answer"),
    ]);
    let tmux = session(&sandbox, &server, "", "run -i --mode allow-all");
    tmux.wait_for(READY);
    tmux.keys(&["first question", "Enter"]);
    tmux.wait_for("done: said hi");
    tmux.wait_on_screen(READY);
    end_session(tmux);
    let tmux = session(&sandbox, &server, "", "-c");
    let screen = tmux.wait_for("going on with the earlier conversation");
    tmux.wait_on_screen(READY);
    let recap = screen
        .find("› first question")
        .unwrap_or_else(|| panic!("no recap:\n{screen}"));
    let rest = &screen[recap..];
    let call = rest
        .find("  $ echo said-hi")
        .unwrap_or_else(|| panic!("{screen}"));
    let answer = rest
        .find("  done: said hi")
        .unwrap_or_else(|| panic!("{screen}"));
    let going = rest.find("going on with").unwrap_or_default();
    assert!(call < answer && answer < going, "{screen}");
    // The command's output is not redrawn: only its one-line summary.
    assert!(!rest[..going].contains("exit 0"), "{screen}");
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}
