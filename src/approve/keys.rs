//! Keys from the terminal, for the prompt and its editors: raw mode (restored on
//! drop), the next key press (cancellable by the task that asked, within
//! [`KEY_POLL`]), the keys that stop the run, and dropping keys typed ahead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// How often a waiting prompt checks whether it was cancelled: short enough
/// that Ctrl+C feels immediate, long enough to cost nothing.
const KEY_POLL: Duration = Duration::from_millis(50);

/// Lets the task that asked stop a prompt waiting for a key, and wait until
/// the prompt has put the terminal back.
#[derive(Debug, Default)]
pub struct Cancel {
    requested: AtomicBool,
    finished: Mutex<bool>,
    changed: Condvar,
}

impl Cancel {
    /// Asks the prompt to stop; it answers [`Answer::Interrupt`](super::Answer::Interrupt).
    pub fn cancel(&self) {
        self.requested.store(true, Ordering::SeqCst);
    }

    /// Whether [`Cancel::cancel`] was called.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// Says the prompt is over and the terminal restored.
    pub fn finish(&self) {
        *self.finished.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.changed.notify_all();
    }

    /// Waits until [`Cancel::finish`] was called, at most `timeout`.
    pub fn wait_finished(&self, timeout: Duration) {
        let finished = self.finished.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = self
            .changed
            .wait_timeout_while(finished, timeout, |finished| !*finished);
    }
}

/// Turns raw mode off again when dropped.
pub(super) struct RawMode;

impl RawMode {
    pub(super) fn enable() -> std::io::Result<Self> {
        crossterm::terminal::enable_raw_mode()?;
        super::notify::begin();
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        super::notify::end();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// What the next key wait produced.
pub(super) enum Next {
    Key(KeyEvent),
    TimeUp,
    Cancelled,
    Failed,
}

/// Esc, Ctrl+C and Ctrl+D deny and end the run.
pub(super) fn stops(key: &KeyEvent) -> bool {
    matches!(key.code, KeyCode::Esc)
        || (matches!(key.code, KeyCode::Char('c' | 'd'))
            && key.modifiers.contains(KeyModifiers::CONTROL))
}

/// The next key press, or why there is none: cancelled, past `until`, or the
/// terminal failed.
pub(super) fn next_key(cancel: &Cancel, until: Option<Instant>) -> Next {
    loop {
        if cancel.is_cancelled() {
            return Next::Cancelled;
        }
        let wait = match until {
            Some(until) => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Next::TimeUp;
                }
                left.min(KEY_POLL)
            }
            None => KEY_POLL,
        };
        super::notify::tick();
        match crossterm::event::poll(wait) {
            Ok(false) => {}
            Ok(true) => match crossterm::event::read() {
                Ok(Event::Key(key)) if key.kind == KeyEventKind::Press => return Next::Key(key),
                Ok(event) => super::notify::note(&event),
                Err(_) => return Next::Failed,
            },
            Err(_) => return Next::Failed,
        }
    }
}

/// Drops keys typed before the question was drawn: the terminal's input
/// queue (Unix) and whatever crossterm already read. Says whether there were any
/// (seen by crossterm; the terminal's queue may have held more).
pub(super) fn discard_type_ahead() -> bool {
    let mut any = matches!(crossterm::event::poll(Duration::ZERO), Ok(true));
    #[cfg(unix)]
    flush_terminal_input();
    while let Ok(true) = crossterm::event::poll(Duration::ZERO) {
        match crossterm::event::read() {
            // A focus report is the terminal's, not a key typed ahead.
            Ok(event @ (Event::FocusGained | Event::FocusLost)) => super::notify::note(&event),
            Ok(_) => any = true,
            Err(_) => break,
        }
    }
    any
}

/// `tcflush(TCIFLUSH)` on the terminal the keys come from.
#[cfg(unix)]
fn flush_terminal_input() {
    use std::io::IsTerminal as _;

    use rustix::termios::{QueueSelector, tcflush};

    if std::io::stdin().is_terminal() {
        let _ = tcflush(std::io::stdin(), QueueSelector::IFlush);
    } else if let Ok(tty) = std::fs::File::open("/dev/tty") {
        let _ = tcflush(&tty, QueueSelector::IFlush);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_prompt_wait_ends_at_once() {
        let cancel = Cancel::default();
        cancel.cancel();
        assert!(matches!(next_key(&cancel, None), Next::Cancelled));
        cancel.finish();
        cancel.wait_finished(Duration::from_secs(5));
    }
}
