//! What a client asks the proxy for, read from the head of its first request: a tunnel
//! (`CONNECT host:port`) or one plain-HTTP request (`GET http://host:port/path`, or an
//! origin-form request with a `Host` header). For a plain request the head is rewritten for
//! the origin server: origin-form target, `Host` set to the host the decision was made on
//! (so a second `Host` cannot name another site), proxy headers dropped, and `Connection:
//! close` (one request per connection: the next one is decided again). Pure.

use super::host::{Host, split_authority};

/// The longest request head the proxy reads (request line and headers).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// Headers that concern the hop to the proxy only, never sent on.
const HOP_HEADERS: &[&str] = &[
    "host",
    "connection",
    "proxy-connection",
    "proxy-authorization",
    "keep-alive",
    "upgrade",
    "te",
];

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// `CONNECT host:port`: a tunnel (TLS, which the proxy never terminates).
    Tunnel {
        /// The host.
        host: Host,
        /// The port.
        port: u16,
    },
    /// `RESOLVE name` (the stub resolver in the command's namespace): the addresses the
    /// proxy would connect to, if the name is allowed.
    Resolve {
        /// The name.
        host: Host,
    },
    /// One plain-HTTP request.
    Forward {
        /// The host.
        host: Host,
        /// The port.
        port: u16,
        /// The head to send to the origin server.
        head: Vec<u8>,
    },
}

impl Ask {
    /// The host and port asked for.
    #[must_use]
    pub fn target(&self) -> (&Host, u16) {
        match self {
            Ask::Tunnel { host, port } | Ask::Forward { host, port, .. } => (host, *port),
            // A name is looked up for HTTPS most often.
            Ask::Resolve { host } => (host, 443),
        }
    }
}

/// Where the head ends (just past the blank line), if `buffer` holds all of it.
#[must_use]
pub fn head_end(buffer: &[u8]) -> Option<usize> {
    buffer
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .map(|at| at + 4)
}

