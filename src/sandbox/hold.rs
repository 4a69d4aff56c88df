//! One network namespace per run (Linux): the commands of one `agent run` or session share it,
//! so that a server one command started (in the background) is reached on `localhost` by the
//! next, while nothing outside is reachable but through the proxy.
//!
//! The namespace is held by a process of its own, the holder (the helper again, `--hold`),
//! started lazily at the first sandboxed command that needs it: it makes the user and network
//! namespaces, brings `lo` up, runs the bridge to the proxy and the DNS stub when the
//! network mode has a proxy (`netns.rs`), and then waits. It ends when its standard input
//! closes: the agent holds the only other end, so the holder goes with the agent however the
//! agent ends (even by SIGKILL), and [`end`] ends it when the run ends.
//!
//! Each command's helper joins the namespace (`setns`, after checking that the holder's
//! namespaces are still the ones the agent saw) before it makes its own mount and PID
//! namespaces. Where the holder cannot be started, or the join fails, a command makes its own
//! namespace as before (with a proxy), or has none (network off, where seccomp then refuses
//! every socket but a Unix one): said on the stderr of the first command after the holder
//! failed (once per run), or of the command whose join failed.
//!
//! There are at most two holders per run: the proxy's (allowlist mode) and a closed one (mode
//! `off`, and what mode `auto` runs with the network closed), so that a closed command never
//! shares a namespace with the bridge.

use std::io::{BufRead as _, Read as _, Write as _};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::helper_args::Joined;

/// The helper's argument that makes it the run's namespace holder (`--hold [SOCKET PID]`).
pub(super) const HOLD_ARG: &str = "--hold";

/// Whether commands share one network namespace per run (an `agent run` or session says so;
/// `agent exec` runs one command, which makes its own).
static SHARED: AtomicBool = AtomicBool::new(false);

/// A holder started for the proxy directory it bridges to (`None`: closed), or why it could
/// not be started (not tried again).
type Started = (Option<PathBuf>, Result<Holder, String>);

/// The holders started.
static HOLDERS: Mutex<Vec<Started>> = Mutex::new(Vec::new());

/// A running holder: the process (its standard input is the agent's end) and its namespaces.
struct Holder {
    child: Child,
    joined: Joined,
}

/// From now on, the commands of this process share one network namespace per proxy.
pub fn share_per_run() {
    SHARED.store(true, Ordering::Relaxed);
}

/// The `--join` value for a command whose network goes through `proxy` (`None`: closed), when
/// commands share a namespace: starts the holder the first time.
pub(super) fn join_arg(proxy: Option<&Path>) -> Option<String> {
    if !SHARED.load(Ordering::Relaxed) {
        return None;
    }
    let mut holders = HOLDERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let index = holders
        .iter()
        .position(|(key, _)| key.as_deref() == proxy)
        .unwrap_or_else(|| {
            holders.push((proxy.map(Path::to_path_buf), start(proxy)));
            holders.len() - 1
        });
    holders[index]
        .1
        .as_ref()
        .ok()
        .map(|holder| holder.joined.arg())
}

/// Why the run's network namespace could not be made, the first time it is asked after that
/// happened (said once per run); `None` otherwise.
pub(super) fn take_failure() -> Option<String> {
    static SAID: AtomicBool = AtomicBool::new(false);
    let holders = HOLDERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let failure = holders
        .iter()
        .find_map(|(_, holder)| holder.as_ref().err())?;
    (!SAID.swap(true, Ordering::Relaxed)).then(|| failure.clone())
}

/// Ends the holders (the run ends). Commands still in a namespace keep it until they end.
pub fn end() {
    let holders = std::mem::take(
        &mut *HOLDERS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for (_, holder) in holders {
        if let Ok(mut holder) = holder {
            let _ = holder.child.kill();
            let _ = holder.child.wait();
        }
    }
}

/// Starts a holder and reads its namespaces.
fn start(proxy: Option<&Path>) -> Result<Holder, String> {
    let failed = "the run's network namespace could not be made here, so each command has one \
                  of its own: a server started in the background is not reachable from later \
                  commands";
    if std::env::var_os(super::TEST_NO_NETNS_ENV).is_some_and(|v| v == "1") {
        return Err(failed.to_owned());
    }
    let (helper, first) = super::program::helper().map_err(|error| error.to_string())?;
    let mut command = std::process::Command::new(helper);
    command.arg(first).arg(HOLD_ARG);
    if let Some(dir) = proxy {
        command
            .arg(dir.join(super::linux::PROXY_SOCKET))
            .arg(std::process::id().to_string());
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot start the run's network namespace: {error}"))?;
    let mut ready = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = std::io::BufReader::new(out).read_line(&mut ready);
    }
    let joined = (ready.trim() == super::netns::READY)
        .then(|| namespaces(child.id()))
        .flatten();
    match joined {
        Some(joined) => Ok(Holder { child, joined }),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Err(failed.to_owned())
        }
    }
}

/// The holder `pid`'s namespaces, when its network namespace is not this process's own.
fn namespaces(pid: u32) -> Option<Joined> {
    let inode = |pid: &str, kind: &str| {
        std::fs::metadata(format!("/proc/{pid}/ns/{kind}"))
            .ok()
            .map(|meta| meta.ino())
    };
    let (net, user) = (
        inode(&pid.to_string(), "net")?,
        inode(&pid.to_string(), "user")?,
    );
    (inode("self", "net")? != net).then_some(Joined { pid, net, user })
}

/// The holder process (`agent-sandbox --hold [SOCKET PID]`): makes the namespace, bridges to
/// the proxy at `SOCKET` (process `PID`'s) when given, says `ready`, and lives until its
/// standard input closes.
#[must_use]
pub(super) fn hold_main(proxy: Option<(&Path, u32)>) -> std::process::ExitCode {
    if let Err(error) = super::netns::make() {
        let _ = writeln!(std::io::stderr(), "agent: sandbox: {error}");
        return std::process::ExitCode::from(1);
    }
    // One thread that ends the process with the agent (its pipe closed): the namespace's
    // only other holders are the commands of the run.
    let watcher = std::thread::Builder::new()
        .name("hold".to_owned())
        .spawn(|| {
            let mut byte = [0u8; 64];
            while std::io::stdin().read(&mut byte).is_ok_and(|n| n > 0) {}
            std::process::exit(0);
        });
    if watcher.is_err() {
        return std::process::ExitCode::from(1);
    }
    if let Some((socket, pid)) = proxy {
        return super::netns::serve(socket, pid);
    }
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "{}", super::netns::READY)
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return std::process::ExitCode::from(1);
    }
    loop {
        std::thread::park();
    }
}
