//! Looking is free (issue 18): inspection programs, paths inside the workspace, secret files,
//! harmless composition, the strict list, and the model's working directory — through the real
//! binary (`agent check`, and `agent run` against the fake model without a terminal, where
//! anything that would ask is denied).

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::{Sandbox, git};
use pretty_assertions::assert_eq;

/// `agent check --json` for one command in the sandbox's workspace.
fn check(sandbox: &Sandbox, extra: &[&str], command: &str) -> serde_json::Value {
    let output = sandbox
        .agent()
        .arg("check")
        .arg("--json")
        .args(extra)
        .arg("--")
        .arg(command)
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn inspection_commands_are_allowed_inside_the_workspace_and_ask_outside() {
    let sandbox = Sandbox::new();
    let cases: &[(&str, &str)] = &[
        ("sed -n 120,240p src/x.py", "allow"),
        ("cat package.json", "allow"),
        ("find . -name '*.ts'", "allow"),
        ("rg -n \"name\" src", "allow"),
        ("git diff --stat", "allow"),
        ("nl -ba src/main.rs", "allow"),
        ("cat .env", "ask"),
        ("cat /etc/passwd", "ask"),
        ("cat ../outside", "ask"),
        ("cat ~/.ssh/id_rsa", "ask"),
        ("sort -uo out x", "ask"),
        ("tail -fn5 log", "ask"),
        ("sed -ni 1p x", "ask"),
        ("rg --pr x", "ask"),
        ("find . -delete", "ask"),
        ("git -C /tmp log", "ask"),
        ("git branch -D main", "ask"),
    ];
    let mut failures = Vec::new();
    for (command, want) in cases {
        let got = check(&sandbox, &[], command);
        if got["decision"] != *want {
            failures.push(format!("{command:?}: want {want}, got {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn check_says_which_list_decided_and_each_part() {
    let sandbox = Sandbox::new();
    let got = check(&sandbox, &[], "rg -n x src");
    assert_eq!(got["source"], "builtin");
    assert_eq!(got["rule"], "rg");
    let got = check(
        &sandbox,
        &["--allow", "cargo test"],
        "cargo test 2>&1 | tail -n 50",
    );
    assert_eq!(got["decision"], "allow");
    assert_eq!(got["source"], "flag", "a rule allowed a part: {got}");
    assert_eq!(
        got["parts"],
        serde_json::json!([
            {"command": "cargo test", "decision": "allow", "reason": "matches allow rule \"cargo test\"", "source": "flag", "rule": "cargo test"},
            {"command": "tail -n 50", "decision": "allow", "reason": "`tail` is on the built-in read-only list", "source": "builtin", "rule": "tail"},
        ])
    );
    let got = check(&sandbox, &[], "git status 2>/dev/null || true");
    assert_eq!(got["decision"], "allow", "{got}");
    assert_eq!(got["source"], "builtin");
    let got = check(&sandbox, &[], "cat x | sh");
    assert_eq!(got["decision"], "ask", "{got}");
    let got = check(&sandbox, &["--deny", "rm -rf"], "ls | head && rm -rf x");
    assert_eq!(got["decision"], "deny", "{got}");
    sandbox
        .agent()
        .args(["check", "rg -n x src"])
        .assert()
        .code(0)
        .stdout("allow: `rg` is on the built-in read-only list (source: builtin, rule: \"rg\")\n");
}

#[test]
fn strict_keeps_the_old_list() {
    let sandbox = Sandbox::new();
    sandbox.settings("[permissions]\nread_only = \"strict\"\n");
    for command in ["cat package.json", "ls | head", "git status 2>/dev/null"] {
        let got = check(&sandbox, &[], command);
        assert_eq!(got["decision"], "ask", "{command}: {got}");
    }
    assert_eq!(check(&sandbox, &[], "ls -la")["decision"], "allow");
    let output = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(shown["permissions.read_only"]["value"], "strict");
}

#[test]
fn the_default_list_is_inspect() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(shown["permissions.read_only"]["value"], "inspect");
}

#[test]
fn dash_c_is_the_workspace_of_check() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.work().join("sub")).unwrap();
    let got = check(&sandbox, &["-C", "sub"], "cat ../README.md");
    assert_eq!(
        got["decision"], "ask",
        "-C sub makes `..` leave the workspace: {got}"
    );
    assert_eq!(
        check(&sandbox, &[], "cat sub/../README.md")["decision"],
        "allow"
    );
}

#[test]
fn a_model_reads_with_a_pipeline_without_a_prompt() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.work().join("src")).unwrap();
    std::fs::write(sandbox.work().join("src/lib.rs"), "fn needle() {}\n").unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call("grep -rn needle src 2>/dev/null | head -n 5", "find it"),
        turn_text("found"),
    ]);
    sandbox
        .openai_run(&server)
        .env("CI", "true")
        .arg("find needle")
        .assert()
        .success();
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("fn needle"), "{results:?}");
}

