//! The network rules of a run, resolved from the settings: the mode, the allowed and denied
//! host patterns (deny wins), the presets' hosts, the ports of this machine's own services
//! reachable as [`HOST_ALIAS`], and the static answers of `hosts`. [`Rules::decide`] is pure:
//! a host and port in, a verdict with the rule that decided (or the setting that would allow
//! it) out.
//!
//! An address inside — loopback, private, link-local, or one of this machine's own
//! ([`Rules::own`]) — is reached only on the ports the person named for it: the port written
//! with a `hosts` answer (`"api.test" = "127.0.0.1:8080"`) or one `allow_local` lists. A name
//! or address rule that leads there opens no other port (sshd, Docker's TCP socket, a
//! database). A public answer without a port is any port, like DNS.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use serde::Serialize;

use super::address::not_public;
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
    /// Static answers, used before DNS (trusted even when inside, on their ports).
    pub hosts: BTreeMap<Host, Answer>,
    /// This machine's own addresses (its interfaces'), filled when the proxy starts: reached
    /// only like loopback.
    pub own: Vec<IpAddr>,
    /// Hosts one allow rule opens for the commands it allows (`{ command = "npm install",
    /// net = ["registry.npmjs.org"] }`): the rule's prefix and an allow pattern.
    pub per_command: Vec<(String, Rule)>,
}

