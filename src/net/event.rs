//! One decision of the network proxy, as recorded in the transcript and `--json` (the
//! `network` event) and carried in the result of the command that made it.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

/// Decisions kept between two [`Log::take`] calls; past it they are counted only (a command
/// that opens connections in a loop must not grow the agent's memory).
const MAX_KEPT_EVENTS: usize = 1000;

/// Allowed or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetDecision {
    /// The connection was made.
    Allow,
    /// The connection was refused.
    Deny,
}

/// One decision of the proxy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetworkEvent {
    /// The host as decided on (normalised: lower case, IDNA, no trailing dot).
    pub host: String,
    /// The port.
    pub port: u16,
    /// Allowed or refused.
    pub decision: NetDecision,
    /// The rule that decided, or why it was refused.
    pub rule: String,
    /// The setting that would allow it, for a refusal a setting can lift.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_with: Option<String>,
    /// The command (its tool call id) that was running, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

#[derive(Debug, Default)]
struct Record {
    command: Option<String>,
    events: Vec<NetworkEvent>,
    dropped: usize,
    blocked: BTreeSet<String>,
}

/// The decisions of a run's proxy, shared between the proxy (which writes them) and the agent
/// (which names the running command and takes them after it). Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Log(Arc<Mutex<Record>>);

impl Log {
    fn record(&self) -> std::sync::MutexGuard<'_, Record> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records one decision (naming the running command).
    pub fn note(&self, mut event: NetworkEvent) {
        let mut record = self.record();
        if event.decision == NetDecision::Deny {
            record.blocked.insert(event.host.clone());
        }
        if record.events.len() >= MAX_KEPT_EVENTS {
            record.dropped += 1;
            return;
        }
        event.command = event.command.or_else(|| record.command.clone());
        record.events.push(event);
    }

    /// Names the command whose connections come next (its tool call id), for the events.
    pub fn set_command(&self, id: Option<String>) {
        self.record().command = id;
    }

    /// The decisions since the last call, and how many more were not kept.
    #[must_use]
    pub fn take(&self) -> (Vec<NetworkEvent>, usize) {
        let mut record = self.record();
        let dropped = std::mem::take(&mut record.dropped);
        (std::mem::take(&mut record.events), dropped)
    }

    /// The hosts refused so far in this run.
    #[must_use]
    pub fn blocked(&self) -> Vec<String> {
        self.record().blocked.iter().cloned().collect()
    }
}
