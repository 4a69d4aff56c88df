//! MCP over streamable HTTP through the real binary, against a small server on 127.0.0.1
//! written here (stateless, JSON responses): tools listed and called with the bearer token
//! read from the environment, and servers answering 401, 404 or an HTML page costing one
//! line each while the run goes on.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::fake_model::{FakeModel, Turn, turn_text};
use super::harness::Sandbox;
use super::mcp::one_line_and_no_tools;

/// How the server answers.
#[derive(Clone, Copy)]
enum Mode {
    Mcp,
    /// As `Mcp`, but a `tools/call` is answered by an event stream of notifications without
    /// end before any result.
    Storm,
    Status(u16),
    Html,
}

/// A running server; its thread ends with the test process.
struct HttpServer {
    url: String,
    /// Every request's `Authorization` header.
    authorizations: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    fn start(mode: Mode) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let authorizations = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&authorizations);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || serve(stream, mode, &seen));
            }
        });
        Self {
            url,
            authorizations,
        }
    }
}

fn serve(stream: TcpStream, mode: Mode, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "authorization" => seen.lock().unwrap().push(value.trim().to_owned()),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if matches!(mode, Mode::Storm) && String::from_utf8_lossy(&body).contains("tools/call") {
            storm(&mut out);
            return;
        }
        let (status, kind, text) = answer(mode, &request_line, &body);
        let reply = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{text}",
            text.len()
        );
        if out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// An event stream of log notifications, until the client goes away.
fn storm(out: &mut TcpStream) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
    if out.write_all(head.as_bytes()).is_err() {
        return;
    }
    for n in 0u64.. {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": format!("storm {n}")}});
        if out
            .write_all(format!("data: {note}\n\n").as_bytes())
            .is_err()
        {
            return;
        }
    }
}

