//! A command's own network namespace (Linux, `[network] mode = "allowlist"`): the helper makes
//! it before starting the command, brings its loopback up (so `localhost` is the command's
//! own, where the servers it starts meet), and runs the bridge: a listener on
//! `127.0.0.1:PORT` inside the namespace whose every connection is spliced to the agent's
//! proxy on its Unix socket. No route leads anywhere else, so every connection out goes
//! through the proxy, which decides by host name (`net/proxy.rs`).
//!
//! The bridge is a process of its own (the helper again, `--bridge`), started in the new
//! network namespace before the helper makes the mount and PID namespaces (a process that
//! made a PID namespace can start no thread, and one with threads can make no mount
//! namespace): so it sees the proxy's socket where the agent made it, is none of the
//! command's processes, and stays outside the command's Landlock domain and seccomp filter.
//! It copies with fixed buffers and serves at most [`MAX_BRIDGED`] connections at once; on
//! `127.0.0.1:53` it answers DNS for the names the proxy allows (`dns.rs`).
//!
//! For clients that know no proxy (a database client, say), this machine's `allow_local` ports
//! are there too: `host.agent.internal` resolves inside to [`LOCAL_ALIAS`], where the bridge
//! listens on each such port and opens every connection with the proxy as
//! `CONNECT host.agent.internal:PORT` (the proxy decides it like any other).

