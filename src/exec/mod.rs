//! The command runner: runs one shell command with a timeout and an output cap,
//! streaming every chunk to a caller-supplied sink as it arrives.
//!
//! It owns process lifetime (own process group, group kill on timeout or when the
//! caller drops the future) and output bounding. It knows nothing of policy,
//! models or terminals: whoever calls it has already decided the command may run.

pub mod background;
mod cap;
pub mod git;
mod group;
mod process;
mod redact;
mod request;
mod result;
mod ring;
pub mod streamed;

use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

pub use cap::Stream;
pub use group::{GRACE_AFTER_TERM, stop_running};
pub use process::SCRUBBED_ENV;
pub use redact::{REDACTED, RedactedStream, Secrets};
pub use request::{
    DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT, ExecRequest, Limits, check_cwd, default_shell,
    resolve_working_directory,
};
pub use result::{ErrorCode, ExecError, ExecResult};
pub use ring::RING_BYTES;

use cap::OutputCap;
use group::{Group, GroupGuard, terminate};
use redact::OutputText;

/// How long to keep reading the pipes after the shell has exited: output already
/// written is collected, but a background grandchild holding the pipes open
/// (`sleep 60 & echo hi`) cannot keep the call waiting.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(100);
/// Size of one pipe read.
const READ_CHUNK_BYTES: usize = 64 * 1024;

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

/// Runs `request`, calling `sink` with every chunk of output as it arrives.
/// Always returns a result; failures to start are reported in `error`.
pub async fn run(request: &ExecRequest, sink: &mut (dyn FnMut(Chunk<'_>) + Send)) -> ExecResult {
    if let Err(error) = check_cwd(&request.cwd) {
        return ExecResult::failed(error);
    }
    let start = Instant::now();
    let _foreground = Foreground::new();
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
    // Not zeroed: a read fills only what it returns (a command that writes nothing touches
    // none of these pages).
    let mut out_buf = Vec::with_capacity(READ_CHUNK_BYTES);
    let mut err_buf = Vec::with_capacity(READ_CHUNK_BYTES);
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
                Ok(_) => deliver(Stream::Stdout, Some(&out_buf), &mut cap),
                Err(error) => { io_error = Some(error); stdout = None; }
            },
            read = read_some(&mut stderr, &mut err_buf) => match read {
                Ok(0) => stderr = None,
                Ok(_) => deliver(Stream::Stderr, Some(&err_buf), &mut cap),
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

/// Commands running now in a call (not in the background): a background process's sandbox
/// is checked after it ends only while none runs, so that the two checks of the workspace's
/// protected paths never overlap (each would take the other's changes for its command's).
static FOREGROUND: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts a call's command in [`FOREGROUND`] while it lives.
struct Foreground;

impl Foreground {
    fn new() -> Self {
        FOREGROUND.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Foreground
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        FOREGROUND.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Whether a call's command is running now.
fn foreground_running() -> bool {
    FOREGROUND.load(std::sync::atomic::Ordering::Acquire) > 0
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
    let stderr = match request
        .sandbox
        .as_ref()
        .and(crate::sandbox::run_network_failure())
    {
        Some(failure) => format!("agent: sandbox: {failure}\n{}", captured.stderr),
        None => captured.stderr,
    };
    ExecResult {
        exit_code,
        stdout: captured.stdout,
        stderr,
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

/// Reads what the pipe has (at most `buf`'s capacity) into `buf`, replacing what it held.
async fn read_some<R: tokio::io::AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => {
            // Empty, the buffer offers its whole capacity: it is not grown.
            buf.clear();
            pipe.read_buf(buf).await
        }
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
    fn durations_read_naturally() {
        assert_eq!(describe_duration(Duration::from_secs(30)), "30 s");
        assert_eq!(describe_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(describe_duration(Duration::from_millis(250)), "250 ms");
    }
}
