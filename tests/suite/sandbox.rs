//! The command sandbox through the real binary (Linux with Landlock; skipped through
//! `support::require` where the kernel has none). The test's temp root (below `/tmp`) holds
//! `work/` (the workspace); a second root outside `/tmp` (in `CARGO_TARGET_TMPDIR`) holds `tmp/`
//! (given to the agent as `TMPDIR`) and `outside/`, which is neither: a write there must fail
//! with the sandbox on. They are not below `/tmp` because a command sees a `/tmp` of its own,
//! with only its workspace bound back in place there.

use std::path::{Path, PathBuf};

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::{Sandbox, git, json};
use super::support::{require, require_program};
use assert_cmd::Command;
use predicates::prelude::*;
use pretty_assertions::assert_eq;

struct Dirs {
    sandbox: Sandbox,
    /// The root of `tmp/` and `outside/`, not below `/tmp`.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    outer: tempfile::TempDir,
    tmp: PathBuf,
    outside: PathBuf,
}

impl Dirs {
    fn new() -> Self {
        let sandbox = Sandbox::new();
        let outer = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let tmp = outer.path().join("tmp");
        let outside = outer.path().join("outside");
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        Self {
            sandbox,
            outer,
            tmp,
            outside,
        }
    }

    fn agent(&self) -> Command {
        let mut cmd = self.sandbox.agent();
        cmd.env("TMPDIR", &self.tmp);
        cmd
    }

    /// [`Dirs::agent`] with a test-only switch (`AGENT_TEST_SANDBOX_…`) set to `1`, if any.
    fn agent_with(&self, switch: Option<&str>) -> Command {
        let mut cmd = self.agent();
        if let Some(switch) = switch {
            cmd.env(switch, "1");
        }
        cmd
    }

    /// `agent exec --json ARGS…`: the result and the exit status.
    fn exec(&self, args: &[&str]) -> (serde_json::Value, Option<i32>) {
        let output = self
            .agent()
            .args(["exec", "--json"])
            .args(args)
            .output()
            .unwrap();
        (json(&output), output.status.code())
    }

    fn work(&self) -> PathBuf {
        self.sandbox.work()
    }
}

/// Whether the sandbox works on this machine, through [`require`]: tests skip (saying so)
/// where it does not, and fail there in strict mode.
pub(super) fn available() -> bool {
    let dirs = Dirs::new();
    let output = dirs
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    require("sandbox", json(&output)["sandbox.active"]["value"] == true)
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

#[test]
fn writes_inside_the_workspace_and_temp_dir_work() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let (result, status) =
        dirs.exec(&["touch inside && mkdir -p sub/dir && touch \"$TMPDIR/t\" && echo \"$TMPDIR\""]);
    assert_eq!(status, Some(0), "{result}");
    assert!(dirs.work().join("inside").exists());
    assert_eq!(result.get("sandbox_denied"), None, "{result}");
    // The command's temp dir is its own `/tmp` (its private one in the agent's TMPDIR, bound
    // there), and that private one is gone when it ended.
    assert_eq!(
        result["stdout"].as_str().unwrap().trim(),
        "/tmp",
        "{result}"
    );
    assert_eq!(std::fs::read_dir(&dirs.tmp).unwrap().count(), 0);
    // And one the command left empty is gone too (removed without reading it first).
    let (result, status) = dirs.exec(&["true"]);
    assert_eq!(status, Some(0), "{result}");
    assert_eq!(std::fs::read_dir(&dirs.tmp).unwrap().count(), 0);
    // The shared temp dir the agent was given is not writable.
    let (result, _) = dirs.exec(&[&format!("touch {}/shared", quoted(&dirs.tmp))]);
    assert!(!dirs.tmp.join("shared").exists(), "{result}");
}

/// A workspace below `/tmp` (where people try things out): the command gets a `/tmp` of its
/// own, with its workspace (and a `writable` path below `/tmp`) bound back in place there,
/// still protected inside; the rest of the real `/tmp`, a sibling of the workspace included,
/// is out of its sight, and nothing it writes to its `/tmp` reaches the real one.
#[test]
fn a_workspace_below_tmp_gets_a_tmp_of_its_own() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let root = tempfile::tempdir_in("/tmp").unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let work = root_path.join("work");
    let sibling = root_path.join("sibling");
    let granted = root_path.join("granted");
    for dir in [
        &work.join(".git/hooks"),
        &work.join(".agent"),
        &sibling,
        &granted,
    ] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(sibling.join("notes.txt"), "sibling-notes\n").unwrap();
    dirs.sandbox.settings(&format!(
        "[sandbox]\nwritable = [{:?}]\n",
        granted.display().to_string()
    ));
    let real = format!("/tmp/agent-sandbox-tmp-workspace-{}", std::process::id());
    let command = format!(
        "touch {real} && echo made-tmp; touch inside && echo made-inside; \
         cat {sibling}/notes.txt; touch {granted}/g && echo made-granted; \
         touch .git/hooks/pre-commit .agent/settings.toml; ls -a /tmp; true",
        sibling = quoted(&sibling),
        granted = quoted(&granted),
    );
    let exec = |flags: &[&str]| {
        let output = dirs
            .agent()
            .current_dir(&work)
            .args(["exec", "--json"])
            .args(flags)
            .arg("--")
            .arg(&command)
            .output()
            .unwrap();
        json(&output)["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let stdout = exec(&[]);
    assert!(stdout.contains("made-tmp"), "{stdout}");
    assert!(
        !Path::new(&real).exists(),
        "a write to /tmp reached the real /tmp"
    );
    assert!(
        stdout.contains("made-inside") && work.join("inside").exists(),
        "{stdout}"
    );
    assert!(
        stdout.contains("made-granted") && granted.join("g").exists(),
        "{stdout}"
    );
    assert!(
        !stdout.contains("sibling-notes"),
        "the sibling was seen: {stdout}"
    );
    assert!(!work.join(".git/hooks/pre-commit").exists(), "{stdout}");
    assert!(!work.join(".agent/settings.toml").exists(), "{stdout}");
    // Its `/tmp` holds what it made and the way to its workspace, nothing of the real one.
    let top = root_path
        .strip_prefix("/tmp")
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let made = &real["/tmp/".len()..];
    let listed: Vec<&str> = stdout.lines().skip_while(|line| *line != ".").collect();
    assert!(listed.contains(&made), "{stdout}");
    for name in &listed {
        assert!(
            [".", "..", made, top.to_str().unwrap()].contains(name),
            "`{name}` of the real /tmp was seen: {stdout}"
        );
    }
    // Without the sandbox the same command sees the sibling and writes the real /tmp: the
    // checks above can fail.
    let stdout = exec(&["--sandbox", "off"]);
    assert!(stdout.contains("sibling-notes"), "{stdout}");
    assert!(Path::new(&real).exists());
    std::fs::remove_file(&real).unwrap();
}

#[test]
fn a_write_outside_fails_with_the_sandbox_and_works_without() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let target = dirs.outside.join("f");
    let command = format!("touch {}", quoted(&target));
    let (result, status) = dirs.exec(&[&command]);
    assert_ne!(status, Some(0), "{result}");
    assert!(!target.exists(), "the sandbox let a write outside through");
    assert_eq!(result["sandbox_denied"], true, "{result}");
    let note = result["sandbox_note"].as_str().unwrap();
    assert!(
        note.contains("likely") && note.contains("Permission denied"),
        "{note}"
    );
    // `/tmp` is the command's own: a write there works and never reaches the real one.
    let real = format!("/tmp/agent-sandbox-test-{}", std::process::id());
    let (result, status) = dirs.exec(&[&format!("touch {real}")]);
    assert_eq!(status, Some(0), "{result}");
    assert!(
        !Path::new(&real).exists(),
        "a write to /tmp reached the real /tmp"
    );

    let (result, status) = dirs.exec(&["--sandbox", "off", "--", &command]);
    assert_eq!(status, Some(0), "{result}");
    assert!(target.exists());
}

#[test]
fn read_only_refuses_a_workspace_write_but_not_dev_null() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let (result, status) = dirs.exec(&[
        "--sandbox",
        "read-only",
        "--",
        "echo fine > /dev/null && touch inside",
    ]);
    assert_ne!(status, Some(0), "{result}");
    assert!(!dirs.work().join("inside").exists());
    assert!(
        result["stderr"].as_str().unwrap().contains("touch"),
        "{result}"
    );
}

#[test]
fn git_hooks_and_agent_settings_stay_read_only() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.work().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(dirs.work().join(".agent")).unwrap();
    let (result, _) = dirs.exec(&[
        "touch .git/HEAD.new; touch .git/hooks/pre-commit; touch .agent/settings.toml; true",
    ]);
    assert!(dirs.work().join(".git/HEAD.new").exists(), "{result}");
    assert!(
        !dirs.work().join(".git/hooks/pre-commit").exists(),
        "a hook was planted: {result}"
    );
    assert!(
        !dirs.work().join(".agent/settings.toml").exists(),
        "the project settings were written: {result}"
    );
}

