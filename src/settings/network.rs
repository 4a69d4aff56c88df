//! `[network]`: how sandboxed commands reach the network — the mode, allowed and denied host
//! patterns, presets, this machine's ports (`allow_local`) and static `hosts` answers — read
//! from a settings file (each value checked as it is read, so a bad pattern names its line),
//! merged with where each came from, and turned into the proxy's [`Rules`]. A project file may
//! only narrow it: a stricter mode and more deny patterns; everything else it says is reported
//! and ignored. The old `[sandbox] network = true` is mode `full`.

use toml_edit::Item;

use super::{Origin, Sourced};
use crate::net::{NetworkMode, Pattern, Rules, rules::preset_hosts};

/// The keys of `[network]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NetKey {
    Mode,
    Allow,
    Deny,
    Presets,
    AllowLocal,
    Hosts,
    WebFetch,
}

/// An allow rule's own hosts (`{ command = "npm install", net = ["registry.npmjs.org"] }` in
/// `[permissions.commands] allow`): open for the commands that rule allows, no other.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RuleHosts {
    /// The rule (a command prefix), as written.
    pub command: String,
    /// Host patterns, as `[network] allow` takes them.
    pub net: Vec<String>,
}

/// Reads an allow rule written as an inline table: `command` (the prefix) and `net` (host
/// patterns), nothing else; the error says what it must be.
pub(crate) fn read_rule_hosts(table: &toml_edit::InlineTable) -> Result<RuleHosts, String> {
    let form = "a command prefix, or { command = \"npm install\", net = [\"registry.npmjs.org\"] }";
    if let Some((key, _)) = table
        .iter()
        .find(|(key, _)| !matches!(*key, "command" | "net"))
    {
        return Err(format!("{form}; `{key}` is not a key of it"));
    }
    let command = table
        .get("command")
        .and_then(toml_edit::Value::as_str)
        .filter(|command| !command.trim().is_empty())
        .ok_or_else(|| format!("{form}: `command` is missing"))?;
    let net = table
        .get("net")
        .and_then(toml_edit::Value::as_array)
        .ok_or_else(|| format!("{form}: `net` is missing"))?
        .iter()
        .map(|host| {
            let host = host
                .as_str()
                .ok_or_else(|| format!("{form}: `net` is a list of host patterns"))?;
            Pattern::parse(host).map_err(|why| format!("`net`: {why}"))?;
            Ok(host.trim().to_owned())
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(RuleHosts {
        command: command.trim().to_owned(),
        net,
    })
}

/// A checked `[network]` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NetValue {
    Mode(NetworkMode),
    Allow(Vec<String>),
    Deny(Vec<String>),
    Presets(Vec<String>),
    AllowLocal(Vec<u16>),
    Hosts(Vec<(String, String)>),
    WebFetch(bool),
}

/// Reads the value of `key`; the error says what it must be (and which entry is wrong).
pub(crate) fn read_value(key: NetKey, item: &Item) -> Result<NetValue, String> {
    let strings = || -> Result<Vec<String>, String> {
        let array = item
            .as_array()
            .ok_or_else(|| "a list of strings".to_owned())?;
        array
            .iter()
            .map(|value| {
                value
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| "a list of strings".to_owned())
            })
            .collect()
    };
    let patterns = || -> Result<Vec<String>, String> {
        let list = strings()?;
        for pattern in &list {
            Pattern::parse(pattern).map_err(|why| {
                format!("host patterns (`example.com`, `*.example.com`, an address): {why}")
            })?;
        }
        Ok(list)
    };
    match key {
        NetKey::Mode => item
            .as_str()
            .and_then(NetworkMode::parse)
            .map(NetValue::Mode)
            .ok_or_else(|| "one of `off`, `allowlist`, `full`".to_owned()),
        NetKey::Allow => patterns().map(NetValue::Allow),
        NetKey::Deny => patterns().map(NetValue::Deny),
        NetKey::Presets => {
            let list = strings()?;
            for name in &list {
                preset_hosts(name)?;
            }
            Ok(NetValue::Presets(list))
        }
        NetKey::AllowLocal => {
            let wrong = || "a list of ports (1 to 65535)".to_owned();
            let array = item.as_array().ok_or_else(wrong)?;
            array
                .iter()
                .map(|value| {
                    value
                        .as_integer()
                        .and_then(|n| u16::try_from(n).ok())
                        .filter(|port| *port != 0)
                        .ok_or_else(wrong)
                })
                .collect::<Result<_, _>>()
                .map(NetValue::AllowLocal)
        }
        NetKey::WebFetch => item
            .as_bool()
            .map(NetValue::WebFetch)
            .ok_or_else(|| "true or false".to_owned()),
        NetKey::Hosts => {
            let wrong = "a table of host names and addresses ({ \"api.test\" = \"127.0.0.1\" })";
            let table = item.as_table_like().ok_or_else(|| wrong.to_owned())?;
            let mut check = Rules::default();
            table
                .iter()
                .map(|(name, value)| {
                    let address = value.as_str().ok_or_else(|| wrong.to_owned())?;
                    check
                        .add_host(name, address)
                        .map_err(|why| format!("{wrong}: {why}"))?;
                    Ok((name.to_owned(), address.to_owned()))
                })
                .collect::<Result<_, String>>()
                .map(NetValue::Hosts)
        }
    }
}

