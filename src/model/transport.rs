//! The HTTP transport shared by the HTTP providers: one reqwest client with rustls, a POST
//! that answers with server-sent events, error statuses mapped to [`ModelError`], an idle
//! timeout per chunk of bytes (comments and keep-alives count), and retries with backoff
//! while nothing has reached the caller. The stream itself is read by `sse`; what the events
//! mean is the provider's business (its [`Decoder`]). Also the builder settings every model
//! shares ([`Tunable`]).

use std::sync::Once;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};

use serde_json::Value;

use super::sse::{
    Decoder, error_message, innermost_message, is_context_too_long, is_error_object, read_events,
    reported,
};
use super::{Delta, ModelError, Reply, RetryPolicy};

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
/// Most of an error response's body read: the message is at its start, and a server must not
/// make the agent hold an endless body.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// One streaming POST.
pub(super) struct Post {
    /// The endpoint.
    pub url: String,
    /// Provider headers (key, version); content type is added.
    pub headers: HeaderMap,
    /// The JSON body.
    pub body: serde_json::Value,
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
            idle_timeout: IDLE_TIMEOUT,
            retry: RetryPolicy::default(),
            notice: None,
        })
    }

    /// Sends `post` and decodes the stream, retrying while nothing reached `on_delta`.
    pub(super) async fn complete<D: Decoder>(
        &self,
        post: &Post,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> Result<Reply, ModelError> {
        let mut failed = 0;
        loop {
            let mut emitted = false;
            let result = {
                let mut forward = |delta: Delta<'_>| {
                    emitted = true;
                    on_delta(delta);
                };
                self.attempt::<D>(post, &mut forward).await
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
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> Result<Reply, ModelError> {
        let send = self
            .client
            .post(&post.url)
            .headers(post.headers.clone())
            .json(&post.body);
        let response = tokio::time::timeout(self.idle_timeout, send.send())
            .await
            .map_err(|_| self.silence("before answering"))?
            .map_err(|e| self.send_error(&e))?;
        let status = response.status();
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
            return read_events::<D, _, _>(response.bytes_stream(), self.idle_timeout, on_delta)
                .await;
        }
        let start = if media.contains("json") {
            // A JSON body on 200 is an error object, or a server that ignored `stream`.
            let body = self.body_text(response).await;
            if let Ok(value) = serde_json::from_str::<Value>(&body)
                && is_error_object(&value)
            {
                return Err(reported(error_message(&body), &value));
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

    /// The body of an error response (its first 64 KiB: the message is at the start), or
    /// what came of it before the idle timeout.
    async fn body_text(&self, response: reqwest::Response) -> String {
        let bytes = read_at_most(response, self.idle_timeout, MAX_ERROR_BODY_BYTES).await;
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn silence(&self, when: &str) -> ModelError {
        ModelError::Stream {
            message: format!(
                "{} sent nothing for {} s {when}",
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

    fn status_error(
        &self,
        status: u16,
        retry_after: Option<Duration>,
        body: &str,
        url: &str,
    ) -> ModelError {
        let message = error_message(body);
        let lower = body.to_ascii_lowercase();
        let server = self.server.clone();
        match status {
            401 | 403 => ModelError::Auth {
                server,
                key_env: self.key_env.clone(),
                key_sent: self.key_sent,
                status,
                message,
            },
            413 => ModelError::ContextTooLong {
                message: format!("HTTP 413: {message}"),
            },
            400 | 422 if is_context_too_long(&lower) => ModelError::ContextTooLong {
                message: format!("HTTP {status}: {message}"),
            },
            404 if lower.contains("model") => ModelError::ModelNotFound {
                model: self.model.clone(),
                server,
            },
            404 => ModelError::NotFound {
                url: url.to_owned(),
            },
            _ if lower.contains("model_not_found") => ModelError::ModelNotFound {
                model: self.model.clone(),
                server,
            },
            // Out of credit is reported as 429 but will not pass by waiting.
            429 if !lower.contains("insufficient_quota") => ModelError::RateLimited {
                server,
                retry_after,
                message,
            },
            _ => ModelError::Http {
                status,
                server,
                message,
            },
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
