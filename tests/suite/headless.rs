//! Headless runs say how to allow: a denial for want of a terminal names the `agent run` flag
//! that would allow it (`--allow 'python3 -m pytest'`, `--allow-edits`) to the model, in the
//! decision's reason, and in a last line of the run; `--allow-edits` (or `[permissions.files]
//! edits = "allow"` in the user file, never the project file) lets a CI run edit inside the
//! workspace through the file tools while shell commands keep their rules.

use serde_json::{Value, json};

use super::fake_model::{FakeModel, Turn, turn_text, turn_tool_call};
use super::harness::{Sandbox, events};
use pretty_assertions::assert_eq;

const FIX: &str = r#"{"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"}"#;

fn project() -> Sandbox {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(work.join("src/lib.rs"), "fn add() -> i32 {\n    a - b\n}\n").unwrap();
    std::fs::write(work.join(".env"), "TOKEN=x\n").unwrap();
    sandbox
}

fn lib(sandbox: &Sandbox) -> String {
    std::fs::read_to_string(sandbox.work().join("src/lib.rs")).unwrap()
}

fn edit(id: &str, arguments: &str) -> Turn {
    Turn::default().with_call(id, "edit_file", arguments)
}

/// A CI run (`CI=true`, stdin null) against `server` with `flags`: (stdout, stderr).
fn ci_run(sandbox: &Sandbox, server: &FakeModel, flags: &[&str]) -> (String, String) {
    let output = sandbox
        .agent_process()
        .env("CI", "true")
        .env("OPENAI_API_KEY", super::harness::KEY)
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(flags)
        .arg("fix it")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    (stdout, stderr)
}

#[test]
fn allow_edits_lets_a_ci_run_edit_inside_the_workspace() {
    let sandbox = project();
    let server = FakeModel::openai_turns([edit("e1", FIX), turn_text("fixed")]);
    let (_, stderr) = ci_run(&sandbox, &server, &["--allow-edits"]);
    assert!(lib(&sandbox).contains("a + b"), "{stderr}");
    assert!(stderr.contains("✓ edit src/lib.rs"), "{stderr}");
    assert!(!stderr.contains("to allow next time"), "{stderr}");
    // Still never: `.git`, `.agent`, secret files, outside the workspace.
    let outside = sandbox.root.path().join("outside.txt");
    for path in [
        ".git/config".to_owned(),
        ".agent/settings.toml".to_owned(),
        ".env".to_owned(),
        outside.display().to_string(),
    ] {
        let write = json!({"path": path, "content": "x\n"}).to_string();
        let server = FakeModel::openai_turns([
            Turn::default().with_call("w1", "write_file", &write),
            turn_text("done"),
        ]);
        let (_, stderr) = ci_run(&sandbox, &server, &["--allow-edits"]);
        let results = server.request(1).tool_results();
        assert!(results[0].1.contains("EDENIED"), "{path}: {results:?}");
        assert!(
            !results[0].1.contains("--allow-edits"),
            "{path}: the flag would not help: {results:?}"
        );
        assert!(stderr.contains("⊘ write "), "{path}: {stderr}");
    }
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join(".env")).unwrap(),
        "TOKEN=x\n"
    );
    assert!(!outside.exists());
    assert!(!sandbox.work().join(".agent/settings.toml").exists());
}

#[test]
fn allow_edits_leaves_shell_commands_to_their_rules() {
    let sandbox = project();
    let server = FakeModel::openai_turns([
        turn_tool_call("touch made-by-shell", "make a file"),
        turn_text("done"),
    ]);
    let (_, stderr) = ci_run(&sandbox, &server, &["--allow-edits"]);
    assert!(!sandbox.work().join("made-by-shell").exists(), "{stderr}");
    assert!(stderr.contains("⊘ touch made-by-shell"), "{stderr}");
}

