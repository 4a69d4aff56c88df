//! The agent's panic message: a panic's text may quote bytes a command chose (a request the
//! proxy read, a file name), so it reaches the terminal escaped, never raw: no escape sequence
//! of a command's choosing (window title, colours, clipboard) is ever printed by a bug.

use std::io::Write as _;

/// Replaces the default panic hook with one that prints the message escaped.
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(std::io::stderr(), "{}", message(info));
    }));
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
}