/// A workspace without `.agent/` shows none to its commands (nothing is made there for the
/// sandbox), and one a command makes — a directory with settings, locked or not, a file, a
/// link to settings elsewhere — is gone after it, with and without mounts: the next command
/// (or run) reads no settings of the command's.
#[test]
fn no_agent_directory_appears_and_none_a_command_makes_stays() {
    if !available() {
        return;
    }
    let plants = [
        "mkdir .agent && echo '[permissions]' > .agent/settings.toml",
        "mkdir .agent && echo x > .agent/settings.toml && chmod 500 .agent",
        "mkdir -p .agent/d && echo x > .agent/settings.toml && chmod 000 .agent/d .agent",
        "echo x > .agent",
        "ln -s \"$ELSEWHERE\" .agent",
    ];
    for (switch, why) in MOUNT_CASES {
        let dirs = Dirs::new();
        let work = repository(&dirs);
        let elsewhere = dirs.outside.join("settings");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("settings.toml"), "x\n").unwrap();
        let listed = |result: &serde_json::Value| {
            result["stdout"]
                .as_str()
                .unwrap_or_default()
                .lines()
                .any(|name| name == ".agent")
        };
        let result = exec_with(&dirs, switch, "ls -a");
        assert!(
            result["stdout"]
                .as_str()
                .unwrap_or_default()
                .contains(".git"),
            "{why}: {result}"
        );
        assert!(!listed(&result), "{why}: a phantom `.agent`: {result}");
        for plant in plants {
            let command = format!("ELSEWHERE='{}'; {plant}; ls -a", elsewhere.display());
            let result = exec_with(&dirs, switch, &command);
            assert!(listed(&result), "{why}: `{plant}` made nothing: {result}");
            assert!(
                work.join(".agent").symlink_metadata().is_err(),
                "{why}: `{plant}` left `.agent`: {result}"
            );
            assert!(
                undone(&result).contains(".agent"),
                "{why}: `{plant}`: {result}"
            );
            let result = exec_with(&dirs, switch, "ls -a; cat .agent/settings.toml");
            assert!(!listed(&result), "{why}: after `{plant}`: {result}");
            // Moved out of the way where it could not be removed; never the person's own.
            assert!(elsewhere.join("settings.toml").exists(), "{why}: `{plant}`");
        }
    }
}

#[test]
fn grandchildren_are_restricted_too() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let target = dirs.outside.join("grandchild");
    let command = format!(
        "sh -c \"sh -c 'touch {}' & wait\"; sh -c 'touch ok'",
        target.display()
    );
    let (result, _) = dirs.exec(&[&command]);
    assert!(dirs.work().join("ok").exists(), "{result}");
    assert!(
        !target.exists(),
        "a grandchild escaped the sandbox: {result}"
    );
}

/// `bash` opens TCP for `> /dev/tcp/HOST/PORT`; `sh` (dash) cannot.
fn connect_command(port: u16) -> String {
    format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'")
}

/// One `agent run` whose model (on 127.0.0.1) asks to connect to `listener`; whether the
/// listener saw a connection, and what the model got back.
fn run_connect(dirs: &Dirs, listener: &std::net::TcpListener, flags: &[&str]) -> (bool, String) {
    let port = listener.local_addr().unwrap().port();
    let command = connect_command(port);
    let server = FakeModel::openai_turns([turn_tool_call(&command, "connect"), turn_text("done")]);
    dirs.agent()
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(["--mode", "allow-all"])
        .args(flags)
        .arg("connect")
        .assert()
        .success()
        .stdout("done\n");
    let connected = listener.accept().is_ok();
    let result = server.request(1).tool_results()[0].1.clone();
    (connected, result)
}

#[test]
fn the_network_is_off_for_commands_but_not_for_the_agent() {
    if !available() || !require_program("bash") {
        return;
    }
    let dirs = Dirs::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let (connected, result) = run_connect(&dirs, &listener, &[]);
    assert!(!connected, "the command reached the listener: {result}");
    assert!(result.contains("\"sandbox_denied\":true"), "{result}");
    assert!(result.contains("network use is off"), "{result}");

    let (connected, result) = run_connect(&dirs, &listener, &["--network"]);
    assert!(
        connected,
        "with --network the command should connect: {result}"
    );
    assert!(result.contains("\"exit_code\":0"), "{result}");
}

