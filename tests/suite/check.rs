//! `agent check`: decisions, exit statuses, `--stdin`, JSON, and the settings
//! layers that feed the rules. It must never run anything.

use super::harness::Sandbox;
use predicates::prelude::*;
use pretty_assertions::assert_eq;

#[test]
fn exit_status_is_the_decision() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args(["check", "ls -la"])
        .assert()
        .code(0)
        .stdout("allow: `ls` is on the built-in read-only list (source: builtin, rule: \"ls\")\n");
    sandbox
        .agent()
        .args(["check", "ls > x"])
        .assert()
        .code(3)
        .stdout(
            "ask: contains a redirection (`>x`; only 2>/dev/null, >/dev/null, &>/dev/null, 2>&1 \
             and < FILE are harmless) (source: parser)\n",
        );
    sandbox
        .agent()
        .args(["check", "--deny", "rm -rf", "--", "rm -rf /"])
        .assert()
        .code(4);
    sandbox
        .agent()
        .args(["check", "--", "-rf"])
        .assert()
        .code(3);
    sandbox.agent().arg("check").assert().code(2);
}

#[test]
fn json_has_decision_reason_source_and_rule() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .agent()
        .args(["check", "--json", "--deny", "git push", "--", "git push -f"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(4));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["decision"], "deny");
    assert_eq!(value["source"], "flag");
    assert_eq!(value["rule"], "git push");
    assert!(value["reason"].as_str().unwrap().contains("git push"));
    let output = sandbox
        .agent()
        .args(["check", "--json", "pwd"])
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["source"], "builtin");
    assert_eq!(value["rule"], "pwd");
}

#[test]
fn stdin_gives_one_line_per_command_and_the_strictest_status() {
    let sandbox = Sandbox::new();
    let input = "ls\ngit status\nrm -rf /tmp/x\n";
    sandbox
        .agent()
        .args(["check", "--stdin", "--deny", "rm"])
        .write_stdin(input)
        .assert()
        .code(4)
        .stdout(predicate::function(|out: &str| out.lines().count() == 3));
    let output = sandbox
        .agent()
        .args(["check", "--stdin", "--json"])
        .write_stdin("ls\ntouch x\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["command"], "ls");
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[1]["command"], "touch x");
    assert_eq!(lines[1]["decision"], "ask");
    sandbox
        .agent()
        .args(["check", "--stdin"])
        .write_stdin("pwd\nwhoami\n")
        .assert()
        .code(0);
    sandbox
        .agent()
        .args(["check", "--stdin"])
        .write_stdin(&b"ls \xff\n"[..])
        .assert()
        .code(3);
}

#[test]
fn it_never_runs_anything() {
    let sandbox = Sandbox::new();
    let marker = sandbox.work().join("ran");
    for command in [
        "touch ran",
        "sh -c 'touch ran'",
        "ls; touch ran",
        "echo $(touch ran)",
    ] {
        sandbox
            .agent()
            .args(["check", "--allow", "touch", "--", command])
            .assert()
            .code(predicate::in_iter([0, 3]));
        sandbox
            .agent()
            .args(["check", "--stdin"])
            .write_stdin(format!("{command}\n"))
            .assert()
            .code(predicate::in_iter([0, 3]));
    }
    assert!(!marker.exists());
}

#[test]
fn user_rules_apply_and_deny_beats_allow() {
    let sandbox = Sandbox::new();
    sandbox.settings(
        "[permissions.commands]\nallow = [\"git status\", \"touch\"]\ndeny = [\"touch\"]\n",
    );
    sandbox
        .agent()
        .args(["check", "git status -s"])
        .assert()
        .code(0);
    sandbox
        .agent()
        .args(["check", "git statusx"])
        .assert()
        .code(3);
    let output = sandbox
        .agent()
        .args(["check", "--json", "touch F"])
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["decision"], "deny");
    assert_eq!(value["source"], "user");
}

#[test]
fn a_project_file_adds_deny_rules_but_no_allow_rules() {
    let sandbox = Sandbox::new();
    std::fs::create_dir(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        "[permissions.commands]\nallow = [\"curl\"]\ndeny = [\"ls\"]\n",
    )
    .unwrap();
    sandbox
        .agent()
        .args(["check", "curl http://example.com"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "`permissions.commands.allow` is ignored: a project file cannot add allow rules",
        ));
    let output = sandbox
        .agent()
        .args(["check", "--json", "ls"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(4));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["source"], "project");
}

#[test]
fn modes_change_the_answer_but_never_a_deny() {
    let sandbox = Sandbox::new();
    sandbox.settings(
        "[permissions]\nmode = \"allow-all\"\n[permissions.commands]\ndeny = [\"curl\"]\n",
    );
    sandbox.agent().args(["check", "touch F"]).assert().code(0);
    sandbox.agent().args(["check", "rm F"]).assert().code(3);
    sandbox.agent().args(["check", "curl x"]).assert().code(4);
    sandbox.settings("[permissions]\nmode = \"deny\"\n");
    sandbox.agent().args(["check", "touch F"]).assert().code(4);
    sandbox.agent().args(["check", "ls"]).assert().code(0);
}

