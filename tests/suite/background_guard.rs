//! What a background process may not do to the rest of the run, through the real binary
//! (Linux with the sandbox): plant in the workspace's git surfaces past the next call.

use std::time::Duration;

use super::background::{available, background_turn, last_result, processes_turn};
use super::fake_model::{FakeModel, Gate, turn_text, turn_tool_call};
use super::harness::Sandbox;
use super::support::git::git_ok;
use super::support::process::kill_left;
use super::support::require::require_program;

/// How long the background process may take to plant (bounds a failing test only).
const PLANTED: Duration = Duration::from_secs(20);

/// Git surfaces a background process plants in (each path relative to the workspace, and
/// what it writes there): a file where there was none in the git directory, and a nested
/// repository whose configuration runs a program.
const PLANTS: &[(&str, &str)] = &[
    (".git/commondir", "/tmp/elsewhere"),
    (".git/config.worktree", "[core]\n\tfsmonitor = touch ran"),
    ("nested/.git/config", "[core]\n\tfsmonitor = touch ran"),
];

#[test]
fn what_a_background_process_plants_in_the_git_surfaces_is_gone_before_the_next_call() {
    let sandbox = Sandbox::new();
    if !available(&sandbox) || !require_program("git") {
        return;
    }
    let work = sandbox.work();
    git_ok(&work, &["init", "-q"]);
    for (path, text) in PLANTS {
        let n = path.len();
        let dir = std::path::Path::new(path).parent().unwrap().display();
        // In a script: the policy asks about a redirection into `.git` on the command line.
        std::fs::write(
            work.join("plant.sh"),
            format!(
                "{{ mkdir -p {dir} && printf '{text}' > {path}; }} 2> failed-{n} \
                 && rm failed-{n}; touch planted-{n}; exec sleep 600\n"
            ),
        )
        .unwrap();
        let plant = "sh plant.sh";
        let gate = Gate::new();
        let look = format!("cat {path} 2>&1 || echo absent; ls ran 2>&1 || echo clean");
        let server = FakeModel::new([
            background_turn(plant).openai(),
            turn_tool_call(&look, "look").openai().hold_before(0, &gate),
            turn_text("done").openai(),
        ]);
        let marker = work.join(format!("planted-{n}"));
        // The next call comes only once the plant is there (before that call's own check).
        let opener = std::thread::spawn({
            let marker = marker.clone();
            move || {
                // Opened however it went: a failing plant is reported below, with the run.
                let end = std::time::Instant::now() + PLANTED;
                while !marker.exists() && std::time::Instant::now() < end {
                    std::thread::sleep(Duration::from_millis(20));
                }
                gate.open();
            }
        });
        let output = sandbox
            .openai_run(&server)
            .args(["--mode", "allow-all", "--json", "plant"])
            .output()
            .unwrap();
        opener.join().unwrap();
        kill_left(&work);
        let failed = std::fs::read_to_string(work.join(format!("failed-{n}")));
        assert!(
            failed.is_err() && marker.exists(),
            "{path}: could not plant: {failed:?} {output:?}"
        );
        assert!(output.status.success(), "{output:?}");
        let seen = last_result(&server, 2);
        assert!(
            seen.contains("absent") && seen.contains("clean"),
            "{path}: the next command saw the plant: {seen}"
        );
        let events = String::from_utf8_lossy(&output.stdout);
        assert!(
            events.contains("sandbox: after background process bg1"),
            "{path}: {events}"
        );
        // The call's event says it runs in the background (rev5 B8).
        assert!(events.contains(r#""background":true"#), "{events}");
        assert!(!work.join(path).exists(), "{path} outlived the run");
        let _ = std::fs::remove_file(marker);
        let _ = std::fs::remove_dir_all(work.join("nested"));
    }
}

/// A background start is answered at once: the screen says it started, shows the model's
/// next text, and never calls it interrupted (rev5 B9).
#[test]
fn at_a_terminal_a_background_start_is_shown_started_and_the_text_after_it_too() {
    let sandbox = Sandbox::new();
    if !available(&sandbox) || !super::support::require::on_path("tmux") {
        return;
    }
    let server = FakeModel::openai_turns([
        background_turn("echo up > up; exec sleep 600"),
        turn_text("the server is up"),
    ]);
    let tmux = super::tty::run_in_tmux(&sandbox, &server, &[], "--mode allow-all 'serve'");
    let screen = tmux.wait_for("EXIT=0");
    kill_left(&sandbox.work());
    assert!(
        screen.contains("started in the background as bg1"),
        "{screen}"
    );
    assert!(screen.contains("the server is up"), "{screen}");
    assert!(!screen.contains("interrupted"), "{screen}");
}

/// Ended background processes are forgotten past a bound (their output rings freed), and ids
/// are not reused (rev5 B6): more starts than the running cap and the ended bound together
/// leave at most both listed.
#[test]
fn ended_background_processes_are_forgotten_past_a_bound() {
    let sandbox = Sandbox::new();
    if !available(&sandbox) {
        return;
    }
    const STARTS: usize = 20;
    let mut turns: Vec<_> = (0..STARTS)
        .map(|n| background_turn(&format!("true {n}")))
        .collect();
    turns.push(processes_turn(&serde_json::json!({"action": "list"})));
    turns.push(turn_text("done"));
    let server = FakeModel::openai_turns(turns);
    let output = sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "many"])
        .output()
        .unwrap();
    kill_left(&sandbox.work());
    assert!(output.status.success(), "{output:?}");
    let listed: serde_json::Value =
        serde_json::from_str(&last_result(&server, STARTS + 1)).unwrap();
    let listed = listed["processes"].as_array().unwrap();
    // 8 running at most (the cap) and 8 ended.
    assert!(listed.len() <= 16, "{listed:?}");
    let ids: Vec<&str> = listed.iter().map(|p| p["id"].as_str().unwrap()).collect();
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(unique, ids);
    let started: Vec<String> = (1..=STARTS)
        .map(|n| format!("\"background\":\"bg{n}\""))
        .collect();
    for (n, id) in started.iter().enumerate() {
        let result = last_result(&server, n + 1);
        assert!(
            result.contains(id) || result.contains("running already"),
            "{result}"
        );
    }
}

