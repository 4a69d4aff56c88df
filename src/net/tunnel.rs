//! What a tunnel's first bytes are (`CONNECT`, SOCKS5): the proxy decided on the tunnel's
//! host, and what goes through must be for that host too. A TLS ClientHello must name it
//! ([`sni`](super::sni)); a plain-HTTP request must carry it in its `Host` (front ends route
//! by it: `Host: other-tenant.example` to an allowed CDN address reaches another site);
//! other protocols (SSH, a database) are relayed. Pure.

use super::host::Host;
use super::request::{Ask, MAX_HEAD_BYTES, body_length, host_header, parse};
use super::sni::{Hello, MAX_HELLO_BYTES, client_hello};

/// The kind of a tunnel's opening bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
    /// Not enough has arrived to tell.
    NeedMore,
    /// A whole TLS ClientHello, with the server name it names (if any).
    Tls(Option<String>),
    /// A plain-HTTP request head at `start..end` (after any empty lines).
    Http {
        /// Where the request line starts.
        start: usize,
        /// Just past the head's blank line.
        end: usize,
    },
    /// Another protocol: nothing to check.
    Other,
    /// Refused: why (no byte of the client's in it).
    Bad(&'static str),
}

/// Reads a tunnel's opening bytes.
#[must_use]
pub fn opening(bytes: &[u8]) -> Opening {
    match client_hello(bytes) {
        Hello::NeedMore => return Opening::NeedMore,
        Hello::Tls(name) => return Opening::Tls(name),
        Hello::Bad => return Opening::Bad("a TLS handshake that is not one whole ClientHello"),
        Hello::NotTls => {}
    }
    // A server reads a request line after any empty lines; a line holding `HTTP/` is one.
    let start = bytes
        .iter()
        .position(|b| !matches!(b, b'\r' | b'\n'))
        .unwrap_or(bytes.len());
    let text = |b: &u8| b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\r');
    let line = &bytes[start..];
    match line.iter().position(|b| !text(b)) {
        // Binary before the line's end: another protocol.
        Some(at) if line[at] != b'\n' => return Opening::Other,
        Some(_) => {}
        None if bytes.len() >= MAX_HEAD_BYTES => return Opening::Bad("a line too long"),
        None => return Opening::NeedMore,
    }
    let first_line = line.split(|b| *b == b'\n').next().unwrap_or_default();
    let http = first_line
        .windows(5)
        .any(|window| window.eq_ignore_ascii_case(b"HTTP/"));
    if !http {
        return Opening::Other;
    }
    match super::request::head_end(line) {
        Some(end) => Opening::Http {
            start,
            end: start + end,
        },
        None if bytes.len() >= MAX_HEAD_BYTES => Opening::Bad("a request head too large"),
        None => Opening::NeedMore,
    }
}

/// What of the client's bytes goes to the origin.
pub enum Through {
    /// Every byte (another protocol, or TLS for the tunnel's host).
    All,
    /// One plain-HTTP request: `head` (rewritten for the origin), then `length` body bytes
    /// from `first[at..]` on; nothing after them (a pipelined request is decided by nobody).
    One {
        /// The request head for the origin.
        head: Vec<u8>,
        /// Where its body starts in the bytes judged.
        at: usize,
        /// The body's length.
        length: u64,
    },
}

/// What may go through a tunnel to `host` whose client sent `bytes` so far: `None` while
/// more is needed, else what goes on to the origin, or why nothing does (no byte of the
/// client's in it).
#[must_use]
pub fn judge(bytes: &[u8], host: &Host) -> Option<Result<Through, String>> {
    Some(match opening(bytes) {
        Opening::NeedMore if bytes.len() < 2 * MAX_HELLO_BYTES => return None,
        Opening::NeedMore => Err("the tunnel's opening is too large".to_owned()),
        Opening::Other | Opening::Tls(None) => Ok(Through::All),
        Opening::Tls(Some(name)) => match Host::parse(&name) {
            Ok(named) if named == *host => Ok(Through::All),
            Ok(named) => Err(format!(
                "the TLS handshake names `{}`, not the tunnel's host",
                named.display()
            )),
            Err(_) => Err("the TLS handshake names no valid host".to_owned()),
        },
        Opening::Bad(why) => Err(format!("the tunnel carries {why}")),
        Opening::Http { start, end } => http_in_tunnel(&bytes[start..end], host, end),
    })
}