fn answer(mode: Mode, request_line: &str, body: &[u8]) -> (u16, &'static str, String) {
    match mode {
        Mode::Status(code) => return (code, "text/plain", "no".to_owned()),
        Mode::Html => {
            return (
                200,
                "text/html",
                "<html><body>Sign in</body></html>".to_owned(),
            );
        }
        Mode::Mcp | Mode::Storm => {}
    }
    if !request_line.starts_with("POST") {
        return (405, "text/plain", String::new());
    }
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return (400, "text/plain", String::new());
    };
    let Some(id) = message.get("id") else {
        return (202, "text/plain", String::new());
    };
    let result = match message["method"].as_str().unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "http_test", "version": "1"}
        }),
        "tools/list" => json!({"tools": [{"name": "hello", "description": "Says hello.",
            "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "hello over http"}]}),
        _ => json!({}),
    };
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
    (200, "application/json", reply.to_string())
}

fn settings(url: &str) -> String {
    format!(
        "[mcp.servers.web]\nurl = {url:?}\nbearer_token_env = \"WEB_TOKEN\"\nstartup_timeout_secs = 5\n"
    )
}

/// A run against a server in `mode` whose model calls `hello` once (allowed), with the
/// token `tok-123`: the server, the sandbox, the model and the run's output.
fn hello_once(mode: Mode) -> (HttpServer, Sandbox, FakeModel, std::process::Output) {
    let http = HttpServer::start(mode);
    let sandbox = Sandbox::new();
    sandbox.settings(&settings(&http.url));
    let server = FakeModel::openai_turns([
        Turn::default().with_call("h1", "mcp__web__hello", "{}"),
        turn_text("done"),
    ]);
    let output = sandbox
        .openai_run(&server)
        .env("WEB_TOKEN", "tok-123")
        .args(["--allow", "mcp:web/hello", "hi"])
        .output()
        .unwrap();
    (http, sandbox, server, output)
}

#[test]
fn a_remote_server_is_called_with_the_token_from_the_environment() {
    let (http, sandbox, server, output) = hello_once(Mode::Mcp);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("hello over http"), "{results:?}");
    let seen = http.authorizations.lock().unwrap().clone();
    assert!(
        !seen.is_empty() && seen.iter().all(|a| a == "Bearer tok-123"),
        "{seen:?}"
    );
    let transcripts = sandbox.transcripts().join("\n");
    assert!(
        !transcripts.contains("tok-123"),
        "the token reached a transcript"
    );
}

#[test]
fn a_notification_storm_over_http_is_cut_off_in_one_line() {
    let (_http, _sandbox, server, output) = hello_once(Mode::Storm);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let results = server.request(1).tool_results();
    assert!(results[0].1.contains("(a flood)"), "{results:?}");
    let warnings = stderr
        .lines()
        .filter(|l| l.starts_with("agent: warning: MCP server `web` is not available"))
        .count();
    assert_eq!(warnings, 1, "{stderr}");
}

#[test]
fn a_missing_token_variable_is_one_line() {
    let http = HttpServer::start(Mode::Mcp);
    let sandbox = Sandbox::new();
    sandbox.settings(&settings(&http.url));
    let line = one_line_and_no_tools(&sandbox, "web", &[]);
    assert!(line.contains("WEB_TOKEN"), "{line}");
}

#[test]
fn unauthorised_missing_and_html_servers_are_one_line_each() {
    for (mode, says) in [
        (
            Mode::Status(401),
            "HTTP 401 Unauthorized — check bearer_token_env",
        ),
        (Mode::Status(403), "HTTP 403 Forbidden"),
        (Mode::Status(404), "HTTP 404 Not Found — check the url"),
        (Mode::Html, "an HTML page, not MCP"),
    ] {
        let http = HttpServer::start(mode);
        let sandbox = Sandbox::new();
        sandbox.settings(&settings(&http.url));
        let line = one_line_and_no_tools(&sandbox, "web", &[("WEB_TOKEN", "t")]);
        assert!(line.contains(&http.url), "{line}");
        assert!(line.contains(says), "{line}");
        assert!(!line.contains("rmcp::"), "{line}");
    }
}

#[test]
fn a_project_proposal_names_no_token_and_no_file_names_the_models_key() {
    let http = HttpServer::start(Mode::Mcp);
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
    let table = |var: &str| settings(&http.url).replace("WEB_TOKEN", var);
    let agent = |command: &[&str]| {
        let output = sandbox
            .agent()
            .args(command)
            .env("OPENAI_API_KEY", "sk-secret")
            .env("ANTHROPIC_API_KEY", "sk-secret")
            .env("DOCS_TOKEN", "sk-secret")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), stderr)
    };
    // The user's own file naming the model's key: an error (the person can fix it).
    for var in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"] {
        sandbox.settings(&table(var));
        std::fs::write(sandbox.work().join(".agent/settings.toml"), "").unwrap();
        let (code, stderr) = agent(&["mcp", "list"]);
        assert_eq!(code, Some(2), "{var}: {stderr}");
        assert!(stderr.contains("bearer_token_env"), "{stderr}");
    }
    // A project's token variable, whichever it names: said, ignored, and the agent still runs
    // there (a repository must not be able to stop it); approved, the server gets no token.
    for var in ["OPENAI_API_KEY", "DOCS_TOKEN"] {
        sandbox.settings("");
        std::fs::write(sandbox.work().join(".agent/settings.toml"), table(var)).unwrap();
        for command in [
            &["mcp", "list"][..],
            &["mcp", "approve", "web"][..],
            &["mcp", "list"][..],
        ] {
            let (code, stderr) = agent(command);
            assert_eq!(code, Some(0), "{var} {command:?}: {stderr}");
            assert!(
                stderr.contains("`mcp.servers.web.bearer_token_env` is ignored"),
                "{stderr}"
            );
        }
        let output = sandbox
            .agent()
            .args(["run", "--provider", "demo", "--no-prompt", "hi"])
            .env("OPENAI_API_KEY", "sk-secret")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let seen = http.authorizations.lock().unwrap().clone();
    assert!(seen.is_empty(), "the server was sent a token: {seen:?}");
}
