//! `agent exec`: the runner driven through the real binary.

use super::harness::{Sandbox, json, kill_left, left_running};
use pretty_assertions::assert_eq;

fn exec_json(sandbox: &Sandbox, args: &[&str]) -> (serde_json::Value, Option<i32>) {
    let output = sandbox
        .agent()
        .arg("exec")
        .arg("--json")
        .args(args)
        .output()
        .expect("run");
    (json(&output), output.status.code())
}

#[test]
fn echo_exit_code_and_stderr_are_reported() {
    let sandbox = Sandbox::new();
    let (result, status) = exec_json(&sandbox, &["--", "echo out; echo err >&2; exit 3"]);
    assert_eq!(result["exit_code"], 3);
    assert_eq!(result["stdout"], "out\n");
    assert_eq!(result["stderr"], "err\n");
    assert_eq!(result["timed_out"], false);
    assert_eq!(result["truncated"], false);
    assert_eq!(result["error"], serde_json::Value::Null);
    assert!(result["duration_ms"].is_u64());
    assert_eq!(status, Some(3));
}

#[test]
fn plain_mode_streams_output_and_keeps_the_exit_code() {
    let sandbox = Sandbox::new();
    sandbox
        .agent()
        .args([
            "exec", "echo", "hello", "world;", "echo", "oops", ">&2;", "exit", "5",
        ])
        .assert()
        .code(5)
        .stdout("hello world\n")
        .stderr("oops\n");
}

#[test]
fn unicode_passes_and_invalid_utf8_is_replaced() {
    let sandbox = Sandbox::new();
    let (result, _) = exec_json(&sandbox, &["printf 'héllo ✓ 🦀\\n'; printf 'a\\377b' >&2"]);
    assert_eq!(result["stdout"], "héllo ✓ 🦀\n");
    assert_eq!(result["stderr"], "a\u{fffd}b");
}

#[test]
fn timeout_kills_the_whole_group() {
    let sandbox = Sandbox::new();
    let (result, status) = exec_json(
        &sandbox,
        &["--timeout", "1", "--", "sleep 100 & sleep 100; echo never"],
    );
    assert_eq!(result["stdout"], "", "{result}");
    assert_eq!(result["timed_out"], true);
    assert_eq!(result["error"]["code"], "ETIMEDOUT");
    assert_eq!(status, Some(124));
    let ms = result["duration_ms"].as_u64().unwrap();
    assert!((1000..4000).contains(&ms), "returned after {ms} ms");
    let left = left_running(&sandbox.work());
    kill_left(&sandbox.work());
    assert!(left.is_empty(), "{left:?} survived the timeout");
}

#[test]
fn a_child_ignoring_term_is_killed_after_the_grace() {
    let sandbox = Sandbox::new();
    let (result, _) = exec_json(
        &sandbox,
        &["--timeout", "0.5", "--", "trap '' TERM; sleep 100"],
    );
    assert_eq!(result["timed_out"], true);
    assert_eq!(result["signal"], 9, "{result}");
    let ms = result["duration_ms"].as_u64().unwrap();
    assert!(ms >= 5000, "KILL came before the 5 s grace: {ms} ms");
    let left = left_running(&sandbox.work());
    kill_left(&sandbox.work());
    assert!(left.is_empty(), "{left:?} survived SIGKILL");
}

#[test]
fn a_background_grandchild_does_not_hold_the_call() {
    let sandbox = Sandbox::new();
    let (result, status) = exec_json(&sandbox, &["sleep 60 & echo hi"]);
    let stdout = result["stdout"].as_str().unwrap();
    let work = sandbox.work();
    // SIGKILL is delivered when the process is next scheduled: give it a moment to die.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !left_running(&work).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let alive = !left_running(&work).is_empty();
    kill_left(&work);
    assert_eq!(stdout, "hi\n");
    assert_eq!(status, Some(0));
    let ms = result["duration_ms"].as_u64().unwrap();
    assert!(ms < 10_000, "waited for the grandchild: {ms} ms");
    assert!(!alive, "the background `sleep` outlived its call");
}

