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
