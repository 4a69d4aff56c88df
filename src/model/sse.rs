//! The streaming HTTP transport shared by the HTTP providers: one reqwest client with rustls,
//! a POST that answers with server-sent events, error statuses mapped to [`ModelError`], an
//! idle timeout per chunk, and retries with backoff while no text has reached the caller.
//! What the events mean is the provider's business: it supplies a [`Decoder`].

use std::sync::Once;
use std::time::Duration;

use eventsource_stream::{Event, Eventsource};
use futures_util::{Stream, StreamExt};
use reqwest::header::{HeaderMap, RETRY_AFTER};

use super::{ModelError, Reply, RetryPolicy};

/// Time to open a TCP (and TLS) connection — a reachable server answers in well under a
/// second; longer means the address is wrong or the server is down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest silence between two chunks of a reply (and before the response head) — models can
/// think for a long while before the first token, but a stream silent this long is dead.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest server error message kept in an error — enough for the sentence that explains it,
/// short enough for one line on the terminal.
const MAX_ERROR_MESSAGE_CHARS: usize = 300;
/// Longest piece of an offending event quoted in an error — enough to recognise it.
const MAX_SNIPPET_CHARS: usize = 80;

/// Turns the events of one reply into a [`Reply`].
pub(super) trait Decoder: Default {
    /// Handles one event, sending text to `on_text`. `Ok(true)` once the final event came.
    fn on_event(
        &mut self,
        event: &Event,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<bool, ModelError>;

    /// Whether the stream may end here without its final event (a complete reply anyway).
    fn may_end(&self) -> bool;

    /// The reply so far.
    fn into_reply(self) -> Reply;
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

/// The builder methods every HTTP provider has, acting on its `transport` field: written
/// once here, expanded in each provider's `impl`.
macro_rules! transport_builders {
    () => {
        /// Longest silence accepted between two chunks (default 120 s).
        #[must_use]
        pub fn with_idle_timeout(mut self, idle: std::time::Duration) -> Self {
            self.transport.idle_timeout = idle;
            self
        }

        /// Tries and backoff (default 3 tries, 0.5 s then 1 s).
        #[must_use]
        pub fn with_retry(mut self, retry: super::RetryPolicy) -> Self {
            self.transport.retry = retry;
            self
        }

        /// Calls `notice` with a one-line message before each retry.
        #[must_use]
        pub fn with_retry_notice(mut self, notice: fn(&str)) -> Self {
            self.transport.notice = Some(notice);
            self
        }
    };
}
pub(super) use transport_builders;

/// A client bound to one server and model, with its timeouts and retry policy.
#[derive(Debug, Clone)]
pub(super) struct Transport {
    client: reqwest::Client,
    /// The base URL as configured, for messages.
    pub server: String,
    /// The model name, for "not found" messages.
    pub model: String,
    /// The key variable, for "rejected" messages.
    pub key_env: String,
    /// Longest wait for the response head and for each chunk.
    pub idle_timeout: Duration,
    /// Tries and backoff.
    pub retry: RetryPolicy,
    /// Told about each retry before its wait (so a person knows why it is slow).
    pub notice: Option<fn(&str)>,
}

impl Transport {
    /// A transport to `server` (checked to be an http(s) URL).
    pub fn new(server: &str, model: &str, key_env: &str) -> Result<Self, ModelError> {
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
            idle_timeout: IDLE_TIMEOUT,
            retry: RetryPolicy::default(),
            notice: None,
        })
    }

