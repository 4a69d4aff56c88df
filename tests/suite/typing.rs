//! Typing while a command runs in a session (issue 36): the composer is drawn under the
//! live pane, what is typed shows at once, Enter queues (`⏳ queued: …`) and the queue is
//! sent in order when the turn ends; Esc gives the queue back into the composer instead;
//! nothing typed reaches the command or answers a question.
//!
//! The model's command is `cat gate` (read-only, so it runs unasked): it waits on a FIFO the
//! test holds, so the command runs exactly as long as the test needs, with no sleep.

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::session::{READY, session};
use super::support::gate::Gate;
use super::tty::Tmux;

/// Reads the gate, then its own stdin (which must be empty), then says so.
const WAITING: &str = "cat gate; cat; echo stdin-ended";

/// The row of the visible screen that holds `needle`.
fn row_of(screen: &str, needle: &str) -> usize {
    screen
        .lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` on the screen:\n{screen}"))
}

/// Starts the session, sends `message` and waits until the command's live pane is up.
fn command_running(sandbox: &Sandbox, server: &FakeModel, message: &str) -> Tmux {
    let tmux = session(sandbox, server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&[message, "Enter"]);
    tmux.wait_on_screen("┌ $ cat gate");
    tmux
}

#[test]
fn what_is_typed_during_a_command_shows_under_its_pane_and_is_queued() {
    let sandbox = Sandbox::new();
    let mut gate = Gate::new(&sandbox.work());
    let server = FakeModel::openai_turns([
        turn_tool_call(WAITING, "wait for the gate"),
        turn_text("the command is done"),
        turn_text("answer to the queued ones"),
        turn_text("answer to the queued ones"),
    ]);
    let tmux = command_running(&sandbox, &server, "go");
    tmux.keys(&["typed while it runs"]);
    let screen = tmux.wait_on_screen("› typed while it runs");
    assert!(
        row_of(&screen, "┌ $ cat gate") < row_of(&screen, "› typed while it runs"),
        "the composer is under the pane:\n{screen}"
    );
    assert!(screen.contains("Enter queues a message"), "{screen}");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_on_screen("⏳ queued: typed while it runs");
    assert!(
        screen.contains("┌ $ cat gate"),
        "the pane is still up:\n{screen}"
    );
    // A second one, with a character a terminal would act on.
    tmux.keys(&["-l", "and \u{9b}31m this"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_on_screen("⏳ queued: and \\u{9b}31m this");
    assert!(
        row_of(&screen, "queued: typed while it runs")
            < row_of(&screen, "queued: and \\u{9b}31m this"),
        "in order:\n{screen}"
    );
    gate.write("released-77\n");
    tmux.wait_on_screen("│ released-77");
    drop(gate);
    tmux.wait_for("the command is done");
    // Ready again only once every queued message was answered.
    let screen = tmux.wait_on_screen(READY);
    assert_eq!(
        screen.matches("answer to the queued ones").count(),
        2,
        "{screen}"
    );

    let results = server.request(1).tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].1.contains("released-77") && results[0].1.contains("stdin-ended"),
        "{results:?}"
    );
    assert!(
        !results[0].1.contains("typed"),
        "the keys reached the command: {results:?}"
    );
    assert_eq!(
        server.request(2).last_user_text().as_deref(),
        Some("typed while it runs"),
        "the first queued message goes first"
    );
    assert_eq!(
        server.requests().len(),
        4,
        "each queued message is sent, in turn"
    );
    assert_eq!(
        server.request(3).last_user_text().as_deref(),
        Some("and \\u{9b}31m this")
    );
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn esc_gives_the_queued_messages_back_for_editing() {
    let sandbox = Sandbox::new();
    let gate = Gate::new(&sandbox.work());
    let server = FakeModel::openai_turns([
        turn_tool_call(WAITING, "wait for the gate"),
        turn_text("answer to the edited one"),
    ]);
    let tmux = command_running(&sandbox, &server, "go");
    tmux.keys(&["first queued", "Enter"]);
    tmux.wait_on_screen("⏳ queued: first queued");
    tmux.keys(&["second queued", "Enter"]);
    tmux.wait_on_screen("⏳ queued: second queued");
    tmux.keys(&["a draft"]);
    tmux.wait_on_screen("› a draft");
    tmux.keys(&["Escape"]);
    tmux.wait_for("interrupted: the conversation keeps what happened");
    let screen = tmux.wait_on_screen(READY);
    drop(gate);
    assert!(
        screen.contains("2 queued messages were not sent: they are back here to edit"),
        "{screen}"
    );
    let first = row_of(&screen, "› first queued");
    assert!(
        screen.lines().nth(first + 1) == Some("  second queued")
            && screen.lines().nth(first + 2) == Some("  a draft"),
        "back in the composer, in order, the draft last:\n{screen}"
    );
    assert!(!screen.contains("⏳ queued"), "{screen}");
    assert_eq!(server.requests().len(), 1, "nothing queued was sent");
    tmux.keys(&["End", " edited", "Enter"]);
    tmux.wait_for("answer to the edited one");
    assert_eq!(
        server.request(1).last_user_text().as_deref(),
        Some("first queued\nsecond queued\na draft edited")
    );
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn keys_typed_during_a_command_never_answer_the_next_question() {
    let sandbox = Sandbox::new();
    let mut gate = Gate::new(&sandbox.work());
    let server = FakeModel::openai_turns([
        turn_tool_call(WAITING, "wait for the gate"),
        turn_tool_call("touch asked.txt", "make a file"),
        turn_text("denied, fine"),
    ]);
    let tmux = command_running(&sandbox, &server, "go");
    // Every key here would answer the question: y allows, 1 allows, 2 allows for the run.
    tmux.keys(&["yy12a"]);
    tmux.wait_on_screen("› yy12a");
    gate.write("released\n");
    tmux.wait_on_screen("│ released");
    drop(gate);
    let screen = tmux.wait_for("agent wants to run a command");
    assert!(!screen.contains("> allowed"), "{screen}");
    assert!(!sandbox.work().join("asked.txt").exists());
    tmux.keys(&["n"]);
    tmux.wait_for("> denied");
    tmux.wait_for("denied, fine");
    let screen = tmux.wait_on_screen(READY);
    assert!(
        screen.contains("› yy12a"),
        "what was typed is still in the composer:\n{screen}"
    );
    assert!(!sandbox.work().join("asked.txt").exists());
    tmux.keys(&["C-u", "C-d"]);
    tmux.wait_for("EXIT=0");
}
