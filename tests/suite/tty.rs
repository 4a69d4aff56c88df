//! The terminal experience in a real pseudo-terminal (tmux on a private
//! socket): the confirmation prompt and its keys, the live pane, Ctrl+C, and
//! piped prompts at a keyboard.

use std::path::Path;
use std::time::{Duration, Instant};

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;

pub(super) use super::support::tmux::{PATIENCE, Tmux, agent_bin, shell_quote};

/// `agent run` against `server` inside tmux.
pub(super) fn run_in_tmux(
    sandbox: &Sandbox,
    server: &FakeModel,
    extra_env: &[(&str, &str)],
    tail: &str,
) -> Tmux {
    let script = format!(
        "{} run --provider openai --base-url {} {tail}",
        shell_quote(&agent_bin()),
        shell_quote(&server.openai_url())
    );
    let mut env = vec![("OPENAI_API_KEY", "sk-tty-test-000000")];
    env.extend_from_slice(extra_env);
    Tmux::start(sandbox, &env, &script)
}

pub(super) fn exists(path: &Path) -> bool {
    path.exists()
}

#[test]
fn the_prompt_shows_the_command_and_1_allows_it() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create the file F"),
        turn_text("made F"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    let screen = tmux.wait_for("1. Allow");
    assert!(screen.contains("create the file F"), "{screen}");
    assert!(screen.contains("$ touch F"), "{screen}");
    assert!(screen.contains("a. Always allow \"touch\""), "{screen}");
    assert!(!exists(&sandbox.work().join("F")), "ran before the answer");
    tmux.keys(&["1"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(exists(&sandbox.work().join("F")));
    assert!(screen.contains("✓ touch F · exit 0"), "{screen}");
    assert!(screen.contains("made F"), "{screen}");
    assert!(
        screen.contains("TTY=icanon"),
        "terminal not restored:\n{screen}"
    );
}

#[test]
fn zero_denies_and_the_model_is_told() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_text("ok, not made"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("1. Allow");
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(!exists(&sandbox.work().join("F")));
    assert!(screen.contains("⊘ touch F"), "{screen}");
    let results = server.request(1).tool_results();
    assert!(
        results[0].1.contains("EDENIED") && results[0].1.contains("user denied"),
        "{results:?}"
    );
}

#[test]
fn enter_allows() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("made")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("1. Allow");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXIT=0");
    assert!(exists(&sandbox.work().join("F")));
}

#[test]
fn a_saves_the_rule_keeping_comments_and_the_next_call_runs_without_asking() {
    let sandbox = Sandbox::new();
    sandbox.settings("# my settings\n[limits]\nmax_turns = 9 # keep\n");
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("touch G", "create G"),
        turn_text("made both"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F and G'");
    tmux.wait_for("a. Always allow \"touch\"");
    tmux.keys(&["a"]);
    let screen = tmux.wait_for("press y to save the rule");
    let rule_file = sandbox.config_dir().join("settings.toml");
    assert!(
        screen.contains(&format!(
            "always allow \"touch\": adds it to [permissions.commands] allow in {}",
            rule_file.display()
        )),
        "{screen}"
    );
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(
        exists(&sandbox.work().join("F")) && exists(&sandbox.work().join("G")),
        "{screen}"
    );
    assert_eq!(
        screen.matches("agent wants to run a command").count(),
        1,
        "asked twice:\n{screen}"
    );
    let settings = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(
        settings.starts_with("# my settings\n[limits]\nmax_turns = 9 # keep\n"),
        "{settings}"
    );
    assert!(settings.contains("allow = [\"touch\"]"), "{settings}");
    sandbox.agent().args(["check", "touch X"]).assert().code(0);
}

#[test]
fn ctrl_c_at_the_prompt_exits_130_and_restores_the_terminal() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("never")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("1. Allow");
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("EXIT=130");
    assert!(!exists(&sandbox.work().join("F")));
    assert!(screen.contains("TTY=icanon"), "raw mode left on:\n{screen}");
    assert_eq!(server.requests().len(), 1, "the run went on after Ctrl+C");
}

#[test]
fn a_long_command_shows_live_lines_then_a_summary() {
    let sandbox = Sandbox::new();
    let command = "for i in $(seq 1 2000); do echo line $i; sleep 0.001; done";
    let server = FakeModel::openai_turns([
        turn_tool_call(command, "print 2000 lines"),
        turn_text("printed"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'print lines'");
    tmux.wait_for("1. Allow");
    tmux.keys(&["1"]);
    let live = tmux.wait_for("line 1");
    assert!(live.contains("$ for i in"), "no pane title:\n{live}");
    assert!(
        !live.contains("✓ for i in"),
        "finished before it was seen live:\n{live}"
    );
    let screen = tmux.wait_for("EXIT=0");
    assert!(
        screen.contains("· exit 0 ·") && screen.contains("2000 lines"),
        "{screen}"
    );
    // The pane collapsed: only its last lines stay, under the summary.
    assert!(
        !screen.contains("line 1990\n"),
        "the pane was not collapsed:\n{screen}"
    );
    assert!(screen.contains("\n  line 2000\n"), "{screen}");
}

#[test]
fn ctrl_c_while_a_command_runs_kills_it_and_exits_130() {
    let sandbox = Sandbox::new();
    // The command writes a marker first; then nothing of it may be left running.
    let server = FakeModel::openai_turns([
        turn_tool_call("echo started > started; sleep 30", "wait"),
        turn_text("never"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "--mode allow-all 'wait'");
    let marker = sandbox.work().join("started");
    super::harness::wait_for(PATIENCE, "the command to start", || {
        std::fs::read_to_string(&marker).is_ok_and(|text| text == "started\n")
    });
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("EXIT=130");
    assert!(screen.contains("TTY=icanon"), "{screen}");
    let left = super::harness::left_running(&sandbox.work());
    super::harness::kill_left(&sandbox.work());
    assert!(left.is_empty(), "{left:?} of the command survived Ctrl+C");
}

#[test]
fn a_piped_prompt_at_a_keyboard_still_asks() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("made")]);
    let script = format!(
        "echo 'make F' | {} run --provider openai --base-url {}",
        shell_quote(&agent_bin()),
        shell_quote(&server.openai_url())
    );
    let tmux = Tmux::start(
        &sandbox,
        &[("OPENAI_API_KEY", "sk-tty-test-000000")],
        &script,
    );
    tmux.wait_for("1. Allow");
    tmux.keys(&["1"]);
    tmux.wait_for("EXIT=0");
    assert!(exists(&sandbox.work().join("F")));
    assert_eq!(
        server.request(0).last_user_text().as_deref(),
        Some("make F")
    );
}

#[test]
fn with_ci_set_it_denies_without_asking() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("denied")]);
    let tmux = run_in_tmux(&sandbox, &server, &[("CI", "1")], "'make F'");
    let screen = tmux.wait_for("EXIT=0");
    assert!(!screen.contains("1. Allow"), "asked in CI:\n{screen}");
    assert!(screen.contains("⊘ touch F"), "{screen}");
    assert!(!exists(&sandbox.work().join("F")));
}

