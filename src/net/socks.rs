//! SOCKS5 as the proxy speaks it (RFC 1928): no authentication, `CONNECT` only, the target a
//! host name (`socks5h://`, the name decided as written) or an address. Pure: the messages
//! read and written; `proxy.rs` does the I/O.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::host::Host;

/// The protocol version, the first byte of every SOCKS5 message.
pub const VERSION: u8 = 5;

/// The method "no authentication required".
const NO_AUTH: u8 = 0;
/// The method reply: no offered method is acceptable.
const NO_METHOD: u8 = 0xff;

/// Reply codes (`REP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Succeeded.
    Success = 0,
    /// Connection not allowed by ruleset (a refused host).
    NotAllowed = 2,
    /// Host unreachable (resolving or connecting failed).
    HostUnreachable = 4,
    /// Command not supported (only `CONNECT` is).
    CommandNotSupported = 7,
    /// Address type not supported.
    AddressNotSupported = 8,
}

/// What reading a message found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read<T> {
    /// Not all of it has arrived.
    NeedMore,
    /// The message, and how many bytes it took.
    Done(T, usize),
    /// Malformed: answer with this reply (if any) and close.
    Bad(Option<Reply>),
}

/// Reads the greeting (`VER NMETHODS METHODS…`); `Done(true)` when "no authentication" is
/// offered.
#[must_use]
pub fn greeting(bytes: &[u8]) -> Read<bool> {
    match bytes {
        [] | [VERSION] => Read::NeedMore,
        [VERSION, count, methods @ ..] => {
            let count = usize::from(*count);
            match methods.get(..count) {
                Some(offered) => Read::Done(offered.contains(&NO_AUTH), 2 + count),
                None => Read::NeedMore,
            }
        }
        _ => Read::Bad(None),
    }
}

/// The answer to a greeting.
#[must_use]
pub fn method_reply(no_auth_offered: bool) -> [u8; 2] {
    [VERSION, if no_auth_offered { NO_AUTH } else { NO_METHOD }]
}

/// Reads a request (`VER CMD RSV ATYP ADDR PORT`): the target of a `CONNECT`.
#[must_use]
pub fn request(bytes: &[u8]) -> Read<(Host, u16)> {
    let [version, command, _reserved, kind, rest @ ..] = bytes else {
        return Read::NeedMore;
    };
    if *version != VERSION {
        return Read::Bad(None);
    }
    let (host, used) = match kind {
        1 => match rest.get(..4) {
            Some(&[a, b, c, d]) => (Ok(Host::Ip(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))), 4),
            _ => return Read::NeedMore,
        },
        4 => match rest.get(..16).and_then(|b| <[u8; 16]>::try_from(b).ok()) {
            Some(octets) => (Ok(Host::Ip(IpAddr::V6(Ipv6Addr::from(octets)))), 16),
            None => return Read::NeedMore,
        },
        3 => {
            let Some(&length) = rest.first() else {
                return Read::NeedMore;
            };
            let length = usize::from(length);
            match rest.get(1..=length) {
                Some(name) => (
                    std::str::from_utf8(name)
                        .map_err(|_| ())
                        .and_then(|name| Host::parse(name).map_err(|_| ())),
                    1 + length,
                ),
                None => return Read::NeedMore,
            }
        }
        _ => return Read::Bad(Some(Reply::AddressNotSupported)),
    };
    let Some(&[high, low]) = rest.get(used..used + 2) else {
        return Read::NeedMore;
    };
    if *command != 1 {
        return Read::Bad(Some(Reply::CommandNotSupported));
    }
    let port = u16::from_be_bytes([high, low]);
    match host {
        Ok(host) if port != 0 => Read::Done((host, port), 4 + used + 2),
        _ => Read::Bad(Some(Reply::HostUnreachable)),
    }
}

/// The reply to a request (the bound address is not told: zeros).
#[must_use]
pub fn reply(code: Reply) -> [u8; 10] {
    [VERSION, code as u8, 0, 1, 0, 0, 0, 0, 0, 0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn connect(kind: u8, address: &[u8], port: u16) -> Vec<u8> {
        let mut bytes = vec![VERSION, 1, 0, kind];
        bytes.extend_from_slice(address);
        bytes.extend_from_slice(&port.to_be_bytes());
        bytes
    }

    #[test]
    fn a_greeting_offers_no_authentication_or_not() {
        assert_eq!(greeting(&[5, 2, 2, 0]), Read::Done(true, 4));
        assert_eq!(greeting(&[5, 1, 2]), Read::Done(false, 3));
        assert_eq!(greeting(&[5, 2, 0]), Read::NeedMore);
        assert_eq!(greeting(&[4, 1, 0]), Read::Bad(None));
        assert_eq!(method_reply(false), [5, 0xff]);
    }

    #[test]
    fn a_connect_names_a_host_or_an_address() {
        let mut name = vec![12];
        name.extend_from_slice(b"Allowed.test");
        let bytes = connect(3, &name, 443);
        assert_eq!(
            request(&bytes),
            Read::Done((Host::parse("allowed.test").unwrap(), 443), bytes.len())
        );
        for cut in 0..bytes.len() {
            assert_eq!(request(&bytes[..cut]), Read::NeedMore, "cut at {cut}");
        }
        assert_eq!(
            request(&connect(1, &[127, 0, 0, 1], 80)),
            Read::Done((Host::parse("127.0.0.1").unwrap(), 80), 10)
        );
        let v6 = connect(4, &Ipv6Addr::LOCALHOST.octets(), 80);
        assert_eq!(
            request(&v6),
            Read::Done((Host::parse("::1").unwrap(), 80), 22)
        );
    }

    #[test]
    fn what_is_not_a_plain_connect_is_refused() {
        let mut bind = connect(1, &[1, 2, 3, 4], 80);
        bind[1] = 2;
        assert_eq!(request(&bind), Read::Bad(Some(Reply::CommandNotSupported)));
        assert_eq!(
            request(&connect(9, &[0], 80)),
            Read::Bad(Some(Reply::AddressNotSupported))
        );
        let mut evil = vec![8];
        evil.extend_from_slice(b"a@b.test");
        assert_eq!(
            request(&connect(3, &evil, 80)),
            Read::Bad(Some(Reply::HostUnreachable))
        );
        assert_eq!(
            request(&connect(1, &[1, 1, 1, 1], 0)),
            Read::Bad(Some(Reply::HostUnreachable))
        );
    }
}