#[test]
fn the_start_event_records_the_sandbox() {
    let dirs = Dirs::new();
    let output = dirs
        .agent()
        .env("AGENT_TEST_SANDBOX_UNAVAILABLE", "1")
        .args([
            "run",
            "--json",
            "--provider",
            "demo",
            "--sandbox",
            "read-only",
            "hi",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let start: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(start["type"], "start");
    assert_eq!(start["sandbox"]["mode"], "read-only");
    assert_eq!(start["sandbox"]["active"], false);
    assert_eq!(start["sandbox"]["network"], false);
    assert!(
        start["sandbox"]["reason"]
            .as_str()
            .unwrap()
            .contains("test-only"),
        "{start}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.matches("sandbox is not available").count(),
        1,
        "said once on stderr: {stderr}"
    );
    if available() {
        let output = dirs
            .agent()
            .args(["run", "--json", "--provider", "demo", "hi"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let start: serde_json::Value =
            serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
        assert_eq!(
            start["sandbox"],
            serde_json::json!({"mode": "workspace-write", "active": true, "network": false})
        );
    }
}

#[test]
fn required_refuses_to_run_where_the_sandbox_cannot_apply() {
    let dirs = Dirs::new();
    dirs.sandbox.settings("[sandbox]\nrequired = true\n");
    dirs.agent()
        .env("AGENT_TEST_SANDBOX_UNAVAILABLE", "1")
        .args(["exec", "touch ran"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("required but not available"));
    assert!(!dirs.work().join("ran").exists());

    let server = FakeModel::openai_turns([turn_tool_call("touch ran", "touch"), turn_text("no")]);
    dirs.agent()
        .env("AGENT_TEST_SANDBOX_UNAVAILABLE", "1")
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(["--allow", "touch", "touch it"])
        .assert()
        .success();
    assert!(!dirs.work().join("ran").exists());
    let result = &server.request(1).tool_results()[0].1;
    assert!(result.contains("ESANDBOX"), "{result}");

    // Without `required`, the same machine runs the command unsandboxed, saying so.
    let dirs = Dirs::new();
    dirs.agent()
        .env("AGENT_TEST_SANDBOX_UNAVAILABLE", "1")
        .args(["exec", "touch ran"])
        .assert()
        .success()
        .stderr(predicate::str::contains("commands run without it"));
    assert!(dirs.work().join("ran").exists());
    // `--sandbox-required` does the same as the setting.
    dirs.agent()
        .env("AGENT_TEST_SANDBOX_UNAVAILABLE", "1")
        .args(["exec", "--sandbox-required", "touch again"])
        .assert()
        .code(1);
    assert!(!dirs.work().join("again").exists());
}

#[test]
fn a_project_file_cannot_widen_the_sandbox() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let granted = dirs.sandbox.root.path().join("granted");
    std::fs::create_dir_all(&granted).unwrap();
    dirs.sandbox.settings(&format!(
        "[sandbox]\nwritable = [{:?}]\n",
        granted.display().to_string()
    ));
    std::fs::create_dir_all(dirs.work().join(".agent")).unwrap();
    std::fs::write(
        dirs.work().join(".agent/settings.toml"),
        format!(
            "[sandbox]\nmode = \"off\"\nnetwork = true\nwritable = [{:?}, {:?}]\n",
            granted.display().to_string(),
            dirs.outside.display().to_string()
        ),
    )
    .unwrap();
    let output = dirs
        .agent()
        .args(["exec", "--json", "--"])
        .arg(format!(
            "touch {}/a; touch {}/b; true",
            quoted(&granted),
            quoted(&dirs.outside)
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        granted.join("a").exists(),
        "the user's writable path: {stderr}"
    );
    assert!(
        !dirs.outside.join("b").exists(),
        "the project file added a writable path"
    );
    for warning in [
        "can only remove writable paths",
        "can only make the sandbox stricter",
        "can only turn the network off",
    ] {
        assert!(stderr.contains(warning), "{warning}: {stderr}");
    }

    // A project file may remove the user's entry.
    std::fs::write(
        dirs.work().join(".agent/settings.toml"),
        "[sandbox]\nwritable = []\nmode = \"read-only\"\n",
    )
    .unwrap();
    let shown = dirs.agent().args(["config", "show"]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(!shown.contains("sandbox.writable"), "{shown}");
    assert!(shown.contains("sandbox.mode = \"read-only\""), "{shown}");
}

#[test]
fn config_show_says_whether_the_sandbox_is_active_and_why_not() {
    let dirs = Dirs::new();
    dirs.agent()
        .env("AGENT_TEST_SANDBOX_UNAVAILABLE", "1")
        .args(["config", "show"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "sandbox.mode = \"workspace-write\"",
        ))
        .stdout(predicate::str::contains("sandbox.active = false"))
        .stdout(predicate::str::contains("test-only"));
    dirs.sandbox.settings("[sandbox]\nmode = \"off\"\n");
    dirs.agent()
        .args(["config", "show"])
        .assert()
        .success()
        .stdout(predicate::str::contains("sandbox.active = false"))
        .stdout(predicate::str::contains("# mode off"));
}

/// The second read's escapes, each closed: renaming `.git` away, `core.hooksPath` in
/// `.git/config`, a missing hooks directory, device nodes, typing into a terminal, local
/// services over Unix sockets, and signalling the agent.
#[test]
fn git_cannot_be_renamed_away_or_reconfigured() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.work().join(".git")).unwrap();
    std::fs::write(dirs.work().join(".git/config"), "[core]\n").unwrap();
    let (result, _) = dirs.exec(&[
        "mv .git .git-old; mkdir -p .git/hooks; touch .git/hooks/pre-commit; \
         echo '[core] hooksPath = h' >> .git/config; touch .git/HEAD.new; true",
    ]);
    assert!(dirs.work().join(".git/HEAD.new").exists(), "{result}");
    assert!(!dirs.work().join(".git-old").exists(), "{result}");
    assert!(
        !dirs.work().join(".git/hooks/pre-commit").exists(),
        "a hook was planted in a hooks directory that did not exist: {result}"
    );
    let config = std::fs::read_to_string(dirs.work().join(".git/config")).unwrap();
    assert_eq!(config, "[core]\n", "{result}");
}

/// Only root may make a device node at all, so only root's run can fail: the test needs root
/// (`.ci/run` runs it where it is root).
#[test]
#[ignore = "needs root"]
fn device_nodes_cannot_be_made_as_root() {
    if !available() || !require("root", running_as_root()) {
        return;
    }
    let dirs = Dirs::new();
    let (result, _) = dirs.exec(&["mknod ./kmsg c 1 11"]);
    assert!(!dirs.work().join("kmsg").exists(), "{result}");
    let (result, _) = dirs.exec(&["--sandbox", "off", "mknod ./kmsg c 1 11"]);
    assert!(
        dirs.work().join("kmsg").exists(),
        "the control run failed: {result}"
    );
}

fn running_as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `TIOCSTI` on a pseudo-terminal of its own: refused in the sandbox. The control run without
/// the sandbox proves the test can fail; it types only where the kernel lets this user
/// (root, or `dev.tty.legacy_tiocsti=1`), and the test needs that.
#[test]
fn a_command_cannot_type_into_a_terminal() {
    if !available() || !require_program("python3") {
        return;
    }
    let dirs = Dirs::new();
    let typed = dirs.work().join("typed");
    let script = "python3 -c 'import os,fcntl,termios; m,s=os.openpty(); \
                  fcntl.ioctl(s, termios.TIOCSTI, b\"x\"); open(\"typed\",\"w\")'";
    let (control, _) = dirs.exec(&["--sandbox", "off", script]);
    if !require("TIOCSTI outside the sandbox", typed.exists()) {
        eprintln!("the control run: {control}");
        return;
    }
    std::fs::remove_file(&typed).unwrap();
    let (result, _) = dirs.exec(&[script]);
    assert!(!typed.exists(), "TIOCSTI worked: {result}");
}

/// A Unix socket outside the workspace stands for a local service (tmux, D-Bus, Docker):
/// with the network off, connecting to it is refused; `--network` allows it.
#[cfg(unix)]
#[test]
fn local_services_over_unix_sockets_need_the_network() {
    if !available() || !require_program("python3") {
        return;
    }
    let dirs = Dirs::new();
    let path = dirs.outside.join("service.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); \
         open(\"connected\",\"w\")'",
        path.display()
    );
    let (result, _) = dirs.exec(&[&script]);
    assert!(!dirs.work().join("connected").exists(), "{result}");
    let (result, _) = dirs.exec(&["--network", &script]);
    assert!(dirs.work().join("connected").exists(), "{result}");
}

/// A Unix datagram socket reaches a service without `connect` (`sendto` names it): with the
/// network off no such socket is made, in any spelling of its type; `--network` allows it.
#[cfg(unix)]
#[test]
fn local_services_over_unix_datagrams_need_the_network() {
    if !available() || !require_program("python3") {
        return;
    }
    let dirs = Dirs::new();
    let path = dirs.outside.join("log.sock");
    let listener = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    for kind in [
        "socket.SOCK_DGRAM",
        "socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK",
    ] {
        let script = format!(
            "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX, {kind}); \
             s.sendto(b\"escaped\", \"{}\"); open(\"sent\",\"w\")'",
            path.display()
        );
        let (result, _) = dirs.exec(&[&script]);
        assert!(!dirs.work().join("sent").exists(), "{kind}: {result}");
        let mut buf = [0u8; 16];
        assert!(
            listener.recv(&mut buf).is_err(),
            "{kind}: a datagram got out"
        );
        let (result, _) = dirs.exec(&["--network", &script]);
        assert!(dirs.work().join("sent").exists(), "{kind}: {result}");
        assert_eq!(listener.recv(&mut buf).unwrap(), 7);
        std::fs::remove_file(dirs.work().join("sent")).unwrap();
    }
}

#[test]
fn a_command_cannot_signal_the_agent() {
    if !available() {
        return;
    }
    // The command may not even see the agent in `/proc` (it gets a `/proc` of its own): it
    // is told the agent's number through a file, as if it had found it.
    let script = "i=0; while [ ! -s agent-pid ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); \
                  done; agent=$(cat agent-pid); echo \"agent $agent\" >&2; \
                  kill -TERM \"$agent\" || echo refused; echo survived";
    for switch in [None, Some("AGENT_TEST_SANDBOX_NO_PID_NAMESPACE")] {
        let dirs = Dirs::new();
        let mut agent = dirs.sandbox.agent_process();
        agent.env("TMPDIR", &dirs.tmp);
        if let Some(switch) = switch {
            agent.env(switch, "1");
        }
        let child = agent
            .args(["exec", "--json", "--", script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let told = dirs.work().join("agent-pid.part");
        std::fs::write(&told, pid.to_string()).unwrap();
        std::fs::rename(&told, dirs.work().join("agent-pid")).unwrap();
        let output = child.wait_with_output().unwrap();
        let result = json(&output);
        assert_eq!(output.status.code(), Some(0), "{switch:?}: {result}");
        assert_eq!(
            result["stdout"], "refused\nsurvived\n",
            "{switch:?}: {result}"
        );
        let shown = result["stderr"].as_str().unwrap_or_default();
        assert!(
            shown.starts_with(&format!("agent {pid}")),
            "{switch:?}: {result}"
        );
    }
}

/// The command cannot stop, kill or limit the helper that supervises it (which would leave
/// what it started running): inside a PID namespace it cannot name it; without one the helper
/// is outside the command's Landlock domain, which signals nothing outside it, and seccomp
/// refuses `prlimit` on another process.
#[test]
fn a_command_cannot_signal_its_helper() {
    if !available() || !require_program("prlimit") {
        return;
    }
    let script = format!(
        "read -r line < /proc/self/stat; helper=${{line#*) }}; helper=${{helper#* }}; \
         helper=${{helper%% *}}; echo \"helper $helper\" >&2; \
         if [ \"$helper\" = 0 ]; then echo unnamed; else \
         kill -STOP $helper || echo stop-refused; kill -KILL $helper || echo kill-refused; \
         prlimit --pid $helper --nofile=0:0 || echo limit-refused; fi; {}",
        leavers()[0]
    );
    for switch in [None, Some("AGENT_TEST_SANDBOX_NO_PID_NAMESPACE")] {
        let dirs = Dirs::new();
        let output = dirs
            .agent_with(switch)
            .args(["exec", "--json", "--", &script])
            .output()
            .unwrap();
        let result = json(&output);
        assert_eq!(output.status.code(), Some(0), "{switch:?}: {result}");
        // Inside the PID namespace the helper has no number (the parent is 0).
        let expected = if switch.is_none() {
            "unnamed\n"
        } else {
            "stop-refused\nkill-refused\nlimit-refused\n"
        };
        assert_eq!(result["stdout"], expected, "{switch:?}: {result}");
        let left = left_behind(&dirs.work(), 1);
        assert!(left.is_empty(), "{switch:?}: still running afterwards");
    }
}

/// A command cannot read the agent's environment (its API keys, kept from the command's own
/// environment) or any other process's through `/proc`: it gets a `/proc` of its own — the
/// PID namespace's, or without one (as root) one that lists only its own processes.
/// A command may nice itself but not a process group or a user's processes (`renice -u` would
/// slow the agent, the person's shell and editor, and outlive the command). The case tried
/// is the command's own group, harmless either way: it works without the sandbox.
#[test]
fn a_command_cannot_lower_the_priority_of_other_processes() {
    if !available() || !require_program("renice") || !require_program("ionice") {
        return;
    }
    let dirs = Dirs::new();
    for (command, sandboxed) in [
        ("nice -n 1 true && ionice -c 3 true", true),
        ("renice -n 1 -g $$", false),
        ("ionice -c 3 -P $$", false),
    ] {
        let (result, status) = dirs.exec(&["--", command]);
        assert_eq!(status == Some(0), sandboxed, "{command}: {result}");
        let (result, status) = dirs.exec(&["--sandbox", "off", "--", command]);
        assert_eq!(status, Some(0), "{command} without the sandbox: {result}");
    }
}

#[test]
fn a_command_cannot_read_the_agents_environment() {
    if !available() {
        return;
    }
    let script = "grep -l sk-agent-only /proc/[0-9]*/environ 2>/dev/null; \
                  ls /proc | grep -c '^[0-9]' >&2; echo end";
    let mut switches = vec![None];
    if running_as_root() {
        switches.push(Some("AGENT_TEST_SANDBOX_NO_PID_NAMESPACE"));
    }
    for switch in switches {
        let dirs = Dirs::new();
        let output = dirs
            .agent_with(switch)
            .env("OPENAI_API_KEY", "sk-agent-only")
            .args(["exec", "--json", "--", script])
            .output()
            .unwrap();
        let result = json(&output);
        assert_eq!(result["stdout"], "end\n", "{switch:?}: {result}");
        // The shell, `ls` and `grep`, give or take: not the machine's processes.
        let listed: u32 = result["stderr"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .parse()
            .unwrap_or(u32::MAX);
        assert!(listed < 10, "{switch:?}: {result}");
    }
}

/// A command keeps no capability beyond owning and changing the files it may reach (and low
/// ports), not even as root: `CAP_SYS_ADMIN` would clone the mount tree without the read-only
/// binds, `CAP_DAC_READ_SEARCH` open files by handle past Landlock, `CAP_PERFMON` read the
/// agent's memory. The system calls for those fail whatever the capabilities (seccomp).
#[test]
fn a_command_keeps_no_capability_that_reaches_past_the_sandbox() {
    if !available() || !require_program("python3") {
        return;
    }
    // CHOWN, DAC_OVERRIDE, FOWNER, FSETID, NET_BIND_SERVICE.
    const KEPT: u64 = 0x41b;
    // open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE): 428 on every architecture.
    let script = "grep -E '^Cap(Eff|Prm|Bnd|Amb):' /proc/self/status; \
                  python3 -c 'import ctypes; \
                  l = ctypes.CDLL(None, use_errno=True); r = l.syscall(428, -100, b\"/\", 1); \
                  print(\"open_tree\", r, ctypes.get_errno())'";
    for switch in [
        None,
        Some("AGENT_TEST_SANDBOX_NO_PID_NAMESPACE"),
        Some("AGENT_TEST_SANDBOX_NO_MOUNTS"),
    ] {
        let dirs = Dirs::new();
        let output = dirs
            .agent_with(switch)
            .args(["exec", "--json", "--", script])
            .output()
            .unwrap();
        let result = json(&output);
        let stdout = result["stdout"].as_str().unwrap_or_default();
        let sets: Vec<u64> = stdout
            .lines()
            .filter_map(|line| line.strip_prefix("Cap")?.split_once(':'))
            .map(|(_, hex)| u64::from_str_radix(hex.trim(), 16).unwrap())
            .collect();
        assert_eq!(sets.len(), 4, "{switch:?}: {result}");
        assert!(
            sets.iter().all(|set| set & !KEPT == 0),
            "{switch:?}: {result}"
        );
        assert!(
            stdout.contains("open_tree -1 13"),
            "{switch:?}: open_tree was not refused: {result}"
        );
    }
}

/// x32 system calls (the number ORed with `__X32_SYSCALL_BIT`) fail with `EACCES` like the
/// calls the filter names, whether or not the kernel has x32: without the check a kernel with
/// x32 would run `socket(AF_UNIX)` or `open_tree` past every rule (here, where x32 is off,
/// they would fail with `ENOSYS`, 38, instead). Generated over calls the filter refuses and
/// calls it allows, in every network mode.
#[test]
fn x32_system_calls_are_refused() {
    if !available() || !require_program("python3") {
        return;
    }
    // socket, connect, open_tree, setns, getpid: each as x32.
    let script = "python3 -c 'import ctypes; \
                  l = ctypes.CDLL(None, use_errno=True); \
                  [print(n, l.syscall(0x40000000 | n, 1, 1, 0), ctypes.get_errno()) \
                  for n in (41, 42, 428, 308, 39)]'";
    for network in [&[][..], &["--network"][..]] {
        let dirs = Dirs::new();
        let output = dirs
            .agent()
            .args(["exec", "--json"])
            .args(network)
            .args(["--", script])
            .output()
            .unwrap();
        let result = json(&output);
        let stdout = result["stdout"].as_str().unwrap_or_default();
        for n in [41, 42, 428, 308, 39] {
            assert!(
                stdout.contains(&format!("{n} -1 13\n")),
                "{network:?}: x32 call {n} was not refused: {result}"
            );
        }
    }
}

/// Where no mount namespace can be made, `.git/hooks` cannot be kept read-only: the agent
/// says so once on stderr, in `config show` and in the `start` event, instead of claiming a
/// protection it does not have.
#[test]
fn paths_it_cannot_protect_are_reported() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.work().join(".git/hooks")).unwrap();
    let no_mounts = ("AGENT_TEST_SANDBOX_NO_MOUNTS", "1");
    dirs.agent()
        .env(no_mounts.0, no_mounts.1)
        .args(["exec", "true"])
        .assert()
        .success()
        .stderr(
            predicate::str::contains("the sandbox is active, but")
                .and(predicate::str::contains(".git/hooks stay writable")),
        );
    dirs.agent()
        .env(no_mounts.0, no_mounts.1)
        .args(["config", "show"])
        .assert()
        .success()
        .stdout(predicate::str::contains("stay writable"));
    let server = FakeModel::openai_turns([turn_text("done")]);
    let output = dirs
        .agent()
        .env(no_mounts.0, no_mounts.1)
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--json", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .arg("hi")
        .output()
        .unwrap();
    let start = super::harness::events(&output.stdout)
        .into_iter()
        .find(|e| e["type"] == "start")
        .unwrap();
    let limitation = start["sandbox"]["limitation"].as_str().unwrap_or_default();
    assert!(limitation.contains(".git/hooks"), "{start}");
    // Where it can, nothing is said and the hooks stay read-only.
    dirs.agent()
        .args(["exec", "touch .git/hooks/x"])
        .assert()
        .stderr(predicate::str::contains("stay writable").not());
    assert!(!dirs.work().join(".git/hooks/x").exists());
}

/// A workspace that is a git repository with one commit.
fn repository(dirs: &Dirs) -> PathBuf {
    let work = dirs.work();
    assert!(git(&work, &["init", "-q"]).status.success());
    std::fs::write(work.join("f"), "x\n").unwrap();
    assert!(git(&work, &["add", "f"]).status.success());
    assert!(git(&work, &["commit", "-qm", "one"]).status.success());
    work
}

/// A command that makes git (run later by a person) touch `marker` if planted config is read.
fn fsmonitor(marker: &Path) -> String {
    format!(
        "[core]\n\tfsmonitor = \"touch {}; false\"\n",
        marker.display()
    )
}

/// The control for a planted git trap: `command` run by plain `sh` (no agent, no sandbox) in
/// a fresh repository, with a repository of its own at `inner` when that is not `.`; then the
/// person's `git status` in `inner` runs the trap and `marker` appears. It proves the test
/// that asserts the trap did not fire can fail. `marker` is removed again.
fn assert_trap_fires(command: &str, inner: &str, marker: &Path) {
    let control = Dirs::new();
    let work = repository(&control);
    let dir = work.join(inner);
    if inner != "." {
        std::fs::create_dir_all(&dir).unwrap();
        assert!(git(&dir, &["init", "-q"]).status.success());
    }
    let planted = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(&work)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(planted.status.success(), "the control: {planted:?}");
    assert_status_runs(&dir);
    assert!(marker.exists(), "the control: the trap did not fire");
    std::fs::remove_file(marker).unwrap();
}

/// The person's `git status` in `dir`, which must succeed: a git that stops early reads no
/// trap, and the test asserting the trap did not fire would pass for nothing.
fn assert_status_runs(dir: &Path) {
    let status = git(dir, &["status"]);
    assert!(status.status.success(), "git status failed: {status:?}");
}

fn undone(result: &serde_json::Value) -> String {
    result["sandbox_undone"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item.as_str().unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The commondir attack: `.git/commondir` pointing at a directory the command made, with its
/// own `config` (`core.fsmonitor`) and hooks. Afterwards the person's `git status` must not run
/// it, and the result says what was undone.
#[test]
fn a_planted_commondir_is_undone_and_reported() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    let marker = dirs.outside.join("fsmonitor-ran");
    std::fs::write(dirs.tmp.join("evil-config"), fsmonitor(&marker)).unwrap();
    let command = format!(
        "cp -r .git evil && cp {} evil/config && echo \"$PWD/evil\" > .git/commondir; true",
        quoted(&dirs.tmp.join("evil-config"))
    );
    assert_trap_fires(&command, ".", &marker);
    let (result, _) = dirs.exec(&[&command]);
    assert!(!work.join(".git/commondir").exists(), "{result}");
    assert!(undone(&result).contains(".git/commondir"), "{result}");
    assert_status_runs(&work);
    assert!(!marker.exists(), "git ran the planted fsmonitor: {result}");
}

/// A nested repository with its own `core.fsmonitor`, added to the parent's index as a
/// gitlink: the parent's `git status` would run it. The nested `.git` is moved out of git's
/// sight and the gitlink taken out of the index.
#[test]
fn a_nested_repository_added_as_a_gitlink_is_undone() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    let marker = dirs.outside.join("fsmonitor-ran");
    let command = format!(
        "git init -q sub && git -C sub -c user.name=a -c user.email=a@b commit -q --allow-empty -m s \
         && git config -f sub/.git/config core.fsmonitor 'touch {}; false' && git add sub \
         && git ls-files -s sub",
        marker.display()
    );
    assert_trap_fires(&command, ".", &marker);
    let (result, status) = dirs.exec(&[&command]);
    assert_eq!(status, Some(0), "{result}");
    assert!(
        result["stdout"].as_str().unwrap().starts_with("160000"),
        "the attack did not make a gitlink: {result}"
    );
    assert!(!work.join("sub/.git").exists(), "{result}");
    assert!(work.join("sub/.git.agent-blocked").is_dir(), "{result}");
    let report = undone(&result);
    assert!(
        report.contains("sub/.git") && report.contains("gitlink"),
        "{report}"
    );
    let listed = git(&work, &["ls-files", "-s"]);
    assert!(
        !String::from_utf8_lossy(&listed.stdout).contains("160000"),
        "the gitlink stayed in the index"
    );
    assert_status_runs(&work);
    assert!(!marker.exists(), "git ran the nested fsmonitor: {result}");
}

/// Every file and directory git reads configuration, hooks, attributes or objects from, and a
/// `.git` file anywhere below the workspace: each planted by a sandboxed command; none is left.
#[test]
fn every_git_surface_stays_as_it_was() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    // An included file inside the workspace, and one that does not exist yet.
    assert!(
        git(&work, &["config", "include.path", "../shared.gitconfig"])
            .status
            .success()
    );
    assert!(
        git(
            &work,
            &["config", "--add", "include.path", "../later.gitconfig"]
        )
        .status
        .success()
    );
    std::fs::write(work.join("shared.gitconfig"), "[user]\n").unwrap();
    let config = std::fs::read(work.join(".git/config")).unwrap();
    let planted = [
        ".git/config",
        ".git/config.worktree",
        ".git/commondir",
        ".git/info/attributes",
        ".git/info/exclude",
        ".git/objects/info/alternates",
        ".git/hooks/pre-commit",
        ".git/worktrees/w/config",
        ".git/modules/m/config",
        ".git/branches/b",
        ".git/remotes/r",
        "shared.gitconfig",
        "later.gitconfig",
        "deep/er/.git",
        ".git.d/.git",
        ".agent/settings.toml",
    ];
    let command = planted
        .iter()
        .map(|path| {
            let parent = Path::new(path).parent().unwrap().display().to_string();
            format!("mkdir -p '{parent}'; echo '[core] fsmonitor = x' >> '{path}'")
        })
        .collect::<Vec<_>>()
        .join("; ");
    let (result, _) = dirs.exec(&[&format!("{command}; true")]);
    assert_eq!(
        std::fs::read(work.join(".git/config")).unwrap(),
        config,
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("shared.gitconfig")).unwrap(),
        "[user]\n",
        "{result}"
    );
    let exclude = "# git ls-files --others --exclude-from=.git/info/exclude\n";
    let kept = std::fs::read_to_string(work.join(".git/info/exclude")).unwrap_or_default();
    assert!(
        kept.starts_with(exclude) && !kept.contains("fsmonitor"),
        "{kept}"
    );
    for path in &planted[1..] {
        if ["shared.gitconfig", ".git/info/exclude"].contains(path) {
            continue;
        }
        assert!(!work.join(path).exists(), "`{path}` was planted: {result}");
    }
    assert!(!work.join(".agent").exists(), "{result}");
    // The surface directories made to protect them are gone again.
    for dir in ["worktrees", "modules", "remotes"] {
        assert!(!work.join(".git").join(dir).exists(), "{dir} left behind");
    }
    assert!(work.join(".git/hooks").is_dir() && work.join(".git/info").is_dir());
}

/// Where no mount namespace can be made, the check after the command is all there is: the
/// changes are still undone and reported.
#[test]
fn without_mounts_the_surfaces_are_restored_after_the_command() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    let config = std::fs::read(work.join(".git/config")).unwrap();
    // Files that were there before, changed in place: a hook of the person's, `info/exclude`.
    std::fs::write(work.join(".git/hooks/pre-push"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::create_dir_all(work.join(".git/info")).unwrap();
    std::fs::write(work.join(".git/info/exclude"), "target\n").unwrap();
    let output = dirs
        .agent()
        .env("AGENT_TEST_SANDBOX_NO_MOUNTS", "1")
        .args(["exec", "--json", "-q", "--"])
        .arg(
            "echo '[core] fsmonitor = x' >> .git/config; echo x > .git/commondir; \
             echo '#!/bin/sh' > .git/hooks/pre-commit; mkdir -p .agent; echo 'x' > .agent/settings.toml; \
             echo 'touch pwned' >> .git/hooks/pre-push; echo '!x' >> .git/info/exclude",
        )
        .output()
        .unwrap();
    let result = json(&output);
    assert_eq!(
        std::fs::read_to_string(work.join(".git/hooks/pre-push")).unwrap(),
        "#!/bin/sh\nexit 0\n",
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join(".git/info/exclude")).unwrap(),
        "target\n",
        "{result}"
    );
    assert_eq!(
        std::fs::read(work.join(".git/config")).unwrap(),
        config,
        "{result}"
    );
    assert!(!work.join(".git/commondir").exists(), "{result}");
    assert!(!work.join(".git/hooks/pre-commit").exists(), "{result}");
    assert!(!work.join(".agent").exists(), "{result}");
    let report = undone(&result);
    for what in [
        ".git/config",
        ".git/commondir",
        "pre-commit",
        ".agent",
        "pre-push",
        "info/exclude",
    ] {
        assert!(report.contains(what), "{what}: {report}");
    }
}

/// With mounts and, where none can be made, with the check after the command alone.
const MOUNT_CASES: [(Option<&str>, &str); 2] = [
    (None, "with mounts"),
    (Some("AGENT_TEST_SANDBOX_NO_MOUNTS"), "without mounts"),
];

/// `agent exec --json -q -- COMMAND` with a test-only switch: the result.
fn exec_with(dirs: &Dirs, switch: Option<&str>, command: &str) -> serde_json::Value {
    let output = dirs
        .agent_with(switch)
        .args(["exec", "--json", "-q", "--", command])
        .output()
        .unwrap();
    json(&output)
}

/// The agent puts surfaces back after a command, unsandboxed: a command that moved a
/// directory on the way to them (a nested repository's parent) and put a link to another
/// repository of the person's in its place must not get the agent to write or remove there.
#[test]
fn undoing_never_follows_a_link_the_command_put_on_the_way() {
    if !available() {
        return;
    }
    for (switch, case) in MOUNT_CASES {
        let dirs = Dirs::new();
        let work = repository(&dirs);
        let nested = work.join("vendor/lib");
        std::fs::create_dir_all(&nested).unwrap();
        assert!(git(&nested, &["init", "-q"]).status.success());
        // The person's other repository, outside the workspace.
        let other = dirs.outside.join("lib");
        std::fs::create_dir_all(&other).unwrap();
        assert!(git(&other, &["init", "-q"]).status.success());
        std::fs::write(other.join(".git/config.worktree"), "mine\n").unwrap();
        std::fs::write(other.join(".git/hooks/pre-commit"), "keep\n").unwrap();
        let before = |name: &str| std::fs::read(other.join(".git").join(name)).unwrap();
        let kept = [
            ("config", before("config")),
            ("config.worktree", before("config.worktree")),
            ("hooks/pre-commit", before("hooks/pre-commit")),
        ];
        let command = format!(
            "mv vendor/lib vendor/lib2 && ln -s {} vendor/lib && ls vendor/lib/.git",
            quoted(&other)
        );
        let result = exec_with(&dirs, switch, &command);
        assert_eq!(result["exit_code"], 0, "{case}: the move failed: {result}");
        for (name, bytes) in kept {
            assert_eq!(
                std::fs::read(other.join(".git").join(name)).ok(),
                Some(bytes),
                "{case}: the agent changed `{name}` of a repository outside: {result}"
            );
        }
        assert!(work.join("vendor/lib2/.git/config").is_file(), "{case}");
    }
}

/// `.git/objects` replaced by a directory of the command's with `info/alternates` (git would
/// take objects from wherever it points): pinned with mounts, moved out of git's sight without.
#[test]
fn a_replaced_objects_directory_does_not_survive() {
    if !available() {
        return;
    }
    for (switch, case) in MOUNT_CASES {
        let dirs = Dirs::new();
        let work = repository(&dirs);
        let result = exec_with(
            &dirs,
            switch,
            "mkdir evil; mv .git/objects .git/objects.old && mkdir -p .git/objects/info \
             && cp -r .git/objects.old/. .git/objects/ && echo \"$PWD/evil\" > .git/objects/info/alternates; true",
        );
        let alternates = work.join(".git/objects/info/alternates");
        assert!(
            !alternates.exists(),
            "{case}: {}: {result}",
            std::fs::read_to_string(&alternates).unwrap_or_default()
        );
        if switch.is_some() {
            let report = undone(&result);
            assert!(
                report.contains(".git/objects") && report.contains("agent-blocked"),
                "{case}: {report}"
            );
        }
    }
}

/// A rebase in progress: git writes its state itself (so it cannot be read-only), and runs
/// what that state names when the person continues — an `exec` line of the to-do list, a
/// merge strategy that is a path. What the command added there is taken out again.
#[test]
fn a_rebase_in_progress_runs_nothing_the_command_added() {
    if !available() {
        return;
    }
    for (switch, case) in MOUNT_CASES {
        let dirs = Dirs::new();
        let work = repository(&dirs);
        for name in ["two", "three"] {
            std::fs::write(work.join(name), "x\n").unwrap();
            assert!(git(&work, &["add", name]).status.success());
            assert!(git(&work, &["commit", "-qm", name]).status.success());
        }
        let paused = git(
            &work,
            &[
                "-c",
                "sequence.editor=sed -i 1ibreak",
                "rebase",
                "-i",
                "HEAD~2",
            ],
        );
        assert!(paused.status.success(), "{case}: {paused:?}");
        let todo = work.join(".git/rebase-merge/git-rebase-todo");
        let kept = std::fs::read_to_string(&todo).unwrap();
        assert!(kept.contains("pick"), "{case}: {kept}");
        let (ran, merged) = (dirs.outside.join("ran"), dirs.outside.join("merged"));
        let command = format!(
            "echo 'exec touch {}' >> .git/rebase-merge/git-rebase-todo && \
             echo x/../evil > .git/rebase-merge/strategy && mkdir git-merge-x && \
             printf '#!/bin/sh\\ntouch {}\\n' > evil && chmod +x evil",
            ran.display(),
            merged.display()
        );
        let result = exec_with(&dirs, switch, &command);
        assert_eq!(result["exit_code"], 0, "{case}: {result}");
        let report = undone(&result);
        assert!(
            report.contains("git-rebase-todo")
                && report.contains(&format!("touch {}", ran.display())),
            "{case}: {report}"
        );
        assert!(report.contains("rebase-merge/strategy"), "{case}: {report}");
        assert_eq!(std::fs::read_to_string(&todo).unwrap(), kept, "{case}");
        let continued = git(&work, &["-c", "core.editor=true", "rebase", "--continue"]);
        assert!(
            !ran.exists(),
            "{case}: the added exec line ran: {continued:?}"
        );
        assert!(
            !merged.exists(),
            "{case}: the added strategy ran: {continued:?}"
        );
        assert!(continued.status.success(), "{case}: {continued:?}");
    }
}

/// Git's own writes keep working: an approved `git commit` inside the sandbox commits, and
/// nothing is reported as undone.
#[test]
fn an_approved_git_commit_still_works() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    let (result, status) = dirs.exec(&[
        "echo y > g && git add g && git -c user.name=a -c user.email=a@b commit -qm two && git log --oneline",
    ]);
    assert_eq!(status, Some(0), "{result}");
    assert_eq!(result.get("sandbox_undone"), None, "{result}");
    let log = git(&work, &["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "two\none\n");
}

/// In a linked worktree git's directory is outside the workspace and stays read-only: a git
/// write fails, and the note says why without suggesting a `writable` path for it (that
/// would hand commands the main repository's configuration and hooks).
#[test]
fn a_linked_worktree_says_why_git_cannot_write() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let main = dirs.outside.join("main");
    std::fs::create_dir(&main).unwrap();
    assert!(git(&main, &["init", "-q"]).status.success());
    assert!(
        git(&main, &["commit", "-q", "--allow-empty", "-m", "one"])
            .status
            .success()
    );
    let work = dirs.work();
    let added = git(&main, &["worktree", "add", "-q", &work.to_string_lossy()]);
    assert!(added.status.success(), "{added:?}");
    let (result, status) = dirs.exec(&["echo y > g && git add g"]);
    assert_ne!(status, Some(0), "{result}");
    assert_eq!(result["sandbox_denied"], true, "{result}");
    let note = result["sandbox_note"].as_str().unwrap_or_default();
    assert!(note.contains("linked git worktree"), "{note}");
    let git_dir = main.canonicalize().unwrap().join(".git/worktrees");
    assert!(note.contains(&*git_dir.to_string_lossy()), "{note}");
    assert!(!note.contains("`writable`"), "{note}");
    // The same refusal in the main checkout's own workspace is the ordinary note.
    let (result, _) = dirs.exec(&[&format!("touch {}", quoted(&main.join("x")))]);
    let note = result["sandbox_note"].as_str().unwrap_or_default();
    assert!(note.contains("`writable`"), "{note}");
}

/// A descriptor the agent inherited (here fd 5, opened by the shell that started it) does not
/// reach the command; without the sandbox it does, which proves the test can fail.
#[test]
fn inherited_descriptors_do_not_reach_commands() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let leak = dirs.outside.join("leak");
    let agent = assert_cmd::cargo::cargo_bin("agent");
    let run = |sandbox: &str| {
        let script = format!(
            "exec 5>>{}; exec {} exec --sandbox {sandbox} 'echo leaked >&5'",
            quoted(&leak),
            quoted(&agent)
        );
        let cmd = dirs.agent();
        std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .env_clear()
            .envs(
                cmd.get_envs()
                    .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
            )
            .current_dir(dirs.work())
            .output()
            .unwrap()
    };
    let output = run("workspace-write");
    assert_eq!(
        std::fs::read_to_string(&leak).unwrap_or_default(),
        "",
        "{output:?}"
    );
    run("off");
    assert_eq!(std::fs::read_to_string(&leak).unwrap(), "leaked\n");
}

/// A command allowed by the built-in read-only list, with nobody's yes, runs read-only: here
/// `ls` is a stand-in on PATH (as a misjudged "read-only" command would be) that tries to read
/// the home directory, a secret file in the workspace and an ordinary one, to write, and to run
/// `git status`. Only the workspace reads and git work. The same stand-in allowed by a rule
/// keeps today's workspace-write sandbox.
#[cfg(unix)]
#[test]
fn what_the_read_only_list_allows_runs_read_only() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    // Another directory of the person's (not below `/tmp`, which is the command's own).
    let home = dirs.outer.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("secret"), "home-secret\n").unwrap();
    std::fs::write(work.join(".env"), "API_KEY=workspace-secret\n").unwrap();
    std::fs::write(work.join("notes.txt"), "workspace-notes\n").unwrap();
    let script = format!(
        "#!/bin/sh\ncat {home}/secret; cat .env; cat notes.txt; touch written && echo wrote; \
         git status --short >/dev/null 2>&1 && echo git-ok; \
         echo outside > {outside}/written && echo wrote-outside\n",
        home = quoted(&home),
        outside = quoted(&dirs.outside),
    );
    // Inside the workspace: an inspection command cannot even see programs elsewhere.
    let path = super::harness::first_on_path(&work.join("bin"), "ls", &script);
    let run = |switch: Option<&str>, flags: &[&str]| {
        let server = FakeModel::openai_turns([turn_tool_call("ls", "list"), turn_text("done")]);
        dirs.agent_with(switch)
            .env("PATH", &path)
            .env("OPENAI_API_KEY", "sk-test")
            .args(["run", "--provider", "openai", "--base-url"])
            .arg(server.openai_url())
            .args(flags)
            .arg("look")
            .assert()
            .success();
        let result: serde_json::Value =
            serde_json::from_str(&server.request(1).tool_results()[0].1).unwrap();
        result["stdout"].as_str().unwrap_or_default().to_owned()
    };
    // Without a PID namespace the command starts through the helper's own executable, which
    // must stay runnable where reads are restricted.
    for switch in [None, Some("AGENT_TEST_SANDBOX_NO_PID_NAMESPACE")] {
        let stdout = run(switch, &[]);
        assert!(stdout.contains("workspace-notes"), "{switch:?}: {stdout}");
        assert!(stdout.contains("git-ok"), "{switch:?}: {stdout}");
        assert!(
            !stdout.contains("home-secret"),
            "{switch:?}: read the home directory: {stdout}"
        );
        assert!(
            !stdout.contains("workspace-secret"),
            "{switch:?}: read a secret file: {stdout}"
        );
        assert!(!stdout.contains("wrote"), "{switch:?}: wrote: {stdout}");
        assert!(!work.join("written").exists());
        assert!(!dirs.outside.join("written").exists());
    }

    // Allowed by a rule instead: the workspace-write sandbox, as before.
    let stdout = run(None, &["--allow", "ls"]);
    assert!(
        stdout.contains("home-secret") && stdout.contains("wrote"),
        "{stdout}"
    );
    assert!(work.join("written").exists());
}

