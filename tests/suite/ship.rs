//! What ships besides the binary: completion scripts and the man page checked
//! in and in sync, the example settings file, `--help` and `--version`.

use super::harness::Sandbox;
use predicates::prelude::*;
use pretty_assertions::assert_eq;

#[test]
fn checked_in_completions_and_man_page_match_the_binary() {
    let sandbox = Sandbox::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<(Vec<&str>, String)> = ["bash", "zsh", "fish", "elvish", "powershell"]
        .into_iter()
        .map(|shell| {
            (
                vec!["completions", shell],
                format!("completions/agent.{shell}"),
            )
        })
        .collect();
    cases.push((vec!["man"], "completions/agent.1".to_owned()));
    for (args, file) in cases {
        let output = sandbox.agent().args(&args).output().unwrap();
        assert!(output.status.success(), "{args:?}");
        let checked_in = std::fs::read_to_string(root.join(&file)).unwrap_or_default();
        assert!(
            String::from_utf8_lossy(&output.stdout) == checked_in,
            "{file} is out of date: regenerate it with `cargo run -- {} > {file}`",
            args.join(" ")
        );
    }
}

#[test]
fn config_init_writes_the_example_and_never_overwrites() {
    let sandbox = Sandbox::new();
    let path = sandbox.config_dir().join("settings.toml");
    sandbox
        .agent()
        .args(["config", "init"])
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote"));
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("[permissions.commands]"));
    std::fs::write(&path, "# mine\n").unwrap();
    sandbox
        .agent()
        .args(["config", "init"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# mine\n");
}

#[test]
fn the_example_settings_parse_without_warnings() {
    let sandbox = Sandbox::new();
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/settings.example.toml");
    let output = sandbox
        .agent()
        .arg("--config")
        .arg(&example)
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(shown["permissions.mode"]["value"], "ask");
    assert_eq!(shown["permissions.commands.deny"][0]["value"], "rm -rf");
    assert_eq!(shown["warnings"], serde_json::json!([]));
}

#[test]
fn version_and_help_need_no_settings() {
    let sandbox = Sandbox::new();
    sandbox.settings("this is [ not toml");
    sandbox
        .agent()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with(format!(
            "agent {}",
            env!("CARGO_PKG_VERSION")
        )));
    for sub in ["run", "check", "exec", "history", "config", "completions"] {
        sandbox
            .agent()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Usage: agent"));
    }
}

#[test]
fn a_malformed_settings_file_stops_everything_with_file_and_line() {
    let sandbox = Sandbox::new();
    sandbox.settings("[limits]\ntimeout_secs = \"soon\"\n");
    sandbox
        .agent()
        .args(["check", "ls"])
        .assert()
        .code(2)
        .stderr(predicate::str::is_match(r"^agent: .*settings\.toml:2: `limits\.timeout_secs` must be an integer: fix the settings file\n$").unwrap());
    sandbox
        .agent()
        .args(["run", "--provider", "demo", "list the files"])
        .assert()
        .code(2);
}

#[test]
fn config_show_names_each_source() {
    let sandbox = Sandbox::new();
    sandbox.settings("[limits]\nmax_turns = 7\n[permissions.commands]\nallow = [\"git status\"]\n");
    std::fs::create_dir(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        "[limits]\ntimeout_secs = 10\n",
    )
    .unwrap();
    let output = sandbox
        .agent()
        .env("AGENT_MODEL", "m1")
        .args(["config", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("limits.max_turns = 7").contains("# user "), "{text}");
    assert!(
        line("limits.timeout_secs = 10").contains("# project "),
        "{text}"
    );
    assert!(
        line("model.model = \"m1\"").contains("# env AGENT_MODEL"),
        "{text}"
    );
    assert!(
        line("permissions.commands.allow = \"git status\"").contains("# user "),
        "{text}"
    );
    assert!(
        line("limits.max_output_chars = 100000").contains("# default"),
        "{text}"
    );
    // A model named (here by AGENT_MODEL) means a real provider, never the demo (issue 11).
    assert!(
        line("model.provider = \"openai\"").contains("a model or base URL is configured"),
        "{text}"
    );
}

#[test]
fn config_path_honours_agent_config_dir() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args(["config", "path"])
        .assert()
        .success()
        .stdout(format!(
            "{}\n",
            sandbox.config_dir().join("settings.toml").display()
        ));
}

#[test]
fn an_unknown_profile_lists_the_defined_ones() {
    let sandbox = Sandbox::new();
    sandbox.settings("[profiles.fast]\nmax_turns = 3\n");
    sandbox
        .agent()
        .args(["--profile", "slow", "config", "show"])
        .assert()
        .code(2)
        .stderr("agent: unknown profile `slow`: defined profiles are fast\n");
}

