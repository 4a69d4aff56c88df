//! `!command` in a session (issue 36): the person's command runs with no prompt, shows as a
//! command does, goes to the model with the next message, and `/undo` takes back what it
//! changed.

use super::fake_model::{FakeModel, turn_text};
use super::harness::Sandbox;
use super::session::{READY, end_session, session};

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

#[test]
fn a_resumed_session_has_seen_bang_output_and_is_told_of_one_run_after_the_last_message() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("first seen"), turn_text("resumed answer")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    // Before the first message: no transcript yet.
    tmux.keys(&["!echo before-77", "Enter"]);
    tmux.wait_for("goes to the model with your next message");
    tmux.wait_on_screen(READY);
    tmux.keys(&["first message", "Enter"]);
    tmux.wait_for("first seen");
    tmux.wait_on_screen(READY);
    // After the last message: nothing carried it to the model yet.
    tmux.keys(&["!echo after-88", "Enter"]);
    tmux.wait_for("goes to the model with your next message");
    tmux.wait_on_screen(READY);
    end_session(tmux);

    let tmux = session(&sandbox, &server, "", "-c");
    let screen = tmux.wait_for("going on with the earlier conversation");
    let order: Vec<Option<usize>> = [
        "› !echo before-77",
        "› first message",
        "  first seen",
        "› !echo after-88",
        "going on with",
    ]
    .iter()
    .map(|line| screen.find(line))
    .collect();
    assert!(
        order.iter().all(Option::is_some) && order.is_sorted(),
        "{order:?}\n{screen}"
    );
    tmux.wait_on_screen(READY);
    tmux.keys(&["go on", "Enter"]);
    tmux.wait_for("resumed answer");
    let users: Vec<String> = server
        .request(1)
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(users.len(), 2, "{users:?}");
    assert!(
        users[0].starts_with("[agent: the user ran `echo before-77` themselves with !")
            && users[0].contains("before-77\\n")
            && users[0].ends_with("\n\nfirst message"),
        "{users:?}"
    );
    assert!(
        users[1].starts_with("[agent: the user ran `echo after-88` themselves with !")
            && users[1].ends_with("\n\ngo on"),
        "{users:?}"
    );
    // Told once: the resumed session's next message carries it, the transcript keeps one.
    let transcripts = sandbox.transcripts();
    assert_eq!(transcripts.len(), 1);
    let recorded = transcripts[0].matches("\"type\":\"user_command\"").count();
    assert_eq!(recorded, 2, "{}", transcripts[0]);
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");

    let shown = sandbox.history_show();
    assert!(
        shown.contains("! echo before-77  # run by you") && shown.contains("│ before-77"),
        "{shown}"
    );
    assert!(shown.contains("! echo after-88  # run by you"), "{shown}");
}

#[test]
fn run_continue_tells_the_model_of_a_bang_command_run_after_the_last_message() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("hello back"), turn_text("continued")]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    tmux.keys(&["hello", "Enter"]);
    tmux.wait_for("hello back");
    tmux.wait_on_screen(READY);
    tmux.keys(&["!echo tail-55", "Enter"]);
    tmux.wait_for("goes to the model with your next message");
    tmux.wait_on_screen(READY);
    end_session(tmux);
    sandbox
        .openai_run(&server)
        .args(["--continue", "go"])
        .assert()
        .success();
    let last = server.request(1).last_user_text().unwrap_or_default();
    assert!(
        last.starts_with("[agent: the user ran `echo tail-55` themselves with !")
            && last.contains("tail-55\\n")
            && last.ends_with("\n\ngo"),
        "{last}"
    );
    // The run's own record holds the words only, as a session's does.
    let continued = sandbox.transcripts()[0]
        .lines()
        .filter(|line| line.contains("\"type\":\"continue\""))
        .map(str::to_owned)
        .collect::<Vec<_>>();
    assert!(
        continued.len() == 1 && continued[0].contains("\"prompt\":\"go\""),
        "{continued:?}"
    );
}
