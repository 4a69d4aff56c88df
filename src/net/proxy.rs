//! The network proxy of a run (Unix): the only way out of a sandboxed command's own network
//! namespace in `allowlist` mode. It listens on a Unix socket in a private directory (the
//! sandbox helper's bridge inside the namespace splices to it), reads each connection's
//! request — `CONNECT host:port`, a plain `http://` request, a SOCKS5 `CONNECT` (told apart by
//! the first byte), or the stub resolver's `RESOLVE name` — decides by the host name
//! ([`Rules::decide`]), resolves the name itself (static `hosts` answers first) and connects
//! only to public addresses — or to what `hosts` says, or to this machine as
//! `host.agent.internal` on an `allow_local` port. It never terminates TLS: a tunnel is bytes
//! both ways once its opening is for the tunnel's host (`tunnel.rs`: a whole ClientHello
//! naming it, or a plain-HTTP request whose `Host` is it). A plain-HTTP request goes on
//! with its body and nothing after it: the next request is a new connection, decided again.
//!
//! Refusals are `403` replies (SOCKS5: "not allowed") naming the host and the setting that
//! would allow it; every decision is a [`NetworkEvent`] in the run's [`Log`]. Memory is
//! bounded: at most [`MAX_CONNECTIONS`] at once, each with a head buffer of
//! [`MAX_HEAD_BYTES`] and fixed copy buffers.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::Semaphore;

use super::ask::Asking;
use super::dial::{Failed, addresses, connect};
use super::event::{Log, NetworkEvent};
use super::gate::{self, Allowed, Asker, Refusal};
use super::host::Host;
use super::request::{Ask, MAX_HEAD_BYTES, body_length, head_end, parse};
use super::rules::Rules;
use super::socks;
use super::tunnel::{Through, judge};

/// The socket's file name in the proxy's private directory.
pub const SOCKET_NAME: &str = "proxy.sock";

/// The resolver configuration's file name in the proxy's private directory.
pub const RESOLV_CONF_NAME: &str = "resolv.conf";

/// The file listing the `allow_local` ports (one a line) in the proxy's private directory: the
/// bridge listens for each as `host.agent.internal` inside the namespace.
pub const LOCAL_PORTS_NAME: &str = "local-ports";

/// The command's resolver configuration: the stub on its own loopback, one quick try.
const RESOLV_CONF: &str = "nameserver 127.0.0.1\noptions timeout:2 attempts:1\n";

/// Connections served at once (each holds two sockets and ~40 KiB): past it, `503`.
pub const MAX_CONNECTIONS: usize = 128;

/// How long a client has to send its request head: a stalled client must not hold a slot.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug)]
struct Shared {
    rules: Rules,
    log: Log,
    /// Asks a person about hosts no rule decides (at a terminal); `None`: refused at once.
    asking: Option<Arc<Asking>>,
    /// One per connection served at once.
    slots: Arc<Semaphore>,
}

impl Shared {
    fn note(
        &self,
        host: &Host,
        port: u16,
        allowed: bool,
        rule: String,
        allow_with: Option<String>,
    ) {
        self.log.note(NetworkEvent::decided(
            host, port, allowed, rule, allow_with, None,
        ));
    }
}

/// A running proxy. Dropping it stops it and removes its directory.
#[derive(Debug)]
pub struct Proxy {
    dir: PathBuf,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
    /// The door on this machine's loopback, where one is open (macOS: `door.rs`).
    door: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    /// Starts the proxy for `rules` on a socket in a new private directory (mode 0700) in
    /// `parent`. Must be called inside a Tokio runtime.
    ///
    /// # Errors
    /// The directory or the socket cannot be made.
    pub fn start(rules: Rules, parent: &Path) -> std::io::Result<Proxy> {
        Self::start_asking(rules, parent, None)
    }

