//! The session's transcript across messages: every event recorded, a call's output past
//! the cap shown but not recorded, and a write that fails said once.

use std::io::Write as _;

use crate::agent::Event;
use crate::transcript::Transcript;

/// What the transcript needs across messages.
pub(super) struct Recorder {
    pub(super) transcript: Option<Transcript>,
    pub(super) failed: bool,
    /// Characters of the current call's output recorded; output past the cap is shown, not
    /// recorded.
    pub(super) recorded_chars: usize,
    pub(super) max_output_chars: usize,
}

impl Recorder {
    pub(super) fn record(&mut self, event: &Event) {
        match event {
            Event::ToolCall { .. } => self.recorded_chars = 0,
            Event::OutputDelta { text, .. } => {
                self.recorded_chars = self.recorded_chars.saturating_add(text.chars().count());
                if self.recorded_chars > self.max_output_chars {
                    return;
                }
            }
            _ => {}
        }
        if let Some(transcript) = &mut self.transcript
            && let Err(error) = transcript.record(event)
            && !self.failed
        {
            self.failed = true;
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: cannot write the transcript `{}`: {error}: the rest of this \
                 session is not recorded",
                transcript.path().display()
            );
        }
    }
}
