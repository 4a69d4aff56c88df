//! The streaming HTTP transport shared by the HTTP providers: one reqwest client with rustls,
//! a POST that answers with server-sent events, error statuses mapped to [`ModelError`], an
//! idle timeout per chunk of bytes (comments and keep-alives count), and retries with backoff
//! while nothing has reached the caller. The event-stream parser is ours (`Lines`): it also
//! reads the `error:` field `llama.cpp` sends, which generic parsers drop. What the events
//! mean is the provider's business: it supplies a [`Decoder`].

use std::sync::Once;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use serde_json::Value;

use super::{Delta, ModelError, Reply, RetryPolicy, retryable_status};

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
/// Longest start of an unexpected body (an HTML page) read and quoted — the title and first
/// words say what answered; the rest is noise.
const MAX_BODY_START_CHARS: usize = 200;
/// Bytes read from an unexpected body at most, to find its start.
const MAX_BODY_START_BYTES: usize = 8 * 1024;
/// Most of an error response's body read: the message is at its start, and a server must not
/// make the agent hold an endless body.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// Largest event (one line, or the data of one event) kept while it streams in: far above
/// any real reply chunk, small enough that a server sending no newline cannot exhaust memory.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One server-sent event: its `event:` name (empty when none) and its `data:` lines joined.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Event {
    /// The `event:` field.
    pub event: String,
    /// The `data:` fields, joined with newlines.
    pub data: String,
}

