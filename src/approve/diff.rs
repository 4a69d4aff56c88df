//! The file prompt: a change the model wants to make, shown as a coloured unified diff (a new
//! file as its content) with the path and the +/- line counts, or a read the policy asks about
//! (outside the workspace, a file that may hold secrets). Keys: `1`/`y`/Enter this change (or
//! read), `2` every edit (or this path) for the rest of the run, `0`/`n` deny, `t` deny with a
//! note for the model, Esc or Ctrl+C deny and stop. Key reading, raw mode and the discarding
//! of type-ahead are the command prompt's ([`super::prompt`]); every line of the diff is
//! sanitised, and a diff taller than the screen shows its head and says how much is left out.

use std::fmt::Write as _;
use std::io::Write as _;

use crossterm::event::KeyCode;
use crossterm::style::Stylize as _;

use super::keys::{self, Cancel, Next, RawMode, next_key, stops};
use super::line::{self, Edited};
use super::prompt::{Answer, MAX_NOTE_CHARS, RESET, one_line, why_lines};
use crate::policy::files::Access;
use crate::ui::sanitize;

/// Rows kept free below the question for the answer and a note.
const SPARE_ROWS: usize = 3;
/// Fewest diff rows shown however small the terminal.
const MIN_DIFF_ROWS: usize = 5;

/// One question about a file.
#[derive(Debug, Clone)]
pub struct FileQuestion {
    /// Read or write.
    pub access: Access,
    /// `edit src/lib.rs`, `read /etc/hosts`.
    pub label: String,
    /// Why the policy asks.
    pub reason: String,
    /// The unified diff of a write.
    pub diff: Option<String>,
    /// `+1 −1` for a write.
    pub counts: Option<String>,
    /// Use colour.
    pub color: bool,
}

impl FileQuestion {
    /// The question as shown on a terminal of `columns` × `rows`.
    #[must_use]
    pub fn render(&self, columns: u16, rows: u16) -> String {
        let columns = usize::from(columns).max(20);
        let rows = usize::from(rows);
        let paint = |text: &str, style: fn(String) -> String| {
            if self.color {
                style(text.to_owned())
            } else {
                text.to_owned()
            }
        };
        let title = match self.access {
            Access::Read => "? agent wants to read",
            Access::Write => "? agent wants to change a file",
        };
        let mut out = String::new();
        let _ = writeln!(out, "{}", paint(title, |s| s.bold().to_string()));
        let mut head = format!("  {}", one_line(&self.label));
        if let Some(counts) = &self.counts {
            let _ = write!(head, " · {counts}");
        }
        let _ = writeln!(out, "{}", paint(&head, |s| s.yellow().bold().to_string()));
        // Every line of prose fits the width, broken between words.
        let why = why_lines(&self.reason, columns);
        let keys = super::display::wrap(&self.keys(), columns);
        let hidden = |count: usize| {
            super::display::wrap(
                &format!(
                    "… {count} more lines of the diff not shown (a larger terminal shows more)"
                ),
                columns,
            )
        };
        if let Some(diff) = &self.diff {
            // Title, label, the `why:` lines, the key lines, the answer line.
            let used = 3 + why.len() + keys.len() + SPARE_ROWS;
            let room = rows.saturating_sub(used).max(MIN_DIFF_ROWS);
            let lines: Vec<&str> = diff.lines().collect();
            let shown = if lines.len() > room {
                room.saturating_sub(hidden(lines.len()).len())
            } else {
                lines.len()
            };
            for line in &lines[..shown] {
                let text = fit(&sanitize::escape_command(line), columns);
                let styled = if line.starts_with("+++") || line.starts_with("---") {
                    paint(&text, |s| s.bold().to_string())
                } else if line.starts_with('+') {
                    paint(&text, |s| s.green().to_string())
                } else if line.starts_with('-') {
                    paint(&text, |s| s.red().to_string())
                } else if line.starts_with("@@") {
                    paint(&text, |s| s.cyan().to_string())
                } else {
                    text
                };
                let _ = writeln!(out, "  {styled}");
            }
            if shown < lines.len() {
                for line in hidden(lines.len() - shown) {
                    let _ = writeln!(out, "  {}", paint(&line, |s| s.dim().to_string()));
                }
            }
        }
        for line in &why {
            let _ = writeln!(out, "  {}", paint(line, |s| s.dim().to_string()));
        }
        let _ = write!(out, "  {}\n  > ", keys.join("\n  "));
        out
    }

    fn keys(&self) -> String {
        match self.access {
            Access::Write => {
                "1. Apply this change (Enter)   2. Apply every edit for the rest of this run\n\
                 0. Deny   t. Deny with a note   Esc: deny and stop"
                    .to_owned()
            }
            Access::Read => "1. Allow (Enter)   2. Allow reading it for the rest of this run\n\
                 0. Deny   t. Deny with a note   Esc: deny and stop"
                .to_owned(),
        }
    }

