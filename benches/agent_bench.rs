//! `cargo bench`: wall time and peak memory of the real binary, no timing
//! assertions (numbers are printed for the README and the closing notes).
//!
//! Measures `agent exec true` against a bare `sh -c true` and a shell starting a Rust hello
//! world, and with the sandbox on vs off, `agent --version`
//! start-up against a Rust hello world built at bench time, one gigabyte of output through the output cap, and the policy's
//! decision rate through `agent check --stdin` (and, for `benches/agent-commands.txt`, the
//! share of distinct commands that ask, per class), the `search` tool over 10,000 files / 100 MB
//! against `rg` (or `grep -rn` where rg is not installed) on the same tree, and `read_file`
//! of a 100 MB file (peak memory). Peak RSS comes from GNU
//! `/usr/bin/time -f %M` when it is installed.

#![allow(clippy::expect_used)]

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const AGENT: &str = env!("CARGO_BIN_EXE_agent");

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    println!("agent benchmarks ({AGENT})");
    if wanted("startup") {
        startup();
    }
    if wanted("exec") {
        exec_overhead();
    }
    if wanted("sandbox") {
        sandbox_overhead();
    }
    if wanted("throughput") {
        throughput();
    }
    if wanted("check") {
        check_throughput();
    }
    if wanted("loop") {
        loop_overhead();
    }
    if wanted("search") {
        search_tree();
    }
    if wanted("read") {
        read_big_file();
    }
    if wanted("snapshot") {
        snapshot_speed();
    }
}

/// Files in the search benchmark's tree, and bytes per file (10,000 × 10 KB = 100 MB).
const TREE_FILES: usize = 10_000;
const TREE_FILE_BYTES: usize = 10_000;

/// A server that asks for one call of `tool` with `arguments`, then answers "done".
fn one_call_server(tool: &str, arguments: &str) -> (String, std::thread::JoinHandle<()>) {
    calls_server(vec![(tool.to_owned(), arguments.to_owned())])
}

/// `agent run` in `dir` against a server asking for one `tool` call: (wall time of the whole
/// run, peak RSS in KiB when GNU time is there).
fn agent_tool_run(dir: &std::path::Path, tool: &str, arguments: &str) -> (Duration, String) {
    let state = std::env::temp_dir().join(format!("agent-bench-tool-{}", std::process::id()));
    let (url, server) = one_call_server(tool, arguments);
    let mut command = Command::new("/usr/bin/time");
    command
        .args(["-f", "%M"])
        .arg(AGENT)
        .args(["run", "--provider", "openai", "--base-url", &url, "bench"])
        .current_dir(dir)
        .env("OPENAI_API_KEY", "bench")
        .env("XDG_STATE_HOME", &state)
        .env("AGENT_CONFIG_DIR", &state)
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let output = command.output().expect("run");
    let wall = start.elapsed();
    let _ = server.join();
    let _ = std::fs::remove_dir_all(&state);
    let stderr = String::from_utf8_lossy(&output.stderr);
    (wall, stderr.lines().last().unwrap_or("").trim().to_owned())
}

/// The benchmark tree under `target/`: 10,000 files of 10 KB of source-like lines, one
/// match of `needle_[0-9]+` per hundred files. Kept between runs.
fn bench_tree() -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-tree");
    let done = root.join(".complete");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    for i in 0..TREE_FILES {
        let dir = root.join(format!("d{:03}", i / 100));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut text = String::with_capacity(TREE_FILE_BYTES + 100);
        let mut line = 0;
        while text.len() < TREE_FILE_BYTES {
            if i % 100 == 0 && line == 7 {
                text.push_str(&format!("let needle_{i} = compute({line});\n"));
            } else {
                text.push_str(&format!(
                    "    let value_{line} = other_function(argument_{i}, {line}) + 42; // x\n"
                ));
            }
            line += 1;
        }
        std::fs::write(dir.join(format!("f{i}.rs")), text).expect("write");
    }
    std::fs::write(&done, "").expect("write");
    root
}

