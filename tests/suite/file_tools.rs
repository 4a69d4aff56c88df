//! The workspace tools beside `shell` (`read_file`, `list_files`, `search`, `edit_file`,
//! `write_file`) through the real binary against the fake servers: each tool, each verdict
//! (inside, outside, secret, `.git/`, allow-all, deny mode, no terminal), bad input, the
//! settings, `agent check --read/--write`, events, transcripts and `--continue`.

use serde_json::{Value, json};

use super::fake_model::{FakeModel, Turn, turn_text};
use super::harness::{Sandbox, events};
use predicates::prelude::*;
use pretty_assertions::assert_eq;

/// A turn calling `tool` with `arguments`.
fn call(tool: &str, arguments: &Value) -> Turn {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let id = format!("file_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    Turn::default().with_call(&id, tool, &arguments.to_string())
}

/// A workspace with a small Rust project, a secret and an ignored directory.
fn project() -> Sandbox {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(work.join("target")).unwrap();
    std::fs::write(work.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(
        work.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )
    .unwrap();
    std::fs::write(
        work.join("src/main.rs"),
        "fn main() { agent::add(1, 2); }\n",
    )
    .unwrap();
    std::fs::write(work.join("target/build.rs"), "fn add() {}\n").unwrap();
    std::fs::write(work.join(".env"), "API_TOKEN=hunter2 fn add\n").unwrap();
    sandbox
}

/// Runs one tool call then a final answer (OpenAI wire); returns the result the model got
/// and the run's stderr.
fn one_call(sandbox: &Sandbox, tool: &str, arguments: &Value, flags: &[&str]) -> (String, String) {
    let server = FakeModel::openai_turns([call(tool, arguments), turn_text("done")]);
    let output = sandbox
        .openai_run(&server)
        .args(flags)
        .arg("look at the code")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let results = server.request(1).tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    (results[0].1.clone(), stderr)
}

#[test]
fn read_file_inside_needs_no_prompt_and_numbers_the_lines() {
    let sandbox = project();
    let (result, stderr) = one_call(&sandbox, "read_file", &json!({"path": "src/lib.rs"}), &[]);
    assert_eq!(
        result,
        "     1\tpub fn add(a: i32, b: i32) -> i32 {\n     2\t    a - b\n     3\t}\n"
    );
    assert!(stderr.contains("✓ read src/lib.rs · 3 lines"), "{stderr}");
}

#[test]
fn the_anthropic_wire_offers_and_runs_the_same_tools() {
    let sandbox = project();
    let server = FakeModel::anthropic_turns([
        call("search", &json!({"pattern": "fn add"})),
        turn_text("found it"),
    ]);
    sandbox
        .anthropic_run(&server)
        .arg("find add")
        .assert()
        .success()
        .stderr(predicate::str::contains("✓ search \"fn add\" · 1 match"));
    let names = server.request(0).tool_names();
    assert_eq!(names, super::support::tools::offered());
    let results = server.request(1).tool_results();
    assert_eq!(
        results[0].1,
        "src/lib.rs:1: pub fn add(a: i32, b: i32) -> i32 {\n"
    );
}

#[test]
fn list_and_search_follow_ignore_files_and_skip_secrets() {
    let sandbox = project();
    let (listed, stderr) = one_call(&sandbox, "list_files", &json!({}), &[]);
    assert_eq!(listed, "src/lib.rs\nsrc/main.rs\n");
    assert!(stderr.contains("✓ list . · 2 files"), "{stderr}");
    let (found, _) = one_call(
        &sandbox,
        "search",
        &json!({"pattern": "ADD|token", "ignore_case": true}),
        &[],
    );
    assert_eq!(
        found,
        "src/lib.rs:1: pub fn add(a: i32, b: i32) -> i32 {\nsrc/main.rs:1: fn main() { agent::add(1, 2); }\n"
    );
    assert!(!found.contains("hunter2"));
    let (rs, _) = one_call(
        &sandbox,
        "list_files",
        &json!({"pattern": "**/main.rs"}),
        &[],
    );
    assert_eq!(rs, "src/main.rs\n");
}

#[cfg(unix)]
#[test]
fn reads_outside_the_workspace_or_of_secrets_are_denied_without_a_terminal() {
    let sandbox = project();
    let outside = sandbox.root.path().join("outside.txt");
    std::fs::write(&outside, "private notes").unwrap();
    std::os::unix::fs::symlink(&outside, sandbox.work().join("link.txt")).unwrap();
    let cases = [
        json!({"path": outside.display().to_string()}),
        json!({"path": "../outside.txt"}),
        json!({"path": "link.txt"}),
        json!({"path": ".env"}),
    ];
    for arguments in cases {
        let (result, stderr) = one_call(&sandbox, "read_file", &arguments, &[]);
        assert!(result.contains("EDENIED"), "{arguments}: {result}");
        assert!(
            !result.contains("private notes") && !result.contains("hunter2"),
            "{result}"
        );
        assert!(stderr.contains("⊘ read"), "{arguments}: {stderr}");
        assert!(stderr.contains("nobody can be asked"), "{stderr}");
    }
    // Mode allow-all reads outside, never a secret without a person.
    let (result, _) = one_call(
        &sandbox,
        "read_file",
        &json!({"path": "../outside.txt"}),
        &["--mode", "allow-all"],
    );
    assert!(result.contains("private notes"), "{result}");
    let (result, _) = one_call(
        &sandbox,
        "read_file",
        &json!({"path": ".env"}),
        &["--mode", "allow-all"],
    );
    assert!(
        result.contains("EDENIED") && !result.contains("hunter2"),
        "{result}"
    );
    // Mode deny: reads inside still free, outside denied.
    let (result, _) = one_call(
        &sandbox,
        "read_file",
        &json!({"path": "src/lib.rs"}),
        &["--mode", "deny"],
    );
    assert!(result.contains("a - b"), "{result}");
}

const FIX: &str = r#"{"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"}"#;

fn lib(sandbox: &Sandbox) -> String {
    std::fs::read_to_string(sandbox.work().join("src/lib.rs")).unwrap()
}

#[test]
fn an_edit_without_a_terminal_is_denied_and_nothing_changes() {
    let sandbox = project();
    let fix: Value = serde_json::from_str(FIX).unwrap();
    for flags in [&[][..], &["--mode", "deny"][..]] {
        let (result, stderr) = one_call(&sandbox, "edit_file", &fix, flags);
        assert!(result.contains("EDENIED"), "{result}");
        assert!(stderr.contains("⊘ edit src/lib.rs"), "{stderr}");
        assert!(lib(&sandbox).contains("a - b"));
    }
}

#[test]
fn allow_all_applies_an_edit_inside_and_the_events_carry_tool_and_arguments() {
    let sandbox = project();
    let server = FakeModel::openai_turns([
        call("edit_file", &serde_json::from_str(FIX).unwrap()),
        turn_text("fixed"),
    ]);
    let output = sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "--json", "fix it"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(lib(&sandbox).contains("a + b"));
    let events = events(&output.stdout);
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(call["tool"], "edit_file");
    assert_eq!(call["label"], "edit src/lib.rs");
    assert_eq!(call["input"]["old_string"], "a - b");
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["tool"], "edit_file");
    assert_eq!(result["summary"], "+1 \u{2212}1");
    assert!(
        result["diff"]
            .as_str()
            .unwrap()
            .contains("-    a - b\n+    a + b\n"),
        "{result}"
    );
    let decision = events.iter().find(|e| e["type"] == "decision").unwrap();
    assert_eq!(decision["decision"], "allow");
    assert_eq!(decision["by"], "mode");
    let sent = server.request(1).tool_results();
    assert_eq!(
        sent[0].1,
        "edited `src/lib.rs`: replaced 1 occurrence (+1 \u{2212}1)"
    );
    // Plain output: one line.
    let sandbox = project();
    let (_, stderr) = one_call(
        &sandbox,
        "edit_file",
        &serde_json::from_str(FIX).unwrap(),
        &["--mode", "allow-all"],
    );
    assert!(
        stderr.contains("✓ edit src/lib.rs · +1 \u{2212}1"),
        "{stderr}"
    );
}

#[test]
fn never_git_agent_outside_or_the_user_settings_file_in_any_mode() {
    let sandbox = project();
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    let conf = sandbox.work().join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("settings.toml"), "").unwrap();
    let outside = sandbox.root.path().join("outside.txt");
    for path in [
        ".git/config".to_owned(),
        ".git/hooks/pre-commit".to_owned(),
        ".agent/settings.toml".to_owned(),
        "conf/settings.toml".to_owned(),
        "../outside.txt".to_owned(),
        outside.display().to_string(),
    ] {
        let server = FakeModel::openai_turns([
            call(
                "write_file",
                &json!({"path": path, "content": "[permissions]\nmode = \"allow-all\"\n"}),
            ),
            turn_text("done"),
        ]);
        sandbox
            .openai_run(&server)
            .env("AGENT_CONFIG_DIR", &conf)
            .args(["--mode", "allow-all", "write"])
            .assert()
            .success();
        let result = &server.request(1).tool_results()[0].1;
        assert!(result.contains("EDENIED"), "{path}: {result}");
        assert!(result.contains("never"), "{path}: {result}");
    }
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!sandbox.work().join(".agent/settings.toml").exists());
    assert!(!sandbox.work().join(".git/hooks").exists());
    assert_eq!(
        std::fs::read_to_string(conf.join("settings.toml")).unwrap(),
        ""
    );
    assert!(!outside.exists());
}

