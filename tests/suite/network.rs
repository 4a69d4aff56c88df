//! Network by host name (`[network] mode = "allowlist"`) through the real binary: local HTTP
//! servers on 127.0.0.1 stand in for the internet, named through `[network] hosts`. A
//! sandboxed `curl` reaches them only through the agent's proxy (the command runs in a network
//! namespace of its own), by the names the rules allow. Linux with the sandbox and `curl`;
//! skipped with a note elsewhere.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;

use super::harness::{Sandbox, json};
use super::support::require;
use pretty_assertions::assert_eq;

/// A tiny HTTP server on 127.0.0.1 that answers every request with `hello from NAME` and
/// closes. It lives until the test process ends.
fn server(name: &'static str) -> u16 {
    server_on("127.0.0.1", name)
}

/// Server `A`, shared by the tests: the port `settings` answers `allowed.test` and
/// `blocked.test` for.
fn server_a() -> u16 {
    static PORT: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *PORT.get_or_init(|| server("A"))
}

/// [`server`] listening on `address`.
fn server_on(address: &str, name: &'static str) -> u16 {
    let listener = TcpListener::bind((address, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let body = format!("hello from {name}\n");
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

fn program(name: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|output| output.status.success())
}

/// Whether these tests can run here: the sandbox works, network namespaces can be made and
/// `curl` exists.
fn available(sandbox: &Sandbox) -> bool {
    if !require("Linux", cfg!(target_os = "linux")) || !require("curl", program("curl")) {
        return false;
    }
    let output = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    require("sandbox", json(&output)["sandbox.active"]["value"] == true)
}

/// `allowed.test` allowed; it and `blocked.test` answered with 127.0.0.1 on server A's port
/// (a loopback answer reaches the port written with it, no other).
fn settings(extra: &str) -> String {
    settings_at(server_a(), extra)
}

/// [`settings`] with the answers for `port`.
fn settings_at(port: u16, extra: &str) -> String {
    format!(
        r#"
[network]
mode = "allowlist"
allow = ["allowed.test"]
hosts = {{ "allowed.test" = "127.0.0.1:{port}", "blocked.test" = "127.0.0.1:{port}" }}
{extra}
"#
    )
}

/// A sandbox with `settings(extra)` and server `A`'s port, when these tests can run.
fn ready(extra: &str) -> Option<(Sandbox, u16)> {
    let sandbox = Sandbox::new();
    sandbox.settings(&settings(extra));
    available(&sandbox)
        .then(server_a)
        .map(|port| (sandbox, port))
}

/// Writes the project's `.agent/settings.toml`.
fn project_file(sandbox: &Sandbox, toml: &str) {
    let project = sandbox.work().join(".agent");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("settings.toml"), toml).unwrap();
}

/// `curl` of `allowed.test`, then of `blocked.test` with the status code written last: the
/// command's stdout.
fn allowed_then_blocked(sandbox: &Sandbox, port: u16) -> String {
    let command = format!(
        "curl -sS http://allowed.test:{port}/; curl -sS -w '%{{http_code}}' http://blocked.test:{port}/"
    );
    let result = exec(sandbox, &command);
    result["stdout"].as_str().unwrap().to_owned()
}

/// `agent exec --json COMMAND` with `settings`: the result.
fn exec(sandbox: &Sandbox, command: &str) -> serde_json::Value {
    let output = sandbox
        .agent()
        .args(["exec", "--json", "--", command])
        .output()
        .unwrap();
    json(&output)
}

#[test]
fn an_allowed_name_is_reached_through_the_proxy() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let result = exec(&sandbox, &format!("curl -sS http://allowed.test:{port}/"));
    assert_eq!(result["stdout"], "hello from A\n", "{result}");
    let events = result["network"].as_array().unwrap();
    assert_eq!(events[0]["host"], "allowed.test");
    assert_eq!(events[0]["decision"], "allow");
    assert_eq!(events[0]["port"], port);
}

#[test]
fn an_unknown_name_is_refused_with_403_naming_it_and_the_setting() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let result = exec(
        &sandbox,
        &format!("curl -sS -w '%{{http_code}}' http://Blocked.test.:{port}/"),
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("403"), "{result}");
    assert!(stdout.contains("`blocked.test` port"), "{stdout}");
    assert!(
        stdout.contains("[network] allow = [\"blocked.test\"]"),
        "{stdout}"
    );
    assert!(!stdout.contains("hello"), "{stdout}");
    let event = &result["network"][0];
    assert_eq!(event["host"], "blocked.test", "{result}");
    assert_eq!(event["decision"], "deny");
    assert_eq!(event["allow_with"], "[network] allow = [\"blocked.test\"]");
}

#[test]
fn a_tunnel_to_an_unknown_name_is_refused_too() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let result = exec(
        &sandbox,
        &format!("curl -sS -p http://blocked.test:{port}/ 2>&1; echo \" exit=$?\""),
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.contains("403"), "{stdout}");
    assert!(!stdout.contains("hello"), "{stdout}");
    assert!(!stdout.contains("exit=0"), "{stdout}");
}

#[test]
fn deny_wins_over_a_wildcard_allow() {
    let sandbox = Sandbox::new();
    sandbox.settings(
        r#"
[network]
mode = "allowlist"
allow = ["*.test"]
deny = ["blocked.test"]
allow_local = [PORT]
hosts = { "allowed.test" = "127.0.0.1", "blocked.test" = "127.0.0.1" }
"#
        .replace("PORT", &server_a().to_string())
        .as_str(),
    );
    if !available(&sandbox) {
        return;
    }
    let stdout = allowed_then_blocked(&sandbox, server_a());
    assert!(stdout.starts_with("hello from A\n"), "{stdout}");
    assert!(stdout.ends_with("403"), "{stdout}");
    assert!(
        stdout.contains("[network] deny = [\"blocked.test\"]"),
        "{stdout}"
    );
}

