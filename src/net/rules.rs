//! The network rules of a run, resolved from the settings: the mode, the allowed and denied
//! host patterns (deny wins), the presets' hosts, the ports of this machine's own services
//! reachable as [`HOST_ALIAS`], and the static answers of `hosts`. [`Rules::decide`] is pure:
//! a host and port in, a verdict with the rule that decided (or the setting that would allow
//! it) out.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::Serialize;

use super::host::{Host, Pattern};

/// The name under which a command reaches this machine's own services (the ports
/// `allow_local` lists), as Docker's `host.docker.internal`.
pub const HOST_ALIAS: &str = "host.agent.internal";

/// The curated host lists (`[network] presets`), versioned.
const PRESETS_TOML: &str = include_str!("../../assets/network-presets.toml");

/// How sandboxed commands reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkMode {
    /// No network at all (the default).
    #[default]
    Off,
    /// Only through the agent's proxy, to the hosts the rules allow.
    Allowlist,
    /// Every host (the old `[sandbox] network = true`).
    Full,
}

impl NetworkMode {
    /// The name used in settings.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            NetworkMode::Off => "off",
            NetworkMode::Allowlist => "allowlist",
            NetworkMode::Full => "full",
        }
    }

    /// Parses a name as written in settings.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "off" => Some(NetworkMode::Off),
            "allowlist" => Some(NetworkMode::Allowlist),
            "full" => Some(NetworkMode::Full),
            _ => None,
        }
    }

    /// Higher is more open: off < allowlist < full. A project file may only lower it.
    #[must_use]
    pub fn openness(self) -> u8 {
        match self {
            NetworkMode::Off => 0,
            NetworkMode::Allowlist => 1,
            NetworkMode::Full => 2,
        }
    }
}

/// One allow or deny pattern and where it came from (`user`, `flag`, `preset npm`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The pattern.
    pub pattern: Pattern,
    /// As written, for messages and events.
    pub written: String,
    /// Where it came from.
    pub from: String,
}

/// What the rules say about one host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed by `rule`.
    Allow {
        /// The rule, as a person would find it in the settings.
        rule: String,
    },
    /// Refused by `rule` (a deny pattern, or a port `allow_local` does not list).
    Deny {
        /// The rule, or what is missing.
        rule: String,
        /// The setting that would allow it, when one would.
        allow_with: Option<String>,
    },
    /// Neither allowed nor denied: a person may be asked; without one, refused.
    Unknown {
        /// The setting that would allow it.
        allow_with: String,
    },
}

/// The network rules of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// The mode.
    pub mode: NetworkMode,
    /// Allowed patterns (the presets' hosts among them).
    pub allow: Vec<Rule>,
    /// Denied patterns: they win over every allow.
    pub deny: Vec<Rule>,
    /// Ports of this machine reachable as [`HOST_ALIAS`].
    pub allow_local: Vec<u16>,
    /// Static answers, used before DNS (and trusted even when private or loopback).
    pub hosts: BTreeMap<Host, IpAddr>,
}

impl Rules {
    /// Adds an allow (or deny) pattern written in the settings.
    ///
    /// # Errors
    /// The pattern is malformed.
    pub fn add(&mut self, deny: bool, written: &str, from: &str) -> Result<(), String> {
        let rule = Rule {
            pattern: Pattern::parse(written)?,
            written: written.trim().to_owned(),
            from: from.to_owned(),
        };
        if deny {
            self.deny.push(rule);
        } else {
            self.allow.push(rule);
        }
        Ok(())
    }

    /// Adds the hosts of the preset `name`.
    ///
    /// # Errors
    /// No preset has that name (the message lists those that exist).
    pub fn add_preset(&mut self, name: &str) -> Result<(), String> {
        let hosts = preset_hosts(name)?;
        for host in hosts {
            self.add(false, &host, &format!("preset {name}"))?;
        }
        Ok(())
    }

    /// Adds a static answer (`hosts = { "api.test" = "127.0.0.1" }`).
    ///
    /// # Errors
    /// The name is not a host name or the answer not an IP address.
    pub fn add_host(&mut self, name: &str, address: &str) -> Result<(), String> {
        let host = match Host::parse(name)? {
            host @ Host::Name(_) => host,
            Host::Ip(_) => return Err(format!("`{name}` is an address, not a name")),
        };
        let ip = address
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .map_err(|_| format!("`{address}` is not an IP address"))?;
        self.hosts.insert(host, ip);
        Ok(())
    }

    /// What the rules say about `host` on `port`. Deny patterns win; [`HOST_ALIAS`] is
    /// allowed only on the ports `allow_local` lists; an IP address only where a rule names
    /// it.
    #[must_use]
    pub fn decide(&self, host: &Host, port: u16) -> Verdict {
        if let Some(rule) = self.deny.iter().find(|rule| rule.pattern.matches(host)) {
            return Verdict::Deny {
                rule: format!("[network] deny = [\"{}\"] ({})", rule.written, rule.from),
                allow_with: None,
            };
        }
        if *host == Host::Name(HOST_ALIAS.to_owned()) {
            return if self.allow_local.contains(&port) {
                Verdict::Allow {
                    rule: format!("[network] allow_local = [{port}]"),
                }
            } else {
                Verdict::Deny {
                    rule: format!("port {port} is not in [network] allow_local"),
                    allow_with: Some(format!("[network] allow_local = [{port}]")),
                }
            };
        }
        if let Some(rule) = self.allow.iter().find(|rule| rule.pattern.matches(host)) {
            return Verdict::Allow {
                rule: if rule.from.starts_with("preset ") {
                    format!("[network] presets: {} ({})", rule.from, rule.written)
                } else {
                    format!("[network] allow = [\"{}\"] ({})", rule.written, rule.from)
                },
            };
        }
        Verdict::Unknown {
            allow_with: format!("[network] allow = [\"{}\"]", host.display()),
        }
    }

