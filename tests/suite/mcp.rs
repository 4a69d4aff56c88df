//! MCP servers as tools, through the real binary, against `examples/mcp_test_server.rs` (a
//! hand-written stdio server that can also misbehave) and the fake model server: listing,
//! every call under the policy (denied without a terminal naming the rule, allowed by
//! `mcp:srv/tool`, deny winning, asked and allowed at a tmux terminal), the server fenced
//! (a write outside the workspace refused, a scrubbed environment, nothing left running
//! after the run), a project's proposal, and bad servers that cost one line each.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::fake_model::{FakeModel, Turn, turn_text};
use super::harness::{Sandbox, events, json as stdout_json, live_processes};

/// The test server, built once (`cargo test` builds examples; a focused `--test all` run
/// does not, so it is built here when missing).
fn server_program() -> PathBuf {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let agent = PathBuf::from(env!("CARGO_BIN_EXE_agent"));
            let profile_dir = agent.parent().unwrap().to_path_buf();
            let program = profile_dir.join(format!(
                "examples/mcp_test_server{}",
                std::env::consts::EXE_SUFFIX
            ));
            if !program.exists() {
                let target = profile_dir.parent().unwrap();
                let status = std::process::Command::new(option_env!("CARGO").unwrap_or("cargo"))
                    .args(["build", "--example", "mcp_test_server", "--target-dir"])
                    .arg(target)
                    .current_dir(env!("CARGO_MANIFEST_DIR"))
                    .status()
                    .unwrap();
                assert!(status.success(), "cannot build the MCP test server");
            }
            program
        })
        .clone()
}

/// A token unique to one test, in the server's command line.
fn token() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "mcptok{}x{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Settings with server `srv` in `mode` (and `extra` keys in its table).
fn settings(mode: &str, token: &str, extra: &str) -> String {
    format!(
        "[mcp.servers.srv]\ncommand = {:?}\nargs = [\"--mode\", {mode:?}, \"--token\", {token:?}]\n{extra}\n",
        server_program().display().to_string()
    )
}

/// A sandbox whose temp dir is its own (the server's private temp dir is made in it).
fn dirs() -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new();
    let tmp = sandbox.root.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    (sandbox, tmp)
}

/// [`dirs`] with the test server configured as `srv` in mode `normal`.
fn normal_server() -> (Sandbox, PathBuf) {
    let (sandbox, tmp) = dirs();
    sandbox.settings(&settings("normal", &token(), ""));
    (sandbox, tmp)
}

/// Processes (not zombies) whose command line holds `token`, found from outside.
fn running_with(token: &str) -> Vec<u32> {
    live_processes()
        .into_iter()
        .filter(|p| p.cmdline.contains(token) && p.pid != std::process::id())
        .map(|p| p.pid)
        .collect()
}

