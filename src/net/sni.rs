//! The server name a TLS client asks for (SNI), read from the first record of its
//! ClientHello without terminating TLS: a tunnel opened for one host must not carry a
//! handshake for another (domain fronting through an allowed CDN address). Pure.

/// What the first bytes of a tunnel say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hello {
    /// Not all of the first record has arrived.
    NeedMore,
    /// Not a TLS handshake (another protocol, or a malformed record): nothing to check.
    NotTls,
    /// A ClientHello, with the host name it names (if any).
    Tls(Option<String>),
}

/// The largest TLS record (2^14 bytes of payload and its 5-byte header).
pub const MAX_RECORD_BYTES: usize = 16 * 1024 + 5;

/// Reads the server name from the ClientHello at the start of `bytes`.
#[must_use]
pub fn client_hello(bytes: &[u8]) -> Hello {
    if bytes.len() < 5 {
        return if bytes.first().is_some_and(|b| *b != 0x16) {
            Hello::NotTls
        } else {
            Hello::NeedMore
        };
    }
    if bytes[0] != 0x16 || bytes[1] != 0x03 {
        return Hello::NotTls;
    }
    let length = usize::from(u16::from_be_bytes([bytes[3], bytes[4]]));
    let Some(record) = bytes.get(5..5 + length) else {
        return Hello::NeedMore;
    };
    parse_hello(record).unwrap_or(Hello::NotTls)
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

/// The host name in a ClientHello handshake message ([`Hello::Tls`], with `None` when it names
/// none); `None`: not a ClientHello.
fn parse_hello(record: &[u8]) -> Option<Hello> {
    let mut r = Reader(record);
    if r.number(1)? != 1 {
        return None;
    }
    // The message may go on in a next record; what the first holds is read.
    let length = r.number(3)?;
    let mut body = Reader(r.0.get(..length.min(r.0.len()))?);
    body.take(2 + 32)?; // version, random
    body.vector(1)?; // session id
    body.vector(2)?; // cipher suites
    body.vector(1)?; // compression methods
    let Some(mut extensions) = body.vector(2) else {
        return Some(Hello::Tls(None));
    };
    while !extensions.0.is_empty() {
        let kind = extensions.number(2)?;
        let mut data = extensions.vector(2)?;
        if kind != 0 {
            continue;
        }
        let mut names = data.vector(2)?;
        while !names.0.is_empty() {
            let name_type = names.number(1)?;
            let name = names.vector(2)?;
            if name_type == 0 {
                let name = String::from_utf8_lossy(name.0).into_owned();
                return Some(Hello::Tls(Some(name)));
            }
        }
    }
    Some(Hello::Tls(None))
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
        assert_eq!(client_hello(&broken), Hello::NotTls);
        // Lengths that point past the record never panic.
        for at in 5..broken.len() {
            let mut bytes = hello(Some("a.test"));
            bytes[at] = 0xff;
            let _ = client_hello(&bytes);
        }
    }
}