#[test]
fn localhost_is_the_commands_own_namespace() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    // Direct (no proxy), the machine's server is not there; through the proxy, an address
    // no rule names is refused.
    let result = exec(
        &sandbox,
        &format!(
            "curl -sS http://127.0.0.1:{port}/; echo \"direct=$?\"; \
             curl -sS -w '%{{http_code}}' --proxy http://127.0.0.1:3128 --noproxy '' http://127.0.0.1:{port}/"
        ),
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(!stdout.contains("hello"), "{stdout}");
    assert!(stdout.contains("direct=7"), "{stdout}");
    assert!(stdout.ends_with("403"), "{stdout}");
}

#[test]
fn this_machine_is_reached_as_host_agent_internal_on_allow_local_ports_only() {
    let sandbox = Sandbox::new();
    let port_b = server("B");
    sandbox.settings(&settings(""));
    if !available(&sandbox) {
        return;
    }
    let command = format!("curl -sS -w '%{{http_code}}' http://host.agent.internal:{port_b}/");
    let result = exec(&sandbox, &command);
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("403"), "{stdout}");
    assert!(
        stdout.contains(&format!("[network] allow_local = [{port_b}]")),
        "{stdout}"
    );
    sandbox.settings(&settings(&format!("allow_local = [{port_b}]")));
    let result = exec(&sandbox, &command);
    assert_eq!(result["stdout"], "hello from B\n200", "{result}");
}

#[test]
fn the_command_cannot_open_other_unix_sockets() {
    let sandbox = Sandbox::new();
    sandbox.settings(&settings(""));
    if !available(&sandbox) || !program("python3") {
        return;
    }
    let outside = sandbox.root.path().join("service.sock");
    let listener = std::os::unix::net::UnixListener::bind(&outside).unwrap();
    let command = format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}')\" 2>&1; echo \"exit=$?\"",
        outside.display()
    );
    let result = exec(&sandbox, &command);
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.contains("exit=1"), "{stdout}");
    assert!(stdout.contains("Permission denied"), "{stdout}");
    drop(listener);
}

#[test]
fn a_project_file_cannot_open_the_network() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    project_file(
        &sandbox,
        "[network]\nmode = \"full\"\nallow = [\"blocked.test\"]\nallow_local = [1]\nhosts = { \"allowed.test\" = \"10.0.0.1\" }\n",
    );
    let stdout = allowed_then_blocked(&sandbox, port);
    assert!(stdout.starts_with("hello from A\n"), "{stdout}");
    assert!(stdout.ends_with("403"), "{stdout}");
}

#[test]
fn a_project_file_may_narrow() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    project_file(&sandbox, "[network]\ndeny = [\"allowed.test\"]\n");
    let stdout = allowed_then_blocked(&sandbox, port);
    assert!(
        stdout.starts_with("agent: network: `allowed.test` port"),
        "{stdout}"
    );
    assert!(stdout.ends_with("403"), "{stdout}");
}

#[test]
fn config_show_names_the_network_mode_and_rules() {
    let sandbox = Sandbox::new();
    sandbox.settings(&settings("presets = [\"npm\"]\nallow_local = [5432]"));
    let output = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown = json(&output);
    assert_eq!(shown["network.mode"]["value"], "allowlist", "{shown}");
    assert_eq!(shown["network.allow"]["value"][0], "allowed.test");
    assert_eq!(shown["network.presets"]["value"][0], "npm");
    assert_eq!(shown["network.allow_local"]["value"][0], 5432);
}

#[test]
fn malformed_network_settings_name_the_key() {
    let sandbox = Sandbox::new();
    for (toml, words) in [
        ("[network]\nmode = \"some\"\n", "network.mode"),
        ("[network]\nallow = [\"a@b\"]\n", "network.allow"),
        ("[network]\npresets = [\"nuget\"]\n", "network.presets"),
        ("[network]\nallow_local = [0]\n", "network.allow_local"),
        (
            "[network]\nhosts = { \"a.test\" = \"nowhere\" }\n",
            "network.hosts",
        ),
    ] {
        sandbox.settings(toml);
        let output = sandbox.agent().args(["config", "show"]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{toml}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(words), "{toml}: {stderr}");
    }
}