#[test]
fn the_files_settings_deny_ask_read_and_edits() {
    let sandbox = project();
    std::fs::create_dir_all(sandbox.work().join("secrets")).unwrap();
    std::fs::write(sandbox.work().join("secrets/k.txt"), "key").unwrap();
    std::fs::write(sandbox.work().join("src/prod.tfstate"), "state").unwrap();
    sandbox.settings(
        "[permissions.files]\ndeny = [\"secrets/**\"]\nask_read = [\"*.tfstate\"]\nedits = \"allow\"\n",
    );
    let (result, _) = one_call(
        &sandbox,
        "read_file",
        &json!({"path": "secrets/k.txt"}),
        &[],
    );
    assert!(result.contains("[permissions.files] deny"), "{result}");
    let (result, _) = one_call(
        &sandbox,
        "read_file",
        &json!({"path": "src/prod.tfstate"}),
        &[],
    );
    assert!(result.contains("may hold secrets"), "{result}");
    let (listed, _) = one_call(&sandbox, "list_files", &json!({}), &[]);
    assert_eq!(listed, "src/lib.rs\nsrc/main.rs\n");
    // edits = "allow": applied without a terminal.
    let (result, _) = one_call(
        &sandbox,
        "edit_file",
        &serde_json::from_str(FIX).unwrap(),
        &[],
    );
    assert!(result.starts_with("edited"), "{result}");
    assert!(lib(&sandbox).contains("a + b"));
    // A project file may only tighten `edits`.
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        "[permissions.files]\nedits = \"deny\"\n",
    )
    .unwrap();
    let back = r#"{"path": "src/lib.rs", "old_string": "a + b", "new_string": "a * b"}"#;
    let (result, _) = one_call(
        &sandbox,
        "edit_file",
        &serde_json::from_str(back).unwrap(),
        &["--mode", "allow-all"],
    );
    assert!(result.contains("edits = \\\"deny\\\""), "{result}");
    assert!(lib(&sandbox).contains("a + b"));
}

