//! The platform edge of the runner: building the shell invocation and signalling
//! a command's whole process group. Unix uses `sh -c` in a new process group;
//! Windows uses `cmd.exe /d /s /c` in a new process group and `taskkill /T`.

use std::process::Stdio;

use super::request::ExecRequest;

/// Environment variables never passed to a command: loader injection and the
/// model API keys (a command must not be able to read the agent's credentials).
pub const SCRUBBED_ENV: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
];

/// Builds the child process for `request`: shell (inside the sandbox helper when
/// `request.sandbox` is set), working directory, scrubbed environment, null stdin,
/// piped stdout/stderr, own process group.
///
/// # Errors
/// When the sandbox helper cannot be found.
pub(crate) fn command(
    request: &ExecRequest,
    sandbox: Option<&crate::sandbox::Run>,
) -> std::io::Result<tokio::process::Command> {
    let mut command = shell_command(request, sandbox)?;
    command
        .current_dir(&request.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in SCRUBBED_ENV
        .iter()
        .copied()
        .chain(request.env_remove.iter().map(String::as_str))
    {
        command.env_remove(name);
    }
    command.envs(request.env_set.iter().map(|(k, v)| (k, v)));
    let policy = sandbox.map(crate::sandbox::Run::policy);
    if let Some(policy) = policy.filter(|policy| !policy.network && policy.proxy.is_some()) {
        // Every tool pointed at the bridge to the proxy (or its door on the machine's
        // loopback, where there is no bridge), git's entry after those set above.
        let git_entries = request
            .env_set
            .iter()
            .find(|(name, _)| name == "GIT_CONFIG_COUNT")
            .map(|(_, count)| count.clone())
            .or_else(|| std::env::var("GIT_CONFIG_COUNT").ok())
            .and_then(|count| count.trim().parse().ok())
            .unwrap_or(0);
        command.envs(crate::net::env::proxy_env(
            policy.proxy_door.unwrap_or(crate::sandbox::BRIDGE_PORT),
            git_entries,
        ));
    }
    if let Some(temp) = sandbox.and_then(crate::sandbox::Run::command_temp_dir) {
        command.env("TMPDIR", temp);
    }
    Ok(command)
}

#[cfg(unix)]
fn shell_command(
    request: &ExecRequest,
    sandbox: Option<&crate::sandbox::Run>,
) -> std::io::Result<tokio::process::Command> {
    let mut command = match sandbox {
        None => {
            let mut command = tokio::process::Command::new(&request.shell);
            command.arg("-c").arg(&request.command);
            command
        }
        Some(run) => {
            let argv = [
                request.shell.as_str().into(),
                "-c".into(),
                request.command.as_str().into(),
            ];
            let (program, args) = crate::sandbox::wrap(run, &argv)?;
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            command
        }
    };
    command.process_group(0);
    Ok(command)
}

/// Windows has no sandbox: `request.sandbox` is never set here (it is never active).
#[cfg(windows)]
fn shell_command(
    request: &ExecRequest,
    _sandbox: Option<&crate::sandbox::Run>,
) -> std::io::Result<tokio::process::Command> {
    /// `CREATE_NEW_PROCESS_GROUP`: Ctrl+C in the agent's console does not reach the command.
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    let mut command = tokio::process::Command::new(&request.shell);
    // `/s /c` takes the rest of the line verbatim, so it must not be re-quoted.
    command
        .raw_arg("/d /s /c")
        .raw_arg(format!("\"{}\"", request.command));
    command.creation_flags(CREATE_NEW_PROCESS_GROUP);
    // Do not let cmd.exe prefer a program in the current directory over PATH (a cloned
    // repository could plant `whoami.bat`); defence in depth beside the policy's list.
    command.env("NoDefaultCurrentDirectoryInExePath", "1");
    Ok(command)
}

/// The signal sent to a process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kill {
    /// Ask politely (SIGTERM).
    Term,
    /// Force (SIGKILL).
    Force,
}

/// Signals the whole process group led by `pid`. Errors (the group is already
/// gone) are ignored: the caller only needs the group to stop.
#[cfg(unix)]
pub(crate) fn kill_group(pid: u32, kill: Kill) {
    use rustix::process::{Signal, kill_process_group};
    let Some(pid) = unix_pid(pid) else {
        return;
    };
    let signal = match kill {
        Kill::Term => Signal::TERM,
        Kill::Force => Signal::KILL,
    };
    let _ = kill_process_group(pid, signal);
}

/// Signals the sandbox helper `pid` alone, which passes SIGTERM on to its command and ends the
/// command with SIGKILL when asked with `HELPER_FORCE`. Errors (it is already gone) are
/// ignored.
#[cfg(target_os = "linux")]
pub(crate) fn signal_helper(pid: u32, kill: Kill) {
    use rustix::process::{Signal, kill_process};
    let Some(pid) = unix_pid(pid) else {
        return;
    };
    let signal = match kill {
        Kill::Term => Signal::TERM,
        Kill::Force => Signal::from_named_raw(crate::sandbox::HELPER_FORCE).unwrap_or(Signal::KILL),
    };
    let _ = kill_process(pid, signal);
}

/// No sandbox helper runs here: the whole group (or tree), as [`kill_group`].
#[cfg(not(target_os = "linux"))]
pub(crate) fn signal_helper(pid: u32, kill: Kill) {
    kill_group(pid, kill);
}

/// A process id as the system calls take it (`None` for 0 and ids too large to be one).
#[cfg(unix)]
fn unix_pid(pid: u32) -> Option<rustix::process::Pid> {
    i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
}

/// Whether any process of the group led by `pid` is still alive. On Linux zombies do not
/// count: where PID 1 is slow to reap orphans (containers), a killed grandchild lingers as a
/// zombie and would otherwise hold the call for the whole grace period.
#[cfg(target_os = "linux")]
pub(crate) fn group_alive(pid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return signal_reaches_group(pid);
    };
    let pgid = pid.to_string();
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // After the parenthesised name: state ppid pgrp …
        let Some(rest) = stat.rfind(')').map(|at| &stat[at + 1..]) else {
            return false;
        };
        let mut fields = rest.split_ascii_whitespace();
        let state = fields.next();
        let group = fields.nth(1);
        group == Some(pgid.as_str()) && state != Some("Z") && state != Some("X")
    })
}

/// Whether any process of the group led by `pid` is still alive (zombies included).
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn group_alive(pid: u32) -> bool {
    signal_reaches_group(pid)
}

#[cfg(unix)]
fn signal_reaches_group(pid: u32) -> bool {
    unix_pid(pid).is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
}

/// Ends the process tree rooted at `pid` (Windows has no group signals: `taskkill /T`).
#[cfg(windows)]
pub(crate) fn kill_group(pid: u32, kill: Kill) {
    let mut command = std::process::Command::new("taskkill");
    command.args(["/T", "/PID", &pid.to_string()]);
    if kill == Kill::Force {
        command.arg("/F");
    }
    let _ = command.stdout(Stdio::null()).stderr(Stdio::null()).status();
}

/// Windows: the tree is considered gone once the shell itself has exited.
#[cfg(windows)]
pub(crate) fn group_alive(_pid: u32) -> bool {
    false
}