#[test]
fn https_goes_through_a_tunnel_the_proxy_does_not_open() {
    let sandbox = Sandbox::new();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    sandbox.settings(&settings_at(port, ""));
    if !available(&sandbox) || !program("openssl") {
        return;
    }
    let dir = sandbox.root.path();
    let made = std::process::Command::new("openssl")
        .current_dir(dir)
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
            "-days",
            "1",
            "-subj",
            "/CN=allowed.test",
            "-addext",
            "subjectAltName=DNS:allowed.test",
        ])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let mut server = std::process::Command::new("openssl")
        .current_dir(dir)
        .args([
            "s_server", "-quiet", "-www", "-cert", "cert.pem", "-key", "key.pem",
        ])
        .args(["-accept", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    super::harness::wait_for(
        std::time::Duration::from_secs(20),
        "openssl s_server",
        || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
    );
    let cert = dir.join("cert.pem");
    std::fs::copy(&cert, sandbox.work().join("cert.pem")).unwrap();
    let result = exec(
        &sandbox,
        &format!(
            "curl -sS --cacert cert.pem -o /dev/null -w '%{{http_code}}' https://allowed.test:{port}/"
        ),
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(result["stdout"], "200", "{result}");
    assert_eq!(result["network"][0]["decision"], "allow", "{result}");
}

#[test]
fn names_resolve_inside_only_when_allowed() {
    let sandbox = Sandbox::new();
    sandbox.settings(&settings(""));
    if !available(&sandbox) || !program("getent") {
        return;
    }
    let result = exec(
        &sandbox,
        "getent hosts allowed.test; echo \"allowed=$?\"; getent hosts blocked.test; echo \"blocked=$?\"; \
         getent hosts example.com; echo \"example=$?\"",
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(
        stdout.starts_with("127.0.0.1       allowed.test\nallowed=0\n"),
        "{stdout}"
    );
    assert!(stdout.contains("\nblocked=2\n"), "{stdout}");
    assert!(stdout.ends_with("\nexample=2\n"), "{stdout}");
}

#[test]
fn without_a_network_namespace_allowlist_refuses_all_network_and_says_why() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let output = sandbox
        .agent()
        .env("AGENT_TEST_SANDBOX_NO_NETNS", "1")
        .args(["exec", "--json", "--"])
        .arg(format!("curl -sS http://allowed.test:{port}/"))
        .output()
        .unwrap();
    let result = json(&output);
    assert!(
        !result["stdout"].as_str().unwrap().contains("hello"),
        "{result}"
    );
    assert_ne!(result["exit_code"], 0, "{result}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`[network] mode = \"allowlist\"` cannot be enforced here"),
        "{stderr}"
    );
    assert!(
        stderr.contains("commands get no network at all"),
        "{stderr}"
    );
    let shown = sandbox
        .agent()
        .env("AGENT_TEST_SANDBOX_NO_NETNS", "1")
        .args(["config", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("cannot be enforced here"), "{text}");
}

#[test]
fn the_old_sandbox_network_key_still_means_every_host() {
    let sandbox = Sandbox::new();
    sandbox.settings("[sandbox]\nnetwork = true\n");
    let output = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown = json(&output);
    assert_eq!(shown["network.mode"]["value"], "full", "{shown}");
    assert_eq!(shown["sandbox.network"]["value"], true, "{shown}");
}

#[test]
fn a_run_records_network_events_tells_the_model_and_sums_up() {
    use super::fake_model::{FakeModel, turn_text, turn_tool_call};
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let command =
        format!("curl -sS http://allowed.test:{port}/; curl -sS http://blocked.test:{port}/");
    let run = |json: bool| {
        let server =
            FakeModel::openai_turns([turn_tool_call(&command, "fetch"), turn_text("done")]);
        let mut agent = sandbox.agent();
        agent
            .env("OPENAI_API_KEY", "sk-test")
            .args(["run", "--provider", "openai", "--base-url"])
            .arg(server.openai_url())
            .args(["--allow", "curl"]);
        if json {
            agent.arg("--json");
        }
        let output = agent.arg("fetch").output().unwrap();
        let result = server.request(1).tool_results()[0].1.clone();
        (output, result)
    };
    let (output, result) = run(true);
    assert!(output.status.success(), "{output:?}");
    let events = super::harness::events(&output.stdout);
    let network: Vec<&serde_json::Value> = events
        .iter()
        .filter(|event| event["type"] == "network")
        .collect();
    assert_eq!(network.len(), 2, "{events:?}");
    assert_eq!(network[0]["host"], "allowed.test");
    assert_eq!(network[0]["decision"], "allow");
    assert_eq!(network[1]["host"], "blocked.test");
    assert_eq!(network[1]["decision"], "deny");
    assert_eq!(
        network[1]["allow_with"],
        "[network] allow = [\"blocked.test\"]"
    );
    let call = events
        .iter()
        .find(|event| event["type"] == "tool_call")
        .unwrap();
    assert_eq!(network[1]["command"], call["id"], "{events:?}");
    let transcripts = sandbox.transcripts().join("\n");
    assert!(
        transcripts.contains("\"type\":\"network\""),
        "{transcripts}"
    );
    // The model learns what was refused and what would allow it.
    assert!(result.contains("hello from A"), "{result}");
    assert!(result.contains("\"network_refused\""), "{result}");
    assert!(result.contains("blocked.test"), "{result}");

    let (output, _) = run(false);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("agent: network: refused `blocked.test` port"),
        "{stderr}"
    );
    assert!(
        stderr.contains("agent: network: blocked: 1 host (blocked.test)"),
        "{stderr}"
    );
}

#[test]
fn socks5_with_host_names_goes_through_the_same_rules() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let socks = "--proxy socks5h://127.0.0.1:3128";
    let result = exec(
        &sandbox,
        &format!(
            "curl -sS {socks} http://allowed.test:{port}/; curl -sS {socks} http://blocked.test:{port}/ 2>&1; echo \"exit=$?\""
        ),
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("hello from A\n"), "{stdout}");
    assert!(!stdout.contains("exit=0"), "{stdout}");
    assert_eq!(result["network"][1]["host"], "blocked.test", "{result}");
    assert_eq!(result["network"][1]["decision"], "deny", "{result}");
}

