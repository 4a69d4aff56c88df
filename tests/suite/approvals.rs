//! The prompt's scoped answers in a real terminal (tmux): `2` this run, `3` this project
//! (saved under the workspace's table, shown in full first), no prefix for a compound
//! command, `t` deny with a note for the model, `e` edit (decided again, marked as edited),
//! Esc; and "always allow" through a symlinked settings file.

use std::path::PathBuf;

use serde_json::Value;

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::tty::{exists, run_in_tmux};

/// Every event of the one run recorded in the sandbox.
fn events(sandbox: &Sandbox) -> Vec<Value> {
    let dir = sandbox.state_dir().join("agent/runs");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn work(sandbox: &Sandbox) -> PathBuf {
    sandbox.work().canonicalize().unwrap()
}

#[test]
fn two_allows_the_exact_command_for_the_rest_of_the_run_and_nothing_else() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("touch F", "create F again"),
        turn_tool_call("touch G", "create G"),
        turn_text("done"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F twice and G'");
    let screen = tmux.wait_for("2. Allow for this run");
    assert!(
        screen.contains("3. Allow \"touch\" in this project"),
        "{screen}"
    );
    tmux.keys(&["2"]);
    tmux.wait_for("$ touch G");
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert_eq!(
        screen.matches("agent wants to run a command").count(),
        2,
        "asked again for the same command:\n{screen}"
    );
    assert!(exists(&sandbox.work().join("F")));
    assert!(!exists(&sandbox.work().join("G")));
    let events = events(&sandbox);
    let decisions = of_type(&events, "decision");
    assert_eq!(
        decisions[0]["reason"],
        "allowed at the prompt for the rest of this run"
    );
    assert_eq!(
        decisions[1]["reason"],
        "allowed at the prompt earlier in this run (2: this command, this run)"
    );
    assert_eq!(decisions[1]["by"], "person");
    assert_eq!(decisions[2]["decision"], "deny");
    // Nothing was saved.
    let saved = std::fs::read_to_string(sandbox.config_dir().join("settings.toml"));
    assert!(saved.unwrap_or_default().is_empty());
}

#[test]
fn three_saves_the_prefix_for_this_project_after_showing_it_whole() {
    let sandbox = Sandbox::new();
    sandbox.settings("# mine\n[limits]\nmax_turns = 9 # keep\n");
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("touch G", "create G"),
        turn_text("made both"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F and G'");
    tmux.wait_for("3. Allow \"touch\" in this project");
    tmux.keys(&["3"]);
    let screen = tmux.wait_for("press y to save the rule");
    let file = sandbox.config_dir().join("settings.toml");
    let shown = format!(
        "allow \"touch\" in this project: adds it to [projects.\"{}\".permissions.commands] allow in {}",
        work(&sandbox).display(),
        file.display()
    );
    // Wrapped between words at 120 columns: compare the words.
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words(&screen).contains(&words(&shown)),
        "`{shown}` not shown:\n{screen}"
    );
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("EXIT=0");
    assert_eq!(
        screen.matches("agent wants to run a command").count(),
        1,
        "asked for touch G too:\n{screen}"
    );
    assert!(exists(&sandbox.work().join("F")) && exists(&sandbox.work().join("G")));
    let saved = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        saved,
        format!(
            "# mine\n[limits]\nmax_turns = 9 # keep\n\n[projects.\"{}\".permissions.commands]\nallow = [\"touch\"]\n",
            work(&sandbox).display()
        )
    );
    // This project only.
    sandbox.agent().args(["check", "touch X"]).assert().code(0);
    sandbox
        .agent()
        .arg("-C")
        .arg(sandbox.root.path().join("home"))
        .args(["check", "touch X"])
        .assert()
        .code(3);
    // Shown with its source by `config show` and `rules`.
    let shown = sandbox.agent().args(["config", "show"]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    let line = shown
        .lines()
        .find(|line| line.starts_with("permissions.commands.allow = \"touch\""))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        line.ends_with(&format!(
            "# user {}:6 [projects.\"{}\"]",
            file.display(),
            work(&sandbox).display()
        )),
        "{line}"
    );
    let rules = sandbox.agent().args(["rules", "--json"]).output().unwrap();
    let rules: Value = serde_json::from_slice(&rules.stdout).unwrap();
    assert_eq!(rules["rules"][0]["source"], "user-project");
    assert_eq!(rules["rules"][0]["rule"], "touch");
}

#[test]
fn a_compound_command_is_offered_only_for_this_run() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F && touch G", "create F and G"),
        turn_text("made"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make them'");
    let screen = tmux.wait_for("2. Allow for this run");
    assert!(!screen.contains("3. Allow"), "{screen}");
    assert!(!screen.contains("a. Always"), "{screen}");
    // `3` and `a` do nothing here: the hint names the keys that do.
    tmux.keys(&["3"]);
    tmux.wait_for("press 1 (once), 2 (this run), 0 (deny)");
    tmux.keys(&["2"]);
    tmux.wait_for("EXIT=0");
    assert!(exists(&sandbox.work().join("F")) && exists(&sandbox.work().join("G")));
}

