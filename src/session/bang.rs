//! `!command` at the start of a line: the person runs a command as `agent exec` would (no
//! policy prompt: they typed it; the same sandbox and output handling, after a snapshot
//! `/undo` can go back to), shown like the model's commands, and its result goes to the
//! model with the next message.

use crate::agent::{self, Outcome};

use super::turn::{TurnEnd, drive, show};
use super::{Session, Stopped, changes};

/// The most of a command's result the next message carries, in characters.
const NOTE_CHARS: usize = 16_000;

/// The command of a `!command` line; `None` for any other line (a bare `!` too).
pub(super) fn command(line: &str) -> Option<&str> {
    let command = line.trim().strip_prefix('!')?.trim();
    (!command.is_empty()).then_some(command)
}

/// What the model is told of a command the person ran: the command and its result, cut at
/// [`NOTE_CHARS`] (the cut said).
fn note(command: &str, content: &str) -> String {
    let mut kept: String = content.chars().take(NOTE_CHARS).collect();
    if content.chars().count() > NOTE_CHARS {
        kept.push_str(&format!(
            "\n[… cut: the result had {} characters]",
            content.chars().count()
        ));
    }
    format!("[agent: the user ran `{command}` themselves with !; its result:]\n{kept}")
}

impl Session {
    /// Runs the person's `!command` (the line as typed echoed first); Ctrl+C or Esc stops it.
    pub(super) async fn bang(&mut self, line: &str, command: &str) -> Result<(), Stopped> {
        self.echo(line);
        if let Some(refusal) = self.config.sandbox.refusal() {
            // As `agent exec` does: where the sandbox is required and missing, nothing runs.
            self.say(&format!("agent: not run: {refusal}"));
            return Ok(());
        }
        let run = self
            .recorder
            .transcript
            .as_ref()
            .map_or_else(|| "unrecorded".to_owned(), |t| t.id().to_owned());
        self.config.snapshots = self.snapshots.recorder(&run);
        self.lock_composer().set_busy(true);
        let id = format!("typed-{}", self.turns);
        let mut ran = None;
        let Self {
            config,
            composer,
            tui,
            keys,
            stops,
            pending,
            turns,
            ..
        } = self;
        let gate = keys.gate();
        let end = {
            let config: &agent::Config = config;
            let mut emit = |event: agent::Event| show(composer, tui, &gate, &event);
            let run = async {
                ran = Some(agent::run_typed(config, &id, command, *turns, &mut emit).await);
                Ok(Outcome::Answered)
            };
            drive(run, keys, stops, composer, tui, pending).await
        };
        if self
            .config
            .snapshots
            .close()
            .is_some_and(|changes| changes.files > 0)
            && let Some(record) = self.config.snapshots.taken()
        {
            self.last_change = Some(changes::LastChange::message(record, line));
        }
        match end {
            TurnEnd::Stopped(stopped) => return Err(stopped),
            TurnEnd::Interrupted => {
                crate::approve::Screen::resume(&mut self.approver.screen);
                self.say("agent: interrupted; the model is not told of it");
            }
            TurnEnd::Finished(_) => {}
        }
        if let Some((_, content)) = ran {
            self.notes_for_model.push(note(command, &content));
            self.say("agent: its output goes to the model with your next message");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_line_that_starts_with_a_bang_runs() {
        assert_eq!(command("!ls -a"), Some("ls -a"));
        assert_eq!(command("  ! cargo test  "), Some("cargo test"));
        for line in ["!", "  !  ", "ls !x", "run it!", "", "/help"] {
            assert_eq!(command(line), None, "{line:?}");
        }
    }

    #[test]
    fn the_note_names_the_command_and_cuts_a_long_result() {
        let short = note("ls", "{\"stdout\":\"a\"}");
        assert!(short.contains("`ls`") && short.ends_with("{\"stdout\":\"a\"}"));
        assert!(!short.contains("cut"));
        for length in [NOTE_CHARS - 1, NOTE_CHARS, NOTE_CHARS + 1, NOTE_CHARS * 3] {
            let long = note("cat big", &"é".repeat(length));
            assert_eq!(long.contains("[… cut"), length > NOTE_CHARS, "{length}");
            assert!(long.chars().filter(|c| *c == 'é').count() <= NOTE_CHARS);
        }
    }
}