#[test]
fn what_mode_auto_runs_gets_no_network_even_through_the_proxy() {
    use super::fake_model::{FakeModel, turn_text, turn_tool_call};
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let settings = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    sandbox.settings(&format!("[permissions]\nmode = \"auto\"\n{settings}"));
    let command = format!("curl -sS http://allowed.test:{port}/");
    let server = FakeModel::openai_turns([turn_tool_call(&command, "fetch"), turn_text("done")]);
    let output = sandbox
        .agent()
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(["--json", "fetch"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let events = super::harness::events(&output.stdout);
    let decided = events
        .iter()
        .find(|event| event["type"] == "decision")
        .unwrap();
    // Auto let it run (sandboxed, no prompt) — with the network closed: no proxy to reach.
    assert_eq!(decided["decision"], "allow", "{events:?}");
    let result = server.request(1).tool_results()[0].1.clone();
    assert!(result.contains("\"sandbox_denied\":true"), "{result}");
    assert!(!result.contains("hello from A"), "{result}");
}

/// Where the proxy's private directory is inside a path the command may write (here `TMPDIR`
/// inside the workspace; also `writable = ["/tmp"]`), the command must not be able to swap
/// `proxy.sock` for a link to another Unix socket of the user (Docker, D-Bus, ssh-agent) that
/// the bridge — outside Landlock and seccomp — would connect to. With a mount namespace the
/// directory is hidden from the command; without one it is there, the link is made, and the
/// bridge refuses a socket that is not the agent's.
#[test]
fn the_command_cannot_point_the_bridge_at_another_socket() {
    let sandbox = Sandbox::new();
    sandbox.settings(&settings(""));
    if !available(&sandbox) {
        return;
    }
    let victim = sandbox.root.path().join("victim.sock");
    let listener = std::os::unix::net::UnixListener::bind(&victim).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.write_all(
                b"HTTP/1.0 200 OK\r\nContent-Length: 20\r\nConnection: close\r\n\r\nhost service reached",
            );
        }
    });
    let tmp = sandbox.work().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let command = format!(
        "d=$(ls -d {tmp}/agent-net-*) && rm -f $d/proxy.sock && ln -s {victim} $d/proxy.sock && \
         echo swapped; curl -sS --noproxy '*' http://127.0.0.1:3128/",
        tmp = tmp.display(),
        victim = victim.display()
    );
    for mounts in [true, false] {
        let mut agent = sandbox.agent();
        if !mounts {
            agent.env("AGENT_TEST_SANDBOX_NO_MOUNTS", "1");
        }
        let output = agent
            .env("TMPDIR", &tmp)
            .args(["exec", "--json", "--", &command])
            .output()
            .unwrap();
        let result = json(&output);
        let stdout = result["stdout"].as_str().unwrap_or_default();
        assert!(!stdout.contains("host service reached"), "{result}");
        // Hidden with a mount namespace; swapped (and refused) without one.
        assert_eq!(stdout.contains("swapped"), !mounts, "{result}");
    }
}

/// `allowlist` needs the sandbox: where it is off (by the settings or a flag), no command
/// runs, and that is said — on stderr even with -q, in `config show` and to the model —
/// instead of commands reaching every host.
#[test]
fn allowlist_without_the_sandbox_refuses_to_run_and_says_so() {
    let cases = [
        ("[sandbox]\nmode = \"off\"\n", None, false),
        ("", Some("off"), false),
        ("", None, true),
    ];
    for (extra, flag, unavailable) in cases {
        let sandbox = Sandbox::new();
        sandbox.settings(&settings(extra));
        let port = server_a();
        let mut agent = sandbox.agent();
        if unavailable {
            agent.env("AGENT_TEST_SANDBOX_UNAVAILABLE", "1");
        }
        agent.args(["exec", "-q"]);
        if let Some(mode) = flag {
            agent.args(["--sandbox", mode]);
        }
        let output = agent
            .arg("--")
            .arg(format!("curl -sS http://127.0.0.1:{port}/"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stdout.contains("hello"), "{stdout}");
        assert!(!output.status.success(), "{stderr}");
        assert!(
            stderr.contains("`[network] mode = \"allowlist\"` needs the sandbox"),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    let sandbox = Sandbox::new();
    sandbox.settings(&settings("[sandbox]\nmode = \"off\"\n"));
    let shown = sandbox.agent().args(["config", "show"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("needs the sandbox"), "{text}");
}

/// A request whose line holds a wide character and escape sequences is answered `400`; none
/// of the command's bytes reach the agent's stderr raw (they once did, in a panic's message).
#[test]
fn a_request_with_control_bytes_is_refused_and_never_printed_raw() {
    let Some((sandbox, _)) = ready("") else {
        return;
    };
    if !program("bash") {
        return;
    }
    let command = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; \
        printf \"GET http:/\\303\\251\\033]0;TITLE\\007\\033[31mRED HTTP/1.1\\r\\n\\r\\n\" >&3; \
        head -c 12 <&3'";
    let output = sandbox
        .agent()
        .args(["exec", "--", command])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.starts_with("HTTP/1.1 400"),
        "{stdout:?} / {stderr:?}"
    );
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr:?}"
    );
}

/// Plain HTTP through a CONNECT tunnel (`curl -p`) reaches the tunnel's host only: a `Host`
/// naming another site (which a CDN front end would route by) is refused.
#[test]
fn plain_http_through_a_tunnel_must_name_the_tunnel_host() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let run = |extra: &str| {
        let output = sandbox
            .agent()
            .args(["exec", "--json", "--"])
            .arg(format!("curl -sS -p {extra} http://allowed.test:{port}/"))
            .output()
            .unwrap();
        json(&output)
    };
    let same = run("");
    assert!(
        same["stdout"].as_str().unwrap().contains("hello from A"),
        "{same}"
    );
    let other = run("-H 'Host: evil.test'");
    assert!(
        !other["stdout"].as_str().unwrap().contains("hello"),
        "{other}"
    );
    let refused = other["network"].as_array().unwrap();
    assert!(
        refused.iter().any(|event| event["decision"] == "deny"
            && event["rule"].as_str().unwrap().contains("`evil.test`")),
        "{other}"
    );
}