use std::ffi::OsStr;
use std::io::{BufRead as _, Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The helper's argument that makes it the bridge (`--bridge SOCKET`).
pub(super) const BRIDGE_ARG: &str = "--bridge";

/// What the bridge says on stdout once it listens.
pub(super) const READY: &str = "ready";

/// Connections the bridge serves at once (two threads each); past it, new ones are closed.
const MAX_BRIDGED: usize = 256;

/// The bridge's copy buffer per direction.
const COPY_BUFFER_BYTES: usize = 16 * 1024;

/// The DNS port of the stub resolver on the namespace's loopback.
const DNS_PORT: u16 = 53;

/// How long the stub waits for the proxy's answer about one name.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The address `host.agent.internal` has inside the namespace: a loopback address of its own,
/// where the bridge listens on the `allow_local` ports.
const LOCAL_ALIAS: [u8; 4] = [127, 0, 0, 2];

/// The longest answer head the bridge reads from the proxy for a local port's `CONNECT`.
const MAX_ANSWER_HEAD: usize = 4096;

/// The index of the loopback interface in a new network namespace (always the first).
const LOOPBACK_INDEX: i32 = 1;

/// Whether this (throw-away) process can make a network namespace: as root, or inside a new
/// user namespace.
pub(super) fn possible() -> bool {
    use rustix::thread::UnshareFlags as Flags;
    super::unshare::unshare(Flags::NEWNET).is_ok()
        || super::unshare::unshare(Flags::NEWUSER | Flags::NEWNET).is_ok()
}

/// Enters a new network namespace (inside a new user namespace where this user may not make
/// one directly), brings its loopback up, and starts the bridge to the proxy at `socket` as a
/// process of its own (this one must stay single-threaded for the namespaces still to come,
/// and after the PID namespace could start no thread). Returns once the bridge listens.
///
/// The bridge is started before the PID and mount namespaces: it is not one of the command's
/// processes, and it sees the proxy's socket where the agent made it. It ends with this
/// process (the parent-death signal) and is ended with what the command leaves behind.
///
/// # Errors
/// Why the namespace or the bridge cannot be made (the command must then not run: it would
/// otherwise reach the network without the proxy, or not at all without saying why).
pub(super) fn enter(socket: &Path, proxy_pid: u32, helper_first: &OsStr) -> Result<(), String> {
    make()?;
    let mut bridge = std::process::Command::new("/proc/self/exe");
    std::os::unix::process::CommandExt::arg0(&mut bridge, "agent-sandbox");
    let mut child = bridge
        .arg(helper_first)
        .arg(BRIDGE_ARG)
        .arg(socket)
        .arg(proxy_pid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start the bridge: {error}"))?;
    let mut ready = String::new();
    let read = child
        .stdout
        .take()
        .map(|out| std::io::BufReader::new(out).read_line(&mut ready));
    if ready.trim() == READY {
        return Ok(());
    }
    let _ = child.kill();
    let _ = child.wait();
    Err(match read {
        Some(Err(error)) => format!("the bridge did not start: {error}"),
        _ => "the bridge did not start".to_owned(),
    })
}

/// Enters a new network namespace (inside a new user namespace where this user may not make
/// one directly) and brings its loopback up; nothing else is there.
///
/// # Errors
/// Why the namespace cannot be made or its loopback not brought up.
pub(super) fn make() -> Result<(), String> {
    use rustix::thread::UnshareFlags as Flags;
    if super::unshare::unshare(Flags::NEWNET).is_err() {
        let ids = (
            rustix::process::getuid().as_raw(),
            rustix::process::getgid().as_raw(),
        );
        super::unshare::unshare(Flags::NEWUSER | Flags::NEWNET)
            .and_then(|()| super::unshare::map_user(ids))
            .map_err(|error| format!("cannot make a network namespace: {error}"))?;
    }
    loopback_up().map_err(|error| format!("cannot bring up the loopback: {error}"))?;
    // The stub resolver's port 53 (and a dev server's port 80) without privileges: only in
    // this namespace, which is the command's or the run's own. Without it there is no stub,
    // and names resolve to nothing (quickly).
    let _ = std::fs::write("/proc/sys/net/ipv4/ip_unprivileged_port_start", "0");
    Ok(())
}

/// The bridge process (`agent-sandbox --bridge SOCKET PID`): listens on `127.0.0.1:PORT` and
/// `127.0.0.1:53` in the namespace it was started in, says so on stdout, and serves until
/// its parent, the helper, ends. It connects only to a socket process `PID` (the agent)
/// listens on.
#[must_use]
pub(super) fn bridge_main(socket: &Path, proxy_pid: u32) -> std::process::ExitCode {
    use rustix::process::Signal;
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    // The helper may have ended before the line above took effect.
    if rustix::process::getppid().is_none_or(|parent| parent.as_raw_nonzero().get() == 1) {
        return std::process::ExitCode::from(1);
    }
    serve(socket, proxy_pid)
}

/// Listens on `127.0.0.1:PORT` (and `127.0.0.1:53`, and the `allow_local` ports) in this
/// process's network namespace, says so on stdout, and bridges to the proxy at `socket`
/// (process `proxy_pid`'s) for as long as this process lives.
#[must_use]
pub(super) fn serve(socket: &Path, proxy_pid: u32) -> std::process::ExitCode {
    let port = super::BRIDGE_PORT;
    let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) else {
        return std::process::ExitCode::from(1);
    };
    let proxy = Proxy {
        socket: socket.to_path_buf(),
        pid: proxy_pid,
    };
    let local_ports = local_ports(socket);
    for port in &local_ports {
        // Best effort: a port that cannot be bound is reached through the proxy only.
        let Ok(listener) = TcpListener::bind(std::net::SocketAddr::from((LOCAL_ALIAS, *port)))
        else {
            continue;
        };
        let (proxy, opening) = (proxy.clone(), Some(local_opening(*port)));
        let _ = std::thread::Builder::new()
            .name("bridge-local".to_owned())
            .spawn(move || bridge(&listener, &proxy, opening.as_deref()));
    }
    // Best effort: without the stub, names do not resolve inside (quickly: no route out).
    if let Ok(dns) = UdpSocket::bind(("127.0.0.1", DNS_PORT)) {
        let (proxy, local) = (proxy.clone(), !local_ports.is_empty());
        let _ = std::thread::Builder::new()
            .name("dns".to_owned())
            .spawn(move || stub_resolver(&dns, &proxy, local));
    }
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "{READY}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return std::process::ExitCode::from(1);
    }
    bridge(&listener, &proxy, None);
    std::process::ExitCode::SUCCESS
}

