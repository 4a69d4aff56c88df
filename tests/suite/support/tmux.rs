//! A real terminal for the tests: one tmux server on a private socket running one shell
//! command line, its screen read back, keys sent to it, and the server killed when the test
//! ends (panicking or not).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::sandbox::Sandbox;

/// How long a test waits for something to appear on screen before failing.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// One tmux server with one session running a shell command line.
pub struct Tmux {
    pub socket: PathBuf,
    /// The workspace, whose leftover `sleep`s go with the server.
    work: PathBuf,
    /// How many times each text waited for had appeared when its last wait ended.
    seen: RefCell<HashMap<String, usize>>,
}

impl Tmux {
    /// Starts `script` (run by `sh -c`) in a 120×40 terminal with a clean
    /// environment pointing at the sandbox. `CI` is not set.
    pub fn start(sandbox: &Sandbox, env: &[(&str, &str)], script: &str) -> Self {
        let socket = sandbox.root.path().join("tmux.sock");
        let mut vars: Vec<String> = sandbox
            .environment()
            .into_iter()
            .map(|(name, value)| format!("{name}={}", value.to_string_lossy()))
            .collect();
        vars.push("TERM=xterm-256color".to_owned());
        vars.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        let exports: String = vars
            .iter()
            .map(|v| format!("export {};", shell_quote(v)))
            .collect();
        let line = format!(
            "trap : INT; cd {}; {exports} {script}; code=$?; mode=$(stty -a | tr ' ' '\\n' | grep -x -- '-\\?icanon'); echo \"EXIT=$code TTY=$mode\"; cd /; sleep 600",
            shell_quote(&sandbox.work().display().to_string())
        );
        let status = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "120",
                "-y",
                "40",
                "env",
                "-i",
            ])
            .arg(format!(
                "PATH={}",
                std::env::var("PATH").unwrap_or_default()
            ))
            .args(["sh", "-c", &line])
            .status()
            .expect("tmux must be installed to test the terminal UI");
        assert!(status.success(), "tmux did not start");
        Self {
            socket,
            work: sandbox.work(),
            seen: RefCell::default(),
        }
    }

    pub fn screen(&self) -> String {
        let output = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["capture-pane", "-p", "-J", "-S", "-200"])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The screen with its colours and attributes as SGR sequences (`capture-pane -e`).
    pub fn styled_screen(&self) -> String {
        let output = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["capture-pane", "-p", "-e", "-J", "-S", "-200"])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits for a new occurrence of `needle`: it must appear in the whole scrollback more
    /// often than when the last wait for the same text ended, so text from before (an earlier
    /// prompt, an answer scrolled up) never satisfies a later wait; returns the scrollback and
    /// screen. For a state the screen shows now, see [`Tmux::wait_on_screen`].
    pub fn wait_for(&self, needle: &str) -> String {
        let seen = self.seen(needle);
        let screen = self.poll(
            needle,
            &format!("anew (it had appeared {seen} times)"),
            |tmux| tmux.appeared_anew(needle),
        );
        self.seen
            .borrow_mut()
            .insert(needle.to_owned(), screen.matches(needle).count());
        screen
    }

    /// How often `needle` had appeared when the last wait for it ended.
    fn seen(&self, needle: &str) -> usize {
        self.seen.borrow().get(needle).copied().unwrap_or(0)
    }

    /// The whole scrollback and screen, when `needle` is in it more often than [`Tmux::seen`].
    fn appeared_anew(&self, needle: &str) -> Option<String> {
        let screen = self.tmux_output(&["capture-pane", "-p", "-J", "-S", "-"]);
        (screen.matches(needle).count() > self.seen(needle)).then_some(screen)
    }

    /// Waits until `needle` is on the visible screen, not in the scrollback: for a state the
    /// screen shows now (the composer's footer saying it is ready again), where a copy from
    /// before, scrolled out of sight, must not count.
    pub fn wait_on_screen(&self, needle: &str) -> String {
        self.poll(needle, "on the visible screen", |tmux| {
            let screen = tmux.tmux_output(&["capture-pane", "-p", "-J"]);
            screen.contains(needle).then_some(screen)
        })
    }

    /// Captures with `capture` until it gives a screen (failing after [`PATIENCE`]).
    fn poll(&self, needle: &str, place: &str, capture: impl Fn(&Self) -> Option<String>) -> String {
        let start = Instant::now();
        loop {
            if let Some(screen) = capture(self) {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "`{needle}` never appeared {place}; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Pastes `text` as a terminal does, bracketed (`paste-buffer -p`), through a file in
    /// the sandbox `dir`.
    pub fn paste(&self, dir: &std::path::Path, text: &str) {
        let file = dir.join("paste.txt");
        std::fs::write(&file, text).unwrap();
        let loaded = self.tmux_status(&["load-buffer", &file.display().to_string()]);
        assert!(loaded, "tmux load-buffer");
        assert!(
            self.tmux_status(&["paste-buffer", "-p", "-d"]),
            "tmux paste-buffer"
        );
    }

    fn tmux_status(&self, args: &[&str]) -> bool {
        std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .status()
            .expect("tmux")
            .success()
    }

    pub fn keys(&self, keys: &[&str]) {
        let status = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("send-keys")
            .args(keys)
            .status()
            .expect("send-keys");
        assert!(status.success());
    }
}

impl Drop for Tmux {
    /// Ends the terminal and what the test's commands left running in the workspace, also
    /// when the test panicked.
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .status();
        super::process::kill_left(&self.work);
    }
}

pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

pub fn agent_bin() -> String {
    env!("CARGO_BIN_EXE_agent").to_owned()
}

impl Tmux {
    pub fn tmux_output(&self, args: &[&str]) -> String {
        let output = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

#[test]
fn a_wait_is_not_satisfied_by_text_already_waited_for() {
    let sandbox = Sandbox::new();
    let tmux = Tmux::start(&sandbox, &[], "echo MARK-one; read line; echo MARK-two");
    tmux.wait_for("MARK-");
    // The shell waits for a line: the text on screen is the one already waited for.
    assert!(
        tmux.appeared_anew("MARK-").is_none(),
        "the old text counted as new:\n{}",
        tmux.screen()
    );
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("MARK-");
    assert!(screen.contains("MARK-two"), "{screen}");
}
