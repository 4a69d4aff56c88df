//! A command never outlives the agent: SIGTERM, SIGHUP, SIGQUIT (and SIGINT) sent to
//! `agent exec` or `agent run` end the command's whole process group and exit
//! 128 + the signal, and `run` records its `done` event. Each command holds a FIFO and
//! writes its marker (`held_command`); the tests wait for the marker, signal the agent's own
//! pid, and once it has exited check that nothing holds the FIFO any more: nothing of the
//! command is left running (`Gate::held`), with no window of time to wait out.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::{Sandbox, kill_left, left_running, wait_for};
use super::support::gate::{Gate, held_command};
use super::support::reaped::Reaped;
/// Long enough for a debug build to start and reach the command.
const START_LIMIT: Duration = Duration::from_secs(30);

/// Returns once the command's marker is written.
fn wait_for_start(work: &Path) {
    wait_for(START_LIMIT, "the command to start", || {
        std::fs::read_to_string(work.join("started")).is_ok_and(|text| text == "started\n")
    });
}

/// The processes whose parent is `pid` (Linux: `/proc`; elsewhere none are known).
fn children(pid: u32) -> Vec<u32> {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    threads
        .flatten()
        .filter_map(|thread| std::fs::read_to_string(thread.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether process `pid` exists and is not a zombie.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')')
            .and_then(|at| stat[at + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z")
    })
}

fn signal(child: &Child, name: &str) {
    let status = std::process::Command::new("kill")
        .args(["-s", name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -s {name} failed");
}

/// Waits for the agent to exit (10 s at most) and returns its status code.
fn wait_exit(child: &mut Child) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("the agent did not exit within 10 s of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Signals the agent once its command runs; checks the exit status, that the agent
/// did not wait needlessly, and that the command neither finished nor survived.
fn stop_and_check(child: Child, gate: Gate, work: &Path, name: &str, expected: i32) {
    let mut child = Reaped::new(child, work);
    wait_for_start(work);
    let started = Instant::now();
    signal(&child, name);
    let code = wait_exit(&mut child);
    let took = started.elapsed();
    let left = left_running(work);
    let held = gate.held();
    kill_left(work);
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
    }
    assert_eq!(
        code,
        Some(expected),
        "SIG{name}: exit status; stderr:\n{stderr}"
    );
    assert!(left.is_empty(), "SIG{name}: {left:?} survived the agent");
    assert!(
        !held,
        "SIG{name}: the command ran on after the agent stopped"
    );
    assert!(
        took < Duration::from_secs(3),
        "SIG{name}: the agent took {took:?} to stop a command that dies at once"
    );
}

fn exec_case(name: &str, expected: i32) {
    let sandbox = Sandbox::new();
    let gate = Gate::new(&sandbox.work());
    let child = sandbox
        .agent_process()
        .args(["exec", &held_command("")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    stop_and_check(child, gate, &sandbox.work(), name, expected);
}

#[test]
fn exec_sigterm_kills_the_group_and_exits_143() {
    exec_case("TERM", 143);
}

#[test]
fn exec_sighup_kills_the_group_and_exits_129() {
    exec_case("HUP", 129);
}

#[test]
fn exec_sigquit_kills_the_group_and_exits_131() {
    exec_case("QUIT", 131);
}

#[test]
fn exec_sigint_kills_the_group_and_exits_130() {
    exec_case("INT", 130);
}

fn run_case(name: &str, expected: i32) {
    let sandbox = Sandbox::new();
    let gate = Gate::new(&sandbox.work());
    let server = FakeModel::openai_turns([
        turn_tool_call(&held_command(""), "wait"),
        turn_text("never"),
    ]);
    let child = sandbox
        .agent_process()
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        // The command has `;`: the policy asks, and allow-all lets it run without a prompt.
        .args(["--mode", "allow-all", "wait a second"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    stop_and_check(child, gate, &sandbox.work(), name, expected);
    let runs = sandbox.state_dir().join("agent/runs");
    let file = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .next()
        .expect("a transcript")
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "done", "{text}");
    assert_eq!(last["outcome"], "interrupted", "{text}");
    let note = last["note"].as_str().unwrap_or_default();
    let named = if name == "INT" { "Ctrl+C" } else { name };
    assert!(note.contains(named), "SIG{name}: note {note:?}");
    assert_eq!(
        server.requests().len(),
        1,
        "no model request after the signal"
    );
}

#[test]
fn run_sigterm_kills_the_group_records_done_and_exits_143() {
    run_case("TERM", 143);
}

#[test]
fn run_sighup_kills_the_group_records_done_and_exits_129() {
    run_case("HUP", 129);
}

#[test]
fn run_sigquit_kills_the_group_records_done_and_exits_131() {
    run_case("QUIT", 131);
}

#[test]
fn run_sigint_kills_the_group_records_done_and_exits_130() {
    run_case("INT", 130);
}

#[test]
fn a_command_ignoring_term_is_killed_after_the_grace() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    let gate = Gate::new(&work);
    let child = sandbox
        .agent_process()
        .args(["exec", &held_command("trap '' TERM; ")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Reaped::new(child, &work);
    wait_for_start(&work);
    // The sandbox helper, where there is one: it is gone too when the agent has exited (the
    // workspace's check comes after it).
    let helpers = children(child.id());
    let started = Instant::now();
    signal(&child, "TERM");
    let code = wait_exit(&mut child);
    let took = started.elapsed();
    let left = left_running(&work);
    let helpers_left: Vec<u32> = helpers.into_iter().filter(|&pid| running(pid)).collect();
    assert!(
        helpers_left.is_empty(),
        "the agent exited before its helpers {helpers_left:?}"
    );
    let held = gate.held();
    kill_left(&work);
    assert_eq!(code, Some(143));
    assert!(left.is_empty(), "{left:?} survived SIGKILL");
    assert!(!held, "the command ran on after the agent stopped");
    assert!(
        took >= Duration::from_millis(4900) && took < Duration::from_secs(6),
        "KILL should come after the 5 s grace, came after {took:?}"
    );
}
