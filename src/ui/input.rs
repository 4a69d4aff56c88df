//! The terminal's keys for an interactive session: one thread reads crossterm events and
//! hands them to the session's task over a channel, so the person can type while a turn
//! runs. It can be paused ([`Keys::pause`]): the confirmation prompt and the live pane's
//! cursor query then read the terminal alone, exactly as in `agent run`.
//!
//! Also the terminal's mode for a session ([`SessionTerminal`]): raw input (keys one by
//! one, no echo, Ctrl+C as a key), output processing kept on (so the conversation's `\n`
//! still starts a new line), bracketed paste on; all of it undone when dropped.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use crossterm::event::Event;

/// How often the reader checks whether it should pause or stop: short enough that the
/// prompt opens at once, long enough to cost nothing.
const POLL: Duration = Duration::from_millis(30);
/// Longest wait for the reader to pause (it pauses within [`POLL`]).
const PAUSE_WAIT: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
struct GateState {
    paused: bool,
    /// The reader is waiting, not reading.
    idle: bool,
    stop: bool,
}

#[derive(Debug, Default)]
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

/// Pauses and resumes the key reader; cheap to clone.
#[derive(Debug, Clone)]
pub struct KeyGate(Arc<Gate>);

impl KeyGate {
    /// Stops reading keys; returns once the reader is waiting.
    pub fn pause(&self) {
        let gate = &self.0;
        let mut state = gate.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.paused = true;
        let _ = gate
            .changed
            .wait_timeout_while(state, PAUSE_WAIT, |state| !state.idle && !state.stop);
    }

    /// Reads keys again.
    pub fn resume(&self) {
        let gate = &self.0;
        gate.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .paused = false;
        gate.changed.notify_all();
    }
}

/// The session's keys.
pub struct Keys {
    events: tokio::sync::mpsc::UnboundedReceiver<Event>,
    gate: KeyGate,
}

impl Keys {
    /// Starts the reader thread.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn start() -> std::io::Result<Self> {
        let (sender, events) = tokio::sync::mpsc::unbounded_channel();
        let gate = KeyGate(Arc::new(Gate::default()));
        let shared = Arc::clone(&gate.0);
        std::thread::Builder::new()
            .name("keys".into())
            .spawn(move || read_keys(&shared, &sender))?;
        Ok(Self { events, gate })
    }

    /// The next event; `None` when the terminal can no longer be read.
    pub async fn next(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    /// The handle that pauses the reader.
    #[must_use]
    pub fn gate(&self) -> KeyGate {
        self.gate.clone()
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        let gate = &self.gate.0;
        gate.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop = true;
        gate.changed.notify_all();
    }
}

fn read_keys(gate: &Gate, sender: &tokio::sync::mpsc::UnboundedSender<Event>) {
    loop {
        {
            let mut state = gate.state.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if state.stop {
                    return;
                }
                if !state.paused {
                    break;
                }
                state.idle = true;
                gate.changed.notify_all();
                state = gate
                    .changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            state.idle = false;
        }
        match crossterm::event::poll(POLL) {
            Ok(false) => {}
            Ok(true) => match crossterm::event::read() {
                Ok(event) => {
                    if sender.send(event).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            Err(_) => return,
        }
    }
}

/// The terminal in a session's mode while this lives.
pub struct SessionTerminal(());

impl SessionTerminal {
    /// Raw input, output processing on, bracketed paste on.
    ///
    /// # Errors
    /// When the terminal refuses raw mode.
    pub fn enter() -> std::io::Result<Self> {
        Self::raw()?;
        let _ = crossterm::execute!(std::io::stderr(), crossterm::event::EnableBracketedPaste);
        Ok(Self(()))
    }

    /// Raw input again after something (the prompt) put the terminal back, output
    /// processing kept on.
    ///
    /// # Errors
    /// When the terminal refuses raw mode.
    pub fn raw() -> std::io::Result<()> {
        crossterm::terminal::enable_raw_mode()?;
        keep_output_processing();
        Ok(())
    }
}

impl Drop for SessionTerminal {
    fn drop(&mut self) {
        let _ = crossterm::execute!(
            std::io::stderr(),
            crossterm::event::DisableBracketedPaste,
            crossterm::cursor::Show
        );
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Turns `OPOST`/`ONLCR` back on after crossterm's raw mode turned them off, so a `\n`
/// written by the conversation's screen returns to the first column.
#[cfg(unix)]
fn keep_output_processing() {
    use rustix::termios::{OptionalActions, OutputModes, tcgetattr, tcsetattr};
    let apply = |fd: std::os::fd::BorrowedFd<'_>| {
        if let Ok(mut termios) = tcgetattr(fd) {
            termios.output_modes |= OutputModes::OPOST | OutputModes::ONLCR;
            let _ = tcsetattr(fd, OptionalActions::Now, &termios);
        }
    };
    use std::io::IsTerminal as _;
    use std::os::fd::AsFd as _;
    if std::io::stdin().is_terminal() {
        apply(std::io::stdin().as_fd());
    } else if let Ok(tty) = std::fs::File::open("/dev/tty") {
        apply(tty.as_fd());
    }
}

#[cfg(not(unix))]
fn keep_output_processing() {}