/// The workspace's tree is kept in the state directory between processes; a repository made
/// between two commands (by the person, outside the agent) is still found and protected by
/// the next one, and a damaged kept tree costs a walk, never a miss.
#[test]
fn the_kept_tree_sees_what_changed_between_processes() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    std::fs::create_dir_all(work.join("deep/er")).unwrap();
    let (result, status) = dirs.exec(&["true"]);
    assert_eq!(status, Some(0), "{result}");
    let cache = dirs.sandbox.state_dir().join("agent/sandbox");
    let kept: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("tree-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "{cache:?}");
    let marker = dirs.outside.join("fsmonitor-ran");
    for (round, damage) in [(0, false), (1, true)] {
        let nested = work.join(format!("deep/er/sub{round}"));
        std::fs::create_dir_all(&nested).unwrap();
        assert!(git(&nested, &["init", "-q"]).status.success());
        if damage {
            let bytes = std::fs::read(&kept[0]).unwrap();
            std::fs::write(&kept[0], &bytes[..bytes.len() - 3]).unwrap();
        }
        let command = format!(
            "git config -f deep/er/sub{round}/.git/config core.fsmonitor 'touch {}; false'; true",
            marker.display()
        );
        assert_trap_fires(&command, &format!("deep/er/sub{round}"), &marker);
        let (result, _) = dirs.exec(&[&command]);
        let config = std::fs::read_to_string(nested.join(".git/config")).unwrap();
        assert!(!config.contains("fsmonitor"), "round {round}: {result}");
        assert_status_runs(&nested);
        assert!(
            !marker.exists(),
            "round {round}: git ran the planted fsmonitor"
        );
    }
}

