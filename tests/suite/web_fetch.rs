//! `web_fetch` through the real binary: a local HTTP server on 127.0.0.1 stands in for the
//! internet, named through `[network] hosts` (`allowed.test` allowed, `blocked.test` not).
//! The agent fetches by itself (no sandbox needed) under the same host rules as the proxy;
//! without a terminal only allowed hosts are reached.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::fake_model::{FakeModel, Turn, turn_text};
use super::harness::{Sandbox, events};
use pretty_assertions::assert_eq;

/// The page `/page` serves.
const PAGE: &str = "<!doctype html><html><head><title>T</title><script>steal()</script></head>\
    <body><h1>Hello</h1><p>Read <a href=\"/docs\">the docs</a>.</p></body></html>";

/// Ten megabytes of text (`/big`).
const BIG_BYTES: usize = 10 * 1024 * 1024;

/// A server answering by path: `/page` (HTML), `/json`, `/png`, `/big` (10 MB of text),
/// `/endless` (text that never ends), `/to-blocked` and `/to-page` (redirects to
/// `blocked.test`'s and `allowed.test`'s `/page` on the same port). Every request head is
/// recorded.
fn server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&heads);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let heads = Arc::clone(&recorded);
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                heads.lock().unwrap().push(head);
                let reply = |stream: &mut std::net::TcpStream,
                             status: &str,
                             extra: &str,
                             body: &[u8]| {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(body);
                };
                match path.as_str() {
                    "/page" => reply(
                        &mut stream,
                        "200 OK",
                        "Content-Type: text/html\r\n",
                        PAGE.as_bytes(),
                    ),
                    "/json" => reply(
                        &mut stream,
                        "200 OK",
                        "Content-Type: application/json\r\n",
                        b"{\"a\": [1, 2]}",
                    ),
                    "/png" => reply(
                        &mut stream,
                        "200 OK",
                        "Content-Type: image/png\r\n",
                        b"\x89PNG\r\n\x1a\n\0\0",
                    ),
                    "/big" => reply(
                        &mut stream,
                        "200 OK",
                        "Content-Type: text/plain\r\n",
                        &vec![b'x'; BIG_BYTES],
                    ),
                    "/endless" => {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
                        );
                        let chunk = vec![b'y'; 65_536];
                        while stream.write_all(&chunk).is_ok() {}
                    }
                    "/to-blocked" => reply(
                        &mut stream,
                        "302 Found",
                        &format!("Location: http://blocked.test:{port}/page\r\n"),
                        b"",
                    ),
                    "/to-page" => reply(
                        &mut stream,
                        "302 Found",
                        &format!("Location: http://allowed.test:{port}/page\r\n"),
                        b"",
                    ),
                    _ => reply(&mut stream, "404 Not Found", "", b"no"),
                }
            });
        }
    });
    (port, heads)
}

/// Settings naming the server: `allowed.test` (and `localhost`, which DNS answers with a
/// loopback address) allowed; `blocked.test` answered but not allowed.
fn settings(port: u16, mode: &str, extra: &str) -> String {
    format!(
        r#"
[network]
mode = "{mode}"
allow = ["allowed.test", "localhost"]
hosts = {{ "allowed.test" = "127.0.0.1:{port}", "blocked.test" = "127.0.0.1:{port}" }}
{extra}
"#
    )
}

fn call(arguments: &Value) -> Turn {
    Turn::default().with_call("fetch_1", "web_fetch", &arguments.to_string())
}

/// One `web_fetch` call with `arguments` (no terminal), then a final answer: the result the
/// model got, the run's `--json` events and its stderr without `--json`.
fn fetch(sandbox: &Sandbox, arguments: &Value) -> (Value, Vec<Value>, String) {
    let run = |json: bool| {
        let server = FakeModel::openai_turns([call(arguments), turn_text("done")]);
        let mut agent = sandbox.openai_run(&server);
        if json {
            agent.arg("--json");
        }
        let output = agent.arg("read the page").output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let results = server.request(1).tool_results();
        (output, results[0].1.clone())
    };
    let (output, result) = run(true);
    let (plain, _) = run(false);
    (
        serde_json::from_str(&result).unwrap(),
        events(&output.stdout),
        String::from_utf8_lossy(&plain.stderr).into_owned(),
    )
}

fn ready(mode: &str, extra: &str) -> (Sandbox, u16, Arc<Mutex<Vec<String>>>) {
    let (port, heads) = server();
    let sandbox = Sandbox::new();
    sandbox.settings(&settings(port, mode, extra));
    (sandbox, port, heads)
}