#[test]
fn an_edit_denied_without_a_terminal_names_allow_edits() {
    let sandbox = project();
    let server = FakeModel::openai_turns([edit("e1", FIX), turn_text("could not")]);
    let (stdout, _) = ci_run(&sandbox, &server, &["--json"]);
    assert!(lib(&sandbox).contains("a - b"));
    let results = server.request(1).tool_results();
    assert!(
        results[0].1.contains("pass --allow-edits to `agent run`"),
        "{results:?}"
    );
    let events = events(stdout.as_bytes());
    let decision = events.iter().find(|e| e["type"] == "decision").unwrap();
    assert_eq!(decision["decision"], "deny");
    assert!(
        decision["reason"]
            .as_str()
            .unwrap()
            .contains("--allow-edits"),
        "{decision}"
    );
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(done["denials"][0]["allow"], "--allow-edits", "{done}");
    // Plain output ends with the flags to pass.
    let server = FakeModel::openai_turns([edit("e2", FIX), turn_text("could not")]);
    let (_, stderr) = ci_run(&sandbox, &server, &[]);
    assert!(
        stderr.contains(
            "agent: denied for want of a terminal; to allow next time, run with: --allow-edits\n"
        ),
        "{stderr}"
    );
}

#[test]
fn a_command_denied_without_a_terminal_names_the_allow_flag() {
    let sandbox = project();
    let server = FakeModel::openai_turns([
        turn_tool_call("python3 -m pytest -x tests/", "run the tests"),
        edit("e1", FIX),
        turn_tool_call("python3 -m pytest -k add", "again"),
        turn_text("denied"),
    ]);
    let (stdout, _) = ci_run(&sandbox, &server, &["--json"]);
    let flag = "--allow 'python3 -m pytest'";
    let results = server.request(1).tool_results();
    assert!(
        results[0]
            .1
            .contains(&format!("pass {flag} to `agent run`")),
        "{results:?}"
    );
    assert!(
        results[0]
            .1
            .contains("`agent rules add 'python3 -m pytest'`"),
        "{results:?}"
    );
    let events = events(stdout.as_bytes());
    let reasons: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "decision")
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert!(reasons[0].contains(flag), "{reasons:?}");
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    let allow: Vec<&Value> = done["denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["allow"])
        .collect();
    assert_eq!(allow, [&json!(flag), &json!("--allow-edits"), &json!(flag)]);
    // The last line names each flag once.
    let server = FakeModel::openai_turns([
        turn_tool_call("python3 -m pytest -x tests/", "run the tests"),
        edit("e2", FIX),
        turn_tool_call("python3 -m pytest", "again"),
        turn_tool_call("python3 -c 'import os'", "no rule for this one"),
        turn_text("denied"),
    ]);
    let (_, stderr) = ci_run(&sandbox, &server, &[]);
    assert!(
        stderr.contains(&format!(
            "agent: denied for want of a terminal; to allow next time, run with: {flag} \
             --allow-edits\n"
        )),
        "{stderr}"
    );
    let results = server.request(4).tool_results();
    assert!(
        results
            .last()
            .is_some_and(|(_, result)| result.contains("no rule can be offered for it")),
        "{results:?}"
    );
    // With the flag the command runs (it may fail: no Python tests here).
    let server = FakeModel::openai_turns([
        turn_tool_call("python3 -m pytest --version", "run the tests"),
        turn_text("ran"),
    ]);
    let (_, stderr) = ci_run(&sandbox, &server, &["--allow", "python3 -m pytest"]);
    assert!(!stderr.contains("⊘ python3"), "{stderr}");
}

#[test]
fn edits_allow_counts_from_the_user_file_and_never_from_the_project_file() {
    let sandbox = project();
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        "[permissions.files]\nedits = \"allow\"\n",
    )
    .unwrap();
    let server = FakeModel::openai_turns([edit("e1", FIX), turn_text("could not")]);
    let (_, stderr) = ci_run(&sandbox, &server, &[]);
    assert!(lib(&sandbox).contains("a - b"), "{stderr}");
    assert!(
        stderr.contains(
            "`permissions.files.edits` is ignored: a project file can only make `edits` stricter"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-edits"), "{stderr}");
    sandbox.settings("[permissions.files]\nedits = \"allow\"\n");
    let server = FakeModel::openai_turns([edit("e2", FIX), turn_text("fixed")]);
    let (_, stderr) = ci_run(&sandbox, &server, &[]);
    assert!(lib(&sandbox).contains("a + b"), "{stderr}");
}
