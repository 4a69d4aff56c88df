//! Event builders for the fake model server: raw SSE frames ([`Events`]), both wire formats
//! ([`openai`], [`anthropic`]), and whole provider-neutral turns ([`Turn`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::Reply;

/// Server-sent events, each a complete frame (`data: …\n\n`).
#[derive(Debug, Clone, Default)]
pub struct Events(pub Vec<String>);

impl Events {
    /// One frame written exactly as given (for malformed input).
    pub fn raw(frame: impl Into<String>) -> Self {
        Self(vec![frame.into()])
    }

    /// `data: JSON`.
    pub fn data(data: &Value) -> Self {
        Self::raw(format!("data: {data}\n\n"))
    }

    /// `event: NAME` + `data: JSON`.
    pub fn named(event: &str, data: &Value) -> Self {
        Self::raw(format!("event: {event}\ndata: {data}\n\n"))
    }

    /// These events, then `more`.
    #[must_use]
    pub fn then(mut self, more: Events) -> Self {
        self.0.extend(more.0);
        self
    }
}

/// Event builders for OpenAI Chat Completions streams.
pub mod openai {
    use super::Events;
    use serde_json::{Value, json};

    /// One `chat.completion.chunk` with `delta` and `finish_reason`.
    pub fn chunk(delta: Value, finish_reason: Option<&str>) -> Events {
        Events::data(&json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }))
    }

    /// A text delta.
    pub fn text(text: &str) -> Events {
        chunk(json!({"role": "assistant", "content": text}), None)
    }

    /// Tool call `index`: id and name first (empty arguments), then `arguments` whole.
    pub fn tool_call(index: usize, id: &str, name: &str, arguments: &str) -> Events {
        tool_call_split(index, id, name, &[arguments])
    }

    /// Tool call `index` with its raw `arguments` text spread over one chunk per part.
    pub fn tool_call_split(index: usize, id: &str, name: &str, parts: &[&str]) -> Events {
        let mut events = chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            None,
        );
        for part in parts {
            events = events.then(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                None,
            ));
        }
        events
    }

    /// The last chunk: `stop`, `tool_calls`, `length` …
    pub fn finish(reason: &str) -> Events {
        chunk(json!({}), Some(reason))
    }

    /// The usage chunk `include_usage` asks for: no choices, `usage` with the counts.
    pub fn usage(prompt: u64, completion: u64, cached: u64) -> Events {
        Events::data(&json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }))
    }

    /// `data: [DONE]`.
    pub fn done() -> Events {
        Events::raw("data: [DONE]\n\n")
    }

    /// An error object in the stream, as some servers send mid-stream.
    pub fn error(message: &str) -> Events {
        Events::data(&json!({"error": {"message": message, "type": "server_error"}}))
    }
}

/// Event builders for Anthropic Messages streams.
pub mod anthropic {
    use super::Events;
    use serde_json::json;

    /// `message_start`.
    pub fn message_start() -> Events {
        Events::named(
            "message_start",
            &json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        )
    }

    /// `message_start` with the input usage: uncached input, cache reads, cache writes.
    pub fn message_start_usage(input: u64, cache_read: u64, cache_write: u64) -> Events {
        Events::named(
            "message_start",
            &json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_write, "output_tokens": 1}}}),
        )
    }

    /// `message_delta` with `stop_reason` and the output tokens of the whole message.
    pub fn message_delta_usage(stop_reason: &str, output: u64) -> Events {
        Events::named(
            "message_delta",
            &json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output}}),
        )
    }

    /// A text block at `index`: start, one delta, stop.
    pub fn text(index: usize, text: &str) -> Events {
        text_split(index, &[text])
    }

    /// A text block at `index` with one `text_delta` per part.
    pub fn text_split(index: usize, parts: &[&str]) -> Events {
        let mut events = Events::named(
            "content_block_start",
            &json!({"type": "content_block_start",
            "index": index, "content_block": {"type": "text", "text": ""}}),
        );
        for part in parts {
            events = events.then(Events::named(
                "content_block_delta",
                &json!({
                "type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": part}}),
            ));
        }
        events.then(block_stop(index))
    }

    /// A `tool_use` block at `index` with its raw input JSON in one delta.
    pub fn tool_use(index: usize, id: &str, name: &str, input_json: &str) -> Events {
        tool_use_split(index, id, name, &[input_json])
    }

    /// A `tool_use` block at `index` with one `input_json_delta` per part.
    pub fn tool_use_split(index: usize, id: &str, name: &str, parts: &[&str]) -> Events {
        let mut events = Events::named(
            "content_block_start",
            &json!({"type": "content_block_start",
            "index": index, "content_block": {"type": "tool_use", "id": id, "name": name,
            "input": {}}}),
        );
        for part in parts {
            events = events.then(Events::named(
                "content_block_delta",
                &json!({
                "type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part}}),
            ));
        }
        events.then(block_stop(index))
    }

    /// `content_block_stop`.
    pub fn block_stop(index: usize) -> Events {
        Events::named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        )
    }

    /// `message_delta` with `stop_reason` (`end_turn`, `tool_use`, `max_tokens` …).
    pub fn message_delta(stop_reason: &str) -> Events {
        Events::named(
            "message_delta",
            &json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": 1}}),
        )
    }

    /// `message_stop`.
    pub fn message_stop() -> Events {
        Events::named("message_stop", &json!({"type": "message_stop"}))
    }

    /// `ping`.
    pub fn ping() -> Events {
        Events::named("ping", &json!({"type": "ping"}))
    }

    /// An `error` event (`overloaded_error`, `api_error` …).
    pub fn error(kind: &str, message: &str) -> Events {
        Events::named(
            "error",
            &json!({"type": "error",
            "error": {"type": kind, "message": message}}),
        )
    }
}

