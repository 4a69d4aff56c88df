//! Host names as the network rules see them: one normal form for every way a name can be
//! written (case, a trailing dot, Unicode and its IDNA form, numeric IPv4 spellings, bracketed
//! IPv6), and the patterns of `[network] allow`/`deny` matched against it. Pure; it knows
//! nothing of sockets or settings files.
//!
//! A pattern is `example.com` (that host alone), `*.example.com` (every name below it, not
//! `example.com` itself), `*` (every name), or an IP address (`10.0.0.5`, `::1`, `[::1]`). Ports
//! are not part of a pattern: a rule allows a host on every port.
//!
//! Normalising goes through the WHATWG URL host parser (`url`, already built for `reqwest`),
//! the one browsers and curl-like tools agree on: `EXAMPLE.com.` is `example.com`,
//! `bücher.example` is `xn--bcher-kva.example`, `example。com` is `example.com`, `2130706433`
//! and `0x7f.1` are `127.0.0.1`. Anything that is not a plain host — userinfo (`a@b`), a port,
//! a path, a percent sign, spaces, an empty label — is refused before the parser sees it.

use std::net::IpAddr;

use reqwest::Url;

use super::address::reached;

/// The longest host name DNS can carry (253 characters in text form).
const MAX_NAME_CHARS: usize = 253;

/// A host as rules see it: a lower-case ASCII (IDNA) name without a trailing dot, or an IP
/// address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Host {
    /// A DNS name in its ASCII form.
    Name(String),
    /// An IP address written as one (any of the spellings the URL standard accepts).
    Ip(IpAddr),
}

impl Host {
    /// Parses a host as written in a request (`CONNECT` target without its port, a `Host`
    /// header's host, a URL's host, a SOCKS5 name).
    ///
    /// # Errors
    /// Why it is not a plain host name or address.
    pub fn parse(raw: &str) -> Result<Host, String> {
        if raw.is_empty() {
            return Err("an empty host name".to_owned());
        }
        if raw.chars().count() > MAX_NAME_CHARS + 2 {
            return Err("a host name longer than 253 characters".to_owned());
        }
        if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            return inner
                .parse::<std::net::Ipv6Addr>()
                .map(|ip| Host::Ip(IpAddr::V6(ip)))
                .map_err(|_| format!("`{raw}` is not an IPv6 address"));
        }
        if let Ok(ip) = raw.parse::<std::net::Ipv6Addr>() {
            return Ok(Host::Ip(IpAddr::V6(ip)));
        }
        if let Some(bad) = raw.chars().find(|c| {
            c.is_whitespace()
                || c.is_control()
                || matches!(
                    c,
                    '@' | ':' | '/' | '\\' | '?' | '#' | '%' | '[' | ']' | '<' | '>' | '^' | '|'
                )
        }) {
            return Err(format!(
                "`{}` is not a plain host name (it has {bad:?})",
                raw.escape_debug()
            ));
        }
        // One trailing dot names the same host (the DNS root); two do not.
        let name = raw.strip_suffix('.').unwrap_or(raw);
        if name.is_empty() || name.ends_with('.') || name.starts_with('.') || name.contains("..") {
            return Err(format!("`{}` has an empty label", raw.escape_debug()));
        }
        let url = Url::parse(&format!("http://{name}/"))
            .map_err(|error| format!("`{}` is not a host name ({error})", raw.escape_debug()))?;
        let parsed = url.host_str().unwrap_or_default();
        let unbracketed = parsed.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        let domain = parsed.strip_suffix('.').unwrap_or(parsed);
        if domain.is_empty()
            || domain.len() > MAX_NAME_CHARS
            || domain
                .split('.')
                .any(|label| label.is_empty() || label.len() > 63)
            || !domain
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
        {
            return Err(format!("`{}` is not a valid host name", raw.escape_debug()));
        }
        Ok(Host::Name(domain.to_owned()))
    }

    /// The name (or address) as shown to people and in events.
    #[must_use]
    pub fn display(&self) -> String {
        match self {
            Host::Name(name) => name.clone(),
            Host::Ip(ip) => ip.to_string(),
        }
    }
}

