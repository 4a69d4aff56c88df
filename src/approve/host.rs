//! The per-host prompt: a command reached a host no rule allows or denies, and its
//! connection waits while a person answers — one line naming the command, the host and the
//! port. Keys: `1`/`y` this connection, `2` every connection to the host for the rest of the
//! run, `3` this project from now on, `a` always (both saved in the user settings file as
//! `[network] allow`, the project's under its `[projects."<workspace>"]` table), `0`/`n`/Esc
//! refuse (for the rest of the run). Nothing answered within the wait ([`MAX_WAIT`]), or the
//! command ending first, refuses these connections only. Type-ahead is discarded; every text shown is sanitised.

use std::io::Write as _;
use std::time::Instant;

use crossterm::event::KeyCode;

use super::keys::{Cancel, Next, RawMode, discard_type_ahead, next_key, stops};
use super::prompt::{RESET, one_line};
use crate::net::ask::{HostAnswer, MAX_WAIT};

/// What the person is asked about a host.
#[derive(Debug, Clone)]
pub struct HostRequest {
    /// The host, normalised.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The command that reached it.
    pub command: String,
}

/// The keys and what they do, as shown.
const KEYS: &str = "1 once · 2 this run · 3 this project · a always · 0 refuse";

impl HostRequest {
    /// The question's line.
    #[must_use]
    pub fn line(&self) -> String {
        format!(
            "agent: network: `{}` wants `{}` port {}: {KEYS} > ",
            one_line(&self.command),
            one_line(&self.host),
            self.port
        )
    }

    /// Asks on stderr and waits for a key, at most [`MAX_WAIT`] (then refused).
    #[must_use]
    pub fn ask(&self, cancel: &Cancel) -> HostAnswer {
        let Ok(raw) = RawMode::enable() else {
            return HostAnswer::Deny;
        };
        discard_type_ahead();
        let mut stderr = std::io::stderr();
        let _ = write!(stderr, "{RESET}\r\n{}", self.line());
        let _ = stderr.flush();
        let until = Instant::now() + MAX_WAIT;
        let answer = loop {
            let key = match next_key(cancel, Some(until)) {
                Next::Key(key) => key,
                Next::Cancelled | Next::TimeUp | Next::Failed => break HostAnswer::NoAnswer,
            };
            if stops(&key) {
                break HostAnswer::Deny;
            }
            if let Some(answer) = answer_for(key.code) {
                break answer;
            }
        };
        let _ = write!(stderr, "{}\r\n", said(answer));
        let _ = stderr.flush();
        drop(raw);
        answer
    }
}

/// The answer a key gives; `None` for a key that says nothing.
fn answer_for(code: KeyCode) -> Option<HostAnswer> {
    Some(match code {
        KeyCode::Char('1' | 'y' | 'Y') => HostAnswer::Once,
        KeyCode::Char('2') => HostAnswer::Run,
        KeyCode::Char('3') => HostAnswer::Project,
        KeyCode::Char('a' | 'A') => HostAnswer::Always,
        KeyCode::Char('0' | 'n' | 'N') | KeyCode::Esc => HostAnswer::Deny,
        _ => return None,
    })
}

/// The answer, echoed after the question.
fn said(answer: HostAnswer) -> &'static str {
    match answer {
        HostAnswer::Once => "allowed once",
        HostAnswer::Run => "allowed for this run",
        HostAnswer::Project => "allowed in this project",
        HostAnswer::Always => "allowed always",
        HostAnswer::Deny => "refused",
        HostAnswer::NoAnswer => "not answered: refused this time",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_answer_and_others_say_nothing() {
        for (key, answer) in [
            ('1', HostAnswer::Once),
            ('y', HostAnswer::Once),
            ('2', HostAnswer::Run),
            ('3', HostAnswer::Project),
            ('a', HostAnswer::Always),
            ('0', HostAnswer::Deny),
            ('n', HostAnswer::Deny),
        ] {
            assert_eq!(answer_for(KeyCode::Char(key)), Some(answer), "{key}");
        }
        assert_eq!(answer_for(KeyCode::Esc), Some(HostAnswer::Deny));
        for code in [KeyCode::Enter, KeyCode::Char('x'), KeyCode::Char(' ')] {
            assert_eq!(answer_for(code), None, "{code:?}");
        }
    }

    #[test]
    fn the_line_names_command_host_and_port_without_control_bytes() {
        let request = HostRequest {
            host: "new.test".to_owned(),
            port: 443,
            command: "curl \u{1b}]0;x\u{7} https://new.test/\nsecond".to_owned(),
        };
        let line = request.line();
        assert!(line.contains("`new.test` port 443"), "{line}");
        assert!(!line.contains('\u{1b}') && !line.contains('\n'), "{line:?}");
    }
}