#[cfg(unix)]
#[test]
fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let sandbox = project();
    let work = sandbox.work();
    std::fs::write(work.join("twice.txt"), "x x\n").unwrap();
    std::fs::write(work.join("latin1.txt"), b"caf\xe9\n").unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(work.join("fifo"))
            .status()
            .unwrap()
            .success()
    );
    let allow = &["--mode", "allow-all"][..];
    let cases: Vec<(&str, Value, &str)> = vec![
        ("read_file", json!({"path": "missing.rs"}), "ENOENT"),
        ("read_file", json!({"path": "src"}), "use list_files"),
        ("read_file", json!({"path": "fifo"}), "not a regular file"),
        (
            "read_file",
            json!({"path": "/dev/zero"}),
            "not a regular file",
        ),
        (
            "list_files",
            json!({"path": "src/lib.rs"}),
            "not a directory",
        ),
        (
            "search",
            json!({"pattern": "("}),
            "not a valid regular expression",
        ),
        (
            "edit_file",
            json!({"path": "missing.rs", "old_string": "a", "new_string": "b"}),
            "ENOENT",
        ),
        (
            "edit_file",
            json!({"path": "twice.txt", "old_string": "x", "new_string": "y"}),
            "found 2 times",
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "nope", "new_string": "y"}),
            "(0 matches)",
        ),
        (
            "edit_file",
            json!({"path": "latin1.txt", "old_string": "caf", "new_string": "y"}),
            "not valid UTF-8",
        ),
        (
            "edit_file",
            json!({"path": "fifo", "old_string": "a", "new_string": "b"}),
            "not a regular file",
        ),
        (
            "write_file",
            json!({"path": "src", "content": "x"}),
            "is a directory",
        ),
        ("read_file", json!({"file": "x"}), "EINVAL"),
    ];
    for (tool, arguments, needle) in cases {
        let (result, _) = one_call(&sandbox, tool, &arguments, allow);
        assert!(result.contains(needle), "{tool} {arguments}: {result}");
    }
    assert_eq!(
        std::fs::read_to_string(work.join("twice.txt")).unwrap(),
        "x x\n"
    );
    assert_eq!(
        std::fs::read(work.join("latin1.txt")).unwrap(),
        b"caf\xe9\n"
    );
    assert!(lib(&sandbox).contains("a - b"));
}