/// The `allow_local` ports the proxy listed beside its socket.
fn local_ports(socket: &Path) -> Vec<u16> {
    let listed = socket
        .parent()
        .map(|dir| dir.join(crate::net::proxy::LOCAL_PORTS_NAME))
        .and_then(|path| std::fs::read_to_string(path).ok())
        .unwrap_or_default();
    listed
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// What a connection to [`LOCAL_ALIAS`]`:port` says to the proxy first.
fn local_opening(port: u16) -> String {
    format!("CONNECT {}:{port} HTTP/1.1\r\n\r\n", crate::net::HOST_ALIAS)
}

/// Sends `opening` to the proxy and reads its answer head: whether the tunnel is open.
fn opened(proxy: &mut UnixStream, opening: &str) -> bool {
    if proxy.write_all(opening.as_bytes()).is_err() {
        return false;
    }
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < MAX_ANSWER_HEAD {
        match proxy.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return false,
        }
    }
    head.starts_with(b"HTTP/1.1 200 ")
}

/// Sets the loopback interface up through rtnetlink (`RTM_NEWLINK`, `IFF_UP`), as `ip link
/// set lo up` does, and waits for the kernel's answer.
fn loopback_up() -> std::io::Result<()> {
    use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};
    const RTM_NEWLINK: u16 = 16;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_ACK: u16 = 4;
    const NLMSG_ERROR: u16 = 2;
    const IFF_UP: u32 = 1;
    let socket = rustix::net::socket(AddressFamily::NETLINK, SocketType::RAW, None)?;
    let mut message = Vec::with_capacity(32);
    message.extend_from_slice(&32u32.to_ne_bytes());
    message.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    message.extend_from_slice(&1u32.to_ne_bytes()); // sequence number
    message.extend_from_slice(&0u32.to_ne_bytes()); // to the kernel
    message.extend_from_slice(&[0, 0]); // AF_UNSPEC, padding
    message.extend_from_slice(&0u16.to_ne_bytes()); // device type
    message.extend_from_slice(&LOOPBACK_INDEX.to_ne_bytes());
    message.extend_from_slice(&IFF_UP.to_ne_bytes()); // flags
    message.extend_from_slice(&IFF_UP.to_ne_bytes()); // which flags change
    rustix::net::send(&socket, &message, SendFlags::empty())?;
    let mut answer = [0u8; 256];
    let (read, _) = rustix::net::recv(&socket, &mut answer, RecvFlags::empty())?;
    let field = |at: usize| answer.get(at..at + 4).and_then(|b| b.try_into().ok());
    let kind = answer
        .get(4..6)
        .and_then(|b| b.try_into().ok())
        .map(u16::from_ne_bytes);
    match (kind, field(16).map(i32::from_ne_bytes)) {
        (Some(NLMSG_ERROR), Some(0)) if read >= 20 => Ok(()),
        (Some(NLMSG_ERROR), Some(error)) if error < 0 => {
            Err(std::io::Error::from_raw_os_error(-error))
        }
        _ => Err(std::io::Error::other("no answer from the kernel")),
    }
}

/// The agent's proxy: its socket's path and the agent's process id.
#[derive(Clone)]
struct Proxy {
    socket: PathBuf,
    pid: u32,
}

impl Proxy {
    /// A connection to the agent's proxy, or `None`. The path may have been changed by the
    /// command (a link to the Docker socket, say): the peer must be the agent's process.
    fn connect(&self) -> Option<UnixStream> {
        let stream = UnixStream::connect(&self.socket).ok()?;
        let peer = rustix::net::sockopt::socket_peercred(&stream).ok()?;
        let pid = u32::try_from(peer.pid.as_raw_nonzero().get()).ok();
        (pid == Some(self.pid)).then_some(stream)
    }
}

