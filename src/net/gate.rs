//! Deciding on one connection by host name — the one place the proxy (for sandboxed
//! commands) and `web_fetch` (made by the agent itself) decide: the rules ([`Rules::decide_for`],
//! deny first), a person's answer for a host no rule decides (through [`Asking`], at a
//! terminal; without one refused at once, naming the setting), the ports an inside address is
//! reached on, then where the host leads ([`addresses`]: the static answer, the address
//! itself, or the public addresses DNS gives). The caller connects only there.

use std::net::SocketAddr;

use super::ask::{Asking, HostAnswer};
use super::dial::addresses;
use super::host::{Host, Opened};
use super::rules::{Rules, Verdict};

/// Why a connection is refused, and the setting that would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Why (the rule, or what is missing).
    pub why: String,
    /// The setting that would allow it, when one would.
    pub allow_with: Option<String>,
}

/// Where an allowed connection may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The addresses to connect to (nothing else).
    pub addresses: Vec<SocketAddr>,
    /// Whether DNS gave them (then the connection's peer is checked: not this machine).
    pub resolved: bool,
    /// The rule that allowed it, for the event.
    pub rule: String,
}

/// Who asks for the connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asker<'a> {
    /// The person's side, when one can answer.
    pub asking: Option<&'a Asking>,
    /// The allow rule that allowed the running command (its own hosts are open).
    pub command_rule: Option<&'a str>,
    /// The tool call id, for the question.
    pub command: Option<&'a str>,
    /// The URL fetched, for the question (`web_fetch`'s hop).
    pub url: Option<&'a str>,
    /// Hosts no rule decides are allowed by this setting (`web_fetch` in mode `full`); `None`:
    /// asked about, or refused.
    pub open: Option<&'a str>,
    /// Hosts a person opened for the running command at the prompt (`escalate.network`):
    /// allowed where no rule decides (a deny rule still wins).
    pub opened: Option<&'a Opened>,
    /// The running command reaches only `opened` (its own sandbox had the network closed):
    /// no allow rule lets it through and no host is asked about; a deny rule still wins.
    pub only_opened: bool,
    /// The connection may be a background process's (they share the run's namespace and
    /// bridge): a host no rule decides is refused unasked — a question would name the running
    /// command, and a person's yes would open the host to whoever made the connection.
    pub shared: bool,
}

/// The rule an event names for a host a person opened for the command (`escalate.network`).
const OPENED_RULE: &str = "`escalate.network` of this command, allowed at the prompt";

/// Decides on `host:port` and finds where it leads: the addresses to connect to, or the
/// refusal.
///
/// # Errors
/// The refusal: a deny rule, no rule and nobody (or a person's no), a port not open on an
/// inside address, or a name that leads nowhere it may.
pub async fn decide(
    rules: &Rules,
    asker: Asker<'_>,
    host: &Host,
    port: u16,
) -> Result<Allowed, Refusal> {
    let refused = |why: String, allow_with: Option<String>| Refusal { why, allow_with };
    // `"network": true` opens names, not this machine's services past what the rules give.
    let alias = *host == Host::Name(super::HOST_ALIAS.to_owned());
    let opened = asker
        .opened
        .is_some_and(|opened| opened.admits(host) && !(alias && *opened == Opened::Any));
    let rule = match rules.decide_for(host, port, asker.command_rule) {
        Verdict::Deny { rule, allow_with } => {
            return Err(refused(format!("refused by `{rule}`"), allow_with));
        }
        // A command whose own sandbox had the network closed reaches only what a person
        // opened for it: no allow rule, no question.
        _ if asker.only_opened => {
            if !opened {
                let why = if asker.shared {
                    "not opened: while a background process runs, the hosts a person opens \
                     for a command stay closed (its connections cannot be told from the \
                     command's), and this command's own sandbox has the network closed"
                } else {
                    "not among the hosts opened for this command at the prompt (its own \
                     sandbox has the network closed, so `[network] allow` does not apply to it)"
                };
                return Err(refused(why.to_owned(), None));
            }
            // An inside address still opens only its ports.
            if let Some(Verdict::Deny { rule, allow_with }) = rules.port_refused(host, port) {
                return Err(refused(format!("refused by `{rule}`"), allow_with));
            }
            OPENED_RULE.to_owned()
        }
        Verdict::Allow { rule } => rule,
        Verdict::Unknown { allow_with } => {
            let rule = match (asker.open, asker.asking) {
                (Some(open), _) => format!("`{open}`"),
                _ if opened => OPENED_RULE.to_owned(),
                (None, None) => {
                    return Err(refused(
                        "not in `[network] allow`".to_owned(),
                        Some(allow_with),
                    ));
                }
                (None, Some(_)) if asker.shared => {
                    return Err(refused(
                        "not in `[network] allow`; not asked while a background process runs \
                         (its connections cannot be told from the command's)"
                            .to_owned(),
                        Some(allow_with),
                    ));
                }
                (None, Some(asking)) => {
                    let command = asker.command.map(str::to_owned);
                    let url = asker.url.map(str::to_owned);
                    let (answer, fresh) = asking.ask(host, port, command, url).await;
                    let when = if fresh { "" } else { " earlier in this run" };
                    match answer {
                        HostAnswer::Deny => {
                            let why = format!("refused at the prompt{when}");
                            return Err(refused(why, Some(allow_with)));
                        }
                        HostAnswer::NoAnswer => {
                            let why = "not answered at the prompt (this connection only)";
                            return Err(refused(why.to_owned(), Some(allow_with)));
                        }
                        HostAnswer::Once => "allowed once at the prompt".to_owned(),
                        HostAnswer::Run => format!("allowed for this run at the prompt{when}"),
                        HostAnswer::Project => "allowed in this project at the prompt".to_owned(),
                        HostAnswer::Always => "allowed always at the prompt".to_owned(),
                    }
                }
            };
            // Allowed by no rule: an inside address still opens only its ports.
            if let Some(Verdict::Deny { rule, allow_with }) = rules.port_refused(host, port) {
                return Err(refused(format!("refused by `{rule}`"), allow_with));
            }
            rule
        }
    };
    match addresses(rules, host, port).await {
        Ok((addresses, resolved)) => Ok(Allowed {
            addresses,
            resolved,
            rule,
        }),
        Err(why) => Err(refused(
            why,
            Some(format!(
                "[network] hosts = {{ \"{}\" = \"ADDRESS\" }}",
                host.display()
            )),
        )),
    }
}

