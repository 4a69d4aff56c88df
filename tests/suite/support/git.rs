//! `git` run by the test itself (as a person would, before or after the agent), hermetic: a
//! cleared environment, no user or system configuration, a fixed identity. The one way the
//! suites run git.

use std::path::Path;
use std::process::{Command, Output};

/// `git` in `dir`, hermetic (add the arguments). `HOME` is `dir`, so nothing of the real home
/// directory is read.
pub fn command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .current_dir(dir);
    command
}

/// `git ARGS` in `dir`, hermetic; the caller judges the outcome.
pub fn git(dir: &Path, args: &[&str]) -> Output {
    command(dir).args(args).output().unwrap()
}

/// Runs `command` (from [`command`]), which must succeed; its stdout.
pub fn succeeded(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `git ARGS` in `dir`, hermetic, which must succeed; its stdout.
pub fn git_ok(dir: &Path, args: &[&str]) -> String {
    succeeded(command(dir).args(args))
}
