//! Background processes owned by the run: a command started with `background: true` runs on
//! in its sandbox after its call returned (a dev server, a watcher), its output kept in a
//! bounded ring ([`Ring`]), until it ends, is stopped, or the run ends ([`Scope`]): every
//! background process ends with the run. No timeout applies to one; the run's end does.
//!
//! An interrupt (Ctrl+C in a session) stops the running command, not these (`group.rs`); a
//! signal that stops the agent ends the run, and with it them. Each runs only under the Linux
//! sandbox helper, whose PID namespace takes everything the process started with it when it
//! ends (nothing escapes by `setsid`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::cap::Stream;
use super::group::{Group, GroupGuard};
use super::process::{self, Kill};
use super::redact::OutputText;
use super::request::ExecRequest;
use super::result::{ErrorCode, ExecError};
use super::ring::{RING_BYTES, Ring};
use super::streamed::Streamer;

/// Background processes a run may have at once.
pub const MAX_BACKGROUND: usize = 8;

/// How long a stopped process has after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// How long the end of the run waits for the helpers to end their commands.
const END_WAIT: Duration = Duration::from_secs(3);

/// How often the end of the run looks whether they have.
const END_POLL: Duration = Duration::from_millis(20);

/// The run's background processes: the running ones and the last [`MAX_ENDED`] ended (listed
/// with their output).
static PROCESSES: Mutex<Vec<Process>> = Mutex::new(Vec::new());

/// Held while a background process's sandbox is checked: two checks of the workspace's
/// protected paths never overlap (each would take the other's changes for its process's).
static CHECKS: Mutex<()> = Mutex::new(());

/// Ended processes kept listed with their output (the oldest ended are forgotten first, and
/// their rings freed).
const MAX_ENDED: usize = 8;

/// Numbers the run's background processes (`bg1`, …): ids are never reused, also after an
/// ended process is forgotten.
static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Lines of what the sandbox undid kept per process (the oldest go first).
const MAX_UNDONE: usize = 32;

/// A background process's sandbox while it runs: checked around each call ([`check_all`])
/// and finished once it ended.
type Slot = Arc<Mutex<Option<crate::sandbox::Run>>>;

/// One background process.
struct Process {
    id: String,
    command: String,
    group: Option<Group>,
    state: Arc<Mutex<State>>,
    sandbox: Slot,
    ended: tokio::sync::watch::Receiver<bool>,
}

/// What its reader task records.
#[derive(Debug)]
struct State {
    ring: Ring,
    /// How it ended: `exit 0`, `signal 9`, …; `None` while it runs.
    end: Option<String>,
    /// What the sandbox undid after it (changes to the git surfaces).
    undone: Vec<String>,
}

/// What is listed of a background process.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Listed {
    /// Its id (`bg1`, …).
    pub id: String,
    /// The command line.
    pub command: String,
    /// `running`, or how it ended.
    pub state: String,
    /// Bytes of output in all (the last [`RING_BYTES`] are kept).
    pub output_bytes: u64,
}

fn processes() -> std::sync::MutexGuard<'static, Vec<Process>> {
    PROCESSES.lock().unwrap_or_else(PoisonError::into_inner)
}

