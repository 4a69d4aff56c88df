//! The person's lines: the session waits at the composer (or takes the next queued
//! message), remembers each line in the history, and hands it to a slash command or sends
//! it as a message.

use crate::Status;
use crate::ui::composer::Action;

use super::{Session, Stopped, bang, slash};

impl Session {
    pub(super) async fn main(&mut self) -> Status {
        if let Err(stopped) = self.start_mcp_or_stop().await {
            return stopped.status;
        }
        if let Some(rebuilt) = &self.resumed {
            let mut shown =
                super::recap::recap(&rebuilt.messages, &rebuilt.typed, &rebuilt.waiting);
            shown.push(format!(
                "agent: going on with the earlier conversation ({} turns)",
                rebuilt.turns
            ));
            self.say(&shown.join("\n"));
        }
        loop {
            let line = match self.pending.pop_front() {
                Some(line) => {
                    self.show_queue();
                    line
                }
                None => match self.idle().await {
                    Ok(Some(line)) => line,
                    Ok(None) => return Status::Success,
                    Err(stopped) => return stopped.status,
                },
            };
            self.remember(&line);
            if let Some(command) = slash::parse(&line) {
                match self.slash(command).await {
                    Ok(true) => {}
                    Ok(false) => return Status::Success,
                    Err(stopped) => return stopped.status,
                }
                continue;
            }
            if let Some(command) = bang::command(&line) {
                if let Err(stopped) = self.bang(&line, command).await {
                    return stopped.status;
                }
                continue;
            }
            let message = slash::message_text(&line);
            if let Err(stopped) = self.message(&message).await {
                return stopped.status;
            }
        }
    }

    fn remember(&mut self, line: &str) {
        self.lock_composer().remember(line);
        if let Some(note) = self.history.add(line) {
            self.say(&format!("agent: warning: {note}"));
        }
    }

    fn show_queue(&self) {
        self.lock_composer()
            .set_queued(self.pending.iter().cloned().collect());
    }

    /// Waits for the next line at the composer; `None`: the person ended the session.
    async fn idle(&mut self) -> Result<Option<String>, Stopped> {
        {
            let mut composer = self.lock_composer();
            composer.set_busy(false);
            composer.set_queued(Vec::new());
            composer.hide();
            composer.show();
        }
        loop {
            tokio::select! {
                event = self.keys.next() => {
                    let Some(event) = event else { return Ok(None) };
                    match self.lock_composer().handle(&event) {
                        Action::Submit(line) => return Ok(Some(line)),
                        Action::Quit => return Ok(None),
                        Action::Interrupt | Action::None => {}
                    }
                }
                stopped = self.stops.recv() => match stopped {
                    Some(stopped) if stopped.interrupt => {}
                    Some(stopped) => return Err(stopped),
                    None => {}
                },
            }
        }
    }
}