/// A plain-HTTP request inside a tunnel to `host`: allowed only for that host (its `Host`,
/// or its absolute URL), rewritten like any plain request; a request without `Host` gets the
/// tunnel's. `end`: where its body starts in the tunnel's first bytes.
fn http_in_tunnel(head: &[u8], host: &Host, end: usize) -> Result<Through, String> {
    let has_host = String::from_utf8_lossy(head)
        .split("\r\n")
        .skip(1)
        .any(|line| {
            line.split_once(':')
                .is_some_and(|(name, _)| name.eq_ignore_ascii_case("host"))
        });
    let ask = if has_host {
        parse(head)
    } else {
        let line_end = head.iter().position(|b| *b == b'\n').map_or(0, |at| at + 1);
        let mut with_host = head[..line_end].to_vec();
        with_host.extend_from_slice(format!("Host: {}\r\n", host_header(host)).as_bytes());
        with_host.extend_from_slice(&head[line_end..]);
        parse(&with_host)
    };
    match ask? {
        Ask::Forward {
            host: named,
            head: rewritten,
            ..
        } if named == *host => Ok(Through::One {
            head: rewritten,
            at: end,
            length: body_length(head)?,
        }),
        Ask::Forward { host: named, .. } => Err(format!(
            "a plain-HTTP request in the tunnel names `{}`, not the tunnel's host",
            named.display()
        )),
        Ask::Tunnel { .. } | Ask::Resolve { .. } => {
            Err("a request in the tunnel that is not plain HTTP".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_request_head_is_found_after_empty_lines_and_at_every_cut() {
        for lead in ["", "\r\n", "\n\r\n"] {
            let head = format!("{lead}GET / HTTP/1.1\r\nHost: a.test\r\n\r\n");
            let bytes = format!("{head}body");
            assert_eq!(
                opening(bytes.as_bytes()),
                Opening::Http {
                    start: lead.len(),
                    end: head.len()
                },
                "{lead:?}"
            );
            for cut in 0..head.len() {
                assert_eq!(
                    opening(&bytes.as_bytes()[..cut]),
                    Opening::NeedMore,
                    "{cut}"
                );
            }
        }
        // Any method, any case of the version: a server may still take it.
        for line in [
            "FOO / http/1.0",
            "get http://b.test/ HTTP/1.1",
            "PRI * HTTP/2.0",
        ] {
            let head = format!("{line}\r\n\r\n");
            assert!(
                matches!(opening(head.as_bytes()), Opening::Http { .. }),
                "{line}"
            );
        }
    }

    #[test]
    fn other_protocols_are_relayed_without_waiting_for_a_line() {
        for bytes in [
            &b"SSH-2.0-OpenSSH_9.6\r\n"[..],
            b"\x00\x00\x00\x08\x04\xd2\x16\x2f",
            b"*1\r\n$4\r\nPING\r\n",
            b"EHLO me\r\n",
        ] {
            assert_eq!(opening(bytes), Opening::Other, "{bytes:?}");
        }
    }

    #[test]
    fn a_text_line_without_end_is_bounded() {
        assert_eq!(opening(&[b'a'; 100]), Opening::NeedMore);
        assert!(matches!(
            opening(&vec![b'a'; MAX_HEAD_BYTES]),
            Opening::Bad(_)
        ));
        let mut head = b"GET / HTTP/1.1\r\n".to_vec();
        head.resize(MAX_HEAD_BYTES, b'a');
        assert!(matches!(opening(&head), Opening::Bad(_)));
    }
}