/// Where nobody can answer, nobody is asked, whatever the policy says: `--no-prompt`, `CI`,
/// a stderr that is not the terminal (stdin still is). Each says why in the result the model
/// gets. The same run at the same terminal without any of them asks (the control).
#[test]
fn nobody_is_asked_where_nobody_can_answer() {
    for (env, flag, redirect, why) in [
        (None, "", "", None),
        (None, "--no-prompt", "", Some("--no-prompt was given")),
        (Some(("CI", "1")), "", "", Some("CI is set")),
        (None, "", "2> err.txt", Some("there is no terminal to ask")),
    ] {
        let case = format!("{env:?} {flag} {redirect}");
        let sandbox = Sandbox::new();
        let server =
            FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("over")]);
        let env: Vec<(&str, &str)> = env.into_iter().collect();
        let tail = format!("{flag} 'make F' {redirect}");
        let tmux = run_in_tmux(&sandbox, &server, &env, &tail);
        let Some(why) = why else {
            tmux.wait_for("1. Allow");
            tmux.keys(&["0"]);
            tmux.wait_for("EXIT=0");
            continue;
        };
        let screen = tmux.wait_for("EXIT=0");
        assert!(!screen.contains("1. Allow"), "{case}: asked:\n{screen}");
        assert!(!exists(&sandbox.work().join("F")), "{case}: ran:\n{screen}");
        let result = &server.request(1).tool_results()[0].1;
        assert!(
            result.contains(&format!("nobody can be asked ({why})")),
            "{case}: {result}"
        );
    }
}

