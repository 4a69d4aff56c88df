//! Which addresses a name may lead to. After a name is allowed and resolved, only public
//! addresses are connected to: an allowed name that resolves to this machine, the local
//! network, a cloud's metadata service or a link-local neighbour (DNS rebinding) is refused —
//! except the answers a person wrote in `hosts`, and this machine itself as
//! `host.agent.internal` on the ports `allow_local` lists. Pure.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not a public address, or `None` when it is.
#[must_use]
pub fn not_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

/// The address `ip` reaches: an IPv6 address that carries an IPv4 one (mapped, compatible,
/// NAT64, 6to4) reaches that IPv4 address; every other address is itself. Rules compare
/// addresses in this form, so no spelling of an address gets past a rule naming it.
#[must_use]
pub fn reached(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b) {
        (0, _) => "an unspecified address (0.0.0.0/8)",
        (127, _) => "a loopback address",
        (10, _) => "a private address (10.0.0.0/8)",
        (172, 16..=31) => "a private address (172.16.0.0/12)",
        (192, 168) => "a private address (192.168.0.0/16)",
        (169, 254) => "a link-local address (169.254.0.0/16, cloud metadata)",
        (100, 64..=127) => "a shared address (100.64.0.0/10, carrier NAT)",
        (192, 0) if c == 0 => "an IETF protocol address (192.0.0.0/24)",
        (198, 18 | 19) => "a benchmarking address (198.18.0.0/15)",
        (224..=239, _) => "a multicast address",
        (240..=255, _) => "a reserved or broadcast address",
        _ => return None,
    })
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        // A wrapped IPv4 address reaches that address: public if and only if it is.
        return v4_kind(v4);
    }
    let first = ip.segments()[0];
    Some(match first {
        _ if ip.is_unspecified() => "an unspecified address (::)",
        _ if ip.is_loopback() => "a loopback address (::1)",
        0xfc00..=0xfdff => "a unique local address (fc00::/7)",
        0xfe80..=0xfebf => "a link-local address (fe80::/10)",
        0xfec0..=0xfeff => "a site-local address (fec0::/10)",
        0xff00..=0xffff => "a multicast address",
        0x2001 if ip.segments()[1] == 0x0db8 => "a documentation address (2001:db8::/32)",
        0x0000..=0x1fff => "a reserved address",
        _ => return None,
    })
}

/// The IPv4 address an IPv6 one carries and reaches: mapped (`::ffff:a.b.c.d`), compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002:AABB:CCDD::/48`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let segments = ip.segments();
    let (high, low) = match segments {
        [0, 0, 0, 0, 0, 0xffff, high, low]
        | [0x64, 0xff9b, 0, 0, 0, 0, high, low]
        | [0x2002, high, low, ..] => (high, low),
        // `::` and `::1` are themselves, not IPv4 addresses.
        [0, 0, 0, 0, 0, 0, high, low] if high != 0 => (high, low),
        _ => return None,
    };
    let [first, second] = high.to_be_bytes();
    let [third, fourth] = low.to_be_bytes();
    Some(Ipv4Addr::new(first, second, third, fourth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_addresses_are_refused_in_every_spelling() {
        for text in [
            "0.0.0.0",
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "2002:c0a8:101::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
        ] {
            let ip: IpAddr = text.parse().unwrap();
            assert!(not_public(ip).is_some(), "{text} passed as public");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for text in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "192.169.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "2002:0101:0101::1",
        ] {
            let ip: IpAddr = text.parse().unwrap();
            assert_eq!(not_public(ip), None, "{text}");
        }
    }

    /// Generated: every address of the private IPv4 ranges, sampled, is refused both as itself
    /// and mapped into IPv6.
    #[test]
    fn generated_private_ranges_are_refused_mapped_too() {
        for (a, b_range) in [
            (10u8, 0u8..=255),
            (172, 16..=31),
            (192, 168..=168),
            (127, 0..=255),
        ] {
            for b in b_range.step_by(7) {
                for c in (0u8..=255).step_by(51) {
                    let v4 = Ipv4Addr::new(a, b, c, 9);
                    assert!(not_public(IpAddr::V4(v4)).is_some(), "{v4}");
                    let mapped = IpAddr::V6(v4.to_ipv6_mapped());
                    assert!(not_public(mapped).is_some(), "{mapped}");
                }
            }
        }
    }
}
