//! Slips seen at a real terminal (issue 36), through the real binary: the session's prompt
//! echoes the answer, an ended session says how to continue it.

use predicates::prelude::*;

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::session::{READY, session};
use super::tty::{Tmux, agent_bin, shell_quote};

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
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=");
    let all = scrollback(&tmux);
    let allowed = all
        .find("  > allowed")
        .unwrap_or_else(|| panic!("no `> allowed`:\n{all}"));
    let denied = all
        .find("  > denied")
        .unwrap_or_else(|| panic!("no `> denied`:\n{all}"));
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
    tmux.wait_on_screen(READY);
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("EXIT=");
    let transcript = sandbox.transcript_paths().into_iter().next().unwrap();
    let id = transcript
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let short = id.rsplit_once('-').unwrap().1;
    assert!(
        screen.contains("agent -c") && screen.contains(&format!("agent --resume {short}")),
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

/// A run of `--mode allow-all` that creates `made.txt`, for `agent undo` to take back.
fn a_run_that_made_a_file(sandbox: &Sandbox) {
    let server = FakeModel::openai_turns([
        turn_tool_call("printf 'made\\n' > made.txt", "create"),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "make it"])
        .assert()
        .success();
    assert!(sandbox.work().join("made.txt").exists());
}

/// `agent undo` in tmux, answered with `key` alone (no Enter): whether the file went.
fn undo_answered_with(key: &str) -> (bool, String) {
    let sandbox = Sandbox::new();
    a_run_that_made_a_file(&sandbox);
    let script = format!("{} undo", shell_quote(&agent_bin()));
    let tmux = Tmux::start(&sandbox, &[], &script);
    tmux.wait_for("[y/N]");
    tmux.keys(&[key]);
    let screen = tmux.wait_for("EXIT=");
    (!sandbox.work().join("made.txt").exists(), screen)
}

#[test]
fn undo_s_question_takes_one_key() {
    let (undone, screen) = undo_answered_with("y");
    assert!(undone, "{screen}");
    assert!(screen.contains("[y/N] yes"), "{screen}");
    assert!(screen.contains("EXIT=0 TTY=icanon"), "{screen}");
    for key in ["n", "Enter", "x"] {
        let (undone, screen) = undo_answered_with(key);
        assert!(!undone, "{key}: {screen}");
        assert!(screen.contains("[y/N] no"), "{key}: {screen}");
        assert!(screen.contains("nothing was undone"), "{key}: {screen}");
    }
}

/// Runs `prompt` in `sandbox` against a fake server (one answer), not at a terminal.
fn a_run(sandbox: &Sandbox, prompt: &str) {
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox.openai_run(&server).arg(prompt).assert().success();
}

/// `agent history` at a 120-column terminal: no row wider than the terminal (the prompt is
/// cut with `…`), short ids, only this workspace's runs; `--all` lists every workspace's
/// with a workspace column; the short id is taken back by `history show`.
#[test]
fn history_fits_the_terminal_and_lists_this_workspace() {
    let sandbox = Sandbox::new();
    let long = "please look at every failing test in the whole workspace and fix each of them one at a time, then run the suite";
    a_run(&sandbox, long);
    let other = sandbox.work().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox
        .openai_run(&server)
        .args(["-C", "other", "a task in the other project"])
        .assert()
        .success();

    let script = format!(
        "{bin} history; {bin} history --all",
        bin = shell_quote(&agent_bin())
    );
    let tmux = Tmux::start(&sandbox, &[], &script);
    tmux.wait_for("EXIT=");
    let all = scrollback(&tmux);
    for line in all.lines() {
        assert!(line.chars().count() <= 120, "wider than 120: {line}\n{all}");
    }
    let (here, everywhere) = all.split_at(all.rfind("ID ").unwrap());
    assert!(here.contains("please look at every failing test"), "{all}");
    assert!(here.contains('…'), "{all}");
    assert!(!here.contains("a task in the other project"), "{all}");
    assert!(everywhere.contains("WORKSPACE"), "{all}");
    assert!(everywhere.contains("a task in the other"), "{all}");
    assert!(everywhere.contains("/work/other"), "{all}");

    let transcript = sandbox
        .transcript_paths()
        .into_iter()
        .find(|path| {
            std::fs::read_to_string(path)
                .unwrap()
                .contains("please look")
        })
        .unwrap();
    let id = transcript
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let short = id.rsplit_once('-').unwrap().1.to_owned();
    assert!(here.contains(&format!("\n{short} ")), "{all}");
    assert!(!all.contains(&id), "the long id is shown: {all}");
    sandbox
        .agent()
        .args(["history", "show", &short])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "please look at every failing test",
        ));
}