    /// [`Proxy::start`], asking a person through `asking` about hosts no rule decides.
    ///
    /// # Errors
    /// The directory or the socket cannot be made.
    pub fn start_asking(
        mut rules: Rules,
        parent: &Path,
        asking: Option<Arc<Asking>>,
    ) -> std::io::Result<Proxy> {
        // This machine's own addresses are inside, like loopback.
        rules.own.extend(super::own::addresses());
        let dir = private_dir(parent)?;
        // What the helper binds over `/etc/resolv.conf`: the stub in the command's namespace.
        std::fs::write(dir.join(RESOLV_CONF_NAME), RESOLV_CONF)?;
        let ports: String = rules.allow_local.iter().map(|p| format!("{p}\n")).collect();
        std::fs::write(dir.join(LOCAL_PORTS_NAME), ports)?;
        let listener = match UnixListener::bind(dir.join(SOCKET_NAME)) {
            Ok(listener) => listener,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(error);
            }
        };
        let shared = Arc::new(Shared {
            rules,
            asking,
            log: Log::default(),
            slots: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
        });
        let task = tokio::spawn(serve(listener, Arc::clone(&shared)));
        Ok(Proxy {
            dir,
            shared,
            task,
            door: None,
        })
    }

    /// Opens a door to the proxy on `127.0.0.1` (where no network namespace can hold a
    /// bridge: macOS) and returns its port; it closes with the proxy. Must be called inside
    /// a Tokio runtime.
    ///
    /// # Errors
    /// No loopback port can be bound.
    pub fn open_door(&mut self) -> std::io::Result<u16> {
        let (port, task) = super::door::open(&self.dir.join(SOCKET_NAME))?;
        if let Some(old) = self.door.replace(task) {
            old.abort();
        }
        Ok(port)
    }

    /// The private directory holding the socket (given to the sandbox helper).
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The log of its decisions (for the run's events).
    #[must_use]
    pub fn log(&self) -> Log {
        self.shared.log.clone()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(door) = &self.door {
            door.abort();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn private_dir(parent: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    let mut builder = std::fs::DirBuilder::new();
    builder.mode(0o700);
    for n in 0u32.. {
        let dir = parent.join(format!("agent-net-{}-{n}", std::process::id()));
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
    }
    Err(std::io::Error::other("no free directory name"))
}

async fn serve(listener: UnixListener, shared: Arc<Shared>) {
    loop {
        let Ok((mut client, _)) = listener.accept().await else {
            // Out of descriptors, say: wait a little rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Ok(slot) = Arc::clone(&shared.slots).try_acquire_owned() else {
            tokio::spawn(async move {
                let _ = reply(
                    &mut client,
                    503,
                    "agent: network: too many connections at once\n",
                )
                .await;
            });
            continue;
        };
        let shared = Arc::clone(&shared);
        let mut command_changes = shared.log.command_changes();
        // A background process's connection (a dev server's upstream, a download) may outlive
        // commands: while one may connect, connections end on their own or with the run.
        let cut = !shared.log.shared();
        tokio::spawn(async move {
            let _slot = slot;
            tokio::select! {
                _ = handle(client, &shared) => {}
                // The command that made it is over: so is the connection.
                Ok(()) = command_changes.changed(), if cut => {}
            }
        });
    }
}

/// Reads more of the client's first bytes into `buffer` (after `filled`); `false` at its end,
/// past `deadline` (for the whole head: a byte now and then must not hold a slot), or when
/// the buffer is full.
async fn read_more(
    client: &mut UnixStream,
    buffer: &mut [u8],
    filled: &mut usize,
    deadline: tokio::time::Instant,
) -> std::io::Result<bool> {
    if *filled == buffer.len() {
        return Ok(false);
    }
    match tokio::time::timeout_at(deadline, client.read(&mut buffer[*filled..])).await {
        Ok(Ok(0)) | Err(_) => Ok(false),
        Ok(Ok(n)) => {
            *filled += n;
            Ok(true)
        }
        Ok(Err(error)) => Err(error),
    }
}

async fn handle(mut client: UnixStream, shared: &Shared) -> std::io::Result<()> {
    let mut buffer = vec![0u8; MAX_HEAD_BYTES];
    let mut filled = 0;
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    if !read_more(&mut client, &mut buffer, &mut filled, deadline).await? {
        return Ok(());
    }
    // SOCKS5 starts with its version byte, HTTP with a method's letter.
    if buffer[0] == socks::VERSION {
        return serve_socks(client, shared, (buffer, filled), deadline).await;
    }
    let end = loop {
        if let Some(end) = head_end(&buffer[..filled]) {
            break end;
        }
        if filled == buffer.len() {
            let body = "agent: network: the request head is too large\n";
            return reply(&mut client, 431, body).await;
        }
        if !read_more(&mut client, &mut buffer, &mut filled, deadline).await? {
            return Ok(());
        }
    };
    let ask = match parse(&buffer[..end]) {
        Ok(ask) => ask,
        Err(why) => {
            return reply(&mut client, 400, &format!("agent: network: {why}\n")).await;
        }
    };
    let (host, port) = ask.target();
    let (host, port) = (host.clone(), port);
    if matches!(ask, Ask::Resolve { .. }) {
        return resolve(&mut client, shared, &host).await;
    }
    let length = match (&ask, body_length(&buffer[..end])) {
        (Ask::Forward { .. }, Err(why)) => {
            return reply(&mut client, 400, &format!("agent: network: {why}\n")).await;
        }
        (_, length) => length.unwrap_or(0),
    };
    let (origin, rule) = match open(shared, &host, port).await {
        Ok(opened) => opened,
        Err(refused) => return reply(&mut client, refused.status, &refused.body).await,
    };
    let first = buffer[end..filled].to_vec();
    drop(buffer);
    match ask {
        Ask::Tunnel { .. } => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?;
        }
        Ask::Forward { head, .. } => {
            shared.note(&host, port, true, rule, None);
            let through = Through::One {
                head,
                at: 0,
                length,
            };
            return relay(client, origin, first, shared, (&host, port), Some(through)).await;
        }
        Ask::Resolve { .. } => return Ok(()),
    }
    relay_tunnel(client, origin, first, shared, (&host, port, rule)).await
}

/// A refusal: the HTTP status and the text naming the host and the setting that would allow
/// it (SOCKS5 clients get `NotAllowed` or `HostUnreachable` instead).
struct Refused {
    status: u16,
    body: String,
}

/// Decides on `host:port`, resolves it and connects: the connection and the rule that allowed
/// it, or the refusal (recorded).
async fn open(shared: &Shared, host: &Host, port: u16) -> Result<(TcpStream, String), Refused> {
    let refused = |refusal: Refusal| {
        let body = refusal_text(host, port, &refusal.why, refusal.allow_with.as_deref());
        shared.note(host, port, false, refusal.why, refusal.allow_with);
        Refused { status: 403, body }
    };
    let command_rule = shared.log.command_rule();
    let command = shared.log.command();
    let opened = shared.log.opened();
    let asker = Asker {
        asking: shared.asking.as_deref(),
        command_rule: command_rule.as_deref(),
        command: command.as_deref(),
        url: None,
        open: None,
        opened: opened.as_deref().map(|opening| &opening.hosts),
        only_opened: opened.as_deref().is_some_and(|opening| opening.only),
        shared: shared.log.shared(),
    };
    let Allowed {
        addresses,
        resolved,
        rule,
    } = gate::decide(&shared.rules, asker, host, port)
        .await
        .map_err(refused)?;
    match connect(&addresses, resolved).await {
        Ok(origin) => Ok((origin, rule)),
        Err(Failed::ThisMachine(address)) => Err(refused(gate::this_machine(host, address))),
        Err(Failed::Unreachable) => {
            shared.note(host, port, true, rule, None);
            Err(Refused {
                status: 502,
                body: format!(
                    "agent: network: cannot connect to `{}` port {port}\n",
                    host.display()
                ),
            })
        }
    }
}

/// A tunnel that is open (CONNECT answered, or SOCKS5): recorded as allowed, then relayed
/// once its opening bytes pass [`check_opening`] (a refusal is recorded and closes it).
/// `first`: what the client sent after its request.
async fn relay_tunnel(
    client: UnixStream,
    origin: TcpStream,
    first: Vec<u8>,
    shared: &Shared,
    (host, port, rule): (&Host, u16, String),
) -> std::io::Result<()> {
    shared.note(host, port, true, rule, None);
    relay(client, origin, first, shared, (host, port), None).await
}

/// Copies both ways: the origin's bytes all and at once (a server may speak first), the
/// client's as `through` says — or, for a tunnel (`None`), as its checked opening says.
/// `first`: what the client sent already. Ends when the origin is done.
async fn relay(
    client: UnixStream,
    origin: TcpStream,
    mut first: Vec<u8>,
    shared: &Shared,
    (host, port): (&Host, u16),
    through: Option<Through>,
) -> std::io::Result<()> {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut origin_read, mut origin_write) = origin.into_split();
    let up = async {
        let through = match through {
            Some(through) => through,
            None => match check_opening(&mut client_read, &mut first, host).await? {
                Ok(through) => through,
                Err(why) => return Ok(Some(why)),
            },
        };
        match through {
            Through::All => {
                origin_write.write_all(&first).await?;
                first = Vec::new();
                tokio::io::copy(&mut client_read, &mut origin_write).await?;
                origin_write.shutdown().await?;
            }
            Through::One { head, at, length } => {
                origin_write.write_all(&head).await?;
                let body = first.get(at..).unwrap_or_default();
                let have = body
                    .len()
                    .min(usize::try_from(length).unwrap_or(usize::MAX));
                origin_write.write_all(&body[..have]).await?;
                let rest = length - u64::try_from(have).unwrap_or(length);
                tokio::io::copy(&mut (&mut client_read).take(rest), &mut origin_write).await?;
                // Nothing more is sent; the write side stays open (a half-close may be taken
                // for an abort) until the origin answers and closes (`Connection: close`).
                std::future::pending::<()>().await;
            }
        }
        Ok::<_, std::io::Error>(None)
    };
    let down = async {
        tokio::io::copy(&mut origin_read, &mut client_write).await?;
        client_write.shutdown().await
    };
    tokio::pin!(up, down);
    tokio::select! {
        sent = &mut up => {
            if let Some(why) = sent? {
                shared.note(host, port, false, why, None);
                return Ok(());
            }
            down.await
        }
        // The origin is done: so is the tunnel (the client may still be silent, waiting).
        received = &mut down => received,
    }
}

/// Reads a tunnel's opening bytes into `first` until they can be judged: what may go through
/// to `host`, or why nothing may (no byte of the client's in it). A client that has said
/// nothing yet is waited for (a server may speak first); one that has started gets
/// [`HEAD_TIMEOUT`] in all to finish its opening.
async fn check_opening(
    client: &mut tokio::net::unix::OwnedReadHalf,
    first: &mut Vec<u8>,
    host: &Host,
) -> std::io::Result<Result<Through, String>> {
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(judged) = judge(first, host) {
            return Ok(judged);
        }
        let read = if first.is_empty() {
            Ok(client.read(&mut chunk).await)
        } else {
            tokio::time::timeout_at(deadline, client.read(&mut chunk)).await
        };
        match read {
            Ok(Ok(0)) if first.is_empty() => return Ok(Ok(Through::All)),
            Ok(Ok(n)) if n > 0 => first.extend_from_slice(&chunk[..n]),
            Ok(Err(error)) => return Err(error),
            Ok(Ok(_)) | Err(_) => {
                let why = "the tunnel's opening did not arrive whole in time";
                return Ok(Err(why.to_owned()));
            }
        }
    }
}