/// Where commands may write the state directory (a workspace that holds it), the sandbox
/// keeps nothing there to learn from.
#[test]
fn no_tree_is_kept_where_commands_could_write_it() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let state = dirs.work().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let output = dirs
        .agent()
        .env("XDG_STATE_HOME", &state)
        .args(["exec", "--json", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", json(&output));
    assert!(!state.join("agent/sandbox").exists());
}

/// Commands run through the small `agent-sandbox` next to `agent`; it runs for no other
/// version's arguments, and without it `agent` is its own helper.
#[test]
fn the_small_helper_is_used_and_agent_works_without_it() {
    if !available() {
        return;
    }
    let helper = assert_cmd::cargo::cargo_bin("agent-sandbox");
    let output = std::process::Command::new(&helper)
        .args(["--agent=0.0.0-other", "--", "sh", "-c", "echo ran"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(126));
    assert!(output.stdout.is_empty(), "the command ran");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("sandbox helper of agent") && stderr.contains("0.0.0-other"),
        "{stderr}"
    );
    let dirs = Dirs::new();
    let (result, status) = dirs.exec(&["echo small"]);
    assert_eq!(
        (status, result["stdout"].as_str()),
        (Some(0), Some("small\n"))
    );
    // `agent` alone in a directory: its own helper, as restricted as before.
    let alone = dirs.sandbox.root.path().join("bin");
    std::fs::create_dir_all(&alone).unwrap();
    let agent = alone.join("agent");
    let original = assert_cmd::cargo::cargo_bin("agent");
    if std::fs::hard_link(&original, &agent).is_err() {
        std::fs::copy(&original, &agent).unwrap();
    }
    let outside = dirs.outside.join("written");
    let command = format!("echo alone; echo x > {}", quoted(&outside));
    let output = std::process::Command::new(&agent)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dirs.sandbox.root.path().join("home"))
        .env("AGENT_CONFIG_DIR", dirs.sandbox.config_dir())
        .env("XDG_STATE_HOME", dirs.sandbox.state_dir())
        .env("TMPDIR", &dirs.tmp)
        .current_dir(dirs.work())
        .args(["exec", "--json", &command])
        .output()
        .unwrap();
    let result = json(&output);
    assert_eq!(result["stdout"].as_str(), Some("alone\n"), "{result}");
    assert!(
        !outside.exists(),
        "a write outside the workspace got through: {result}"
    );
}

