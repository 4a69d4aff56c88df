//! `!command` in a session (issue 36): the person's command runs with no prompt, shows as a
//! command does, goes to the model with the next message, and `/undo` takes back what it
//! changed.

use super::fake_model::{FakeModel, turn_text};
use super::harness::Sandbox;
use super::session::{READY, session};

#[test]
fn a_bang_line_runs_at_once_and_its_output_goes_with_the_next_message() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("seen it"), turn_text("again")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    // Not a read-only command: the model's would be asked about; the person's runs.
    tmux.keys(&["!echo made > bang.txt; echo printed-77", "Enter"]);
    let screen = tmux.wait_for("goes to the model with your next message");
    assert!(screen.contains("printed-77"), "{screen}");
    assert!(
        !screen.contains("1 allow"),
        "no prompt for a typed command:\n{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("bang.txt")).unwrap_or_default(),
        "made\n"
    );
    assert_eq!(
        server.requests().len(),
        0,
        "nothing is sent until the next message"
    );
    tmux.wait_on_screen(READY);
    tmux.keys(&["what did it print", "Enter"]);
    tmux.wait_for("seen it");
    let sent = server.request(0).last_user_text().unwrap_or_default();
    assert!(
        sent.contains("the user ran `echo made > bang.txt; echo printed-77`")
            && sent.contains("printed-77")
            && sent.ends_with("what did it print"),
        "{sent}"
    );
    // Told once.
    tmux.wait_on_screen(READY);
    tmux.keys(&["and now", "Enter"]);
    tmux.wait_for("again");
    let sent = server.request(1).last_user_text().unwrap_or_default();
    assert_eq!(sent, "and now");
}

#[test]
fn undo_takes_back_what_a_bang_command_changed() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("unused")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["!echo made > undone.txt", "Enter"]);
    tmux.wait_for("goes to the model with your next message");
    assert!(sandbox.work().join("undone.txt").exists());
    tmux.wait_on_screen(READY);
    tmux.keys(&["/undo", "Enter"]);
    tmux.wait_for("1 file put back");
    assert!(!sandbox.work().join("undone.txt").exists());
}