/// One whole model turn, playable in either wire format.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    text: String,
    calls: Vec<(String, String, String)>,
}

/// A turn answering `text`, no tool call.
pub fn turn_text(text: &str) -> Turn {
    Turn::default().with_text(text)
}

/// A turn calling the `shell` tool with `command` (id `call_N`, unique in the process).
pub fn turn_tool_call(command: &str, description: &str) -> Turn {
    Turn::default().with_shell(command, description)
}

impl Turn {
    /// Sets the text streamed before the tool calls.
    #[must_use]
    pub fn with_text(mut self, text: &str) -> Self {
        self.text = text.to_owned();
        self
    }

    /// Adds a `shell` call with a fresh id.
    #[must_use]
    pub fn with_shell(self, command: &str, description: &str) -> Self {
        static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
        let id = format!("call_{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
        let arguments = json!({"command": command, "description": description}).to_string();
        self.with_call(&id, "shell", &arguments)
    }

    /// Adds a call with raw `arguments` text (which may be malformed on purpose).
    #[must_use]
    pub fn with_call(mut self, id: &str, name: &str, arguments: &str) -> Self {
        self.calls
            .push((id.to_owned(), name.to_owned(), arguments.to_owned()));
        self
    }

    /// The turn as an OpenAI stream: text in two deltas, arguments in three pieces.
    pub fn openai(&self) -> Reply {
        let mut events = Vec::new();
        if !self.text.is_empty() {
            let (a, b) = halves(&self.text);
            events.extend([openai::text(a), openai::text(b)]);
        }
        for (index, (id, name, arguments)) in self.calls.iter().enumerate() {
            events.push(openai::tool_call_split(index, id, name, &thirds(arguments)));
        }
        let reason = if self.calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        events.extend([openai::finish(reason), openai::done()]);
        Reply::sse(events)
    }

    /// The turn as an Anthropic stream: text in two deltas, input in three pieces.
    pub fn anthropic(&self) -> Reply {
        let mut events = vec![anthropic::message_start()];
        let offset = usize::from(!self.text.is_empty());
        if !self.text.is_empty() {
            let (a, b) = halves(&self.text);
            events.push(anthropic::text_split(0, &[a, b]));
        }
        for (index, (id, name, arguments)) in self.calls.iter().enumerate() {
            events.push(anthropic::tool_use_split(
                index + offset,
                id,
                name,
                &thirds(arguments),
            ));
        }
        let reason = if self.calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        events.extend([anthropic::message_delta(reason), anthropic::message_stop()]);
        Reply::sse(events)
    }
}

/// `text` cut in two at a character boundary.
fn halves(text: &str) -> (&str, &str) {
    let mut mid = text.len() / 2;
    while !text.is_char_boundary(mid) {
        mid += 1;
    }
    text.split_at(mid)
}

/// `text` cut in three at character boundaries.
fn thirds(text: &str) -> Vec<&str> {
    let (a, rest) = halves(text);
    let (a1, a2) = halves(a);
    vec![a1, a2, rest]
}
