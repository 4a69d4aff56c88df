//! Where an allowed host leads, and connecting there (Unix, tokio): this machine for
//! [`HOST_ALIAS`], the static answer, the address itself, or the addresses DNS gives that are
//! public, not this machine's own ([`Rules::inside`]) and not named by a deny rule. A name
//! resolved by DNS is checked once more after connecting: a connection whose peer is its own
//! local address reached this machine (an interface address the list missed), and is closed.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpStream;

use super::host::Host;
use super::rules::{HOST_ALIAS, Rules};

/// How long connecting to one address of the origin may take before the next is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where `host` leads: the addresses, and whether DNS gave them (then [`connect`] checks the
/// peer), or why none may be connected to.
pub(super) async fn addresses(
    rules: &Rules,
    host: &Host,
    port: u16,
) -> Result<(Vec<SocketAddr>, bool), String> {
    if *host == Host::Name(HOST_ALIAS.to_owned()) {
        return Ok((vec![SocketAddr::from(([127, 0, 0, 1], port))], false));
    }
    if let Some(answer) = rules.static_answer(host) {
        return Ok((vec![SocketAddr::new(answer.ip, port)], false));
    }
    let name = match host {
        // An address a rule names: the person wrote it.
        Host::Ip(ip) => return Ok((vec![SocketAddr::new(*ip, port)], false)),
        Host::Name(name) => name,
    };
    let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), port))
        .await
        .map_err(|error| format!("`{name}` does not resolve ({error})"))?
        .collect();
    let why_not = |address: &SocketAddr| {
        rules.inside(address.ip()).or_else(|| {
            rules
                .denies_address(address.ip())
                .then_some("an address a deny rule names")
        })
    };
    let usable: Vec<SocketAddr> = found
        .iter()
        .copied()
        .filter(|address| why_not(address).is_none())
        .collect();
    match (usable.is_empty(), found.first()) {
        (false, _) => Ok((usable, true)),
        (true, Some(first)) => Err(format!(
            "`{name}` resolves to {} ({}), which sandboxed commands may not reach by name",
            first.ip(),
            why_not(first).unwrap_or("not public")
        )),
        (true, None) => Err(format!("`{name}` does not resolve")),
    }
}

/// Why no connection was made.
pub(super) enum Failed {
    /// No address answered in time.
    Unreachable,
    /// A resolved address turned out to be this machine.
    ThisMachine(SocketAddr),
}

/// Connects to the first of `addresses` that answers; with `resolved`, one whose peer is the
/// connection's own address (this machine) is closed and refused.
pub(super) async fn connect(addresses: &[SocketAddr], resolved: bool) -> Result<TcpStream, Failed> {
    for address in addresses {
        if let Ok(Ok(stream)) =
            tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await
        {
            let own = match (stream.peer_addr(), stream.local_addr()) {
                (Ok(peer), Ok(local)) => peer.ip().to_canonical() == local.ip().to_canonical(),
                _ => true,
            };
            if resolved && own {
                return Err(Failed::ThisMachine(*address));
            }
            return Ok(stream);
        }
    }
    Err(Failed::Unreachable)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resolved name whose address turns out to be this machine is not connected to; the
    /// same address written by the person (not resolved) is.
    #[tokio::test]
    async fn a_resolved_address_of_this_machine_is_refused_after_connecting() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        assert!(matches!(
            connect(&[address], true).await,
            Err(Failed::ThisMachine(found)) if found == address
        ));
        assert!(connect(&[address], false).await.is_ok());
    }

    /// DNS answers inside, of this machine, or named by a deny rule are never connected to.
    #[tokio::test]
    async fn resolved_addresses_inside_are_left_out() {
        let mut rules = Rules::default();
        rules.add(false, "localhost", "user").unwrap();
        let why = addresses(&rules, &Host::parse("localhost").unwrap(), 80)
            .await
            .unwrap_err();
        assert!(why.contains("loopback"), "{why}");
    }
}