    /// Sends `post` and decodes the stream, retrying while nothing reached `on_text`.
    pub async fn complete<D: Decoder>(
        &self,
        post: &Post,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Reply, ModelError> {
        let mut failed = 0;
        loop {
            let mut emitted = false;
            let result = {
                let mut forward = |text: &str| {
                    emitted = true;
                    on_text(text);
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
        on_text: &mut (dyn FnMut(&str) + Send),
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
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("application/json"));
        if is_json {
            let body = self.body_text(response).await;
            return Err(ModelError::Stream {
                message: format!(
                    "the server answered with JSON instead of an event stream: {}",
                    error_message(&body)
                ),
            });
        }
        read_events::<D, _, _>(response.bytes_stream(), self.idle_timeout, on_text).await
    }

    /// The body of an error response, or empty if it does not come in time.
    async fn body_text(&self, response: reqwest::Response) -> String {
        match tokio::time::timeout(self.idle_timeout, response.text()).await {
            Ok(Ok(text)) => text,
            Ok(Err(_)) | Err(_) => String::new(),
        }
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
                status,
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

/// Reads the events of one reply into `D`, with `idle` as the longest wait per chunk.
pub(super) async fn read_events<D, S, B>(
    bytes: S,
    idle: Duration,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<Reply, ModelError>
where
    D: Decoder,
    S: Stream<Item = Result<B, reqwest::Error>>,
    B: AsRef<[u8]>,
{
    let mut events = std::pin::pin!(bytes.eventsource());
    let mut decoder = D::default();
    loop {
        let Ok(next) = tokio::time::timeout(idle, events.next()).await else {
            return Err(ModelError::Stream {
                message: format!("the server sent nothing for {} s", idle.as_secs_f32()),
            });
        };
        match next {
            Some(Ok(event)) => {
                if decoder.on_event(&event, on_text)? {
                    return Ok(decoder.into_reply());
                }
            }
            Some(Err(error)) => {
                return Err(ModelError::Stream {
                    message: format!("the connection broke mid-reply: {}", stream_error(&error)),
                });
            }
            None if decoder.may_end() => return Ok(decoder.into_reply()),
            None => {
                return Err(ModelError::Stream {
                    message: "the stream ended before the reply was complete".into(),
                });
            }
        }
    }
}

fn stream_error(error: &eventsource_stream::EventStreamError<reqwest::Error>) -> String {
    match error {
        eventsource_stream::EventStreamError::Transport(e) => innermost_message(e),
        other => other.to_string(),
    }
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

/// The deepest cause, which is the one a person can act on ("Connection refused").
fn innermost_message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    let message = current.to_string();
    if error.to_string().contains("timed out") && !message.contains("timed out") {
        format!("timed out ({message})")
    } else {
        message
    }
}

/// The server's own words from an error body (`error.message`, `message`, `error`, or the
/// text), on one line and truncated.
pub(super) fn error_message(body: &str) -> String {
    let from_json = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
            v.pointer("/error/message")
                .and_then(text)
                .or_else(|| v.get("message").and_then(text))
                .or_else(|| v.get("error").and_then(text))
        });
    let text = from_json.unwrap_or_else(|| body.to_owned());
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return "no error message".into();
    }
    match one_line.char_indices().nth(MAX_ERROR_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// The start of an offending event, quoted, for error messages.
pub(super) fn snippet(data: &str) -> String {
    match data.char_indices().nth(MAX_SNIPPET_CHARS) {
        Some((cut, _)) => format!("`{}…`", &data[..cut]),
        None => format!("`{data}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn error_messages_come_from_the_body() {
        let openai = r#"{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
        assert_eq!(error_message(openai), "The model `x` does not exist");
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(error_message(anthropic), "Overloaded");
        assert_eq!(
            error_message(r#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(
            error_message("<html>\n  Bad   gateway\n</html>"),
            "<html> Bad gateway </html>"
        );
        assert_eq!(error_message(""), "no error message");
        let long = "é".repeat(1000);
        assert_eq!(
            error_message(&long).chars().count(),
            MAX_ERROR_MESSAGE_CHARS + 1
        );
    }
}

/// Feeding recorded streams to a decoder, cut into chunks anywhere.
#[cfg(test)]
pub(super) mod replay {
    use super::*;

    /// `stream` decoded as two chunks split at byte `split`, with the text streamed.
    pub async fn two_chunks<D: Decoder>(
        stream: &str,
        split: usize,
    ) -> (Result<Reply, ModelError>, String) {
        let bytes = stream.as_bytes();
        let chunks: Vec<Result<Vec<u8>, reqwest::Error>> =
            vec![Ok(bytes[..split].to_vec()), Ok(bytes[split..].to_vec())];
        let mut text = String::new();
        let result = read_events::<D, _, _>(
            futures_util::stream::iter(chunks),
            Duration::from_secs(5),
            &mut |t| text.push_str(t),
        )
        .await;
        (result, text)
    }

    /// Asserts that every split of `stream` decodes to `expected`, text streamed once.
    pub async fn every_split_gives<D: Decoder>(stream: &str, expected: &Reply) {
        for split in 0..=stream.len() {
            let (result, text) = two_chunks::<D>(stream, split).await;
            match result {
                Ok(reply) => {
                    assert_eq!(&reply, expected, "split at byte {split}");
                    assert_eq!(text, expected.text, "streamed text, split at byte {split}");
                }
                Err(error) => panic!("split at byte {split}: {error}"),
            }
        }
    }
}