#[test]
fn html_comes_as_markdown_with_the_final_url_and_status_and_no_credentials() {
    let (sandbox, port, heads) = ready("allowlist", "");
    let url = format!("http://allowed.test:{port}/to-page");
    let (result, events, stderr) = fetch(&sandbox, &json!({ "url": url }));
    assert_eq!(
        result["content"], "# Hello\n\nRead [the docs](/docs).",
        "{result}"
    );
    assert_eq!(result["status"], 200);
    assert_eq!(result["url"], format!("http://allowed.test:{port}/page"));
    // Each hop is a decision of its own, named in the events.
    let network: Vec<&Value> = events.iter().filter(|e| e["type"] == "network").collect();
    assert_eq!(network.len(), 2, "{events:?}");
    assert!(
        network
            .iter()
            .all(|e| e["decision"] == "allow" && e["host"] == "allowed.test")
    );
    assert_eq!(network[0]["command"], "fetch_1");
    assert!(
        stderr.contains(&format!("✓ fetch {url} · 200 ·")),
        "{stderr}"
    );
    // No credentials, no cookies: the model's API key never reaches the page's server.
    for head in heads.lock().unwrap().iter() {
        let lower = head.to_ascii_lowercase();
        assert!(
            !lower.contains("authorization") && !lower.contains("cookie"),
            "{head}"
        );
        assert!(!head.contains(super::harness::KEY), "{head}");
    }
    let (json, ..) = fetch(
        &sandbox,
        &json!({ "url": format!("http://allowed.test:{port}/json") }),
    );
    assert_eq!(json["content"], "{\"a\": [1, 2]}");
    let (png, ..) = fetch(
        &sandbox,
        &json!({ "url": format!("http://allowed.test:{port}/png") }),
    );
    assert_eq!(png["error"]["code"], "EINVAL", "{png}");
    assert!(
        png["error"]["message"]
            .as_str()
            .unwrap()
            .contains("image/png"),
        "{png}"
    );
}

/// In every mode, `full` too: a fetch is the agent's own act, with no policy decision before
/// it, so a host no rule names is refused where nobody can be asked.
#[test]
fn a_host_no_rule_allows_is_refused_without_a_terminal_naming_the_setting() {
    for mode in ["allowlist", "full"] {
        refused_without_a_terminal(mode);
    }
}

fn refused_without_a_terminal(mode: &str) {
    let (sandbox, port, heads) = ready(mode, "");
    for (path, host) in [
        (format!("http://blocked.test:{port}/page"), "blocked.test"),
        // A redirect is decided again: to a host no rule allows, it is not followed.
        (
            format!("http://allowed.test:{port}/to-blocked"),
            "blocked.test",
        ),
    ] {
        let (result, events, stderr) = fetch(&sandbox, &json!({ "url": path }));
        assert_eq!(result["error"]["code"], "EDENIED", "{result}");
        let message = result["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("[network] allow = [\"blocked.test\"]"),
            "{message}"
        );
        let denied: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "network" && e["decision"] == "deny")
            .collect();
        assert_eq!(denied.len(), 1, "{events:?}");
        assert_eq!(denied[0]["host"], host);
        assert_eq!(
            denied[0]["allow_with"],
            "[network] allow = [\"blocked.test\"]"
        );
        assert!(stderr.contains("⊘ fetch"), "{stderr}");
    }
    assert!(
        heads
            .lock()
            .unwrap()
            .iter()
            .all(|head| !head.contains("blocked.test")),
        "a refused host was reached"
    );
}

#[test]
fn private_and_loopback_addresses_are_refused_unless_the_rules_name_their_port() {
    let (sandbox, port, heads) = ready("full", "");
    for url in [
        // An address no rule names.
        format!("http://127.0.0.1:{port}/page"),
        // An allowed name DNS answers with a loopback address.
        format!("http://localhost:{port}/page"),
        // Mode `full` opens public hosts only.
        format!("http://[::ffff:127.0.0.1]:{port}/page"),
    ] {
        let (result, ..) = fetch(&sandbox, &json!({ "url": url }));
        assert_eq!(result["error"]["code"], "EDENIED", "{url}: {result}");
    }
    for url in ["file:///etc/passwd", "data:text/plain,hi"] {
        let (result, ..) = fetch(&sandbox, &json!({ "url": url }));
        assert_eq!(result["error"]["code"], "EINVAL", "{url}: {result}");
    }
    assert!(
        heads.lock().unwrap().is_empty(),
        "an inside address was reached"
    );
    // The port written with the answer is reached.
    let (result, ..) = fetch(
        &sandbox,
        &json!({ "url": format!("http://allowed.test:{port}/page") }),
    );
    assert_eq!(result["status"], 200, "{result}");
}

