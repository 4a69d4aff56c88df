//! This machine's own addresses (its interfaces'), which the proxy treats like loopback: an
//! allowed name that resolves to one of them, or a `hosts` answer naming one, must not reach
//! every service bound to all interfaces. Read from `/proc/net` (no `unsafe`, no crate): IPv4
//! from the routing table's `LOCAL` entries (`fib_trie`), IPv6 from `if_inet6`. The parsers
//! are pure; elsewhere than Linux the list is empty and the proxy's check after connecting
//! (the peer is the connection's own address) is what holds.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// This machine's addresses now (empty where they cannot be read).
#[must_use]
pub fn addresses() -> Vec<IpAddr> {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let mut found = local_v4(&read("/proc/net/fib_trie"));
    found.extend(local_v6(&read("/proc/net/if_inet6")));
    found.sort_unstable();
    found.dedup();
    found
}

/// The `/32 host LOCAL` entries of `/proc/net/fib_trie`: each follows the `|-- ADDRESS` line
/// it belongs to.
fn local_v4(fib_trie: &str) -> Vec<IpAddr> {
    let mut last = None;
    let mut found = Vec::new();
    for line in fib_trie.lines() {
        let line = line.trim();
        if let Some(address) = line.strip_prefix("|-- ") {
            last = address.trim().parse::<Ipv4Addr>().ok();
        } else if line.starts_with("/32 host LOCAL")
            && let Some(address) = last
        {
            found.push(IpAddr::V4(address));
        }
    }
    found
}

/// The addresses of `/proc/net/if_inet6`: 32 hex digits first on each line.
fn local_v6(if_inet6: &str) -> Vec<IpAddr> {
    if_inet6
        .lines()
        .filter_map(|line| {
            let hex = line.split_whitespace().next()?;
            let bits = u128::from_str_radix(hex, 16)
                .ok()
                .filter(|_| hex.len() == 32)?;
            Some(IpAddr::V6(Ipv6Addr::from(bits)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn local_entries_are_read_from_proc_net() {
        let fib_trie = "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 0.0.0.0\n        /0 universe UNICAST\n\
             \x20    +-- 127.0.0.0/8 2 0 2\n        +-- 127.0.0.0/31 1 0 0\n           |-- 127.0.0.0\n\
             \x20             /8 host LOCAL\n           |-- 127.0.0.1\n              /32 host LOCAL\n\
             \x20    |-- 192.0.2.0\n        /24 link UNICAST\n     |-- 192.0.2.2\n        /32 host LOCAL\n\
             \x20    |-- 192.0.2.255\n        /32 link BROADCAST\nLocal:\n     |-- 192.0.2.2\n        /32 host LOCAL\n";
        assert_eq!(
            local_v4(fib_trie),
            ["127.0.0.1", "192.0.2.2", "192.0.2.2"]
                .map(|a| a.parse::<IpAddr>().unwrap())
                .to_vec()
        );
        let if_inet6 = "00000000000000000000000000000001 01 80 10 80       lo\n\
                        fd000000000000000000000000000002 04 40 00 82     eth0\n\
                        garbage\nfe80 01 02\n";
        assert_eq!(
            local_v6(if_inet6),
            ["::1", "fd00::2"]
                .map(|a| a.parse::<IpAddr>().unwrap())
                .to_vec()
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_has_its_loopback() {
        let found = addresses();
        if std::path::Path::new("/proc/net/fib_trie").exists() {
            assert!(
                found.contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)),
                "{found:?}"
            );
        }
    }
}