/// Splits an authority (`host:port`, `[v6]:port`, or `host` with `default_port`) into its
/// host and port. Userinfo (`user@host`) is refused: a proxy target carries none.
///
/// # Errors
/// Why it is not `host[:port]`.
pub fn split_authority(authority: &str, default_port: Option<u16>) -> Result<(Host, u16), String> {
    let shown = authority.escape_debug();
    if authority.contains('@') {
        return Err(format!("`{shown}` carries user information"));
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("`{shown}` has an unclosed `[`"))?;
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or_else(|| format!("`{shown}` is not host:port"))?,
            ),
        };
        (format!("[{inside}]"), port)
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        // An IPv6 address in an authority is always bracketed.
        if port.is_some_and(|port| port.contains(':')) {
            return Err(format!(
                "`{shown}` is not host:port (brackets go around IPv6)"
            ));
        }
        (host.to_owned(), port)
    };
    let port = match port {
        Some(text) => text
            .parse::<u16>()
            .ok()
            .filter(|port| *port != 0 && text.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| format!("`{shown}` has no valid port"))?,
        None => default_port.ok_or_else(|| format!("`{shown}` names no port"))?,
    };
    Ok((Host::parse(&host)?, port))
}

/// Hosts a person opened for one command at the prompt (the `shell` tool's
/// `escalate.network`): every host, or these patterns. Deny rules still win over it, and an
/// address inside this machine still opens only its own ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// Every host (`"network": true`).
    Any,
    /// These patterns (`"network": ["registry.npmjs.org"]`).
    Hosts(Vec<Pattern>),
}

impl Opened {
    /// Whether `host` is opened.
    #[must_use]
    pub fn admits(&self, host: &Host) -> bool {
        match self {
            Opened::Any => matches!(host, Host::Name(_)),
            Opened::Hosts(patterns) => patterns.iter().any(|pattern| pattern.matches(host)),
        }
    }
}

/// What a person opened for one command at the prompt, and whether that is all it reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    /// The hosts opened.
    pub hosts: Opened,
    /// The command's own sandbox had the network closed (what mode `auto` lets through, an
    /// inspection): it reaches these hosts and nothing else — not what `[network] allow`
    /// allows, and no host is asked about. Otherwise it reaches these besides what the
    /// rules allow.
    pub only: bool,
}

impl Opening {
    /// What is left of it while a background process runs (the proxy cannot tell its
    /// connections from the command's): no host opened; a command that reaches only what was
    /// opened for it then reaches nothing.
    #[must_use]
    pub fn shared(self) -> Option<Opening> {
        self.only.then(|| Opening {
            hosts: Opened::Hosts(Vec::new()),
            only: true,
        })
    }
}

/// One `allow`/`deny` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// Every host (`*`).
    Any,
    /// This host alone.
    Exact(Host),
    /// Every name below this one (`*.example.com`), not the name itself.
    Below(String),
}

impl Pattern {
    /// Parses a pattern as written in the settings.
    ///
    /// # Errors
    /// Why it is not a pattern (the message names it).
    pub fn parse(raw: &str) -> Result<Pattern, String> {
        let raw = raw.trim();
        if raw == "*" {
            return Ok(Pattern::Any);
        }
        if let Some(rest) = raw.strip_prefix("*.") {
            return match Host::parse(rest)? {
                Host::Name(name) if name.contains('.') || !rest.contains('*') => {
                    Ok(Pattern::Below(name))
                }
                _ => Err(format!(
                    "`{raw}`: `*.` goes before a host name (`*.example.com`)"
                )),
            };
        }
        if raw.contains('*') {
            return Err(format!(
                "`{raw}`: a `*` may only stand alone or start the pattern as `*.` (`*.example.com`)"
            ));
        }
        Host::parse(raw).map(Pattern::Exact)
    }

    /// The pattern as the proxy matches it: names in their canonical ASCII form (lower case,
    /// punycode for Unicode — `gіthub.com` with a Cyrillic `і` is `xn--gthub-n2e.com`), so a
    /// look-alike never passes for the name it imitates.
    #[must_use]
    pub fn display(&self) -> String {
        match self {
            Pattern::Any => "*".to_owned(),
            Pattern::Exact(host) => host.display(),
            Pattern::Below(name) => format!("*.{name}"),
        }
    }