#[cfg(unix)]
#[test]
fn a_write_creates_parents_keeps_the_mode_and_leaves_no_temp_file() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = project();
    let script = sandbox.work().join("run.sh");
    std::fs::write(&script, "echo a\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let allow = &["--mode", "allow-all"][..];
    let (result, stderr) = one_call(
        &sandbox,
        "write_file",
        &json!({"path": "run.sh", "content": "echo b\n"}),
        allow,
    );
    assert!(result.starts_with("replaced `run.sh`"), "{result}");
    assert!(stderr.contains("✓ write run.sh · +1 \u{2212}1"), "{stderr}");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    let (result, _) = one_call(
        &sandbox,
        "write_file",
        &json!({"path": "docs/new/notes.md", "content": "# notes\n"}),
        allow,
    );
    assert_eq!(result, "created `docs/new/notes.md` (1 line)");
    let names: Vec<String> = std::fs::read_dir(sandbox.work())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn mode_off_offers_no_file_tool_and_refuses_a_call() {
    let sandbox = project();
    let (result, _) = one_call(
        &sandbox,
        "read_file",
        &json!({"path": "src/lib.rs"}),
        &["--mode", "off"],
    );
    assert!(result.contains("ETOOL_DISABLED"), "{result}");
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox
        .openai_run(&server)
        .args(["--mode", "off", "hi"])
        .assert()
        .success();
    assert!(server.request(0).tool_names().is_empty());
}

#[test]
fn check_read_and_write_print_the_verdict_and_reason() {
    let sandbox = project();
    let check = |args: &[&str], code: i32, needle: &str| {
        sandbox
            .agent()
            .arg("check")
            .args(args)
            .assert()
            .code(code)
            .stdout(predicate::str::contains(needle));
    };
    check(
        &["--read", "src/lib.rs"],
        0,
        "allow: reading inside the workspace",
    );
    check(&["--read", ".env"], 3, "ask: `.env` may hold secrets");
    check(&["--read", "/etc/hosts"], 3, "outside the workspace");
    check(&["--write", "src/lib.rs"], 3, "ask: edits `src/lib.rs`");
    check(&["--write", ".git/config"], 4, "inside `.git/`");
    check(&["--write", "../x"], 4, "outside the workspace");
    check(
        &["--json", "--read", ".env"],
        3,
        r#""path":".env","access":"read","decision":"ask""#,
    );
}

#[test]
fn history_show_and_continue_include_the_file_calls() {
    let sandbox = project();
    let server = FakeModel::openai_turns([
        call("read_file", &json!({"path": "src/lib.rs"})),
        turn_text("it subtracts"),
        turn_text("still subtracts"),
    ]);
    sandbox
        .openai_run(&server)
        .arg("read lib")
        .assert()
        .success();
    let text = sandbox.history_show();
    assert!(
        text.contains("• read src/lib.rs\n  allow: reading inside the workspace\n  3 lines\n"),
        "{text}"
    );
    sandbox
        .openai_run(&server)
        .args(["--continue", "and now?"])
        .assert()
        .success();
    let again = server.request(2);
    let results = again.tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].1.contains("     2\t    a - b"), "{results:?}");
}

#[test]
fn the_system_prompt_prefers_the_file_tools() {
    let sandbox = project();
    let server = FakeModel::openai_turns([turn_text("ok")]);
    sandbox.openai_run(&server).arg("hi").assert().success();
    let system = server.request(0).system().unwrap();
    assert!(
        system.contains("use `read_file`, `list_files` and `search`"),
        "{system}"
    );
    assert!(system.contains("not `sed -i`"), "{system}");
}

#[test]
fn the_demo_reads_and_searches_offline() {
    let sandbox = project();
    std::fs::write(sandbox.work().join("README.md"), "# app\nA demo project.\n").unwrap();
    std::fs::write(sandbox.work().join("src/todo.rs"), "// TODO: fix add\n").unwrap();
    sandbox
        .agent()
        .args(["run", "read the readme"])
        .assert()
        .success()
        .stdout(predicate::str::contains("A demo project."))
        .stderr(predicate::str::contains("✓ read README.md · 2 lines"));
    sandbox
        .agent()
        .args(["run", "find the TODOs"])
        .assert()
        .success()
        .stdout(predicate::str::contains("src/todo.rs:1: // TODO: fix add"))
        .stderr(predicate::str::contains(
            "✓ search \"TODO|FIXME\" · 1 match",
        ));
}