/// `[network]` merged, each value with where it came from.
#[derive(Debug, Clone)]
pub struct NetworkSettings {
    /// The mode (`[network] mode`, or `[sandbox] network`/`--network`: `full`).
    pub mode: Sourced<NetworkMode>,
    /// Allowed host patterns.
    pub allow: Vec<Sourced<String>>,
    /// Denied host patterns (every layer's; they win).
    pub deny: Vec<Sourced<String>>,
    /// Presets whose hosts are allowed.
    pub presets: Vec<Sourced<String>>,
    /// Ports of this machine reachable as `host.agent.internal`.
    pub allow_local: Vec<Sourced<u16>>,
    /// Static answers before DNS.
    pub hosts: Vec<Sourced<(String, String)>>,
    /// Allow rules' own hosts (`[permissions.commands] allow`, user file and profiles only).
    pub rule_hosts: Vec<Sourced<RuleHosts>>,
    /// `web_fetch` offered even in mode `off` (`[network] web_fetch = true`; then only
    /// allowed hosts, or those a person allows at the prompt); `false` never offers it.
    pub web_fetch: Option<Sourced<bool>>,
}

impl NetworkSettings {
    /// Before any layer: no network.
    #[must_use]
    pub fn built_in() -> Self {
        Self {
            mode: Sourced {
                value: NetworkMode::Off,
                origin: Origin::Default(""),
            },
            allow: Vec::new(),
            deny: Vec::new(),
            presets: Vec::new(),
            allow_local: Vec::new(),
            hosts: Vec::new(),
            rule_hosts: Vec::new(),
            web_fetch: None,
        }
    }

    /// Applies one value from a layer (`origin`).
    pub(crate) fn apply(&mut self, value: &NetValue, origin: &Origin) {
        let each = |list: &[String]| -> Vec<Sourced<String>> {
            list.iter()
                .map(|value| Sourced {
                    value: value.trim().to_owned(),
                    origin: origin.clone(),
                })
                .collect()
        };
        match value {
            NetValue::Mode(mode) => {
                self.mode = Sourced {
                    value: *mode,
                    origin: origin.clone(),
                };
            }
            NetValue::Allow(list) => self.allow.extend(each(list)),
            NetValue::Deny(list) => self.deny.extend(each(list)),
            NetValue::Presets(list) => self.presets.extend(each(list)),
            NetValue::AllowLocal(ports) => {
                self.allow_local.extend(ports.iter().map(|port| Sourced {
                    value: *port,
                    origin: origin.clone(),
                }));
            }
            NetValue::WebFetch(on) => {
                self.web_fetch = Some(Sourced {
                    value: *on,
                    origin: origin.clone(),
                });
            }
            NetValue::Hosts(pairs) => {
                for pair in pairs {
                    self.hosts.retain(|entry| entry.value.0 != pair.0);
                    self.hosts.push(Sourced {
                        value: pair.clone(),
                        origin: origin.clone(),
                    });
                }
            }
        }
    }

