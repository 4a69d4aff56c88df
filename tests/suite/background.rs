//! Background processes owned by the run, and one network namespace per run, through the real
//! binary (Linux with the sandbox; skipped with a note elsewhere): the commands of one run
//! share a namespace, so a server one started in the background is reached on `localhost` by
//! the next while the outside stays closed; every background process is gone, checked from
//! outside in `/proc`, after the run ends however it ends.

use std::time::Duration;

use super::fake_model::{FakeModel, Turn, turn_text, turn_tool_call};
use super::harness::{Sandbox, live_processes, wait_for};
use super::support::require::{require, require_program};
use serde_json::{Value, json as j};

/// How long a process of a finished run may take to disappear (it is killed at the run's
/// end; this only bounds a failing test).
const GONE: Duration = Duration::from_secs(20);

/// Whether these tests can run here: Linux, with the sandbox active.
pub(super) fn available(_sandbox: &Sandbox) -> bool {
    require("Linux", cfg!(target_os = "linux")) && super::sandbox::available()
}

/// A free port on this machine's loopback (for a server inside the run's own namespace any
/// port would do; a free one keeps the marker below unique).
pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `shell` call turn with `background: true`.
pub(super) fn background_turn(command: &str) -> Turn {
    let arguments = j!({"command": command, "description": "serve", "background": true});
    Turn::default().with_call(
        &format!("bg_{}", free_port()),
        "shell",
        &arguments.to_string(),
    )
}

/// A `processes` call turn.
pub(super) fn processes_turn(arguments: &Value) -> Turn {
    Turn::default().with_call(
        &format!("ps_{}", free_port()),
        "processes",
        &arguments.to_string(),
    )
}

/// The last tool result the model got in its request `index`.
pub(super) fn last_result(server: &FakeModel, index: usize) -> String {
    server
        .request(index)
        .tool_results()
        .last()
        .unwrap()
        .1
        .clone()
}

/// The live processes whose arguments contain `marker`.
fn with_marker(marker: &str) -> Vec<u32> {
    live_processes()
        .into_iter()
        .filter(|p| p.cmdline.contains(marker))
        .map(|p| p.pid)
        .collect()
}

/// A Python HTTP server on `port` serving the workspace (its arguments are the marker scanned
/// for).
pub(super) fn server_command(port: u16, sandbox: &Sandbox) -> String {
    // The test's own workspace makes it unique, whatever port another test got.
    let work = sandbox.work().canonicalize().unwrap();
    format!(
        "python3 -m http.server {port} --bind 127.0.0.1 --directory {}",
        work.display()
    )
}

/// A command that fetches `http://localhost:PORT/` with Python, trying until the server
/// listens (bounded), and prints `status=CODE` or `unreachable`.
fn fetch_command(port: u16) -> String {
    format!(
        "python3 -c \"import time,urllib.request as u\nfor _ in range(200):\n  try:\n    \
         print('status=%d' % u.urlopen('http://localhost:{port}/', timeout=2).status); break\n  \
         except Exception: time.sleep(0.05)\nelse: print('unreachable')\""
    )
}

/// A sandbox, a free port, the Python server's command for it (the marker) and the cleanup of
/// what is left with it, when the tests with Python can run here.
fn with_python() -> Option<(Sandbox, u16, String, Cleanup)> {
    let sandbox = Sandbox::new();
    if !available(&sandbox) || !require_program("python3") {
        return None;
    }
    let port = free_port();
    let marker = server_command(port, &sandbox);
    let cleanup = Cleanup(marker.clone());
    Some((sandbox, port, marker, cleanup))
}

/// Kills what is left with `marker` (a failing test's cleanup; one process at a time).
pub(super) struct Cleanup(pub(super) String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in with_marker(&self.0) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

#[test]
fn the_commands_of_a_run_share_one_network_namespace_that_is_not_the_machines() {
    let sandbox = Sandbox::new();
    if !available(&sandbox) || !require_program("bash") {
        return;
    }
    let outside = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    outside.set_nonblocking(true).unwrap();
    let port = outside.local_addr().unwrap().port();
    let ours = std::fs::read_link("/proc/self/ns/net").unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call("readlink /proc/self/ns/net", "one"),
        turn_tool_call(
            &format!("readlink /proc/self/ns/net; bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"),
            "two",
        ),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "go"])
        .assert()
        .success();
    let stdout = |index: usize| {
        let result: Value = serde_json::from_str(&last_result(&server, index)).unwrap();
        result["stdout"].as_str().unwrap().to_owned()
    };
    let (first, second) = (stdout(1), stdout(2));
    let first = first.trim();
    assert!(first.starts_with("net:["), "{first}");
    assert_eq!(second.lines().next(), Some(first), "{second}");
    assert_ne!(
        first,
        ours.to_string_lossy(),
        "the commands ran in the machine's namespace"
    );
    assert!(
        outside.accept().is_err(),
        "a command of the run reached a server outside: {second}"
    );
}