/// The refusal of a connection whose peer turned out to be this machine (`address`, resolved
/// from `host`).
#[must_use]
pub fn this_machine(host: &Host, address: SocketAddr) -> Refusal {
    Refusal {
        why: format!(
            "`{}` resolves to {}, an address of this machine",
            host.display(),
            address.ip()
        ),
        allow_with: Some(format!(
            "[network] hosts = {{ \"{}\" = \"{address}\" }}",
            host.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::NetworkMode;

    fn rules() -> Rules {
        let mut rules = Rules {
            mode: NetworkMode::Allowlist,
            ..Rules::default()
        };
        rules.add(false, "allowed.test", "user").unwrap();
        rules.add(true, "denied.test", "user").unwrap();
        rules.add_host("allowed.test", "127.0.0.1:8080").unwrap();
        rules.add_host("denied.test", "127.0.0.1:8080").unwrap();
        rules.add_host("other.test", "127.0.0.1:8080").unwrap();
        rules.add_host("inside.test", "10.0.0.1").unwrap();
        rules
    }

    /// While background processes may connect, nobody is asked about a host no rule decides
    /// (the question would name the running command; rev5 B4): refused at once, naming the
    /// setting; what the rules decide stays as it was. Generated over hosts and ports.
    #[tokio::test]
    async fn while_background_processes_may_connect_nobody_is_asked() {
        let rules = rules();
        let (asking, questions) = crate::net::ask::Asking::new();
        for (host, port, allowed) in [
            ("allowed.test", 8080, true),
            ("denied.test", 8080, false),
            ("other.test", 8080, false),
            ("other.test", 443, false),
            ("a1.example", 80, false),
            ("xn--gthub-n2e.com", 443, false),
        ] {
            let asker = Asker {
                asking: Some(&asking),
                command: Some("call_1"),
                shared: true,
                ..Asker::default()
            };
            let host = Host::parse(host).unwrap();
            let decided = decide(&rules, asker, &host, port).await;
            assert_eq!(decided.is_ok(), allowed, "{host:?} {port}: {decided:?}");
            if let Err(refusal) = decided
                && !host.display().starts_with("denied")
            {
                assert!(refusal.why.contains("background process"), "{refusal:?}");
                assert!(refusal.allow_with.is_some(), "{refusal:?}");
            }
            assert!(questions.lock().await.try_recv().is_err(), "{host:?} asked");
        }
    }

    /// Generated over hosts × who asks: deny always wins; an unknown host passes only with
    /// `open` (and then still only on its inside address's port); allowed hosts lead to their
    /// answer.
    #[tokio::test]
    async fn the_rules_decide_before_anyone_is_asked() {
        let rules = rules();
        for open in [None, Some("[network] mode = \"full\"")] {
            let asker = Asker {
                open,
                ..Asker::default()
            };
            for (host, port, allowed) in [
                ("allowed.test", 8080, true),
                ("allowed.test", 22, false),
                ("denied.test", 8080, false),
                ("other.test", 8080, open.is_some()),
                ("other.test", 22, false),
                ("inside.test", 80, false),
                ("127.0.0.1", 8080, false),
            ] {
                let host = Host::parse(host).unwrap();
                let decided = decide(&rules, asker, &host, port).await;
                assert_eq!(
                    decided.is_ok(),
                    allowed,
                    "{host:?} {port} {open:?}: {decided:?}"
                );
                if let Ok(allowed) = decided {
                    assert_eq!(
                        allowed.addresses,
                        vec!["127.0.0.1:8080".parse::<SocketAddr>().unwrap()]
                    );
                    assert!(!allowed.resolved);
                }
            }
        }
        let refusal = decide(
            &rules,
            Asker::default(),
            &Host::parse("new.test").unwrap(),
            443,
        )
        .await
        .unwrap_err();
        assert_eq!(
            refusal.allow_with.as_deref(),
            Some("[network] allow = [\"new.test\"]")
        );
    }

    /// Decides on `host:port` for `asker`, asserting whether it is `allowed`: what it allowed.
    async fn decided_as(
        rules: &Rules,
        asker: Asker<'_>,
        (host, port): (&str, u16),
        allowed: bool,
    ) -> Option<Allowed> {
        let parsed = Host::parse(host).unwrap();
        let decided = decide(rules, asker, &parsed, port).await;
        assert_eq!(
            decided.is_ok(),
            allowed,
            "{:?} {host} {port}: {decided:?}",
            asker.opened
        );
        decided.ok()
    }

    /// What a person opened for one command (`escalate.network`) allows only what no rule
    /// decides: a deny rule still wins, an inside address still opens only its port, and
    /// names it does not list stay refused.
    #[tokio::test]
    async fn an_escalation_opens_only_its_hosts_and_never_past_a_deny() {
        let rules = rules();
        let listed = Opened::Hosts(vec![
            crate::net::Pattern::parse("other.test").unwrap(),
            crate::net::Pattern::parse("denied.test").unwrap(),
        ]);
        for (opened, host, port, allowed) in [
            (&listed, "other.test", 8080, true),
            (&listed, "other.test", 22, false),
            (&listed, "denied.test", 8080, false),
            (&listed, "inside.test", 80, false),
            (&Opened::Any, "other.test", 8080, true),
            (&Opened::Any, "denied.test", 8080, false),
            (&Opened::Any, "127.0.0.1", 8080, false),
            (&Opened::Any, "inside.test", 80, false),
        ] {
            let asker = Asker {
                opened: Some(opened),
                ..Asker::default()
            };
            if let Some(allowed) = decided_as(&rules, asker, (host, port), allowed).await {
                assert!(allowed.rule.contains("escalate.network"), "{allowed:?}");
            }
        }
        // Without it, the same host is refused (no person to ask).
        let other = Host::parse("other.test").unwrap();
        assert!(
            decide(&rules, Asker::default(), &other, 8080)
                .await
                .is_err()
        );
        assert!(!rules.resolvable_opened(&other, None));
        assert!(rules.resolvable_opened(&other, Some(&listed)));
        assert!(!rules.resolvable_opened(&Host::parse("denied.test").unwrap(), Some(&Opened::Any)));
    }

    /// A command whose own sandbox had the network closed (mode `auto`'s) reaches only what a
    /// person opened for it: generated over what was opened × hosts, with a person at hand —
    /// an allowed host not opened is refused, nobody is asked, a deny rule and an inside
    /// address's ports still hold, and `true` opens names but not this machine's services.
    #[tokio::test]
    async fn a_closed_commands_escalation_reaches_only_its_hosts() {
        let mut rules = rules();
        rules.allow_local.push(8080);
        let (asking, questions) = crate::net::ask::Asking::new();
        let listed = Opened::Hosts(vec![
            crate::net::Pattern::parse("other.test").unwrap(),
            crate::net::Pattern::parse("denied.test").unwrap(),
        ]);
        let nothing = Opened::Hosts(Vec::new());
        let alias = crate::net::HOST_ALIAS;
        for (opened, host, port, allowed) in [
            (&listed, "other.test", 8080, true),
            (&listed, "other.test", 22, false),
            (&listed, "allowed.test", 8080, false),
            (&listed, "denied.test", 8080, false),
            (&listed, "new.example", 443, false),
            (&listed, alias, 8080, false),
            (&Opened::Any, "other.test", 8080, true),
            (&Opened::Any, "allowed.test", 8080, true),
            (&Opened::Any, "denied.test", 8080, false),
            (&Opened::Any, "inside.test", 80, false),
            (&Opened::Any, "127.0.0.1", 8080, false),
            (&Opened::Any, alias, 8080, false),
            (&nothing, "allowed.test", 8080, false),
            (&nothing, "other.test", 8080, false),
        ] {
            let asker = Asker {
                asking: Some(&asking),
                command: Some("call_1"),
                opened: Some(opened),
                only_opened: true,
                ..Asker::default()
            };
            if let Some(allowed) = decided_as(&rules, asker, (host, port), allowed).await {
                assert_eq!(allowed.rule, OPENED_RULE, "{host}");
            }
            let parsed = Host::parse(host).unwrap();
            assert!(questions.lock().await.try_recv().is_err(), "{host} asked");
            // Not closed: the rules' allows hold besides what was opened.
            let wider = Asker {
                only_opened: false,
                ..asker
            };
            if host == "allowed.test" && port == 8080 {
                assert!(decide(&rules, wider, &parsed, port).await.is_ok(), "{host}");
            }
            // While a background process runs the refusal says why nothing is open.
            let shared = Asker {
                shared: true,
                ..asker
            };
            if let Err(refusal) = decide(&rules, shared, &parsed, port).await
                && refusal.why.starts_with("not ")
            {
                assert!(refusal.why.contains("background process"), "{refusal:?}");
            }
        }
    }
}