/// Accepts connections inside the namespace and splices each to the proxy, after `opening`
/// (a local port's `CONNECT`) when there is one and the proxy opened the tunnel.
fn bridge(listener: &TcpListener, proxy: &Proxy, opening: Option<&str>) {
    let active = Arc::new(AtomicUsize::new(0));
    for client in listener.incoming() {
        let Ok(client) = client else { continue };
        if active.load(Ordering::Acquire) >= MAX_BRIDGED {
            continue;
        }
        let Some(mut proxy) = proxy.connect() else {
            continue;
        };
        active.fetch_add(1, Ordering::AcqRel);
        let done = Arc::clone(&active);
        let opening = opening.map(str::to_owned);
        let spawned = std::thread::Builder::new()
            .name("bridge-conn".to_owned())
            .spawn(move || {
                if opening.is_none_or(|opening| opened(&mut proxy, &opening)) {
                    splice(client, proxy);
                }
                done.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            // The connection was dropped with the closure: its slot is free again.
            active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Copies both ways until both sides are done, closing each direction as it ends.
fn splice(client: TcpStream, proxy: UnixStream) {
    let (Ok(client_back), Ok(proxy_back)) = (client.try_clone(), proxy.try_clone()) else {
        return;
    };
    let up = std::thread::Builder::new()
        .name("bridge-up".to_owned())
        .spawn(move || {
            copy(&client, &proxy);
            let _ = proxy.shutdown(Shutdown::Write);
        });
    copy(&proxy_back, &client_back);
    let _ = client_back.shutdown(Shutdown::Write);
    if let Ok(up) = up {
        let _ = up.join();
    }
}

fn copy(mut from: impl Read, mut to: impl Write) {
    let mut buffer = vec![0u8; COPY_BUFFER_BYTES];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    return;
                }
            }
        }
    }
}

/// Answers the command's DNS queries on `127.0.0.1:53`: the addresses the proxy gives for an
/// allowed name, NXDOMAIN for every other (see `dns.rs`); with `local` ports,
/// `host.agent.internal` is [`LOCAL_ALIAS`].
fn stub_resolver(socket: &UdpSocket, proxy: &Proxy, local: bool) {
    let mut packet = [0u8; 512];
    loop {
        let Ok((read, from)) = socket.recv_from(&mut packet) else {
            continue;
        };
        let Some(query) = super::dns::parse_query(&packet[..read]) else {
            continue;
        };
        let alias = query
            .name
            .trim_end_matches('.')
            .eq_ignore_ascii_case(crate::net::HOST_ALIAS);
        let addresses = if alias {
            local.then(|| vec![IpAddr::from(LOCAL_ALIAS)])
        } else {
            ask_proxy(proxy, &query.name)
        };
        let _ = socket.send_to(&query.answer(addresses.as_deref()), from);
    }
}

/// The proxy's addresses for `name`, or `None` when it refuses the name (or cannot be asked).
fn ask_proxy(proxy: &Proxy, name: &str) -> Option<Vec<IpAddr>> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    let mut stream = proxy.connect()?;
    stream.set_read_timeout(Some(RESOLVE_TIMEOUT)).ok()?;
    stream
        .write_all(format!("RESOLVE {name} HTTP/1.1\r\n\r\n").as_bytes())
        .ok()?;
    let mut answer = Vec::new();
    stream.take(4096).read_to_end(&mut answer).ok()?;
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200 ").then(|| {
        body.lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    })
}

/// Joins the run's namespaces (the helper, single-threaded, before its mount and PID
/// namespaces): the user namespace first (where it is not this process's own: the owner of a
/// user namespace may enter it), then the network namespace.
///
/// # Errors
/// Why it cannot: the holder is gone, its namespaces are not the ones the agent saw, or the
/// namespace is this process's own (joining it would open the network).
pub(super) fn join(joined: super::helper_args::Joined) -> std::io::Result<()> {
    use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::MetadataExt as _;
    let open = |kind: &str, expected: u64| -> std::io::Result<std::fs::File> {
        let file = std::fs::File::open(format!("/proc/{}/ns/{kind}", joined.pid))?;
        if file.metadata()?.ino() == expected {
            Ok(file)
        } else {
            Err(std::io::Error::other(format!(
                "process {} no longer holds the run's namespaces",
                joined.pid
            )))
        }
    };
    let (user, net) = (open("user", joined.user)?, open("net", joined.net)?);
    let own = |kind: &str| std::fs::metadata(format!("/proc/self/ns/{kind}")).map(|m| m.ino());
    if own("net")? == joined.net {
        return Err(std::io::Error::other(
            "the run's network namespace is this process's own",
        ));
    }
    if own("user")? != joined.user {
        move_into_link_name_space(user.as_fd(), Some(LinkNameSpaceType::User))?;
    }
    move_into_link_name_space(net.as_fd(), Some(LinkNameSpaceType::Network))?;
    Ok(())
}