#[test]
fn a_large_or_endless_body_is_cut_at_the_limit_and_says_so() {
    let (sandbox, port, _) = ready("allowlist", "");
    for (path, limit) in [("/big", None), ("/endless", Some(5_000))] {
        let mut arguments = json!({ "url": format!("http://allowed.test:{port}{path}") });
        if let Some(limit) = limit {
            arguments["max_bytes"] = json!(limit);
        }
        let (result, _, stderr) = fetch(&sandbox, &arguments);
        let limit = limit.unwrap_or(100_000);
        assert_eq!(result["content"].as_str().unwrap().len(), limit, "{path}");
        assert!(
            result["cut"].as_str().unwrap().contains(&limit.to_string()),
            "{result}"
        );
        assert!(
            stderr.contains(&format!("cut at {limit} bytes")),
            "{stderr}"
        );
    }
}

#[test]
fn web_fetch_is_offered_only_when_the_network_settings_say_so() {
    let (port, _) = server();
    for (mode, extra, offered) in [
        ("off", "", false),
        ("allowlist", "", true),
        ("full", "", true),
        ("off", "web_fetch = true", true),
        ("full", "web_fetch = false", false),
    ] {
        let sandbox = Sandbox::new();
        sandbox.settings(&settings(port, mode, extra));
        let server = FakeModel::openai_turns([turn_text("done")]);
        let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let names = server.request(0).tool_names();
        assert_eq!(
            names.iter().any(|name| name == "web_fetch"),
            offered,
            "{mode} {extra}: {names:?}"
        );
    }
}

/// At a terminal a host no rule decides is asked about — the same per-host prompt commands
/// get — and "this run" holds for the next fetch of that host, asking nobody.
#[test]
fn at_a_terminal_a_new_host_is_asked_about_once_for_the_run() {
    use super::support::require::require_program;
    use super::tty::run_in_tmux;
    if !cfg!(unix) || !require_program("tmux") {
        return;
    }
    let (port, heads) = server();
    let sandbox = Sandbox::new();
    sandbox.settings(&format!(
        "[network]\nmode = \"allowlist\"\nhosts = {{ \"new.test\" = \"127.0.0.1:{port}\" }}\n"
    ));
    let url = format!("http://new.test:{port}/page");
    let server = FakeModel::openai_turns([
        call(&json!({ "url": url })),
        Turn::default().with_call("fetch_2", "web_fetch", &json!({ "url": url }).to_string()),
        turn_text("done"),
    ]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'read it'");
    let screen = tmux.wait_for("wants `new.test`");
    assert!(
        screen.contains(&format!(
            "`fetch {url}` wants `new.test` port {port}: 1 once"
        )),
        "{screen}"
    );
    tmux.keys(&["2"]);
    let screen = tmux.wait_for("EXIT=0");
    assert_eq!(screen.matches("wants `new.test`").count(), 1, "{screen}");
    for (request, id) in [(1, "fetch_1"), (2, "fetch_2")] {
        let results = server.request(request).tool_results();
        let result = &results.iter().find(|(call, _)| call == id).unwrap().1;
        assert!(result.contains("# Hello"), "{result}");
    }
    // Two requests (the check before each connects and sends nothing).
    let requests = heads
        .lock()
        .unwrap()
        .iter()
        .filter(|head| !head.is_empty())
        .count();
    assert_eq!(requests, 2);
}

/// After a redirect the host question names the hop's URL, not only the first one: the
/// person reads which address leads where before answering about it.
#[test]
fn at_a_terminal_a_redirects_question_names_the_hop() {
    use super::support::require::require_program;
    use super::tty::run_in_tmux;
    if !cfg!(unix) || !require_program("tmux") {
        return;
    }
    let (sandbox, port, heads) = ready("allowlist", "");
    let url = format!("http://allowed.test:{port}/to-blocked");
    let server = FakeModel::openai_turns([call(&json!({ "url": url })), turn_text("done")]);
    let tmux = run_in_tmux(&sandbox, &server, &[], "'read it'");
    let screen = tmux.wait_for("wants `blocked.test`");
    assert!(
        screen.contains(&format!(
            "`fetch {url} (redirected to http://blocked.test:{port}/page)` wants `blocked.test`"
        )),
        "{screen}"
    );
    tmux.keys(&["0"]);
    tmux.wait_for("EXIT=0");
    let result = &server.request(1).tool_results()[0].1;
    assert!(
        result.contains("EDENIED") && !result.contains("# Hello"),
        "{result}"
    );
    // Only the first hop's request reached the server.
    let requests = heads
        .lock()
        .unwrap()
        .iter()
        .filter(|head| head.contains("GET /page"))
        .count();
    assert_eq!(requests, 0);
}
