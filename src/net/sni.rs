//! The server name a TLS client asks for (SNI), read from its whole ClientHello — reassembled
//! from as many handshake records as it spans — without terminating TLS: a tunnel opened for
//! one host must not carry a handshake for another (domain fronting through an allowed CDN
//! address). What starts like TLS but is no complete, well-formed ClientHello is refused, not
//! let through unchecked. Pure.

/// What the first bytes of a tunnel say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hello {
    /// Not all of the ClientHello has arrived.
    NeedMore,
    /// Not a TLS handshake record (another protocol): nothing to check here.
    NotTls,
    /// A whole ClientHello, with the host name it names (if any).
    Tls(Option<String>),
    /// Starts like a TLS handshake but is no well-formed ClientHello (or too large): refused.
    Bad,
}

/// The most bytes read for one ClientHello (its records and their headers); past it, refused.
pub const MAX_HELLO_BYTES: usize = 64 * 1024;

/// Reads the server name from the ClientHello at the start of `bytes`, across records.
#[must_use]
pub fn client_hello(bytes: &[u8]) -> Hello {
    match bytes {
        [] => return Hello::NeedMore,
        [first, ..] if *first != 0x16 => return Hello::NotTls,
        [_, second, ..] if *second != 0x03 => return Hello::NotTls,
        _ => {}
    }
    let mut message = Vec::new();
    let mut rest = bytes;
    loop {
        // The message's own length, once its header is in.
        if let [kind, a, b, c, ..] = message[..] {
            let total = 4 + (usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c));
            if kind != 1 || total > MAX_HELLO_BYTES {
                return Hello::Bad;
            }
            if message.len() >= total {
                // Bytes past the message in its last record are not the hello's: refused too.
                if message.len() > total {
                    return Hello::Bad;
                }
                return parse_hello(&message[4..]).unwrap_or(Hello::Bad);
            }
        }
        if rest.len() < 5 {
            return if bytes.len() >= MAX_HELLO_BYTES {
                Hello::Bad
            } else {
                Hello::NeedMore
            };
        }
        // Every record until the hello is whole must be a non-empty handshake record.
        let length = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        if rest[0] != 0x16 || rest[1] != 0x03 || length == 0 || length > 16 * 1024 {
            return Hello::Bad;
        }
        let Some(fragment) = rest.get(5..5 + length) else {
            return Hello::NeedMore;
        };
        message.extend_from_slice(fragment);
        rest = &rest[5 + length..];
    }
}

/// A cursor over a byte slice that fails (returns `None`) past its end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn number(&mut self, bytes: usize) -> Option<usize> {
        Some(
            self.take(bytes)?
                .iter()
                .fold(0usize, |n, b| (n << 8) | usize::from(*b)),
        )
    }

    fn vector(&mut self, length_bytes: usize) -> Option<Reader<'a>> {
        let n = self.number(length_bytes)?;
        self.take(n).map(Reader)
    }
}

