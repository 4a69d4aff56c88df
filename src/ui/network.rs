//! What the screens say of the network proxy's decisions: one line per refused host as it
//! happens (on stderr, even with -q: like a denial, it is how a person learns what to allow),
//! and at the end of a run how many hosts were blocked.

use std::collections::BTreeSet;

use crate::net::{NetDecision, NetworkEvent};

/// The hosts refused in a run, for its closing line.
#[derive(Debug, Default)]
pub struct Blocked(BTreeSet<String>);

impl Blocked {
    /// Takes note of `event`; the line to show when it is a refusal.
    pub fn see(&mut self, event: &NetworkEvent) -> Option<String> {
        if event.decision != NetDecision::Deny {
            return None;
        }
        self.0.insert(event.host.clone());
        let allow = event
            .allow_with
            .as_deref()
            .map(|setting| format!("; to allow it: `{}`", super::sanitize::escape(setting)))
            .unwrap_or_default();
        Some(format!(
            "agent: network: refused `{}` port {} ({}){allow}",
            super::sanitize::escape(&event.host),
            event.port,
            super::sanitize::escape_prose(&event.rule),
        ))
    }

    /// `agent: network: blocked: 2 hosts (a.test, b.test)`, when any was.
    #[must_use]
    pub fn summary(&self) -> Option<String> {
        let count = self.0.len();
        (count > 0).then(|| {
            let hosts: Vec<String> = self
                .0
                .iter()
                .map(|h| super::sanitize::escape(h).into_owned())
                .collect();
            format!(
                "agent: network: blocked: {count} host{} ({})",
                if count == 1 { "" } else { "s" },
                hosts.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn event(host: &str, decision: NetDecision) -> NetworkEvent {
        NetworkEvent {
            host: host.to_owned(),
            port: 443,
            decision,
            rule: "not in `[network] allow`".to_owned(),
            allow_with: Some(format!("[network] allow = [\"{host}\"]")),
            command: None,
        }
    }

    #[test]
    fn refusals_are_told_and_counted_once_per_host() {
        let mut blocked = Blocked::default();
        assert_eq!(blocked.see(&event("ok.test", NetDecision::Allow)), None);
        assert_eq!(blocked.summary(), None);
        assert_eq!(
            blocked.see(&event("b.test", NetDecision::Deny)).unwrap(),
            "agent: network: refused `b.test` port 443 (not in `[network] allow`); to allow it: \
             `[network] allow = [\"b.test\"]`"
        );
        blocked.see(&event("b.test", NetDecision::Deny));
        blocked.see(&event("a.test", NetDecision::Deny));
        assert_eq!(
            blocked.summary().unwrap(),
            "agent: network: blocked: 2 hosts (a.test, b.test)"
        );
    }

    #[test]
    fn hidden_characters_in_a_host_are_shown_escaped() {
        let mut blocked = Blocked::default();
        let line = blocked
            .see(&event("a\u{1b}[2J.test", NetDecision::Deny))
            .unwrap();
        assert!(!line.contains('\u{1b}'), "{line}");
    }
}
