//! An MCP server over stdio for the tests (`tests/suite/mcp.rs`), speaking JSON-RPC by hand
//! so that it can also misbehave on purpose. Written without the SDK's server side: the
//! tests check the agent's client (the SDK's) against the wire format itself, and a
//! hand-written server can break the protocol in ways a conforming library will not.
//!
//! `mcp_test_server [--mode MODE] [--token T]`; MODE is one of
//! - `normal` (default): tools `echo`, `write`, `big`, `fail`, `image`, `spawn`, `env`,
//!   `shell` (a tool named like a built-in) and `bad` (an invalid input schema);
//! - `hang`: reads requests, never answers `initialize`;
//! - `garbage`: answers every line with text that is not JSON;
//! - `flood`: writes to stdout without end (no newline);
//! - `exit`: exits at once with status 3;
//! - `die-after-call`: answers one `tools/call`, and exits when the next one comes;
//! - `grow`: after its first `tools/call` says its tools changed and lists one more, `late`;
//! - `storm`: sends 5000 notifications after `initialize` (fewer than the agent's bound on
//!   what a server sends unasked), then works normally;
//! - `notify-flood`: at its first `tools/call` (never answered), sends notifications without
//!   end from a thread of its own, and still reads and answers other requests;
//! - `ping-flood`: at its first `tools/call` (never answered), sends `ping` requests without
//!   end and never reads its input again (the answers pile up);
//! - `stubborn`: works normally, but does not end when its stdin does (sleeps on);
//! - `hang-stubborn`: `hang`, and does not end when its stdin does.
//!
//! `--token T` only appears in its command line, so that a test can find its processes
//! from outside (`/proc/*/cmdline`).

use std::io::{BufRead as _, Write as _};