    /// Why a project file's `value` is ignored, or `None` when it only narrows (and applies).
    pub(crate) fn project_refusal(&self, value: &NetValue) -> Option<&'static str> {
        match value {
            NetValue::Deny(_) | NetValue::WebFetch(false) => None,
            NetValue::WebFetch(true) => Some("a project file can only turn web_fetch off"),
            NetValue::Mode(mode) if mode.openness() <= self.mode.value.openness() => None,
            NetValue::Mode(_) => Some("a project file can only make the network mode stricter"),
            NetValue::Allow(_) | NetValue::Presets(_) => {
                Some("a project file cannot allow hosts (only deny them)")
            }
            NetValue::AllowLocal(_) => Some("a project file cannot open this machine's ports"),
            NetValue::Hosts(_) => Some("a project file cannot answer for host names"),
        }
    }

    /// Whether the model is offered `web_fetch`: `[network] web_fetch` when set, else when the
    /// mode is not `off`.
    #[must_use]
    pub fn offers_web_fetch(&self) -> bool {
        self.web_fetch
            .as_ref()
            .map_or(self.mode.value != NetworkMode::Off, |web_fetch| {
                web_fetch.value
            })
    }

    /// The proxy's rules. Every value was checked when read; one that fails now (a bug) is
    /// left out, which only narrows.
    #[must_use]
    pub fn rules(&self) -> Rules {
        let mut rules = Rules {
            mode: self.mode.value,
            allow_local: self.allow_local.iter().map(|port| port.value).collect(),
            ..Rules::default()
        };
        for (deny, list) in [(false, &self.allow), (true, &self.deny)] {
            for entry in list {
                let _ = rules.add(deny, &entry.value, &origin_word(&entry.origin));
            }
        }
        for preset in &self.presets {
            let _ = rules.add_preset(&preset.value);
        }
        for entry in &self.hosts {
            let _ = rules.add_host(&entry.value.0, &entry.value.1);
        }
        for entry in &self.rule_hosts {
            for host in &entry.value.net {
                let from = origin_word(&entry.origin);
                let _ = rules.add_for_command(&entry.value.command, host, &from);
            }
        }
        rules
    }
}

