//! What the screens say of the network proxy's decisions: one line per refused host as it
//! happens (on stderr, even with -q: like a denial, it is how a person learns what to allow),
//! and at the end of a run how many hosts were blocked.

use std::collections::BTreeSet;

use crate::net::{NetDecision, NetworkEvent};

/// Hosts named one by one, on their lines and in the closing line; past it they are counted
/// (a command refusing a new name in a loop must not flood the terminal or grow the memory).
const MAX_NAMED_HOSTS: usize = 50;

/// The hosts refused in a run, for its closing line.
#[derive(Debug, Default)]
pub struct Blocked {
    named: BTreeSet<String>,
    /// Refusals past the named hosts (hosts, as far as can be told).
    more: usize,
}

impl Blocked {
    /// Takes note of `event`; the line to show when it is the first refusal of its host.
    pub fn see(&mut self, event: &NetworkEvent) -> Option<String> {
        if event.decision != NetDecision::Deny || self.named.contains(&event.host) {
            return None;
        }
        if self.named.len() >= MAX_NAMED_HOSTS {
            self.more += 1;
            return (self.more == 1).then(|| {
                format!("agent: network: more than {MAX_NAMED_HOSTS} hosts refused; no more are told one by one")
            });
        }
        self.named.insert(event.host.clone());
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
        let count = self.named.len() + self.more;
        (count > 0).then(|| {
            let mut hosts: Vec<String> = self
                .named
                .iter()
                .map(|h| super::sanitize::escape(h).into_owned())
                .collect();
            if self.more > 0 {
                hosts.push(format!("and {} more", self.more));
            }
            format!(
                "agent: network: blocked: {}{count} host{} ({})",
                if self.more > 0 { "at least " } else { "" },
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

    /// One line per refused host: the second refusal of the same host says nothing.
    #[test]
    fn a_host_refused_twice_is_told_once() {
        let mut blocked = Blocked::default();
        assert!(blocked.see(&event("b.test", NetDecision::Deny)).is_some());
        assert_eq!(blocked.see(&event("b.test", NetDecision::Deny)), None);
    }

    /// However many hosts are refused, the lines told and the closing line stay bounded.
    #[test]
    fn many_refused_hosts_are_told_in_bounded_lines() {
        let mut blocked = Blocked::default();
        let lines: Vec<String> = (0..10_000)
            .filter_map(|n| blocked.see(&event(&format!("h{n}.test"), NetDecision::Deny)))
            .collect();
        assert_eq!(lines.len(), MAX_NAMED_HOSTS + 1);
        assert!(
            lines.last().unwrap().contains("no more are told"),
            "{lines:?}"
        );
        let summary = blocked.summary().unwrap();
        assert!(
            summary.starts_with("agent: network: blocked: at least 10000 hosts"),
            "{summary}"
        );
        assert!(summary.ends_with(&format!("and {} more)", 10_000 - MAX_NAMED_HOSTS)));
        assert!(summary.len() < 2000, "{summary}");
    }
}