#[test]
fn fifty_megabytes_are_truncated_with_head_tail_and_marker() {
    let sandbox = Sandbox::new();
    let (result, status) = exec_json(
        &sandbox,
        &[
            "--max-output-chars",
            "1000",
            "--",
            "printf START; head -c 50000000 /dev/zero | tr '\\0' a; printf END; exit 7",
        ],
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert_eq!(result["truncated"], true);
    assert_eq!(result["exit_code"], 7);
    assert_eq!(status, Some(7));
    assert!(stdout.starts_with("STARTaaa"), "{}", &stdout[..20]);
    assert!(
        stdout.ends_with("aaaEND"),
        "{}",
        &stdout[stdout.len() - 20..]
    );
    assert!(
        stdout.contains("[… 49999008 characters omitted …]"),
        "{stdout}"
    );
    let kept: usize = stdout
        .lines()
        .filter(|line| !line.contains("omitted"))
        .map(str::len)
        .sum();
    assert_eq!(kept, 1000);
}

#[test]
fn default_cap_is_one_hundred_thousand_characters() {
    let sandbox = Sandbox::new();
    let (result, _) = exec_json(
        &sandbox,
        &["awk 'BEGIN { while (i++ < 300000) printf \"é\" }'"],
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert_eq!(result["truncated"], true);
    assert_eq!(stdout.matches('é').count(), 100_000);
}

#[test]
fn a_missing_working_directory_is_ecwd() {
    let sandbox = Sandbox::new();
    let missing = sandbox.root.path().join("missing");
    sandbox
        .agent()
        .args(["exec", "-C"])
        .arg(&missing)
        .arg("touch x")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("does not exist"));
}

#[test]
fn working_directory_flag_is_used() {
    let sandbox = Sandbox::new();
    std::fs::create_dir(sandbox.work().join("sub")).unwrap();
    let (result, _) = exec_json(&sandbox, &["-C", "sub", "--", "pwd"]);
    assert!(
        result["stdout"]
            .as_str()
            .unwrap()
            .trim_end()
            .ends_with("/work/sub"),
        "{result}"
    );
}

#[test]
fn command_not_found_is_127_with_a_hint() {
    let sandbox = Sandbox::new();
    let (result, status) = exec_json(&sandbox, &["no-such-program-xyz --flag"]);
    assert_eq!(result["exit_code"], 127);
    assert_eq!(result["error"]["code"], "ENOENT");
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not found")
    );
    assert_eq!(status, Some(127));
    sandbox
        .agent()
        .args(["exec", "no-such-program-xyz"])
        .assert()
        .code(127)
        .stderr(predicates::str::contains("agent: command not found"));
}

#[test]
fn api_keys_and_loader_variables_are_scrubbed_and_stdin_is_null() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .agent()
        .env("OPENAI_API_KEY", "sk-secret")
        .env("ANTHROPIC_API_KEY", "sk-ant-secret")
        .env("LD_PRELOAD", "/nonexistent.so")
        .env("KEEP_ME", "kept")
        .args(["exec", "--json", "--"])
        .arg("echo ${OPENAI_API_KEY:-none} ${ANTHROPIC_API_KEY:-none} ${LD_PRELOAD:-none} $KEEP_ME; cat")
        .write_stdin("stdin must not reach the command")
        .output()
        .unwrap();
    assert_eq!(json(&output)["stdout"], "none none none kept\n");
}

#[test]
fn missing_command_is_a_usage_error() {
    Sandbox::new().agent().arg("exec").assert().code(2);
}

/// A `working_directory` the model names outside the workspace (`/`, `..`, an absolute path
/// beside it, a symlink out and a path through one) is refused with `ECWD` and nothing runs,
/// even in mode allow-all without the sandbox. A directory inside runs (the control).
#[cfg(unix)]
#[test]
fn a_model_s_working_directory_outside_the_workspace_runs_nothing() {
    use super::fake_model::{FakeModel, Turn, turn_text};
    let sandbox = Sandbox::new();
    let outside = sandbox.root.path().join("outside");
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::create_dir_all(sandbox.work().join("inner")).unwrap();
    std::os::unix::fs::symlink(&outside, sandbox.work().join("out")).unwrap();
    let ran = outside.join("ran");
    let outside_text = outside.display().to_string();
    for (dir, runs) in [
        ("/", false),
        ("..", false),
        ("inner/../..", false),
        (outside_text.as_str(), false),
        ("out", false),
        ("out/sub", false),
        ("inner", true),
    ] {
        let arguments = serde_json::json!({
            "command": format!("touch '{}'", ran.display()),
            "description": "touch",
            "working_directory": dir,
        })
        .to_string();
        let call = Turn::default().with_call("call_cwd", "shell", &arguments);
        let server = FakeModel::openai_turns([call, turn_text("done")]);
        sandbox
            .openai_run(&server)
            .args(["--mode", "allow-all", "--sandbox", "off", "touch"])
            .assert()
            .success();
        let result = &server.request(1).tool_results()[0].1;
        assert_eq!(ran.exists(), runs, "{dir}: {result}");
        assert_eq!(result.contains("ECWD"), !runs, "{dir}: {result}");
        let _ = std::fs::remove_file(&ran);
    }
}
