//! The command runner: runs one shell command with a timeout and an output cap,
//! streaming every chunk to a caller-supplied sink as it arrives.
//!
//! It owns process lifetime (own process group, group kill on timeout or when the
//! caller drops the future) and output bounding. It knows nothing of policy,
//! models or terminals: whoever calls it has already decided the command may run.

mod cap;
pub mod git;
mod process;
mod redact;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::AsyncReadExt;

pub use cap::Stream;
pub use process::SCRUBBED_ENV;
pub use redact::{REDACTED, RedactedStream, Secrets};

use redact::OutputText;

use cap::OutputCap;
use process::Kill;

/// Default per-command timeout — long enough for a build step, short enough that
/// a hung command does not stall the agent for long.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default cap on stdout + stderr together, in characters.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 100_000;
/// Time between SIGTERM and SIGKILL — long enough for a clean shutdown, short
/// enough that a command ignoring TERM doesn't hang the agent.
pub const GRACE_AFTER_TERM: Duration = Duration::from_secs(5);
/// How long to keep reading the pipes after the shell has exited: output already
/// written is collected, but a background grandchild holding the pipes open
/// (`sleep 60 & echo hi`) cannot keep the call waiting.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(100);
/// How often to check whether a terminated group has gone.
const KILL_POLL: Duration = Duration::from_millis(20);

/// How long the sandbox helper has to end its command on SIGKILL's behalf before it is killed
/// itself.
const HELPER_FORCE_WAIT: Duration = Duration::from_secs(2);
/// Size of one pipe read.
const READ_CHUNK_BYTES: usize = 64 * 1024;

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
    /// Environment variables to set (e.g. [`git::neutralising_env`]).
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

/// One piece of output as it arrives.
#[derive(Debug)]
pub struct Chunk<'a> {
    /// Which stream it came from.
    pub stream: Stream,
    /// The raw bytes read; when the request redacts secrets, the redacted text's bytes.
    pub bytes: &'a [u8],
    /// The bytes decoded so far (an incomplete trailing character is held back), with secrets
    /// redacted (the end that could begin a secret is held back too).
    pub text: &'a str,
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

/// The process groups of the commands running now, so that a signal stopping the
/// agent can end them ([`stop_running`]). Signals are process-wide; so is this list.
static RUNNING: std::sync::Mutex<Vec<Group>> = std::sync::Mutex::new(Vec::new());

/// A running command's process group: its leader, and whether that is the sandbox helper,
/// which passes a polite signal on to the command itself (`sandbox/supervise.rs`): sent to the
/// helper alone, so that it can act before the command sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    pid: u32,
    helper: bool,
}

impl Group {
    /// Asks the command to stop (SIGTERM): to the whole group, or through the helper.
    fn term(self) {
        self.signal(Kill::Term);
    }

    /// Ends the command (SIGKILL): the whole group, or through the helper, which ends the
    /// command's own group and then itself.
    fn force(self) {
        self.signal(Kill::Force);
    }

    fn signal(self, kill: Kill) {
        if self.helper {
            process::signal_helper(self.pid, kill);
        } else {
            process::kill_group(self.pid, kill);
        }
    }
}

fn running() -> std::sync::MutexGuard<'static, Vec<Group>> {
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Registers a running command's group and kills it if the call is abandoned
/// (future dropped) before it finished.
struct GroupGuard {
    group: Option<Group>,
}

impl GroupGuard {
    fn new(group: Option<Group>) -> Self {
        if let Some(group) = group {
            running().push(group);
        }
        Self { group }
    }

    /// The shell finished: whatever it left running in its group (`server &`, `sleep 60 &`)
    /// is killed, so no command outlives its call; then nothing is left to track.
    fn finish(&mut self) {
        if let Some(group) = self.group {
            process::kill_group(group.pid, Kill::Force);
        }
        self.disarm();
    }

    /// Stops tracking the group.
    fn disarm(&mut self) {
        if let Some(group) = self.group.take() {
            running().retain(|g| *g != group);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            // Normally `stop_running` has already ended the group; this is the last resort.
            group.force();
        }
        self.disarm();
    }
}

/// Ends every command this process is running: SIGTERM to each group, SIGKILL to
/// whatever is left after [`GRACE_AFTER_TERM`]. Returns as soon as every group is
/// gone, so a command that dies at once costs no waiting. Call it before dropping
/// the futures of [`run`] when the agent itself is stopping (a signal).
///
/// On Linux a group counts as gone once only zombies are left (the shell is reaped
/// later, by its dropped call); elsewhere the unreaped shell keeps its group alive
/// and this waits the grace period out.
pub async fn stop_running() {
    let groups: Vec<Group> = running().clone();
    if groups.is_empty() {
        return;
    }
    for group in &groups {
        group.term();
    }
    let alive = still_there(&groups, GRACE_AFTER_TERM).await;
    for group in &alive {
        group.force();
    }
    // The helpers end their commands and then themselves: the workspace's check, after this,
    // must find nothing of them running. A helper still there then goes with its group.
    let helpers: Vec<Group> = alive.into_iter().filter(|group| group.helper).collect();
    for group in still_there(&helpers, HELPER_FORCE_WAIT).await {
        process::kill_group(group.pid, Kill::Force);
    }
}

