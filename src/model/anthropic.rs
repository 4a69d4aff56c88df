//! Anthropic Messages with streaming tool use. Owns the request body (system prompt apart,
//! `thinking` blocks sent back first with their `signature`, `tool_use` and `tool_result`
//! blocks, roles merged where the API wants one message) and the decoding of the typed events
//! (`message_start` … `message_stop`, thinking and signature deltas included, token usage
//! from `message_start` and `message_delta`); prompt caching marks (`cache_control`) on the
//! tools, the system prompt and the latest turns. The HTTP side is `sse`'s.

use std::collections::BTreeMap;
use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use super::sse::{Decoder, Event, Said, reported, snippet};
use super::transport::{Post, Transport, key_header};
use super::{
    Delta, Message, Model, ModelError, ProviderConfig, ProviderKind, Reasoning, Reply, Request,
    StopReason, ToolCall, Usage,
};

/// The API version this file speaks — the only stable one, and what the event and block
/// shapes below follow.
const API_VERSION: &str = "2023-06-01";
/// Output limit per turn unless `max_output_tokens` says otherwise; the API requires one —
/// room for a long answer or a big tool call, within what every current Claude model accepts.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;

/// An Anthropic Messages model.
pub struct Anthropic {
    transport: Transport,
    api_key: Option<String>,
    max_output_tokens: u32,
    /// Whether the limit was lowered to the model's stated maximum (said once).
    lowered: bool,
}

impl fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Anthropic")
            .field("server", &self.transport.server)
            .field("model", &self.transport.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl Anthropic {
    /// A model at `config.base_url`. The official URL needs a key; a proxy may do without.
    ///
    /// # Errors
    ///
    /// [`ModelError::MissingKey`] when the official server gets no key, and
    /// [`ModelError::BadUrl`] for a base URL that is not http(s).
    pub fn new(config: &ProviderConfig) -> Result<Self, ModelError> {
        let api_key = config.api_key.clone().filter(|key| !key.trim().is_empty());
        let official =
            config.base_url.trim_end_matches('/') == ProviderKind::Anthropic.default_base_url();
        if api_key.is_none() && official {
            return Err(ModelError::MissingKey {
                key_env: config.api_key_env.clone(),
            });
        }
        let transport = Transport::for_config(config, api_key.is_some(), "x-api-key")?;
        Ok(Self {
            transport,
            api_key,
            max_output_tokens: config
                .max_output_tokens
                .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS),
            lowered: false,
        })
    }

    fn post(&self, request: &Request<'_>) -> Result<Post, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        if let Some(key) = &self.api_key {
            let (name, value) =
                key_header(&self.transport.server, &self.transport.key_header, key)?;
            headers.insert(name, value);
        }
        // Accept a base URL with or without the version segment.
        let server = &self.transport.server;
        let url = if server.ends_with("/v1") {
            format!("{server}/messages")
        } else {
            format!("{server}/v1/messages")
        };
        let mut body = body(&self.transport.model, request);
        body["max_tokens"] = json!(self.max_output_tokens);
        Ok(Post { url, headers, body })
    }
}

impl Model for Anthropic {
    fn describe(&self) -> String {
        format!("{}/{}", ProviderKind::Anthropic, self.transport.model)
    }

    fn output_limit(&self) -> Option<u32> {
        Some(self.max_output_tokens)
    }

    async fn complete(
        &mut self,
        request: &Request<'_>,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> Result<Reply, ModelError> {
        let post = self.post(request)?;
        let result = self
            .transport
            .complete(&post, &EventDecoder::default, on_delta)
            .await;
        let maximum = match &result {
            Err(ModelError::Http {
                status: 400,
                message,
                ..
            }) if !self.lowered => stated_maximum(message),
            _ => None,
        };
        let Some(maximum) = maximum.filter(|m| *m < self.max_output_tokens) else {
            return result.map(Decoder::into_reply);
        };
        // Nothing reached `on_delta`: the request was refused before any reply.
        self.lowered = true;
        if let Some(notice) = self.transport.notice {
            notice(&format!(
                "`{}` allows at most {maximum} output tokens per reply, not {}: using {maximum} \
                 for the rest of the run (set `max_output_tokens` in [model] to choose)",
                self.transport.model, self.max_output_tokens
            ));
        }
        self.max_output_tokens = maximum;
        let post = self.post(request)?;
        self.transport
            .complete(&post, &EventDecoder::default, on_delta)
            .await
            .map(Decoder::into_reply)
    }
}