/// Commands that leave something running after they end, out of their process group or
/// ignoring the signals that end it: each tries to write `late-N` a second later, after the
/// agent checked the workspace (a `.git/commondir` or `.agent/settings.toml` written then
/// would stay).
fn leavers() -> Vec<String> {
    let late = |n: usize| format!("sleep 1; echo late > late-{n}");
    [
        "setsid sh -c '{}' &",
        "(sh -c '{}' &)",
        "nohup sh -c '{}' &",
        "sh -c 'trap \"\" TERM HUP INT QUIT; {}' &",
        "setsid -f sh -c '{}'",
        "sh -c 'set -m; sh -c \"{}\" & true' &",
        "(setsid sh -c '(sh -c \"{}\" &)' &)",
    ]
    .iter()
    .enumerate()
    .map(|(n, shape)| {
        // Quiet, and not holding the output pipes: the agent would wait for them otherwise.
        format!(
            "{} </dev/null >/dev/null 2>&1",
            shape.replace("{}", &late(n))
        )
    })
    .collect()
}

fn left_behind(work: &Path, count: usize) -> Vec<String> {
    // Past the second the leavers wait, with time to spare on a loaded machine.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    (0..count)
        .map(|n| format!("late-{n}"))
        .filter(|name| work.join(name).exists())
        .collect()
}

