//! The server-sent-event stream of a reply, read by our own parser (`Lines`: it also reads
//! the `error:` field `llama.cpp` sends, which generic parsers drop), and the error reports
//! servers put in bodies and streams. Bytes in, [`Event`]s out to the provider's [`Decoder`];
//! the HTTP side is `transport`'s.

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use serde_json::Value;

use super::{Delta, ModelError, Reply, retryable_status};

/// Which timeout fired when a server goes silent, and where it is set.
pub(super) const IDLE_TIMEOUT_NAMED: &str =
    "the idle timeout: raise `idle_timeout_secs` in [model] for a slower server";

/// Longest server error message kept in an error — enough for the sentence that explains it,
/// short enough for one line on the terminal.
const MAX_ERROR_MESSAGE_CHARS: usize = 300;
/// Longest piece of an offending event quoted in an error — enough to recognise it.
const MAX_SNIPPET_CHARS: usize = 80;
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
pub(super) trait Decoder {
    /// Handles one event, sending text and reasoning to `on_delta`. `Ok(true)` once the final
    /// event came.
    fn on_event(
        &mut self,
        event: &Event,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<bool, ModelError>;

    /// Whether the stream may end here without its final event (a complete reply anyway).
    fn may_end(&self) -> bool;

    /// The response's `Server` header, before any event. Ignored by default.
    fn on_server(&mut self, server: &str) {
        let _ = server;
    }

    /// The reply is complete: passes on what was held back to be sure what it was (text that
    /// looked like the start of a tag). Nothing by default.
    fn finish(&mut self, on_delta: &mut dyn FnMut(Delta<'_>)) {
        let _ = on_delta;
    }

    /// A whole JSON reply on 200 where a stream was asked for (a server that ignores
    /// `stream`): decodes it and `Ok(true)`, or `Ok(false)` when it is no reply of this wire.
    ///
    /// # Errors
    ///
    /// What decoding it as events reports.
    fn on_body(
        &mut self,
        body: &Value,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<bool, ModelError> {
        let _ = (body, on_delta);
        Ok(false)
    }

    /// The reply so far.
    fn into_reply(self) -> Reply;
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
        return ModelError::ContextTooLong {
            message,
            context: None,
            prompt: None,
        };
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

/// Reads the events of one reply into `decoder`, with `idle` as the longest wait for any bytes
/// (a comment or keep-alive is activity too); the decoder comes back finished.
pub(super) async fn read_events<D, S, B>(
    mut decoder: D,
    bytes: S,
    idle: Duration,
    on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
) -> Result<D, ModelError>
where
    D: Decoder,
    S: Stream<Item = Result<B, reqwest::Error>>,
    B: AsRef<[u8]>,
{
    let mut bytes = std::pin::pin!(bytes);
    let mut lines = Lines::default();
    let mut frames = Vec::new();
    loop {
        let Ok(next) = tokio::time::timeout(idle, bytes.next()).await else {
            return Err(ModelError::Stream {
                message: format!(
                    "the server sent nothing for {} s mid-reply ({IDLE_TIMEOUT_NAMED})",
                    idle.as_secs_f32()
                ),
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
                        decoder.finish(on_delta);
                        return Ok(decoder);
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
                decoder.finish(on_delta);
                Ok(decoder)
            } else {
                Err(ModelError::Stream {
                    message: "the stream ended before the reply was complete".into(),
                })
            };
        }
    }
}

/// The text and the reasoning of a reply as they stream in: each piece is passed on to the
/// caller as it comes and kept for the reply. Both decoders use it.
#[derive(Debug, Default)]
pub(super) struct Said {
    /// The answer so far.
    pub(super) text: String,
    /// The reasoning so far.
    pub(super) reasoning: String,
}

impl Said {
    /// Passes on and keeps answer text.
    pub(super) fn push_text(&mut self, text: &str, on_delta: &mut dyn FnMut(Delta<'_>)) {
        if !text.is_empty() {
            on_delta(Delta::Text(text));
            self.text.push_str(text);
        }
    }

    /// Passes on and keeps reasoning.
    pub(super) fn push_reasoning(&mut self, text: &str, on_delta: &mut dyn FnMut(Delta<'_>)) {
        if !text.is_empty() {
            on_delta(Delta::Reasoning(text));
            self.reasoning.push_str(text);
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

/// The deepest cause, which is the one a person can act on ("Connection refused").
pub(super) fn innermost_message(error: &(dyn std::error::Error + 'static)) -> String {
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
    pub async fn two_chunks<D: Decoder + Default>(
        stream: &str,
        split: usize,
    ) -> (Result<Reply, ModelError>, String) {
        let bytes = stream.as_bytes();
        let chunks: Vec<Result<Vec<u8>, reqwest::Error>> =
            vec![Ok(bytes[..split].to_vec()), Ok(bytes[split..].to_vec())];
        let mut text = String::new();
        let result = read_events(
            D::default(),
            futures_util::stream::iter(chunks),
            Duration::from_secs(5),
            &mut |delta| {
                if let Delta::Text(t) = delta {
                    text.push_str(t);
                }
            },
        )
        .await
        .map(D::into_reply);
        (result, text)
    }

    /// Asserts that every split of `stream` decodes to `expected`, text streamed once.
    pub async fn every_split_gives<D: Decoder + Default>(stream: &str, expected: &Reply) {
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
