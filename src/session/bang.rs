//! `!command` at the start of a line: the person runs a command as `agent exec` would (no
//! policy prompt: they typed it; the same sandbox and output handling, after a snapshot
//! `/undo` can go back to), shown like the model's commands, and its result goes to the
//! model with the next message.

use crate::agent::{self, Outcome};

use super::turn::{TurnEnd, drive, show};
use super::{Session, Stopped, changes};

/// The command of a `!command` line; `None` for any other line (a bare `!` too).
pub(super) fn command(line: &str) -> Option<&str> {
    let command = line.trim().strip_prefix('!')?.trim();
    (!command.is_empty()).then_some(command)
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
        if let Some((result, content)) = ran {
            self.notes_for_model
                .push(agent::typed_note(command, &content));
            // Recorded so a continued session tells the model too: now, or with the first
            // message's `start` when no transcript is open yet.
            let typed = agent::Event::UserCommand {
                id,
                command: command.to_owned(),
                result,
            };
            if self.recorder.transcript.is_some() {
                self.recorder.record(&typed);
            } else {
                self.unrecorded.push(typed);
            }
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
}
