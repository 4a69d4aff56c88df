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

/// Whether any live process has `pgid` as its process group (Linux /proc). Commands print
/// their group as `$(cut -d' ' -f5 /proc/self/stat)`: in the sandbox's PID namespace `$$` is 1.
pub fn group_alive(pgid: u32) -> bool {
    assert!(pgid > 1, "not a command's process group: {pgid}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // Fields after the parenthesised name: state ppid pgrp …
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            return false;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
    })
}

/// Kills a process group left by a test (best effort).
pub fn kill_group(pgid: u32) {
    // `kill -KILL -1` would end every process this user may signal.
    assert!(pgid > 1, "not a command's process group: {pgid}");
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(std::process::Stdio::null())
        .status();
}

pub fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
