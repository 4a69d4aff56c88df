//! Starting a local (stdio) server fenced: inside the command sandbox (the same helper a
//! command runs under, with the server's own `sandbox` mode; network closed), in the
//! workspace, with a scrubbed environment (only what its `env` names, plus `PATH`, `HOME`
//! and `LANG`: the agent's API keys never reach it), in its own process group, its stderr
//! kept (bounded) in a log in the state directory. Its stdout is read through
//! [`BoundedLines`], so a server that floods it without a newline ends its connection
//! instead of the agent's memory. [`Process`] ends it — with everything it started — when
//! dropped.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWriteExt as _, ReadBuf};

use crate::sandbox::{Policy, SandboxMode};

/// Longest JSON-RPC message taken from a server, in bytes: a 50 MB result ends the connection
/// (the call says why) instead of growing the agent's memory.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// Most bytes of a server's stderr kept in its log per run; the rest is read and dropped.
const MAX_LOG_BYTES: u64 = 1024 * 1024;

/// The environment variables a server gets from the agent's own, besides its `env`.
const PASSED_ENV: &[&str] = &["PATH", "HOME", "LANG"];

/// What starting a server needs from the run.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Where it runs.
    pub workspace: PathBuf,
    /// The run's command sandbox policy, when the sandbox is active (temp dir, cache, mounts).
    pub sandbox: Option<Policy>,
    /// Where its stderr log goes (`<state>/mcp`); `None`: stderr is dropped.
    pub log_dir: Option<PathBuf>,
}

/// A started server process; ended with its whole process group (and, sandboxed, everything
/// in its PID namespace) when dropped.
#[derive(Debug)]
pub struct Process {
    child: tokio::process::Child,
    /// The sandbox run (its private temp directory), finished after the process ends.
    run: Option<crate::sandbox::Run>,
    /// Why the connection ended, when the reader knows better than the client.
    pub broken: Arc<Mutex<Option<String>>>,
}

impl Process {
    /// The process id (its group's id too).
    #[must_use]
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The workspace's git surfaces checked while the server runs on (after each call, as
    /// after a command): what it planted is undone, one line each.
    pub fn check_surfaces(&mut self) -> Vec<String> {
        self.run
            .as_mut()
            .map(crate::sandbox::Run::check)
            .unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            end_group(pid, self.run.is_some(), &mut self.child);
        }
        let _ = self.child.start_kill();
        // Reaped by tokio's orphan queue (or above); the temp directory and the workspace's
        // check go with the run, after the server is gone.
        drop(self.run.take());
    }
}

/// The sandbox policy a server of `mode` runs under, from the run's `base` policy: its
/// own write mode, the network closed (no proxy yet: hosts listed are not reachable).
/// `None`: it runs unfenced (`off`, or no active sandbox).
#[must_use]
pub fn policy(mode: SandboxMode, base: Option<&Policy>, workspace: &Path) -> Option<Policy> {
    let base = base?;
    if mode == SandboxMode::Off {
        return None;
    }
    let mut policy = Policy::new(mode, false, workspace, &base.temp, &[]);
    policy.mounts = base.mounts;
    policy.cache.clone_from(&base.cache);
    // Not the commands' namespace: a server lives the whole run, beside them.
    policy.run_network = false;
    Some(policy)
}

/// The environment a server gets: `env` named in its settings, and `PATH`, `HOME`, `LANG`
/// from the agent's (read through `lookup`).
#[must_use]
pub fn environment(
    own: &[(String, String)],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = PASSED_ENV
        .iter()
        .filter_map(|name| lookup(name).map(|value| ((*name).to_owned(), value)))
        .filter(|(name, _)| !own.iter().any(|(n, _)| n == name))
        .collect();
    env.extend(own.iter().cloned());
    env
}

/// A server's environment in two parts: the agent's fixed base and the server's own.
pub type ServerEnv<'a> = (&'a [(String, String)], &'a [(String, String)]);

/// The environment of the process started for a server: `base` (the agent's `PATH`, `HOME`,
/// `LANG`) and the server's `own` variables. Fenced on Linux the process is the sandbox
/// helper, which stays outside the sandbox: it gets the server's variables only under
/// [`STAGED_ENV_PREFIX`](crate::sandbox::STAGED_ENV_PREFIX), set under their names by the
/// stage after it restricted itself — nothing a settings file names reaches the helper's
/// dynamic loader.
#[must_use]
pub fn process_env(
    base: &[(String, String)],
    own: &[(String, String)],
    staged: bool,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = base
        .iter()
        .filter(|(name, _)| !own.iter().any(|(n, _)| n == name))
        .cloned()
        .collect();
    env.extend(own.iter().map(|(name, value)| {
        let name = if staged {
            format!("{}{name}", crate::sandbox::STAGED_ENV_PREFIX)
        } else {
            name.clone()
        };
        (name, value.clone())
    }));
    env
}