#[test]
fn windows_rules_on_request() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args(["check", "--os", "windows", "dir"])
        .assert()
        .code(0);
    sandbox
        .agent()
        .args(["check", "--os", "windows", "date /t"])
        .assert()
        .code(0);
    sandbox
        .agent()
        .args(["check", "--os", "windows", "date"])
        .assert()
        .code(3);
    sandbox
        .agent()
        .args([
            "check",
            "--os",
            "windows",
            "--deny",
            "del",
            "--",
            "DEL /q x & dir",
        ])
        .assert()
        .code(4);
}

/// The JSON lines of `agent check --json --stdin` for these commands under these flags.
fn json_lines(settings: &str, flags: &[&str], commands: &[&str]) -> Vec<serde_json::Value> {
    let sandbox = Sandbox::new();
    sandbox.settings(settings);
    let mut input = commands.join("\n");
    input.push('\n');
    let output = sandbox
        .agent()
        .args(["check", "--json", "--stdin"])
        .args(flags)
        .write_stdin(input)
        .output()
        .unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn json_prints_the_offered_prefix() {
    let commands = [
        "git status -s",
        "touch x",
        "npm run build -- --watch",
        "setarch x86_64 make",
        "python3.12 x.py",
        "sqlite3 x.db",
        "tmux new -d make",
        "ls",
    ];
    let prefixes: Vec<serde_json::Value> = json_lines("", &[], &commands)
        .into_iter()
        .map(|line| line["prefix"].clone())
        .collect();
    // `git status -s` and `ls` are allowed (the inspect list): no prefix to offer.
    let want = ["", "touch", "npm run build", "", "", "", "", ""];
    let want: Vec<serde_json::Value> = want
        .iter()
        .map(|p| {
            if p.is_empty() {
                serde_json::Value::Null
            } else {
                serde_json::Value::from(*p)
            }
        })
        .collect();
    assert_eq!(prefixes, want, "offered prefixes for {commands:?}");
}

#[test]
fn deny_rules_match_behind_any_wrapper_and_alias() {
    let commands = [
        "setarch x86_64 rm -rf victim",
        "sshpass -p x rm -rf victim",
        "hyperfine 'rm -rf x'",
        "git -c alias.p=push p origin main",
        "git send-pack origin main",
        "grep 'rm -rf' notes.txt",
        "git commit -m 'rm -rf old'",
        "git stash push",
    ];
    let flags = ["--deny", "rm -rf", "--deny", "git push"];
    let settings = "[permissions]\nmode = \"allow-all\"\n";
    let decisions: Vec<String> = json_lines(settings, &flags, &commands)
        .into_iter()
        .map(|line| line["decision"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        decisions,
        // The last three are not denied; `git commit` naming `rm` still asks in allow-all,
        // `grep` is an inspection program (its pattern is data).
        [
            "deny", "deny", "deny", "deny", "deny", "allow", "ask", "allow"
        ],
        "{commands:?}"
    );
}

#[test]
fn allow_rules_ask_for_options_that_reach_outside() {
    let commands = [
        "git log --show-signature",
        "npm run build -w ../other",
        "npm run build --workspace=../other",
        "npm run build -g",
        "npm run build --location=global",
        "npm run build -w packages/app",
    ];
    let flags = ["--allow", "git log", "--allow", "npm run build"];
    let decisions: Vec<String> = json_lines("", &flags, &commands)
        .into_iter()
        .map(|line| line["decision"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        decisions,
        ["ask", "ask", "ask", "ask", "ask", "allow"],
        "{commands:?}"
    );
}

/// `check --json` says whether the command, where it runs, runs inside the sandbox: as
/// `config show` says the sandbox is active, and never with `[sandbox] mode = "off"`; in
/// mode `auto` too.
#[test]
fn check_json_says_whether_the_command_runs_sandboxed() {
    let sandbox = Sandbox::new();
    let sandboxed = |mode: &str| {
        let output = sandbox
            .agent()
            .args(["check", "--json", "--mode", mode, "touch a"])
            .output()
            .unwrap();
        super::harness::json(&output)["sandboxed"].clone()
    };
    let shown = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let active = super::harness::json(&shown)["sandbox.active"]["value"].clone();
    assert!(active.is_boolean(), "{active}");
    for mode in ["ask", "auto", "allow-all"] {
        assert_eq!(sandboxed(mode), active, "{mode}");
    }
    sandbox.settings("[sandbox]\nmode = \"off\"\n");
    for mode in ["ask", "auto"] {
        assert_eq!(sandboxed(mode), false, "{mode}");
    }
}