/// Nothing a command starts outlives it: with a PID namespace (the usual case), without one
/// (the helper kills what is left), and without mounts. A repository's surfaces are tried too.
#[test]
fn nothing_a_command_starts_outlives_it() {
    if !available() {
        return;
    }
    for (switch, why) in [
        (None, "with a PID namespace"),
        (
            Some("AGENT_TEST_SANDBOX_NO_PID_NAMESPACE"),
            "without a PID namespace",
        ),
        (Some("AGENT_TEST_SANDBOX_NO_MOUNTS"), "without mounts"),
    ] {
        let dirs = Dirs::new();
        let work = repository(&dirs);
        let leavers = leavers();
        let mut command = leavers.join("\n");
        command.push_str(
            "\nsetsid sh -c 'sleep 1; echo \"$PWD/evil\" > .git/commondir; mkdir -p .agent; \
             echo x > .agent/settings.toml' </dev/null >/dev/null 2>&1 &\necho started",
        );
        let output = dirs
            .agent_with(switch)
            .args(["exec", "--json", "-q", "--", &command])
            .output()
            .unwrap();
        let result = json(&output);
        assert_eq!(output.status.code(), Some(0), "{why}: {result}");
        assert_eq!(result["stdout"], "started\n", "{why}: {result}");
        let left = left_behind(&work, leavers.len());
        assert!(left.is_empty(), "{why}: still running afterwards: {left:?}");
        assert!(!work.join(".git/commondir").exists(), "{why}");
        assert!(!work.join(".agent").exists(), "{why}");
        // The command's own group killed from inside: the helper, outside it, still waits
        // for the command (first in its namespace, SIGKILL from inside does not end it), so
        // the write comes before the check.
        let output = dirs
            .agent_with(switch)
            .args(["exec", "--json", "-q", "--"])
            .arg("(sleep 0.3; kill -KILL 0) & sleep 1; echo \"$PWD/evil\" > .git/commondir")
            .output()
            .unwrap();
        let result = json(&output);
        std::thread::sleep(std::time::Duration::from_millis(500));
        assert!(!work.join(".git/commondir").exists(), "{why}: {result}");
        if switch.is_none() {
            assert!(
                undone(&result).contains(".git/commondir"),
                "{why}: {result}"
            );
        }
    }
}

/// A command ended by its timeout takes what it started with it, and is reported as before:
/// timed out, ended by SIGTERM (the shell has no handler for it).
#[test]
fn a_timed_out_command_takes_what_it_started_with_it() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = dirs.work();
    let leavers = leavers();
    let command = format!("{}\nsleep 30", leavers.join("\n"));
    let (result, code) = dirs.exec(&["--timeout", "1", "--", &command]);
    assert_eq!(code, Some(124), "{result}");
    assert_eq!(result["timed_out"], true, "{result}");
    // Not SIGKILL after the grace period: the shell, first in its PID namespace, would
    // ignore SIGTERM, so the helper ends it for the signal.
    assert_eq!(result["signal"], 15, "{result}");
    let left = left_behind(&work, leavers.len());
    assert!(left.is_empty(), "still running afterwards: {left:?}");
}

/// The helper ends as its command did: the exit code, or the signal that ended it; signals
/// inside the command reach what they reached before.
#[test]
fn the_command_ends_as_it_would_without_the_sandbox() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let null = serde_json::Value::Null;
    for (command, code, signal, stdout) in [
        ("exit 7", Some(7), null.clone(), ""),
        ("echo out", Some(0), null.clone(), "out\n"),
        (
            "sh -c 'kill -TERM $$'; echo $?",
            Some(0),
            null.clone(),
            "143\n",
        ),
        (
            "sh -c 'kill -SEGV $$'; echo $?",
            Some(0),
            null.clone(),
            "139\n",
        ),
        (
            "sh -c 'kill -TERM 0; sleep 5'; echo $?",
            Some(0),
            null.clone(),
            "143\n",
        ),
        (
            "sh -c 'kill -HUP 0; sleep 5'; echo $?",
            Some(0),
            null.clone(),
            "129\n",
        ),
    ] {
        let (result, _) = dirs.exec(&["--", command]);
        assert_eq!(
            result["exit_code"],
            serde_json::json!(code),
            "{command}: {result}"
        );
        assert_eq!(result["signal"], signal, "{command}: {result}");
        assert_eq!(result["stdout"], stdout, "{command}: {result}");
    }
}