/// A host refused again and again is told once on stderr.
#[test]
fn a_host_refused_many_times_is_one_line() {
    let Some((sandbox, port)) = ready("") else {
        return;
    };
    let curl = format!("curl -sS http://blocked.test:{port}/");
    let output = sandbox
        .agent()
        .args(["exec", "--", &format!("{curl}; {curl}; {curl}")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let told = stderr
        .lines()
        .filter(|line| line.starts_with("agent: network: refused `blocked.test`"))
        .count();
    assert_eq!(told, 1, "{stderr}");
}

/// A `hosts` answer that is loopback opens no port but the one written with it
/// (`"127.0.0.1:PORT"`) or one `allow_local` lists: an allowed name pointing at 127.0.0.1
/// does not reach sshd, Docker's TCP port or a database on this machine. Server B stands in
/// for such a service.
#[test]
fn a_loopback_answer_reaches_only_the_ports_named_for_it() {
    let Some((sandbox, port_a)) = ready("") else {
        return;
    };
    let port_b = server("B");
    let curl = |port: u16| format!("curl -sS -w '%{{http_code}}' http://allowed.test:{port}/");
    let result = exec(&sandbox, &curl(port_b));
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("403"), "{result}");
    assert!(!stdout.contains("hello"), "{result}");
    assert!(
        stdout.contains(&format!("for port {port_a} only")),
        "{stdout}"
    );
    // Without a port, the answer reaches the allow_local ports only.
    let no_port = "[network]\nmode = \"allowlist\"\nallow = [\"allowed.test\"]\n\
                   hosts = { \"allowed.test\" = \"127.0.0.1\" }\n";
    sandbox.settings(no_port);
    let result = exec(&sandbox, &curl(port_b));
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("403"), "{result}");
    assert!(
        stdout.contains(&format!(
            "[network] hosts = {{ \"allowed.test\" = \"127.0.0.1:{port_b}\" }}"
        )),
        "{stdout}"
    );
    sandbox.settings(&format!("{no_port}allow_local = [{port_b}]\n"));
    let result = exec(&sandbox, &curl(port_b));
    assert_eq!(result["stdout"], "hello from B\n200", "{result}");
}

/// This machine's own non-loopback address (found through the route a datagram would take)
/// is inside like loopback: a `hosts` answer naming it reaches no port but its own.
#[test]
fn this_machines_own_address_is_inside_too() {
    let own = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|socket| {
            socket.connect("192.0.2.200:9")?;
            socket.local_addr()
        })
        .map(|address| address.ip())
        .ok()
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified());
    let Some(own) = own else {
        require("a non-loopback address of this machine", false);
        return;
    };
    let sandbox = Sandbox::new();
    let port = server_on("0.0.0.0", "own");
    let answer = |written: String| {
        format!(
            "[network]\nmode = \"allowlist\"\nallow = [\"own.test\"]\nhosts = {{ \"own.test\" = \"{written}\" }}\n"
        )
    };
    sandbox.settings(&answer(own.to_string()));
    if !available(&sandbox) {
        return;
    }
    let curl = format!("curl -sS -w '%{{http_code}}' http://own.test:{port}/");
    let result = exec(&sandbox, &curl);
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("403"), "{result}");
    assert!(!stdout.contains("hello"), "{result}");
    sandbox.settings(&answer(std::net::SocketAddr::new(own, port).to_string()));
    let result = exec(&sandbox, &curl);
    assert_eq!(result["stdout"], "hello from own\n200", "{result}");
}

/// An origin that answers the first request head, then reports every byte it got up to the
/// proxy closing the connection.
fn recording_server() -> (u16, std::sync::mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (seen_tx, seen_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let seen_tx = seen_tx.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut byte = [0u8; 1];
                while !got.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    got.push(byte[0]);
                }
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
                let _ = stream.shutdown(std::net::Shutdown::Write);
                let _ = stream.read_to_end(&mut got);
                let _ = seen_tx.send(String::from_utf8_lossy(&got).into_owned());
            });
        }
    });
    (port, seen_rx)
}

/// Pipelined plain-HTTP requests on one connection to the proxy: the first is decided and
/// reaches its origin; the next (for another host by URL or by `Host`) never does.
#[test]
fn a_pipelined_request_to_another_host_never_reaches_the_server() {
    let (port, seen) = recording_server();
    let sandbox = Sandbox::new();
    sandbox.settings(&settings_at(port, ""));
    if !available(&sandbox) || !program("bash") {
        return;
    }
    let command = format!(
        "bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; \
         printf \"GET http://allowed.test:{port}/first HTTP/1.1\\r\\n\\r\\n\
         GET http://blocked.test:{port}/second HTTP/1.1\\r\\n\\r\\n\
         GET /third HTTP/1.1\\r\\nHost: blocked.test\\r\\n\\r\\n\" >&3; cat <&3'"
    );
    let result = exec(&sandbox, &command);
    assert!(
        result["stdout"].as_str().unwrap().ends_with("hello"),
        "{result}"
    );
    // A guard against a hang, not a measure.
    let got = seen
        .recv_timeout(std::time::Duration::from_secs(60))
        .unwrap();
    assert!(got.starts_with("GET /first HTTP/1.1\r\n"), "{got:?}");
    assert!(!got.contains("second") && !got.contains("third"), "{got:?}");
}

/// A project's `deny = ["*"]` denies everything, addresses a user rule names included.
#[test]
fn a_project_deny_of_everything_covers_addresses() {
    let sandbox = Sandbox::new();
    let port = server_a();
    sandbox.settings(&format!(
        "[network]\nmode = \"allowlist\"\nallow = [\"127.0.0.1\"]\nallow_local = [{port}]\n"
    ));
    if !available(&sandbox) {
        return;
    }
    let curl = format!(
        "curl -sS -w '%{{http_code}}' --proxy http://127.0.0.1:3128 --noproxy '' http://127.0.0.1:{port}/"
    );
    let result = exec(&sandbox, &curl);
    assert_eq!(result["stdout"], "hello from A\n200", "{result}");
    project_file(&sandbox, "[network]\ndeny = [\"*\"]\n");
    let result = exec(&sandbox, &curl);
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("403"), "{result}");
    assert!(stdout.contains("deny = [\"*\"]"), "{stdout}");
}

