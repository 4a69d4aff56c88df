//! The decoding of the Messages stream's typed events (`message_start` … `message_stop`):
//! text, tool-use, thinking and signature deltas, server tools' blocks kept to be sent back,
//! token usage from `message_start` and `message_delta`, errors inside the stream.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::model::sse::{Decoder, Event, Said, reported, snippet};
use crate::model::{Delta, ModelError, Reasoning, Reply, StopReason, ToolCall, Usage};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sse::replay;

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
}