    /// Whether `host` matches. Wildcards (`*`, `*.example.com`) match names only, never an IP
    /// address: an address is allowed by writing it.
    #[must_use]
    pub fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (Pattern::Any, Host::Name(_)) => true,
            (Pattern::Exact(Host::Ip(own)), Host::Ip(ip)) => reached(*own) == reached(*ip),
            (Pattern::Exact(own), host) => own == host,
            (Pattern::Below(suffix), Host::Name(name)) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (Pattern::Any | Pattern::Below(_), Host::Ip(_)) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn name(text: &str) -> Host {
        Host::Name(text.to_owned())
    }

    fn ip(text: &str) -> Host {
        Host::Ip(text.parse().unwrap())
    }

    #[test]
    fn an_address_pattern_matches_every_spelling_that_reaches_the_address() {
        let pattern = Pattern::parse("203.0.113.5").unwrap();
        for spelling in [
            "203.0.113.5",
            "::ffff:203.0.113.5",
            "::ffff:cb00:7105",
            "64:ff9b::203.0.113.5",
            "2002:cb00:7105::1",
            "::203.0.113.5",
        ] {
            assert!(pattern.matches(&ip(spelling)), "{spelling}");
        }
        for other in ["203.0.113.6", "::ffff:203.0.113.6", "2001:db8::cb00:7105"] {
            assert!(!pattern.matches(&ip(other)), "{other}");
        }
        let v6 = Pattern::parse("[::ffff:203.0.113.5]").unwrap();
        assert!(v6.matches(&ip("203.0.113.5")));
    }

    #[test]
    fn every_spelling_of_a_name_has_one_form() {
        for (written, normal) in [
            ("example.com", name("example.com")),
            ("EXAMPLE.com", name("example.com")),
            ("example.com.", name("example.com")),
            ("Example.COM.", name("example.com")),
            ("bücher.example", name("xn--bcher-kva.example")),
            ("BÜCHER.example", name("xn--bcher-kva.example")),
            ("xn--bcher-kva.example", name("xn--bcher-kva.example")),
            ("example\u{3002}com", name("example.com")),
            ("ｅｘａｍｐｌｅ.com", name("example.com")),
            ("under_score.example", name("under_score.example")),
            ("localhost", name("localhost")),
            ("127.0.0.1", ip("127.0.0.1")),
            ("2130706433", ip("127.0.0.1")),
            ("0x7f.1", ip("127.0.0.1")),
            ("0177.0.0.1", ip("127.0.0.1")),
            ("127.1", ip("127.0.0.1")),
            ("::1", ip("::1")),
            ("[::1]", ip("::1")),
            ("[::ffff:127.0.0.1]", ip("::ffff:127.0.0.1")),
        ] {
            assert_eq!(Host::parse(written), Ok(normal), "{written:?}");
        }
    }

    #[test]
    fn what_is_not_a_plain_host_is_refused() {
        for written in [
            "",
            ".",
            "..",
            "example.com..",
            ".example.com",
            "a..example.com",
            "user@example.com",
            "example.com@evil.test",
            "example.com:443",
            "example.com/path",
            "example.com\\evil.test",
            "example.com?x",
            "example.com#x",
            "exa mple.com",
            "example.com\0",
            "example.com\r\nHost: evil",
            "example%2ecom",
            "[example.com]",
            "[::1",
            "a\u{202e}moc.example",
            &"a".repeat(300),
            &format!("{}.com", "a".repeat(64)),
        ] {
            assert!(Host::parse(written).is_err(), "{written:?} was accepted");
        }
    }

