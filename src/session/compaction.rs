//! Compacting the session's conversation: the model writes a summary that replaces it,
//! while Esc, Ctrl+C or a signal may stop the summary and leave the conversation as it was.

use crate::agent::{CompactReason, Event};
use crate::ui::sanitize;

use super::{Session, compact};

impl Session {
    /// Replaces the conversation by a summary; says why not when it cannot. Whether it did.
    pub(super) async fn compact(&mut self, reason: CompactReason) -> bool {
        if self.conversation.is_empty() {
            self.say("agent: nothing to compact yet");
            return false;
        }
        self.say("agent: writing a summary of the conversation …");
        let summarized = {
            let Self {
                model,
                conversation,
                keys,
                stops,
                ..
            } = self;
            let work = compact::summarize(model, conversation);
            tokio::pin!(work);
            loop {
                tokio::select! {
                    done = &mut work => break Some(done),
                    event = keys.next() => {
                        if let Some(crossterm::event::Event::Key(key)) = event
                            && (key.code == crossterm::event::KeyCode::Esc
                                || (key.code == crossterm::event::KeyCode::Char('c')
                                    && key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL)))
                        {
                            break None;
                        }
                    }
                    stopped = stops.recv() => if stopped.is_some() { break None },
                }
            }
        };
        match summarized {
            None => {
                self.say("agent: the summary was stopped: the conversation is left as it was");
                false
            }
            Some(Err(error)) => {
                let error = sanitize::escape_prose(&error).into_owned();
                self.say(&format!(
                    "agent: cannot compact the conversation: {error}: /clear starts a new one"
                ));
                false
            }
            Some(Ok((summary, usage))) => {
                if let Some(usage) = usage {
                    self.count(usage);
                    self.size = Some(usage.output);
                }
                self.requests += 1;
                let replaced = self.conversation.len();
                self.conversation = vec![crate::transcript::summary_message(&summary)];
                self.event(Event::Compacted {
                    reason,
                    replaced,
                    summary: Some(summary),
                });
                true
            }
        }
    }
}
