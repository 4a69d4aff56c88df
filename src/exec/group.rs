//! The process groups of the commands running now: each registered while its call runs and
//! killed if the call is dropped, all of them ended (TERM, then KILL) when the agent stops,
//! and one ended on its timeout — through the sandbox helper where it passes signals on.

use std::time::Duration;

use super::process::{self, Kill};

/// Time between SIGTERM and SIGKILL — long enough for a clean shutdown, short
/// enough that a command ignoring TERM doesn't hang the agent.
pub const GRACE_AFTER_TERM: Duration = Duration::from_secs(5);
/// How often to check whether a terminated group has gone.
const KILL_POLL: Duration = Duration::from_millis(20);

/// How long the sandbox helper has to end its command on SIGKILL's behalf before it is killed
/// itself.
const HELPER_FORCE_WAIT: Duration = Duration::from_secs(2);

/// The process groups of the commands running now, so that a signal stopping the
/// agent can end them ([`stop_running`]). Signals are process-wide; so is this list.
static RUNNING: std::sync::Mutex<Vec<Group>> = std::sync::Mutex::new(Vec::new());

/// A running command's process group: its leader, and whether that is the sandbox helper,
/// which passes a polite signal on to the command itself (`sandbox/supervise.rs`): sent to the
/// helper alone, so that it can act before the command sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Group {
    pub(super) pid: u32,
    pub(super) helper: bool,
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
pub(super) struct GroupGuard {
    group: Option<Group>,
}

impl GroupGuard {
    pub(super) fn new(group: Option<Group>) -> Self {
        if let Some(group) = group {
            running().push(group);
        }
        Self { group }
    }

    /// Kills the group if the call is abandoned, without listing it for [`stop_running`]: a
    /// background process, which the run's end stops (`background.rs`), not an interrupt.
    pub(super) fn unlisted(group: Option<Group>) -> Self {
        Self { group }
    }

    /// The shell finished: whatever it left running in its group (`server &`, `sleep 60 &`)
    /// is killed, so no command outlives its call; then nothing is left to track.
    pub(super) fn finish(&mut self) {
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
/// the futures of [`super::run`] when the agent itself is stopping (a signal).
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

/// SIGTERM to the group, then SIGKILL after the grace period if anything of the
/// group survives; returns the shell's exit status.
pub(super) async fn terminate(
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
