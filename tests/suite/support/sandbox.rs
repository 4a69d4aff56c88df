//! A private sandbox for one test and the `agent` commands that run in it: a clean
//! environment and private config/state directories, so no test ever reads the real home
//! directory.

use std::path::PathBuf;

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

    /// The whole environment `agent` gets in this sandbox: `PATH`, and a home, config and
    /// state of its own.
    pub fn environment(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        vec![
            ("PATH", std::env::var_os("PATH").unwrap_or_default()),
            ("HOME", self.root.path().join("home").into()),
            ("AGENT_CONFIG_DIR", self.config_dir().into()),
            (
                "XDG_CONFIG_HOME",
                self.root.path().join("home/.config").into(),
            ),
            ("XDG_STATE_HOME", self.state_dir().into()),
            ("LANG", "C.UTF-8".into()),
        ]
    }

    /// `agent` with a cleared environment pointing at this sandbox, run in `work/`.
    pub fn agent(&self) -> Command {
        let mut cmd = Command::cargo_bin("agent").expect("agent binary");
        cmd.env_clear()
            .envs(self.environment())
            .current_dir(self.work());
        cmd
    }

    /// The same environment as [`Sandbox::agent`] on a plain `std::process::Command`,
    /// for tests that spawn the agent and signal it while it runs. stdin is null.
    pub fn agent_process(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("agent"));
        cmd.env_clear()
            .envs(self.environment())
            .current_dir(self.work())
            .stdin(std::process::Stdio::null());
        cmd
    }
}

/// The API key the tests give `agent` for the fake servers (never a real one).
pub const KEY: &str = "sk-test-key-0123456789";

impl Sandbox {
    /// `agent run` pointed at `server` as an OpenAI-compatible provider, with [`KEY`].
    pub fn openai_run(&self, server: &super::super::fake_model::FakeModel) -> Command {
        self.run_against("openai", "OPENAI_API_KEY", &server.openai_url())
    }

    /// `agent run` pointed at `server` as an Anthropic provider, with [`KEY`].
    pub fn anthropic_run(&self, server: &super::super::fake_model::FakeModel) -> Command {
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

    /// `agent history show` of the first transcript (asserted to succeed): its stdout.
    pub fn history_show(&self) -> String {
        let id = self.transcript_paths()[0]
            .file_stem()
            .expect("a transcript")
            .to_string_lossy()
            .into_owned();
        let output = self
            .agent()
            .args(["history", "show", &id])
            .output()
            .expect("agent history show");
        let shown = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "{shown}");
        shown
    }

    /// The transcripts' texts, oldest first.
    pub fn transcripts(&self) -> Vec<String> {
        self.transcript_paths()
            .iter()
            .map(|path| std::fs::read_to_string(path).unwrap_or_default())
            .collect()
    }
}