fn lock<T>(value: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    value.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether any background process of the run is running now.
#[must_use]
pub fn any_running() -> bool {
    processes().iter().any(|p| !*p.ended.borrow())
}

/// Starts `request` in the background (inside a tokio runtime, which must keep running for
/// its output to be read) and returns its id.
///
/// # Errors
/// Without the Linux sandbox (nothing would make sure it ends with the run), past
/// [`MAX_BACKGROUND`] running, or when it cannot start.
pub fn start(request: &ExecRequest) -> Result<String, ExecError> {
    super::check_cwd(&request.cwd)?;
    if request.sandbox.is_none() || !crate::sandbox::HELPER_PASSES_SIGNALS {
        return Err(ExecError::new(
            ErrorCode::Sandbox,
            "background processes run only in the Linux sandbox (there, nothing they start can \
             outlive the run): run the command without `background`"
                .to_owned(),
        ));
    }
    let running = processes().iter().filter(|p| !*p.ended.borrow()).count();
    if running >= MAX_BACKGROUND {
        return Err(ExecError::new(
            ErrorCode::Io,
            format!(
                "{MAX_BACKGROUND} background processes are running already: stop one with the \
                 processes tool first"
            ),
        ));
    }
    let sandbox = super::prepare_sandbox(request)?;
    let mut child = process::command(request, sandbox.as_ref())
        .and_then(|mut command| command.spawn())
        .map_err(|error| {
            ExecError::new(
                ErrorCode::Io,
                format!("cannot start `{}`: {error}", request.shell),
            )
        })?;
    let group = child.id().map(|pid| Group { pid, helper: true });
    let guard = GroupGuard::unlisted(group);
    let state = Arc::new(Mutex::new(State {
        ring: Ring::new(RING_BYTES),
        end: None,
        undone: Vec::new(),
    }));
    let (ended_tx, ended) = tokio::sync::watch::channel(false);
    let sandbox: Slot = Arc::new(Mutex::new(sandbox));
    let id = {
        let mut all = processes();
        forget_ended(&mut all, |p| *p.ended.borrow(), MAX_ENDED);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let id = format!("bg{n}");
        all.push(Process {
            id: id.clone(),
            command: request.command.clone(),
            group,
            state: Arc::clone(&state),
            sandbox: Arc::clone(&sandbox),
            ended,
        });
        id
    };
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let redact = request.redact.clone();
    let mut streamer = Streamer::new(&id);
    tokio::spawn(async move {
        let mut guard = guard;
        let mut output = OutputText::new(&redact);
        let mut stdout = stdout;
        let mut stderr = stderr;
        let (mut out_buf, mut err_buf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
        while stdout.is_some() || stderr.is_some() {
            let (stream, read) = tokio::select! {
                read = super::read_some(&mut stdout, &mut out_buf) => (Stream::Stdout, read),
                read = super::read_some(&mut stderr, &mut err_buf) => (Stream::Stderr, read),
            };
            let bytes = match (stream, read) {
                (_, Ok(0) | Err(_)) => None,
                (Stream::Stdout, Ok(n)) => out_buf.get(..n),
                (Stream::Stderr, Ok(n)) => err_buf.get(..n),
            };
            if bytes.is_none() {
                match stream {
                    Stream::Stdout => stdout = None,
                    Stream::Stderr => stderr = None,
                }
            }
            let text = output.take(stream, bytes);
            streamer.push(stream, text);
            lock(&state).ring.push(text);
        }
        let status = child.wait().await;
        guard.finish();
        while super::foreground_running() {
            tokio::time::sleep(END_POLL).await;
        }
        let undone = {
            let _serial = lock(&CHECKS);
            lock(&sandbox)
                .take()
                .map(crate::sandbox::Run::finish)
                .unwrap_or_default()
        };
        let mut state = lock(&state);
        state.end = Some(describe(status.ok()));
        record(&mut state, undone);
        drop(state);
        let _ = ended_tx.send(true);
    });
    Ok(id)
}

/// Forgets the oldest ended entries of `all` past `keep` ended ones (running ones all stay).
fn forget_ended<T>(all: &mut Vec<T>, ended: impl Fn(&T) -> bool, keep: usize) {
    let mut excess = all.iter().filter(|p| ended(p)).count().saturating_sub(keep);
    all.retain(|p| {
        let forget = excess > 0 && ended(p);
        excess -= usize::from(forget);
        !forget
    });
}

/// Adds what the sandbox undid after a process to its record, keeping the last [`MAX_UNDONE`].
fn record(state: &mut State, undone: Vec<String>) {
    state.undone.extend(undone);
    let excess = state.undone.len().saturating_sub(MAX_UNDONE);
    state.undone.drain(..excess);
}

/// Checks the sandbox of every background process still running, as after a command: undoes
/// what each planted in the workspace's git surfaces since the last check (a `.git/commondir`,
/// a nested repository …) and records them anew. Called around every call of the run while
/// background processes live (not while a call's command runs: its own check covers that
/// time), so nothing they plant lives past the next call — nor runs in the agent's own git
/// or a later command's. Returns what was undone, one line each, naming the process.
#[must_use]
pub fn check_all() -> Vec<String> {
    let slots: Vec<(String, Slot, Arc<Mutex<State>>)> = processes()
        .iter()
        .map(|p| (p.id.clone(), Arc::clone(&p.sandbox), Arc::clone(&p.state)))
        .collect();
    let _serial = lock(&CHECKS);
    let mut lines = Vec::new();
    for (id, slot, state) in slots {
        let undone = lock(&slot)
            .as_mut()
            .map(crate::sandbox::Run::check)
            .unwrap_or_default();
        lines.extend(
            undone
                .iter()
                .map(|what| format!("sandbox: after background process {id}: {what}")),
        );
        record(&mut lock(&state), undone);
    }
    lines
}

/// `exit N` or `signal N`.
fn describe(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(status) => match (status.code(), super::exit_signal(status)) {
            (Some(code), _) => format!("exit {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "ended".to_owned(),
        },
        None => "ended".to_owned(),
    }
}

/// The run's background processes, in the order they were started.
#[must_use]
pub fn list() -> Vec<Listed> {
    processes()
        .iter()
        .map(|p| {
            let state = lock(&p.state);
            Listed {
                id: p.id.clone(),
                command: p.command.clone(),
                state: state.end.clone().unwrap_or_else(|| "running".to_owned()),
                output_bytes: state.ring.total(),
            }
        })
        .collect()
}

/// Process `id`'s listing and the last `tail` bytes of its output (secrets redacted), with
/// what the sandbox undid after it; `None` when there is no such process.
#[must_use]
pub fn output(id: &str, tail: usize) -> Option<(Listed, String, Vec<String>)> {
    let listed = list().into_iter().find(|p| p.id == id)?;
    let all = processes();
    let state = lock(&all.iter().find(|p| p.id == id)?.state);
    Some((
        listed,
        state.ring.tail(tail).to_owned(),
        state.undone.clone(),
    ))
}

/// Stops process `id`: SIGTERM, and SIGKILL after a grace period; returns once it ended.
/// `None` when there is no such process.
pub async fn stop(id: &str) -> Option<Listed> {
    let (group, mut ended) = {
        let all = processes();
        let process = all.iter().find(|p| p.id == id)?;
        (process.group, process.ended.clone())
    };
    if let Some(group) = group.filter(|_| !*ended.borrow()) {
        process::signal_helper(group.pid, Kill::Term);
        let done = tokio::time::timeout(STOP_GRACE, ended.wait_for(|ended| *ended))
            .await
            .is_ok();
        if !done {
            process::signal_helper(group.pid, Kill::Force);
            let _ = ended.wait_for(|ended| *ended).await;
        }
    }
    list().into_iter().find(|p| p.id == id)
}

/// The run's background processes' owner: when it is dropped (the run or session ends,
/// however: its end, a signal, an error), every background process still running is ended
/// (SIGKILL through its helper, whose PID namespace takes all it started), and the run's
/// network namespaces with them. Dropped before the runtime: the processes' sandboxes are
/// checked (when their tasks go with the runtime) after the processes ended.
#[derive(Debug)]
#[must_use]
pub struct Scope(());

impl Default for Scope {
    /// Starts the run's scope: from now on its commands share a network namespace.
    fn default() -> Scope {
        crate::sandbox::share_network_per_run();
        Scope(())
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        end_all();
        crate::sandbox::end_network_per_run();
    }
}

/// Ends every background process still running and waits (bounded) until their helpers are
/// gone; a helper still there then goes with its group.
fn end_all() {
    let groups: Vec<Group> = processes()
        .iter()
        .filter(|p| !*p.ended.borrow())
        .filter_map(|p| p.group)
        .collect();
    for group in &groups {
        process::signal_helper(group.pid, Kill::Force);
    }
    let end = std::time::Instant::now() + END_WAIT;
    while groups.iter().any(|g| process::group_alive(g.pid)) && std::time::Instant::now() < end {
        std::thread::sleep(END_POLL);
    }
    for group in groups {
        process::kill_group(group.pid, Kill::Force);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated over sequences of ended/running entries: at most `keep` ended stay (the
    /// newest), every running one stays, and the order is kept (rev5 B6).
    #[test]
    fn only_the_newest_ended_processes_stay() {
        for bits in 0u32..1 << 12 {
            let all: Vec<(usize, bool)> = (0..12).map(|n| (n, bits >> n & 1 == 1)).collect();
            for keep in [0, 1, 3, MAX_ENDED] {
                let mut kept = all.clone();
                forget_ended(&mut kept, |p| p.1, keep);
                let ended: Vec<usize> = all.iter().filter(|p| p.1).map(|p| p.0).collect();
                let newest = &ended[ended.len().saturating_sub(keep)..];
                let expected: Vec<(usize, bool)> = all
                    .iter()
                    .filter(|p| !p.1 || newest.contains(&p.0))
                    .copied()
                    .collect();
                assert_eq!(kept, expected, "{bits:b} keep {keep}");
            }
        }
    }
}