/// A short word for where a rule came from, for the proxy's messages and events.
fn origin_word(origin: &Origin) -> String {
    match origin {
        Origin::Default(_) => "default".to_owned(),
        Origin::User(..) | Origin::UserProject(..) => "user".to_owned(),
        Origin::Profile(name, ..) => format!("profile {name}"),
        Origin::Project(..) => "project".to_owned(),
        Origin::Env(name) => format!("env {name}"),
        Origin::Flag(flag) => format!("flag {flag}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn item(toml: &str) -> Item {
        let document: toml_edit::DocumentMut = format!("v = {toml}").parse().unwrap();
        document["v"].clone()
    }

    #[test]
    fn values_are_checked_as_they_are_read() {
        assert_eq!(
            read_value(NetKey::Mode, &item("\"allowlist\"")),
            Ok(NetValue::Mode(NetworkMode::Allowlist))
        );
        assert_eq!(
            read_value(NetKey::AllowLocal, &item("[5432, 8080]")),
            Ok(NetValue::AllowLocal(vec![5432, 8080]))
        );
        assert_eq!(
            read_value(NetKey::Hosts, &item("{ \"api.test\" = \"127.0.0.1\" }")),
            Ok(NetValue::Hosts(vec![(
                "api.test".to_owned(),
                "127.0.0.1".to_owned()
            )]))
        );
        for (key, bad) in [
            (NetKey::Mode, "\"on\""),
            (NetKey::Mode, "true"),
            (NetKey::Allow, "[\"a@b.test\"]"),
            (NetKey::Allow, "\"a.test\""),
            (NetKey::Deny, "[\"*a.test\"]"),
            (NetKey::Presets, "[\"nuget\"]"),
            (NetKey::AllowLocal, "[0]"),
            (NetKey::AllowLocal, "[70000]"),
            (NetKey::Hosts, "{ \"a.test\" = \"nowhere\" }"),
            (NetKey::Hosts, "{ \"10.0.0.1\" = \"10.0.0.2\" }"),
        ] {
            assert!(read_value(key, &item(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn allow_rules_with_hosts_are_checked_as_they_are_read() {
        let table = |toml: &str| {
            let document: toml_edit::DocumentMut = format!("v = {toml}").parse().unwrap();
            document["v"].as_inline_table().unwrap().clone()
        };
        assert_eq!(
            read_rule_hosts(&table(
                "{ command = \" npm install \", net = [\"registry.npmjs.org\", \"*.npm.test\"] }"
            )),
            Ok(RuleHosts {
                command: "npm install".to_owned(),
                net: vec!["registry.npmjs.org".to_owned(), "*.npm.test".to_owned()]
            })
        );
        for bad in [
            "{ net = [\"a.test\"] }",
            "{ command = \"  \", net = [\"a.test\"] }",
            "{ command = \"npm\" }",
            "{ command = \"npm\", net = \"a.test\" }",
            "{ command = \"npm\", net = [\"a@b.test\"] }",
            "{ command = \"npm\", net = [1] }",
            "{ command = \"npm\", net = [], hosts = [] }",
        ] {
            assert!(read_rule_hosts(&table(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_project_may_only_narrow() {
        let mut settings = NetworkSettings::built_in();
        settings.apply(
            &NetValue::Mode(NetworkMode::Allowlist),
            &Origin::Flag("test"),
        );
        for (value, ignored) in [
            (NetValue::Mode(NetworkMode::Off), false),
            (NetValue::Mode(NetworkMode::Allowlist), false),
            (NetValue::Mode(NetworkMode::Full), true),
            (NetValue::Deny(vec!["a.test".to_owned()]), false),
            (NetValue::Allow(vec!["a.test".to_owned()]), true),
            (NetValue::Presets(vec!["npm".to_owned()]), true),
            (NetValue::AllowLocal(vec![22]), true),
            (
                NetValue::Hosts(vec![("a.test".to_owned(), "10.0.0.1".to_owned())]),
                true,
            ),
            (NetValue::WebFetch(false), false),
            (NetValue::WebFetch(true), true),
        ] {
            assert_eq!(
                settings.project_refusal(&value).is_some(),
                ignored,
                "{value:?}"
            );
        }
    }

    /// `web_fetch` is offered by the mode unless written: `false` wins over any mode, `true`
    /// offers it with the network off.
    #[test]
    fn web_fetch_follows_the_mode_unless_written() {
        for (mode, written, offered) in [
            (NetworkMode::Off, None, false),
            (NetworkMode::Allowlist, None, true),
            (NetworkMode::Full, None, true),
            (NetworkMode::Off, Some(true), true),
            (NetworkMode::Full, Some(false), false),
            (NetworkMode::Allowlist, Some(false), false),
        ] {
            let mut settings = NetworkSettings::built_in();
            settings.apply(&NetValue::Mode(mode), &Origin::Flag("test"));
            if let Some(on) = written {
                settings.apply(&NetValue::WebFetch(on), &Origin::Flag("test"));
            }
            assert_eq!(settings.offers_web_fetch(), offered, "{mode:?} {written:?}");
        }
        assert_eq!(
            read_value(NetKey::WebFetch, &item("true")),
            Ok(NetValue::WebFetch(true))
        );
        assert!(read_value(NetKey::WebFetch, &item("\"yes\"")).is_err());
    }

    #[test]
    fn rules_carry_every_layer_and_later_hosts_win() {
        let mut settings = NetworkSettings::built_in();
        let user = Origin::User("settings.toml".into(), 3);
        settings.apply(&NetValue::Allow(vec!["a.test".to_owned()]), &user);
        settings.apply(&NetValue::Presets(vec!["pypi".to_owned()]), &user);
        settings.apply(
            &NetValue::Hosts(vec![("a.test".to_owned(), "10.0.0.1".to_owned())]),
            &user,
        );
        settings.apply(
            &NetValue::Hosts(vec![("a.test".to_owned(), "10.0.0.2".to_owned())]),
            &Origin::Flag("test"),
        );
        settings.apply(
            &NetValue::Deny(vec!["pypi.org".to_owned()]),
            &Origin::Project("p".into(), 1),
        );
        let rules = settings.rules();
        assert_eq!(rules.allow[0].from, "user");
        assert!(rules.allow.iter().any(|rule| rule.from == "preset pypi"));
        assert_eq!(rules.deny[0].from, "project");
        assert_eq!(
            rules
                .static_answer(&crate::net::Host::parse("a.test").unwrap())
                .map(|answer| answer.ip),
            Some("10.0.0.2".parse().unwrap())
        );
    }
}