use serde_json::{Value, json};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args
        .iter()
        .position(|a| a == "--mode")
        .and_then(|at| args.get(at + 1))
        .map_or("normal", String::as_str)
        .to_owned();
    let token = args
        .iter()
        .position(|a| a == "--token")
        .and_then(|at| args.get(at + 1))
        .cloned()
        .unwrap_or_default();
    eprintln!("mcp_test_server: started in mode {mode}");
    let stdout = std::io::stdout();
    match mode.as_str() {
        "exit" => std::process::exit(3),
        "flood" => {
            let chunk = vec![b'x'; 64 * 1024];
            let mut out = stdout.lock();
            while out.write_all(&chunk).is_ok() {}
            return;
        }
        _ => {}
    }
    let mut calls = 0;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (message.get("id"), message.get("method")) else {
            continue; // a notification or a response
        };
        let reply = match (mode.as_str(), method.as_str().unwrap_or("")) {
            ("hang" | "hang-stubborn", _) => continue,
            ("garbage", _) => {
                let mut out = stdout.lock();
                let _ = writeln!(out, "this is not JSON-RPC {{{{");
                let _ = out.flush();
                continue;
            }
            (_, "initialize") => Ok(json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "mcp_test_server", "version": "1.0.0"}
            })),
            (_, "ping") => Ok(json!({})),
            (_, "tools/list") => {
                let mut listed = tools();
                if mode == "grow"
                    && calls > 0
                    && let Some(all) = listed.as_array_mut()
                {
                    all.push(json!({"name": "late", "description": "Came later.",
                        "inputSchema": object(&json!({}))}));
                }
                Ok(json!({ "tools": listed }))
            }
            ("notify-flood" | "ping-flood", "tools/call") => {
                flood_from_now(mode == "ping-flood");
                continue;
            }
            (_, "tools/call") => {
                calls += 1;
                if mode == "die-after-call" && calls == 2 {
                    std::process::exit(0);
                }
                call(&message["params"], &token)
            }
            (_, other) => Err(format!("method not found: {other}")),
        };
        let response = match reply {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(message) => json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": message}}),
        };
        let mut out = stdout.lock();
        // Before the answer, so that the client knows of the change when the call returns.
        if mode == "grow" && method == "tools/call" && calls == 1 {
            let _ = writeln!(
                out,
                "{}",
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            );
        }
        let _ = writeln!(out, "{response}");
        if mode == "storm" && method == "initialize" {
            for n in 0..5_000 {
                let _ = writeln!(out, "{}", note(&format!("storm {n}")));
            }
        }
        let _ = out.flush();
        drop(out);
    }
    if mode == "stubborn" || mode == "hang-stubborn" {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

/// A log notification saying `data`.
fn note(data: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": data}})
}

/// Floods stdout from a thread of its own; with `ping`, reads nothing more (the answers to
/// its pings stay unread) and never returns.
fn flood_from_now(ping: bool) {
    let flood = std::thread::spawn(move || flood(ping));
    if ping {
        let _ = flood.join();
        std::process::exit(0);
    }
}

/// Writes `ping` requests (or log notifications) to stdout until it cannot.
fn flood(ping: bool) {
    let stdout = std::io::stdout();
    for n in 0u64.. {
        let message = if ping {
            json!({"jsonrpc": "2.0", "id": format!("p{n}"), "method": "ping"})
        } else {
            note(&format!("flood {n}"))
        };
        let mut out = stdout.lock();
        if writeln!(out, "{message}")
            .and_then(|()| out.flush())
            .is_err()
        {
            return;
        }
    }
}

fn object(properties: &Value) -> Value {
    json!({"type": "object", "properties": properties})
}

fn tools() -> Value {
    json!([
        {"name": "echo", "description": "Echoes `text`.",
         "inputSchema": object(&json!({"text": {"type": "string"}})),
         "annotations": {"readOnlyHint": true}},
        {"name": "write", "description": "Writes `text` to the file `path`.",
         "inputSchema": object(&json!({"path": {"type": "string"}, "text": {"type": "string"}}))},
        {"name": "big", "description": "Returns `bytes` characters.",
         "inputSchema": object(&json!({"bytes": {"type": "integer"}}))},
        {"name": "fail", "description": "Fails.", "inputSchema": object(&json!({}))},
        {"name": "image", "description": "Returns an image.", "inputSchema": object(&json!({}))},
        {"name": "spawn", "description": "Starts a long sleep.", "inputSchema": object(&json!({}))},
        {"name": "env", "description": "Lists its environment's names.",
         "inputSchema": object(&json!({}))},
        {"name": "connect", "description": "Connects to 127.0.0.1:`port`.",
         "inputSchema": object(&json!({"port": {"type": "integer"}}))},
        {"name": "shell", "description": "A tool named like the agent's own.",
         "inputSchema": object(&json!({}))},
        {"name": "bad", "description": "Its schema is not an object.",
         "inputSchema": {"type": "string"}}
    ])
}

fn text(text: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": text.into()}]})
}

fn call(params: &Value, token: &str) -> Result<Value, String> {
    let args = &params["arguments"];
    let arg = |name: &str| args[name].as_str().unwrap_or("").to_owned();
    Ok(match params["name"].as_str().unwrap_or("") {
        "echo" => text(format!("echo: {}", arg("text"))),
        "write" => match std::fs::write(arg("path"), arg("text")) {
            Ok(()) => text(format!("wrote {}", arg("path"))),
            Err(error) => json!({"content": [{"type": "text",
                "text": format!("cannot write {}: {error}", arg("path"))}], "isError": true}),
        },
        "big" => {
            text("x".repeat(usize::try_from(args["bytes"].as_u64().unwrap_or(0)).unwrap_or(0)))
        }
        "fail" => json!({"content": [{"type": "text", "text": "it failed on purpose"}],
            "isError": true}),
        "image" => json!({"content": [{"type": "image", "data": "iVBORw0KGgo=",
            "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///srv/pic.png", "name": "pic.png"}]}),
        "spawn" => {
            let child = std::process::Command::new("sh")
                .args(["-c", &format!("sleep 600; : {token}")])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .spawn()
                .map_err(|error| error.to_string())?;
            text(format!("started {}", child.id()))
        }
        "env" => {
            let mut names: Vec<String> = std::env::vars().map(|(name, _)| name).collect();
            names.sort();
            text(names.join(" "))
        }
        "connect" => {
            let port = args["port"].as_u64().unwrap_or(0);
            match std::net::TcpStream::connect(("127.0.0.1", u16::try_from(port).unwrap_or(0))) {
                Ok(_) => text("connected"),
                Err(error) => json!({"content": [{"type": "text",
                    "text": format!("cannot connect: {error}")}], "isError": true}),
            }
        }
        "shell" => text("not the agent's shell"),
        other => return Err(format!("unknown tool {other}")),
    })
}