/// A SOCKS5 client (`socks5h://`): its greeting, its `CONNECT` decided like any other, then a
/// tunnel. `buffer[..filled]`: what it sent so far.
async fn serve_socks(
    mut client: UnixStream,
    shared: &Shared,
    (mut buffer, mut filled): (Vec<u8>, usize),
    deadline: tokio::time::Instant,
) -> std::io::Result<()> {
    let used = loop {
        match socks::greeting(&buffer[..filled]) {
            socks::Read::Done(true, used) => break used,
            socks::Read::Done(false, _) => {
                return client.write_all(&socks::method_reply(false)).await;
            }
            socks::Read::Bad(_) => return Ok(()),
            socks::Read::NeedMore => {
                if !read_more(&mut client, &mut buffer, &mut filled, deadline).await? {
                    return Ok(());
                }
            }
        }
    };
    client.write_all(&socks::method_reply(true)).await?;
    buffer.copy_within(used..filled, 0);
    filled -= used;
    let ((host, port), used) = loop {
        match socks::request(&buffer[..filled]) {
            socks::Read::Done(target, used) => break (target, used),
            socks::Read::Bad(code) => {
                if let Some(code) = code {
                    client.write_all(&socks::reply(code)).await?;
                }
                return Ok(());
            }
            socks::Read::NeedMore => {
                if !read_more(&mut client, &mut buffer, &mut filled, deadline).await? {
                    return Ok(());
                }
            }
        }
    };
    let (origin, rule) = match open(shared, &host, port).await {
        Ok(opened) => opened,
        Err(refused) => {
            let code = if refused.status == 403 {
                socks::Reply::NotAllowed
            } else {
                socks::Reply::HostUnreachable
            };
            return client.write_all(&socks::reply(code)).await;
        }
    };
    client
        .write_all(&socks::reply(socks::Reply::Success))
        .await?;
    let first = buffer[used..filled].to_vec();
    drop(buffer);
    relay_tunnel(client, origin, first, shared, (&host, port, rule)).await
}