    fn hint(&self) -> &'static str {
        match self.access {
            Access::Write => {
                "press 1 (apply), 2 (every edit this run), 0 (deny), t (deny with a note) or Esc (stop)"
            }
            Access::Read => {
                "press 1 (allow), 2 (this run), 0 (deny), t (deny with a note) or Esc (stop)"
            }
        }
    }

    /// Draws the question and waits for an answer; anything going wrong with the terminal
    /// denies, `cancel` ends the wait with [`Answer::Interrupt`].
    #[must_use]
    pub fn ask(self, cancel: &Cancel) -> Answer {
        let mut stderr = std::io::stderr();
        let (columns, rows) = crossterm::terminal::size().unwrap_or((80, 24));
        let raw = RawMode::enable();
        if raw.is_ok() {
            keys::discard_type_ahead();
        }
        let question = self.render(columns, rows).replace('\n', "\r\n");
        let _ = write!(stderr, "{RESET}{question}");
        let _ = stderr.flush();
        let answer = match raw {
            Ok(_) => self.read_answer(cancel, &mut stderr),
            Err(_) => Answer::Deny,
        };
        let said = match (&answer, self.access) {
            (Answer::Allow, Access::Write) => "applying this change".to_owned(),
            (Answer::AllowForRun, Access::Write) => {
                "applying every edit for the rest of this run".to_owned()
            }
            (Answer::Allow, Access::Read) => "allowed".to_owned(),
            (Answer::AllowForRun, Access::Read) => "allowed for this run".to_owned(),
            (Answer::DenyWithNote(note), _) => format!("denied: \"{}\"", one_line(note)),
            (Answer::Interrupt, _) if cancel.is_cancelled() => "interrupted".to_owned(),
            (Answer::Interrupt, _) => "denied; stopping".to_owned(),
            _ => "denied".to_owned(),
        };
        let _ = write!(stderr, "\r\u{1b}[2K  > {said}\r\n");
        let _ = stderr.flush();
        drop(raw);
        answer
    }

    fn read_answer(&self, cancel: &Cancel, out: &mut std::io::Stderr) -> Answer {
        let show = |out: &mut std::io::Stderr, text: &str| {
            let _ = write!(out, "\r\u{1b}[2K{}", text.replace('\n', "\r\n"));
            let _ = out.flush();
        };
        loop {
            let key = match next_key(cancel, None) {
                Next::Key(key) => key,
                Next::Cancelled => return Answer::Interrupt,
                Next::TimeUp | Next::Failed => return Answer::Deny,
            };
            if stops(&key) {
                return Answer::Interrupt;
            }
            match key.code {
                KeyCode::Char('1' | 'y' | 'Y') | KeyCode::Enter => return Answer::Allow,
                KeyCode::Char('2') => return Answer::AllowForRun,
                KeyCode::Char('0' | 'n' | 'N') => return Answer::Deny,
                KeyCode::Char('t' | 'T') => {
                    show(
                        out,
                        "  a note for the model (Enter sends it, Esc goes back)\n",
                    );
                    match line::edit("note> ", "", MAX_NOTE_CHARS, cancel, out) {
                        Edited::Done(note) if !note.trim().is_empty() => {
                            return Answer::DenyWithNote(note.trim().to_owned());
                        }
                        Edited::Done(_) => show(out, &format!("  no note; {}  > ", self.hint())),
                        Edited::Back => show(out, &format!("  {}  > ", self.hint())),
                        Edited::Stop => return Answer::Interrupt,
                        Edited::Failed => return Answer::Deny,
                    }
                }
                _ => show(out, &format!("  {}  > ", self.hint())),
            }
        }
    }
}

/// A diff line cut to the screen width (after the two-column indent), saying so.
fn fit(line: &str, columns: usize) -> String {
    let room = columns.saturating_sub(3);
    if line.chars().count() <= room {
        return line.to_owned();
    }
    let kept: String = line.chars().take(room.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn question() -> FileQuestion {
        FileQuestion {
            access: Access::Write,
            label: "edit src/lib.rs".into(),
            reason: "edits `src/lib.rs`".into(),
            diff: Some(crate::tools::unified(
                Some("a\nb - c\n"),
                "a\nb + c\n",
                "src/lib.rs",
            )),
            counts: Some("+1 \u{2212}1".into()),
            color: false,
        }
    }

    #[test]
    fn a_change_shows_path_counts_diff_and_keys() {
        assert_eq!(
            question().render(100, 40),
            "? agent wants to change a file
  edit src/lib.rs · +1 \u{2212}1
  --- a/src/lib.rs
  +++ b/src/lib.rs
  @@ -1,2 +1,2 @@
   a
  -b - c
  +b + c
  why: edits `src/lib.rs`
  1. Apply this change (Enter)   2. Apply every edit for the rest of this run
  0. Deny   t. Deny with a note   Esc: deny and stop
  > "
        );
    }

    #[test]
    fn the_diff_is_escaped_coloured_and_fitted() {
        let long: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let question = FileQuestion {
            diff: Some(crate::tools::unified(
                None,
                &format!("\u{1b}[2J{long}"),
                "x",
            )),
            color: true,
            ..question()
        };
        let shown = question.render(80, 24);
        assert!(!shown.contains("\u{1b}[2J"), "{shown}");
        assert!(shown.contains("\\u{1b}[2J"), "{shown}");
        assert!(
            shown.contains("more lines of the diff not shown"),
            "{shown}"
        );
        assert!(shown.lines().count() + SPARE_ROWS <= 24, "{shown}");
        assert!(shown.contains("m+line 1\u{1b}["), "{shown}");
    }

    /// A long reason wraps between words and the diff gives up the rows it takes.
    #[test]
    fn a_long_reason_wraps_and_the_whole_question_still_fits() {
        let long: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let reason = (0..40)
            .map(|i| format!("word{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let question = FileQuestion {
            diff: Some(crate::tools::unified(None, &long, "x")),
            reason: reason.clone(),
            ..question()
        };
        let shown = question.render(60, 24);
        assert!(shown.lines().count() + SPARE_ROWS <= 24, "{shown}");
        for line in shown.lines() {
            assert!(line.chars().count() <= 60, "{line}\n{shown}");
        }
        for word in reason.split(' ') {
            assert!(
                shown.split_whitespace().any(|w| w == word),
                "{word}: {shown}"
            );
        }
    }
}