/// Starts `command args` for server `name` under `policy` (`None`: unfenced) with exactly
/// `base` and `own` (see [`process_env`]). Returns the process, and its stdout (bounded) and stdin for the client.
///
/// # Errors
/// Why it could not start, in one line.
pub fn spawn(
    name: &str,
    command: &str,
    args: &[String],
    (base, own): ServerEnv<'_>,
    policy: Option<&Policy>,
    launch: &Launch,
) -> Result<
    (
        Process,
        BoundedLines<tokio::process::ChildStdout>,
        tokio::process::ChildStdin,
    ),
    String,
> {
    let argv: Vec<std::ffi::OsString> = std::iter::once(command.into())
        .chain(args.iter().map(Into::into))
        .collect();
    let run = policy
        .map(crate::sandbox::Run::prepare)
        .transpose()
        .map_err(|error| format!("cannot prepare its sandbox: {error}"))?;
    let (program, rest) = match &run {
        Some(run) => crate::sandbox::wrap(run, &argv)
            .map_err(|error| format!("cannot find the sandbox helper: {error}"))?,
        None => (
            PathBuf::from(command),
            args.iter().map(Into::into).collect(),
        ),
    };
    let staged = cfg!(target_os = "linux") && run.is_some();
    let env = process_env(base, own, staged);
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(rest)
        .current_dir(&launch.workspace)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(temp) = run.as_ref().and_then(crate::sandbox::Run::temp_dir) {
        cmd.env("TMPDIR", temp);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|error| format!("cannot start `{command}`: {error}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("its pipes could not be opened (this is a bug in agent)".to_owned());
    };
    if let Some(stderr) = child.stderr.take() {
        keep_log(name, stderr, launch.log_dir.as_deref());
    }
    let broken = Arc::new(Mutex::new(None));
    let reader = BoundedLines::new(stdout, Arc::clone(&broken));
    Ok((Process { child, run, broken }, reader, stdin))
}

/// The log file of server `name` in `dir`.
#[must_use]
pub fn log_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.log"))
}

/// Copies `stderr` into the server's log (new each run), at most [`MAX_LOG_BYTES`]; the rest
/// is read and dropped so the server never blocks on a full pipe.
fn keep_log(name: &str, mut stderr: tokio::process::ChildStderr, dir: Option<&Path>) {
    let path = dir.map(|dir| log_path(dir, name));
    tokio::spawn(async move {
        let mut file = match path {
            Some(path) => {
                let _ = std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")));
                tokio::fs::File::create(path).await.ok()
            }
            None => None,
        };
        let mut buffer = vec![0u8; 8192];
        let mut written: u64 = 0;
        loop {
            let n = match tokio::io::AsyncReadExt::read(&mut stderr, &mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if let Some(file) = file.as_mut()
                && written < MAX_LOG_BYTES
            {
                let room = usize::try_from(MAX_LOG_BYTES - written).unwrap_or(usize::MAX);
                let part = &buffer[..n.min(room)];
                if file.write_all(part).await.is_err() {
                    break;
                }
                written += part.len() as u64;
            }
        }
    });
}

/// How long the sandbox helper has to end its server on the force signal before it is
/// killed itself (as `exec/group.rs` waits for a command's helper).
#[cfg(unix)]
const HELPER_FORCE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Ends the process group led by `pid` (the process `child`). Sandboxed, through the helper's
/// force signal (which kills everything in the server's PID namespace — a SIGKILL to the
/// helper alone would leave the server running in a group of its own), waiting up to
/// [`HELPER_FORCE_WAIT`] for the helper to end; then, or unfenced, SIGKILL to the group.
#[cfg(unix)]
fn end_group(pid: u32, sandboxed: bool, child: &mut tokio::process::Child) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    if sandboxed && crate::sandbox::HELPER_PASSES_SIGNALS {
        let force = Signal::from_named_raw(crate::sandbox::HELPER_FORCE).unwrap_or(Signal::KILL);
        let _ = kill_process(pid, force);
        let end = std::time::Instant::now() + HELPER_FORCE_WAIT;
        while std::time::Instant::now() < end {
            match child.try_wait() {
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
                // Gone (and reaped): its group went with it.
                Ok(Some(_)) | Err(_) => return,
            }
        }
    }
    let _ = kill_process_group(pid, Signal::KILL);
}

/// Windows: `kill_on_drop` ends the process (no sandbox runs here).
#[cfg(not(unix))]
fn end_group(_pid: u32, _sandboxed: bool, _child: &mut tokio::process::Child) {}

/// A reader that refuses a line longer than [`MAX_MESSAGE_BYTES`]: the error ends the
/// connection, and `broken` says why.
#[derive(Debug)]
pub struct BoundedLines<R> {
    inner: R,
    /// Bytes since the last newline.
    line: usize,
    broken: Arc<Mutex<Option<String>>>,
}

