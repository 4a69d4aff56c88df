//! What to run: the request (command, shell, working directory, limits, environment,
//! secrets, sandbox), built purely before it runs, and the working directory checked — a
//! model-supplied one must resolve inside the workspace.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::redact::Secrets;
use super::result::{ErrorCode, ExecError};

/// Default per-command timeout — long enough for a build step, short enough that
/// a hung command does not stall the agent for long.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default cap on stdout + stderr together, in characters.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 100_000;

/// A command's limits: one value from the settings (or `agent exec`'s flags) to the runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Kill the command after this long.
    pub timeout: Duration,
    /// Cap on stdout + stderr together, in characters.
    pub max_output_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            max_output_chars: DEFAULT_MAX_OUTPUT_CHARS,
        }
    }
}

/// Everything needed to run one command; built purely, then run.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// The command line, given to the shell as one string.
    pub command: String,
    /// Absolute, existing working directory.
    pub cwd: PathBuf,
    /// Timeout and output cap.
    pub limits: Limits,
    /// The shell program (`sh` on Unix, `cmd.exe` on Windows).
    pub shell: String,
    /// Extra environment variables to remove (e.g. a configured `api_key_env`).
    pub env_remove: Vec<String>,
    /// Environment variables to set (e.g. [`super::git::neutralising_env`]).
    pub env_set: Vec<(String, String)>,
    /// Secrets replaced by `[REDACTED]` in the output, on the stream: neither a chunk nor the
    /// result ever holds one, however the reads cut it.
    pub redact: Secrets,
    /// Run inside this sandbox (only set when the sandbox is active on this machine).
    pub sandbox: Option<crate::sandbox::Policy>,
}

impl ExecRequest {
    /// A request with the platform shell and default limits.
    pub fn new(command: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            command: command.into(),
            cwd: cwd.into(),
            limits: Limits::default(),
            shell: default_shell().to_owned(),
            env_remove: Vec::new(),
            env_set: Vec::new(),
            redact: Secrets::default(),
            sandbox: None,
        }
    }
}

/// The platform's shell: `sh` on Unix, `cmd.exe` on Windows.
#[must_use]
pub fn default_shell() -> &'static str {
    if cfg!(windows) { "cmd.exe" } else { "sh" }
}

/// Checks that `cwd` is an absolute, existing directory.
///
/// # Errors
/// `ECWD` naming the directory otherwise.
pub fn check_cwd(cwd: &Path) -> Result<(), ExecError> {
    if !cwd.is_absolute() {
        return Err(ExecError::new(
            ErrorCode::Cwd,
            format!("working directory `{}` is not absolute", cwd.display()),
        ));
    }
    if !cwd.is_dir() {
        return Err(ExecError::new(
            ErrorCode::Cwd,
            format!(
                "working directory `{}` does not exist or is not a directory",
                cwd.display()
            ),
        ));
    }
    Ok(())
}

/// Resolves a model-supplied working directory: relative paths are taken from
/// the workspace, symlinks are followed, and the result must lie inside it.
///
/// # Errors
/// `ECWD` when it does not exist or resolves outside the workspace.
pub fn resolve_working_directory(workspace: &Path, requested: &str) -> Result<PathBuf, ExecError> {
    let joined = workspace.join(requested);
    let resolved = joined.canonicalize().map_err(|error| {
        ExecError::new(
            ErrorCode::Cwd,
            format!("working directory `{requested}`: {error}"),
        )
    })?;
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    if !resolved.starts_with(&root) {
        return Err(ExecError::new(
            ErrorCode::Cwd,
            format!(
                "working directory `{requested}` is outside the workspace `{}`",
                root.display()
            ),
        ));
    }
    check_cwd(&resolved)?;
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_cwd_is_rejected() {
        let error = check_cwd(Path::new("relative/dir")).unwrap_err();
        assert_eq!(error.code, ErrorCode::Cwd);
    }

    #[test]
    fn model_cwd_must_stay_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let root = dir.path();
        assert_eq!(
            resolve_working_directory(root, "inner").unwrap(),
            inner.canonicalize().unwrap()
        );
        assert_eq!(
            resolve_working_directory(root, "..").unwrap_err().code,
            ErrorCode::Cwd
        );
        assert_eq!(
            resolve_working_directory(root, "/").unwrap_err().code,
            ErrorCode::Cwd
        );
        assert_eq!(
            resolve_working_directory(root, "missing").unwrap_err().code,
            ErrorCode::Cwd
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/", root.join("escape")).unwrap();
            assert_eq!(
                resolve_working_directory(root, "escape").unwrap_err().code,
                ErrorCode::Cwd
            );
        }
    }
}
