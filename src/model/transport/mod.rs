//! The HTTP transport shared by the HTTP providers: one reqwest client with rustls, a POST
//! that answers with server-sent events, an idle timeout per chunk of bytes (comments and
//! keep-alives count), and retries with backoff while nothing has reached the caller. What an
//! error status or a redirect means is `status`'s, which redirects are followed `redirect`'s.
//! The stream itself is read by `sse`; what the events mean is the provider's business (its
//! [`Decoder`]). Also the builder settings every model shares ([`Tunable`]).

mod redirect;
mod status;

use std::sync::Once;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER, SERVER};

use serde_json::Value;

use super::sse::{
    Decoder, IDLE_TIMEOUT_NAMED, error_message, innermost_message, is_error_object, read_events,
    reported,
};
use super::{Delta, ModelError, RetryPolicy};
use redirect::follow_redirect;

/// Time to open a TCP (and TLS) connection — a reachable server answers in well under a
/// second; longer means the address is wrong or the server is down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest silence between two chunks of a reply (and before the response head) — models can
/// think for a long while before the first token, but a stream silent this long is dead.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest start of an unexpected body (an HTML page) read and quoted — the title and first
/// words say what answered; the rest is noise.
const MAX_BODY_START_CHARS: usize = 200;
/// Bytes read from an unexpected body at most, to find its start.
const MAX_BODY_START_BYTES: usize = 8 * 1024;
/// Longest wait for an information GET (`/props`, `/v1/models`) — a server answers them at
/// once; one that does not must not hold up the run, which needs neither.
const INFO_TIMEOUT: Duration = Duration::from_secs(5);
/// Most of an information body read (`/props` holds the whole chat template): plenty for
/// what is in it, bounded against an endless one.
const MAX_INFO_BODY_BYTES: usize = 1024 * 1024;
/// Most of an error response's body read: the message is at its start, and a server must not
/// make the agent hold an endless body.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The ids of a model list (`{"data": [{"id": …}, …]}`, as OpenAI's `/models` and
/// Anthropic's `/v1/models` answer), in its order; `None` when it is not one.
pub(super) fn model_ids(list: &Value) -> Option<Vec<String>> {
    let data = list.get("data").and_then(Value::as_array)?;
    Some(
        data.iter()
            .filter_map(|model| model.get("id").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
    )
}

/// One streaming POST.
pub(super) struct Post {
    /// The endpoint.
    pub url: String,
    /// Provider headers (key, version); content type is added.
    pub headers: HeaderMap,
    /// The JSON body.
    pub body: serde_json::Value,
}

/// The headers of `config` to send with every request (secret ones marked sensitive, so
/// they are never shown by the HTTP layer either).
fn extra_headers(config: &super::ProviderConfig) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    for (name, value) in &config.headers {
        let bad = || ModelError::BadUrl {
            url: config.base_url.clone(),
            message: format!("`{name}` is not a valid HTTP header"),
        };
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let mut value = reqwest::header::HeaderValue::from_str(value).map_err(|_| bad())?;
        value.set_sensitive(super::secret_header(name.as_str()));
        headers.insert(name, value);
    }
    Ok(headers)
}

/// The key as the header `name` (case as given) carries it, marked sensitive.
pub(super) fn key_header(
    server: &str,
    name: &str,
    value: &str,
) -> Result<(reqwest::header::HeaderName, reqwest::header::HeaderValue), ModelError> {
    let bad = |message: &str| ModelError::BadUrl {
        url: server.to_owned(),
        message: message.to_owned(),
    };
    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| bad("`api_key_header` is not a valid header name"))?;
    let mut value = reqwest::header::HeaderValue::from_str(value)
        .map_err(|_| bad("the API key contains characters not allowed in a header"))?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// A client bound to one server and model, with its timeouts and retry policy.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    /// The base URL as configured, for messages.
    pub server: String,
    /// The model name, for "not found" messages.
    pub model: String,
    /// The key variable, for "rejected" messages.
    pub key_env: String,
    /// Whether requests carry a key (a 401 then means a bad key, not a missing one).
    pub key_sent: bool,
    /// The header the key travels in (`authorization`, `x-api-key`, `api-key`), lower case.
    pub key_header: String,
    /// Headers sent with every request (`[model] headers`, `--header`), after the provider's.
    pub headers: HeaderMap,
    /// Longest wait for the response head and for each chunk.
    pub idle_timeout: Duration,
    /// Tries and backoff.
    pub retry: RetryPolicy,
    /// Told about each retry before its wait (so a person knows why it is slow).
    pub notice: Option<fn(&str)>,
}

