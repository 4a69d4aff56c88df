//! The helper's last step (Linux): it starts the command as its child and stays until every
//! process the command started has ended, so that nothing of a command outlives it.
//!
//! Without this, a process that leaves the command's process group (`setsid`, a daemon's
//! double fork) survives the group kill that ends a command, still able to write the
//! workspace — after the surfaces were checked: a `.git/commondir` or `.agent/settings.toml`
//! written a second later would stay. So:
//!
//! - Where a PID namespace can be made (with the mount namespace: as root, or inside the user
//!   namespace), the command is its first process. When that process ends — however: it
//!   exits, a signal, the agent's SIGKILL to the group — the kernel kills every process left
//!   in the namespace (and in namespaces made inside it).
//! - The command gets a process group of its own, without the helper: what it sends its group
//!   (`kill 0`) cannot end the helper, and inside the namespace it cannot name the helper at
//!   all. So the agent signals the helper alone ([`HELPER_FORCE`] for its SIGKILL), and the
//!   helper passes each signal on: a polite one (SIGTERM on a timeout or when the agent stops,
//!   SIGINT, SIGHUP, SIGQUIT) to the command's group — except where the command is a
//!   namespace's first process, which ignores signals it has no handler for: when the signal
//!   would have ended it, the helper ends it with SIGKILL at once (before it runs on: `a; b`
//!   must not reach `b`); the force signal as SIGKILL.
//! - The command starts through the stage (this program again, `helper_main`), which
//!   restricts itself and becomes the command: this process stays outside the command's
//!   Landlock domain, so even where the command can name it (no namespace: `$PPID`) it cannot
//!   kill, stop or trace it (kernels with Landlock scopes, ABI 6; before them it could, and
//!   what it started would outlive it), nor limit its open files (seccomp).
//!
//! The helper then ends as the command did: the same exit code, or the same signal.

use std::convert::Infallible;
use std::process::Command;

use std::os::unix::process::CommandExt as _;

use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};
use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1};
use signal_hook::iterator::Signals;

/// The polite signals the agent sends (to this process alone, see `exec`'s `Group`), passed
/// on to the command.
const PASSED_ON: [i32; 4] = [SIGTERM, SIGINT, SIGHUP, SIGQUIT];

/// The signal by which the agent asks the helper to end the command with SIGKILL (a SIGKILL to
/// the helper itself would leave the command running, in a process group of its own).
pub const HELPER_FORCE: i32 = SIGUSR1;

/// Starts `command`, waits until it and everything it started have ended, and ends this
/// process as the command ended. `namespace`: this process made a PID namespace, so the
/// command is its first process. Returns only when the command could not be started.
///
/// # Errors
/// Why the command could not be started.
pub(super) fn run(mut command: Command, namespace: bool) -> Result<Infallible, String> {
    // Orphans of the command become this process's children (a fallback where no PID
    // namespace could be made; harmless where one was).
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    // Before the command starts, so that no signal is missed (handlers, unlike ignored
    // signals, are not inherited through `exec`).
    let mut signals = Signals::new(PASSED_ON.into_iter().chain([HELPER_FORCE, SIGCHLD]))
        .map_err(|error| format!("cannot watch signals: {error}"))?;
    let child = command.process_group(0).spawn().map_err(|error| {
        let program = command.get_program().to_string_lossy().into_owned();
        format!("cannot start `{program}`: {error}")
    })?;
    let pid = i32::try_from(child.id())
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| "the command got no process id".to_owned())?;
    let mut status = None;
    let mut ended_by = None;
    loop {
        while let Ok(Some((reaped, how))) = rustix::process::wait(WaitOptions::NOHANG) {
            if reaped == pid {
                status = Some(how);
            }
        }
        if status.is_some() {
            break;
        }
        for signal in signals.wait() {
            if signal == SIGCHLD || ended_by.is_some() {
                continue;
            }
            if signal == HELPER_FORCE {
                force(pid, namespace);
            } else if namespace && ends(pid, signal) {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
                ended_by = Some(signal);
            } else if let Some(signal) = Signal::from_named_raw(signal) {
                // The command's group has the command's id.
                let _ = rustix::process::kill_process_group(pid, signal);
            }
        }
    }
    // Not `force` again: the command's id may be another process's now. Whatever is left
    // (without a namespace) are this process's children or theirs.
    end_the_rest();
    drop(signals);
    end_as(status, ended_by)
}