#[test]
fn a_background_server_is_reached_by_a_later_command_and_ends_with_the_run() {
    let Some((sandbox, port, marker, _cleanup)) = with_python() else {
        return;
    };
    let server = FakeModel::openai_turns([
        background_turn(&marker),
        turn_tool_call(&fetch_command(port), "probe"),
        processes_turn(&j!({"action": "list"})),
        processes_turn(&j!({"action": "output", "id": "bg1", "tail": 200})),
        turn_text("done"),
    ]);
    let output = sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "--json", "serve and probe"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let result = |index: usize| last_result(&server, index);
    let started: Value = serde_json::from_str(&result(1)).unwrap();
    assert_eq!(started["background"], "bg1", "{started}");
    assert!(
        result(2).contains("status=200"),
        "{}\n{}",
        result(2),
        result(4)
    );
    let listed: Value = serde_json::from_str(&result(3)).unwrap();
    assert_eq!(listed["processes"][0]["state"], "running", "{listed}");
    assert_eq!(listed["processes"][0]["command"], marker.as_str());
    let read: Value = serde_json::from_str(&result(4)).unwrap();
    // The server logs the request on stderr.
    assert!(
        read["output"]
            .as_str()
            .unwrap()
            .contains("\"GET / HTTP/1.1\" 200"),
        "{read}"
    );
    assert!(read["output"].as_str().unwrap().len() <= 200, "{read}");
    wait_for(
        GONE,
        "the background server to be gone after the run",
        || with_marker(&marker).is_empty(),
    );
}

