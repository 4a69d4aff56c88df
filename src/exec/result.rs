//! What running a command gives back: the result (exit code, output kept, time, timeout,
//! signal, what the sandbox likely refused or undid) and the runner's errors with their codes.

use serde::Serialize;

/// The runner's own error codes (DESIGN.md "Running a command"); the tool adds its own
/// (`EDENIED`, `ELOOP`, `ETOOL_DISABLED`, `EINVAL`: `agent::ToolErrorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ErrorCode {
    /// The command ran out of time.
    #[serde(rename = "ETIMEDOUT")]
    TimedOut,
    /// The program was not found.
    #[serde(rename = "ENOENT")]
    NotFound,
    /// The sandbox is required but cannot apply on this machine: nothing runs.
    #[serde(rename = "ESANDBOX")]
    Sandbox,
    /// The working directory is missing or outside the workspace.
    #[serde(rename = "ECWD")]
    Cwd,
    /// Spawning or reading the command failed.
    #[serde(rename = "EIO")]
    Io,
}

/// An error of the runner: a code and a message for people and models.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecError {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// What happened and what to do.
    pub message: String,
}

impl ExecError {
    /// A new error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// The outcome of running a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecResult {
    /// Exit code; `None` when the command was killed by a signal or never ran.
    pub exit_code: Option<i32>,
    /// Captured stdout (capped).
    pub stdout: String,
    /// Captured stderr (capped).
    pub stderr: String,
    /// Wall time from spawn to the end of the call.
    pub duration_ms: u64,
    /// The timeout fired.
    pub timed_out: bool,
    /// Output went over `max_output_chars` and was cut in the middle.
    pub truncated: bool,
    /// The signal that ended the command, if any (Unix).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Set when the command could not run or did not finish normally.
    pub error: Option<ExecError>,
    /// The sandbox likely refused something the command tried (a guess from its stderr).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sandbox_denied: bool,
    /// What the sandbox likely refused and what the model can do, when `sandbox_denied`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_note: Option<String>,
    /// Changes the command made to what git reads configuration, hooks or repositories from
    /// (or to `.agent/`), each undone after it ended: what was found and what was done.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_undone: Vec<String>,
    /// What the network proxy decided while the command ran (`[network] mode =
    /// "allowlist"`): each host it reached or was refused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<crate::net::NetworkEvent>,
}

impl ExecResult {
    /// A result for a command that never ran.
    #[must_use]
    pub fn failed(error: ExecError) -> Self {
        Self {
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            duration_ms: 0,
            timed_out: false,
            truncated: false,
            signal: None,
            error: Some(error),
            sandbox_denied: false,
            sandbox_note: None,
            sandbox_undone: Vec::new(),
            network: Vec::new(),
        }
    }

    /// The status a shell would report: the exit code, 128 + signal, or 124 on timeout.
    #[must_use]
    pub fn shell_status(&self) -> i32 {
        if self.timed_out {
            return 124;
        }
        match (self.exit_code, self.signal) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_status_follows_shell_conventions() {
        let mut result = ExecResult::failed(ExecError::new(ErrorCode::Io, "x"));
        assert_eq!(result.shell_status(), 1);
        result.signal = Some(9);
        assert_eq!(result.shell_status(), 137);
        result.exit_code = Some(3);
        assert_eq!(result.shell_status(), 3);
        result.timed_out = true;
        assert_eq!(result.shell_status(), 124);
    }
}
