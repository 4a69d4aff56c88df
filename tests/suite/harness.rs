//! The test harness: an `agent` command with a clean environment and private
//! config/state directories, so no test ever reads the real home directory.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A private sandbox for one test: config dir, state dir and a workspace.
pub struct Sandbox {
    pub root: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        for dir in ["config", "state", "work", "home"] {
            std::fs::create_dir_all(root.path().join(dir)).expect("mkdir");
        }
        Self { root }
    }

    pub fn config_dir(&self) -> PathBuf {
        self.root.path().join("config")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.root.path().join("state")
    }

    pub fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// Writes the user settings file.
    pub fn settings(&self, toml: &str) -> &Self {
        std::fs::write(self.config_dir().join("settings.toml"), toml).expect("write settings");
        self
    }

    /// `agent` with a cleared environment pointing at this sandbox, run in `work/`.
    pub fn agent(&self) -> Command {
        let mut cmd = Command::cargo_bin("agent").expect("agent binary");
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.path().join("home"))
            .env("AGENT_CONFIG_DIR", self.config_dir())
            .env("XDG_CONFIG_HOME", self.root.path().join("home/.config"))
            .env("XDG_STATE_HOME", self.state_dir())
            .env("LANG", "C.UTF-8")
            .current_dir(self.work());
        cmd
    }
}

impl Sandbox {
    /// The same environment as [`Sandbox::agent`] on a plain `std::process::Command`,
    /// for tests that spawn the agent and signal it while it runs. stdin is null.
    pub fn agent_process(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("agent"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.path().join("home"))
            .env("AGENT_CONFIG_DIR", self.config_dir())
            .env("XDG_CONFIG_HOME", self.root.path().join("home/.config"))
            .env("XDG_STATE_HOME", self.state_dir())
            .env("LANG", "C.UTF-8")
            .current_dir(self.work())
            .stdin(std::process::Stdio::null());
        cmd
    }
}

/// Waits until `ready` holds, failing the test after `limit` with `what`.
pub fn wait_for(limit: std::time::Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The API key the tests give `agent` for the fake servers (never a real one).
pub const KEY: &str = "sk-test-key-0123456789";

impl Sandbox {
    /// `agent run` pointed at `server` as an OpenAI-compatible provider, with [`KEY`].
    pub fn openai_run(&self, server: &super::fake_model::FakeModel) -> Command {
        self.run_against("openai", "OPENAI_API_KEY", &server.openai_url())
    }

    /// `agent run` pointed at `server` as an Anthropic provider, with [`KEY`].
    pub fn anthropic_run(&self, server: &super::fake_model::FakeModel) -> Command {
        self.run_against("anthropic", "ANTHROPIC_API_KEY", &server.url())
    }

    /// `agent run --provider PROVIDER --base-url URL` with [`KEY`] in `key_env`.
    fn run_against(&self, provider: &str, key_env: &str, url: &str) -> Command {
        let mut cmd = self.agent();
        cmd.env(key_env, KEY)
            .args(["run", "--provider", provider, "--base-url", url]);
        cmd
    }

    /// The transcript files of this sandbox's runs, oldest first.
    pub fn transcript_paths(&self) -> Vec<PathBuf> {
        let dir = self.state_dir().join("agent/runs");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|entries| entries.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    }

    /// The transcripts' texts, oldest first.
    pub fn transcripts(&self) -> Vec<String> {
        self.transcript_paths()
            .iter()
            .map(|path| std::fs::read_to_string(path).unwrap_or_default())
            .collect()
    }
}

/// Every line of `text` (stdout of `--json`, or a transcript) as a JSON value.
pub fn events(text: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Parses stdout as one JSON object.
pub fn json(output: &std::process::Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|error| panic!("stdout is not one JSON object ({error}):\n{text}"))
}

/// A live process (not a zombie), as the system's `/proc` shows it from outside.
pub struct Process {
    pub pid: u32,
    /// The program's name (`comm`).
    pub name: String,
    /// Its working directory, where it can be read.
    pub cwd: Option<PathBuf>,
    /// Its arguments, NUL-separated.
    pub cmdline: String,
}

/// Every live process this test can see, read from outside (the system's `/proc`): inside the
/// sandbox a command sees neither its own numbers there nor any process outside its PID
/// namespace.
pub fn live_processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (name, rest) = stat.split_once(" (")?.1.rsplit_once(')')?;
            let state = rest.split_whitespace().next()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            (state != "Z").then(|| Process {
                pid,
                name: name.to_owned(),
                cwd: std::fs::read_link(entry.path().join("cwd")).ok(),
                cmdline: String::from_utf8_lossy(&cmdline).into_owned(),
            })
        })
        .collect()
}

/// The `sleep` processes still running (not zombies) in the working directory `work`: what
/// the tests' commands leave behind if anything of them outlives its call.
pub fn left_running(work: &Path) -> Vec<u32> {
    let canonical = work.canonicalize().unwrap_or_else(|_| work.to_path_buf());
    live_processes()
        .into_iter()
        .filter(|p| {
            p.name == "sleep"
                && p.cwd
                    .as_deref()
                    .is_some_and(|cwd| cwd == canonical || cwd == work)
        })
        .map(|p| p.pid)
        .collect()
}

/// Kills what [`left_running`] finds (a test's cleanup; one process at a time, never a group).
pub fn kill_left(work: &Path) {
    for pid in left_running(work).into_iter().filter(|&pid| pid > 1) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

pub fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Writes an executable script `name` holding `script` into `dir` (made when missing), and
/// returns a `PATH` that finds it before anything of the same name: a stand-in for a program.
#[cfg(unix)]
pub fn first_on_path(dir: &Path, name: &str, script: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let program = dir.join(name);
    std::fs::write(&program, script).unwrap();
    let mut permissions = std::fs::metadata(&program).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&program, permissions).unwrap();
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `git` run by the test itself (as a person would, after the agent), hermetic: no user or
/// system configuration, a fixed identity.
pub fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}
