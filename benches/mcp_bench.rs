//! `cargo bench --bench mcp_bench`: what MCP servers cost a run, through the real binary
//! against a local stand-in for the model (it records the first request and answers 400, so
//! the run ends there; the model list asked before it is answered). No timing assertions: numbers are printed for the notes and README.
//!
//! - time to first request: from starting `agent run` to the model's first request, with no
//!   MCP server configured, and with 1 and 3 local (stdio, sandboxed) servers configured —
//!   they start, in parallel, before the first request;
//! - request bytes: the size of that first request, and what each server's tools add (the
//!   test server offers 9 tools).
//!
//! `AGENT_BENCH_BIN=/path/to/agent` measures another build (for a before/after).

#![allow(clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs per configuration (the median is printed).
const RUNS: usize = 15;

/// The binary measured.
fn agent() -> PathBuf {
    std::env::var_os("AGENT_BENCH_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_agent")), PathBuf::from)
}

/// The test server (`examples/mcp_test_server.rs`), built when missing.
fn test_server() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_agent"));
    let profile_dir = built.parent().expect("profile dir");
    let program = profile_dir.join("examples/mcp_test_server");
    if !program.exists() {
        let release = profile_dir.ends_with("release");
        let mut cargo = Command::new(option_env!("CARGO").unwrap_or("cargo"));
        cargo.args(["build", "--example", "mcp_test_server", "--target-dir"]);
        cargo.arg(profile_dir.parent().expect("target dir"));
        if release {
            cargo.arg("--release");
        }
        let status = cargo
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo");
        assert!(status.success(), "cannot build the MCP test server");
    }
    program
}

/// The stand-in model: for each connection, the instant its request's head arrived and the
/// request body's size, sent on the channel; answers 400 (the run ends).
fn model() -> (u16, mpsc::Receiver<(Instant, usize)>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                continue;
            }
            let arrived = Instant::now();
            let mut length = 0;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            // The model list (asked first, to learn the model) is answered; the first
            // completion request is the one measured.
            let (status, answer) = if line.starts_with("GET") {
                (
                    "200 OK",
                    r#"{"object":"list","data":[{"id":"gpt-bench","object":"model"}]}"#,
                )
            } else {
                let _ = sender.send((arrived, length));
                (
                    "400 Bad Request",
                    r#"{"error":{"message":"bench","type":"invalid_request_error"}}"#,
                )
            };
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (port, receiver)
}

/// Settings with `servers` copies of the test server (`[mcp.servers.sN]`).
fn settings(servers: usize, server: &Path) -> String {
    (0..servers)
        .map(|n| {
            format!(
                "[mcp.servers.s{n}]\ncommand = {:?}\nargs = [\"--mode\", \"normal\"]\n",
                server.display().to_string()
            )
        })
        .collect()
}

/// One run: milliseconds to the first request, and its body's bytes.
fn once(dir: &Path, port: u16, requests: &mpsc::Receiver<(Instant, usize)>) -> (f64, usize) {
    while requests.try_recv().is_ok() {}
    let started = Instant::now();
    let status = Command::new(agent())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("AGENT_CONFIG_DIR", dir)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("OPENAI_API_KEY", "sk-bench")
        .env("LANG", "C.UTF-8")
        .current_dir(dir.join("work"))
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(format!("http://127.0.0.1:{port}/v1"))
        .args(["--no-prompt", "-q", "hi"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("agent");
    let _ = status;
    let (arrived, bytes) = requests
        .recv_timeout(Duration::from_secs(60))
        .expect("a request");
    (
        arrived.duration_since(started).as_secs_f64() * 1000.0,
        bytes,
    )
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if !cfg!(unix) {
        println!("MCP benchmarks skipped: Unix needed");
        return;
    }
    let server = test_server();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("work")).expect("work");
    let (port, requests) = model();
    println!(
        "MCP benchmarks ({}; median of {RUNS} runs)",
        agent().display()
    );
    let mut base_bytes = 0;
    for servers in [0, 1, 3] {
        std::fs::write(dir.path().join("settings.toml"), settings(servers, &server))
            .expect("settings");
        // One run first: the page cache, the sandbox's first-run probe.
        let _ = once(dir.path(), port, &requests);
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..RUNS {
            let (ms, size) = once(dir.path(), port, &requests);
            times.push(ms);
            bytes = size;
        }
        if servers == 0 {
            base_bytes = bytes;
        }
        let per_server = bytes
            .saturating_sub(base_bytes)
            .checked_div(servers)
            .map_or_else(String::new, |each| format!("  (+{each} bytes per server)"));
        println!(
            "  {servers} stdio servers: first request after {:.1} ms, {bytes} bytes{per_server}",
            median(times)
        );
    }
}