/// Answers the stub resolver: `200` with the addresses (one a line) of an allowed name, `403`
/// for any other. Not an event: the connection that follows is one.
async fn resolve(client: &mut UnixStream, shared: &Shared, host: &Host) -> std::io::Result<()> {
    let opened = shared.log.opened();
    let only = opened.as_deref().is_some_and(|opening| opening.only);
    let found = if !only
        && shared
            .rules
            .resolvable(host, shared.log.command_rule().as_deref())
        || shared
            .rules
            .resolvable_opened(host, opened.as_deref().map(|opening| &opening.hosts))
    {
        addresses(&shared.rules, host, 443).await.ok()
    } else {
        None
    };
    match found {
        Some((addresses, _)) => {
            let lines: String = addresses
                .iter()
                .map(|address| format!("{}\n", address.ip()))
                .collect();
            reply(client, 200, &lines).await
        }
        None => reply(client, 403, "").await,
    }
}

/// The text of a refusal: the host, why, and the setting that would allow it.
fn refusal_text(host: &Host, port: u16, why: &str, allow_with: Option<&str>) -> String {
    let mut text = format!(
        "agent: network: `{}` port {port} is refused for sandboxed commands: {why}",
        host.display()
    );
    if let Some(setting) = allow_with {
        text.push_str(&format!("; to allow it, add `{setting}` to the settings"));
    }
    text.push('\n');
    text
}