impl Transport {
    /// A transport to `server` (checked to be an http(s) URL).
    pub(super) fn new(server: &str, model: &str, key_env: &str) -> Result<Self, ModelError> {
        let bad_url = |message: String| ModelError::BadUrl {
            url: server.to_owned(),
            message,
        };
        let url = reqwest::Url::parse(server).map_err(|e| bad_url(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad_url(format!(
                "the scheme must be http or https, not `{}`",
                url.scheme()
            )));
        }
        Ok(Self {
            client: http_client()?,
            server: server.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            key_env: key_env.to_owned(),
            key_sent: false,
            key_header: String::new(),
            headers: HeaderMap::new(),
            idle_timeout: IDLE_TIMEOUT,
            retry: RetryPolicy::default(),
            notice: None,
        })
    }

    /// The transport `config` describes: its server, key variable, extra headers and idle
    /// timeout; the key (when `key_sent`) goes in `api_key_header`, else in `key_header`.
    pub(super) fn for_config(
        config: &super::ProviderConfig,
        key_sent: bool,
        key_header: &str,
    ) -> Result<Self, ModelError> {
        let mut transport = Self::new(&config.base_url, &config.model, &config.api_key_env)?;
        transport.key_sent = key_sent;
        transport.headers = extra_headers(config)?;
        transport.key_header = config
            .api_key_header
            .as_deref()
            .unwrap_or(key_header)
            .to_ascii_lowercase();
        if let Some(idle) = config.idle_timeout {
            transport.idle_timeout = idle;
        }
        Ok(transport)
    }

    /// Sends `post` and decodes the stream into a decoder made by `fresh` (one per try),
    /// retrying while nothing reached `on_delta`; the decoder comes back finished.
    pub(super) async fn complete<D: Decoder, F: Fn() -> D + Sync>(
        &self,
        post: &Post,
        fresh: &F,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> Result<D, ModelError> {
        let mut failed = 0;
        loop {
            let mut emitted = false;
            let result = {
                let mut forward = |delta: Delta<'_>| {
                    emitted = true;
                    on_delta(delta);
                };
                self.attempt(post, fresh(), &mut forward).await
            };
            let error = match result {
                Ok(reply) => return Ok(reply),
                Err(error) => error,
            };
            failed += 1;
            if emitted || !error.is_retryable() || failed >= self.retry.tries {
                return Err(error);
            }
            let delay = self.retry.delay(failed, error.retry_after());
            on_delta(Delta::Retry {
                attempt: failed + 1,
                tries: self.retry.tries,
                delay,
                error: &error,
            });
            if let Some(notice) = self.notice {
                notice(&format!(
                    "{error}; trying again in {:.1} s (try {} of {})",
                    delay.as_secs_f64(),
                    failed + 1,
                    self.retry.tries
                ));
            }
            tokio::time::sleep(delay).await;
        }
    }