/// In `allowlist` mode the system prompt names the hosts commands reach (a bounded list, then
/// "and N more") and tells the model to ask the user for another one, instead of saying that
/// commands have no network.
#[test]
fn the_system_prompt_names_the_reachable_hosts_and_how_to_ask() {
    use super::fake_model::{FakeModel, turn_text};
    let sandbox = Sandbox::new();
    let many: Vec<String> = (1..=20).map(|n| format!("\"h{n}.test\"")).collect();
    sandbox.settings(&format!(
        "[network]\nmode = \"allowlist\"\nallow = [\"allowed.test\", {}]\nallow_local = [5432]\n",
        many.join(", ")
    ));
    if !available(&sandbox) {
        return;
    }
    let server = FakeModel::openai_turns([turn_text("done")]);
    let output = sandbox
        .agent()
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .arg("hi")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let system = server.request(0).system().unwrap();
    assert!(
        system
            .contains("only through the agent's proxy, to these hosts: `allowed.test`, `h1.test`"),
        "{system}"
    );
    assert!(system.contains("`h11.test`, and 10 more."), "{system}");
    assert!(!system.contains("h12.test"), "{system}");
    assert!(
        system.contains("add the host to `[network] allow`"),
        "{system}"
    );
    assert!(!system.contains("cannot use the network"), "{system}");
}

