//! `cargo bench --bench network_bench`: what the network proxy (`[network] mode =
//! "allowlist"`) adds, through the real binary and `curl`, against a local server standing in
//! for the internet. No timing assertions: numbers are printed for the README.
//!
//! - latency: the mean of 200 small requests in one command, through the proxy vs direct
//!   (mode `full`, the same server by address);
//! - throughput: one 100 MB download through the proxy vs direct;
//! - memory: the agent's peak RSS while 50 downloads run at once through the proxy (GNU
//!   `/usr/bin/time -f %M`, when installed).
//!
//! Linux with the sandbox, curl; skipped with a note elsewhere.

#![allow(clippy::expect_used)]

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::process::Command;

const AGENT: &str = env!("CARGO_BIN_EXE_agent");

/// Requests of the latency run.
const REQUESTS: usize = 200;
/// Bytes of the big download (100 MB).
const BIG_BYTES: usize = 100 * 1000 * 1000;
/// Downloads at once in the memory run, and bytes each (10 MB).
const PARALLEL: usize = 50;
const PARALLEL_BYTES: usize = 10 * 1000 * 1000;

/// A server on 127.0.0.1: `GET /N` answers N zero bytes.
fn server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head);
                let size: usize = text
                    .split_whitespace()
                    .nth(1)
                    .and_then(|path| path.trim_start_matches('/').parse().ok())
                    .unwrap_or(2);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
                );
                let chunk = vec![0u8; 64 * 1024];
                let mut left = size;
                while left > 0 {
                    let n = left.min(chunk.len());
                    if stream.write_all(&chunk[..n]).is_err() {
                        break;
                    }
                    left -= n;
                }
            });
        }
    });
    port
}

/// `agent exec COMMAND` with the settings in `dir`; stdout.
fn exec(dir: &std::path::Path, command: &str, time: bool) -> (String, String) {
    let mut cmd = if time {
        let mut cmd = Command::new("/usr/bin/time");
        cmd.args(["-f", "%M", AGENT]);
        cmd
    } else {
        Command::new(AGENT)
    };
    let output = cmd
        .env("AGENT_CONFIG_DIR", dir)
        .env("XDG_STATE_HOME", dir.join("state"))
        .current_dir(dir)
        .args(["exec", "--", command])
        .output()
        .expect("agent");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn mean_ms(times: &str) -> f64 {
    let values: Vec<f64> = times
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    values.iter().sum::<f64>() / values.len().max(1) as f64 * 1000.0
}

fn main() {
    let curl = Command::new("curl").arg("--version").output().is_ok();
    if !cfg!(target_os = "linux") || !curl {
        println!("network benchmarks skipped: Linux and curl needed");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let port = server();
    let settings = |mode: &str| {
        format!(
            "[network]\nmode = \"{mode}\"\nallow = [\"bench.test\"]\nhosts = {{ \"bench.test\" = \"127.0.0.1\" }}\n"
        )
    };
    let time = "-s -o /dev/null -w '%{time_total}\\n'";
    let many = |host: &str| {
        format!("for i in $(seq {REQUESTS}); do curl {time} http://{host}:{port}/2; done")
    };
    let big = |host: &str| {
        format!("curl -s -o /dev/null -w '%{{speed_download}}' http://{host}:{port}/{BIG_BYTES}")
    };
    println!("network benchmarks (proxy vs direct)");
    for (mode, host) in [("allowlist", "bench.test"), ("full", "127.0.0.1")] {
        std::fs::write(dir.path().join("settings.toml"), settings(mode)).expect("settings");
        let (times, _) = exec(dir.path(), &many(host), false);
        let (speed, _) = exec(dir.path(), &big(host), false);
        let speed: f64 = speed.trim().parse().unwrap_or(0.0);
        println!(
            "  {mode:9}  latency {:.2} ms/request (mean of {REQUESTS})  throughput {:.0} MB/s (100 MB)",
            mean_ms(&times),
            speed / 1e6
        );
    }
    std::fs::write(dir.path().join("settings.toml"), settings("allowlist")).expect("settings");
    let parallel = format!(
        "for i in $(seq {PARALLEL}); do curl -s -o /dev/null http://bench.test:{port}/{PARALLEL_BYTES} & done; wait"
    );
    if std::path::Path::new("/usr/bin/time").exists() {
        let (_, stderr) = exec(dir.path(), &parallel, true);
        let peak = stderr.lines().last().unwrap_or("?");
        println!(
            "  agent peak RSS with {PARALLEL} downloads at once through the proxy: {peak} KiB"
        );
    }
}
