//! The terminal the session shares with the prompt: the composer and the live pane behind
//! locks, lines printed above the composer, and the screen the confirmation prompt takes
//! over while it asks.

use std::io::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::approve::Screen;
use crate::ui::Tui;
use crate::ui::composer::Composer;
use crate::ui::input::{KeyGate, SessionTerminal};

/// The session's screen while the prompt asks: the composer steps aside and the key reader
/// pauses, so the prompt reads the keys as in `agent run`; afterwards the terminal is put
/// back in the session's mode.
pub struct SessionScreen {
    pub(super) composer: Arc<Mutex<Composer>>,
    pub(super) tui: Arc<Mutex<Tui>>,
    pub(super) gate: KeyGate,
}

impl Screen for SessionScreen {
    fn pause(&mut self) {
        lock(&self.composer).step_aside();
        Screen::pause(&mut Some(Arc::clone(&self.tui)));
        self.gate.pause();
    }

    fn resume(&mut self) {
        let _ = SessionTerminal::raw();
        lock(&self.composer).come_back();
        self.gate.resume();
    }
}

/// A line on stderr (the caller hid the composer).
pub(super) fn say(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
    let _ = stderr.flush();
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `event` is the person stopping a wait: Esc or Ctrl+C.
pub(super) fn stops_a_wait(event: &crossterm::event::Event) -> bool {
    use crossterm::event::{Event, KeyCode, KeyModifiers};
    matches!(event, Event::Key(key)
        if key.code == KeyCode::Esc
            || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL)))
}