#[test]
fn the_working_directory_is_where_paths_are_judged() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.work().join("src")).unwrap();
    std::fs::write(sandbox.work().join("secret-outside.txt"), "x").unwrap();
    let call = |command: &str, dir: &str| {
        let arguments = serde_json::json!({
            "command": command, "description": "look", "working_directory": dir,
        })
        .to_string();
        super::fake_model::Turn::default().with_call("call_wd", "shell", &arguments)
    };
    // From src/, `../../x` leaves the workspace: without a terminal that ask is a denial.
    let server = FakeModel::openai_turns([call("cat ../../etc", "src"), turn_text("no")]);
    sandbox
        .openai_run(&server)
        .env("CI", "true")
        .arg("look")
        .assert()
        .success();
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("EDENIED"), "{results:?}");
    // From src/, `../secret-outside.txt` is still inside: it runs.
    let server =
        FakeModel::openai_turns([call("cat ../secret-outside.txt", "src"), turn_text("ok")]);
    sandbox
        .openai_run(&server)
        .env("CI", "true")
        .arg("look")
        .assert()
        .success();
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("\"exit_code\":0"), "{results:?}");
}

#[test]
fn a_bare_repository_in_the_workspace_cannot_run_its_configured_programs() {
    // A project can carry a directory shaped like a bare repository (plain files), whose
    // `config` names programs git runs. `git -C evil.git log` is on the read-only list; the
    // runner's `safe.bareRepository=explicit` keeps git from taking it for a repository.
    let sandbox = Sandbox::new();
    let evil = sandbox.work().join("evil.git");
    let evil_text = evil.to_string_lossy();
    let init = git(&sandbox.work(), &["init", "-q", "--bare", &evil_text]);
    assert!(init.status.success(), "{init:?}");
    let marker = sandbox.work().join("pwned");
    let program = format!("sh -c 'echo ran > {}'", marker.display());
    for key in ["core.pager", "diff.external", "core.fsmonitor"] {
        let set = git(&evil, &["config", key, &program]);
        assert!(set.status.success(), "{set:?}");
    }
    assert_eq!(
        check(&sandbox, &[], "git -C evil.git log")["decision"],
        "allow"
    );
    assert_eq!(
        check(&sandbox, &[], "git --git-dir=evil.git log")["decision"],
        "ask"
    );
    let server = FakeModel::openai_turns([
        turn_tool_call(
            "git -C evil.git log -p -- x.rs; git -C evil.git diff",
            "look",
        ),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        .env("CI", "true")
        .arg("look")
        .assert()
        .success();
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("safe.bareRepository"), "{results:?}");
    assert!(
        !marker.exists(),
        "a program from the bare repository's config ran"
    );
}

/// Commands judge secret files by the same list as the file tools: the built-in one plus the
/// user's `ask_read` (issue 33), in `cat`, in a search operand and in git objects alike.
#[test]
fn commands_use_the_users_ask_read_too() {
    let sandbox = Sandbox::new();
    let before = check(&sandbox, &[], "cat infra/prod.tfstate");
    assert_eq!(before["decision"], "allow", "{before}");
    sandbox.settings("[permissions.files]\nask_read = [\"*.tfstate\", \"vault/**\"]\n");
    for command in [
        "cat infra/prod.tfstate",
        "grep x infra/*.tfstat?",
        "git show HEAD:infra/prod.tfstate",
        "git log -p -- vault",
        "cat vault/key",
    ] {
        let got = check(&sandbox, &[], command);
        assert_eq!(got["decision"], "ask", "{command}: {got}");
    }
    let got = check(&sandbox, &[], "cat infra/main.tf");
    assert_eq!(got["decision"], "allow", "{got}");
}
