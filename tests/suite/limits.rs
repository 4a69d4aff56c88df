//! The CPU time and memory of a command the read-only list allowed (it runs with nobody's
//! yes, in the read-only sandbox): a runaway look is stopped by its limits, not by the
//! timeout; a command allowed by a rule keeps today's limits. Linux with Landlock only
//! (skipped through `support::require` elsewhere, like the sandbox's tests).

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::sandbox::available;

/// Runs `command` as the model's one call with `flags`, and the result the model got back.
fn result_of(sandbox: &Sandbox, command: &str, flags: &[&str]) -> serde_json::Value {
    let server = FakeModel::openai_turns([turn_tool_call(command, "look"), turn_text("done")]);
    let tmp = sandbox.root.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    sandbox
        .openai_run(&server)
        .env("TMPDIR", &tmp)
        .args(flags)
        .arg("look")
        .assert()
        .success();
    let results = server.request(1).tool_results();
    serde_json::from_str(&results[0].1).unwrap()
}

/// `jq -n 'last(range(1e18))'` only computes: allowed by the read-only list, it is ended by
/// its CPU limit (SIGXCPU, or SIGKILL at the hard limit; the shell may report either as
/// 128 + the signal), long before the minute-long timeout, and the model is told why.
#[test]
fn a_look_that_only_computes_is_stopped_by_its_cpu_limit() {
    if !available() {
        return;
    }
    let sandbox = Sandbox::new();
    sandbox.settings("[limits]\ninspect_cpu_secs = 2\n");
    let result = result_of(&sandbox, "jq -n 'last(range(1e18))'", &["--timeout", "60"]);
    assert_eq!(result["timed_out"], false, "{result}");
    let (sigxcpu, sigkill) = (24, 9);
    let ended = [sigxcpu, sigkill]
        .into_iter()
        .any(|signal| result["signal"] == signal || result["exit_code"] == 128 + signal);
    assert!(ended, "not ended by the CPU limit: {result}");
    let note = result["sandbox_note"].as_str().unwrap_or_default();
    assert!(note.contains("CPU-time limit (2 s"), "{result}");
}

/// A look that builds a huge value fails its allocation at the memory limit (and the model is
/// told why); the same command allowed by a rule (not a look: it may need what a build needs)
/// has no such limit.
#[test]
fn a_look_that_fills_memory_fails_at_its_limit_and_a_rule_keeps_todays_limits() {
    if !available() {
        return;
    }
    let sandbox = Sandbox::new();
    sandbox.settings("[limits]\ninspect_memory_mb = 16\n");
    let command = "jq -n '[range(1000000)] | length'";
    let look = result_of(&sandbox, command, &[]);
    assert_ne!(look["exit_code"], 0, "{look}");
    assert!(
        look["stderr"].as_str().unwrap().contains("allocate"),
        "{look}"
    );
    let note = look["sandbox_note"].as_str().unwrap_or_default();
    assert!(note.contains("memory limit (16 MiB"), "{look}");
    let ruled = result_of(&sandbox, command, &["--allow", "jq"]);
    assert_eq!(ruled["exit_code"], 0, "{ruled}");
    assert_eq!(ruled["stdout"], "1000000\n");
}

/// Without settings a look gets the default limits, which the command cannot lift: it sees
/// them in its own `/proc/self/limits` (read by a stand-in `ls` in the workspace, as a
/// misjudged "read-only" program would).
#[cfg(unix)]
#[test]
fn a_look_has_the_default_limits_in_its_own_process() {
    if !available() {
        return;
    }
    let sandbox = Sandbox::new();
    let script = "#!/bin/sh\nulimit -t unlimited 2>/dev/null; \
                  grep -E 'cpu time|data size' /proc/self/limits\n";
    let path = super::harness::first_on_path(&sandbox.work().join("bin"), "ls", script);
    let server = FakeModel::openai_turns([turn_tool_call("ls", "list"), turn_text("done")]);
    sandbox
        .openai_run(&server)
        .env("PATH", &path)
        .arg("look")
        .assert()
        .success();
    let result: serde_json::Value =
        serde_json::from_str(&server.request(1).tool_results()[0].1).unwrap();
    let limits: Vec<Vec<String>> = result["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .map(|line| {
            line.split_whitespace()
                .rev()
                .skip(1)
                .take(2)
                .map(str::to_owned)
                .collect()
        })
        .collect();
    let data = (2048_u64 << 20).to_string();
    assert_eq!(
        limits,
        [vec!["11", "10"], vec![data.as_str(), data.as_str()]],
        "{result}"
    );
}