/// An allow rule written with hosts of its own (`{ command = "curl -sS", net = [...] }`)
/// opens them for the commands it allows, and for no other command: `curl -s`, allowed by a
/// plain rule, is refused the same host. A project file cannot write such a rule.
#[test]
fn an_allow_rule_opens_its_own_hosts_for_its_commands_only() {
    use super::fake_model::{FakeModel, turn_text, turn_tool_call};
    let sandbox = Sandbox::new();
    let port = server_a();
    sandbox.settings(&format!(
        "[permissions.commands]\n\
         allow = [\"curl -s\", {{ command = \"curl -sS\", net = [\"netrule.test\"] }}]\n\
         [network]\nmode = \"allowlist\"\nhosts = {{ \"netrule.test\" = \"127.0.0.1:{port}\" }}\n"
    ));
    if !available(&sandbox) {
        return;
    }
    let url = format!("http://netrule.test:{port}/");
    let server = FakeModel::openai_turns([
        turn_tool_call(&format!("curl -sS {url}"), "with the rule's hosts"),
        turn_tool_call(&format!("curl -s {url}"), "another rule"),
        turn_text("done"),
    ]);
    let run = sandbox
        .agent()
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--json", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .arg("fetch")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let results = server.request(2).tool_results();
    assert!(results[0].1.contains("hello from A"), "{results:?}");
    assert!(!results[1].1.contains("hello"), "{results:?}");
    assert!(results[1].1.contains("netrule.test"), "{results:?}");
    let events = super::harness::events(&run.stdout);
    let allowed = events
        .iter()
        .find(|event| event["type"] == "network" && event["decision"] == "allow")
        .unwrap();
    assert!(
        allowed["rule"]
            .as_str()
            .unwrap()
            .contains("command = \"curl -sS\", net = [\"netrule.test\"]"),
        "{allowed}"
    );
    // config show lists it; a project file's such rule is ignored (with a warning).
    let shown = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown = json(&shown);
    assert_eq!(
        shown["network.rule_hosts"]["value"][0]["net"][0], "netrule.test",
        "{shown}"
    );
    project_file(
        &sandbox,
        "[permissions.commands]\nallow = [{ command = \"curl -s\", net = [\"blocked.test\"] }]\n",
    );
    let shown = sandbox.agent().args(["config", "show"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&shown.stderr);
    assert!(stderr.contains("cannot add allow rules"), "{stderr}");
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(!text.contains("blocked.test"), "{text}");
}

/// At a terminal a host no rule decides is asked about, once per host, while the command's
/// connection waits: two connections to it in one command ask once; "2" (this run) holds for
/// the next command too; "3" (this project) is saved in the user settings file.
#[test]
fn at_a_terminal_a_new_host_is_asked_about_once_and_this_run_holds() {
    use super::fake_model::{FakeModel, turn_text, turn_tool_call};
    use super::tty::run_in_tmux;
    let port = server_a();
    let sandbox = Sandbox::new();
    sandbox.settings(&format!(
        "[permissions.commands]\nallow = [\"curl\"]\n\
         [network]\nmode = \"allowlist\"\n\
         hosts = {{ \"new.test\" = \"127.0.0.1:{port}\", \"other.test\" = \"127.0.0.1:{port}\" }}\n"
    ));
    if !available(&sandbox) || !require("tmux", program("tmux")) {
        return;
    }
    let curl = |host: &str| format!("curl -sS http://{host}:{port}/");
    let server = FakeModel::openai_turns([
        turn_tool_call(
            &format!("{} && {}", curl("new.test"), curl("new.test")),
            "twice",
        ),
        turn_tool_call(
            &format!("{} && {}", curl("new.test"), curl("other.test")),
            "again",
        ),
        turn_text("done"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'fetch'");
    let screen = tmux.wait_for("wants `new.test`");
    assert!(
        screen.contains(&format!("port {port}: 1 once · 2 this run")),
        "{screen}"
    );
    tmux.keys(&["2"]);
    let screen = tmux.wait_for("wants `other.test`");
    assert_eq!(screen.matches("wants `new.test`").count(), 1, "{screen}");
    tmux.keys(&["3"]);
    tmux.wait_for("EXIT=0");
    let first = &server.request(1).tool_results()[0].1;
    assert_eq!(first.matches("hello from A").count(), 2, "{first}");
    let second = &server.request(2).tool_results()[1].1;
    assert_eq!(second.matches("hello from A").count(), 2, "{second}");
    let saved = std::fs::read_to_string(sandbox.config_dir().join("settings.toml")).unwrap();
    assert!(
        saved.contains(".network]\nallow = [\"other.test\"]"),
        "{saved}"
    );
    // The saved host holds in the next run, asking nobody.
    let run = sandbox
        .agent()
        .args(["exec", "--json", "--"])
        .arg(curl("other.test"))
        .output()
        .unwrap();
    assert_eq!(json(&run)["stdout"], "hello from A\n", "{run:?}");
}

/// A client that knows no proxy reaches this machine's `allow_local` ports too: inside the
/// namespace `host.agent.internal` resolves to an address where the bridge listens on those
/// ports (and opens each connection through the proxy). Other ports are not there.
#[test]
fn allow_local_ports_are_reached_by_clients_without_a_proxy() {
    let port_b = server("B");
    let port_c = server("C");
    let sandbox = Sandbox::new();
    sandbox.settings(&settings(&format!("allow_local = [{port_b}]")));
    if !available(&sandbox) || !program("getent") {
        return;
    }
    let curl = |port: u16| {
        format!("curl -sS --noproxy '*' http://host.agent.internal:{port}/; echo \" exit=$?\"")
    };
    let result = exec(&sandbox, &format!("{}; {}", curl(port_b), curl(port_c)));
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("hello from B\n exit=0\n"), "{result}");
    assert!(!stdout.contains("hello from C"), "{result}");
    assert!(stdout.trim_end().ends_with("exit=7"), "{result}");
    let events = result["network"].as_array().unwrap();
    assert_eq!(events[0]["host"], "host.agent.internal", "{result}");
    assert_eq!(events[0]["decision"], "allow", "{result}");
    // Without allow_local the name does not resolve inside.
    sandbox.settings(&settings(""));
    let result = exec(
        &sandbox,
        "getent hosts host.agent.internal; echo \"exit=$?\"",
    );
    assert_eq!(result["stdout"], "exit=2\n", "{result}");
}

/// `escalate.network` names hosts: a person's yes opens them through the proxy for that
/// command only — the next command reaching the same host is asked about again — and the
/// proxy's event names the escalation as the rule. A command whose own sandbox has the proxy
/// (a rule allowed it) still reaches what `[network] allow` allows besides.
#[test]
fn an_escalation_opens_its_hosts_through_the_proxy_for_its_command_only() {
    // Mode `auto` closes the network of what it lets through; a yes opens the same.
    for mode in ["ask", "auto"] {
        if !escalation_opens_its_hosts_for_its_command(mode) {
            return;
        }
    }
}

/// [`an_escalation_opens_its_hosts_through_the_proxy_for_its_command_only`] in `mode`; `false`
/// where it cannot run.
fn escalation_opens_its_hosts_for_its_command(mode: &str) -> bool {
    use super::escalate::escalated;
    use super::fake_model::{FakeModel, turn_text, turn_tool_call};
    use super::tty::run_in_tmux;
    let port = server_a();
    let allowed = server("B");
    let sandbox = Sandbox::new();
    sandbox.settings(&format!(
        "[permissions.commands]\nallow = [\"curl\"]\n\
         [network]\nmode = \"allowlist\"\nallow = [\"allowed.test\"]\n\
         hosts = {{ \"esc.test\" = \"127.0.0.1:{port}\", \
         \"allowed.test\" = \"127.0.0.1:{allowed}\" }}\n"
    ));
    if !available(&sandbox) {
        return false;
    }
    let curl = format!("curl -sS -w ' %{{http_code}}' http://esc.test:{port}/");
    let server = FakeModel::openai_turns([
        escalated(
            &format!("{curl}; curl -sS http://allowed.test:{allowed}/"),
            serde_json::json!({"network": ["esc.test"], "reason": "fetch the fixture"}),
        ),
        turn_tool_call(&curl, "again, without escalating"),
        turn_text("done"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], &format!("--mode {mode} 'fetch'"));
    let screen = tmux.wait_for("with more than the sandbox gives");
    assert!(
        screen.contains("this command asks with network to esc.test, through the agent's proxy"),
        "{screen}"
    );
    tmux.keys(&["1"]);
    // The same host from the next command: asked about, as for any command.
    tmux.wait_for("wants `esc.test`");
    tmux.keys(&["0"]);
    tmux.wait_for("EXIT=0");
    let first = &server.request(1).tool_results()[0].1;
    assert!(first.contains("hello from A\\n 200"), "{first}");
    assert!(first.contains("hello from B"), "{first}");
    let second = &server.request(2).tool_results()[1].1;
    assert!(
        !second.contains("hello from A") && second.contains(" 403"),
        "{second}"
    );
    let path = sandbox.transcript_paths().into_iter().next().unwrap();
    let events = super::harness::events(&std::fs::read(path).unwrap());
    let allowed: Vec<&serde_json::Value> = events
        .iter()
        .filter(|event| {
            event["type"] == "network"
                && event["decision"] == "allow"
                && event["host"] == "esc.test"
        })
        .collect();
    assert_eq!(allowed.len(), 1, "{events:?}");
    assert!(
        allowed[0]["rule"]
            .as_str()
            .unwrap()
            .contains("escalate.network"),
        "{allowed:?}"
    );
    true
}

/// In mode `auto`, a yes to `escalate.network` grants the hosts asked for and nothing else —
/// not what `[network] allow` allows, which `auto`'s closed network never reached: the
/// command keeps what `auto` gives it — only the workspace writable (not `[sandbox]
/// writable`'s extras) and git's safety environment — as the same command had without the
/// escalation (first turn, let through by the mode).
#[test]
fn in_mode_auto_an_escalations_yes_adds_only_the_network_asked_for() {
    use super::escalate::escalated;
    use super::fake_model::{FakeModel, turn_text, turn_tool_call};
    use super::tty::run_in_tmux;
    let port = server_a();
    let allowed = server("B");
    let sandbox = Sandbox::new();
    let tmp = sandbox.root.path().join("tmp");
    let extra = sandbox.root.path().join("extra");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    sandbox.settings(&format!(
        "[sandbox]\nwritable = [{:?}]\n\
         [network]\nmode = \"allowlist\"\nallow = [\"allowed.test\"]\n\
         hosts = {{ \"esc.test\" = \"127.0.0.1:{port}\", \
         \"allowed.test\" = \"127.0.0.1:{allowed}\" }}\n",
        extra.display().to_string()
    ));
    if !available(&sandbox) {
        return;
    }
    // `[network] allow`'s host too: the sandbox `auto` gives has the network closed, so the
    // escalation opens the host asked for and nothing else.
    let run = |name: &str| {
        format!(
            "curl -sS -w ' %{{http_code}}' http://esc.test:{port}/; \
             curl -sS -w ' %{{http_code}}' http://allowed.test:{allowed}/; touch {}; env",
            extra.join(name).display()
        )
    };
    let server = FakeModel::openai_turns([
        turn_tool_call(&run("plain"), "the same, without escalating"),
        escalated(
            &run("escalated"),
            serde_json::json!({"network": ["esc.test"], "reason": "fetch the fixture"}),
        ),
        turn_text("done"),
    ]);
    let tmp = tmp.display().to_string();
    let tmux = run_in_tmux(
        &sandbox,
        &server,
        &[("TMPDIR", tmp.as_str())],
        "--mode auto 'fetch'",
    );
    let screen = tmux.wait_for("with more than the sandbox gives");
    assert!(
        screen.contains("this command asks with network to esc.test, through the agent's proxy"),
        "{screen}"
    );
    tmux.keys(&["1"]);
    tmux.wait_for("EXIT=0");
    let path = sandbox.transcript_paths().into_iter().next().unwrap();
    let events = super::harness::events(&std::fs::read(path).unwrap());
    let by: Vec<&serde_json::Value> = events
        .iter()
        .filter(|event| event["type"] == "decision")
        .map(|event| &event["by"])
        .collect();
    assert_eq!(by, ["mode", "person"], "{events:?}");
    let results: Vec<&serde_json::Value> = events
        .iter()
        .filter(|event| event["type"] == "tool_result")
        .map(|event| &event["result"])
        .collect();
    assert!(
        !results[0]["stdout"]
            .as_str()
            .unwrap()
            .contains("hello from A")
    );
    assert!(
        results[1]["stdout"]
            .as_str()
            .unwrap()
            .contains("hello from A\n 200"),
        "{}",
        results[1]
    );
    for result in &results {
        assert!(
            !result["stdout"].as_str().unwrap().contains("hello from B"),
            "{result}"
        );
    }
    for (name, result) in [("plain", results[0]), ("escalated", results[1])] {
        assert!(
            !extra.join(name).exists(),
            "{name} wrote the extra: {result}"
        );
        assert!(
            result["stderr"].as_str().unwrap().contains("touch"),
            "{name}: {result}"
        );
        // git's safety settings are in its environment.
        assert!(
            result["stdout"]
                .as_str()
                .unwrap()
                .contains("=core.fsmonitor\n"),
            "{name}: {result}"
        );
    }
}

/// While a host question is shown the command goes on: its timeout holds, and when it ends
/// the question ends with it, unanswered — which refuses that connection only: the next
/// command reaching the host is asked about again.
#[test]
fn a_host_question_ends_with_its_command_and_refuses_that_connection_only() {
    use super::fake_model::{FakeModel, Turn, turn_text, turn_tool_call};
    use super::tty::run_in_tmux;
    let port = server_a();
    let sandbox = Sandbox::new();
    sandbox.settings(&format!(
        "[permissions.commands]\nallow = [\"curl\"]\n\
         [network]\nmode = \"allowlist\"\nhosts = {{ \"new.test\" = \"127.0.0.1:{port}\" }}\n"
    ));
    if !available(&sandbox) {
        return;
    }
    let curl = format!("curl -sS http://new.test:{port}/");
    let timed = serde_json::json!({
        "command": curl,
        "description": "times out while asked",
        "timeout_ms": 2000,
    });
    let server = FakeModel::openai_turns([
        Turn::default().with_call("call_timed", "shell", &timed.to_string()),
        turn_tool_call(&curl, "again"),
        turn_text("done"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'fetch'");
    tmux.wait_for("wants `new.test`");
    // Nobody answers: the command's own timeout ends it, and the question with it.
    let screen = tmux.wait_for("not answered");
    // Asked once before it ended (the next command's question may be on screen already).
    let before = &screen[..screen.find("not answered").unwrap_or(0)];
    assert_eq!(before.matches("wants `new.test`").count(), 1, "{screen}");
    tmux.wait_for("wants `new.test`");
    tmux.keys(&["1"]);
    tmux.wait_for("EXIT=0");
    let first = &server.request(1).tool_results()[0].1;
    assert!(first.contains("\"timed_out\":true"), "{first}");
    let second = &server.request(2).tool_results()[1].1;
    assert!(second.contains("hello from A"), "{second}");
}