/// The maximum a refusal of `max_tokens` states: Anthropic's "max_tokens: 8192 > 4096, which
/// is the maximum allowed number of output tokens for claude-3-haiku-20240307".
fn stated_maximum(message: &str) -> Option<u32> {
    let (_, rest) = message.split_once("max_tokens: ")?;
    let (_, rest) = rest.split_once(" > ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = &rest[digits.len()..];
    if !after.starts_with(", which is the maximum") {
        return None;
    }
    digits.parse().ok().filter(|n| *n > 0)
}

/// Prompt-cache breakpoints on the latest user messages — with the tools and the system prompt
/// that makes 4, the most the API accepts. Two, not one: the previous request's mark is where
/// this request's cached prefix ends, and the API looks back only about 20 blocks for it.
const CACHED_USER_TURNS: usize = 2;

/// `{"type": "ephemeral"}`: cached for 5 minutes, refreshed by each read — a tool loop reads it
/// every turn.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The Messages request body, with the default output limit.
pub(super) fn body(model: &str, request: &Request<'_>) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in request.messages {
        let (role, blocks) = match message {
            Message::User(text) => ("user", text_block(text)),
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                // Thinking blocks go back first, in order, signatures untouched: the API checks
                // them before it accepts the tool results that follow.
                let mut blocks = reasoning.replay.clone();
                blocks.extend(text_block(text));
                blocks.extend(tool_calls.iter().map(|call| {
                    // The API wants an object; what the model sent may not even be JSON.
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
                }));
                ("assistant", blocks)
            }
            Message::ToolResult { call_id, content } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                let failed = serde_json::from_str::<Value>(content)
                    .is_ok_and(|v| v.get("error").is_some_and(|e| !e.is_null()));
                if failed {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        // Empty content is rejected; consecutive messages of one role become one.
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    // Cache the conversation up to the latest turns, so a tool loop is billed mostly as reads.
    for (_, blocks) in messages
        .iter_mut()
        .rev()
        .filter(|(role, _)| *role == "user")
        .take(CACHED_USER_TURNS)
    {
        if let Some(last) = blocks.last_mut() {
            last["cache_control"] = ephemeral();
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": DEFAULT_MAX_OUTPUT_TOKENS,
        "stream": true,
        "messages": messages,
    });
    if !request.system.is_empty() {
        body["system"] =
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = json!(tools);
    }
    body
}

/// A text block, or none for empty text (the API rejects empty text blocks).
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    ContentBlockStart {
        index: usize,
        /// Read as a [`Block`]; kept raw when it is one the agent does not run.
        content_block: Value,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    MessageStart {
        message: StartMessage,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        error: ErrorBody,
    },
    /// `content_block_stop`, `ping` and whatever comes next: nothing to do.
    #[serde(other)]
    Ignored,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    /// Other blocks (`server_tool_use`, `web_search_tool_result`, …): not shown, kept
    /// as they came to be sent back.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// Usage as `message_start` and `message_delta` carry it; the delta's counts are running
/// totals, so a field present later replaces the earlier one.
#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

impl WireUsage {
    fn update(&mut self, newer: WireUsage) {
        self.input_tokens = newer.input_tokens.or(self.input_tokens);
        self.output_tokens = newer.output_tokens.or(self.output_tokens);
        self.cache_read_input_tokens = newer
            .cache_read_input_tokens
            .or(self.cache_read_input_tokens);
        self.cache_creation_input_tokens = newer
            .cache_creation_input_tokens
            .or(self.cache_creation_input_tokens);
    }

    /// In the common shape: `input` counts cache reads and writes too (Anthropic's
    /// `input_tokens` does not).
    fn usage(self) -> Usage {
        let cache_read = self.cache_read_input_tokens.unwrap_or(0);
        let cache_write = self.cache_creation_input_tokens.unwrap_or(0);
        Usage {
            input: self
                .input_tokens
                .unwrap_or(0)
                .saturating_add(cache_read)
                .saturating_add(cache_write),
            output: self.output_tokens.unwrap_or(0),
            cache_read,
            cache_write,
        }
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

/// A `tool_use` block being streamed.
struct ToolUse {
    id: String,
    name: String,
    /// The `input` of `content_block_start`, used when no `input_json_delta` follows.
    input: Value,
    partial_json: String,
}

/// A thinking block being streamed, kept to be sent back as it came.
enum Thought {
    Thinking { thinking: String, signature: String },
    Redacted { data: String },
}

/// A block the agent does not run (a server tool's call or result, …), kept as it came, with
/// the input a `server_tool_use` streams.
struct Kept {
    block: Value,
    partial_json: String,
}

impl Kept {
    /// The block as it goes back: a streamed input replaces the empty one of its start.
    fn into_block(self) -> Value {
        let mut block = self.block;
        if !self.partial_json.trim().is_empty()
            && let Ok(input) = serde_json::from_str::<Value>(&self.partial_json)
        {
            block["input"] = input;
        }
        block
    }
}

/// Accumulates events: text in order, tool-use, thinking and other blocks by index.
#[derive(Default)]
pub(super) struct EventDecoder {
    said: Said,
    tools: BTreeMap<usize, ToolUse>,
    thoughts: BTreeMap<usize, Thought>,
    /// Server tools' calls and results and any other block type, to send back in order.
    kept: BTreeMap<usize, Kept>,
    stop: Option<StopReason>,
    usage: Option<WireUsage>,
}

impl EventDecoder {
    /// A content block opens: text and thinking stream on, tool calls and signed or redacted
    /// thinking are kept by index.
    fn start_block(&mut self, index: usize, raw: Value, on_delta: &mut dyn FnMut(Delta<'_>)) {
        let block = serde_json::from_value::<Block>(raw.clone()).unwrap_or(Block::Other);
        match block {
            Block::Text { text } => self.said.push_text(&text, on_delta),
            Block::Thinking {
                thinking,
                signature,
            } => {
                self.said.push_reasoning(&thinking, on_delta);
                self.thoughts.insert(
                    index,
                    Thought::Thinking {
                        thinking,
                        signature,
                    },
                );
            }
            Block::RedactedThinking { data } => {
                self.thoughts.insert(index, Thought::Redacted { data });
            }
            Block::ToolUse { id, name, input } => {
                self.tools.insert(
                    index,
                    ToolUse {
                        id,
                        name,
                        input,
                        partial_json: String::new(),
                    },
                );
            }
            Block::Other => {
                self.kept.insert(
                    index,
                    Kept {
                        block: raw,
                        partial_json: String::new(),
                    },
                );
            }
        }
    }
}

impl Decoder for EventDecoder {
    fn on_event(
        &mut self,
        event: &Event,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<bool, ModelError> {
        let parsed: StreamEvent =
            serde_json::from_str(&event.data).map_err(|e| ModelError::Stream {
                message: format!(
                    "malformed `{}` event from the server ({e}): {}",
                    event.event,
                    snippet(&event.data)
                ),
            })?;
        match parsed {
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block, on_delta),
            StreamEvent::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => self.said.push_text(&text, on_delta),
                BlockDelta::ThinkingDelta { thinking } => {
                    self.said.push_reasoning(&thinking, on_delta);
                    if let Some(Thought::Thinking { thinking: kept, .. }) =
                        self.thoughts.get_mut(&index)
                    {
                        kept.push_str(&thinking);
                    }
                }
                BlockDelta::SignatureDelta { signature } => {
                    if let Some(Thought::Thinking {
                        signature: kept, ..
                    }) = self.thoughts.get_mut(&index)
                    {
                        kept.push_str(&signature);
                    }
                }
                BlockDelta::InputJsonDelta { partial_json } => match self.tools.get_mut(&index) {
                    Some(tool) => tool.partial_json.push_str(&partial_json),
                    // A server tool's input (`server_tool_use`), streamed like a call's.
                    None if self.kept.contains_key(&index) => {
                        if let Some(kept) = self.kept.get_mut(&index) {
                            kept.partial_json.push_str(&partial_json);
                        }
                    }
                    None => {
                        return Err(ModelError::Stream {
                            message: format!("tool input for block {index}, which never started"),
                        });
                    }
                },
                BlockDelta::Other => {}
            },
            StreamEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage.get_or_insert_default().update(usage);
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(usage) = usage {
                    self.usage.get_or_insert_default().update(usage);
                }
                if let Some(reason) = delta.stop_reason {
                    self.stop = Some(match reason.as_str() {
                        "end_turn" | "stop_sequence" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
                        "refusal" => StopReason::ContentFilter,
                        _ => StopReason::Other,
                    });
                }
            }
            StreamEvent::MessageStop => return Ok(true),
            StreamEvent::Error { error } => {
                let raw = json!({"error": {"type": error.kind, "message": error.message}});
                return Err(reported(
                    format!("`{}`: {}", error.kind, error.message),
                    &raw,
                ));
            }
            StreamEvent::Ignored => {}
        }
        Ok(false)
    }

    fn may_end(&self) -> bool {
        // `message_delta` carried the stop reason: only `message_stop` itself is missing.
        self.stop.is_some()
    }

    fn into_reply(self) -> Reply {
        let tool_calls: Vec<ToolCall> = self
            .tools
            .into_values()
            .map(|tool| {
                let arguments = if !tool.partial_json.trim().is_empty() {
                    tool.partial_json
                } else if tool.input.is_object() {
                    tool.input.to_string()
                } else {
                    "{}".to_owned()
                };
                ToolCall {
                    id: tool.id,
                    name: tool.name,
                    arguments,
                    extra: None,
                }
            })
            .collect();
        let stop = match self.stop.unwrap_or(StopReason::EndTurn) {
            StopReason::EndTurn if !tool_calls.is_empty() => StopReason::ToolUse,
            other => other,
        };
        let mut replay: BTreeMap<usize, Value> = self
            .thoughts
            .into_iter()
            .map(|(index, thought)| {
                let block = match thought {
                    Thought::Thinking {
                        thinking,
                        signature,
                    } => json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                    Thought::Redacted { data } => {
                        json!({"type": "redacted_thinking", "data": data})
                    }
                };
                (index, block)
            })
            .collect();
        replay.extend(
            self.kept
                .into_iter()
                .map(|(index, kept)| (index, kept.into_block())),
        );
        let replay = replay.into_values().collect();
        Reply {
            text: self.said.text,
            tool_calls,
            stop,
            reasoning: Reasoning {
                text: self.said.reasoning,
                replay,
            },
            usage: self.usage.map(WireUsage::usage),
        }
    }
}

impl super::Tunable for Anthropic {
    fn transport_mut(&mut self) -> Option<&mut Transport> {
        Some(&mut self.transport)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sse::replay;
    use pretty_assertions::assert_eq;

    /// Recorded from an Anthropic stream: text, a tool call with split input, a ping.
    const TOOL_USE_SSE: &str = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: ping\n\
data: {\"type\": \"ping\"}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Listing…\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"shell\",\"input\":{}}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"ls\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" -la\\\"}\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":1}\n\n\
event: message_delta\n\
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":30}}\n\n\
event: message_stop\n\
data: {\"type\":\"message_stop\"}\n\n";

    #[tokio::test]
    async fn every_split_of_a_recorded_stream_decodes_the_same() {
        let expected = Reply {
            text: "Listing…".into(),
            tool_calls: vec![ToolCall {
                id: "toolu_1".into(),
                name: "shell".into(),
                arguments: r#"{"command": "ls -la"}"#.into(),
                extra: None,
            }],
            stop: StopReason::ToolUse,
            reasoning: Reasoning::default(),
            usage: Some(Usage {
                input: 10,
                output: 30,
                cache_read: 0,
                cache_write: 0,
            }),
        };
        replay::every_split_gives::<EventDecoder>(TOOL_USE_SSE, &expected).await;
    }

    #[test]
    fn the_stated_maximum_is_read_only_from_its_sentence() {
        assert_eq!(
            stated_maximum(
                "max_tokens: 1000000 > 64000, which is the maximum allowed number of output \
                 tokens for claude-sonnet-4-20250514"
            ),
            Some(64000)
        );
        for message in [
            "max_tokens: 8192 > 4096",
            "prompt is too long: 210000 tokens > 200000 maximum",
            "max_tokens: 8192 > 0, which is the maximum allowed",
            "max_tokens: 8192 > 99999999999, which is the maximum allowed",
        ] {
            assert_eq!(stated_maximum(message), None, "{message}");
        }
    }

    #[tokio::test]
    async fn a_malformed_event_is_named() {
        let stream =
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\n\n";
        let (result, _) = replay::two_chunks::<EventDecoder>(stream, 3).await;
        let message = result.unwrap_err().to_string();
        assert!(
            message.contains("malformed `content_block_delta` event"),
            "{message}"
        );
    }

    #[test]
    fn tool_input_that_is_not_an_object_is_sent_as_empty() {
        let call = |arguments: &str| ToolCall {
            id: "t".into(),
            name: "shell".into(),
            arguments: arguments.into(),
            extra: None,
        };
        let messages = [Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("[1]"), call("")],
            reasoning: Reasoning::default(),
        }];
        let body = body(
            "m",
            &Request {
                system: "",
                messages: &messages,
                tools: &[],
            },
        );
        assert_eq!(body["messages"][0]["content"][0]["input"], json!({}));
        assert_eq!(body["messages"][0]["content"][1]["input"], json!({}));
        assert!(body.get("system").is_none() && body.get("tools").is_none());
    }
}