/// The host name in a whole ClientHello's body ([`Hello::Tls`], with `None` when it names
/// none); `None`: malformed, or naming more than one host.
fn parse_hello(body: &[u8]) -> Option<Hello> {
    let mut body = Reader(body);
    body.take(2 + 32)?; // version, random
    body.vector(1)?; // session id
    body.vector(2)?; // cipher suites
    body.vector(1)?; // compression methods
    if body.0.is_empty() {
        return Some(Hello::Tls(None));
    }
    let mut extensions = body.vector(2)?;
    if !body.0.is_empty() {
        return None;
    }
    // One server name at most: a second (in the list or another extension) is refused, for
    // a server might read another than the one checked.
    let mut found = None;
    while !extensions.0.is_empty() {
        let kind = extensions.number(2)?;
        let mut data = extensions.vector(2)?;
        if kind != 0 {
            continue;
        }
        let mut names = data.vector(2)?;
        while !names.0.is_empty() {
            names.number(1)?;
            let name = names.vector(2)?;
            if found.is_some() {
                return None;
            }
            found = Some(String::from_utf8_lossy(name.0).into_owned());
        }
    }
    Some(Hello::Tls(found))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A minimal ClientHello record naming `name` (or none).
    fn hello(name: Option<&str>) -> Vec<u8> {
        let mut extensions = Vec::new();
        // An unrelated extension first (supported_versions).
        extensions.extend_from_slice(&[0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04]);
        if let Some(name) = name {
            let n = name.len();
            let list = n + 3;
            let ext = list + 2;
            extensions.extend_from_slice(&[0, 0]);
            extensions.extend_from_slice(&u16::try_from(ext).unwrap().to_be_bytes());
            extensions.extend_from_slice(&u16::try_from(list).unwrap().to_be_bytes());
            extensions.push(0);
            extensions.extend_from_slice(&u16::try_from(n).unwrap().to_be_bytes());
            extensions.extend_from_slice(name.as_bytes());
        }
        let mut body = vec![0x03, 0x03];
        body.extend_from_slice(&[7; 32]);
        body.extend_from_slice(&[0]); // session id
        body.extend_from_slice(&[0, 2, 0x13, 0x01]); // one cipher suite
        body.extend_from_slice(&[1, 0]); // null compression
        body.extend_from_slice(&u16::try_from(extensions.len()).unwrap().to_be_bytes());
        body.extend_from_slice(&extensions);
        let mut message = vec![1];
        message.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes()[1..]);
        message.extend_from_slice(&body);
        let mut record = vec![0x16, 0x03, 0x01];
        record.extend_from_slice(&u16::try_from(message.len()).unwrap().to_be_bytes());
        record.extend_from_slice(&message);
        record
    }

    #[test]
    fn the_name_is_read_from_a_whole_record() {
        assert_eq!(
            client_hello(&hello(Some("allowed.test"))),
            Hello::Tls(Some("allowed.test".to_owned()))
        );
        assert_eq!(client_hello(&hello(None)), Hello::Tls(None));
    }

    #[test]
    fn a_partial_record_asks_for_more_at_every_cut() {
        let whole = hello(Some("allowed.test"));
        for cut in 0..whole.len() {
            assert_eq!(client_hello(&whole[..cut]), Hello::NeedMore, "cut at {cut}");
        }
    }

    #[test]
    fn other_protocols_and_garbage_are_not_tls() {
        assert_eq!(client_hello(b"GET / HTTP/1.1\r\n"), Hello::NotTls);
        assert_eq!(client_hello(b"SSH-2.0-OpenSSH"), Hello::NotTls);
        let mut broken = hello(Some("a.test"));
        broken[5] = 2; // a ServerHello
        assert_eq!(client_hello(&broken), Hello::Bad);
        // Lengths that point past the record never panic.
        for at in 5..broken.len() {
            let mut bytes = hello(Some("a.test"));
            bytes[at] = 0xff;
            let _ = client_hello(&bytes);
        }
    }

    /// A ClientHello naming another host, split over two records (legal TLS: a handshake
    /// message may span records), does not pass as "no name" / "not TLS".
    #[test]
    fn a_fragmented_hello_still_names_its_host() {
        let whole = hello(Some("blocked.test"));
        let message = &whole[5..];
        let (a, b) = message.split_at(6);
        let mut split = Vec::new();
        for part in [a, b] {
            split.extend_from_slice(&[0x16, 0x03, 0x01]);
            split.extend_from_slice(&u16::try_from(part.len()).unwrap().to_be_bytes());
            split.extend_from_slice(part);
        }
        let seen = client_hello(&split);
        assert!(
            !matches!(seen, Hello::NotTls | Hello::Tls(None)),
            "a fragmented ClientHello for blocked.test passes the check: {seen:?}"
        );
    }

    /// The hello split into records at every pair of places reads the same name; a cut one
    /// asks for more; records of another kind, empty records and bytes after the message
    /// are refused.
    #[test]
    fn a_hello_over_any_records_is_read_whole() {
        let whole = hello(Some("blocked.test"));
        let message = &whole[5..];
        let records = |parts: &[&[u8]]| {
            let mut out = Vec::new();
            for part in parts {
                out.extend_from_slice(&[0x16, 0x03, 0x01]);
                out.extend_from_slice(&u16::try_from(part.len()).unwrap().to_be_bytes());
                out.extend_from_slice(part);
            }
            out
        };
        let named = Hello::Tls(Some("blocked.test".to_owned()));
        for a in 1..message.len() {
            for b in a + 1..message.len() {
                let split = records(&[&message[..a], &message[a..b], &message[b..]]);
                assert_eq!(client_hello(&split), named, "cut at {a}, {b}");
                for cut in 0..split.len() {
                    assert_eq!(
                        client_hello(&split[..cut]),
                        Hello::NeedMore,
                        "{a} {b} {cut}"
                    );
                }
            }
        }
        let mut other = records(&[&message[..6], &message[6..]]);
        other[5 + 6] = 0x17; // application data before the hello is whole
        assert_eq!(client_hello(&other), Hello::Bad);
        let empty = records(&[&message[..6], &[], &message[6..]]);
        assert_eq!(client_hello(&empty), Hello::Bad);
        let mut trailing = message.to_vec();
        trailing.push(0);
        assert_eq!(client_hello(&records(&[&trailing])), Hello::Bad);
    }

    #[test]
    fn a_hello_naming_two_hosts_is_refused() {
        let mut bytes = hello(Some("allowed.test"));
        // A second server name extension, appended to the extensions.
        let extra = [0u8, 0, 0, 9, 0, 7, 0, 0, 4, b'b', b'.', b't', b'e'];
        let ext_len_at = 5 + 4 + 2 + 32 + 1 + 4 + 2;
        let old = usize::from(u16::from_be_bytes([
            bytes[ext_len_at],
            bytes[ext_len_at + 1],
        ]));
        let new = u16::try_from(old + extra.len()).unwrap().to_be_bytes();
        bytes[ext_len_at..ext_len_at + 2].copy_from_slice(&new);
        bytes.extend_from_slice(&extra);
        let body = u32::try_from(bytes.len() - 9).unwrap().to_be_bytes();
        bytes[6..9].copy_from_slice(&body[1..]);
        let record = u16::try_from(bytes.len() - 5).unwrap().to_be_bytes();
        bytes[3..5].copy_from_slice(&record);
        assert_eq!(client_hello(&bytes), Hello::Bad);
    }
}