    /// One try.
    async fn attempt<D: Decoder>(
        &self,
        post: &Post,
        mut decoder: D,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> Result<D, ModelError> {
        let mut headers = post.headers.clone();
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        let send = self
            .client
            .post(&post.url)
            .headers(headers)
            .json(&post.body);
        let response = tokio::time::timeout(self.idle_timeout, send.send())
            .await
            .map_err(|_| self.silence("before answering"))?
            .map_err(|e| self.send_error(&e))?;
        let status = response.status();
        if status.is_redirection() {
            return Err(self.redirect_error(&response, &post.url));
        }
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = self.body_text(response).await;
            return Err(self.status_error(status.as_u16(), retry_after, &body, &post.url));
        }
        if let Some(server) = response.headers().get(SERVER).and_then(|v| v.to_str().ok()) {
            decoder.on_server(server);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .trim()
            .to_owned();
        let media = content_type.to_ascii_lowercase();
        // No content type at all: some small servers omit it; read it as a stream.
        if media.is_empty() || media.starts_with("text/event-stream") {
            return read_events(
                decoder,
                response.bytes_stream(),
                self.idle_timeout,
                on_delta,
            )
            .await;
        }
        let start = if media.contains("json") {
            // A JSON body on 200 is an error object, or a server that ignored `stream`.
            let body = self.body_text(response).await;
            if let Ok(value) = serde_json::from_str::<Value>(&body) {
                if is_error_object(&value) {
                    return Err(reported(error_message(&body), &value));
                }
                if decoder.on_body(&value, on_delta)? {
                    decoder.finish(on_delta);
                    return Ok(decoder);
                }
            }
            quote_start(&body)
        } else {
            body_start(response, self.idle_timeout).await
        };
        Err(ModelError::NotAStream {
            server: self.server.clone(),
            content_type,
            start,
        })
    }

    /// A GET of `url` answered 200 with JSON (a server's `/props`, `/v1/models`): the value,
    /// or `None` for any failure — what is asked this way is a help, never needed.
    pub(super) async fn get_json(&self, url: &str, mut headers: HeaderMap) -> Option<Value> {
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        let patience = self.idle_timeout.min(INFO_TIMEOUT);
        let send = self.client.get(url).headers(headers).send();
        let response = tokio::time::timeout(patience, send).await.ok()?.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let bytes = read_at_most(response, patience, MAX_INFO_BODY_BYTES).await;
        serde_json::from_slice(&bytes).ok()
    }

    /// The body of an error response (its first 64 KiB: the message is at the start), or
    /// what came of it before the idle timeout.
    async fn body_text(&self, response: reqwest::Response) -> String {
        let bytes = read_at_most(response, self.idle_timeout, MAX_ERROR_BODY_BYTES).await;
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn silence(&self, when: &str) -> ModelError {
        ModelError::Stream {
            message: format!(
                "{} sent nothing for {} s {when} ({IDLE_TIMEOUT_NAMED})",
                self.server,
                self.idle_timeout.as_secs_f32()
            ),
        }
    }

    fn send_error(&self, error: &reqwest::Error) -> ModelError {
        let message = innermost_message(error);
        if error.is_connect() || error.is_timeout() {
            ModelError::Connect {
                server: self.server.clone(),
                message,
            }
        } else if error.is_builder() {
            ModelError::BadUrl {
                url: self.server.clone(),
                message,
            }
        } else {
            ModelError::Stream {
                message: format!("the request to {} failed: {message}", self.server),
            }
        }
    }
}

/// The start of an unexpected body (read up to a few kilobytes), quoted.
async fn body_start(response: reqwest::Response, idle: Duration) -> String {
    quote_start(&String::from_utf8_lossy(
        &read_at_most(response, idle, MAX_BODY_START_BYTES).await,
    ))
}

/// Up to about `limit` bytes of a body, as they come within the idle timeout.
async fn read_at_most(response: reqwest::Response, idle: Duration, limit: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut stream = std::pin::pin!(response.bytes_stream());
    while bytes.len() < limit {
        match tokio::time::timeout(idle, stream.next()).await {
            Ok(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
            Ok(Some(Err(_)) | None) | Err(_) => break,
        }
    }
    bytes
}

/// The start of `text`, on one line, control characters escaped, quoted.
fn quote_start(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return "an empty body".to_owned();
    }
    let mut start: String = one_line
        .chars()
        .take(MAX_BODY_START_CHARS)
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect();
    if one_line.chars().nth(MAX_BODY_START_CHARS).is_some() {
        start.push('…');
    }
    format!("`{start}`")
}

/// Builds the shared client once the ring provider is installed.
fn http_client() -> Result<reqwest::Client, ModelError> {
    static INSTALL_RING: Once = Once::new();
    INSTALL_RING.call_once(|| {
        // Err means some provider is installed already, which is all we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(follow_redirect))
        .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ModelError::Internal {
            message: format!("cannot build the HTTP client: {}", innermost_message(&e)),
        })
}

/// The transport settings every model takes, written once: an HTTP provider keeps them in
/// its transport, the offline demo has none and ignores them.
pub trait Tunable: Sized {
    /// The model's transport, when it talks HTTP.
    #[doc(hidden)]
    fn transport_mut(&mut self) -> Option<&mut Transport>;

    /// Longest silence accepted between two chunks (default 120 s).
    #[must_use]
    fn with_idle_timeout(mut self, idle: Duration) -> Self {
        if let Some(transport) = self.transport_mut() {
            transport.idle_timeout = idle;
        }
        self
    }

    /// Tries and backoff (default 3 tries, 0.5 s then 1 s).
    #[must_use]
    fn with_retry(mut self, retry: RetryPolicy) -> Self {
        if let Some(transport) = self.transport_mut() {
            transport.retry = retry;
        }
        self
    }

    /// Calls `notice` with a one-line message before each retry.
    #[must_use]
    fn with_retry_notice(mut self, notice: fn(&str)) -> Self {
        if let Some(transport) = self.transport_mut() {
            transport.notice = Some(notice);
        }
        self
    }
}