impl<R> BoundedLines<R> {
    /// Wraps `inner`, saying in `broken` why it stopped.
    pub fn new(inner: R, broken: Arc<Mutex<Option<String>>>) -> Self {
        Self {
            inner,
            line: 0,
            broken,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                for byte in &buf.filled()[before..] {
                    if *byte == b'\n' {
                        this.line = 0;
                    } else {
                        this.line += 1;
                    }
                    if this.line > MAX_MESSAGE_BYTES {
                        let why = format!(
                            "it sent a message larger than {} MB (a huge result, or output \
                             that is not JSON-RPC)",
                            MAX_MESSAGE_BYTES / (1024 * 1024)
                        );
                        if let Ok(mut broken) = this.broken.lock() {
                            broken.get_or_insert_with(|| why.clone());
                        }
                        buf.set_filled(before);
                        return Poll::Ready(Err(std::io::Error::other(why)));
                    }
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    #[test]
    fn the_environment_is_only_what_is_named() {
        let agent = |name: &str| match name {
            "PATH" => Some("/bin".to_owned()),
            "HOME" => Some("/h".to_owned()),
            "OPENAI_API_KEY" | "ANTHROPIC_API_KEY" | "GITHUB_TOKEN" => Some("secret".to_owned()),
            _ => None,
        };
        let env = environment(
            &[("A".into(), "1".into()), ("HOME".into(), "/x".into())],
            &agent,
        );
        assert_eq!(
            env,
            vec![
                ("PATH".to_owned(), "/bin".to_owned()),
                ("A".to_owned(), "1".to_owned()),
                ("HOME".to_owned(), "/x".to_owned()),
            ]
        );
    }

    #[test]
    fn a_fenced_servers_own_variables_reach_the_helper_only_staged() {
        let base = [
            ("PATH".to_owned(), "/bin".to_owned()),
            ("HOME".to_owned(), "/h".to_owned()),
        ];
        let own = [
            ("PATH".to_owned(), "/x".to_owned()),
            ("TOKEN".to_owned(), "t".to_owned()),
        ];
        let staged = process_env(&base, &own, true);
        assert_eq!(
            staged,
            vec![
                ("HOME".to_owned(), "/h".to_owned()),
                ("AGENT_SANDBOX_STAGED_PATH".to_owned(), "/x".to_owned()),
                ("AGENT_SANDBOX_STAGED_TOKEN".to_owned(), "t".to_owned()),
            ]
        );
        // What reaches the helper is the fixed base and prefixed names, nothing else.
        for (name, _) in &staged {
            assert!(
                base.iter().any(|(n, _)| n == name)
                    || name.starts_with(crate::sandbox::STAGED_ENV_PREFIX),
                "{name}"
            );
        }
        let (_, set) = crate::sandbox::unstage(staged.iter().map(|(k, v)| (k.into(), v.into())));
        assert_eq!(set.len(), own.len());
        let plain = process_env(&base, &own, false);
        assert_eq!(plain[1..], own);
    }

    #[test]
    fn a_fenced_server_never_gets_the_network_and_off_is_unfenced() {
        let dir = tempfile::tempdir().unwrap();
        let mut base = Policy::new(
            SandboxMode::WorkspaceWrite,
            true,
            dir.path(),
            dir.path(),
            &[],
        );
        base.mounts = false;
        for mode in [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite] {
            let p = policy(mode, Some(&base), dir.path()).unwrap();
            assert!(!p.network);
            assert_eq!(p.mode, mode);
            assert!(!p.mounts);
        }
        assert!(
            policy(SandboxMode::ReadOnly, Some(&base), dir.path())
                .unwrap()
                .writable
                .is_empty()
        );
        assert_eq!(policy(SandboxMode::Off, Some(&base), dir.path()), None);
        assert_eq!(policy(SandboxMode::ReadOnly, None, dir.path()), None);
    }

    #[tokio::test]
    async fn a_line_past_the_bound_ends_the_stream_with_a_reason() {
        let broken = Arc::new(Mutex::new(None));
        let mut data = vec![b'x'; 100];
        data.push(b'\n');
        data.extend(std::iter::repeat_n(b'y', MAX_MESSAGE_BYTES + 10));
        let mut reader = BoundedLines::new(&data[..], Arc::clone(&broken));
        let mut out = Vec::new();
        let error = reader.read_to_end(&mut out).await.unwrap_err();
        assert!(error.to_string().contains("larger than 8 MB"), "{error}");
        assert!(out.len() <= 101 + MAX_MESSAGE_BYTES, "{}", out.len());
        assert!(broken.lock().unwrap().is_some());
        // Many lines, each within the bound, pass whole.
        let mut lines = Vec::new();
        for _ in 0..3 {
            lines.extend(std::iter::repeat_n(b'z', MAX_MESSAGE_BYTES));
            lines.push(b'\n');
        }
        let mut reader = BoundedLines::new(&lines[..], Arc::new(Mutex::new(None)));
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        assert_eq!(out.len(), lines.len());
    }
}
