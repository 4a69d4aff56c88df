//! One decision of the network proxy, as recorded in the transcript and `--json` (the
//! `network` event) and carried in the result of the command that made it.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

/// Decisions kept between two [`Log::take`] calls; past it they are counted only (a command
/// that opens connections in a loop must not grow the agent's memory).
const MAX_KEPT_EVENTS: usize = 200;

/// The longest host and rule an event keeps (in characters; a host name has at most 253).
const MAX_TEXT_CHARS: usize = 300;

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

impl NetworkEvent {
    /// A decision on `host:port`: allowed (by `rule`) or refused (why: `rule`, and what would
    /// allow it); `command` when the caller knows it (else the log's running command).
    #[must_use]
    pub fn decided(
        host: &super::Host,
        port: u16,
        allowed: bool,
        rule: String,
        allow_with: Option<String>,
        command: Option<String>,
    ) -> Self {
        Self {
            host: host.display(),
            port,
            decision: if allowed {
                NetDecision::Allow
            } else {
                NetDecision::Deny
            },
            rule,
            allow_with,
            command,
        }
    }
}

#[derive(Debug, Default)]
struct Record {
    command: Option<String>,
    /// The allow rule that allowed the running command (its own hosts are open).
    rule: Option<String>,
    /// Hosts a person opened for the running command at the prompt (`escalate.network`).
    opened: Option<Arc<super::host::Opening>>,
    events: Vec<NetworkEvent>,
    dropped: usize,
    /// Background processes may connect too (see [`Log::set_shared`]).
    shared: bool,
}

/// The decisions of a run's proxy, shared between the proxy (which writes them) and the agent
/// (which names the running command and takes them after it). Cloning shares it.
#[derive(Debug, Clone)]
pub struct Log {
    record: Arc<Mutex<Record>>,
    /// Bumped whenever the running command changes: the proxy then ends the connections of
    /// the one before (its processes are gone; an origin that never closes must not keep a
    /// connection, and its slot, for the rest of the run) — not those made while background
    /// processes may connect (see [`Log::set_shared`]).
    commands: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Default for Log {
    fn default() -> Self {
        Self {
            record: Arc::default(),
            commands: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }
}

impl Log {
    fn record(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes when the running command does (see [`Log::set_command`]).
    #[must_use]
    pub fn command_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.commands.subscribe()
    }

    /// Records one decision (naming the running command).
    pub fn note(&self, mut event: NetworkEvent) {
        let mut record = self.record();
        if record.events.len() >= MAX_KEPT_EVENTS {
            record.dropped += 1;
            return;
        }
        if event.command.is_none() && !record.shared {
            event.command.clone_from(&record.command);
        }
        bound(&mut event.host);
        bound(&mut event.rule);
        record.events.push(event);
    }

    /// Names the command whose connections come next (its tool call id), for the events.
    /// The connections made so far are ended.
    pub fn set_command(&self, id: Option<String>) {
        self.name(id, None, None);
    }

    /// Names `id` as the running command with what it was granted: `rule`, the allow rule that
    /// allowed it (the hosts it names, `net = [...]`, are open), and `opened`, the hosts a
    /// person opened for it (its `escalate`). They last as long as the returned guard: however
    /// the command ends — done, timed out, failed, or its future dropped by Ctrl+C/Esc — they
    /// are cleared with it, never left for whatever connects next.
    pub fn running(
        &self,
        id: String,
        rule: Option<String>,
        opened: Option<super::host::Opening>,
    ) -> Running<'_> {
        self.name(Some(id.clone()), rule, opened);
        Running { log: self, id }
    }

    fn name(&self, id: Option<String>, rule: Option<String>, opened: Option<super::host::Opening>) {
        {
            let mut record = self.record();
            record.command = id;
            record.rule = rule;
            record.opened = opened.map(Arc::new);
        }
        self.commands.send_modify(|n| *n += 1);
    }

    /// What a person opened for the running command, if anything.
    #[must_use]
    pub fn opened(&self) -> Option<Arc<super::host::Opening>> {
        self.record().opened.clone()
    }

    /// Says whether background processes of the run may connect now (they share the run's
    /// namespace and bridge with the running command): then no connection is asked about
    /// (a host no rule decides is refused) nor recorded under the running command's name.
    pub fn set_shared(&self, shared: bool) {
        self.record().shared = shared;
    }

    /// Whether background processes may connect now (see [`Log::set_shared`]).
    #[must_use]
    pub fn shared(&self) -> bool {
        self.record().shared
    }

    /// The running command's tool call id, when one is named.
    #[must_use]
    pub fn command(&self) -> Option<String> {
        self.record().command.clone()
    }

    /// The allow rule that allowed the running command, if one did.
    #[must_use]
    pub fn command_rule(&self) -> Option<String> {
        self.record().rule.clone()
    }

    /// The decisions since the last call, and how many more were not kept.
    #[must_use]
    pub fn take(&self) -> (Vec<NetworkEvent>, usize) {
        let mut record = self.record();
        let dropped = std::mem::take(&mut record.dropped);
        (std::mem::take(&mut record.events), dropped)
    }
}

/// A running command's grants (see [`Log::running`]); dropping it clears them, unless another
/// command was named since (its grants are its own).
#[must_use = "the command's grants end when this is dropped"]
#[derive(Debug)]
pub struct Running<'a> {
    log: &'a Log,
    id: String,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if self.log.command().as_deref() == Some(self.id.as_str()) {
            self.log.set_command(None);
        }
    }
}

