//! The confirmation prompt itself: draws the question on stderr and reads one
//! key from the terminal in raw mode (restored on every path). `y`/`n` work like
//! `1`/`0` for people used to `[y/N]` prompts. Control and
//! bidirectional-override characters in the command are shown escaped, so
//! what the person reads is exactly what would run.

use std::fmt::Write as _;
use std::io::Write as _;

use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::style::Stylize as _;

/// One question to a person.
#[derive(Debug, Clone)]
pub struct Question {
    /// The exact command.
    pub command: String,
    /// The model's description.
    pub description: String,
    /// Why the policy could not decide.
    pub reason: String,
    /// A protected program (rm, mv, sudo …) appears in it.
    pub destructive: bool,
    /// The prefix "always allow" would save.
    pub prefix: Option<String>,
    /// Use colour.
    pub color: bool,
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `1` or Enter.
    Allow,
    /// `0`.
    Deny,
    /// `a`: allow and save this prefix.
    AlwaysAllow(String),
    /// Esc or Ctrl+C.
    Interrupt,
}

/// Turns raw mode off again when dropped.
struct RawMode;

impl RawMode {
    fn enable() -> std::io::Result<Self> {
        crossterm::terminal::enable_raw_mode().map(|()| Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

impl Question {
    /// The question as the person sees it.
    #[must_use]
    pub fn render(&self) -> String {
        let c = self.color;
        let paint = |text: &str, style: fn(String) -> String| {
            if c {
                style(text.to_owned())
            } else {
                text.to_owned()
            }
        };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}",
            paint("? agent wants to run a command", |s| s.bold().to_string())
        );
        let description = visible(&self.description);
        let _ = writeln!(out, "  {description}");
        for (i, line) in visible(&self.command).split('\n').enumerate() {
            let lead = if i == 0 { "$ " } else { "  " };
            let _ = writeln!(
                out,
                "  {}",
                paint(&format!("{lead}{line}"), |s| s.yellow().bold().to_string())
            );
        }
        if self.destructive {
            let _ = writeln!(
                out,
                "  {}",
                paint(
                    "⚠ destructive: removes, moves or overwrites files, or gains privileges",
                    |s| s.red().bold().to_string()
                )
            );
        }
        let _ = writeln!(
            out,
            "  {}",
            paint(&format!("why: {}", self.reason), |s| s.dim().to_string())
        );
        let mut keys = String::from("  1. Allow (Enter)   0. Deny");
        if let Some(prefix) = &self.prefix {
            let _ = write!(keys, "   a. Always allow \"{}\"", visible(prefix));
        }
        keys.push_str("   Esc: deny and stop");
        let _ = write!(out, "{keys}\n  > ");
        out
    }

    /// Draws the question and waits for a key. Anything going wrong with the
    /// terminal denies.
    #[must_use]
    pub fn ask(self) -> Answer {
        let mut stderr = std::io::stderr();
        let _ = stderr.write_all(self.render().as_bytes());
        let _ = stderr.flush();
        let answer = match RawMode::enable() {
            Ok(raw) => {
                let answer = self.read_key();
                drop(raw);
                answer
            }
            Err(_) => Answer::Deny,
        };
        let said = match &answer {
            Answer::Allow => "allowed".to_owned(),
            Answer::Deny => "denied".to_owned(),
            Answer::AlwaysAllow(prefix) => format!("always allow \"{prefix}\""),
            Answer::Interrupt => "denied; stopping".to_owned(),
        };
        let _ = writeln!(stderr, "{said}");
        answer
    }

    fn read_key(&self) -> Answer {
        loop {
            let Ok(event) = crossterm::event::read() else {
                return Answer::Deny;
            };
            let Event::Key(key) = event else { continue };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            match key.code {
                KeyCode::Char('c' | 'd') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    return Answer::Interrupt;
                }
                KeyCode::Esc => return Answer::Interrupt,
                KeyCode::Char('1' | 'y' | 'Y') | KeyCode::Enter => return Answer::Allow,
                KeyCode::Char('0' | 'n' | 'N') => return Answer::Deny,
                KeyCode::Char('a' | 'A') => {
                    if let Some(prefix) = &self.prefix {
                        return Answer::AlwaysAllow(prefix.clone());
                    }
                }
                _ => {}
            }
        }
    }
}

/// A dim note line on stderr.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "  {text}");
}

/// Escapes what a terminal would hide or reorder: control characters (but
/// newline and tab), and bidirectional overrides.
#[must_use]
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
        if hidden {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn hidden_characters_are_shown() {
        assert_eq!(visible("ls\u{1b}[2K"), "ls\\u{1b}[2K");
        assert_eq!(visible("echo \u{202e}txt.exe"), "echo \\u{202e}txt.exe");
        assert_eq!(visible("a\nb\tc"), "a\nb\tc");
    }

    #[test]
    fn the_question_shows_description_command_and_keys() {
        let question = Question {
            command: "touch F".into(),
            description: "create F".into(),
            reason: "`touch` is not on the read-only list".into(),
            destructive: false,
            prefix: Some("touch".into()),
            color: false,
        };
        assert_eq!(
            question.render(),
            "? agent wants to run a command\n  create F\n  $ touch F\n  why: `touch` is not on the read-only list\n  1. Allow (Enter)   0. Deny   a. Always allow \"touch\"   Esc: deny and stop\n  > "
        );
    }
}
