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

#[test]
fn an_at_mention_completes_and_brings_the_file_a_secret_one_only_when_allowed() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("src/main.rs"), "fn main() { MARK_42(); }\n").unwrap();
    std::fs::write(work.join(".env"), "API_KEY=sekrit-value-9\n").unwrap();
    std::fs::write(sandbox.root.path().join("outside.txt"), "OUTSIDE_7\n").unwrap();
    let server = FakeModel::openai_turns([
        turn_text("seen main"),
        turn_text("no secret"),
        turn_text("seen outside"),
    ]);
    let tmux = session(&sandbox, &server, "", "");
    tmux.wait_for(READY);
    // A secret file is never offered; a directory completes to its `/`.
    tmux.keys(&["@.en", "Tab"]);
    tmux.wait_on_screen("nothing in the workspace starts with .en");
    tmux.keys(&["C-u", "@sr", "Tab"]);
    tmux.wait_on_screen("› @src/");
    tmux.keys(&["C-u", "what is @src/ma", "Tab"]);
    tmux.wait_on_screen("› what is @src/main.rs");
    tmux.keys(&["in @src", "Enter"]);
    let screen = tmux.wait_for("seen main");
    assert!(
        screen.contains("+ @src/main.rs: ") && screen.contains("+ @src: "),
        "{screen}"
    );
    let sent = server.request(0).last_user_text().unwrap_or_default();
    assert!(
        sent.starts_with("what is @src/main.rs in @src\n\n")
            && sent.contains("<file path=\"src/main.rs\">")
            && sent.contains("MARK_42")
            && sent.contains("<directory path=\"src\">"),
        "{sent}"
    );
    // Mentioned by hand, a secret file asks first; denied, it is not read.
    tmux.wait_on_screen(READY);
    tmux.keys(&["check @.env please", "Enter"]);
    let screen = tmux.wait_for("agent wants to read");
    assert!(screen.contains("your @.env"), "{screen}");
    assert_eq!(server.requests().len(), 1, "nothing sent while it asks");
    tmux.keys(&["n"]);
    tmux.wait_for("@.env not attached: denied at the prompt");
    tmux.wait_for("no secret");
    let sent = server.request(1).last_user_text().unwrap_or_default();
    assert_eq!(sent, "check @.env please");
    let transcripts = sandbox.transcripts();
    let recorded = events(transcripts[0].as_bytes());
    assert_eq!(
        recorded[0]["prompt"], "what is @src/main.rs in @src",
        "the words are recorded"
    );
    assert!(
        !transcripts[0].contains("sekrit-value-9"),
        "the secret is nowhere in the record"
    );
    // Outside the workspace: asked too, and read once allowed.
    tmux.wait_on_screen(READY);
    tmux.keys(&["and @../outside.txt", "Enter"]);
    tmux.wait_for("agent wants to read");
    assert_eq!(server.requests().len(), 2, "nothing sent while it asks");
    tmux.keys(&["y"]);
    tmux.wait_for("seen outside");
    let sent = server.request(2).last_user_text().unwrap_or_default();
    assert!(sent.contains("OUTSIDE_7"), "{sent}");
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=0");
}
