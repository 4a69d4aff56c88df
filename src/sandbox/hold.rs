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
//! A holder is shared by the commands of one sandbox only: its key is the command's whole
//! policy (what it may write and read, git's directories, the proxy it bridges to), less what
//! bounds its own processes (CPU, memory) and where the sandbox keeps what it learns. So a
//! closed command never shares a namespace with the bridge, and what mode `auto` let through
//! without a person, what a person approved (`[sandbox] writable`'s extras, git's directories
//! writable) and a read-only inspection never share a `localhost`: a server a person approved
//! would otherwise run, with its wider sandbox, what an auto-allowed command asks of it. The
//! commands of one sandbox share theirs (a dev server and the commands that try it). At most
//! [`MAX_HOLDERS`] per run; past them a command makes its own namespace.

use std::io::{BufRead as _, Read as _, Write as _};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Policy;
use super::helper_args::Joined;

/// The helper's argument that makes it the run's namespace holder (`--hold [SOCKET PID]`).
pub(super) const HOLD_ARG: &str = "--hold";

/// Whether commands share one network namespace per run (an `agent run` or session says so;
/// `agent exec` runs one command, which makes its own).
static SHARED: AtomicBool = AtomicBool::new(false);

/// A holder started for the commands of one sandbox ([`class`]), or why it could not be
/// started (not tried again).
type Started = (Policy, Result<Holder, String>);

/// The most holders a run starts (a run has a handful of sandboxes: the configured one,
/// mode `auto`'s, the inspections', each with or without the proxy).
const MAX_HOLDERS: usize = 8;

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

/// What decides which commands share a namespace: the policy less what bounds the command's
/// own processes and where the sandbox keeps what it learns.
fn class(policy: &Policy) -> Policy {
    Policy {
        limits: super::ResourceLimits::default(),
        cache: None,
        ..policy.clone()
    }
}

/// The `--join` value for a command sandboxed by `policy` (its network through
/// `policy.proxy`, or closed), when commands share a namespace: the namespace of the commands
/// of the same sandbox, its holder started the first time.
pub(super) fn join_arg(policy: &Policy) -> Option<String> {
    if !SHARED.load(Ordering::Relaxed) {
        return None;
    }
    let key = class(policy);
    let mut holders = HOLDERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let index = match holders.iter().position(|(started, _)| *started == key) {
        Some(index) => index,
        None if holders.len() < MAX_HOLDERS => {
            let holder = start(policy.proxy.as_deref());
            holders.push((key, holder));
            holders.len() - 1
        }
        None => return None,
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{ResourceLimits, SandboxMode};
    use std::path::PathBuf;

    /// A change to a command's sandbox.
    type Change = Box<dyn Fn(&mut Policy)>;

    /// Two commands share a namespace exactly when their sandboxes grant the same: generated
    /// over each change of what a command may do (none of which may share) and of what only
    /// bounds its own processes or where the sandbox keeps what it learns (which do).
    #[test]
    fn only_the_commands_of_one_sandbox_share_a_namespace() {
        let work = Path::new("/w");
        let mut configured = Policy::new(
            SandboxMode::WorkspaceWrite,
            false,
            work,
            Path::new("/tmp"),
            &[],
        );
        configured.writable = vec![work.to_path_buf(), PathBuf::from("/extra")];
        let others: Vec<Change> = vec![
            Box::new(|p| p.writable.retain(|dir| dir.starts_with("/w"))),
            Box::new(|p| p.writable.push("/more".into())),
            Box::new(|p| p.read_only.push("/w/ro".into())),
            Box::new(|p| p.git_read_only = true),
            Box::new(|p| p.readable = Some(vec!["/w".into()])),
            Box::new(|p| p.proxy = Some("/state/proxy".into())),
            Box::new(|p| p.network = true),
            Box::new(|p| p.mode = SandboxMode::ReadOnly),
            Box::new(|p| p.hide_secrets = !p.hide_secrets),
            Box::new(|p| p.mounts = !p.mounts),
            Box::new(|p| p.workspace = "/elsewhere".into()),
            Box::new(|p| *p = p.inspection()),
        ];
        let same: Vec<Change> = vec![
            Box::new(|p| p.limits = ResourceLimits::inspection(10, 2048)),
            Box::new(|p| p.cache = Some("/state/agent/sandbox".into())),
        ];
        for (n, change) in others.iter().enumerate() {
            let mut policy = configured.clone();
            change(&mut policy);
            assert_ne!(class(&policy), class(&configured), "change {n}");
            for keep in &same {
                let mut kept = policy.clone();
                keep(&mut kept);
                assert_eq!(class(&kept), class(&policy), "change {n}");
            }
        }
    }
}
