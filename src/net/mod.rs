//! Network by host name for sandboxed commands (`[network] mode = "allowlist"`): the rules
//! ([`rules`], over the host names and patterns of [`host`]), the addresses a name may lead to
//! ([`address`], this machine's own in [`own`]; connecting in `dial`), deciding on one
//! connection ([`gate`], shared by the proxy and the agent's own [`fetch`] for `web_fetch`), the proxy every connection of a command goes through ([`proxy`], Unix; on macOS through its
//! [`door`] on the loopback) with
//! the request heads it reads ([`request`], [`socks`]) and what goes through its tunnels ([`sni`], [`tunnel`]), and the environment that points tools at it
//! ([`env`]). The command's side — its own network namespace and the bridge inside it that
//! reaches the proxy — is the sandbox's (`sandbox/netns.rs`). Nothing here knows settings
//! files, models or terminals.

pub mod address;
pub mod ask;
mod dial;
#[cfg(unix)]
pub mod door;
pub mod env;
pub mod event;
pub mod fetch;
pub mod gate;
pub mod host;
pub mod own;
#[cfg(unix)]
pub mod proxy;
pub mod request;
pub mod rules;
pub mod sni;
pub mod socks;
pub mod tunnel;

pub use event::{Log, NetDecision, NetworkEvent};
pub use host::{Host, Pattern};
pub use rules::{HOST_ALIAS, NetworkMode, Rules, Verdict};
