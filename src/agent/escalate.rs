//! The `shell` tool's `escalate` object: a call asks for more than the sandbox gives — the
//! network (every host, or some), or no sandbox at all — with its reason. Escalation is asked
//! for, never assumed: where it would widen what the command gets, a person is asked (one
//! question naming exactly what is asked, and the reason), whatever the rules and the mode say;
//! without a terminal, or in mode `deny`, it is denied. Deny rules deny first. A yes is for this
//! call only and grants exactly what was asked: the hosts through the proxy for this command,
//! or the whole network where no proxy can single them out, or no sandbox. Where the mode and
//! settings already give the command what it asks (the sandbox off, `[network] mode = "full"`
//! outside mode `auto`), the call is decided like any other. The decision itself is
//! `approval`'s (`Loop::decide_escalation`).

use serde_json::Value;

use crate::net::Pattern;
use crate::net::host::{Opened, Opening};
use crate::policy::Mode;
use crate::sandbox::Policy;

/// Most hosts one call may ask for: a few registries, not a list of the internet.
pub const MAX_HOSTS: usize = 10;
/// Longest reason, in characters: a sentence or two.
pub const MAX_REASON_CHARS: usize = 500;

/// What the call asks for, validated.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "Value")]
pub struct Escalate {
    /// The network: every host, or these (as written, each a valid host pattern).
    pub network: Option<Network>,
    /// No sandbox at all.
    pub outside_sandbox: bool,
    /// The model's reason, for the person.
    pub reason: String,
}

/// The network asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// `"network": true`.
    Any,
    /// `"network": ["registry.npmjs.org", "*.github.com"]`, parsed: what the proxy matches,
    /// shown in that form (see [`Pattern::display`]).
    Hosts(Vec<Pattern>),
}

impl TryFrom<Value> for Escalate {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, String> {
        let shape = "`escalate` must be {\"network\"?: true | [\"host\", …], \
                     \"outside_sandbox\"?: true, \"reason\": string}";
        let Value::Object(fields) = value else {
            return Err(format!("{shape}, not {value}"));
        };
        if let Some(unknown) = fields
            .keys()
            .find(|key| !["network", "outside_sandbox", "reason"].contains(&key.as_str()))
        {
            return Err(format!("{shape}: unknown key `{unknown}`"));
        }
        let reason = match fields.get("reason") {
            Some(Value::String(reason)) if !reason.trim().is_empty() => reason.trim().to_owned(),
            _ => return Err(format!("{shape}: `reason` must say why, for the user")),
        };
        if reason.chars().count() > MAX_REASON_CHARS {
            return Err(format!(
                "`escalate.reason` is longer than {MAX_REASON_CHARS} characters: say it shortly"
            ));
        }
        let outside_sandbox = match fields.get("outside_sandbox") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(other) => {
                return Err(format!(
                    "`escalate.outside_sandbox` must be true, not {other}"
                ));
            }
        };
        let network = match fields.get("network") {
            None | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(Network::Any),
            Some(Value::Array(hosts)) => Some(Network::Hosts(hosts_of(hosts)?)),
            Some(other) => {
                return Err(format!(
                    "`escalate.network` must be true or a list of host names, not {other}"
                ));
            }
        };
        if network.is_none() && !outside_sandbox {
            return Err(format!(
                "`escalate` asks for nothing: {shape} (leave it out to stay in the sandbox)"
            ));
        }
        Ok(Self {
            network,
            outside_sandbox,
            reason,
        })
    }
}