/// `echo DATA | agent run 'review this'` sends the piped text with the words; past the cap
/// only its start, and the cut is said on stderr and to the model.
#[test]
fn piped_text_goes_with_the_prompt_capped() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox
        .openai_run(&server)
        .arg("review this")
        .write_stdin("fn main() {}\n")
        .assert()
        .success()
        .stderr(predicates::str::contains("cut").not());
    let sent = server.request(0).last_user_text().unwrap_or_default();
    assert!(sent.starts_with("review this\n"), "{sent}");
    assert!(sent.contains("<stdin>\nfn main() {}\n</stdin>"), "{sent}");

    let server = FakeModel::openai_turns([turn_text("ok")]);
    let big = "0123456789abcdef\n".repeat(40_000);
    sandbox
        .openai_run(&server)
        .arg("review this")
        .write_stdin(big.clone())
        .assert()
        .success()
        .stderr(predicates::str::contains("stdin is cut at 256 KiB"));
    let sent = server.request(0).last_user_text().unwrap_or_default();
    assert!(sent.contains("(cut at 256 KiB"), "{}", &sent[..200]);
    assert!(sent.len() < 256 * 1024 + 300 && sent.len() > 256 * 1024 - 100);

    // Nothing piped (stdin is /dev/null): the words alone, as before.
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox
        .openai_run(&server)
        .arg("just this")
        .assert()
        .success();
    assert_eq!(
        server.request(0).last_user_text().as_deref(),
        Some("just this")
    );
}

/// What `run --help` and the system prompt say matches what the model is offered and what
/// the policy does: every tool is named, and a pipeline of read-only parts runs at once.
#[test]
fn the_help_and_the_system_prompt_say_what_is_real() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox.openai_run(&server).arg("hi").assert().success();
    let tools = server.request(0).tool_names();
    assert!(tools.len() > 1, "{tools:?}");
    let help = sandbox.agent().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(!help.contains("one tool"), "{help}");
    for tool in &tools {
        assert!(
            help.contains(&format!("`{tool}`")),
            "`{tool}` is not in run --help:\n{help}"
        );
    }
    let system = server.request(0).system().unwrap_or_default();
    assert!(!system.contains("Pipes, redirections"), "{system}");
    assert!(system.contains("whose every part"), "{system}");
    for pipeline in ["ls | head -n 5", "pwd && ls", "ls; pwd", "git status || ls"] {
        sandbox.agent().args(["check", pipeline]).assert().code(0);
    }
}

/// The model's turns that make `made.txt` (`write_file`) and say "made it", then `replies`.
fn made_then(replies: &[&str]) -> FakeModel {
    let write = super::fake_model::Turn::default().with_call(
        "w1",
        "write_file",
        &serde_json::json!({"path": "made.txt", "content": "made\n"}).to_string(),
    );
    let turns = [write, turn_text("made it")]
        .into_iter()
        .chain(replies.iter().map(|reply| turn_text(reply)));
    FakeModel::openai_turns(turns)
}

/// A session (`--mode allow-all`) whose first message made `made.txt`, taken back by `/undo`.
fn made_and_undone(sandbox: &Sandbox, server: &FakeModel) -> Tmux {
    let tmux = session(sandbox, server, "", "run -i --mode allow-all");
    tmux.wait_for(READY);
    tmux.keys(&["make a file", "Enter"]);
    tmux.wait_for("made it");
    tmux.wait_on_screen(READY);
    tmux.keys(&["/undo", "Enter"]);
    tmux.wait_for("1 file put back");
    assert!(!sandbox.work().join("made.txt").exists());
    tmux
}