    /// The static answer for `host`, if `hosts` has one.
    #[must_use]
    pub fn static_answer(&self, host: &Host) -> Option<IpAddr> {
        self.hosts.get(host).copied()
    }
}

/// The presets' version (`version` in `assets/network-presets.toml`).
#[must_use]
pub fn presets_version() -> i64 {
    presets()
        .ok()
        .and_then(|table| table.get("version").and_then(toml::Value::as_integer))
        .unwrap_or(0)
}

/// The names of the presets.
#[must_use]
pub fn preset_names() -> Vec<String> {
    presets()
        .map(|table| {
            table
                .iter()
                .filter(|(_, value)| value.is_table())
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// The host patterns of preset `name`.
///
/// # Errors
/// No preset has that name.
pub fn preset_hosts(name: &str) -> Result<Vec<String>, String> {
    let table = presets()?;
    let hosts = table
        .get(name)
        .and_then(|preset| preset.get("hosts"))
        .and_then(toml::Value::as_array)
        .ok_or_else(|| {
            format!(
                "no preset `{name}` (there are: {})",
                preset_names().join(", ")
            )
        })?;
    Ok(hosts
        .iter()
        .filter_map(toml::Value::as_str)
        .map(str::to_owned)
        .collect())
}

fn presets() -> Result<toml::Table, String> {
    PRESETS_TOML
        .parse::<toml::Table>()
        .map_err(|error| format!("the built-in network presets are malformed (a bug): {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn host(text: &str) -> Host {
        Host::parse(text).unwrap()
    }

    fn rules() -> Rules {
        let mut rules = Rules {
            mode: NetworkMode::Allowlist,
            allow_local: vec![5432],
            ..Rules::default()
        };
        rules.add(false, "allowed.test", "user").unwrap();
        rules.add(false, "*.github.test", "user").unwrap();
        rules.add(true, "evil.github.test", "project").unwrap();
        rules.add(false, "10.1.2.3", "user").unwrap();
        rules
    }

    #[test]
    fn deny_wins_over_every_allow() {
        let rules = rules();
        assert_eq!(
            rules.decide(&host("EVIL.github.test."), 443),
            Verdict::Deny {
                rule: "[network] deny = [\"evil.github.test\"] (project)".to_owned(),
                allow_with: None
            }
        );
        assert!(matches!(
            rules.decide(&host("api.github.test"), 443),
            Verdict::Allow { .. }
        ));
    }

    #[test]
    fn unknown_hosts_name_the_setting_that_would_allow_them() {
        assert_eq!(
            rules().decide(&host("Blocked.test"), 80),
            Verdict::Unknown {
                allow_with: "[network] allow = [\"blocked.test\"]".to_owned()
            }
        );
    }

    #[test]
    fn addresses_need_a_rule_that_names_them() {
        let rules = rules();
        assert!(matches!(
            rules.decide(&host("10.1.2.3"), 80),
            Verdict::Allow { .. }
        ));
        for address in ["10.1.2.4", "127.0.0.1", "[::1]", "2130706433"] {
            assert!(
                matches!(rules.decide(&host(address), 80), Verdict::Unknown { .. }),
                "{address}"
            );
        }
        let mut open = Rules::default();
        open.add(false, "*", "user").unwrap();
        assert!(matches!(
            open.decide(&host("10.0.0.1"), 80),
            Verdict::Unknown { .. }
        ));
    }

    #[test]
    fn this_machine_is_reached_on_listed_ports_only() {
        let rules = rules();
        assert!(matches!(
            rules.decide(&host(HOST_ALIAS), 5432),
            Verdict::Allow { .. }
        ));
        assert_eq!(
            rules.decide(&host("HOST.agent.internal."), 22),
            Verdict::Deny {
                rule: "port 22 is not in [network] allow_local".to_owned(),
                allow_with: Some("[network] allow_local = [22]".to_owned())
            }
        );
    }

    #[test]
    fn presets_are_versioned_and_parse() {
        assert!(presets_version() >= 1);
        let names = preset_names();
        for name in ["npm", "pypi", "crates", "go", "github"] {
            assert!(names.contains(&name.to_owned()), "{name}");
            let mut rules = Rules::default();
            rules.add_preset(name).unwrap();
            assert!(!rules.allow.is_empty(), "{name}");
        }
        let mut rules = Rules::default();
        rules.add_preset("npm").unwrap();
        assert_eq!(
            rules.decide(&host("registry.npmjs.org"), 443),
            Verdict::Allow {
                rule: "[network] presets: preset npm (registry.npmjs.org)".to_owned()
            }
        );
        assert!(rules.add_preset("nuget").unwrap_err().contains("npm"));
    }

    #[test]
    fn static_answers_are_for_names_only() {
        let mut rules = Rules::default();
        rules.add_host("Api.Test.", "127.0.0.1").unwrap();
        assert_eq!(
            rules.static_answer(&host("api.test")),
            Some("127.0.0.1".parse().unwrap())
        );
        assert!(rules.add_host("127.0.0.1", "10.0.0.1").is_err());
        assert!(rules.add_host("api.test", "localhost").is_err());
    }
}