#[test]
fn unknown_keys_warn() {
    let sandbox = Sandbox::new();
    sandbox.settings("[permissions.commands]\nalow = [\"ls\"]\n");
    sandbox
        .agent()
        .args(["check", "ls"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "unknown key `alow` in [permissions.commands] is ignored (did you mean `allow`?)",
        ));
}

/// The release sections of a changelog, newest first: `## [Unreleased]` (no
/// date) and `## [X.Y.Z] - YYYY-MM-DD`; an error names a heading of another shape.
fn releases(changelog: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let shape =
        regex::Regex::new(r"^## \[(Unreleased|\d+\.\d+\.\d+)\](?: - (\d{4}-[01]\d-[0-3]\d))?$")
            .unwrap();
    changelog
        .lines()
        .filter(|line| line.starts_with("## "))
        .map(|line| {
            let found = shape
                .captures(line)
                .ok_or_else(|| format!("a heading of another shape: {line}"))?;
            let (name, date) = (
                found[1].to_owned(),
                found.get(2).map(|d| d.as_str().to_owned()),
            );
            if (name == "Unreleased") == date.is_some() {
                return Err(format!("only [Unreleased] goes without a date: {line}"));
            }
            Ok((name, date))
        })
        .collect()
}

/// Why `changelog` does not describe `version` as its latest release, if it does not.
fn unreleased_version(changelog: &str, version: &str) -> Option<String> {
    let releases = match releases(changelog) {
        Ok(releases) => releases,
        Err(error) => return Some(error),
    };
    let names: Vec<&str> = releases.iter().map(|(name, _)| name.as_str()).collect();
    if names.first() != Some(&"Unreleased") {
        return Some(format!("the first section is not [Unreleased]: {names:?}"));
    }
    let numbers: Vec<Vec<u64>> = names[1..]
        .iter()
        .map(|name| name.split('.').map(|n| n.parse().unwrap_or(0)).collect())
        .collect();
    let dates: Vec<&Option<String>> = releases[1..].iter().map(|(_, date)| date).collect();
    if numbers.windows(2).any(|pair| pair[0] <= pair[1]) || dates.windows(2).any(|d| d[0] < d[1]) {
        return Some(format!("the releases are not newest first: {names:?}"));
    }
    match names.get(1) {
        Some(&latest) if latest == version => None,
        latest => Some(format!(
            "Cargo.toml says {version}, the CHANGELOG's latest release is {latest:?}: add a section `## [{version}] - YYYY-MM-DD` below [Unreleased], or set the version"
        )),
    }
}

#[test]
fn the_version_is_the_changelogs_latest_release() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let changelog = std::fs::read_to_string(root.join("CHANGELOG.md")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(unreleased_version(&changelog, version), None);
    // The check itself: every way the two can part is found.
    let good = "# Changelog\n\n## [Unreleased]\n\n## [0.3.0] - 2026-12-04\n\n### Added\n- a\n\n## [0.2.0] - 2026-12-03\n";
    assert_eq!(unreleased_version(good, "0.3.0"), None);
    for (changelog, version) in [
        (good, "0.4.0"),
        (good, "0.2.0"),
        (&good.replace("## [Unreleased]\n\n", "")[..], "0.3.0"),
        (&good.replace(" - 2026-12-04", "")[..], "0.3.0"),
        (
            &good.replace("[0.3.0] - 2026-12-04", "0.3.0 - 2026-12-04")[..],
            "0.3.0",
        ),
        (&good.replace("2026-12-04", "04.12.2026")[..], "0.3.0"),
        (
            &good.replace("[Unreleased]", "[Unreleased] - 2026-12-05")[..],
            "0.3.0",
        ),
        (&good.replace("2026-12-03", "2026-12-05")[..], "0.3.0"),
        (&good.replace("[0.2.0]", "[0.4.0]")[..], "0.3.0"),
    ] {
        assert!(
            unreleased_version(changelog, version).is_some(),
            "{version} passed against:\n{changelog}"
        );
    }
}

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let sandbox = Sandbox::new();
    let output = sandbox.agent().arg("--version").output().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let head = super::support::git::command(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned());
    let version = env!("CARGO_PKG_VERSION");
    match head {
        // Built from a clone: the commit is the one checked out now (the build
        // script runs again when HEAD or its branch moves).
        Some(head) => {
            let commit = printed
                .strip_prefix(&format!("agent {version} ("))
                .and_then(|rest| rest.strip_suffix(')'))
                .unwrap_or_else(|| panic!("no commit in `{printed}`"));
            assert!(
                commit.len() >= 7 && head.starts_with(commit),
                "`{printed}` is not HEAD {head}"
            );
        }
        None => assert_eq!(printed, format!("agent {version}")),
    }
}