/// The host names of `escalate.network`: each a host or `*.name` pattern (not `*`: that is
/// `true`), at most [`MAX_HOSTS`], at least one.
fn hosts_of(hosts: &[Value]) -> Result<Vec<Pattern>, String> {
    if hosts.is_empty() || hosts.len() > MAX_HOSTS {
        return Err(format!(
            "`escalate.network` lists 1 to {MAX_HOSTS} host names (or is true), not {}",
            hosts.len()
        ));
    }
    hosts
        .iter()
        .map(|host| {
            let Value::String(host) = host else {
                return Err(format!("`escalate.network`: {host} is not a host name"));
            };
            match Pattern::parse(host) {
                Ok(Pattern::Any) => Err(
                    "`escalate.network`: `*` is every host; write `\"network\": true`".to_owned(),
                ),
                Ok(pattern) => Ok(pattern),
                Err(why) => Err(format!("`escalate.network`: {why}")),
            }
        })
        .collect()
}

impl Escalate {
    /// What it asks for beyond `base` — the sandbox the command would run in without it
    /// (`None`: none) — in plain words, as a yes grants it from `granted` (the sandbox a
    /// person's yes to the command gives: `base` itself, or wider where mode `auto` closed
    /// the network); empty when `base` already gives it all.
    #[must_use]
    pub fn beyond(&self, base: Option<&Policy>, granted: Option<&Policy>) -> Vec<String> {
        let (Some(base), Some(granted)) = (base, granted) else {
            return Vec::new();
        };
        if self.outside_sandbox {
            return vec!["to run without the sandbox".to_owned()];
        }
        let hosts = match (&self.network, base.network) {
            (None, _) | (_, true) => return Vec::new(),
            (Some(Network::Any), _) => "any host".to_owned(),
            (Some(Network::Hosts(hosts)), _) => hosts
                .iter()
                .map(Pattern::display)
                .collect::<Vec<_>>()
                .join(", "),
        };
        vec![match &self.network {
            _ if granted.network => "with the whole network for this command".to_owned(),
            _ if granted.proxy.is_some() => format!(
                "with network to {hosts}, through the agent's proxy, for this command only \
                 (deny rules still apply)"
            ),
            Some(Network::Hosts(_)) => format!(
                "with the whole network for this command: the sandbox cannot limit it to \
                 {hosts} here (`[network] mode = \"allowlist\"` can)"
            ),
            _ => "with the whole network for this command".to_owned(),
        }]
    }

    /// The sandbox after a person's yes to `beyond`, from `policy` (the one a yes to the
    /// command alone gives), and the hosts the proxy opens for this command.
    #[must_use]
    pub fn apply(&self, policy: Option<Policy>) -> (Option<Policy>, Option<Opened>) {
        let Some(mut policy) = policy else {
            return (None, None);
        };
        if self.outside_sandbox {
            return (None, None);
        }
        match &self.network {
            Some(_) if policy.network => (Some(policy), None),
            Some(network) if policy.proxy.is_some() => {
                let opened = match network {
                    Network::Any => Opened::Any,
                    Network::Hosts(hosts) => Opened::Hosts(hosts.clone()),
                };
                (Some(policy), Some(opened))
            }
            Some(_) => {
                policy.network = true;
                (Some(policy), None)
            }
            None => (Some(policy), None),
        }
    }

    /// The plain text of the question: what the command asks for, and the model's reason.
    pub(super) fn asks(&self, beyond: &[String]) -> String {
        format!(
            "this command asks {}; the model's reason: \"{}\"",
            beyond.join(" and "),
            self.reason
        )
    }
}

/// The sandbox a yes to an escalation starts from, before [`Escalate::apply`]: `base`, the
/// one the command would have had, with only the configured means of limiting the network to
/// hosts (`configured`'s allowlist proxy) where `base` closed the network — nothing else of
/// the configured sandbox (mode `auto`'s narrower writes and read-only git stay).
#[must_use]
pub fn granting(base: Option<Policy>, configured: Option<&Policy>) -> Option<Policy> {
    let mut policy = base?;
    if let Some(configured) = configured.filter(|_| !policy.network && policy.proxy.is_none()) {
        policy.proxy.clone_from(&configured.proxy);
        policy.proxy_door = configured.proxy_door;
    }
    Some(policy)
}