/// Turns the events of one reply into a [`Reply`].
pub(super) trait Decoder: Default {
    /// Handles one event, sending text and reasoning to `on_delta`. `Ok(true)` once the final
    /// event came.
    fn on_event(
        &mut self,
        event: &Event,
        on_delta: &mut dyn FnMut(Delta<'_>),
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
            key_sent: false,
            idle_timeout: IDLE_TIMEOUT,
            retry: RetryPolicy::default(),
            notice: None,
        })
    }

    /// Sends `post` and decodes the stream, retrying while nothing reached `on_delta`.
    pub async fn complete<D: Decoder>(
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

/// Whether a JSON body is an error report: `{"error": …}` or vLLM's `{"object": "error"}`.
pub(super) fn is_error_object(value: &Value) -> bool {
    value.get("error").is_some_and(|e| !e.is_null())
        || value.get("object").and_then(Value::as_str) == Some("error")
        || value.get("type").and_then(Value::as_str) == Some("error")
}

/// What a server's own words say about a conversation that no longer fits (`lower` is the
/// body in lower case): OpenAI and its imitators, Anthropic, `llama.cpp`, Gemini, Mistral.
pub(super) fn is_context_too_long(lower: &str) -> bool {
    const SIGNS: [&str; 10] = [
        "context_length_exceeded",
        "maximum context length",
        "context length",
        "context window",
        "prompt is too long",
        "exceed_context_size",
        "exceeds the available context",
        "input token count",
        "too many tokens",
        "reduce the length of the messages",
    ];
    SIGNS.iter().any(|sign| lower.contains(sign))
}

/// The error a server reported inside its stream (`{"error": …}`, vLLM's `{"object": "error"}`,
/// `llama.cpp`'s `error:` field, Anthropic's `error` event): `message` is the server's words,
/// `raw` what it sent, read for a context-length complaint and for whether it is passing.
pub(super) fn reported(message: String, raw: &Value) -> ModelError {
    if is_context_too_long(&raw.to_string().to_ascii_lowercase()) {
        return ModelError::ContextTooLong { message };
    }
    ModelError::Reported {
        message,
        transient: is_transient(raw),
    }
}

/// Whether an in-stream error says the trouble passes: a status-like code that is worth a
/// retry, or a type naming overload, rate limits or server trouble.
fn is_transient(raw: &Value) -> bool {
    const PASSING: [&str; 8] = [
        "overloaded",
        "server_error",
        "rate_limit",
        "unavailable",
        "timeout",
        "internal",
        "api_error",
        "resource_exhausted",
    ];
    let fields = [
        "/code",
        "/status",
        "/type",
        "/error/code",
        "/error/status",
        "/error/type",
    ];
    fields
        .iter()
        .filter_map(|pointer| raw.pointer(pointer))
        .any(|value| match value {
            Value::Number(n) => n
                .as_u64()
                .and_then(|n| u16::try_from(n).ok())
                .is_some_and(retryable_status),
            Value::String(s) => {
                let lower = s.to_ascii_lowercase();
                lower.parse::<u16>().is_ok_and(retryable_status)
                    || PASSING.iter().any(|word| lower.contains(word))
            }
            _ => false,
        })
}

/// Reads the events of one reply into `D`, with `idle` as the longest wait for any bytes
/// (a comment or keep-alive is activity too).
pub(super) async fn read_events<D, S, B>(
    bytes: S,
    idle: Duration,
    on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
) -> Result<Reply, ModelError>
where
    D: Decoder,
    S: Stream<Item = Result<B, reqwest::Error>>,
    B: AsRef<[u8]>,
{
    let mut bytes = std::pin::pin!(bytes);
    let mut lines = Lines::default();
    let mut decoder = D::default();
    let mut frames = Vec::new();
    loop {
        let Ok(next) = tokio::time::timeout(idle, bytes.next()).await else {
            return Err(ModelError::Stream {
                message: format!("the server sent nothing for {} s", idle.as_secs_f32()),
            });
        };
        let ended = match next {
            Some(Ok(chunk)) => {
                lines.push(chunk.as_ref(), &mut frames);
                if lines.held() > MAX_EVENT_BYTES {
                    return Err(ModelError::Stream {
                        message: format!(
                            "the server sent an event larger than {} MiB without ending it",
                            MAX_EVENT_BYTES / (1024 * 1024)
                        ),
                    });
                }
                false
            }
            Some(Err(error)) => {
                return Err(ModelError::Stream {
                    message: format!(
                        "the connection broke mid-reply: {}",
                        innermost_message(&error)
                    ),
                });
            }
            None => {
                lines.finish(&mut frames);
                true
            }
        };
        for frame in frames.drain(..) {
            match frame {
                Frame::Event(event) => {
                    if decoder.on_event(&event, on_delta)? {
                        return Ok(decoder.into_reply());
                    }
                }
                Frame::Error(text) => {
                    let raw = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
                    let message = error_message(&raw.to_string());
                    return Err(reported(message, &raw));
                }
            }
        }
        if ended {
            return if decoder.may_end() {
                Ok(decoder.into_reply())
            } else {
                Err(ModelError::Stream {
                    message: "the stream ended before the reply was complete".into(),
                })
            };
        }
    }
}

/// What a block of lines up to a blank line meant.
#[derive(Debug, PartialEq, Eq)]
enum Frame {
    /// An event with data.
    Event(Event),
    /// An `error:` field (`llama.cpp`), its value.
    Error(String),
}

/// The event-stream parser: bytes in, frames out, lines split on `\n`, `\r\n` or `\r`
/// wherever the chunks are cut. Comments (`: keep-alive`) and unknown fields are skipped.
#[derive(Debug, Default)]
struct Lines {
    /// Bytes of the unfinished line.
    partial: Vec<u8>,
    /// The last chunk ended in `\r`: a `\n` opening the next one ends no second line.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
    error: Option<String>,
}

impl Lines {
    fn push(&mut self, mut chunk: &[u8], frames: &mut Vec<Frame>) {
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        let mut start = 0;
        let mut at = 0;
        while at < chunk.len() {
            let end = match chunk[at] {
                b'\n' => at + 1,
                b'\r' if chunk.get(at + 1) == Some(&b'\n') => at + 2,
                b'\r' => {
                    self.after_cr = at + 1 == chunk.len();
                    at + 1
                }
                _ => {
                    at += 1;
                    continue;
                }
            };
            self.partial.extend_from_slice(&chunk[start..at]);
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
            self.line(&line, frames);
            start = end;
            at = end;
        }
        self.partial.extend_from_slice(&chunk[start..]);
    }

    /// Bytes held for the event being read (its unfinished line and its data so far).
    fn held(&self) -> usize {
        self.partial.len() + self.data.len()
    }

    /// The stream ended: a block whose last line was complete counts even without the blank
    /// line after it; a line cut in the middle does not.
    fn finish(&mut self, frames: &mut Vec<Frame>) {
        if self.partial.is_empty() {
            self.dispatch(frames);
        }
    }

    fn line(&mut self, line: &str, frames: &mut Vec<Frame>) {
        if line.is_empty() {
            self.dispatch(frames);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => value.clone_into(&mut self.event),
            "error" => match &mut self.error {
                Some(error) => {
                    error.push('\n');
                    error.push_str(value);
                }
                None => self.error = Some(value.to_owned()),
            },
            _ => {}
        }
    }

    fn dispatch(&mut self, frames: &mut Vec<Frame>) {
        let event = std::mem::take(&mut self.event);
        let data = std::mem::take(&mut self.data);
        if let Some(error) = self.error.take() {
            frames.push(Frame::Error(error));
        } else if std::mem::take(&mut self.has_data) {
            frames.push(Frame::Event(Event { event, data }));
        }
        self.has_data = false;
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

/// The server's own words from an error body (`error.message`, `message`, `error`,
/// `error.error` as `llama.cpp` nests it, or the text), on one line and truncated.
pub(super) fn error_message(body: &str) -> String {
    let from_json = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
            v.pointer("/error/message")
                .and_then(text)
                .or_else(|| v.get("message").and_then(text))
                .or_else(|| v.get("error").and_then(text))
                .or_else(|| v.pointer("/error/error/message").and_then(text))
                .or_else(|| v.as_str().map(str::to_owned))
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

#[cfg(test)]
mod lines_tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn frames(chunks: &[&[u8]]) -> Vec<Frame> {
        let mut lines = Lines::default();
        let mut frames = Vec::new();
        for chunk in chunks {
            lines.push(chunk, &mut frames);
        }
        lines.finish(&mut frames);
        frames
    }

    fn event(event: &str, data: &str) -> Frame {
        Frame::Event(Event {
            event: event.into(),
            data: data.into(),
        })
    }

    #[test]
    fn every_line_end_and_every_cut_gives_the_same_events() {
        for stream in [
            "event: a\ndata: 1\ndata:2\n\n: comment\n\ndata: [DONE]\n\n",
            "event: a\r\ndata: 1\r\ndata:2\r\n\r\n: comment\r\n\r\ndata: [DONE]\r\n\r\n",
            "event: a\rdata: 1\rdata:2\r\r: comment\r\rdata: [DONE]\r\r",
        ] {
            let bytes = stream.as_bytes();
            for split in 0..=bytes.len() {
                assert_eq!(
                    frames(&[&bytes[..split], &bytes[split..]]),
                    [event("a", "1\n2"), event("", "[DONE]")],
                    "{stream:?} split at {split}"
                );
            }
        }
    }

    #[test]
    fn an_error_field_is_its_own_frame_and_wins_over_data() {
        assert_eq!(
            frames(&[b"error: {\"message\":\"boom\"}\n\ndata: [DONE]\n\n"]),
            [
                Frame::Error("{\"message\":\"boom\"}".into()),
                event("", "[DONE]")
            ]
        );
    }

    #[test]
    fn a_last_block_without_its_blank_line_counts_but_a_cut_line_does_not() {
        assert_eq!(frames(&[b"data: x\n"]), [event("", "x")]);
        assert_eq!(frames(&[b"data: x\n\ndata: {\"cho"]), [event("", "x")]);
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
            &mut |delta| {
                if let Delta::Text(t) = delta {
                    text.push_str(t);
                }
            },
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