/// Waits until every one of `groups` is gone, or `patience` has passed: the groups still
/// there then.
async fn still_there(groups: &[Group], patience: Duration) -> Vec<Group> {
    let end = tokio::time::Instant::now() + patience;
    loop {
        let alive: Vec<Group> = groups
            .iter()
            .copied()
            .filter(|group| process::group_alive(group.pid))
            .collect();
        if alive.is_empty() || tokio::time::Instant::now() >= end {
            return alive;
        }
        tokio::time::sleep(KILL_POLL).await;
    }
}

/// Runs `request`, calling `sink` with every chunk of output as it arrives.
/// Always returns a result; failures to start are reported in `error`.
pub async fn run(request: &ExecRequest, sink: &mut (dyn FnMut(Chunk<'_>) + Send)) -> ExecResult {
    if let Err(error) = check_cwd(&request.cwd) {
        return ExecResult::failed(error);
    }
    let start = Instant::now();
    let sandbox = match prepare_sandbox(request) {
        Ok(sandbox) => sandbox,
        Err(error) => return ExecResult::failed(error),
    };
    let spawned = process::command(request, sandbox.as_ref()).and_then(|mut c| c.spawn());
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            let mut result = ExecResult::failed(ExecError::new(
                ErrorCode::Io,
                format!("cannot start `{}`: {error}", request.shell),
            ));
            result.sandbox_undone = sandbox.map(crate::sandbox::Run::finish).unwrap_or_default();
            return result;
        }
    };
    let pid = child.id();
    let group = pid.map(|pid| Group {
        pid,
        helper: sandbox.is_some() && crate::sandbox::HELPER_PASSES_SIGNALS,
    });
    let mut guard = GroupGuard::new(group);
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut out_buf = vec![0u8; READ_CHUNK_BYTES];
    let mut err_buf = vec![0u8; READ_CHUNK_BYTES];
    let mut output = OutputText::new(&request.redact);
    let mut cap = OutputCap::new(request.limits.max_output_chars);
    let mut status = None;
    let mut io_error = None;
    let deadline = tokio::time::Instant::from_std(start + request.limits.timeout);
    let mut drain_deadline = None;
    let mut timed_out = false;

    // `None`: the stream ended, what was held back of it goes out.
    let mut deliver = |stream: Stream, bytes: Option<&[u8]>, cap: &mut OutputCap| {
        let text = output.take(stream, bytes);
        cap.push(stream, text);
        // Without secrets the raw bytes pass untouched (an incomplete last character too).
        let bytes: &[u8] = match bytes {
            Some(bytes) if request.redact.is_empty() => bytes,
            None if request.redact.is_empty() => &[],
            _ => text.as_bytes(),
        };
        if !bytes.is_empty() {
            sink(Chunk {
                stream,
                bytes,
                text,
            });
        }
    };

    loop {
        if stdout.is_none() && stderr.is_none() && status.is_some() {
            break;
        }
        tokio::select! {
            read = read_some(&mut stdout, &mut out_buf) => match read {
                Ok(0) => stdout = None,
                Ok(n) => deliver(Stream::Stdout, Some(&out_buf[..n]), &mut cap),
                Err(error) => { io_error = Some(error); stdout = None; }
            },
            read = read_some(&mut stderr, &mut err_buf) => match read {
                Ok(0) => stderr = None,
                Ok(n) => deliver(Stream::Stderr, Some(&err_buf[..n]), &mut cap),
                Err(error) => { io_error = Some(error); stderr = None; }
            },
            exit = child.wait(), if status.is_none() => {
                status = Some(exit);
                drain_deadline = Some(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            },
            () = tokio::time::sleep_until(deadline), if !timed_out && status.is_none() => {
                timed_out = true;
                if let Some(group) = group {
                    status = Some(terminate(&mut child, group).await);
                }
                drain_deadline = Some(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            },
            () = sleep_until_opt(drain_deadline) => break,
        }
    }
    guard.finish();
    // Only now that nothing of the command is left running: check and undo, remove its temp.
    let undone = sandbox.map(crate::sandbox::Run::finish).unwrap_or_default();
    for stream in [Stream::Stdout, Stream::Stderr] {
        deliver(stream, None, &mut cap);
    }
    let mut result = finished(
        request,
        start.elapsed(),
        status,
        timed_out,
        io_error,
        cap.finish(),
    );
    result.sandbox_undone = undone;
    result
}

/// The command's sandbox run, when it runs in one.
fn prepare_sandbox(request: &ExecRequest) -> Result<Option<crate::sandbox::Run>, ExecError> {
    request
        .sandbox
        .as_ref()
        .map(crate::sandbox::Run::prepare)
        .transpose()
        .map_err(|error| {
            ExecError::new(
                ErrorCode::Io,
                format!("cannot make the command's private temp directory: {error}"),
            )
        })
}

/// The result of a finished command: its status, the output kept, the error (timeout, I/O,
/// not found) and whether the sandbox likely refused something.
fn finished(
    request: &ExecRequest,
    elapsed: Duration,
    status: Option<std::io::Result<std::process::ExitStatus>>,
    timed_out: bool,
    io_error: Option<std::io::Error>,
    captured: cap::Captured,
) -> ExecResult {
    let duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    let (exit_code, signal) = match &status {
        Some(Ok(status)) => (status.code(), exit_signal(*status)),
        _ => (None, None),
    };
    let error = if timed_out {
        Some(ExecError::new(
            ErrorCode::TimedOut,
            format!(
                "command timed out after {}",
                describe_duration(request.limits.timeout)
            ),
        ))
    } else if let Some(Err(error)) = &status {
        Some(ExecError::new(
            ErrorCode::Io,
            format!("waiting for the command failed: {error}"),
        ))
    } else if let Some(error) = io_error {
        Some(ExecError::new(
            ErrorCode::Io,
            format!("reading the command's output failed: {error}"),
        ))
    } else {
        not_found(exit_code, &captured.stderr)
    };
    let sandbox_note = request
        .sandbox
        .as_ref()
        .filter(|_| error.is_none())
        .and_then(|policy| {
            crate::sandbox::likely_denial(policy, exit_code, &captured.stderr)
                .or_else(|| policy.limits.note(exit_code, signal, &captured.stderr))
        });
    ExecResult {
        exit_code,
        stdout: captured.stdout,
        stderr: captured.stderr,
        duration_ms,
        timed_out,
        truncated: captured.truncated,
        signal,
        error,
        sandbox_denied: sandbox_note.is_some(),
        sandbox_note,
        sandbox_undone: Vec::new(),
        network: Vec::new(),
    }
}

/// SIGTERM to the group, then SIGKILL after the grace period if anything of the
/// group survives; returns the shell's exit status.
async fn terminate(
    child: &mut tokio::process::Child,
    group: Group,
) -> std::io::Result<std::process::ExitStatus> {
    let pid = group.pid;
    group.term();
    let grace_end = tokio::time::Instant::now() + GRACE_AFTER_TERM;
    let mut status = None;
    loop {
        if status.is_none()
            && let Ok(Some(exit)) = child.try_wait()
        {
            status = Some(exit);
        }
        if status.is_some() && !process::group_alive(pid) {
            break;
        }
        if tokio::time::Instant::now() >= grace_end {
            group.force();
            break;
        }
        tokio::time::sleep(KILL_POLL).await;
    }
    match status {
        Some(status) => Ok(status),
        None if group.helper => {
            // The helper ends the command and then itself; should it not, it goes too.
            match tokio::time::timeout(HELPER_FORCE_WAIT, child.wait()).await {
                Ok(status) => status,
                Err(_) => {
                    process::kill_group(pid, Kill::Force);
                    child.wait().await
                }
            }
        }
        None => child.wait().await,
    }
}

async fn read_some<R: tokio::io::AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(unix)]
fn exit_signal(status: std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
fn exit_signal(_status: std::process::ExitStatus) -> Option<i32> {
    None
}

/// Exit 127 with the shell's "not found" message is a missing program: say so plainly.
fn not_found(exit_code: Option<i32>, stderr: &str) -> Option<ExecError> {
    let missing = exit_code == Some(127) && stderr.contains("not found")
        || exit_code == Some(9009) && cfg!(windows);
    missing.then(|| {
        ExecError::new(
            ErrorCode::NotFound,
            "command not found (exit 127): check the program name, or install it".to_owned(),
        )
    })
}

/// `30 s`, `1.5 s`, `250 ms`.
#[must_use]
pub fn describe_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
    .replace(".0 s", " s")
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

    #[test]
    fn durations_read_naturally() {
        assert_eq!(describe_duration(Duration::from_secs(30)), "30 s");
        assert_eq!(describe_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(describe_duration(Duration::from_millis(250)), "250 ms");
    }

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