fn mcp_call(tool: &str, arguments: &Value) -> Turn {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let id = format!("mcp_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    Turn::default().with_call(&id, tool, &arguments.to_string())
}

/// One run calling `tool` then answering; (the result the model got, stdout, stderr).
fn one_call(
    sandbox: &Sandbox,
    tmp: &Path,
    tool: &str,
    arguments: &Value,
    flags: &[&str],
) -> (String, Vec<u8>, String) {
    let turns = vec![mcp_call(tool, arguments), turn_text("done")];
    let (server, stdout, stderr) = run_turns(sandbox, tmp, turns, flags);
    let results = server.request(1).tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    (results[0].1.clone(), stdout, stderr)
}

/// One successful run through `turns` with `flags`: the model server, stdout and stderr.
fn run_turns(
    sandbox: &Sandbox,
    tmp: &Path,
    turns: Vec<Turn>,
    flags: &[&str],
) -> (FakeModel, Vec<u8>, String) {
    let server = FakeModel::openai_turns(turns);
    let output = sandbox
        .openai_run(&server)
        .env("TMPDIR", tmp)
        .args(flags)
        .arg("use the tool")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    (server, output.stdout, stderr)
}

/// One run calling `echo` with `hi`: as [`one_call`].
fn echo(sandbox: &Sandbox, tmp: &Path, flags: &[&str]) -> (String, Vec<u8>, String) {
    one_call(
        sandbox,
        tmp,
        "mcp__srv__echo",
        &json!({"text": "hi"}),
        flags,
    )
}

#[test]
fn list_shows_each_server_its_tools_and_their_cost() {
    let (sandbox, tmp) = dirs();
    let token = token();
    sandbox.settings(&settings("normal", &token, ""));
    let output = sandbox
        .agent()
        .env("TMPDIR", &tmp)
        .args(["mcp", "list", "--json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let listed = stdout_json(&output);
    let server = &listed["servers"][0];
    assert_eq!(server["name"], "srv");
    assert_eq!(server["standing"], "configured");
    let names: Vec<&str> = server["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mcp__srv__echo"), "{names:?}");
    // A tool named like a built-in keeps its prefix; one with an invalid schema is dropped.
    assert!(names.contains(&"mcp__srv__shell"), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("bad")), "{names:?}");
    assert!(server["bytes"].as_u64().unwrap() > 100, "{server}");
    assert!(
        listed["notices"].to_string().contains("`bad` dropped"),
        "{listed}"
    );
    assert!(
        running_with(&token).is_empty(),
        "list left the server running"
    );

    let text = sandbox
        .agent()
        .env("TMPDIR", &tmp)
        .args(["mcp", "list"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("on every request"), "{text}");
    assert!(
        text.contains("mcp__srv__echo") && text.contains("(says read-only)"),
        "{text}"
    );
}

#[test]
fn without_a_terminal_a_call_is_denied_naming_the_rule_that_would_allow_it() {
    let (sandbox, tmp) = normal_server();
    let (result, stdout, stderr) = echo(&sandbox, &tmp, &[]);
    assert!(result.contains("EDENIED"), "{result}");
    assert!(result.contains("mcp:srv/echo"), "{result}");
    // The flag offered is one quoted shell word.
    let said = format!("{}{stderr}", String::from_utf8_lossy(&stdout));
    assert!(said.contains("--allow 'mcp:srv/echo'"), "{said}");
    assert!(!result.contains("echo: hi"), "{result}");
}

#[test]
fn a_rule_allows_a_call_and_the_result_and_events_follow() {
    let (sandbox, tmp) = dirs();
    let token = token();
    sandbox.settings(&settings("normal", &token, ""));
    for rule in ["mcp:srv/echo", "mcp:srv"] {
        let (result, stdout, _) = echo(&sandbox, &tmp, &["--allow", rule, "--json"]);
        assert!(result.contains("echo: hi"), "{rule}: {result}");
        let events = events(&stdout);
        let call = events.iter().find(|e| e["type"] == "mcp_call").unwrap();
        assert_eq!(call["server"], "srv");
        assert_eq!(call["tool"], "echo");
        assert_eq!(call["arguments"], json!({"text": "hi"}));
        let done = events.iter().find(|e| e["type"] == "mcp_result").unwrap();
        assert_eq!(done["chars"], 8, "{done}");
        assert!(done["duration_ms"].is_u64(), "{done}");
        let decision = events.iter().find(|e| e["type"] == "decision").unwrap();
        assert_eq!(decision["rule"], rule);
    }
    let transcript = sandbox.transcripts().join("\n");
    assert!(
        transcript.contains("\"type\":\"mcp_result\""),
        "{transcript}"
    );
    assert!(
        running_with(&token).is_empty(),
        "the server outlived the run"
    );
}

#[test]
fn a_deny_rule_wins_over_an_allow_rule() {
    let (sandbox, tmp) = normal_server();
    let (result, _, _) = echo(
        &sandbox,
        &tmp,
        &["--allow", "mcp:srv", "--deny", "mcp:srv/echo"],
    );
    assert!(
        result.contains("EDENIED") && result.contains("mcp:srv/echo"),
        "{result}"
    );
}

#[test]
fn results_are_capped_and_errors_images_are_told_to_the_model() {
    let (sandbox, tmp) = dirs();
    let limits = "[limits]\nmax_output_chars = 1000\n";
    sandbox.settings(&format!("{limits}{}", settings("normal", &token(), "")));
    let allow = ["--allow", "mcp:srv"];
    let (big, _, _) = one_call(
        &sandbox,
        &tmp,
        "mcp__srv__big",
        &json!({"bytes": 5000}),
        &allow,
    );
    assert!(
        big.contains("characters omitted") && big.contains("only 1000 are kept"),
        "{big}"
    );
    let (fail, _, _) = one_call(&sandbox, &tmp, "mcp__srv__fail", &json!({}), &allow);
    assert!(
        fail.contains("\"is_error\":true") && fail.contains("failed on purpose"),
        "{fail}"
    );
    let (image, _, _) = one_call(&sandbox, &tmp, "mcp__srv__image", &json!({}), &allow);
    assert!(image.contains("[image (image/png"), "{image}");
    // A resource link is listed for the model.
    assert!(
        image.contains("[resource link: pic.png <file:///srv/pic.png>]"),
        "{image}"
    );
    let (bad, _, _) = one_call(&sandbox, &tmp, "mcp__srv__echo", &json!([1]), &allow);
    assert!(bad.contains("EINVAL"), "{bad}");
}

#[test]
fn the_server_gets_only_the_environment_it_is_given() {
    let (sandbox, tmp) = dirs();
    sandbox.settings(&settings("normal", &token(), "env = { GIVEN = \"1\" }"));
    let (result, _, _) = one_call(
        &sandbox,
        &tmp,
        "mcp__srv__env",
        &json!({}),
        &["--allow", "mcp:srv/env"],
    );
    let names: Value = serde_json::from_str(&result).unwrap();
    let names = names["content"].as_str().unwrap().to_owned();
    assert!(names.contains("GIVEN") && names.contains("PATH"), "{names}");
    for secret in ["OPENAI_API_KEY", "AGENT_CONFIG_DIR", "XDG_STATE_HOME"] {
        assert!(
            !names.contains(secret),
            "{secret} reached the server: {names}"
        );
    }
}

#[test]
fn the_sandbox_refuses_a_write_outside_the_workspace() {
    if !super::sandbox::available() {
        return;
    }
    let (sandbox, tmp) = normal_server();
    // Not below `/tmp`: the server has a `/tmp` of its own.
    let elsewhere = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = elsewhere.path().join("outside.txt");
    let (result, _, _) = one_call(
        &sandbox,
        &tmp,
        "mcp__srv__write",
        &json!({"path": outside.display().to_string(), "text": "x"}),
        &["--allow", "mcp:srv/write"],
    );
    assert!(result.contains("cannot write"), "{result}");
    assert!(!outside.exists(), "the server wrote outside the workspace");
    let inside = sandbox.work().join("inside.txt");
    let (result, _, _) = one_call(
        &sandbox,
        &tmp,
        "mcp__srv__write",
        &json!({"path": inside.display().to_string(), "text": "x"}),
        &["--allow", "mcp:srv/write"],
    );
    assert!(result.contains("wrote"), "{result}");
    assert!(inside.exists());
}

#[test]
fn nothing_the_server_started_outlives_the_run() {
    let (sandbox, tmp) = dirs();
    let token = token();
    sandbox.settings(&settings("normal", &token, ""));
    let (result, _, _) = one_call(
        &sandbox,
        &tmp,
        "mcp__srv__spawn",
        &json!({}),
        &["--allow", "mcp:srv/spawn"],
    );
    assert!(result.contains("started"), "{result}");
    let left = running_with(&token);
    for pid in &left {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn a_server_that_ignores_the_end_of_its_input_does_not_outlive_the_run() {
    let (sandbox, tmp) = dirs();
    let token = token();
    sandbox.settings(&settings("stubborn", &token, ""));
    for _ in 0..5 {
        let listed = sandbox
            .agent()
            .env("TMPDIR", &tmp)
            .args(["mcp", "list"])
            .output()
            .unwrap();
        assert!(listed.status.success());
        assert!(String::from_utf8_lossy(&listed.stdout).contains("echo"));
        let left = running_with(&token);
        kill_all(&left);
        assert!(left.is_empty(), "left running after list: {left:?}");
    }
    let _ = echo(&sandbox, &tmp, &["--allow", "mcp:srv/echo"]);
    let left = running_with(&token);
    kill_all(&left);
    assert!(left.is_empty(), "left running after run: {left:?}");
}

#[cfg(unix)]
#[test]
fn a_signal_while_servers_start_ends_them_and_the_run() {
    use std::process::Stdio;
    for (command, signal, status) in [
        ("run", "TERM", 143),
        ("run", "INT", 130),
        ("run", "HUP", 129),
        ("list", "TERM", 143),
    ] {
        let (sandbox, tmp) = dirs();
        let token = token();
        // Never answers `initialize` and does not end with its input: only the agent ends it.
        sandbox.settings(&settings(
            "hang-stubborn",
            &token,
            "startup_timeout_secs = 86400",
        ));
        let server = FakeModel::openai_turns([turn_text("done")]);
        let mut agent = sandbox.agent_process();
        agent.env("TMPDIR", &tmp);
        if command == "run" {
            agent
                .env("OPENAI_API_KEY", "sk-test")
                .args(["run", "--provider", "openai", "--base-url"])
                .arg(server.openai_url())
                .args(["--no-prompt", "hi"]);
        } else {
            agent.args(["mcp", "list"]);
        }
        let mut child = agent
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The server is up (its own process, not only the helper) before the signal.
        let program = server_program().display().to_string();
        let server_up = || {
            live_processes()
                .iter()
                .any(|p| p.cmdline.contains(&token) && p.cmdline.starts_with(&program))
        };
        while !server_up() && child.try_wait().unwrap().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::process::Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        let exit = child.wait().unwrap();
        let left = running_with(&token);
        kill_all(&left);
        assert_eq!(exit.code(), Some(status), "{command} SIG{signal}");
        assert!(
            left.is_empty(),
            "{command} SIG{signal}: left running: {left:?}"
        );
    }
}

#[test]
fn a_git_directory_a_server_plants_is_undone_after_its_call_and_said() {
    if !super::sandbox::available() {
        return;
    }
    let (sandbox, tmp) = normal_server();
    std::fs::create_dir_all(sandbox.work().join("sub")).unwrap();
    let (result, _, stderr) = one_call(
        &sandbox,
        &tmp,
        "mcp__srv__write",
        &json!({"path": "sub/.git", "text": "gitdir: /tmp/elsewhere\n"}),
        &["--allow", "mcp:srv/write"],
    );
    assert!(result.contains("wrote"), "{result}");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("sandbox: after MCP server `srv`'s call") && l.contains("sub/.git"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(!sandbox.work().join("sub/.git").exists());
}

#[test]
fn project_text_reaches_the_terminal_escaped() {
    let (sandbox, tmp) = dirs();
    let token = token();
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    // Control characters in a top-level key, an [mcp] key, a server's key and its arguments.
    let mut text = String::from("\"\\u001b[31mTOP\" = 1\n[mcp]\n\"\\u001b[31mRED\" = 2\n");
    text.push_str(&settings(
        "normal",
        &token,
        "\"\\u001b]0;title\\u0007\" = 3",
    ));
    text = text.replace(
        "\"--token\"",
        "\"\\u001b[2K\\rnpx\", \"\\u009b31m\", \"--token\"",
    );
    std::fs::write(sandbox.work().join(".agent/settings.toml"), text).unwrap();
    let server = FakeModel::openai_turns([turn_text("done")]);
    let outputs = [
        sandbox.agent().args(["mcp", "list"]).output().unwrap(),
        sandbox
            .agent()
            .args(["mcp", "approve", "srv"])
            .output()
            .unwrap(),
        sandbox
            .openai_run(&server)
            .env("TMPDIR", &tmp)
            .args(["--no-prompt", "hi"])
            .output()
            .unwrap(),
    ];
    for output in outputs {
        let said = [output.stdout, output.stderr].concat();
        let shown = String::from_utf8_lossy(&said);
        assert!(shown.contains("RED"), "{shown}");
        assert!(
            !shown
                .chars()
                .any(|c| c == '\u{1b}' || c == '\u{9b}' || c == '\u{7}'),
            "{shown:?}"
        );
    }
    kill_all(&running_with(&token));
}

#[test]
fn a_servers_env_values_never_reach_the_transcript() {
    let (sandbox, tmp) = dirs();
    let secret = "ghp_mcpsecretvalue0123456789";
    sandbox.settings(&settings(
        "normal",
        &token(),
        &format!("env = {{ GITHUB_TOKEN = {secret:?} }}"),
    ));
    let (result, stdout, _) = one_call(
        &sandbox,
        &tmp,
        "mcp__srv__echo",
        &json!({"text": format!("the token is {secret}")}),
        &["--allow", "mcp:srv/echo"],
    );
    assert!(!result.contains(secret), "{result}");
    assert!(!String::from_utf8_lossy(&stdout).contains(secret));
    let transcripts = sandbox.transcripts().join("\n");
    assert!(transcripts.contains("the token is"), "{transcripts}");
    assert!(
        !transcripts.contains(secret),
        "the token reached a transcript"
    );
}

fn kill_all(pids: &[u32]) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

#[test]
fn a_project_only_proposes_a_server_until_it_is_approved() {
    let (sandbox, tmp) = dirs();
    let token = token();
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        settings("normal", &token, ""),
    )
    .unwrap();
    let server = FakeModel::openai_turns([turn_text("done")]);
    let output = sandbox
        .openai_run(&server)
        .env("TMPDIR", &tmp)
        .arg("hi")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(
        !server
            .request(0)
            .tool_names()
            .iter()
            .any(|n| n.starts_with("mcp__")),
        "a proposed server was started"
    );
    let listed = sandbox
        .agent()
        .args(["mcp", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(stdout_json(&listed)["servers"][0]["standing"], "proposed");

    let approve = sandbox
        .agent()
        .args(["mcp", "approve", "srv"])
        .output()
        .unwrap();
    assert!(
        approve.status.success(),
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    let server = FakeModel::openai_turns([turn_text("done")]);
    let output = sandbox
        .openai_run(&server)
        .env("TMPDIR", &tmp)
        .arg("hi")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(
        server
            .request(0)
            .tool_names()
            .contains(&"mcp__srv__echo".to_owned()),
        "{:?}",
        server.request(0).tool_names()
    );
    // A changed proposal is proposed again.
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        settings("normal", &token, "env = { NEW = \"1\" }"),
    )
    .unwrap();
    let listed = sandbox
        .agent()
        .args(["mcp", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(stdout_json(&listed)["servers"][0]["standing"], "proposed");
}

#[test]
fn add_and_remove_write_the_user_file() {
    let sandbox = Sandbox::new();
    let added = sandbox
        .agent()
        .args([
            "mcp", "add", "fs", "--env", "A=1", "--", "npx", "-y", "server",
        ])
        .output()
        .unwrap();
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let text = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(
        text.contains("[mcp.servers.fs]\ncommand = \"npx\""),
        "{text}"
    );
    let again = sandbox
        .agent()
        .args(["mcp", "add", "fs", "--", "x"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    let removed = sandbox
        .agent()
        .args(["mcp", "remove", "fs"])
        .output()
        .unwrap();
    assert!(removed.status.success());
    let text = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(!text.contains("command"), "{text}");
}

#[test]
fn check_decides_one_mcp_tool() {
    let sandbox = Sandbox::new();
    let check = |flags: &[&str]| {
        let output = sandbox.agent().arg("check").args(flags).output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    assert_eq!(check(&["--mcp", "srv/echo"]).0, Some(3));
    assert_eq!(
        check(&["--allow", "mcp:srv/echo", "--mcp", "srv/echo"]).0,
        Some(0)
    );
    assert_eq!(
        check(&["--allow", "mcp:srv", "--mcp", "srv/echo"]).0,
        Some(0)
    );
    let (code, out) = check(&[
        "--allow",
        "mcp:srv",
        "--deny",
        "mcp:srv/echo",
        "--json",
        "--mcp",
        "srv/echo",
    ]);
    assert_eq!(code, Some(4));
    assert!(out.contains("\"rule\":\"mcp:srv/echo\""), "{out}");
    assert_eq!(check(&["--mcp", "no-slash"]).0, Some(2));
}

#[test]
fn a_bad_setting_is_one_line_and_nothing_runs() {
    let sandbox = Sandbox::new();
    sandbox.settings("[mcp.servers.srv]\ncommand = \"x\"\nstartup_timeout_secs = \"soon\"\n");
    let server = FakeModel::openai_turns([turn_text("done")]);
    let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(":3: `mcp.servers.srv.startup_timeout_secs` must be"),
        "{stderr}"
    );
}

#[test]
fn a_loader_variable_in_a_servers_env_is_refused_and_list_and_approve_show_env() {
    let (sandbox, _tmp) = dirs();
    let token = token();
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    for name in ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"] {
        let extra = format!("env = {{ {name} = \"./x.so\" }}");
        for project in [false, true] {
            let text = settings("normal", &token, &extra);
            if project {
                sandbox.settings("");
                std::fs::write(sandbox.work().join(".agent/settings.toml"), &text).unwrap();
            } else {
                sandbox.settings(&text);
                std::fs::write(sandbox.work().join(".agent/settings.toml"), "").unwrap();
            }
            let output = sandbox.agent().args(["mcp", "list"]).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let stdout = String::from_utf8_lossy(&output.stdout);
            if project {
                // Said and left out: a repository cannot stop the agent from running in it,
                // and what is approved is the proposal without it.
                assert_eq!(output.status.code(), Some(0), "{name}: {stderr}");
                assert!(
                    stderr.contains(&format!("env.{name}` is ignored")),
                    "{stderr}"
                );
                assert!(!stdout.contains(name), "{stdout}");
                let approved = sandbox
                    .agent()
                    .args(["mcp", "approve", "srv"])
                    .output()
                    .unwrap();
                assert!(approved.status.success());
                assert!(!String::from_utf8_lossy(&approved.stdout).contains(name));
                sandbox.settings("");
            } else {
                assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
                assert!(
                    stderr.contains(&format!("env.{name}` is refused")),
                    "{stderr}"
                );
            }
            assert!(
                running_with(&token).is_empty(),
                "{name}: a server outlived list"
            );
        }
    }
    sandbox.settings("");
    std::fs::write(
        sandbox.work().join(".agent/settings.toml"),
        settings("normal", &token, "env = { DOCS_HOME = \"1\" }"),
    )
    .unwrap();
    let listed = sandbox.agent().args(["mcp", "list"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(stdout.contains("; env DOCS_HOME"), "{stdout}");
    let approved = sandbox
        .agent()
        .args(["mcp", "approve", "srv"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&approved.stdout);
    assert!(stdout.contains("; env DOCS_HOME"), "{stdout}");
}

/// Runs `agent run` once (with `env`) against a model that answers at once, and checks that
/// server `name` cost exactly one line on stderr and offered no tool; returns that line.
pub(super) fn one_line_and_no_tools(sandbox: &Sandbox, name: &str, env: &[(&str, &str)]) -> String {
    let server = FakeModel::openai_turns([turn_text("done")]);
    let output = sandbox
        .openai_run(&server)
        .envs(env.iter().copied())
        .arg("hi")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let about = format!("MCP server `{name}`");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(&about)).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    let tools = server.request(0).tool_names();
    assert!(!tools.iter().any(|n| n.starts_with("mcp__")), "{tools:?}");
    lines[0].to_owned()
}

/// A server that misbehaves in `mode` costs one line, and the run goes on without it.
fn goes_on_without(mode: &str) {
    let (sandbox, tmp) = dirs();
    let token = token();
    sandbox.settings(&settings(mode, &token, "startup_timeout_secs = 2"));
    let tmp = tmp.display().to_string();
    let line = one_line_and_no_tools(&sandbox, "srv", &[("TMPDIR", &tmp)]);
    assert!(line.starts_with("agent: warning: "), "{mode}: {line}");
    assert!(
        running_with(&token).is_empty(),
        "{mode}: the server outlived the run"
    );
}

#[test]
fn a_server_that_exits_at_once_is_one_line() {
    goes_on_without("exit");
}

#[test]
fn a_server_that_hangs_in_initialize_is_one_line_after_its_timeout() {
    goes_on_without("hang");
}

#[test]
fn a_server_that_speaks_no_json_rpc_is_one_line() {
    goes_on_without("garbage");
}

#[test]
fn a_server_that_floods_stdout_is_one_line() {
    goes_on_without("flood");
}

#[test]
fn a_huge_result_ends_that_server_with_a_clear_error_and_the_run_goes_on() {
    let (sandbox, tmp) = dirs();
    let token = token();
    sandbox.settings(&settings("normal", &token, ""));
    let (result, _, _) = one_call(
        &sandbox,
        &tmp,
        "mcp__srv__big",
        &json!({"bytes": 50_000_000}),
        &["--allow", "mcp:srv"],
    );
    assert!(result.contains("larger than 8 MB"), "{result}");
    assert!(running_with(&token).is_empty());
}

#[test]
fn a_call_is_asked_at_a_terminal_and_allowed() {
    let (sandbox, tmp) = normal_server();
    let long_text = format!(
        "from the tty {} MIDDLE {}",
        "a ".repeat(80),
        "b ".repeat(80)
    );
    let server = FakeModel::openai_turns([
        mcp_call("mcp__srv__echo", &json!({"text": long_text})),
        turn_text("echoed"),
    ]);
    let tmp = tmp.display().to_string();
    let tmux = super::tty::run_in_tmux(&sandbox, &server, &[("TMPDIR", &tmp)], "'echo it'");
    let screen = tmux.wait_for("1. Allow");
    assert!(screen.contains("mcp srv/echo"), "{screen}");
    // It says it is an MCP call, and offers no edit (the arguments are the model's).
    assert!(
        screen.contains("? agent wants to call an MCP server's tool"),
        "{screen}"
    );
    assert!(!screen.contains("wants to run a command"), "{screen}");
    assert!(!screen.contains("e. Edit"), "{screen}");
    assert!(screen.contains("from the tty"), "{screen}");
    // What is approved is shown whole: the middle of a long argument too.
    assert!(screen.contains("MIDDLE"), "{screen}");
    assert!(screen.contains("only reads (not checked)"), "{screen}");
    assert!(screen.contains("mcp:srv/echo"), "{screen}");
    tmux.keys(&["1"]);
    tmux.wait_for("EXIT=0");
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("echo: from the tty"), "{results:?}");
}

#[test]
fn mode_deny_never_asks_to_start_a_server_without_the_sandbox() {
    let (sandbox, tmp) = dirs();
    sandbox.settings(&settings("normal", &token(), "sandbox = \"off\""));
    let server = FakeModel::openai_turns([turn_text("nothing to do")]);
    let tmp = tmp.display().to_string();
    let tmux = super::tty::run_in_tmux(&sandbox, &server, &[("TMPDIR", &tmp)], "--mode deny 'go'");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(!screen.contains("1. Allow"), "{screen}");
    assert!(screen.contains("without the sandbox"), "{screen}");
    let tools = server.request(0).tool_names();
    assert!(!tools.iter().any(|n| n.starts_with("mcp__")), "{tools:?}");
}

/// `allow-all` allows calls to a server in the sandbox; one outside it (here: `sandbox =
/// "off"`, said yes to at the prompt) is still asked about.
#[test]
fn allow_all_allows_only_calls_to_servers_in_the_sandbox() {
    if !super::sandbox::available() {
        return;
    }
    let (sandbox, tmp) = normal_server();
    let (result, _, _) = echo(&sandbox, &tmp, &["--mode", "allow-all"]);
    assert!(result.contains("echo: hi"), "{result}");
    sandbox.settings(&settings("normal", &token(), "sandbox = \"off\""));
    let server = FakeModel::openai_turns([
        mcp_call("mcp__srv__echo", &json!({"text": "unfenced"})),
        turn_text("done"),
    ]);
    let tmp = tmp.display().to_string();
    let tmux = super::tty::run_in_tmux(
        &sandbox,
        &server,
        &[("TMPDIR", &tmp)],
        "--mode allow-all 'go'",
    );
    let screen = tmux.wait_for("1. Allow");
    assert!(
        screen.contains("start an MCP server without the sandbox"),
        "{screen}"
    );
    tmux.keys(&["1"]);
    let screen = tmux.wait_for("call an MCP server's tool");
    assert!(screen.contains("remote or runs without it"), "{screen}");
    tmux.keys(&["1"]);
    tmux.wait_for("EXIT=0");
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("echo: unfenced"), "{results:?}");
}

#[test]
fn a_server_that_dies_is_restarted_once_per_run() {
    let (sandbox, tmp) = dirs();
    let token = token();
    // The server answers one call and exits when the next one comes.
    sandbox.settings(&settings("die-after-call", &token, ""));
    let words = ["one", "two", "three", "four", "five"];
    let mut turns: Vec<Turn> = words
        .iter()
        .map(|word| mcp_call("mcp__srv__echo", &json!({"text": word})))
        .collect();
    turns.push(turn_text("done"));
    let (server, _, stderr) = run_turns(&sandbox, &tmp, turns, &["--allow", "mcp:srv"]);
    let result = |turn: usize| {
        server
            .request(turn)
            .tool_results()
            .last()
            .unwrap()
            .1
            .clone()
    };
    assert!(result(1).contains("echo: one"), "{}", result(1));
    assert!(
        result(2).contains("stopped during the call"),
        "{}",
        result(2)
    );
    assert!(result(3).contains("echo: three"), "{}", result(3));
    assert!(
        result(4).contains("stopped during the call"),
        "{}",
        result(4)
    );
    assert!(result(5).contains("not running"), "{}", result(5));
    assert_eq!(
        stderr.matches("restarted it (once per run)").count(),
        1,
        "{stderr}"
    );
    assert!(
        running_with(&token).is_empty(),
        "the server outlived the run"
    );
}

#[test]
fn a_server_without_the_sandbox_does_not_start_without_a_yes() {
    let (sandbox, tmp) = dirs();
    sandbox.settings(&settings("normal", &token(), "sandbox = \"off\""));
    let tmp = tmp.display().to_string();
    let line = one_line_and_no_tools(&sandbox, "srv", &[("TMPDIR", &tmp)]);
    assert!(line.contains("without the sandbox"), "{line}");
}

#[test]
fn the_sandbox_keeps_a_server_off_the_network() {
    if !super::sandbox::available() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for network in ["", "network = [\"example.com\"]"] {
        let (sandbox, tmp) = dirs();
        sandbox.settings(&settings("normal", &token(), network));
        let (result, _, stderr) = one_call(
            &sandbox,
            &tmp,
            "mcp__srv__connect",
            &json!({"port": port}),
            &["--allow", "mcp:srv/connect"],
        );
        assert!(result.contains("cannot connect"), "{network}: {result}");
        if !network.is_empty() {
            assert!(stderr.contains("network"), "{stderr}");
        }
    }
}

#[test]
fn a_burst_of_notifications_leaves_the_server_usable() {
    let (sandbox, tmp) = dirs();
    sandbox.settings(&settings("storm", &token(), ""));
    let (result, _, _) = echo(&sandbox, &tmp, &["--allow", "mcp:srv"]);
    assert!(result.contains("echo: hi"), "{result}");
}

/// The peak resident memory (VmHWM, in kB) of `child` while it runs, polled from /proc
/// until it ends.
#[cfg(target_os = "linux")]
fn peak_memory_kb(child: &mut std::process::Child) -> u64 {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        let hwm = text
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        peak = peak.max(hwm);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    peak
}

/// A server that floods the agent during a call — `ping` requests it never reads the
/// answers to, or notifications without end — is cut off with one line, the run goes on,
/// and the agent's memory stays bounded (it grew by about 17 MB a second before).
#[cfg(target_os = "linux")]
#[test]
fn a_flooding_server_is_cut_off_in_one_line_and_memory_stays_bounded() {
    use std::process::Stdio;
    for mode in ["ping-flood", "notify-flood"] {
        let (sandbox, tmp) = dirs();
        let token = token();
        sandbox.settings(&settings(mode, &token, "tool_timeout_secs = 30"));
        let server = FakeModel::openai_turns([
            mcp_call("mcp__srv__echo", &json!({"text": "hi"})),
            turn_text("done"),
        ]);
        let err = sandbox.root.path().join("stderr");
        let mut child = sandbox
            .agent_process()
            .env("TMPDIR", &tmp)
            .env("OPENAI_API_KEY", "sk-test")
            .args(["run", "--provider", "openai", "--base-url"])
            .arg(server.openai_url())
            .args(["--allow", "mcp:srv", "use the tool"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        let peak = peak_memory_kb(&mut child);
        let status = child.wait().unwrap();
        let stderr = std::fs::read_to_string(&err).unwrap();
        assert!(status.success(), "{mode}: {stderr}");
        assert!(
            peak < 200 * 1024,
            "{mode}: the agent's memory reached {peak} kB"
        );
        let warnings: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("agent: warning: MCP server `srv` is not available"))
            .collect();
        assert_eq!(warnings.len(), 1, "{mode}: {stderr}");
        assert!(warnings[0].contains("(a flood)"), "{mode}: {stderr}");
        let results = server.request(1).tool_results();
        assert!(results[0].1.contains("(a flood)"), "{mode}: {results:?}");
        assert!(
            running_with(&token).is_empty(),
            "{mode}: the server outlived the run"
        );
    }
}

#[test]
fn a_changed_tool_list_is_followed_before_the_next_request() {
    let (sandbox, tmp) = dirs();
    sandbox.settings(&settings("grow", &token(), ""));
    let turns = vec![
        mcp_call("mcp__srv__echo", &json!({"text": "hi"})),
        turn_text("done"),
    ];
    let (server, _, _) = run_turns(&sandbox, &tmp, turns, &["--allow", "mcp:srv"]);
    let late = "mcp__srv__late".to_owned();
    assert!(!server.request(0).tool_names().contains(&late));
    let names = server.request(1).tool_names();
    assert!(names.contains(&late), "{names:?}");
    assert!(names.contains(&"mcp__srv__echo".to_owned()), "{names:?}");
}

/// `--continue` gives the model back what an earlier MCP call returned (not "was not run",
/// which invites it to repeat a call that acted), and `history show` lists the call.
#[test]
fn a_continued_run_keeps_mcp_results_and_history_shows_the_calls() {
    let (sandbox, tmp) = normal_server();
    let call = mcp_call("mcp__srv__echo", &json!({"text": "first"}));
    let (_, _, _) = run_turns(
        &sandbox,
        &tmp,
        vec![call, turn_text("done")],
        &["--allow", "mcp:srv/echo"],
    );
    let server = FakeModel::openai_turns([turn_text("again")]);
    let output = sandbox
        .openai_run(&server)
        .env("TMPDIR", &tmp)
        .args(["--continue", "and again"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = server.request(0).tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].1.contains("echo: first"), "{results:?}");
    assert!(!results[0].1.contains("was not run"), "{results:?}");
    let shown = sandbox.history_show();
    assert!(
        shown.contains("• mcp srv/echo {\"text\":\"first\"}"),
        "{shown}"
    );
    assert!(shown.contains(" chars · "), "{shown}");
}

#[test]
fn list_says_why_a_server_is_not_available_once() {
    for mode in ["exit", "garbage"] {
        let (sandbox, tmp) = dirs();
        sandbox.settings(&settings(mode, &token(), "startup_timeout_secs = 5"));
        let list = |json: &[&str]| {
            let output = sandbox
                .agent()
                .env("TMPDIR", &tmp)
                .args(json)
                .args(["mcp", "list"])
                .output()
                .unwrap();
            assert!(output.status.success());
            output.stdout
        };
        let stdout = String::from_utf8(list(&[])).unwrap();
        assert_eq!(stdout.matches("not available").count(), 1, "{stdout}");
        assert!(!stdout.contains("note: "), "{stdout}");
        let value: Value = serde_json::from_slice(&list(&["--json"])).unwrap();
        let state = value["servers"][0]["state"].as_str().unwrap();
        assert!(state.starts_with("not available: "), "{state}");
        assert_eq!(value["notices"], json!([]), "{value}");
    }
}

/// In an interactive session the servers start too: their tools are offered, `/mcp` shows
/// what `agent mcp list` shows, `/mcp restart NAME` starts one again (a new process), and
/// nothing outlives the session.
#[test]
fn a_session_offers_the_tools_and_mcp_lists_and_restarts_servers() {
    use super::session::{READY, session};
    let (sandbox, _tmp) = dirs();
    let token = token();
    let server = FakeModel::openai_turns([
        mcp_call("mcp__srv__echo", &json!({"text": "in a session"})),
        turn_text("echoed in the session"),
    ]);
    let extra = format!(
        "{}\n[permissions.commands]\nallow = [\"mcp:srv/echo\"]\n",
        settings("normal", &token, "")
    );
    let tmux = session(&sandbox, &server, &extra, "");
    tmux.wait_for(READY);
    let pids = |token: &str| {
        let program = server_program().display().to_string();
        live_processes()
            .into_iter()
            .filter(|p| p.cmdline.contains(token) && p.cmdline.starts_with(&program))
            .map(|p| p.pid)
            .collect::<Vec<_>>()
    };
    let before = pids(&token);
    assert_eq!(before.len(), 1, "{before:?}");
    tmux.keys(&["/mcp", "Enter"]);
    let screen = tmux.wait_for("on every request");
    assert!(screen.contains("srv  configured  stdio:"), "{screen}");
    assert!(screen.contains("  started  (sandbox"), "{screen}");
    assert!(screen.contains("mcp__srv__echo"), "{screen}");
    tmux.keys(&["/mcp restart srv", "Enter"]);
    tmux.wait_for("restarted MCP server `srv`");
    let after = pids(&token);
    assert_eq!(after.len(), 1, "{after:?}");
    assert_ne!(before, after, "the same process");
    tmux.keys(&["/mcp restart nope", "Enter"]);
    tmux.wait_for("no MCP server `nope`");
    tmux.keys(&["echo it", "Enter"]);
    tmux.wait_for("echoed in the session");
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("echo: in a session"), "{results:?}");
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(
        running_with(&token).is_empty(),
        "a server outlived the session"
    );
}

/// A signal while a session's servers start: SIGINT abandons the start (the session goes on
/// without them), SIGTERM ends the session; either way the server is gone.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_while_a_sessions_servers_start() {
    use super::session::{READY, session};
    for signal in ["INT", "TERM"] {
        let (sandbox, _tmp) = dirs();
        let token = token();
        let server = FakeModel::openai_turns([turn_text("unused")]);
        let extra = settings("hang-stubborn", &token, "startup_timeout_secs = 86400");
        let tmux = session(&sandbox, &server, &extra, "");
        let program = server_program().display().to_string();
        let agent = super::tty::agent_bin();
        let work = sandbox.work().canonicalize().unwrap();
        let mut pid = None;
        super::harness::wait_for(
            std::time::Duration::from_secs(60),
            "the server and the session",
            || {
                let all = live_processes();
                let server_up = all
                    .iter()
                    .any(|p| p.cmdline.contains(&token) && p.cmdline.starts_with(&program));
                pid = all
                    .iter()
                    .find(|p| {
                        p.cmdline.split('\0').next() == Some(agent.as_str())
                            && p.cwd.as_deref() == Some(work.as_path())
                    })
                    .map(|p| p.pid);
                server_up && pid.is_some()
            },
        );
        let pid = pid.unwrap().to_string();
        let killed = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        if signal == "INT" {
            tmux.wait_for("start was interrupted");
            tmux.wait_for(READY);
            assert!(
                running_with(&token).is_empty(),
                "the server outlived its start"
            );
            tmux.keys(&["C-d"]);
            let screen = tmux.wait_for("EXIT=");
            assert!(screen.contains("EXIT=0"), "{screen}");
        } else {
            let screen = tmux.wait_for("EXIT=");
            assert!(screen.contains("EXIT=143"), "{screen}");
        }
        assert!(
            running_with(&token).is_empty(),
            "{signal}: a server outlived the session"
        );
    }
}