/// SIGKILL for the command: its first process (the kernel ends the rest of the namespace with
/// it), or its whole group.
fn force(pid: Pid, namespace: bool) {
    if namespace {
        let _ = rustix::process::kill_process(pid, Signal::KILL);
    }
    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
}

/// Whether `signal` would end the process `pid` if it were not a namespace's first process:
/// it has no handler for it and does not ignore it (`/proc/PID/status`). When that cannot be
/// read, yes: ending it is what the agent asked for.
fn ends(pid: Pid, signal: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", pid.as_raw_nonzero()))
    else {
        return true;
    };
    let mask = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0)
    };
    let bit = signal
        .checked_sub(1)
        .and_then(|n| u32::try_from(n).ok())
        .and_then(|n| 1u64.checked_shl(n))
        .unwrap_or(0);
    (mask("SigIgn:") | mask("SigCgt:")) & bit == 0
}

/// The most rounds [`end_the_rest`] stops what it finds before it kills it all: a stopped
/// process cannot start another, so a few rounds find all there is.
const STOP_ROUNDS: usize = 50;

/// Ends everything the command left (orphans reparented here, and all they started) and
/// reaps it, until this process has no child left. Killing only the children would end one
/// generation at a time, while a chain of processes forks new ones below as fast: so every
/// round first stops all descendants, again until no new one appears, and then kills them
/// all at once.
fn end_the_rest() {
    // The usual case, cheaply: nothing left at all (no child means no descendant, as every
    // orphan below is reparented here). Scanning `/proc` costs milliseconds on a busy host.
    if no_child_left() {
        return;
    }
    loop {
        let mut found: Vec<Pid> = Vec::new();
        for _ in 0..STOP_ROUNDS {
            let tree = descendants();
            for pid in &tree {
                let _ = rustix::process::kill_process(*pid, Signal::STOP);
            }
            let grew = tree.iter().any(|pid| !found.contains(pid));
            found = tree;
            if !grew {
                break;
            }
        }
        for pid in &found {
            let _ = rustix::process::kill_process(*pid, Signal::KILL);
        }
        if rustix::process::wait(WaitOptions::empty()).is_err() {
            // No child left (ECHILD).
            return;
        }
    }
}

/// Whether this process has no child, running or ended (ECHILD), without reaping any.
fn no_child_left() -> bool {
    use rustix::process::{WaitId, WaitIdOptions, waitid};
    waitid(
        WaitId::All,
        WaitIdOptions::EXITED
            | WaitIdOptions::STOPPED
            | WaitIdOptions::NOHANG
            | WaitIdOptions::NOWAIT,
    )
    .is_err_and(|error| error == rustix::io::Errno::CHILD)
}

/// Every process below this one (from the system's `/proc`, parent by parent).
fn descendants() -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(i32, i32)> = entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid …`: the name may hold anything but ends at the last ')'.
            let ppid = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse::<i32>()
                .ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut below = vec![rustix::process::getpid().as_raw_nonzero().get()];
    let mut next = 0;
    while next < below.len() {
        let parent = below[next];
        below.extend(
            parents
                .iter()
                .filter(|(_, ppid)| *ppid == parent)
                .map(|(pid, _)| *pid),
        );
        next += 1;
    }
    below
        .into_iter()
        .skip(1)
        .filter_map(Pid::from_raw)
        .collect()
}

/// Ends this process as the command ended: its exit code, or its signal (`ended_by`: the
/// signal this process ended it for).
fn end_as(status: Option<WaitStatus>, ended_by: Option<i32>) -> Result<Infallible, String> {
    let signal = ended_by.or_else(|| status.and_then(WaitStatus::terminating_signal));
    if let Some(signal) = signal {
        // The same death, without this process's core dump.
        let mut limit = rustix::process::getrlimit(rustix::process::Resource::Core);
        limit.current = Some(0);
        let _ = rustix::process::setrlimit(rustix::process::Resource::Core, limit);
        let _ = signal_hook::low_level::emulate_default_handler(signal);
        // A signal whose default is to be ignored (or that could not be raised).
        std::process::exit(128 + signal);
    }
    std::process::exit(status.and_then(WaitStatus::exit_status).unwrap_or(1))
}