#[test]
fn t_denies_with_a_note_the_model_reads() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_text("ok, I will use nextest"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("t. Deny with a note");
    tmux.keys(&["t"]);
    tmux.wait_for("note> ");
    tmux.keys(&["-l", "use cargo nextest instead"]);
    tmux.wait_for("note> use cargo nextest instead");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(!exists(&sandbox.work().join("F")));
    assert!(screen.contains("⊘ touch F"), "{screen}");
    let results = server.request(1).tool_results();
    assert!(
        results[0].1.contains("EDENIED") && results[0].1.contains("use cargo nextest instead"),
        "{results:?}"
    );
    let events = events(&sandbox);
    let decision = of_type(&events, "decision")[0];
    assert_eq!(
        decision["reason"],
        "denied at the prompt with a note: use cargo nextest instead"
    );
    let done = of_type(&events, "done")[0];
    assert_eq!(done["denials"][0]["command"], "touch F");
}

#[test]
fn e_edits_the_command_which_is_decided_again_and_marked() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch F", "create F"),
        turn_tool_call("touch H", "create H"),
        turn_text("done"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("e. Edit");
    tmux.keys(&["e"]);
    tmux.wait_for("$ touch F");
    // Into a read-only command: the policy allows it without asking again.
    tmux.keys(&["C-u"]);
    tmux.keys(&["-l", "echo edited"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("✓ echo edited · exit 0");
    // Into a destructive one: asked again, marked as edited.
    tmux.wait_for("$ touch H");
    tmux.keys(&["e"]);
    tmux.keys(&["C-u"]);
    tmux.keys(&["-l", "rm -f H"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("edited by you from: touch H");
    assert!(screen.contains("$ rm -f H"), "{screen}");
    assert!(screen.contains("⚠ destructive"), "{screen}");
    tmux.keys(&["0"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(!exists(&sandbox.work().join("F")), "{screen}");
    assert!(!exists(&sandbox.work().join("H")), "{screen}");
    let events = events(&sandbox);
    let decisions = of_type(&events, "decision");
    assert_eq!(decisions[0]["edited_from"], "touch F");
    assert_eq!(decisions[0]["command"], "echo edited");
    assert_eq!(decisions[0]["decision"], "allow");
    assert_eq!(decisions[0]["by"], "policy");
    assert_eq!(decisions[1]["edited_from"], "touch H");
    assert_eq!(decisions[1]["command"], "rm -f H");
    assert_eq!(decisions[1]["decision"], "deny");
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["command"], "echo edited");
    let sent = server.request(1).tool_results();
    assert!(
        sent[0].1.contains("edited_by_user") && sent[0].1.contains("echo edited"),
        "{sent:?}"
    );
    let done = of_type(&events, "done")[0];
    assert_eq!(done["denials"][0]["command"], "rm -f H");
}

#[test]
fn an_edit_into_a_denied_command_is_denied_without_asking() {
    let sandbox = Sandbox::new();
    sandbox.settings("[permissions.commands]\ndeny = [\"rm -rf\"]\n");
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("done")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("e. Edit");
    tmux.keys(&["e"]);
    tmux.wait_for("$ touch F");
    tmux.keys(&["C-u"]);
    tmux.keys(&["-l", "rm -rf F"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("EXIT=0");
    assert_eq!(
        screen.matches("agent wants to run a command").count(),
        1,
        "{screen}"
    );
    assert!(screen.contains("⊘ rm -rf F"), "{screen}");
    let events = events(&sandbox);
    let decision = of_type(&events, "decision")[0];
    assert_eq!(decision["by"], "policy");
    assert_eq!(decision["edited_from"], "touch F");
}

#[test]
fn esc_denies_and_ends_the_run() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("never")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("Esc: deny and stop");
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("EXIT=130");
    assert!(screen.contains("TTY=icanon"), "{screen}");
    assert!(!exists(&sandbox.work().join("F")));
    assert_eq!(server.requests().len(), 1);
}

#[cfg(unix)]
#[test]
fn always_allow_writes_through_a_symlinked_settings_file_keeping_its_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = Sandbox::new();
    let dotfiles = sandbox.root.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let target = dotfiles.join("agent.toml");
    std::fs::write(&target, "# from my dotfiles\n[limits]\nmax_turns = 9\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = sandbox.config_dir().join("settings.toml");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("made")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'make F'");
    tmux.wait_for("a. Always allow \"touch\"");
    tmux.keys(&["a"]);
    tmux.wait_for("press y to save the rule");
    tmux.keys(&["y"]);
    tmux.wait_for("EXIT=0");
    assert!(exists(&sandbox.work().join("F")));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "# from my dotfiles\n[limits]\nmax_turns = 9\n\n[permissions.commands]\nallow = [\"touch\"]\n"
    );
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}