#[test]
fn redirected_stdout_gets_the_answer_while_the_screen_shows_progress() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("echo hi", "say hi"), turn_text("the answer")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'go' > answer.txt");
    let screen = tmux.wait_for("EXIT=0");
    assert!(screen.contains("✓ echo hi · exit 0"), "{screen}");
    let answer = std::fs::read_to_string(sandbox.work().join("answer.txt")).unwrap();
    assert_eq!(answer, "the answer\n");
}

#[test]
fn y_and_n_work_like_1_and_0() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("touch G", "create G"),
        turn_text("made F only"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F and G'");
    tmux.wait_for("$ touch F");
    tmux.keys(&["y"]);
    tmux.wait_for("$ touch G");
    tmux.keys(&["n"]);
    tmux.wait_for("EXIT=0");
    assert!(exists(&sandbox.work().join("F")));
    assert!(!exists(&sandbox.work().join("G")));
}

#[test]
fn the_pane_follows_a_resize() {
    let sandbox = Sandbox::new();
    let command = "for i in $(seq 1 300); do echo line $i; sleep 0.01; done";
    let server = FakeModel::openai_turns([
        turn_tool_call(command, "print slowly"),
        turn_text("printed"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'print'");
    tmux.wait_for("1. Allow");
    tmux.keys(&["1"]);
    tmux.wait_for("line 2");
    let status = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&tmux.socket)
        .args(["resize-window", "-x", "60", "-y", "20"])
        .status()
        .unwrap();
    assert!(status.success());
    // The pane's title is cut to the new width once it redraws.
    let start = Instant::now();
    loop {
        let visible = tmux.tmux_output(&["capture-pane", "-p"]);
        let title = visible
            .lines()
            .rev()
            .find(|line| line.starts_with("┌ $ for"));
        if title.is_some_and(|title| title.trim_end().chars().count() <= 60) {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the pane kept its old width:\n{visible}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let screen = tmux.wait_for("EXIT=0");
    assert!(screen.contains("printed"), "{screen}");
    // The whole scrollback: one summary line, and nothing left of the pane at either width.
    let all = tmux.tmux_output(&["capture-pane", "-p", "-J", "-S", "-"]);
    assert_eq!(
        all.matches("· exit 0 ·").count(),
        1,
        "the pane did not collapse into one summary:\n{all}"
    );
    assert!(
        !all.lines()
            .any(|line| line.starts_with('┌') || line.starts_with('└') || line.starts_with('│')),
        "copies of the pane stayed in the scrollback:\n{all}"
    );
    assert!(
        all.contains("300 lines"),
        "the summary counts every line:\n{all}"
    );
}

/// The pid of the `agent` talking to `server`: a child of this test's own tmux pane whose
/// command line names the server's URL (unique to the test).
fn agent_pid(tmux: &Tmux, server: &FakeModel) -> String {
    let pane = tmux.tmux_output(&["list-panes", "-F", "#{pane_pid}"]);
    let output = std::process::Command::new("pgrep")
        .args(["-P", pane.trim(), "-f", "--"])
        .arg(format!("--base-url {}", server.openai_url()))
        .output()
        .unwrap();
    let pids = String::from_utf8_lossy(&output.stdout);
    let pid = pids.lines().next().unwrap_or_default().trim().to_owned();
    assert!(
        !pid.is_empty(),
        "no agent process for {}",
        server.openai_url()
    );
    pid
}

#[test]
fn escape_sequences_from_the_model_are_shown_not_acted_on() {
    let sandbox = Sandbox::new();
    let text = "before\u{1b}]52;c;cm0gLXJmIH4=\u{7} \u{1b}]2;PWNED-TITLE\u{1b}\\ \u{1b}[2J \u{1b}[8mHIDDEN\u{1b}[0m after\n";
    let server = FakeModel::openai_turns([
        turn_tool_call(
            "ls -la\u{1b}[8m; touch PWNED\u{1b}[0m",
            "list\u{1b}]0;DESC-TITLE\u{7} files\u{202e}txt",
        )
        .with_text(text),
        turn_text("done \u{1b}]52;c;eA==\u{7}\u{200b}end"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'list'");
    let screen = tmux.wait_for("1. Allow");
    for shown in [
        "before\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}",
        "\\u{1b}]2;PWNED-TITLE\\u{1b}\\",
        "\\u{1b}[2J",
        "\\u{1b}[8mHIDDEN\\u{1b}[0m after",
        "list\\u{1b}]0;DESC-TITLE\\u{7} files\\u{202e}txt",
        "$ ls -la\\u{1b}[8m; touch PWNED\\u{1b}[0m",
    ] {
        assert!(screen.contains(shown), "`{shown}` not on screen:\n{screen}");
    }
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(
        screen.contains("done \\u{1b}]52;c;eA==\\u{7}\\u{200b}end"),
        "{screen}"
    );
    assert!(!exists(&sandbox.work().join("PWNED")));
    let title = tmux.tmux_output(&["display-message", "-p", "#{pane_title}"]);
    assert!(!title.contains("TITLE"), "the model set the title: {title}");
    let buffers = tmux.tmux_output(&["list-buffers"]);
    assert!(
        buffers.trim().is_empty(),
        "the model wrote the clipboard: {buffers}"
    );
}

#[test]
fn keys_typed_before_the_prompt_appeared_do_not_answer_it() {
    let sandbox = Sandbox::new();
    let turn = turn_tool_call("touch F", "create F").with_text("thinking hard\n");
    let server = FakeModel::new([
        turn.openai().slow(Duration::from_millis(400)),
        turn_text("not made").openai(),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("thinking");
    let screen = tmux.screen();
    assert!(
        !screen.contains("1. Allow"),
        "the prompt came too soon:\n{screen}"
    );
    tmux.keys(&["1", "y", "Enter"]);
    tmux.wait_for("1. Allow");
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(
        !exists(&sandbox.work().join("F")),
        "type-ahead answered:\n{screen}"
    );
    assert!(screen.contains("⊘ touch F"), "{screen}");
}

#[test]
fn always_allow_needs_a_second_key_and_a_typed_word_saves_nothing() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("not made")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("a. Always allow \"touch\"");
    // A word typed fast: `a` opens the confirmation, the rest comes too soon to count.
    tmux.keys(&["away"]);
    let screen = tmux.wait_for("press y to save the rule");
    assert!(
        screen.contains("always allow \"touch\": adds it to [permissions.commands] allow in"),
        "{screen}"
    );
    // The second `a` came within a word: keys in the pause after its rule are dropped.
    std::thread::sleep(std::time::Duration::from_millis(800));
    tmux.keys(&["n"]);
    tmux.wait_for("rule not saved");
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(!exists(&sandbox.work().join("F")), "{screen}");
    let settings = sandbox.config_dir().join("settings.toml");
    let saved = std::fs::read_to_string(&settings).unwrap_or_default();
    assert!(!saved.contains("touch"), "a rule was written:\n{saved}");
    sandbox.agent().args(["check", "touch X"]).assert().code(3);
}

#[test]
fn enter_does_not_allow_a_destructive_command_and_unknown_keys_get_a_hint() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("F"), "keep me").unwrap();
    let server = FakeModel::openai_turns([turn_tool_call("rm F", "remove F"), turn_text("kept")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'remove F'");
    let screen = tmux.wait_for("1. Allow");
    assert!(screen.contains("⚠ destructive"), "{screen}");
    assert!(!screen.contains("1. Allow (Enter)"), "{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Enter does not allow a destructive command");
    assert!(exists(&sandbox.work().join("F")), "Enter allowed rm");
    tmux.keys(&["x"]);
    tmux.wait_for("  press 1 (once), 2 (this run), 0 (deny), t (deny with a note), e (edit) or Esc (stop)  > ");
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(exists(&sandbox.work().join("F")), "{screen}");
    assert!(screen.contains("⊘ rm F"), "{screen}");
}

#[test]
fn sigint_while_the_prompt_waits_exits_130_at_once_with_the_terminal_restored() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("never")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("1. Allow");
    let pid = agent_pid(&tmux, &server);
    let sent = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=130"), "{screen}");
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?} to stop",
        sent.elapsed()
    );
    assert!(screen.contains("TTY=icanon"), "raw mode left on:\n{screen}");
    assert!(!exists(&sandbox.work().join("F")));
}

#[test]
fn runs_of_blank_lines_are_counted_at_the_prompt() {
    let sandbox = Sandbox::new();
    let command = format!("echo start{}touch F", "\n".repeat(61));
    let server = FakeModel::openai_turns([
        turn_tool_call(&command, "start, then make F"),
        turn_text("not made"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'go'");
    let screen = tmux.wait_for("1. Allow");
    assert!(screen.contains("$ echo start"), "{screen}");
    assert!(screen.contains("…(60 blank lines)…"), "{screen}");
    assert!(screen.contains("    touch F"), "{screen}");
    assert!(screen.contains("62 lines · "), "{screen}");
    tmux.keys(&["0"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn a_command_taller_than_the_screen_says_how_many_lines_are_hidden() {
    let sandbox = Sandbox::new();
    let lines: Vec<String> = (1..=200).map(|i| format!("echo line{i}")).collect();
    let server = FakeModel::openai_turns([
        turn_tool_call(&lines.join("\n"), "print"),
        turn_text("not run"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'print'");
    tmux.wait_for("1. Allow");
    // Only what is on the screen now (no scrollback): the whole question fits.
    let visible = tmux.tmux_output(&["capture-pane", "-p", "-J"]);
    assert!(
        visible.contains("? agent wants to run a command"),
        "{visible}"
    );
    assert!(visible.contains("$ echo line1\n"), "{visible}");
    assert!(visible.contains("echo line200\n"), "{visible}");
    assert!(visible.contains("200 lines · "), "{visible}");
    let hidden = visible
        .lines()
        .find_map(|line| {
            line.trim()
                .strip_prefix("… ")?
                .split(' ')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .unwrap_or_else(|| panic!("no count of hidden lines:\n{visible}"));
    let shown = visible.lines().filter(|l| l.contains("echo line")).count();
    assert_eq!(shown + hidden, 200, "{visible}");
    tmux.keys(&["0"]);
    tmux.wait_for("EXIT=0");
}

#[test]
fn the_live_pane_strips_colour_and_shows_other_escapes() {
    let sandbox = Sandbox::new();
    let command = r"printf '\033[31mRED\033[0m \033]0;PANE-TITLE\007 OUT\n'; sleep 2";
    let server = FakeModel::openai_turns([turn_tool_call(command, "print"), turn_text("printed")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "--mode allow-all 'print'");
    let live = tmux.wait_for("RED ");
    assert!(
        live.contains("│ RED \\u{1b}]0;PANE-TITLE\\u{7} OUT"),
        "not shown as expected in the pane:\n{live}"
    );
    tmux.wait_for("EXIT=0");
    let title = tmux.tmux_output(&["display-message", "-p", "#{pane_title}"]);
    assert!(
        !title.contains("PANE-TITLE"),
        "the command set the title: {title}"
    );
}

#[test]
fn quiet_shows_no_pane_and_no_text_but_every_denial_and_the_answer() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("seq 1 3", "print").with_text("thinking aloud\n"),
        turn_tool_call("touch F", "create F"),
        turn_text("the answer"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "-q 'go'");
    tmux.wait_for("$ touch F");
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(screen.contains("⊘ touch F · denied"), "{screen}");
    assert!(screen.contains("the answer"), "{screen}");
    assert!(!screen.contains("thinking aloud"), "{screen}");
    assert!(!screen.contains("✓ seq"), "{screen}");
    assert!(!screen.contains("│ 1"), "{screen}");
}

#[test]
fn verbose_shows_decisions_and_a_command_s_output_after_it_ends() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("seq 101 103", "print"), turn_text("printed")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "-v 'go'");
    let screen = tmux.wait_for("EXIT=0");
    let all = tmux.tmux_output(&["capture-pane", "-p", "-J", "-S", "-"]);
    assert!(all.contains("  allow: "), "{all}");
    let out3 = all.find("\n  103\n").unwrap_or_else(|| panic!("{all}"));
    let summary = all.find("✓ seq 101 103").unwrap_or_else(|| panic!("{all}"));
    assert!(out3 < summary, "{screen}");
    assert!(all.contains("· 3 lines"), "{all}");
}

#[test]
fn the_answer_s_markdown_is_rendered_on_the_terminal() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text(
        "# Result\n\n- first **point**\n* second\n\n```sh\necho hi\n```\ndone",
    )]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'go'");
    let screen = tmux.wait_for("EXIT=0");
    assert!(screen.lines().any(|line| line == "Result"), "{screen}");
    assert!(!screen.contains("# Result"), "{screen}");
    assert!(screen.contains("• first point"), "{screen}");
    assert!(screen.contains("• second"), "{screen}");
    // A code block as written, so a copy of it is the code: no indent added.
    assert!(screen.lines().any(|line| line == "echo hi"), "{screen}");
    assert!(!screen.contains("**"), "{screen}");
}