/// A server on this machine that answers one request with a line, then a second line once
/// `more` says so, then closes; says on `sent` when each line went out.
fn streaming_server() -> (
    u16,
    std::sync::mpsc::Sender<()>,
    std::sync::mpsc::Receiver<()>,
) {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (more, wait) = std::sync::mpsc::channel();
    let (said, sent) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
            head.push(byte[0]);
        }
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nfirst\n");
        let _ = said.send(());
        let _ = wait.recv();
        let _ = stream.write_all(b"second\n");
        let _ = said.send(());
    });
    (port, more, sent)
}

/// A background process's connection outlives the commands run meanwhile (rev5 B5): it is
/// not cut when a command starts or ends.
#[test]
fn a_background_connection_is_not_cut_by_later_commands() {
    let sandbox = Sandbox::new();
    let (port, more, sent) = streaming_server();
    sandbox.settings(&format!(
        "[network]\nmode = \"allowlist\"\nallow = [\"stream.test\"]\n\
         hosts = {{ \"stream.test\" = \"127.0.0.1:{port}\" }}\n"
    ));
    if !available(&sandbox) || !require_program("curl") {
        return;
    }
    let (after_first, after_second) = (Gate::new(), Gate::new());
    let server = FakeModel::new([
        background_turn(&format!(
            "curl -sSN http://stream.test:{port}/ -o streamed.txt; exec sleep 600"
        ))
        .openai(),
        turn_tool_call("true one", "a command meanwhile")
            .openai()
            .hold_before(0, &after_first),
        turn_tool_call("true two", "another").openai(),
        turn_tool_call("cat streamed.txt", "look")
            .openai()
            .hold_before(0, &after_second),
        turn_text("done").openai(),
    ]);
    let output = std::thread::scope(|scope| {
        let (sent, more) = (sent, more);
        let (first, second, server) = (&after_first, &after_second, &server);
        scope.spawn(move || {
            // Each wait is bounded: a failing run still ends.
            let _ = sent.recv_timeout(Duration::from_secs(20));
            first.open();
            // The model's fourth request: both commands ran (and ended) meanwhile.
            let end = std::time::Instant::now() + Duration::from_secs(20);
            while server.requests().len() < 4 && std::time::Instant::now() < end {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = more.send(());
            let _ = sent.recv_timeout(Duration::from_secs(20));
            second.open();
        });
        sandbox
            .openai_run(server)
            .args(["--mode", "allow-all", "--json", "stream"])
            .output()
            .unwrap()
    });
    kill_left(&sandbox.work());
    assert!(output.status.success(), "{output:?}");
    let seen = last_result(&server, 4);
    assert!(seen.contains("first\\nsecond"), "{seen}");
}

/// While a background process runs, its connection to a host no rule decides is refused
/// unasked: no question appears under the running command's name, and the host stays closed
/// (rev5 B4).
#[test]
fn at_a_terminal_a_background_connection_is_never_asked_about_under_a_command() {
    let sandbox = Sandbox::new();
    let port = super::background::hello_server();
    sandbox.settings(&format!(
        "[network]\nmode = \"allowlist\"\nhosts = {{ \"new.test\" = \"127.0.0.1:{port}\" }}\n"
    ));
    if !available(&sandbox) || !require_program("curl") || !super::support::require::on_path("tmux")
    {
        return;
    }
    // In scripts: the policy asks about a loop on the command line.
    let work = sandbox.work();
    std::fs::write(
        work.join("bg.sh"),
        format!(
            "until [ -e go ]; do sleep 0.05; done\ncurl -sS http://new.test:{port}/ -o got.txt\n\
             touch fetched\nexec sleep 600\n"
        ),
    )
    .unwrap();
    std::fs::write(
        work.join("fg.sh"),
        "touch go\nuntil [ -e fetched ]; do sleep 0.05; done\n",
    )
    .unwrap();
    let server = FakeModel::openai_turns([
        background_turn("sh bg.sh"),
        turn_tool_call("sh fg.sh", "wait for it"),
        turn_text("finished"),
    ]);
    let tmux = super::tty::run_in_tmux(&sandbox, &server, &[], "--mode allow-all 'go'");
    let screen = tmux.wait_for("EXIT=");
    kill_left(&sandbox.work());
    assert!(!screen.contains("wants `new.test`"), "{screen}");
    let got = std::fs::read_to_string(sandbox.work().join("got.txt")).unwrap_or_default();
    assert!(!got.contains("hello"), "{got}\n{screen}");
    assert!(screen.contains("finished"), "{screen}");
}
