//! A yes/no question answered by one key, as the command prompt is (`agent undo`'s
//! `[y/N]`): keys typed before the question appeared are discarded, `y` says yes, any other
//! key — Enter, `n`, Esc, Ctrl+C — says no, and the answer is echoed after the question.
//! Raw mode is restored on every path.

use std::io::Write as _;

use crossterm::event::KeyCode;

use super::keys::{Cancel, Next, RawMode, discard_type_ahead, next_key};

/// Asks `question` (already ending in `[y/N] `) on stderr and waits for one key. `Err` when
/// the terminal cannot be put in raw mode or read.
///
/// # Errors
/// The terminal failed.
pub fn yes_or_no(question: &str) -> std::io::Result<bool> {
    let raw = RawMode::enable()?;
    // Keys typed before the question was on screen were not typed at it.
    discard_type_ahead();
    let mut stderr = std::io::stderr();
    let _ = write!(stderr, "{}{question}", super::prompt::RESET);
    let _ = stderr.flush();
    let cancel = Cancel::default();
    let answer = match next_key(&cancel, None) {
        Next::Key(key) => Ok(says_yes(key.code)),
        Next::Failed => Err(std::io::Error::other("the terminal stopped answering")),
        Next::TimeUp | Next::Cancelled => Ok(false),
    };
    let said = if matches!(answer, Ok(true)) {
        "yes"
    } else {
        "no"
    };
    let _ = write!(stderr, "{said}\r\n");
    let _ = stderr.flush();
    drop(raw);
    answer
}

/// Only `y` (either case) says yes.
fn says_yes(code: KeyCode) -> bool {
    matches!(code, KeyCode::Char('y' | 'Y'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_y_says_yes() {
        assert!(says_yes(KeyCode::Char('y')));
        assert!(says_yes(KeyCode::Char('Y')));
        for code in [
            KeyCode::Enter,
            KeyCode::Esc,
            KeyCode::Char('n'),
            KeyCode::Char('1'),
            KeyCode::Char(' '),
            KeyCode::Backspace,
        ] {
            assert!(!says_yes(code), "{code:?}");
        }
    }
}
