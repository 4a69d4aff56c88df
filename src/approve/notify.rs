//! Calls the person back when a prompt has waited [`AFTER`] for an answer: the terminal bell,
//! or a desktop notification (OSC 9 and OSC 777), as `[ui] notify` says. Where the terminal
//! reports focus (focus events, asked for while a prompt is up), not while it has the focus.
//!
//! The notification's text is fixed printable ASCII: nothing from the model or the command
//! goes into the escape sequence.

use std::io::{IsTerminal as _, Write as _};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossterm::event::Event;

use crate::settings::Notify;

/// How long a prompt waits before it calls the person.
pub const AFTER: Duration = Duration::from_secs(5);

/// The desktop notification's title and text: fixed, printable ASCII.
const TITLE: &str = "agent";
const TEXT: &str = "a question is waiting for your answer";

/// How this process calls: 0 off (until [`configure`]), 1 bell, 2 desktop.
static MODE: AtomicU8 = AtomicU8::new(0);

/// What the terminal last said of its focus while a prompt was up.
static FOCUS: AtomicU8 = AtomicU8::new(Focus::Unknown as u8);

/// The prompt on screen: since when, whether it called already, how many prompts nest.
static WAITING: Mutex<Option<Waiting>> = Mutex::new(None);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Focus {
    Unknown = 0,
    Focused = 1,
    Away = 2,
}

#[derive(Debug)]
struct Waiting {
    since: Instant,
    called: bool,
    depth: u32,
}

/// Sets how prompts call back, once the settings are known. `--json` and a stderr that is not
/// a terminal never call.
pub fn configure(notify: Notify, json: bool) {
    let mode = if json || !std::io::stderr().is_terminal() {
        Notify::Off
    } else {
        notify
    };
    MODE.store(mode_code(mode), Ordering::SeqCst);
}

const fn mode_code(notify: Notify) -> u8 {
    match notify {
        Notify::Off => 0,
        Notify::Bell => 1,
        Notify::Desktop => 2,
    }
}

fn mode() -> Notify {
    match MODE.load(Ordering::SeqCst) {
        1 => Notify::Bell,
        2 => Notify::Desktop,
        _ => Notify::Off,
    }
}

/// The bytes that call the person, for `notify`.
fn signal(notify: Notify) -> String {
    match notify {
        Notify::Off => String::new(),
        Notify::Bell => "\u{7}".to_owned(),
        Notify::Desktop => {
            format!("\u{1b}]9;{TITLE}: {TEXT}\u{7}\u{1b}]777;notify;{TITLE};{TEXT}\u{7}")
        }
    }
}

/// A prompt went up (nested prompts count once): its wait starts, and the terminal is asked
/// to report focus.
pub(super) fn begin() {
    let mut waiting = WAITING.lock().unwrap_or_else(PoisonError::into_inner);
    match waiting.as_mut() {
        Some(open) => open.depth += 1,
        None => {
            *waiting = Some(Waiting {
                since: Instant::now(),
                called: false,
                depth: 1,
            });
            if mode() != Notify::Off {
                let _ = crossterm::execute!(std::io::stderr(), crossterm::event::EnableFocusChange);
            }
        }
    }
}

/// The prompt went down: focus reports stop, and what they said is forgotten.
pub(super) fn end() {
    let mut waiting = WAITING.lock().unwrap_or_else(PoisonError::into_inner);
    let last = match waiting.as_mut() {
        Some(open) if open.depth > 1 => {
            open.depth -= 1;
            false
        }
        Some(_) => true,
        None => false,
    };
    if last {
        *waiting = None;
        FOCUS.store(Focus::Unknown as u8, Ordering::SeqCst);
        if mode() != Notify::Off {
            let _ = crossterm::execute!(std::io::stderr(), crossterm::event::DisableFocusChange);
        }
    }
}

/// Notes a focus report among the events a prompt reads.
pub(super) fn note(event: &Event) {
    let focus = match event {
        Event::FocusGained => Focus::Focused,
        Event::FocusLost => Focus::Away,
        _ => return,
    };
    FOCUS.store(focus as u8, Ordering::SeqCst);
}

/// Called while a prompt waits for a key: calls the person once per prompt, when it has
/// waited [`AFTER`] and the terminal has not said it has the focus.
pub(super) fn tick() {
    let notify = mode();
    if notify == Notify::Off {
        return;
    }
    let mut waiting = WAITING.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(open) = waiting.as_mut() else {
        return;
    };
    let focused = FOCUS.load(Ordering::SeqCst) == Focus::Focused as u8;
    if due(open, Instant::now(), focused) {
        open.called = true;
        let mut stderr = std::io::stderr();
        let _ = stderr.write_all(signal(notify).as_bytes());
        let _ = stderr.flush();
    }
}

/// Whether a prompt waiting as `open` calls now.
fn due(open: &Waiting, now: Instant, focused: bool) -> bool {
    !open.called && !focused && now.duration_since(open.since) >= AFTER
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notification_holds_only_fixed_printable_ascii() {
        assert_eq!(signal(Notify::Off), "");
        assert_eq!(signal(Notify::Bell), "\u{7}");
        let desktop = signal(Notify::Desktop);
        assert!(desktop.starts_with("\u{1b}]9;") && desktop.contains("\u{1b}]777;notify;"));
        // Between the sequences' own bytes (ESC ] … BEL) only printable ASCII.
        for sequence in desktop.split('\u{7}').filter(|s| !s.is_empty()) {
            let body = sequence.strip_prefix("\u{1b}]").expect("an OSC sequence");
            assert!(body.bytes().all(|b| (0x20..0x7f).contains(&b)), "{body:?}");
        }
        for text in [TITLE, TEXT] {
            assert!(!text.contains(';'), "a `;` would split OSC 777's fields");
        }
    }

    #[test]
    fn a_prompt_calls_once_after_the_wait_and_never_while_focused() {
        let since = Instant::now();
        let mut open = Waiting {
            since,
            called: false,
            depth: 1,
        };
        for tenths in 0..120 {
            let now = since + Duration::from_millis(tenths * 100);
            let late = now.duration_since(since) >= AFTER;
            assert_eq!(due(&open, now, false), late, "{tenths}");
            assert!(!due(&open, now, true), "focused, {tenths}");
        }
        open.called = true;
        assert!(!due(&open, since + AFTER * 3, false), "once per prompt");
    }

    #[test]
    fn modes_round_trip_through_their_code() {
        for notify in [Notify::Off, Notify::Bell, Notify::Desktop] {
            MODE.store(mode_code(notify), Ordering::SeqCst);
            assert_eq!(mode(), notify);
        }
        MODE.store(0, Ordering::SeqCst);
    }
}
