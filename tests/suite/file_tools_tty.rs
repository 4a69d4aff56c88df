//! The file prompt in a real terminal (tmux): a change shown as a coloured diff with its path
//! and counts, and each key — `1`/Enter this change, `2` every edit for the rest of the run,
//! `0`/`n` deny, `t` deny with a note, Esc stop — and a read outside the workspace.

use serde_json::json;

use super::fake_model::{FakeModel, Turn, turn_text};
use super::harness::Sandbox;
use super::tty::run_in_tmux;

fn edit(id: &str, old: &str, new: &str) -> Turn {
    let arguments = json!({"path": "src/lib.rs", "old_string": old, "new_string": new});
    Turn::default().with_call(id, "edit_file", &arguments.to_string())
}

fn project() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.work().join("src")).unwrap();
    std::fs::write(
        sandbox.work().join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )
    .unwrap();
    sandbox
}

fn lib(sandbox: &Sandbox) -> String {
    std::fs::read_to_string(sandbox.work().join("src/lib.rs")).unwrap()
}

/// Runs one edit at the prompt, presses `key`, and returns the screen at the end.
fn edit_with_key(key: &[&str]) -> (Sandbox, FakeModel, String) {
    let sandbox = project();
    let server = FakeModel::openai_turns([edit("e1", "a - b", "a + b"), turn_text("done")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'fix add'");
    let screen = tmux.wait_for("Apply this change");
    assert!(
        screen.contains("? agent wants to change a file"),
        "{screen}"
    );
    assert!(
        screen.contains("edit src/lib.rs · +1 \u{2212}1"),
        "{screen}"
    );
    assert!(screen.contains("--- a/src/lib.rs"), "{screen}");
    assert!(screen.contains("-    a - b"), "{screen}");
    assert!(screen.contains("+    a + b"), "{screen}");
    assert!(lib(&sandbox).contains("a - b"), "applied before the answer");
    tmux.keys(key);
    let screen = tmux.wait_for("EXIT=");
    assert!(
        screen.contains("TTY=icanon"),
        "terminal not restored:\n{screen}"
    );
    (sandbox, server, screen)
}

#[test]
fn one_applies_the_change() {
    let (sandbox, server, screen) = edit_with_key(&["1"]);
    assert!(lib(&sandbox).contains("a + b"));
    assert!(
        screen.contains("✓ edit src/lib.rs · +1 \u{2212}1"),
        "{screen}"
    );
    assert!(screen.contains("EXIT=0"), "{screen}");
    let results = server.request(1).tool_results();
    assert!(
        results[0].1.starts_with("edited `src/lib.rs`"),
        "{results:?}"
    );
}

#[test]
fn enter_applies_the_change() {
    let (sandbox, _, _) = edit_with_key(&["Enter"]);
    assert!(lib(&sandbox).contains("a + b"));
}

#[test]
fn zero_and_n_deny_and_the_model_is_told() {
    for key in ["0", "n"] {
        let (sandbox, server, screen) = edit_with_key(&[key]);
        assert!(lib(&sandbox).contains("a - b"), "{key}");
        assert!(screen.contains("⊘ edit src/lib.rs"), "{screen}");
        let results = server.request(1).tool_results();
        assert!(
            results[0].1.contains("EDENIED") && results[0].1.contains("user denied"),
            "{results:?}"
        );
    }
}

#[test]
fn t_denies_with_a_note_for_the_model() {
    let sandbox = project();
    let server = FakeModel::openai_turns([edit("e1", "a - b", "a + b"), turn_text("ok")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'fix add'");
    tmux.wait_for("Apply this change");
    tmux.keys(&["t"]);
    tmux.wait_for("note>");
    tmux.keys(&["use wrapping_add", "Enter"]);
    tmux.wait_for("EXIT=0");
    assert!(lib(&sandbox).contains("a - b"));
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("use wrapping_add"), "{results:?}");
}

#[test]
fn escape_stops_the_run_and_changes_nothing() {
    let (sandbox, server, screen) = edit_with_key(&["Escape"]);
    assert!(lib(&sandbox).contains("a - b"));
    assert!(screen.contains("EXIT=130"), "{screen}");
    assert_eq!(server.requests().len(), 1, "the run went on after Esc");
}

#[test]
fn two_applies_every_later_edit_of_the_run_without_asking() {
    let sandbox = project();
    let server = FakeModel::openai_turns([
        edit("e1", "a - b", "a + b"),
        edit("e2", "a + b", "a.wrapping_add(b)"),
        turn_text("done"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'fix add'");
    tmux.wait_for("Apply this change");
    tmux.keys(&["2"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(
        lib(&sandbox).contains("a.wrapping_add(b)"),
        "{}",
        lib(&sandbox)
    );
    assert_eq!(
        screen.matches("Apply this change").count(),
        1,
        "asked twice:\n{screen}"
    );
}

#[test]
fn a_read_outside_the_workspace_asks_and_1_allows_it() {
    let sandbox = project();
    let outside = sandbox.root.path().join("notes.txt");
    std::fs::write(&outside, "outside notes\n").unwrap();
    let arguments = json!({"path": outside.display().to_string()});
    let server = FakeModel::openai_turns([
        Turn::default().with_call("r1", "read_file", &arguments.to_string()),
        turn_text("read it"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'read the notes'");
    let screen = tmux.wait_for("Allow reading it for the rest of this run");
    assert!(screen.contains("? agent wants to read"), "{screen}");
    assert!(screen.contains("is outside the workspace"), "{screen}");
    tmux.keys(&["1"]);
    tmux.wait_for("EXIT=0");
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("outside notes"), "{results:?}");
}
