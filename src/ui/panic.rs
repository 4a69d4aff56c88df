//! The agent's panic message: a panic's text may quote bytes a command chose (a request the
//! proxy read, a file name), so it reaches the terminal escaped, never raw: no escape sequence
//! of a command's choosing (window title, colours, clipboard) is ever printed by a bug.
//!
//! While a screen is on the terminal (a [`Screen`] lives), a panic's message waits and is
//! printed when the last screen ends: a panic that is caught (the policy's guard, a task of the
//! runtime) then leaves the terminal as it was — raw mode, the live pane, the composer — and a
//! panic that ends the program is printed after the screens, unwinding, put the terminal back.

use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The screens on the terminal and the messages kept meanwhile.
static DEFERRAL: Deferral = Deferral::new();

/// Most messages kept while a screen is on (a panic repeated in a loop is a bug printed once
/// it has been said enough).
const MAX_WAITING: usize = 16;

/// Replaces the default panic hook with one that prints the message escaped (or keeps it
/// while a screen is on).
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        if let Some(line) = DEFERRAL.report(message(info)) {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }));
}

/// A screen on the terminal, for as long as it lives; the panics' messages kept meanwhile
/// are printed when the last one ends.
#[derive(Debug)]
pub struct Screen(());

impl Screen {
    /// Starts keeping panic messages until this screen (and every other) ends.
    #[must_use]
    pub fn start() -> Self {
        DEFERRAL.start();
        Screen(())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let mut stderr = std::io::stderr().lock();
        for line in DEFERRAL.end() {
            let _ = writeln!(stderr, "{line}");
        }
    }
}

/// How many screens are on, and what waits for them to end.
struct Deferral {
    screens: AtomicUsize,
    waiting: Mutex<Vec<String>>,
}

impl Deferral {
    const fn new() -> Self {
        Deferral {
            screens: AtomicUsize::new(0),
            waiting: Mutex::new(Vec::new()),
        }
    }

    fn start(&self) {
        self.screens.fetch_add(1, Ordering::SeqCst);
    }

    /// The line to print now, or `None` when it waits (a screen is on).
    fn report(&self, line: String) -> Option<String> {
        if self.screens.load(Ordering::SeqCst) == 0 {
            return Some(line);
        }
        let mut waiting = self.waiting();
        match waiting.len() {
            n if n < MAX_WAITING => waiting.push(line),
            MAX_WAITING => waiting.push("agent: more internal errors were not kept".to_owned()),
            _ => {}
        }
        None
    }

    /// One screen ended: what waited, to print, once the last one has.
    fn end(&self) -> Vec<String> {
        if self.screens.fetch_sub(1, Ordering::SeqCst) == 1 {
            std::mem::take(&mut *self.waiting())
        } else {
            Vec::new()
        }
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `agent: internal error at FILE:LINE: MESSAGE`, the message escaped.
fn message(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    let at = info
        .location()
        .map(|at| format!(" at {}:{}", at.file(), at.line()))
        .unwrap_or_default();
    format!(
        "agent: internal error{at} (a bug; please report it): {}",
        super::sanitize::escape(text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever bytes a panic quotes, the printed line holds no control character.
    #[test]
    fn a_panic_message_is_printed_escaped() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let kept = std::sync::Arc::clone(&seen);
        let this = std::thread::current().id();
        let previous = std::panic::take_hook();
        // Other tests may panic meanwhile (on purpose): only this thread's panics are kept.
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == this {
                *kept.lock().unwrap() = message(info);
            }
        }));
        for text in ["\u{1b}]0;TITLE\u{7}", "\u{1b}[31mRED", "a\rb\u{9b}c"] {
            let text = text.to_owned();
            let _ = std::panic::catch_unwind(|| panic!("quoted `{text}`"));
            let line = seen.lock().unwrap().clone();
            assert!(line.contains("quoted"), "{line:?}");
            assert!(
                !line.chars().any(|c| c.is_control() && c != '\n'),
                "{line:?}"
            );
        }
        std::panic::set_hook(previous);
    }

    /// While a screen is on, messages wait (a caught panic leaves the terminal alone); they
    /// are given back, in order, when the last screen ends, and a loop of panics is cut short.
    #[test]
    fn messages_wait_for_the_last_screen() {
        let deferral = Deferral::new();
        assert_eq!(deferral.report("before".into()).as_deref(), Some("before"));
        deferral.start();
        deferral.start();
        assert_eq!(deferral.report("one".into()), None);
        assert_eq!(deferral.report("two".into()), None);
        assert!(deferral.end().is_empty(), "a screen is still on");
        assert_eq!(deferral.end(), ["one", "two"]);
        assert_eq!(deferral.report("after".into()).as_deref(), Some("after"));
        deferral.start();
        for i in 0..100 {
            assert_eq!(deferral.report(format!("{i}")), None);
        }
        let kept = deferral.end();
        assert_eq!(kept.len(), MAX_WAITING + 1);
        assert_eq!(kept[0], "0");
        assert!(kept[MAX_WAITING].contains("not kept"), "{kept:?}");
    }
}