/// `/undo` tells the model: the next message carries a note naming the files taken back;
/// `/undo` of the undo says the changes are back. The note goes once.
#[test]
fn undo_tells_the_model_with_the_next_message() {
    let sandbox = Sandbox::new();
    let server = made_then(&["first reply", "second reply", "third reply"]);
    let tmux = made_and_undone(&sandbox, &server);
    tmux.keys(&["what now", "Enter"]);
    tmux.wait_for("first reply");
    let sent = server.request(2).last_user_text().unwrap_or_default();
    assert!(
        sent.contains("took back the changes of your last message")
            && sent.contains("`made.txt`")
            && sent.ends_with("what now"),
        "{sent}"
    );
    tmux.wait_on_screen(READY);
    tmux.keys(&["/undo", "Enter"]);
    tmux.wait_for("undid the /undo");
    tmux.keys(&["and now", "Enter"]);
    tmux.wait_for("second reply");
    let sent = server.request(3).last_user_text().unwrap_or_default();
    assert!(
        sent.contains("took back their /undo") && sent.contains("`made.txt`"),
        "{sent}"
    );
    tmux.wait_on_screen(READY);
    tmux.keys(&["once more", "Enter"]);
    tmux.wait_for("third reply");
    assert_eq!(
        server.request(4).last_user_text().as_deref(),
        Some("once more")
    );
}

/// A `/undo` made after the last message is recorded: a resumed session (`-c`) tells the model
/// with its next message, once.
#[test]
fn a_resumed_session_tells_the_model_of_an_undo_made_after_the_last_message() {
    let sandbox = Sandbox::new();
    let server = made_then(&["resumed"]);
    let tmux = made_and_undone(&sandbox, &server);
    tmux.wait_on_screen(READY);
    super::session::end_session(tmux);

    let tmux = session(&sandbox, &server, "", "-c");
    tmux.wait_for("going on with the earlier conversation");
    tmux.wait_on_screen(READY);
    tmux.keys(&["go on", "Enter"]);
    tmux.wait_for("resumed");
    let sent = server.request(2).last_user_text().unwrap_or_default();
    assert!(
        sent.starts_with("[agent: the user took back the changes of your last message")
            && sent.contains("`made.txt`")
            && sent.ends_with("\n\ngo on"),
        "{sent}"
    );
    let transcripts = sandbox.transcripts();
    assert_eq!(transcripts[0].matches("\"type\":\"model_note\"").count(), 1);
    tmux.wait_on_screen(READY);
    super::session::end_session(tmux);
}

/// SIGINT from outside while the session's prompt asks: the turn ends, and the session takes
/// the next message (keys read, the composer drawn, raw mode back).
#[test]
fn sigint_during_the_session_prompt_gives_the_composer_back() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_text("after the signal"),
    ]);
    sandbox.settings(&format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}\"\n",
        server.openai_url()
    ));
    let pid_file = sandbox.root.path().join("agent.pid");
    let script = format!(
        "sh -c 'echo $$ > {}; exec \"$0\" \"$@\"' {}",
        shell_quote(&pid_file.display().to_string()),
        shell_quote(&agent_bin()),
    );
    let tmux = Tmux::start(
        &sandbox,
        &[("OPENAI_API_KEY", "sk-session-test-0000")],
        &script,
    );
    tmux.wait_for(READY);
    tmux.keys(&["make F", "Enter"]);
    tmux.wait_for("$ touch F");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-s", "INT", pid.trim()])
        .status()
        .unwrap();
    assert!(status.success());
    tmux.wait_for("interrupted");
    tmux.wait_on_screen(READY);
    tmux.keys(&["go on", "Enter"]);
    tmux.wait_for("after the signal");
    assert!(!sandbox.work().join("F").exists());
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0 TTY=icanon"), "{screen}");
}