/// Best of `runs` wall times of `argv` run in `dir` (exit 0 or 1: rg and grep say 1 for no match).
fn best_wall_in(dir: &std::path::Path, argv: &[&str], runs: usize) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let status = Command::new(argv[0])
                .args(&argv[1..])
                .current_dir(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("spawn");
            assert!(status.code().is_some_and(|c| c <= 1), "{argv:?} failed");
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn search_tree() {
    let tree = bench_tree();
    let pattern = "needle_[0-9]+";
    let rg = Command::new("rg").arg("--version").output().is_ok();
    let (name, argv): (&str, Vec<&str>) = if rg {
        ("rg -n", vec!["rg", "-n", pattern])
    } else {
        (
            "grep -rnE (rg is not installed)",
            vec!["grep", "-rnE", pattern, "."],
        )
    };
    // Warm the page cache for both.
    let _ = best_wall_in(&tree, &argv, 1);
    let other = best_wall_in(&tree, &argv, 5);
    let arguments = format!("{{\"pattern\":\"{pattern}\"}}");
    let mut ours = Duration::MAX;
    let mut rss = String::new();
    for _ in 0..5 {
        let (wall, peak) = agent_tool_run(&tree, "search", &arguments);
        if wall < ours {
            ours = wall;
            rss = peak;
        }
    }
    // The run's own cost (start-up, two model turns) without the search: a `list_files` of
    // an empty directory.
    let empty = std::env::temp_dir().join(format!("agent-bench-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("mkdir");
    let base = (0..5)
        .map(|_| agent_tool_run(&empty, "list_files", "{}").0)
        .min()
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&empty);
    let search = ours.saturating_sub(base);
    println!(
        "search: {TREE_FILES} files / {} MB: agent run {:.0} ms (of which the run itself {:.0} ms, search {:.0} ms) vs {name} {:.0} ms: ratio {:.2} (search alone {:.2}), peak RSS {rss} KiB",
        TREE_FILES * TREE_FILE_BYTES / 1_000_000,
        ms(ours),
        ms(base),
        ms(search),
        ms(other),
        ours.as_secs_f64() / other.as_secs_f64(),
        search.as_secs_f64() / other.as_secs_f64(),
    );
}

fn read_big_file() {
    let dir = std::env::temp_dir().join(format!("agent-bench-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    {
        let file = std::fs::File::create(dir.join("big.txt")).expect("create");
        let mut out = std::io::BufWriter::new(file);
        let line =
            "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 ~~~~~\n";
        for _ in 0..(100_000_000 / line.len()) {
            out.write_all(line.as_bytes()).expect("write");
        }
    }
    let (wall, rss) = agent_tool_run(&dir, "read_file", "{\"path\":\"big.txt\"}");
    let (small_wall, small_rss) = {
        std::fs::write(dir.join("small.txt"), "one line\n").expect("write");
        agent_tool_run(&dir, "read_file", "{\"path\":\"small.txt\"}")
    };
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "read_file: a 100 MB file (first 2000 lines, all lines counted) in a run of {:.0} ms, peak RSS {rss} KiB (a one-line file: {:.0} ms, {small_rss} KiB)",
        ms(wall),
        ms(small_wall),
    );
}

/// Files in the snapshot benchmark's workspace, in directories of 100.
const SNAPSHOT_FILES: usize = 10_000;

/// A 10,000-file workspace, as a git repository (committed) and as a plain directory: the
/// first snapshot, then re-snapshots after 3 files changed (the case of every turn).
fn snapshot_speed() {
    use agent::snapshot::{Limits, RecordKind, Snapshots};
    for git_workspace in [true, false] {
        let state = tempfile::tempdir().expect("tempdir");
        let work = tempfile::tempdir().expect("tempdir");
        for i in 0..SNAPSHOT_FILES {
            let dir = work.path().join(format!("d{:03}", i / 100));
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join(format!("f{i}.txt")), format!("line {i}\n")).expect("write");
        }
        if git_workspace {
            let git = |args: &[&str]| {
                let status = Command::new("git")
                    .current_dir(work.path())
                    .args([
                        "-c",
                        "user.name=b",
                        "-c",
                        "user.email=b@b",
                        "-c",
                        "commit.gpgSign=false",
                    ])
                    .args(args)
                    .stdout(Stdio::null())
                    .status()
                    .expect("git");
                assert!(status.success(), "git {args:?}");
            };
            git(&["init", "-q"]);
            git(&["add", "."]);
            git(&["commit", "-qm", "files"]);
        }
        // Files written in the same second as an index are "racily clean" to git and hashed
        // again each time; a real workspace is older than its first snapshot.
        std::thread::sleep(Duration::from_millis(1100));
        let store = Snapshots::open(state.path(), work.path(), Limits::default()).expect("store");
        let start = Instant::now();
        let first_snapshot = store
            .take("bench", "first", RecordKind::Run)
            .expect("first snapshot");
        let first = start.elapsed();
        let mut partial = usize::from(first_snapshot.partial);
        let mut times = Vec::new();
        for round in 0..20 {
            for i in 0..3 {
                let n = (round * 7 + i * 1000) % SNAPSHOT_FILES;
                let path = work.path().join(format!("d{:03}/f{n}.txt", n / 100));
                std::fs::write(path, format!("changed {round}\n")).expect("write");
            }
            let start = Instant::now();
            let snapshot = store
                .take("bench", "turn", RecordKind::Run)
                .expect("snapshot");
            times.push(start.elapsed());
            partial += usize::from(snapshot.partial);
        }
        times.sort();
        let kind = if git_workspace {
            "git repository"
        } else {
            "plain directory"
        };
        println!(
            "snapshot, {SNAPSHOT_FILES} files ({kind}): first {:.0} ms, after 3 changes median {:.1} ms, p90 {:.1} ms, max {:.1} ms (target < 200 ms); {partial} of {} partial",
            ms(first),
            ms(times[times.len() / 2]),
            ms(times[(times.len() * 9).div_ceil(10) - 1]),
            ms(times[times.len() - 1]),
            times.len() + 1,
        );
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Tool-calling turns in the loop benchmark.
const LOOP_TURNS: usize = 200;

/// `turns` tool calls running `true` (alternating with `true 1`, so no call repeats), then a
/// final answer.
fn scripted_server(turns: usize) -> (String, std::thread::JoinHandle<()>) {
    let calls = (0..turns)
        .map(|i| {
            let command = if i % 2 == 0 { "true" } else { "true 1" };
            let args = format!("{{\"command\":\"{command}\",\"description\":\"step {i}\"}}");
            ("shell".to_owned(), args)
        })
        .collect();
    calls_server(calls)
}

/// A minimal OpenAI-compatible server on 127.0.0.1: one streamed tool call per request, in
/// order (`(tool, arguments)`), then a final answer "done".
fn calls_server(calls: Vec<(String, String)>) -> (String, std::thread::JoinHandle<()>) {
    use std::io::{BufRead as _, BufReader, Read as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let handle = std::thread::spawn(move || {
        for (i, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let event = match calls.get(i) {
                Some((tool, arguments)) => format!(
                    "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"c{i}\",\"type\":\"function\",\"function\":{{\"name\":\"{tool}\",\"arguments\":{}}}}}]}},\"finish_reason\":\"tool_calls\"}}]}}\n\n",
                    serde_json::to_string(arguments).expect("json")
                ),
                None => "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\n".to_owned(),
            };
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{event}data: [DONE]\n\n"
            );
            let _ = stream.write_all(reply.as_bytes());
            if i >= calls.len() {
                return;
            }
        }
    });
    (url, handle)
}

fn loop_overhead() {
    let state = std::env::temp_dir().join(format!("agent-bench-{}", std::process::id()));
    let run = |url: &str| {
        let mut command = Command::new("/usr/bin/time");
        command
            .args(["-f", "%M"])
            .arg(AGENT)
            .args([
                "run",
                "--provider",
                "openai",
                "--base-url",
                url,
                "--max-turns",
                "300",
                "bench",
            ])
            .env("OPENAI_API_KEY", "bench")
            .env("XDG_STATE_HOME", &state)
            .env("AGENT_CONFIG_DIR", &state)
            .env_remove("CI")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let output = command.output().expect("run");
        (
            start.elapsed(),
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_owned(),
        )
    };
    let (url, server) = scripted_server(LOOP_TURNS);
    let (wall, rss) = run(&url);
    let _ = server.join();
    let bare = median_wall(&["sh", "-c", "true"], 50);
    let _ = std::fs::remove_dir_all(&state);
    println!(
        "loop: {LOOP_TURNS} tool calls in {:.2} s = {:.2} ms per call (request, policy, run `true`, next request; sh -c true alone {:.2} ms), peak RSS {rss} KiB",
        wall.as_secs_f64(),
        ms(wall) / LOOP_TURNS as f64,
        ms(bare)
    );
}

/// Median wall time of `runs` runs of `argv`.
fn median_wall(argv: &[&str], runs: usize) -> Duration {
    median_wall_of(runs, || {
        let mut command = Command::new(argv[0]);
        command.args(&argv[1..]);
        command
    })
}

/// Median wall time of `runs` runs of the command `make` builds (output discarded; each run
/// must succeed).
fn median_wall_of(runs: usize, make: impl Fn() -> Command) -> Duration {
    let times: Vec<Duration> = (0..runs)
        .map(|_| {
            let mut command = make();
            let start = Instant::now();
            let status = command
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("spawn");
            assert!(status.success(), "{command:?} failed");
            start.elapsed()
        })
        .collect();
    median(times)
}

/// Peak resident set of one run of `argv`, in KiB, from GNU time.
fn peak_rss_kib(argv: &[&str]) -> Option<u64> {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .args(argv)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

fn rss(argv: &[&str]) -> String {
    peak_rss_kib(argv).map_or_else(
        || "n/a (no GNU time)".to_owned(),
        |kib| format!("{kib} KiB"),
    )
}

/// A Rust hello world built in `dir` here and now with `rustc -O` (the floor for a Rust
/// binary on this machine), or `None` without rustc.
fn hello_world(dir: &std::path::Path) -> Option<String> {
    let source = dir.join("hello.rs");
    let hello = dir.join("hello");
    std::fs::write(&source, "fn main() { println!(\"hello\"); }\n").expect("write hello.rs");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let built = Command::new(rustc)
        .arg("-O")
        .arg("-o")
        .arg(&hello)
        .arg(&source)
        .status()
        .is_ok_and(|status| status.success());
    built.then(|| hello.to_string_lossy().into_owned())
}

/// `agent --version` against a Rust hello world built here and now with `rustc -O` (the
/// floor for a Rust binary on this machine): the ratio is the number to keep at most 1.4.
/// The two are timed in alternating rounds, so a busy machine slows both alike.
fn startup() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hello = hello_world(dir.path());
    let (mut agent, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        agent.push(median_wall(&[AGENT, "--version"], 40));
        if let Some(hello) = &hello {
            floor.push(median_wall(&[hello], 40));
        }
    }
    let agent = median(agent);
    print!(
        "agent --version: median {:.2} ms, peak RSS {}",
        ms(agent),
        rss(&[AGENT, "--version"])
    );
    if let Some(hello) = &hello {
        let floor = median(floor);
        println!(
            "; a Rust hello world (rustc -O): {:.2} ms, peak RSS {} (ratio {:.2})",
            ms(floor),
            rss(&[hello]),
            agent.as_secs_f64() / floor.as_secs_f64()
        );
    } else {
        println!("; no rustc to build a hello world to compare with");
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// `agent exec true` (the default sandbox, in an empty directory) against `sh -c true` and
/// against `sh -c HELLO` (a shell starting the Rust hello world of [`startup`]): issue 34's
/// figure is the second ratio, at most 3. Alternating rounds, so a busy machine slows all
/// alike; wall time, so on a loaded machine compare the ratios (the notes measure CPU with
/// `perf stat -e task-clock`).
fn exec_overhead() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let hello = hello_world(dir.path());
    let agent_exec = |runs: usize| {
        median_wall_of(runs, || {
            let mut command = Command::new(AGENT);
            command
                .args(["exec", "true"])
                .current_dir(&empty)
                .env("XDG_STATE_HOME", dir.path().join("state"));
            command
        })
    };
    let (mut agent, mut bare, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..10 {
        agent.push(agent_exec(20));
        bare.push(median_wall(&["sh", "-c", "true"], 20));
        if let Some(hello) = &hello {
            floor.push(median_wall(&["sh", "-c", hello], 20));
        }
    }
    let (agent, bare) = (median(agent), median(bare));
    print!(
        "exec true: agent {:.2} ms vs sh -c true {:.2} ms (ratio {:.2})",
        ms(agent),
        ms(bare),
        agent.as_secs_f64() / bare.as_secs_f64(),
    );
    if hello.is_some() {
        let floor = median(floor);
        print!(
            " vs sh -c HELLO {:.2} ms (ratio {:.2}; target at most 3)",
            ms(floor),
            agent.as_secs_f64() / floor.as_secs_f64()
        );
    }
    println!(", peak RSS {}", rss(&[AGENT, "exec", "true"]));
}

/// `agent exec true` with the default sandbox (workspace-write, network off) against
/// `--sandbox off`, in three workspaces: an empty directory, a small git repository (200
/// directories) and this package with its `target/` (the git surfaces and the workspace's
/// tree cost a `stat` per directory before and after each command).
fn sandbox_overhead() {
    let shown = Command::new(AGENT)
        .args(["config", "show", "--json"])
        .output()
        .expect("config show");
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap_or_default();
    let active = &shown["sandbox.active"];
    println!(
        "sandbox active here: {}, {}",
        active["value"],
        active["source"].as_str().unwrap_or("?")
    );
    let root = std::env::temp_dir().join(format!("agent-bench-sandbox-{}", std::process::id()));
    let empty = root.join("empty");
    let small = root.join("small");
    std::fs::create_dir_all(&empty).expect("mkdir");
    for i in 0..200 {
        std::fs::create_dir_all(small.join(format!("d{}/e{i}", i % 20))).expect("mkdir");
    }
    let _ = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&small)
        .status();
    let here = std::env::current_dir().expect("cwd");
    let dirs_here = walkdir_count(&here);
    let state = root.join("state");
    let in_dir = |dir: &std::path::Path, sandbox: &str| {
        let mut times: Vec<Duration> = (0..200)
            .map(|_| {
                let start = Instant::now();
                let status = Command::new(AGENT)
                    .args(["exec", "--sandbox", sandbox, "true"])
                    .current_dir(dir)
                    .env("XDG_STATE_HOME", &state)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .expect("spawn");
                assert!(status.success(), "agent exec failed in {}", dir.display());
                start.elapsed()
            })
            .collect();
        times.sort();
        times[times.len() / 2]
    };
    let cases = [
        ("an empty directory".to_owned(), empty.clone()),
        (
            "a git repository of 200 directories".to_owned(),
            small.clone(),
        ),
        (format!("this package, {dirs_here} directories"), here),
    ];
    for (what, dir) in &cases {
        let off = in_dir(dir, "off");
        let on = in_dir(dir, "workspace-write");
        println!(
            "sandbox: agent exec true in {what}: {:.2} ms sandboxed vs {:.2} ms with --sandbox off (+{:.2} ms)",
            ms(on),
            ms(off),
            ms(on) - ms(off),
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// The directories below `dir`, `dir` included (not following links).
fn walkdir_count(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        1 + entries
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .map(|entry| walkdir_count(&entry.path()))
            .sum::<usize>()
    })
}

fn throughput() {
    let command = "head -c 1000000000 /dev/zero | tr '\\0' a";
    let bare = median_wall(&["sh", "-c", &format!("{command} | cat > /dev/null")], 3);
    let argv = [AGENT, "exec", "--json", command];
    let agent = median_wall(&argv, 3);
    println!(
        "1 GB through the cap: agent {:.2} s ({:.0} MB/s) vs the same through `cat > /dev/null` {:.2} s, peak RSS {}",
        agent.as_secs_f64(),
        1000.0 / agent.as_secs_f64(),
        bare.as_secs_f64(),
        rss(&argv),
    );
}

/// `agent check --stdin` on 100,000 lines of the bench's ten commands, then on 100,000 lines
/// of the 67 real agent commands in `benches/agent-commands.txt`, repeated.
fn check_throughput() {
    let corpus: Vec<&str> = include_str!("check-corpus.txt").lines().collect();
    check_rate("agent check --stdin", &corpus);
    let agent_commands = include_str!("agent-commands.txt");
    let lines: Vec<&str> = agent_commands.lines().filter(|l| !l.is_empty()).collect();
    check_rate("agent check --stdin, benches/agent-commands.txt", &lines);
    asks_per_class(&lines);
}

/// The class of an agent command, by construct and first word, for the share that asks.
fn command_class(command: &str) -> &'static str {
    let first = command.split_whitespace().next().unwrap_or("");
    let second = command.split_whitespace().nth(1).unwrap_or("");
    let quoted_operator = command.split('"').skip(1).step_by(2).any(|inside| {
        inside.contains([
            '|', '&', ';', '<', '>', '(', ')', '{', '}', '#', '*', '?', '[',
        ])
    });
    if command.starts_with("if ") {
        "if … fi"
    } else if matches!(first, "test" | "[" | "[[") {
        "test / [ / [["
    } else if matches!(first, "sleep" | ":" | "true") {
        "sleep / : / true"
    } else if quoted_operator {
        "operators inside \"…\""
    } else if first == "git" {
        "git"
    } else if second == "--version" || second == "-V" || second == "-v" || command == "go version" {
        "version queries"
    } else if matches!(
        first,
        "npm" | "pnpm" | "yarn" | "pip" | "pip3" | "cargo" | "go" | "python3"
    ) && matches!(
        second,
        "ls" | "list" | "freeze" | "show" | "tree" | "metadata" | "-m"
    ) {
        "package listings"
    } else if command.contains(['|', ';', '&']) {
        "other compositions"
    } else {
        "other"
    }
}

/// Decides each distinct line of `corpus` once and prints, per class, how many ask.
fn asks_per_class(corpus: &[&str]) {
    let mut unique: Vec<&str> = corpus.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let mut input = unique.join("\n");
    input.push('\n');
    let mut child = Command::new(AGENT)
        .args(["check", "--stdin", "--deny", "rm -rf"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("wait");
    let _ = writer.join();
    let verdicts = String::from_utf8_lossy(&output.stdout);
    let mut classes: Vec<(&str, usize, usize)> = Vec::new();
    for (command, verdict) in unique.iter().zip(verdicts.lines()) {
        let class = command_class(command);
        let asks = usize::from(verdict.starts_with("ask"));
        match classes.iter_mut().find(|(name, _, _)| *name == class) {
            Some(entry) => {
                entry.1 += 1;
                entry.2 += asks;
            }
            None => classes.push((class, 1, asks)),
        }
    }
    println!("benches/agent-commands.txt, distinct commands that ask, per class:");
    for (class, total, asks) in classes {
        println!(
            "  {class}: {asks} of {total} ask ({:.0}%)",
            asks as f64 * 100.0 / total as f64
        );
    }
}

/// Feeds 100,000 lines cycling through `corpus` to `agent check --stdin` and prints the rate.
fn check_rate(name: &str, corpus: &[&str]) {
    let lines = 100_000;
    let mut input = String::new();
    for i in 0..lines {
        input.push_str(corpus[i % corpus.len()]);
        input.push('\n');
    }
    let start = Instant::now();
    let mut child = Command::new(AGENT)
        .args(["check", "--stdin", "--deny", "rm -rf"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let status = child.wait().expect("wait");
    let elapsed = start.elapsed();
    if status.code().is_some_and(|code| code <= 4) {
        println!(
            "{name}: {lines} lines in {:.1} ms ({:.0} decisions/s)",
            ms(elapsed),
            lines as f64 / elapsed.as_secs_f64()
        );
    } else {
        println!("{name}: failed ({status})");
    }
}