async fn reply(client: &mut UnixStream, status: u16, body: &str) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        431 => "Request Header Fields Too Large",
        502 => "Bad Gateway",
        _ => "Service Unavailable",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    client.write_all(head.as_bytes()).await?;
    client.write_all(body.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::NetDecision;
    use pretty_assertions::assert_eq;

    /// A one-shot origin on 127.0.0.1 that answers `hello` to whatever arrives.
    async fn origin() -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buffer = [0u8; 1024];
                    let _ = stream.read(&mut buffer).await;
                    let _ = stream.write_all(b"hello").await;
                });
            }
        });
        port
    }

    /// `allowed.test` allowed, both it and `blocked.test` answered with 127.0.0.1 on `port`.
    fn rules(port: u16) -> Rules {
        let mut rules = Rules::default();
        rules.add(false, "allowed.test", "user").unwrap();
        let answer = format!("127.0.0.1:{port}");
        rules.add_host("allowed.test", &answer).unwrap();
        rules.add_host("blocked.test", &answer).unwrap();
        rules
    }

    async fn ask(proxy: &Proxy, request: impl AsRef<[u8]>) -> String {
        let mut stream = UnixStream::connect(proxy.dir().join(SOCKET_NAME))
            .await
            .unwrap();
        stream.write_all(request.as_ref()).await.unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        String::from_utf8_lossy(&answer).into_owned()
    }

    /// The proxy's decisions so far, checked to be `allowed.test` allowed, then `blocked.test`
    /// refused, none dropped.
    fn allowed_then_refused(proxy: &Proxy) -> Vec<NetworkEvent> {
        let (events, dropped) = proxy.log().take();
        assert_eq!(dropped, 0);
        let decisions: Vec<_> = events
            .iter()
            .map(|e| (e.host.as_str(), e.decision))
            .collect();
        assert_eq!(
            decisions,
            [
                ("allowed.test", NetDecision::Allow),
                ("blocked.test", NetDecision::Deny)
            ]
        );
        events
    }

    /// The door on the loopback (macOS) leads to the same decisions.
    #[tokio::test]
    async fn the_door_leads_to_the_proxy_which_decides_by_name() {
        let port = origin().await;
        let parent = tempfile::tempdir().unwrap();
        let mut proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let door = proxy.open_door().unwrap();
        let through_door = |request: String| async move {
            let mut stream = TcpStream::connect(("127.0.0.1", door)).await.unwrap();
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut answer = Vec::new();
            let _ = stream.read_to_end(&mut answer).await;
            String::from_utf8_lossy(&answer).into_owned()
        };
        let answer =
            through_door(format!("GET http://allowed.test:{port}/ HTTP/1.1\r\n\r\n")).await;
        assert_eq!(answer, "hello");
        let answer = through_door(format!("CONNECT blocked.test:{port} HTTP/1.1\r\n\r\n")).await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        allowed_then_refused(&proxy);
        drop(proxy);
        // The aborted task lets go of its listener when the runtime next runs it.
        let mut closed = false;
        for _ in 0..1000 {
            tokio::task::yield_now().await;
            if TcpStream::connect(("127.0.0.1", door)).await.is_err() {
                closed = true;
                break;
            }
        }
        assert!(closed, "the door closes with the proxy");
    }

    #[tokio::test]
    async fn allowed_names_are_relayed_and_others_refused_with_the_setting() {
        let port = origin().await;
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        proxy.log().set_command(Some("call_1".to_owned()));
        let answer = ask(
            &proxy,
            format!("GET http://allowed.test:{port}/ HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert_eq!(answer, "hello");
        let answer = ask(
            &proxy,
            format!("CONNECT blocked.test:{port} HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        assert!(
            answer.contains("add `[network] allow = [\"blocked.test\"]`"),
            "{answer}"
        );
        let events = allowed_then_refused(&proxy);
        assert_eq!(events[1].command.as_deref(), Some("call_1"));
        assert!(proxy.log().take().0.is_empty());
    }

    /// A ClientHello handshake message (no record header) naming `blocked.test`.
    fn hello_for_blocked_test() -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 1, 1, 0, 0, 21]);
        body.extend_from_slice(&[0, 0, 0, 17, 0, 15, 0, 0, 12]);
        body.extend_from_slice(b"blocked.test");
        let mut message = vec![1, 0, 0, u8::try_from(body.len()).unwrap()];
        message.extend_from_slice(&body);
        message
    }

    #[tokio::test]
    async fn a_tunnel_whose_handshake_names_another_host_is_closed() {
        let port = origin().await;
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        // A ClientHello record naming `blocked.test`, sent right after CONNECT.
        let message = hello_for_blocked_test();
        let mut request = format!("CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n").into_bytes();
        request.extend_from_slice(&[0x16, 3, 1, 0, u8::try_from(message.len()).unwrap()]);
        request.extend_from_slice(&message);
        let answer = ask(&proxy, &request).await;
        assert_eq!(answer, "HTTP/1.1 200 Connection established\r\n\r\n");
        let (events, _) = proxy.log().take();
        assert_eq!(events[1].decision, NetDecision::Deny, "{events:?}");
        assert!(events[1].rule.contains("`blocked.test`"), "{events:?}");
    }

    #[tokio::test]
    async fn a_server_may_speak_first_through_a_tunnel() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            if let Ok((mut stream, _)) = listener.accept().await {
                let _ = stream.write_all(b"220 welcome").await;
            }
        });
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let request = format!("CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n");
        let answer = ask(&proxy, request.as_bytes()).await;
        assert_eq!(
            answer,
            "HTTP/1.1 200 Connection established\r\n\r\n220 welcome"
        );
    }

    #[tokio::test]
    async fn socks5_clients_connect_by_name_under_the_same_rules() {
        let port = origin().await;
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let connect = |name: &str| {
            let mut bytes = vec![5, 1, 0, 5, 1, 0, 3, u8::try_from(name.len()).unwrap()];
            bytes.extend_from_slice(name.as_bytes());
            bytes.extend_from_slice(&port.to_be_bytes());
            bytes.extend_from_slice(b"GET / HTTP/1.0\r\n\r\n");
            bytes
        };
        let answer = ask(&proxy, &connect("allowed.test")).await;
        assert_eq!(answer.as_bytes()[..2], [5, 0]);
        assert_eq!(answer.as_bytes()[2..4], [5, 0]);
        assert!(answer.ends_with("hello"), "{answer:?}");
        let answer = ask(&proxy, &connect("blocked.test")).await;
        assert_eq!(answer.as_bytes(), [5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
        allowed_then_refused(&proxy);
    }

    #[tokio::test]
    async fn a_name_that_resolves_inside_is_refused() {
        let parent = tempfile::tempdir().unwrap();
        let mut rules = Rules::default();
        rules.add(false, "localhost", "user").unwrap();
        let proxy = Proxy::start(rules, parent.path()).unwrap();
        let answer = ask(&proxy, b"GET http://localhost:1/ HTTP/1.1\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert!(answer.contains("loopback"), "{answer}");
    }

    /// The same handshake as above split over two TLS records is read whole and closed too.
    #[tokio::test]
    async fn a_fragmented_handshake_for_another_host_is_closed_too() {
        let port = origin().await;
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let message = hello_for_blocked_test();
        let mut request = format!("CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n").into_bytes();
        let (a, b) = message.split_at(6);
        for part in [a, b] {
            request.extend_from_slice(&[0x16, 3, 1, 0, u8::try_from(part.len()).unwrap()]);
            request.extend_from_slice(part);
        }
        let answer = ask(&proxy, &request).await;
        let (events, _) = proxy.log().take();
        let last = events.last().unwrap();
        assert_eq!(last.decision, NetDecision::Deny, "{events:?} / {answer:?}");
        assert!(last.rule.contains("`blocked.test`"), "{events:?}");
        assert_eq!(answer, "HTTP/1.1 200 Connection established\r\n\r\n");
    }

    /// Plain HTTP inside a tunnel to an allowed host naming another host is refused.
    #[tokio::test]
    async fn plain_http_for_another_host_in_a_tunnel_is_refused() {
        let port = origin().await;
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let request = format!(
            "CONNECT allowed.test:{port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: blocked.test\r\n\r\n"
        );
        let answer = ask(&proxy, request.as_bytes()).await;
        assert!(
            !answer.ends_with("hello"),
            "the origin answered: {answer:?}"
        );
        let (events, _) = proxy.log().take();
        assert_eq!(
            events.last().unwrap().decision,
            NetDecision::Deny,
            "{events:?}"
        );
    }

    /// A plain-HTTP request in a tunnel for the tunnel's host goes through, rewritten, with
    /// its body and nothing after it; one for another host (by `Host`, after empty lines, or
    /// by absolute URL) and a CONNECT in the tunnel are refused before a byte reaches the
    /// origin.
    #[tokio::test]
    async fn plain_http_in_a_tunnel_is_held_to_the_tunnel_host() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let seen_tx = seen_tx.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    let mut buffer = [0u8; 1024];
                    // What arrives up to the request's 4-byte body (or the end).
                    while let Ok(n) = stream.read(&mut buffer).await {
                        got.extend_from_slice(&buffer[..n]);
                        if n == 0 || got.ends_with(b"body") {
                            break;
                        }
                    }
                    let _ = stream.write_all(b"hello").await;
                    let _ = seen_tx.send(String::from_utf8_lossy(&got).into_owned());
                });
            }
        });
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let connect = format!("CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n");
        let good = format!(
            "{connect}POST /a HTTP/1.1\r\nHost: allowed.test:{port}\r\nContent-Length: 4\r\n\r\nbody\
             GET / HTTP/1.1\r\nHost: blocked.test\r\n\r\n"
        );
        let answer = ask(&proxy, good.as_bytes()).await;
        assert!(answer.ends_with("hello"), "{answer:?}");
        let seen = seen_rx.recv().await.unwrap();
        assert!(
            seen.starts_with("POST /a HTTP/1.1\r\nHost: allowed.test:"),
            "{seen:?}"
        );
        assert!(seen.ends_with("Connection: close\r\n\r\nbody"), "{seen:?}");
        assert!(!seen.contains("blocked"), "{seen:?}");
        for bad in [
            "GET / HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
            "\r\nGET / HTTP/1.1\r\nhost: blocked.test\r\n\r\n",
            "GET http://blocked.test/ HTTP/1.1\r\n\r\n",
            "CONNECT blocked.test:443 HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            let answer = ask(&proxy, format!("{connect}{bad}").as_bytes()).await;
            assert!(!answer.ends_with("hello"), "{bad:?}: {answer:?}");
            let (events, _) = proxy.log().take();
            assert_eq!(
                events.last().unwrap().decision,
                NetDecision::Deny,
                "{bad:?}"
            );
            // The origin was connected to, and got nothing.
            assert_eq!(seen_rx.recv().await.unwrap(), "", "{bad:?}");
        }
    }

    /// An origin that answers the first request head and then reports every byte it got,
    /// up to the proxy closing the connection.
    async fn recording_origin() -> (u16, tokio::sync::mpsc::UnboundedReceiver<String>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (seen_tx, seen_rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let seen_tx = seen_tx.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    let mut byte = [0u8; 1];
                    while !got.ends_with(b"\r\n\r\n")
                        && stream.read(&mut byte).await.is_ok_and(|n| n == 1)
                    {
                        got.push(byte[0]);
                    }
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\n\r\nhello").await;
                    let _ = stream.shutdown().await;
                    // Whatever else the proxy sent before closing its side.
                    let _ = stream.read_to_end(&mut got).await;
                    let _ = seen_tx.send(String::from_utf8_lossy(&got).into_owned());
                });
            }
        });
        (port, seen_rx)
    }

    /// Pipelined plain-HTTP requests: the first is decided and goes to its origin, nothing
    /// after it does — a second request for another host (by absolute URL or by `Host`) never
    /// reaches the first one's origin, and neither does a second one for the same host.
    #[tokio::test]
    async fn a_pipelined_request_never_reaches_the_origin() {
        let (port, mut seen) = recording_origin().await;
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let first = format!("GET http://allowed.test:{port}/a HTTP/1.1\r\n\r\n");
        for second in [
            format!("GET http://blocked.test:{port}/b HTTP/1.1\r\n\r\n"),
            "GET /b HTTP/1.1\r\nHost: blocked.test\r\n\r\n".to_owned(),
            format!("GET /b HTTP/1.1\r\nHost: allowed.test:{port}\r\n\r\n"),
        ] {
            let answer = ask(&proxy, format!("{first}{second}").as_bytes()).await;
            assert!(answer.ends_with("hello"), "{answer:?}");
            let got = seen.recv().await.unwrap();
            assert!(got.starts_with("GET /a HTTP/1.1\r\n"), "{got:?}");
            assert!(got.ends_with("Connection: close\r\n\r\n"), "{got:?}");
            assert!(
                !got.contains("/b"),
                "the pipelined request arrived: {got:?}"
            );
        }
    }

    /// A `hosts` answer that is loopback reaches the port written with it, no other (sshd,
    /// Docker's TCP port); without a port, only `allow_local` ports.
    #[tokio::test]
    async fn a_loopback_answer_opens_only_its_port() {
        let (port, _seen) = recording_origin().await;
        let (other, _other_seen) = recording_origin().await;
        let parent = tempfile::tempdir().unwrap();
        let connect = format!("CONNECT allowed.test:{other} HTTP/1.1\r\n\r\n");
        let mut open = rules(port);
        let to_other = format!("127.0.0.1:{other}");
        for (rules, refusal) in [(open.clone(), format!("for port {port} only")), {
            open.add_host("allowed.test", "127.0.0.1").unwrap();
            let add = format!("add `[network] hosts = {{ \"allowed.test\" = \"{to_other}\" }}`");
            (open.clone(), add)
        }] {
            let proxy = Proxy::start(rules, parent.path()).unwrap();
            let answer = ask(&proxy, &connect).await;
            assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
            assert!(answer.contains(&refusal), "{answer}");
        }
        open.allow_local.push(other);
        let proxy = Proxy::start(open, parent.path()).unwrap();
        let answer = ask(
            &proxy,
            format!("GET http://allowed.test:{other}/ HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(answer.ends_with("hello"), "{answer}");
    }

    /// A 10,000-byte server name is refused without becoming a 40 KB event.
    #[tokio::test]
    async fn a_huge_server_name_makes_a_small_event() {
        let port = origin().await;
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let name = vec![0x1bu8; 10_000];
        let n = u16::try_from(name.len()).unwrap();
        let mut ext = vec![0, 0];
        ext.extend_from_slice(&(n + 5).to_be_bytes());
        ext.extend_from_slice(&(n + 3).to_be_bytes());
        ext.push(0);
        ext.extend_from_slice(&n.to_be_bytes());
        ext.extend_from_slice(&name);
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 1, 1, 0]);
        body.extend_from_slice(&u16::try_from(ext.len()).unwrap().to_be_bytes());
        body.extend_from_slice(&ext);
        let mut message = vec![1];
        message.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes()[1..]);
        message.extend_from_slice(&body);
        let mut request = format!("CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n").into_bytes();
        request.extend_from_slice(&[0x16, 3, 1]);
        request.extend_from_slice(&u16::try_from(message.len()).unwrap().to_be_bytes());
        request.extend_from_slice(&message);
        let _ = ask(&proxy, &request).await;
        let (events, _) = proxy.log().take();
        assert_eq!(
            events.last().unwrap().decision,
            NetDecision::Deny,
            "{events:?}"
        );
        for event in &events {
            assert!(
                event.rule.len() < 1000,
                "rule of {} chars",
                event.rule.len()
            );
        }
    }

    /// Connections whose origin never answers nor closes end once their command is over:
    /// they would otherwise hold their slots for the rest of the run.
    #[tokio::test]
    async fn connections_end_with_their_command() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                // Never answers nor closes.
                tokio::spawn(async move {
                    let mut sink = Vec::new();
                    let _ = stream.read_to_end(&mut sink).await;
                    std::future::pending::<()>().await;
                });
            }
        });
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules(port), parent.path()).unwrap();
        let log = proxy.log();
        log.set_command(Some("call_1".to_owned()));
        let requests = [
            format!("GET http://allowed.test:{port}/ HTTP/1.1\r\n\r\n"),
            format!("GET http://allowed.test:{port}/b HTTP/1.1\r\n\r\n"),
        ];
        for request in &requests {
            let mut stream = UnixStream::connect(proxy.dir().join(SOCKET_NAME))
                .await
                .unwrap();
            stream.write_all(request.as_bytes()).await.unwrap();
            // The command is killed: its side of the connection is gone.
            drop(stream);
        }
        let mut made = 0;
        while made < requests.len() {
            made += log.take().0.len();
            tokio::task::yield_now().await;
        }
        let busy = || MAX_CONNECTIONS - proxy.shared.slots.available_permits();
        assert_eq!(busy(), requests.len());
        log.set_command(None);
        let ended = async {
            while busy() > 0 {
                tokio::task::yield_now().await;
            }
        };
        // A guard against a hang, not a measure: the connections end at once.
        let ended = tokio::time::timeout(Duration::from_secs(60), ended).await;
        assert!(ended.is_ok(), "{} connections still held", busy());
    }
}
