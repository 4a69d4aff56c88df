//! A question that waits calls the person back (issue 36): the bell by default, a desktop
//! notification with `[ui] notify = "desktop"`, read from the bytes the terminal received.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::session::{READY, session};
use super::tty::{PATIENCE, Tmux};

/// Copies everything the program in the pane writes to a file, escape sequences and all.
fn record(tmux: &Tmux, sandbox: &Sandbox) -> PathBuf {
    let path = sandbox.root.path().join("pane.bytes");
    let command = format!("cat >> {}", path.display());
    tmux.tmux_output(&["pipe-pane", "-o", &command]);
    path
}

fn bytes(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}

/// Waits until the recorded bytes hold `needle`.
fn wait_for_bytes(path: &Path, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let text = bytes(path);
        if text.contains(needle) {
            return text;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "{needle:?} never reached the terminal; it got:\n{text:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A session whose model asks for one command; returns the terminal, the recording and the
/// bytes written until the question was on screen.
fn question(sandbox: &Sandbox, server: &FakeModel, settings: &str) -> (Tmux, PathBuf, String) {
    let tmux = session(sandbox, server, settings, "");
    let path = record(&tmux, sandbox);
    tmux.wait_for(READY);
    tmux.keys(&["make F", "Enter"]);
    tmux.wait_for("$ touch F");
    let before = bytes(&path);
    (tmux, path, before)
}

fn server() -> FakeModel {
    FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("made F")])
}

#[test]
fn a_waiting_question_rings_the_bell_once() {
    let sandbox = Sandbox::new();
    let server = server();
    let (tmux, path, before) = question(&sandbox, &server, "");
    assert!(
        !before.contains('\u{7}'),
        "no bell before the wait: {before:?}"
    );
    // The question asks the terminal to report focus while it is up.
    assert!(before.contains("\u{1b}[?1004h"), "{before:?}");
    let after = wait_for_bytes(&path, "\u{7}");
    assert!(
        !after.contains("\u{1b}]9;"),
        "a bell, no desktop notification: {after:?}"
    );
    tmux.keys(&["y"]);
    tmux.wait_for("made F");
    tmux.wait_on_screen(READY);
    let all = bytes(&path);
    assert_eq!(
        all.matches('\u{7}').count(),
        1,
        "one call per question: {all:?}"
    );
    assert!(
        all.contains("\u{1b}[?1004l"),
        "focus reports end with the question"
    );
    assert!(sandbox.work().join("F").exists());
}

#[test]
fn desktop_sends_a_fixed_notification_and_no_bell() {
    let sandbox = Sandbox::new();
    let server = server();
    let (tmux, path, _) = question(&sandbox, &server, "[ui]\nnotify = \"desktop\"\n");
    let after = wait_for_bytes(&path, "\u{1b}]777;notify;agent;");
    assert!(
        after.contains("\u{1b}]9;agent: a question is waiting for your answer\u{7}"),
        "{after:?}"
    );
    // Every BEL ends one of the two notifications: no bare bell.
    assert_eq!(after.matches('\u{7}').count(), 2, "{after:?}");
    tmux.keys(&["y"]);
    tmux.wait_for("made F");
}

#[test]
fn off_asks_no_focus_reports_and_the_setting_is_checked() {
    let sandbox = Sandbox::new();
    let server = server();
    let (tmux, path, before) = question(&sandbox, &server, "[ui]\nnotify = \"off\"\n");
    assert!(!before.contains("\u{1b}[?1004h"), "{before:?}");
    tmux.keys(&["y"]);
    tmux.wait_for("made F");
    tmux.wait_on_screen(READY);
    assert!(!bytes(&path).contains('\u{7}'));
    drop(tmux);

    // A wrong value is named with the values it takes.
    let sandbox = Sandbox::new();
    sandbox.settings("[ui]\nnotify = \"loud\"\n");
    sandbox
        .agent()
        .args(["config", "show"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("\"bell\", \"desktop\", \"off\""));
}