/// Cuts `text` to [`MAX_TEXT_CHARS`] characters, saying so.
fn bound(text: &mut String) {
    if let Some((at, _)) = text.char_indices().nth(MAX_TEXT_CHARS) {
        text.truncate(at);
        text.push('…');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted(log: &Log) -> (Option<String>, Option<String>, bool) {
        (log.command(), log.command_rule(), log.opened().is_some())
    }

    /// A command's rule and opened hosts end with it in every way: the guard dropped in place
    /// (done, timed out, failed) or with its future, cancelled mid-await (Ctrl+C/Esc) — and
    /// a later command's grants are never cleared by an earlier one's guard.
    #[tokio::test]
    async fn a_commands_grants_end_with_it_however_it_ends() {
        let log = Log::default();
        let grant = |id: &str| {
            log.running(
                id.to_owned(),
                Some("rule".to_owned()),
                Some(super::super::host::Opening {
                    hosts: super::super::host::Opened::Any,
                    only: false,
                }),
            )
        };
        let running = grant("c1");
        assert_eq!(
            granted(&log),
            (Some("c1".into()), Some("rule".into()), true)
        );
        drop(running);
        assert_eq!(granted(&log), (None, None, false));

        // Cancelled: the command's future is dropped while it waits.
        let (started, waiting) = tokio::sync::oneshot::channel::<()>();
        let command = async {
            let _running = grant("c2");
            let _ = started.send(());
            std::future::pending::<()>().await;
        };
        tokio::select! {
            () = command => unreachable!(),
            _ = waiting => {}
        }
        assert_eq!(granted(&log), (None, None, false));

        // An earlier command's guard leaves a later command's grants alone.
        let first = grant("c3");
        let second = grant("c4");
        drop(first);
        assert_eq!(
            granted(&log),
            (Some("c4".into()), Some("rule".into()), true)
        );
        drop(second);
        assert_eq!(granted(&log), (None, None, false));
    }

    /// While background processes may connect, a connection is recorded under no command's
    /// name (it may be theirs); otherwise under the running command's (rev5 B4).
    #[test]
    fn connections_while_background_processes_run_name_no_command() {
        let log = Log::default();
        for shared in [false, true, false] {
            log.set_command(Some("call_1".to_owned()));
            log.set_shared(shared);
            log.note(NetworkEvent {
                host: "h.test".to_owned(),
                port: 1,
                decision: NetDecision::Deny,
                rule: String::new(),
                allow_with: None,
                command: None,
            });
            let (events, _) = log.take();
            let named = (!shared).then(|| "call_1".to_owned());
            assert_eq!(events[0].command, named, "shared: {shared}");
            assert_eq!(log.shared(), shared);
        }
    }

    #[test]
    fn events_are_bounded_in_number_and_size() {
        let log = Log::default();
        for n in 0..MAX_KEPT_EVENTS + 5 {
            log.note(NetworkEvent {
                host: "é".repeat(1000 + n),
                port: 1,
                decision: NetDecision::Deny,
                rule: "\u{1b}".repeat(10_000),
                allow_with: None,
                command: None,
            });
        }
        let (events, dropped) = log.take();
        assert_eq!((events.len(), dropped), (MAX_KEPT_EVENTS, 5));
        for event in events {
            assert_eq!(event.host.chars().count(), MAX_TEXT_CHARS + 1);
            assert_eq!(event.rule.chars().count(), MAX_TEXT_CHARS + 1);
        }
    }
}