/// What the sandbox undid is shown to the person — escaped, whatever the verbosity — and told
/// to the model in the tool's result: `agent exec` says it on stderr, `agent run -q` too.
#[test]
fn what_the_sandbox_undid_is_shown_to_the_person_and_the_model() {
    if !available() {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    let output = dirs
        .agent()
        .args([
            "exec",
            "mkdir -p \"$(printf 'a\\033]0;x\\007b')/.git\"; echo x > .git/commondir; true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("agent: sandbox: removed") && stderr.contains(".git/commondir"),
        "{stderr}"
    );
    assert!(stderr.contains("a\\u{1b}]0;x\\u{7}b/.git"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr}"
    );
    assert!(!work.join(".git/commondir").exists());

    std::fs::write(work.join("planted"), "x\n").unwrap();
    let server = FakeModel::openai_turns([
        turn_tool_call("cp planted .git/commondir", "plant"),
        turn_text("done"),
    ]);
    let output = dirs
        .agent()
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "-q", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(["--allow", "cp", "plant it"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("⚠ sandbox: removed") && stderr.contains(".git/commondir"),
        "{stderr}"
    );
    assert!(!work.join(".git/commondir").exists());
    let result: serde_json::Value =
        serde_json::from_str(&server.request(1).tool_results()[0].1).unwrap();
    assert!(undone(&result).contains(".git/commondir"), "{result}");
}

/// Where a mount namespace is made, the command's `/dev/shm` is its own: empty, writable, and
/// gone when it ends — it neither sees the machine's shared memory nor leaves any there.
#[test]
fn shared_memory_is_the_commands_own_and_gone_after_it() {
    if !available() || !require("/dev/shm", Path::new("/dev/shm").is_dir()) {
        return;
    }
    let dirs = Dirs::new();
    repository(&dirs);
    let probe = dirs.agent().args(["exec", "true"]).output().unwrap();
    // Without a mount namespace `/dev/shm` stays the machine's (said in the README).
    let namespace = !String::from_utf8_lossy(&probe.stderr).contains("stay writable");
    if !require("a mount namespace", namespace) {
        return;
    }
    let name = format!("agent-test-{}", std::process::id());
    let host = Path::new("/dev/shm").join(format!("{name}-host"));
    let left = Path::new("/dev/shm").join(format!("{name}-left"));
    std::fs::write(&host, "x").unwrap();
    let command = format!(
        "echo y > {}; cat {}; test -e {}",
        left.display(),
        left.display(),
        host.display()
    );
    let (result, status) = dirs.exec(&[&command]);
    let leaked = left.exists();
    let _ = std::fs::remove_file(&left);
    // Without a mount namespace it stays the machine's (said in the README).
    let output = dirs
        .agent()
        .env("AGENT_TEST_SANDBOX_NO_MOUNTS", "1")
        .args(["exec", "--json", &command])
        .output()
        .unwrap();
    let shared = (json(&output), output.status.code(), left.exists());
    let _ = std::fs::remove_file(&host);
    let _ = std::fs::remove_file(&left);
    assert_eq!(result["stdout"], "y\n", "{result}");
    assert_eq!(
        status,
        Some(1),
        "the command saw the machine's /dev/shm: {result}"
    );
    assert!(
        !leaked,
        "a file the command wrote to /dev/shm outlived it: {result}"
    );
    assert_eq!(shared.1, Some(0), "{}", shared.0);
    assert!(shared.2, "{}", shared.0);
}

/// In a run the workspace is watched across the commands (the look after each one reads only
/// what changed): a `.git` made deep below by a later command, by nested `mkdir -p` or by a
/// move of a tree made elsewhere (its private `/tmp`) or a `rename` inside, in a directory an
/// earlier command made, is still found after the command and moved away.
#[test]
fn in_a_run_a_new_git_anywhere_below_is_still_caught() {
    if !available() || !require_program("python3") {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    std::fs::create_dir_all(work.join("node_modules/p/q")).unwrap();
    let commands = [
        "mkdir -p made/a",
        "mkdir -p made/a/b/c/.git && mkdir -p node_modules/p/q/r/.git",
        "python3 -c 'import os, shutil; os.makedirs(\"/tmp/t/u/.git\"); \
         shutil.move(\"/tmp/t\", \"made/a/moved\")'",
        "mkdir made/a/moved/v && mkdir made/a/moved/v/.git",
        "python3 -c 'import os; os.makedirs(\"scratch/t/.git\"); \
         os.rename(\"scratch\", \"made/a/moved/v/w\")'",
    ];
    let mut turns: Vec<_> = commands
        .iter()
        .map(|command| turn_tool_call(command, "make"))
        .collect();
    turns.push(turn_text("done"));
    let server = FakeModel::openai_turns(turns);
    dirs.agent()
        .env("OPENAI_API_KEY", "sk-test")
        .args([
            "run",
            "--provider",
            "openai",
            "--mode",
            "allow-all",
            "--base-url",
        ])
        .arg(server.openai_url())
        .arg("make things")
        .assert()
        .success();
    let results = server.request(commands.len()).tool_results();
    assert_eq!(results.len(), commands.len(), "{results:?}");
    let undone: Vec<String> = results
        .iter()
        .map(|(_, result)| undone(&serde_json::from_str(result).unwrap()))
        .collect();
    assert_eq!(undone[0], "", "{undone:?}");
    for (i, made) in [
        (1, "made/a/b/c/.git"),
        (1, "node_modules/p/q/r/.git"),
        (2, "made/a/moved/u/.git"),
        (3, "made/a/moved/v/.git"),
        (4, "made/a/moved/v/w/t/.git"),
    ] {
        assert!(
            undone[i].contains(&format!("`{made}` (a repository")),
            "{made}: {undone:?} {results:?}"
        );
        assert!(!work.join(made).exists(), "{made} was left");
    }
}

/// As a user whom `chmod 000` stops (root is not stopped, so the agent runs as `nobody`): in
/// a run, a `.git` made in a directory that the command then makes unreadable, and that a
/// later command makes readable again, is still caught. Making a directory readable is no
/// entry change the workspace's watch reports, so a directory it cannot read hands the run
/// over to full looks.
#[cfg(unix)]
#[test]
#[ignore = "needs root: runs the agent as nobody"]
fn a_git_behind_an_unreadable_directory_is_still_caught_as_root() {
    use std::os::unix::fs::PermissionsExt as _;
    if !available() || !require("root", running_as_root()) || !require_program("setpriv") {
        return;
    }
    let dirs = Dirs::new();
    let work = repository(&dirs);
    // Everything the agent touches, in a place `nobody` can reach (`/tmp`, not the target
    // directory, which may lie below a home only root can enter).
    let bin = dirs.sandbox.root.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let agent = bin.join("agent");
    let built = assert_cmd::cargo::cargo_bin("agent");
    if std::fs::hard_link(&built, &agent).is_err() {
        std::fs::copy(&built, &agent).unwrap();
    }
    let marker = dirs.outside.join("PWNED");
    let commands = [
        "mkdir d".to_owned(),
        format!(
            "mkdir -p d/.git/hooks && printf '{}' > d/.git/config && chmod 000 d",
            fsmonitor(&marker).replace('\n', "\\n").replace('\t', "\\t")
        ),
        "chmod 755 d".to_owned(),
        "ls -a d".to_owned(),
    ];
    let mut turns: Vec<_> = commands
        .iter()
        .map(|command| turn_tool_call(command, "make"))
        .collect();
    turns.push(turn_text("done"));
    let server = FakeModel::openai_turns(turns);
    for root in [dirs.sandbox.root.path(), dirs.outer.path()] {
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let chown = std::process::Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(root)
            .status()
            .unwrap();
        assert!(chown.success());
    }
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&agent)
        .args([
            "run",
            "--provider",
            "openai",
            "--mode",
            "allow-all",
            "--base-url",
        ])
        .arg(server.openai_url())
        .arg("make things")
        .env_clear()
        .envs(dirs.sandbox.environment())
        .env("TMPDIR", &dirs.tmp)
        .env("OPENAI_API_KEY", "sk-test")
        .current_dir(&work)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = server.request(commands.len()).tool_results();
    assert_eq!(results.len(), commands.len(), "{results:?}");
    // The control: the second command did make the repository, and hid it.
    assert!(results[1].1.contains("\"exit_code\":0"), "{results:?}");
    assert!(
        !work.join("d/.git").exists(),
        "the planted repository was left in place: {results:?}"
    );
    assert!(!marker.exists());
}
