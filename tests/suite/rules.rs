//! `agent rules`: every allow and deny rule with where it comes from (user file, this
//! workspace's table in it, a profile, the project file, a flag), and `rules remove`
//! taking one out of the user file with its comments kept.

use predicates::prelude::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::Sandbox;

fn settings_for(sandbox: &Sandbox) -> String {
    let work = sandbox.work().canonicalize().unwrap();
    format!(
        "# my rules\n[permissions.commands]\nallow = [\"git status\", \"touch\"] # both\ndeny = [\"sudo\"]\n\n[projects.\"{}\".permissions.commands]\nallow = [\"cargo test\"]\n\n[projects.\"/elsewhere\".permissions.commands]\nallow = [\"make\"]\n\n[profiles.ci]\nallow = [\"cargo build\"]\n",
        work.display()
    )
}

#[test]
fn rules_lists_every_rule_with_its_source() {
    let sandbox = Sandbox::new();
    sandbox.settings(&settings_for(&sandbox));
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        "[permissions.commands]\ndeny = [\"git push\"]\n",
    )
    .unwrap();
    let output = sandbox
        .agent()
        .args(["--profile", "ci", "rules", "--json", "--allow", "ls -la"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows: Vec<Value> = listed["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| json!([rule["kind"], rule["rule"], rule["source"], rule["line"]]))
        .collect();
    assert_eq!(
        rows,
        vec![
            json!(["allow", "git status", "user", 3]),
            json!(["allow", "touch", "user", 3]),
            json!(["deny", "sudo", "user", 4]),
            json!(["allow", "cargo test", "user-project", 7]),
            json!(["allow", "cargo build", "profile", 13]),
            json!(["deny", "git push", "project", 2]),
            json!(["allow", "ls -la", "flag", null]),
        ]
    );
    let text = sandbox.agent().args(["rules"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    let file = sandbox.config_dir().join("settings.toml");
    assert!(
        text.contains(&format!("allow  touch       # user {}:3\n", file.display())),
        "{text}"
    );
    assert!(text.contains("deny   git push    # project "), "{text}");
    assert!(!text.contains("make"), "another project's rule:\n{text}");
}

#[test]
fn rules_remove_takes_a_rule_out_keeping_comments() {
    let sandbox = Sandbox::new();
    let settings = settings_for(&sandbox);
    sandbox.settings(&settings);
    sandbox.agent().args(["check", "touch X"]).assert().code(0);
    sandbox
        .agent()
        .args(["rules", "remove", "touch"])
        .assert()
        .success()
        .stdout(predicate::str::contains("removed \"touch\" from "))
        .stdout(predicate::str::contains(
            "(allow in [permissions.commands])",
        ));
    let file = sandbox.config_dir().join("settings.toml");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        settings.replace(
            "[\"git status\", \"touch\"] # both",
            "[\"git status\"] # both"
        )
    );
    sandbox.agent().args(["check", "touch X"]).assert().code(3);
    sandbox
        .agent()
        .args(["rules", "remove", "cargo test"])
        .assert()
        .success()
        .stdout(predicate::str::contains("[projects."));
    sandbox
        .agent()
        .args(["check", "cargo test"])
        .assert()
        .code(3);
}

#[test]
fn rules_remove_says_where_a_rule_it_cannot_remove_lives() {
    let sandbox = Sandbox::new();
    sandbox.settings("[permissions.commands]\nallow = [\"ls\"]\n");
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        "[permissions.commands]\ndeny = [\"git push\"]\n",
    )
    .unwrap();
    sandbox
        .agent()
        .args(["rules", "remove", "git push"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("it comes from project "));
    sandbox
        .agent()
        .args(["rules", "remove", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`agent rules` lists"));
    assert_eq!(
        std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap(),
        "[permissions.commands]\nallow = [\"ls\"]\n"
    );
}

#[test]
fn no_rules_says_how_to_add_one() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .arg("rules")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("no allow or deny rules"));
}

/// `agent check COMMAND` exits with each status (0 allow, 3 ask, 4 deny).
fn check_exits(sandbox: &Sandbox, cases: &[(&str, i32)]) {
    for (command, code) in cases {
        sandbox
            .agent()
            .args(["check", command])
            .assert()
            .code(*code);
    }
}

#[test]
fn rules_add_list_and_remove_round_trip_keeping_comments() {
    let sandbox = Sandbox::new();
    let original = "# my settings\n[permissions.commands]\n# the usual\nallow = [\"ls\"] # keep me\n\n[limits]\nmax_turns = 9 # nine\n";
    sandbox.settings(original);
    let file = sandbox.config_dir().join("settings.toml");
    sandbox
        .agent()
        .args(["check", "python3 -m pytest -x tests/"])
        .assert()
        .code(3);
    sandbox
        .agent()
        .args(["rules", "add", "python3 -m pytest"])
        .assert()
        .success()
        .stdout(format!(
            "added allow rule \"python3 -m pytest\" to [permissions.commands] in {}\n",
            file.display()
        ));
    // Written as `a` writes it: the same list, comments kept; and it applies at once.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original.replace("[\"ls\"]", "[\"ls\", \"python3 -m pytest\"]")
    );
    check_exits(
        &sandbox,
        &[
            ("python3 -m pytest -x tests/", 0),
            ("python3 -c 'print(1)'", 3),
        ],
    );
    // Twice: nothing changes.
    sandbox
        .agent()
        .args(["rules", "add", "python3  -m pytest"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "already in [permissions.commands]",
        ));
    // --project writes the workspace's table, as `3` does.
    let output = sandbox
        .agent()
        .args(["rules", "add", "--project", "--json", "make test"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let added: Value = serde_json::from_slice(&output.stdout).unwrap();
    let work = sandbox.work().canonicalize().unwrap();
    assert_eq!(added["added"], "make test");
    assert_eq!(added["kind"], "allow");
    assert_eq!(added["changed"], true);
    assert_eq!(
        added["table"],
        format!("[projects.\"{}\".permissions.commands]", work.display())
    );
    let listed = sandbox.agent().args(["rules", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let rows: Vec<Value> = listed["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| json!([rule["kind"], rule["rule"], rule["source"]]))
        .collect();
    assert_eq!(
        rows,
        vec![
            json!(["allow", "ls", "user"]),
            json!(["allow", "python3 -m pytest", "user"]),
            json!(["allow", "make test", "user-project"]),
        ]
    );
    check_exits(&sandbox, &[("make test", 0), ("make deploy", 3)]);
    for rule in ["python3 -m pytest", "make test"] {
        sandbox
            .agent()
            .args(["rules", "remove", rule])
            .assert()
            .success();
    }
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(original.trim_end_matches("\n\n[limits]\nmax_turns = 9 # nine\n")),
        "{text}"
    );
    assert!(text.contains("max_turns = 9 # nine\n"), "{text}");
    assert!(text.contains("allow = [\"ls\"] # keep me\n"), "{text}");
    assert!(
        !text.contains("pytest") && !text.contains("make test"),
        "{text}"
    );
}

#[test]
fn rules_add_refuses_a_rule_that_would_allow_anything() {
    let sandbox = Sandbox::new();
    sandbox.settings("# mine\n");
    for (rule, why) in [
        ("python", "`python3 -m pytest`"),
        ("python3", "runs code"),
        ("bash", "runs any command"),
        ("sh", "runs any command"),
        ("make", "`make test`"),
        ("npx", "`npx jest`"),
        ("sudo apt", "protected program"),
        ("env", "runs the command given after it"),
        ("git status; rm -rf x", "plain words"),
        ("ls\nrm", "control character"),
    ] {
        let output = sandbox
            .agent()
            .args(["rules", "add", rule])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{rule:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{rule:?}: one line: {stderr}");
        assert!(
            stderr.starts_with("agent: cannot add allow rule `") && stderr.contains(why),
            "{rule:?}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap(),
        "# mine\n"
    );
}

#[test]
fn rules_add_deny_writes_a_deny_rule_that_applies() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args(["rules", "add", "--deny", "git push"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("added deny rule \"git push\""));
    assert_eq!(
        std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap(),
        "[permissions.commands]\ndeny = [\"git push\"]\n"
    );
    sandbox
        .agent()
        .args(["check", "git push --force origin main"])
        .assert()
        .code(4);
    sandbox
        .agent()
        .args(["rules", "add", "--deny", "--project", "make deploy"])
        .assert()
        .success();
    sandbox
        .agent()
        .args(["check", "make deploy"])
        .assert()
        .code(4);
    sandbox
        .agent()
        .args(["rules", "add", "--deny", "--", "-rf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("starts with the program"));
}