/// Parses a request head (everything up to and including the blank line).
///
/// # Errors
/// Why it is not a request the proxy serves (said in the `400` reply).
pub fn parse(head: &[u8]) -> Result<Ask, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8".to_owned())?;
    let text = text
        .strip_suffix("\r\n\r\n")
        .ok_or_else(|| "the request head does not end with a blank line".to_owned())?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    // The request line is printable ASCII: its parts are compared, sliced and shown.
    if let Some(bad) = request_line.chars().find(|c| !(' '..='~').contains(c)) {
        return Err(format!(
            "a request line with the character `{}`",
            bad.escape_default()
        ));
    }
    let headers: Vec<(&str, &str)> = lines
        .map(|line| {
            if line.contains(|c: char| c.is_control() && c != '\t') || line.starts_with([' ', '\t'])
            {
                return Err("a malformed header line".to_owned());
            }
            line.split_once(':')
                .map(|(name, value)| (name, value.trim()))
                .filter(|(name, _)| !name.is_empty() && !name.contains([' ', '\t']))
                .ok_or_else(|| format!("a malformed header line `{}`", line.escape_debug()))
        })
        .collect::<Result<_, _>>()?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!(
            "a malformed request line `{}`",
            request_line.escape_debug()
        ));
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0") || method.is_empty() {
        return Err(format!(
            "an unsupported request `{}`",
            request_line.escape_debug()
        ));
    }
    if method == "RESOLVE" {
        return Host::parse(target).map(|host| Ask::Resolve { host });
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_authority(target, None)?;
        return Ok(Ask::Tunnel { host, port });
    }
    let (authority, path) = if let Some(rest) = strip_prefix_ignore_case(target, "http://") {
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let path = &rest[end..];
        let path = match path.chars().next() {
            Some('/') => path.to_owned(),
            _ => format!("/{path}"),
        };
        (rest[..end].to_owned(), path)
    } else if target.starts_with('/') {
        let hosts: Vec<&str> = headers
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case("host"))
            .map(|(_, value)| *value)
            .collect();
        match hosts.as_slice() {
            [one] => ((*one).to_owned(), target.to_owned()),
            _ => return Err("a request without one `Host` header".to_owned()),
        }
    } else {
        return Err(format!(
            "only `http://` URLs and `CONNECT` go through the proxy, not `{}`",
            target.escape_debug()
        ));
    };
    let path = path.split('#').next().unwrap_or("/").to_owned();
    let (host, port) = split_authority(&authority, Some(80))?;
    let shown_host = host_header(&host);
    let mut out = format!("{method} {path} {version}\r\nHost: {shown_host}");
    if port != 80 {
        out.push_str(&format!(":{port}"));
    }
    out.push_str("\r\n");
    for (name, value) in headers {
        if !HOP_HEADERS.iter().any(|hop| name.eq_ignore_ascii_case(hop)) {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(Ask::Forward {
        host,
        port,
        head: out.into_bytes(),
    })
}

/// `host` as a `Host` header names it (IPv6 in brackets).
#[must_use]
pub fn host_header(host: &Host) -> String {
    match host {
        Host::Ip(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        other => other.display(),
    }
}

/// The length of the body after a request `head` (as the client sent it): its one
/// `Content-Length`, or none. The proxy sends exactly that many bytes on and stops: whatever
/// the client sends next (a pipelined request for another host) never reaches the origin.
///
/// # Errors
/// A body whose end the proxy cannot tell (`Transfer-Encoding`, several or malformed
/// lengths).
pub fn body_length(head: &[u8]) -> Result<u64, String> {
    let text = String::from_utf8_lossy(head);
    let mut lengths = Vec::new();
    for (name, value) in text
        .split("\r\n")
        .skip(1)
        .filter_map(|line| line.split_once(':'))
    {
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(
                "a request body in chunks goes through the proxy only with a length".into(),
            );
        }
        if name.eq_ignore_ascii_case("content-length") {
            lengths.push(value.trim().to_owned());
        }
    }
    match lengths.as_slice() {
        [] => Ok(0),
        [one] if !one.is_empty() && one.bytes().all(|b| b.is_ascii_digit()) => one
            .parse()
            .map_err(|_| "a request body too large".to_owned()),
        _ => Err("a request with a malformed `Content-Length`".to_owned()),
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
        .then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn name(text: &str) -> Host {
        Host::Name(text.to_owned())
    }

    #[test]
    fn connect_names_the_tunnel() {
        assert_eq!(
            parse(b"CONNECT Example.com.:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
            Ok(Ask::Tunnel {
                host: name("example.com"),
                port: 443
            })
        );
        for bad in [
            "CONNECT example.com HTTP/1.1\r\n\r\n",
            "CONNECT user@example.com:443 HTTP/1.1\r\n\r\n",
            "CONNECT example.com:443 HTTP/2\r\n\r\n",
            "CONNECT example.com:443  HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn plain_requests_are_rewritten_for_the_origin() {
        let head = b"GET http://Allowed.test:8080/a/b?c#frag HTTP/1.1\r\nHost: evil.test\r\nUser-Agent: curl\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n\r\n";
        let expected = "GET /a/b?c HTTP/1.1\r\nHost: allowed.test:8080\r\nUser-Agent: curl\r\nConnection: close\r\n\r\n";
        assert_eq!(
            parse(head),
            Ok(Ask::Forward {
                host: name("allowed.test"),
                port: 8080,
                head: expected.as_bytes().to_vec()
            })
        );
        let Ok(Ask::Forward { head, port, .. }) = parse(b"GET http://a.test HTTP/1.0\r\n\r\n")
        else {
            panic!("not parsed");
        };
        assert_eq!(port, 80);
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "GET / HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn resolve_names_a_host() {
        assert_eq!(
            parse(b"RESOLVE Allowed.test. HTTP/1.1\r\n\r\n"),
            Ok(Ask::Resolve {
                host: name("allowed.test")
            })
        );
        assert!(parse(b"RESOLVE a@b HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn origin_form_is_decided_by_its_one_host_header() {
        assert!(matches!(
            parse(b"GET / HTTP/1.1\r\nHost: a.test:81\r\n\r\n"),
            Ok(Ask::Forward { port: 81, .. })
        ));
        for bad in [
            "GET / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: user@a.test\r\n\r\n",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn smuggling_shapes_are_refused() {
        for bad in [
            "GET http://a.test/ HTTP/1.1\r\nX: y\r\n folded\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\nBad Header: y\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
            "GET http://a.test@b.test/ HTTP/1.1\r\n\r\n",
            "GET https://a.test/ HTTP/1.1\r\n\r\n",
            "GET ftp://a.test/ HTTP/1.1\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\n",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_head_ends_at_the_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nbody"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n"), None);
    }

    #[test]
    fn the_body_length_is_one_content_length_or_none() {
        let head = |headers: &str| format!("POST / HTTP/1.1\r\n{headers}\r\n");
        assert_eq!(body_length(head("Host: a\r\n").as_bytes()), Ok(0));
        assert_eq!(
            body_length(head("content-length: 12\r\n").as_bytes()),
            Ok(12)
        );
        for bad in [
            "Transfer-Encoding: chunked\r\n",
            "Content-Length: 1\r\nContent-Length: 2\r\n",
            "Content-Length: -1\r\n",
            "Content-Length: 1,1\r\n",
            "Content-Length: 99999999999999999999999\r\n",
        ] {
            assert!(body_length(head(bad).as_bytes()).is_err(), "{bad:?}");
        }
    }

    /// rev-net: a multi-byte character at byte 7 of the target panics the proxy (and the panic
    /// message prints the target raw to the agent's stderr).
    #[test]
    fn rev_net_a_target_with_a_wide_character_is_refused_not_a_panic() {
        assert!(parse("GET http:/\u{e9} HTTP/1.1\r\n\r\n".as_bytes()).is_err());
    }

    /// Every byte outside printable ASCII, at every place of the request line, is refused
    /// with a message that holds no control character (and nothing panics).
    #[test]
    fn a_request_line_outside_printable_ascii_is_refused() {
        let line = "GET http://a.test/ HTTP/1.1";
        for bad in [
            "\u{1b}", "\u{7}", "\u{9b}", "\u{e9}", "\u{7f}", "\t", "\u{2028}", "\0",
        ] {
            for at in 0..=line.len() {
                let head = format!("{}{bad}{}\r\n\r\n", &line[..at], &line[at..]);
                let why = parse(head.as_bytes()).unwrap_err();
                assert!(!why.chars().any(char::is_control), "{why:?}");
            }
        }
        for bad in ["\u{1b}[31m", "\u{7f}", "\0"] {
            let head = format!("GET http://a.test/ HTTP/1.1\r\nX-A: a{bad}\r\n\r\n");
            assert!(parse(head.as_bytes()).is_err(), "{head:?}");
        }
    }
}
