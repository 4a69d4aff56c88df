//! Writing a message in a session's composer (issue 36): a long paste collapses into one
//! placeholder and is sent whole; `@path` mentions complete and bring the file along.

use super::fake_model::{FakeModel, turn_text};
use super::harness::{Sandbox, events};
use super::session::{READY, session};

#[test]
fn a_long_paste_collapses_to_a_placeholder_and_is_sent_and_recorded_whole() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("read all of it")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["review "]);
    let text: String = (1..=300).map(|n| format!("pasted line {n}\n")).collect();
    tmux.paste(sandbox.root.path(), &text);
    let screen = tmux.wait_on_screen("› review [pasted 300 lines]");
    assert!(!screen.contains("pasted line 1"), "{screen}");
    // Editing around it: after it, and before it.
    tmux.keys(&[" please", "C-a", "now "]);
    tmux.wait_on_screen("› now review [pasted 300 lines] please");
    tmux.keys(&["Enter"]);
    tmux.wait_for("read all of it");
    let whole = format!("now review {text} please");
    assert_eq!(server.request(0).last_user_text(), Some(whole.clone()));
    let screen = tmux.wait_on_screen(READY);
    assert!(
        screen.contains("› now review pasted line 1")
            && screen.contains("  pasted line 9\n")
            && screen.contains("  … 291 more lines sent"),
        "the echo is cut:\n{screen}"
    );
    assert!(!screen.contains("pasted line 11\n"), "{screen}");
    let transcripts = sandbox.transcripts();
    let recorded = events(transcripts[0].as_bytes());
    assert_eq!(
        recorded[0]["prompt"],
        whole.as_str(),
        "the record keeps it whole"
    );
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}