    #[test]
    fn authorities_split_into_host_and_port() {
        for (written, default, expected) in [
            ("example.com:443", None, Some((name("example.com"), 443))),
            ("Example.com.:8080", None, Some((name("example.com"), 8080))),
            ("example.com", Some(80), Some((name("example.com"), 80))),
            ("[::1]:8080", None, Some((ip("::1"), 8080))),
            ("[::1]", Some(80), Some((ip("::1"), 80))),
            ("127.0.0.1:1", None, Some((ip("127.0.0.1"), 1))),
            ("example.com", None, None),
            ("example.com:", None, None),
            ("example.com:0", None, None),
            ("example.com:65536", None, None),
            ("example.com:+80", None, None),
            ("example.com:80:80", None, None),
            ("user@example.com:80", None, None),
            ("user:pw@example.com:80", None, None),
            ("[::1]x80", None, None),
            ("::1:80", None, None),
        ] {
            assert_eq!(
                split_authority(written, default).ok(),
                expected,
                "{written:?}"
            );
        }
    }

    #[test]
    fn exact_patterns_match_the_host_alone_in_any_spelling() {
        let pattern = Pattern::parse("Example.com.").unwrap();
        for (host, matches) in [
            ("example.com", true),
            ("EXAMPLE.COM.", true),
            ("www.example.com", false),
            ("example.com.evil.test", false),
            ("evilexample.com", false),
            ("example.co", false),
        ] {
            assert_matches(&pattern, host, matches);
        }
    }

    fn assert_matches(pattern: &Pattern, host: &str, expected: bool) {
        let matched = pattern.matches(&Host::parse(host).unwrap());
        assert_eq!(matched, expected, "{pattern:?} on {host:?}");
    }

    #[test]
    fn wildcards_match_names_below_on_label_boundaries_only() {
        let pattern = Pattern::parse("*.example.com").unwrap();
        for (host, matches) in [
            ("a.example.com", true),
            ("a.b.example.com", true),
            ("A.Example.Com.", true),
            ("example.com", false),
            ("evilexample.com", false),
            ("a.example.com.evil.test", false),
            ("example.com.a", false),
            ("127.0.0.1", false),
        ] {
            assert_matches(&pattern, host, matches);
        }
        let unicode = Pattern::parse("*.bücher.example").unwrap();
        assert!(unicode.matches(&Host::parse("www.xn--bcher-kva.example").unwrap()));
    }

    #[test]
    fn ip_patterns_match_every_spelling_of_the_address() {
        let pattern = Pattern::parse("127.0.0.1").unwrap();
        for host in ["127.0.0.1", "2130706433", "0x7f.0.0.1", "127.1"] {
            assert!(pattern.matches(&Host::parse(host).unwrap()), "{host:?}");
        }
        assert!(!pattern.matches(&Host::parse("127.0.0.2").unwrap()));
        assert!(!pattern.matches(&Host::parse("localhost").unwrap()));
        let v6 = Pattern::parse("[::1]").unwrap();
        assert_eq!(Pattern::parse("::1").unwrap(), v6);
        assert!(v6.matches(&Host::parse("[0:0::1]").unwrap()));
    }

    #[test]
    fn malformed_patterns_are_refused() {
        for written in [
            "*example.com",
            "a.*.example.com",
            "example.*",
            "**.example.com",
            "*.",
            "",
            "a@b",
        ] {
            assert!(Pattern::parse(written).is_err(), "{written:?} was accepted");
        }
        assert_eq!(Pattern::parse(" * "), Ok(Pattern::Any));
        assert!(Pattern::Any.matches(&name("example.com")));
        assert!(!Pattern::Any.matches(&ip("10.0.0.1")));
    }

    /// Generated: for any label sequence, a wildcard matches exactly the names that end with
    /// "." + its suffix, whatever case or trailing dot the name is written with.
    #[test]
    fn generated_names_match_wildcards_by_label_suffix() {
        let labels = [
            "a",
            "example",
            "com",
            "xn--bcher-kva",
            "b-c",
            "evil",
            "test",
        ];
        let pattern = Pattern::parse("*.example.com").unwrap();
        for a in labels {
            for b in labels {
                for c in labels {
                    let text = format!("{a}.{b}.{c}");
                    let host = Host::parse(&text).unwrap();
                    let expected = text.ends_with(".example.com");
                    assert_eq!(pattern.matches(&host), expected, "{text}");
                    let shouted = format!("{}.", text.to_uppercase());
                    assert_eq!(
                        pattern.matches(&Host::parse(&shouted).unwrap()),
                        expected,
                        "{shouted}"
                    );
                }
            }
        }
    }
}