/// A static answer of `hosts`: the address, and the one port it is for when written with one
/// (`"127.0.0.1:8080"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// The address.
    pub ip: IpAddr,
    /// The only port reached there, when written.
    pub port: Option<u16>,
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

    /// Adds a host pattern the allow rule `command` opens for the commands it allows.
    ///
    /// # Errors
    /// The pattern is malformed.
    pub fn add_for_command(
        &mut self,
        command: &str,
        written: &str,
        from: &str,
    ) -> Result<(), String> {
        let rule = Rule {
            pattern: Pattern::parse(written)?,
            written: written.trim().to_owned(),
            from: from.to_owned(),
        };
        self.per_command.push((command.trim().to_owned(), rule));
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

    /// Adds a static answer (`hosts = { "api.test" = "127.0.0.1" }`, or with the one port it
    /// is for: `"127.0.0.1:8080"`, `"[::1]:8080"`).
    ///
    /// # Errors
    /// The name is not a host name or the answer not an IP address (with a port, not 0).
    pub fn add_host(&mut self, name: &str, address: &str) -> Result<(), String> {
        let host = match Host::parse(name)? {
            host @ Host::Name(_) => host,
            Host::Ip(_) => return Err(format!("`{name}` is an address, not a name")),
        };
        let answer = if let Ok(with_port) = address.parse::<SocketAddr>() {
            if with_port.port() == 0 {
                return Err(format!("`{address}`: port 0 is no port"));
            }
            Answer {
                ip: with_port.ip(),
                port: Some(with_port.port()),
            }
        } else {
            let ip = address
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .map_err(|_| format!("`{address}` is not an IP address (or ADDRESS:PORT)"))?;
            Answer { ip, port: None }
        };
        self.hosts.insert(host, answer);
        Ok(())
    }

    /// Why `ip` is inside (loopback, private, link-local, this machine's own …), or `None`
    /// for a public address.
    #[must_use]
    pub fn inside(&self, ip: IpAddr) -> Option<&'static str> {
        not_public(ip).or_else(|| {
            let ip = ip.to_canonical();
            self.own
                .iter()
                .any(|own| own.to_canonical() == ip)
                .then_some("an address of this machine")
        })
    }

    /// Whether a deny rule names the address `ip` (`*` among them): a name resolving there is
    /// not connected to it.
    #[must_use]
    pub fn denies_address(&self, ip: IpAddr) -> bool {
        let ip = Host::Ip(ip);
        self.deny
            .iter()
            .any(|rule| rule.pattern == Pattern::Any || rule.pattern.matches(&ip))
    }

    /// The deny rule `host` meets, as a verdict: a pattern naming it (`*` names addresses
    /// too: a deny of everything is everything), or an address rule naming its static answer.
    fn denied(&self, host: &Host) -> Option<Verdict> {
        let answer = self.static_answer(host).map(|answer| Host::Ip(answer.ip));
        let rule = self.deny.iter().find(|rule| {
            rule.pattern == Pattern::Any
                || rule.pattern.matches(host)
                || answer.as_ref().is_some_and(|ip| rule.pattern.matches(ip))
        })?;
        Some(Verdict::Deny {
            rule: format!("[network] deny = [\"{}\"] ({})", rule.written, rule.from),
            allow_with: None,
        })
    }

    /// The allow rule naming `host`, as the rule a person would find in the settings: one of
    /// `[network]`, or one the allow rule `command` (that allowed the running command) opens.
    fn allowed(&self, host: &Host, command: Option<&str>) -> Option<String> {
        if let Some(rule) = self.allow.iter().find(|rule| rule.pattern.matches(host)) {
            return Some(if rule.from.starts_with("preset ") {
                format!("[network] presets: {} ({})", rule.from, rule.written)
            } else {
                format!("[network] allow = [\"{}\"] ({})", rule.written, rule.from)
            });
        }
        let command = command?;
        let (_, rule) = self
            .per_command
            .iter()
            .find(|(prefix, rule)| prefix == command && rule.pattern.matches(host))?;
        Some(format!(
            "[permissions.commands] allow = [{{ command = \"{command}\", net = [\"{}\"] }}] ({})",
            rule.written, rule.from
        ))
    }

    /// The refusal of `port` on where `host` leads before DNS — its static answer, or the
    /// address it is — when that is another port than the answer's, or an address inside on a
    /// port `allow_local` does not list.
    #[must_use]
    pub fn port_refused(&self, host: &Host, port: u16) -> Option<Verdict> {
        let (ip, answer) = match (self.static_answer(host), host) {
            (Some(answer), _) => (answer.ip, Some(answer)),
            (None, Host::Ip(ip)) => (*ip, None),
            (None, Host::Name(_)) => return None,
        };
        let name = host.display();
        let with_port = format!(
            "[network] hosts = {{ \"{name}\" = \"{}\" }}",
            SocketAddr::new(ip, port)
        );
        if let Some(only) = answer.and_then(|answer| answer.port) {
            return (only != port).then(|| Verdict::Deny {
                rule: format!("[network] hosts answers `{name}` for port {only} only"),
                allow_with: None,
            });
        }
        let kind = self.inside(ip)?;
        if self.allow_local.contains(&port) {
            return None;
        }
        let (leads, allow_with) = match answer {
            Some(_) => (format!("[network] hosts answers {ip} for it"), with_port),
            None => ("it".to_owned(), format!("[network] allow_local = [{port}]")),
        };
        Some(Verdict::Deny {
            rule: format!(
                "{leads}, {kind}: there only the port written with a `hosts` answer or one in \
                 [network] allow_local is reached"
            ),
            allow_with: Some(allow_with),
        })
    }

    /// What the rules say about `host` on `port`. Deny patterns win; [`HOST_ALIAS`] is
    /// allowed only on the ports `allow_local` lists; an IP address only where a rule names
    /// it; an address inside only on its ports (see the module's text).
    #[must_use]
    pub fn decide(&self, host: &Host, port: u16) -> Verdict {
        self.decide_for(host, port, None)
    }

    /// [`Rules::decide`] for a command the allow rule `command` allowed (its own hosts too).
    #[must_use]
    pub fn decide_for(&self, host: &Host, port: u16, command: Option<&str>) -> Verdict {
        if let Some(denied) = self.denied(host) {
            return denied;
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
        match self.allowed(host, command) {
            Some(rule) => self
                .port_refused(host, port)
                .unwrap_or(Verdict::Allow { rule }),
            None => Verdict::Unknown {
                allow_with: format!("[network] allow = [\"{}\"]", host.display()),
            },
        }
    }

    /// Whether `host` may be resolved for a command (the stub resolver): allowed on some port.
    /// [`HOST_ALIAS`] never is: inside the command's namespace no address reaches it.
    #[must_use]
    pub fn resolvable(&self, host: &Host, command: Option<&str>) -> bool {
        self.denied(host).is_none()
            && *host != Host::Name(HOST_ALIAS.to_owned())
            && self.allowed(host, command).is_some()
    }

    /// Whether `host` may be resolved because a person opened it for the running command
    /// (`escalate.network`): no deny rule names it, and it is not [`HOST_ALIAS`].
    #[must_use]
    pub fn resolvable_opened(&self, host: &Host, opened: Option<&super::host::Opened>) -> bool {
        self.denied(host).is_none()
            && *host != Host::Name(HOST_ALIAS.to_owned())
            && opened.is_some_and(|opened| opened.admits(host))
    }

    /// What commands may reach, as the settings write it, for telling the model: the allowed
    /// patterns, each once (deny patterns not subtracted: they only narrow), then this
    /// machine's ports as `host.agent.internal:PORT`.
    #[must_use]
    pub fn reachable(&self) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        let mut reach: Vec<String> = self
            .allow
            .iter()
            .filter(|rule| seen.insert(rule.written.as_str()))
            .map(|rule| rule.written.clone())
            .collect();
        reach.extend(
            self.allow_local
                .iter()
                .map(|port| format!("{HOST_ALIAS}:{port}")),
        );
        reach.extend(
            self.per_command
                .iter()
                .map(|(command, rule)| format!("{} (for `{command}` only)", rule.written)),
        );
        reach
    }

    /// The static answer for `host`, if `hosts` has one.
    #[must_use]
    pub fn static_answer(&self, host: &Host) -> Option<Answer> {
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
            rules.decide(&host("10.1.2.3"), 5432),
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

    /// A rule's own hosts are open for the command that rule allowed only; deny still wins,
    /// and inside addresses keep their port limits.
    #[test]
    fn a_rules_own_hosts_are_open_for_its_commands_only() {
        let mut rules = rules();
        rules
            .add_for_command("npm install", "registry.npmjs.test", "user")
            .unwrap();
        rules
            .add_for_command("npm install", "evil.github.test", "user")
            .unwrap();
        rules
            .add_for_command("npm ci", "*.npm.test", "user")
            .unwrap();
        let npm = host("registry.npmjs.test");
        for command in [None, Some("npm"), Some("npm ci"), Some("npm install x")] {
            assert!(
                matches!(
                    rules.decide_for(&npm, 443, command),
                    Verdict::Unknown { .. }
                ),
                "{command:?}"
            );
            assert!(!rules.resolvable(&npm, command), "{command:?}");
        }
        assert_eq!(
            rules.decide_for(&npm, 443, Some("npm install")),
            Verdict::Allow {
                rule: "[permissions.commands] allow = [{ command = \"npm install\", net = \
                       [\"registry.npmjs.test\"] }] (user)"
                    .to_owned()
            }
        );
        assert!(rules.resolvable(&npm, Some("npm install")));
        assert!(matches!(
            rules.decide_for(&host("a.npm.test"), 443, Some("npm ci")),
            Verdict::Allow { .. }
        ));
        assert!(matches!(
            rules.decide_for(&host("evil.github.test"), 443, Some("npm install")),
            Verdict::Deny { .. }
        ));
        rules
            .add_for_command("npm install", "local.test", "user")
            .unwrap();
        rules.add_host("local.test", "127.0.0.1").unwrap();
        assert!(matches!(
            rules.decide_for(&host("local.test"), 22, Some("npm install")),
            Verdict::Deny { .. }
        ));
    }

    #[test]
    fn what_is_reachable_is_told_once_each() {
        let mut rules = rules();
        rules.add(false, "allowed.test", "flag").unwrap();
        assert_eq!(
            rules.reachable(),
            [
                "allowed.test",
                "*.github.test",
                "10.1.2.3",
                "host.agent.internal:5432"
            ]
        );
    }

    #[test]
    fn static_answers_are_for_names_only() {
        let mut rules = Rules::default();
        rules.add_host("Api.Test.", "127.0.0.1").unwrap();
        assert_eq!(
            rules.static_answer(&host("api.test")),
            Some(Answer {
                ip: "127.0.0.1".parse().unwrap(),
                port: None
            })
        );
        rules.add_host("b.test", "[::1]:8080").unwrap();
        assert_eq!(
            rules.static_answer(&host("b.test")),
            Some(Answer {
                ip: "::1".parse().unwrap(),
                port: Some(8080)
            })
        );
        for (name, bad) in [
            ("127.0.0.1", "10.0.0.1"),
            ("api.test", "localhost"),
            ("api.test", "127.0.0.1:0"),
            ("api.test", "127.0.0.1:70000"),
            ("api.test", "localhost:80"),
        ] {
            assert!(rules.add_host(name, bad).is_err(), "{name} = {bad}");
        }
    }

    /// Where a rule leads inside — a `hosts` answer or an address rule that is loopback,
    /// private, link-local or this machine's own — only the port written with the answer or
    /// one `allow_local` lists is reached; a public answer is any port, one with a port that
    /// port only. Generated over kinds of address and ports.
    #[test]
    fn inside_addresses_are_reached_on_their_ports_only() {
        let inside = [
            "127.0.0.1",
            "127.3.4.5",
            "10.0.0.7",
            "192.168.1.1",
            "169.254.169.254",
            "::1",
            "fd00::2",
            "fe80::1",
            "::ffff:127.0.0.1",
            "198.51.100.9",
        ];
        for address in inside {
            for (allow_local, port, written) in [
                (vec![], 8080, None),
                (vec![5432], 8080, None),
                (vec![5432], 5432, None),
                (vec![], 8080, Some(8080)),
                (vec![], 22, Some(8080)),
                (vec![22], 22, Some(8080)),
            ] {
                let mut rules = Rules {
                    allow_local: allow_local.clone(),
                    own: vec!["198.51.100.9".parse().unwrap()],
                    ..Rules::default()
                };
                rules.add(false, "api.test", "user").unwrap();
                let ip: IpAddr = address.parse().unwrap();
                let answer = match written {
                    Some(only) => SocketAddr::new(ip, only).to_string(),
                    None => address.to_owned(),
                };
                rules.add_host("api.test", &answer).unwrap();
                rules.add(false, address, "user").unwrap();
                let reached = match written {
                    Some(only) => port == only,
                    None => allow_local.contains(&port),
                };
                let verdict = rules.decide(&host("api.test"), port);
                let case = format!("{answer} allow_local {allow_local:?} port {port}");
                assert_eq!(matches!(verdict, Verdict::Allow { .. }), reached, "{case}");
                // The address itself, named by a rule: allow_local only.
                let verdict = rules.decide(&host(address), port);
                let by_rule = allow_local.contains(&port);
                assert_eq!(
                    matches!(verdict, Verdict::Allow { .. }),
                    by_rule,
                    "rule {case}"
                );
                if !reached && written.is_none() {
                    let Verdict::Deny { allow_with, .. } = rules.decide(&host("api.test"), port)
                    else {
                        panic!("{case}")
                    };
                    let want = format!(
                        "[network] hosts = {{ \"api.test\" = \"{}\" }}",
                        SocketAddr::new(ip, port)
                    );
                    assert_eq!(allow_with.as_deref(), Some(want.as_str()), "{case}");
                }
            }
        }
        // A public answer: every port, unless written with one.
        let mut rules = Rules::default();
        rules.add(false, "api.test", "user").unwrap();
        rules.add_host("api.test", "203.0.114.5").unwrap();
        for port in [22, 80, 443, 2375] {
            assert!(matches!(
                rules.decide(&host("api.test"), port),
                Verdict::Allow { .. }
            ));
        }
        rules.add_host("api.test", "203.0.114.5:443").unwrap();
        assert!(matches!(
            rules.decide(&host("api.test"), 443),
            Verdict::Allow { .. }
        ));
        assert!(matches!(
            rules.decide(&host("api.test"), 22),
            Verdict::Deny { .. }
        ));
    }

    /// `deny = ["*"]` denies addresses too, and a deny naming an address denies the names
    /// answered with it.
    #[test]
    fn a_deny_of_everything_covers_addresses() {
        for address in ["10.1.2.3", "203.0.114.5", "::1", "2001:4860::8888"] {
            let mut rules = Rules::default();
            rules.add(false, address, "user").unwrap();
            rules.add(false, "a.test", "user").unwrap();
            let ip: IpAddr = address.parse().unwrap();
            rules
                .add_host("a.test", &SocketAddr::new(ip, 80).to_string())
                .unwrap();
            rules.allow_local = vec![80];
            assert!(matches!(
                rules.decide(&host(address), 80),
                Verdict::Allow { .. }
            ));
            let mut all = rules.clone();
            all.add(true, "*", "project").unwrap();
            for target in [address, "a.test", HOST_ALIAS] {
                assert!(
                    matches!(all.decide(&host(target), 80), Verdict::Deny { .. }),
                    "{target}"
                );
                assert!(!all.resolvable(&host(target), None), "{target}");
            }
            let mut one = rules.clone();
            one.add(true, address, "project").unwrap();
            assert!(matches!(
                one.decide(&host("a.test"), 80),
                Verdict::Deny { .. }
            ));
        }
    }
}
