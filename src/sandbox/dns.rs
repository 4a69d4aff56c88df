//! The DNS messages of the stub resolver in a command's network namespace (`netns.rs`): a
//! query read, an answer written. Only what a stub needs: one question, `A` and `AAAA`
//! answers, NXDOMAIN for a name the proxy refuses, an empty answer for other types. Pure.

use std::net::IpAddr;

/// Record type `A` (IPv4).
const TYPE_A: u16 = 1;
/// Record type `AAAA` (IPv6).
const TYPE_AAAA: u16 = 28;
/// Class `IN`.
const CLASS_IN: u16 = 1;
/// How long a command may keep an answer (seconds): short, the rules may change.
const ANSWER_TTL_SECS: u32 = 5;

/// One question of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Query {
    /// The query's id, echoed in the answer.
    pub id: u16,
    /// The name asked for, as written (dots between labels, no trailing dot).
    pub name: String,
    /// The record type.
    pub kind: u16,
    /// The question as it was on the wire (echoed in the answer).
    question: Vec<u8>,
    /// Recursion desired (echoed).
    recursion: bool,
}

/// Reads a standard query with one question; `None` for anything else.
pub(super) fn parse_query(packet: &[u8]) -> Option<Query> {
    let header = packet.get(..12)?;
    let id = u16::from_be_bytes([header[0], header[1]]);
    let flags = u16::from_be_bytes([header[2], header[3]]);
    let questions = u16::from_be_bytes([header[4], header[5]]);
    // A query (QR = 0), opcode QUERY (0), one question.
    if flags & 0x8000 != 0 || (flags >> 11) & 0xf != 0 || questions != 1 {
        return None;
    }
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let length = usize::from(*packet.get(at)?);
        at += 1;
        if length == 0 {
            break;
        }
        // No compression in a question; labels are at most 63 bytes.
        if length > 63 {
            return None;
        }
        let label = packet.get(at..at + length)?;
        labels.push(String::from_utf8_lossy(label).into_owned());
        at += length;
        if at > 12 + 255 {
            return None;
        }
    }
    let tail = packet.get(at..at + 4)?;
    let kind = u16::from_be_bytes([tail[0], tail[1]]);
    let class = u16::from_be_bytes([tail[2], tail[3]]);
    if class != CLASS_IN {
        return None;
    }
    Some(Query {
        id,
        name: labels.join("."),
        kind,
        question: packet[12..at + 4].to_vec(),
        recursion: flags & 0x0100 != 0,
    })
}

impl Query {
    /// The answer: `None` is NXDOMAIN (the name does not exist for the command); otherwise
    /// the addresses of the asked type among `addresses`.
    pub(super) fn answer(&self, addresses: Option<&[IpAddr]>) -> Vec<u8> {
        let matching: Vec<Vec<u8>> = addresses
            .unwrap_or_default()
            .iter()
            .filter_map(|ip| match (ip, self.kind) {
                (IpAddr::V4(v4), TYPE_A) => Some(v4.octets().to_vec()),
                (IpAddr::V6(v6), TYPE_AAAA) => Some(v6.octets().to_vec()),
                _ => None,
            })
            .collect();
        // QR, the recursion bits, and NXDOMAIN (3) for a refused name.
        let mut flags: u16 = 0x8000 | 0x0080;
        if self.recursion {
            flags |= 0x0100;
        }
        if addresses.is_none() {
            flags |= 3;
        }
        let count = u16::try_from(matching.len()).unwrap_or(0);
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&self.id.to_be_bytes());
        out.extend_from_slice(&flags.to_be_bytes());
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&count.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&self.question);
        for data in matching.iter().take(usize::from(count)) {
            out.extend_from_slice(&[0xc0, 12]); // the name: a pointer to the question's
            out.extend_from_slice(&self.kind.to_be_bytes());
            out.extend_from_slice(&CLASS_IN.to_be_bytes());
            out.extend_from_slice(&ANSWER_TTL_SECS.to_be_bytes());
            out.extend_from_slice(&u16::try_from(data.len()).unwrap_or(0).to_be_bytes());
            out.extend_from_slice(data);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn query(name: &str, kind: u16) -> Vec<u8> {
        let mut packet = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in name.split('.') {
            packet.push(u8::try_from(label.len()).unwrap());
            packet.extend_from_slice(label.as_bytes());
        }
        packet.push(0);
        packet.extend_from_slice(&kind.to_be_bytes());
        packet.extend_from_slice(&CLASS_IN.to_be_bytes());
        packet
    }

    #[test]
    fn a_query_is_read_and_answered_with_its_type() {
        let parsed = parse_query(&query("allowed.test", TYPE_A)).unwrap();
        assert_eq!(
            (parsed.id, parsed.name.as_str(), parsed.kind),
            (0x1234, "allowed.test", 1)
        );
        let addresses: Vec<IpAddr> = vec!["10.0.0.1".parse().unwrap(), "::1".parse().unwrap()];
        let answer = parsed.answer(Some(&addresses));
        // Header: same id, a response, no error, one answer.
        assert_eq!(&answer[..4], &[0x12, 0x34, 0x81, 0x80]);
        assert_eq!(&answer[6..8], &[0, 1]);
        assert!(answer.ends_with(&[0, 4, 10, 0, 0, 1]));
        let v6 = parse_query(&query("allowed.test", TYPE_AAAA)).unwrap();
        let answer = v6.answer(Some(&addresses));
        assert_eq!(&answer[6..8], &[0, 1]);
        assert!(answer.ends_with(&std::net::Ipv6Addr::LOCALHOST.octets()));
    }

    #[test]
    fn a_refused_name_does_not_exist() {
        let parsed = parse_query(&query("blocked.test", TYPE_A)).unwrap();
        let answer = parsed.answer(None);
        assert_eq!(answer[3] & 0xf, 3);
        assert_eq!(&answer[6..8], &[0, 0]);
    }

    #[test]
    fn malformed_packets_are_ignored_without_panic() {
        let whole = query("a.test", TYPE_A);
        for cut in 0..whole.len() {
            assert_eq!(parse_query(&whole[..cut]), None, "cut at {cut}");
        }
        let mut response = whole.clone();
        response[2] |= 0x80;
        assert_eq!(parse_query(&response), None);
        let mut compressed = whole.clone();
        compressed[12] = 0xc0;
        assert_eq!(parse_query(&compressed), None);
    }
}