/// `agent run --mode allow-all` against `server`, started (not waited for), its output
/// dropped.
fn spawn_run(sandbox: &Sandbox, server: &FakeModel) -> std::process::Child {
    sandbox
        .agent_process()
        .env("OPENAI_API_KEY", super::harness::KEY)
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(["--mode", "allow-all", "--json", "go"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Starts a run whose first call starts a background server and whose second stalls the
/// model (the run waits there), signals it with `signal` once the server runs, and checks that
/// the server is gone after the agent ended.
fn a_signal_ends_the_background_processes(signal: &str) {
    let Some((sandbox, _, marker, _cleanup)) = with_python() else {
        return;
    };
    let server = FakeModel::openai_turns([background_turn(&marker)]);
    server.push(turn_text("never").openai().stall_after(0));
    let mut agent = spawn_run(&sandbox, &server);
    wait_for(GONE, "the background server to run", || {
        !with_marker(&marker).is_empty()
    });
    let pids = with_marker(&marker);
    std::process::Command::new("kill")
        .args([&format!("-{signal}"), &agent.id().to_string()])
        .status()
        .unwrap();
    let status = agent.wait().unwrap();
    assert!(!status.success(), "{signal}: {status:?}");
    wait_for(
        GONE,
        "the background server to be gone after the signal",
        || {
            with_marker(&marker).is_empty()
                && pids.iter().all(|pid| {
                    !std::path::Path::new(&format!("/proc/{pid}/cmdline")).exists()
                        || live_processes().iter().all(|p| p.pid != *pid)
                })
        },
    );
}

#[test]
fn sigterm_ends_the_background_processes() {
    a_signal_ends_the_background_processes("TERM");
}

#[test]
fn sighup_ends_the_background_processes() {
    a_signal_ends_the_background_processes("HUP");
}

#[test]
fn sigkill_of_the_agent_ends_the_background_processes_too() {
    a_signal_ends_the_background_processes("KILL");
}

#[test]
fn sigint_ends_the_background_processes() {
    a_signal_ends_the_background_processes("INT");
}

/// The agent's memory bound in the test of a background process that prints a lot.
const LIMIT: u64 = 64 * 1024 * 1024;

/// The agent's peak resident memory in bytes (`VmHWM`), read from outside.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[test]
fn a_stopped_background_process_is_gone_and_its_output_stays_bounded() {
    let sandbox = Sandbox::new();
    if !available(&sandbox) || !require_program("yes") {
        return;
    }
    let marker = format!("yes bounded-{}", free_port());
    let _cleanup = Cleanup(marker.clone());
    let server = FakeModel::openai_turns([
        background_turn(&marker),
        // Until it printed far more than the ring holds.
        turn_tool_call("sleep 2", "wait"),
        processes_turn(&j!({"action": "output", "id": "bg1", "tail": 1_000_000})),
        processes_turn(&j!({"action": "stop", "id": "bg1"})),
        processes_turn(&j!({"action": "output", "id": "nope"})),
    ]);
    // The run then waits on the model: its memory is read while it lives.
    server.push(turn_text("never").openai().stall_after(0));
    let mut agent = spawn_run(&sandbox, &server);
    wait_for(GONE, "the sixth request", || server.requests().len() >= 6);
    let peak = peak_memory(agent.id());
    let _ = agent.kill();
    let _ = agent.wait();
    let result = |index: usize| last_result(&server, index);
    let read: Value = serde_json::from_str(&result(3)).unwrap();
    let text = read["output"].as_str().unwrap();
    assert!(text.len() <= 64 * 1024, "{}", text.len());
    let word = marker.trim_start_matches("yes ");
    // Whole lines of it, but for the first and the last, cut where the ring and the read were.
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 100, "{}", &text[..80]);
    assert!(
        lines[1..lines.len() - 1].iter().all(|line| *line == word),
        "{}",
        &text[..80]
    );
    let printed = read["output_bytes"].as_u64().unwrap();
    assert!(printed > 4 * 64 * 1024, "{read}");
    let stopped: Value = serde_json::from_str(&result(4)).unwrap();
    assert_ne!(stopped["state"], "running", "{stopped}");
    assert!(with_marker(&marker).is_empty(), "still running after stop");
    assert!(
        result(5).contains("no background process `nope`"),
        "{}",
        result(5)
    );
    eprintln!("printed {printed} B, the agent's peak memory {peak} B");
    // However much it printed, the agent kept a ring of it (measured here: a peak of 35 MB
    // for 60 MB printed; kept whole, it would pass the limit).
    assert!(peak < LIMIT, "printed {printed} B, peak {peak} B");
}

#[test]
fn without_a_terminal_a_background_command_not_allowed_is_denied_and_never_starts() {
    let Some((sandbox, _, marker, _cleanup)) = with_python() else {
        return;
    };
    let server = FakeModel::openai_turns([background_turn(&marker), turn_text("done")]);
    sandbox
        .openai_run(&server)
        .args(["--mode", "ask", "--json", "serve"])
        .output()
        .unwrap();
    let result = last_result(&server, 1);
    assert!(result.contains("EDENIED"), "{result}");
    assert!(!result.contains("bg1"), "{result}");
    assert!(
        with_marker(&marker).is_empty(),
        "a denied background command ran"
    );
}

/// An HTTP server on 127.0.0.1 (outside every namespace of the run) answering `hello`.
pub(super) fn hello_server() -> u16 {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
            );
        }
    });
    port
}

