//! `web_fetch`'s request, made by the agent itself (not sandboxed) under the same host rules
//! as the proxy ([`gate::decide`]: deny first, the rules, a person's answer at a terminal —
//! without one only allowed hosts —, inside addresses only on their ports). Each hop of a
//! redirect is decided again (at most [`MAX_REDIRECTS`]); only `http`/`https`, no credentials
//! in the URL, no cookies, no `Authorization` or any header of ours but `User-Agent` and
//! `Accept`. The client never resolves a name itself: it connects only to the addresses the
//! gate found (and checked by connecting: not this machine). The body is read in chunks and
//! reading stops at the caller's limit: memory stays bounded whatever the server sends.

use std::net::SocketAddr;
use std::sync::{Arc, Once};
use std::time::Duration;

use super::ask::Asking;
use super::dial::{Failed, connect};
use super::event::{Log, NetworkEvent};
use super::gate::{self, Asker, Refusal};
use super::host::Host;
use super::rules::Rules;

/// Redirects followed, each decided like the first request.
pub const MAX_REDIRECTS: usize = 5;

/// Longest wait for a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest silence while reading a response.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest time a response's body may take to arrive, however steadily it trickles in.
const BODY_DEADLINE: Duration = Duration::from_secs(60);

/// A page fetched: where it ended up, its status and type, and its body up to the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The final URL (after redirects).
    pub url: String,
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type` header, when sent.
    pub content_type: Option<String>,
    /// The body, at most the limit.
    pub body: Vec<u8>,
    /// Whether the body went on past the limit (it was not read further).
    pub cut: bool,
}

/// Why nothing (more) was fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// The URL cannot be fetched at all (scheme, credentials, malformed).
    Invalid(String),
    /// The host rules refused a hop (its URL, and the refusal).
    Refused(String, Refusal),
    /// The request failed (connection, TLS, timeout, too many redirects).
    Failed(String),
}

/// Fetches pages for the agent under the run's host rules.
#[derive(Debug)]
pub struct Fetcher {
    rules: Rules,
    asking: Option<Arc<Asking>>,
    log: Log,
}

impl Fetcher {
    /// A fetcher under `rules` (this machine's own addresses are added, as for the proxy),
    /// asking a person through `asking` about hosts no rule decides — in every mode, `full`
    /// included: a fetch is the agent's own act, with no policy decision before it.
    #[must_use]
    pub fn new(mut rules: Rules, asking: Option<Arc<Asking>>) -> Self {
        rules.own.extend(super::own::addresses());
        Self {
            rules,
            asking,
            log: Log::default(),
        }
    }

    /// Its decisions (`network` events), taken after each call.
    #[must_use]
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// Fetches `url` (GET), following redirects to allowed hosts, reading at most
    /// `max_bytes` of the body; `id`: the tool call, named in events and questions.
    ///
    /// # Errors
    /// See [`FetchError`].
    pub async fn fetch(&self, url: &str, max_bytes: usize, id: &str) -> Result<Page, FetchError> {
        let mut url = check_url(
            reqwest::Url::parse(url.trim())
                .map_err(|error| FetchError::Invalid(format!("`{url}` is not a URL: {error}")))?,
        )?;
        for _ in 0..=MAX_REDIRECTS {
            let response = self.request(&url, id).await?;
            let status = response.status();
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok());
            if status.is_redirection()
                && let Some(location) = location
            {
                let next = url.join(location).map_err(|error| {
                    FetchError::Invalid(format!("the redirect to `{location}` is no URL: {error}"))
                })?;
                url = check_url(next)?;
                continue;
            }
            return read_page(response, max_bytes, BODY_DEADLINE).await;
        }
        Err(FetchError::Failed(format!(
            "more than {MAX_REDIRECTS} redirects; the last went to {url}"
        )))
    }

    /// One hop: decided, then sent to the decided address only.
    async fn request(&self, url: &reqwest::Url, id: &str) -> Result<reqwest::Response, FetchError> {
        let written = url.host_str().unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or(80);
        let host = Host::parse(written)
            .map_err(|why| FetchError::Invalid(format!("the host of {url}: {why}")))?;
        // Never open by the mode alone: in `full` a command still needed the policy's allow or
        // a person's yes, and a fetch has no such step; a host no rule names is asked about at
        // a terminal and refused without one, in every mode.
        let open = None;
        let asker = Asker {
            asking: self.asking.as_deref(),
            command_rule: None,
            command: Some(id),
            url: Some(url.as_str()),
            open,
            opened: None,
            only_opened: false,
            shared: false,
        };
        let refused = |refusal: Refusal| {
            self.note(
                &host,
                port,
                id,
                false,
                refusal.why.clone(),
                refusal.allow_with.clone(),
            );
            FetchError::Refused(url.to_string(), refusal)
        };
        let allowed = gate::decide(&self.rules, asker, &host, port)
            .await
            .map_err(refused)?;
        // Where DNS answered, the address is tried first: one that turns out to be this
        // machine is refused; the client then goes to that address only.
        let address = match connect(&allowed.addresses, allowed.resolved).await {
            Ok(stream) => stream
                .peer_addr()
                .map_err(|error| FetchError::Failed(format!("cannot connect: {error}")))?,
            Err(Failed::ThisMachine(address)) => {
                return Err(refused(gate::this_machine(&host, address)));
            }
            Err(Failed::Unreachable) => {
                self.note(&host, port, id, true, allowed.rule, None);
                return Err(FetchError::Failed(format!(
                    "cannot connect to `{}` port {port}",
                    host.display()
                )));
            }
        };
        self.note(&host, port, id, true, allowed.rule, None);
        client(written, address)?
            .get(url.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.1",
            )
            .send()
            .await
            .map_err(|error| FetchError::Failed(format!("{url}: {}", innermost(&error))))
    }

    fn note(
        &self,
        host: &Host,
        port: u16,
        id: &str,
        allowed: bool,
        rule: String,
        allow_with: Option<String>,
    ) {
        self.log.note(NetworkEvent::decided(
            host,
            port,
            allowed,
            rule,
            allow_with,
            Some(id.to_owned()),
        ));
    }
}

/// Only `http` and `https`, with a host and no credentials.
fn check_url(url: reqwest::Url) -> Result<reqwest::Url, FetchError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::Invalid(format!(
            "only http and https URLs are fetched, not `{}:`",
            url.scheme()
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(FetchError::Invalid(
            "URLs with a user name or password are not fetched (no credentials are sent)"
                .to_owned(),
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(FetchError::Invalid(format!("{url} names no host")));
    }
    Ok(url)
}

/// Refuses every name it is asked to resolve: the client reaches only the decided address.
struct NoDns;

impl reqwest::dns::Resolve for NoDns {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let name = name.as_str().to_owned();
        Box::pin(async move { Err(format!("`{name}` was not decided on").into()) })
    }
}

/// A client for one hop: `host` (as the URL writes it) leads to `address` and nowhere else;
/// no proxy, no redirects, no cookies, no credentials.
fn client(host: &str, address: SocketAddr) -> Result<reqwest::Client, FetchError> {
    static INSTALL_RING: Once = Once::new();
    INSTALL_RING.call_once(|| {
        // Err means some provider is installed already, which is all we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .dns_resolver(Arc::new(NoDns))
        .resolve(host, address)
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION"), " (web_fetch)"))
        .build()
        .map_err(|error| FetchError::Failed(format!("cannot build the HTTP client: {error}")))
}

/// Reads the body in chunks up to `max_bytes`, then stops reading; a body still arriving after
/// `deadline` fails (a server trickling a byte a second would hold the run for days).
async fn read_page(
    mut response: reqwest::Response,
    max_bytes: usize,
    deadline: Duration,
) -> Result<Page, FetchError> {
    let url = response.url().to_string();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let mut body = Vec::new();
    let mut cut = false;
    let until = tokio::time::Instant::now() + deadline;
    while let Some(chunk) = tokio::time::timeout_at(until, response.chunk())
        .await
        .map_err(|_| {
            FetchError::Failed(format!(
                "{url}: the page was still arriving after {} s",
                deadline.as_secs_f32()
            ))
        })?
        .map_err(|error| FetchError::Failed(format!("{url}: {}", innermost(&error))))?
    {
        let room = max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Page {
        url,
        status,
        content_type,
        body,
        cut,
    })
}

/// The innermost cause of an error: the words that say what went wrong.
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut source = error;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_and_https_urls_without_credentials_are_fetched() {
        for (url, ok) in [
            ("http://a.test/", true),
            ("https://a.test:8443/x?y", true),
            ("file:///etc/passwd", false),
            ("data:text/plain,hi", false),
            ("ftp://a.test/", false),
            ("http://user@a.test/", false),
            ("http://user:pw@a.test/", false),
            ("http://:pw@a.test/", false),
        ] {
            let parsed = reqwest::Url::parse(url).unwrap();
            assert_eq!(check_url(parsed).is_ok(), ok, "{url}");
        }
    }

    /// The hop's client resolves nothing itself: a name it was not given fails.
    #[tokio::test]
    async fn a_body_that_trickles_in_fails_at_the_deadline() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = [0; 1024];
            let _ = stream.read(&mut request).await;
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
                .await;
            // A byte every 20 ms, each well inside the read timeout, for ever.
            while stream.write_all(b"x").await.is_ok() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let client = client("slow.test", address).unwrap();
        let url = format!("http://slow.test:{}/", address.port());
        let response = client.get(url).send().await.unwrap();
        let error = read_page(response, 1_000_000, Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(
            matches!(&error, FetchError::Failed(why) if why.contains("still arriving")),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn the_client_resolves_no_name_of_its_own() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let client = client("given.test", address).unwrap();
        let other = format!("http://localhost:{}/", address.port());
        let error = client.get(other).send().await.unwrap_err();
        assert!(innermost(&error).contains("was not decided on"), "{error}");
    }
}