/// What a yes opens through the proxy for the command: `hosts`, and nothing else where `base`,
/// the sandbox it would have had, closed the network (mode `auto`'s, an inspection's) — not
/// what `[network] allow` allows, which that sandbox never reached.
#[must_use]
pub fn opening(hosts: Opened, base: Option<&Policy>) -> Opening {
    Opening {
        hosts,
        only: base.is_some_and(|base| !base.network && base.proxy.is_none()),
    }
}

/// What a result the sandbox likely caused tells the model about `escalate`: it may ask,
/// where a person can answer; otherwise it should tell the user.
#[must_use]
pub fn hint(can_ask: Result<(), &str>, mode: Mode) -> String {
    match can_ask {
        Ok(()) if mode != Mode::Deny => "if the task needs what the sandbox refused, you may \
             call `shell` again with this command and `\"escalate\": {\"network\": [\"host\"] or \
             true, \"outside_sandbox\": true, \"reason\": \"why\"}` (ask only for what it \
             needs): the user is asked and may allow it once. Otherwise work within the sandbox"
            .to_owned(),
        Ok(()) => "mode `deny` never asks, so `escalate` is denied: tell the user what needs \
             the sandbox lifted"
            .to_owned(),
        Err(why) => format!(
            "nobody can approve an `escalate` here ({why}): do not retry with it; tell the \
             user what needs the sandbox lifted"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Host;
    use pretty_assertions::assert_eq;

    fn parsed(value: Value) -> Result<Escalate, String> {
        Escalate::try_from(value)
    }

    #[test]
    fn well_formed_escalations_parse() {
        let escalate = parsed(serde_json::json!({
            "network": ["registry.npmjs.org", "*.github.com"], "reason": " npm install "
        }))
        .unwrap();
        assert_eq!(
            escalate,
            Escalate {
                network: Some(Network::Hosts(vec![
                    Pattern::parse("registry.npmjs.org").unwrap(),
                    Pattern::parse("*.github.com").unwrap()
                ])),
                outside_sandbox: false,
                reason: "npm install".into(),
            }
        );
        let escalate =
            parsed(serde_json::json!({"outside_sandbox": true, "network": true, "reason": "x"}))
                .unwrap();
        assert_eq!(escalate.network, Some(Network::Any));
        assert!(escalate.outside_sandbox);
    }

    /// Every malformed shape is refused with a message naming what is wrong.
    #[test]
    fn malformed_escalations_are_refused_clearly() {
        let long = "r".repeat(MAX_REASON_CHARS + 1);
        let many: Vec<String> = (0..=MAX_HOSTS).map(|n| format!("h{n}.test")).collect();
        for (value, says) in [
            (serde_json::json!(true), "must be"),
            (serde_json::json!({"network": true}), "`reason`"),
            (
                serde_json::json!({"network": true, "reason": "  "}),
                "`reason`",
            ),
            (
                serde_json::json!({"network": true, "reason": 1}),
                "`reason`",
            ),
            (
                serde_json::json!({"network": true, "reason": long}),
                "longer than",
            ),
            (
                serde_json::json!({"network": true, "reason": "x", "sudo": true}),
                "unknown key `sudo`",
            ),
            (serde_json::json!({"reason": "x"}), "asks for nothing"),
            (
                serde_json::json!({"network": false, "reason": "x"}),
                "asks for nothing",
            ),
            (
                serde_json::json!({"outside_sandbox": "yes", "reason": "x"}),
                "outside_sandbox",
            ),
            (
                serde_json::json!({"network": "github.com", "reason": "x"}),
                "true or a list",
            ),
            (serde_json::json!({"network": [], "reason": "x"}), "1 to"),
            (serde_json::json!({"network": many, "reason": "x"}), "1 to"),
            (
                serde_json::json!({"network": ["*"], "reason": "x"}),
                "every host",
            ),
            (
                serde_json::json!({"network": [3], "reason": "x"}),
                "not a host name",
            ),
            (
                serde_json::json!({"network": ["a b"], "reason": "x"}),
                "not a plain host name",
            ),
            (
                serde_json::json!({"network": ["x@evil.test"], "reason": "x"}),
                "not a plain host name",
            ),
            (
                serde_json::json!({"network": ["evil.test:22"], "reason": "x"}),
                "not a plain host name",
            ),
            (serde_json::json!({"network": [""], "reason": "x"}), "empty"),
        ] {
            let error = parsed(value.clone()).unwrap_err();
            assert!(error.contains(says), "{value}: {error}");
        }
    }

    fn policy(network: bool, proxy: bool) -> Policy {
        let mut policy = crate::sandbox::Sandbox::off().policy;
        policy.network = network;
        policy.proxy = proxy.then(|| "/run/proxy".into());
        policy
    }

    /// Generated over what is asked × the sandbox: nothing widens without saying so, and what
    /// a yes applies is exactly what the question said.
    #[test]
    fn what_is_asked_is_what_a_yes_grants() {
        let networks = [
            None,
            Some(Network::Any),
            Some(Network::Hosts(vec![
                Pattern::parse("registry.npmjs.org").unwrap(),
            ])),
        ];
        let configured = [
            None,
            Some(policy(false, false)),
            Some(policy(false, true)),
            Some(policy(true, false)),
        ];
        // As configured, and as mode `auto` narrows it (no network, no proxy).
        let bases: Vec<(Option<Policy>, Option<Policy>)> = configured
            .iter()
            .flat_map(|granted| {
                let auto = granted.as_ref().map(|policy| Policy {
                    network: false,
                    proxy: None,
                    ..policy.clone()
                });
                [(granted.clone(), granted.clone()), (auto, granted.clone())]
            })
            .collect();
        for network in &networks {
            for outside_sandbox in [false, true] {
                if network.is_none() && !outside_sandbox {
                    continue;
                }
                let escalate = Escalate {
                    network: network.clone(),
                    outside_sandbox,
                    reason: "r".into(),
                };
                for (base, granted) in &bases {
                    let beyond = escalate.beyond(base.as_ref(), granted.as_ref());
                    let (after, opened) = escalate.apply(granted.clone());
                    let case = format!("{network:?} {outside_sandbox} {base:?} {granted:?}");
                    let said = beyond.join(" ");
                    // Nothing said: nothing changes (what runs is the base, as before).
                    if beyond.is_empty() {
                        assert_eq!(base, granted, "{case}");
                        assert_eq!(&after, base, "{case}");
                        assert_eq!(opened, None, "{case}");
                        continue;
                    }
                    match (&after, &opened) {
                        (None, _) => assert!(said.contains("without the sandbox"), "{case}"),
                        (Some(after), Some(opened)) => {
                            assert!(said.contains("through the agent's proxy"), "{case}");
                            assert!(!after.network, "{case}");
                            let any = matches!(opened, Opened::Any);
                            assert_eq!(any, said.contains("any host"), "{case}");
                            let npm = Host::parse("registry.npmjs.org").unwrap();
                            assert!(opened.admits(&npm), "{case}");
                            assert_eq!(
                                opened.admits(&Host::parse("evil.test").unwrap()),
                                any,
                                "{case}"
                            );
                        }
                        (Some(after), None) => {
                            assert!(after.network, "{case}");
                            assert!(said.contains("the whole network"), "{case}");
                        }
                    }
                }
            }
        }
    }

    /// The question names each host as the proxy will match it: a Unicode look-alike
    /// (`gіthub.com`, Cyrillic `і`) is shown as its punycode, never as written; and the name
    /// shown is the name a yes opens (read back, it is the same pattern).
    #[test]
    fn the_question_names_hosts_as_the_proxy_matches_them() {
        let proxied = policy(false, true);
        for raw in [
            "gіthub.com",
            "*.gіthub.com",
            "GitHub.com",
            "github.com.",
            " registry.npmjs.org ",
            "раураl.com",
            "bücher.example",
            "*.Example.ORG",
            "127.0.0.1",
            "registry.npmjs.org",
        ] {
            let escalate = parsed(serde_json::json!({"network": [raw], "reason": "x"})).unwrap();
            let said = escalate.beyond(Some(&proxied), Some(&proxied)).join(" ");
            let pattern = Pattern::parse(raw).unwrap();
            let shown = pattern.display();
            assert!(shown.is_ascii(), "{raw}: {shown}");
            assert!(
                said.contains(&format!("network to {shown},")),
                "{raw}: {said}"
            );
            if raw.trim() != shown {
                assert!(!said.contains(raw.trim()), "{raw}: {said}");
            }
            assert_eq!(Pattern::parse(&shown), Ok(pattern.clone()), "{raw}");
            let (_, opened) = escalate.apply(Some(proxied.clone()));
            assert_eq!(opened, Some(Opened::Hosts(vec![pattern])), "{raw}");
        }
        let homograph =
            parsed(serde_json::json!({"network": ["gіthub.com"], "reason": "x"})).unwrap();
        let said = homograph.beyond(Some(&proxied), Some(&proxied)).join(" ");
        assert!(said.contains("xn--gthub-n2e.com"), "{said}");
    }

    /// A yes adds exactly what was asked to the sandbox the command would have had: generated
    /// over the configured sandbox × how the command would have run (as configured, as mode
    /// `auto` narrows it, as an inspection) × what is asked, everything but the network (and
    /// the proxy that limits it) stays as the command would have had it — `auto`'s narrower
    /// writes and read-only git directories included.
    #[test]
    fn a_yes_adds_only_what_was_asked_to_the_commands_own_sandbox() {
        let asks = [
            (Some(Network::Any), false),
            (
                Some(Network::Hosts(vec![Pattern::parse("esc.test").unwrap()])),
                false,
            ),
            (None, true),
        ];
        for (network, proxy) in [(false, false), (false, true), (true, false)] {
            let mut configured = policy(network, proxy);
            configured.proxy_door = proxy.then_some(50123);
            configured.writable = vec![configured.workspace.join("sub"), "/elsewhere/extra".into()];
            configured.git_read_only = false;
            let plain = [
                configured.clone(),
                crate::agent::auto::auto_policy(&configured),
                configured.inspection(),
            ];
            for base in plain {
                for (asked, outside_sandbox) in &asks {
                    let escalate = Escalate {
                        network: asked.clone(),
                        outside_sandbox: *outside_sandbox,
                        reason: "r".into(),
                    };
                    let start = granting(Some(base.clone()), Some(&configured));
                    let (after, opened) = escalate.apply(start);
                    let case = format!("{asked:?} {outside_sandbox} {base:?}");
                    let Some(after) = after else {
                        assert!(outside_sandbox, "{case}");
                        continue;
                    };
                    let unchanged = Policy {
                        network: base.network,
                        proxy: base.proxy.clone(),
                        proxy_door: base.proxy_door,
                        ..after.clone()
                    };
                    assert_eq!(unchanged, base, "{case}");
                    if base.network {
                        assert_eq!((&after, &opened), (&base, &None), "{case}");
                    } else if proxy {
                        assert!(!after.network && after.proxy.is_some(), "{case}");
                        assert_eq!(after.proxy_door, Some(50123), "{case}");
                        assert!(opened.is_some(), "{case}");
                    } else {
                        assert!(after.network && after.proxy.is_none(), "{case}");
                        assert_eq!(opened, None, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_hint_offers_escalate_only_where_someone_can_answer() {
        assert!(hint(Ok(()), Mode::Ask).contains("\"escalate\""));
        assert!(hint(Ok(()), Mode::Auto).contains("\"escalate\""));
        assert!(hint(Ok(()), Mode::Deny).contains("never asks"));
        let ci = hint(Err("CI is set"), Mode::Auto);
        assert!(
            ci.contains("CI is set") && ci.contains("do not retry"),
            "{ci}"
        );
    }
}