/// N2: a rule's own hosts are opened for its command only while no background process runs
/// (the proxy could not tell one's connections from the command's, in the run's namespace).
#[test]
fn a_rules_own_hosts_stay_closed_while_a_background_process_runs() {
    let sandbox = Sandbox::new();
    let port = hello_server();
    let marker = format!("sleep 3{}", free_port());
    let _cleanup = Cleanup(marker.clone());
    sandbox.settings(&format!(
        "[permissions.commands]\n\
         allow = [\"sleep\", {{ command = \"curl -sS\", net = [\"netrule.test\"] }}]\n\
         [network]\nmode = \"allowlist\"\nhosts = {{ \"netrule.test\" = \"127.0.0.1:{port}\" }}\n"
    ));
    if !available(&sandbox) || !require_program("curl") {
        return;
    }
    let curl = format!("curl -sS http://netrule.test:{port}/");
    let server = FakeModel::openai_turns([
        turn_tool_call(&curl, "with the rule's hosts"),
        background_turn(&marker),
        turn_tool_call(&curl, "while a background process runs"),
        processes_turn(&j!({"action": "stop", "id": "bg1"})),
        turn_tool_call(&curl, "after it"),
        turn_text("done"),
    ]);
    let run = sandbox
        .openai_run(&server)
        .args(["--json", "fetch"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let result = |index: usize| last_result(&server, index);
    assert!(result(1).contains("hello"), "{}", result(1));
    assert!(
        result(2).contains("\"background\":\"bg1\""),
        "{}",
        result(2)
    );
    assert!(!result(3).contains("hello"), "{}", result(3));
    assert!(result(3).contains("netrule.test"), "{}", result(3));
    assert!(result(5).contains("hello"), "{}", result(5));
}

/// Where the run's namespace cannot be made, each command runs as before (closed: no network
/// namespace, no socket), and the first one says so, once.
#[test]
fn without_the_runs_namespace_commands_fall_back_and_the_first_says_so_once() {
    let sandbox = Sandbox::new();
    if !available(&sandbox) {
        return;
    }
    let server = FakeModel::openai_turns([
        turn_tool_call("readlink /proc/self/ns/net", "one"),
        turn_tool_call("readlink /proc/self/ns/net", "two"),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        .env("AGENT_TEST_SANDBOX_NO_NETNS", "1")
        .args(["--mode", "allow-all", "go"])
        .assert()
        .success();
    let result =
        |index: usize| -> Value { serde_json::from_str(&last_result(&server, index)).unwrap() };
    let (first, second) = (result(1), result(2));
    let said = "the run's network namespace could not be made here";
    assert!(first["stderr"].as_str().unwrap().contains(said), "{first}");
    assert!(
        !second["stderr"].as_str().unwrap().contains(said),
        "{second}"
    );
    assert_eq!(first["stdout"], second["stdout"]);
}

/// In a session: `/ps` lists the background process (escaped), it runs on between messages,
/// and it is gone once the session ends (Ctrl+D).
#[test]
fn a_session_lists_its_background_processes_and_ends_them_with_it() {
    use super::session::{READY, session};
    let Some((sandbox, _, marker, _cleanup)) = with_python() else {
        return;
    };
    if !require_program("tmux") {
        return;
    }
    let server = FakeModel::openai_turns([background_turn(&marker), turn_text("it is up")]);
    let tmux = session(&sandbox, &server, "", "run -i --mode allow-all");
    tmux.wait_for(READY);
    tmux.keys(&["serve it", "Enter"]);
    tmux.wait_for("it is up");
    wait_for(GONE, "the background server to run", || {
        !with_marker(&marker).is_empty()
    });
    tmux.keys(&["/ps", "Enter"]);
    let screen = tmux.wait_for("they end with the session");
    assert!(
        screen.contains("bg1") && screen.contains("running"),
        "{screen}"
    );
    assert!(screen.contains("http.server"), "{screen}");
    tmux.keys(&["C-d"]);
    tmux.wait_for("EXIT=");
    wait_for(
        GONE,
        "the background server to be gone after the session",
        || with_marker(&marker).is_empty(),
    );
}

/// With `[network] mode = "allowlist"` the run's namespace holds the bridge to the proxy, and a
/// server started in the background is still reached directly on `localhost` (`NO_PROXY`).
#[test]
fn through_the_proxy_a_background_server_is_reached_on_localhost_too() {
    let Some((sandbox, port, marker, _cleanup)) = with_python() else {
        return;
    };
    sandbox.settings("[network]\nmode = \"allowlist\"\n");
    let server = FakeModel::openai_turns([
        background_turn(&marker),
        turn_tool_call(&fetch_command(port), "probe"),
        turn_tool_call("env | grep -c '^HTTP_PROXY=http://127.0.0.1'", "proxied"),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "serve and probe"])
        .assert()
        .success();
    assert!(
        last_result(&server, 2).contains("status=200"),
        "{}",
        last_result(&server, 2)
    );
    assert!(
        last_result(&server, 3).contains("\"stdout\":\"1\\n\""),
        "{}",
        last_result(&server, 3)
    );
    wait_for(
        GONE,
        "the background server to be gone after the run",
        || with_marker(&marker).is_empty(),
    );
}

/// The system prompt tells the model how to run a dev server where background processes can
/// start, and not where `background` is refused (the sandbox off).
#[test]
fn the_system_prompt_tells_of_background_processes_only_where_they_can_start() {
    let sandbox = Sandbox::new();
    if !available(&sandbox) {
        return;
    }
    for (args, told) in [(&[][..], true), (&["--sandbox", "off"][..], false)] {
        let server = FakeModel::openai_turns([turn_text("done")]);
        sandbox
            .openai_run(&server)
            .args(args)
            .arg("hi")
            .assert()
            .success();
        let system = server.request(0).system().unwrap();
        for says in [
            "`background: true`",
            "`processes` tool",
            "ends when this session ends",
        ] {
            assert_eq!(system.contains(says), told, "{args:?} {says}: {system}");
        }
    }
}
