//! The decoding of `chat.completion.chunk` events (and of a whole `chat.completion` from a
//! server that does not stream), with the quirks of real servers: calls sharing an `index`
//! (Ollama) or having none (Gemini), arguments sent as an object (`llama.cpp`), content as a
//! list of parts (Mistral), reasoning in `reasoning_content` or `reasoning` (remembered to be
//! sent back where it came, DeepSeek needs it), a call's `extra_content` (Gemini's
//! `thought_signature`), `<think>` and `<tool_call>` written into the content, errors inside
//! the stream, token usage (`usage`, Groq's `x_groq`).

use serde::Deserialize;
use serde_json::{Value, json};

use crate::model::embedded::{Embedded, Piece, parse_call};
use crate::model::llama_cpp;
use crate::model::sse::{Decoder, Event, Said, error_message, is_error_object, reported, snippet};
use crate::model::{Delta, ModelError, Reasoning, Reply, StopReason, ToolCall, Usage};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    /// On the last chunk with `include_usage` (`null` before); some servers send it anyway.
    #[serde(default)]
    usage: Option<WireUsage>,
    /// Groq: `{"id": …, "usage": {…}}` on the last chunk, in place of `usage`.
    #[serde(default)]
    x_groq: Option<XGroq>,
}

#[derive(Deserialize)]
struct XGroq {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<ChoiceDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct ChoiceDelta {
    /// A string, or a list of parts (`text`, `thinking`).
    #[serde(default)]
    content: Option<Value>,
    /// DeepSeek, vLLM, LM Studio, Qwen.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// OpenRouter, Ollama, newer vLLM, Groq.
    #[serde(default)]
    reasoning: Option<String>,
    /// OpenAI: the model's refusal, streamed in place of an answer.
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
    /// Provider data to return with the call (Gemini's `google.thought_signature`).
    #[serde(default)]
    extra_content: Option<Value>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    /// A string of JSON text, or (`llama.cpp`, MiniMax) the object itself.
    #[serde(default)]
    arguments: Option<Value>,
}

/// A tool call being assembled, with the `index` it came under.
struct PartialCall {
    index: Option<usize>,
    call: ToolCall,
}

/// Accumulates chunks: text and reasoning in order, tool calls by `id`, then `index`.
#[derive(Default)]
pub(super) struct ChunkDecoder {
    said: Said,
    /// The field the reasoning came in (`reasoning_content` or `reasoning`), to send it back.
    reasoning_field: Option<&'static str>,
    /// The model sent a `refusal` instead of an answer.
    refused: bool,
    calls: Vec<PartialCall>,
    finish: Option<StopReason>,
    /// Any chunk with a choice came: `[DONE]` alone is not an answer.
    answered: bool,
    /// The last usage the server reported (servers that repeat it send running totals).
    pub(super) usage: Option<Usage>,
    /// The tools offered: a call written as text counts only when it names one.
    offered: Vec<String>,
    /// Reasoning and calls written into the content.
    embedded: Embedded,
    /// Calls read from the text.
    pub(super) text_calls: usize,
    /// Calls read from the text in earlier turns of the run.
    text_calls_before: usize,
    /// The server showed itself as `llama.cpp` (its `Server` header, `timings` in a chunk).
    pub(super) llama_cpp: bool,
}

impl Decoder for ChunkDecoder {
    fn on_event(
        &mut self,
        event: &Event,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            if !self.answered {
                return Err(ModelError::Stream {
                    message: "the server sent `[DONE]` with no reply before it".into(),
                });
            }
            return Ok(true);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| ModelError::Stream {
            message: format!("malformed chunk from the server ({e}): {}", snippet(data)),
        })?;
        if is_error_object(&value) {
            return Err(reported(error_message(data), &value));
        }
        self.llama_cpp |= value.get("timings").is_some();
        let chunk: Chunk = serde_json::from_value(value).map_err(|e| ModelError::Stream {
            message: format!("malformed chunk from the server ({e}): {}", snippet(data)),
        })?;
        if let Some(usage) = chunk
            .usage
            .or_else(|| chunk.x_groq.and_then(|groq| groq.usage))
        {
            self.usage = Some(Usage {
                input: usage.prompt_tokens,
                output: usage.completion_tokens,
                cache_read: usage
                    .prompt_tokens_details
                    .and_then(|details| details.cached_tokens)
                    .unwrap_or(0),
                cache_write: 0,
            });
        }
        for choice in chunk.choices {
            self.answered = true;
            let delta = choice.delta.unwrap_or_default();
            // Some servers send both names for the same text: one is enough.
            let reasoning = match (delta.reasoning_content, delta.reasoning) {
                (Some(text), _) => Some(("reasoning_content", text)),
                (None, Some(text)) => Some(("reasoning", text)),
                (None, None) => None,
            };
            if let Some((field, text)) = reasoning {
                self.reasoning_field.get_or_insert(field);
                self.said.push_reasoning(&text, on_delta);
            }
            match delta.content {
                Some(Value::String(text)) => self.push_content(&text, on_delta),
                Some(Value::Array(parts)) => {
                    for part in &parts {
                        self.push_part(part, on_delta);
                    }
                }
                _ => {}
            }
            // A refusal is shown like an answer, and the turn ends as a refusal (exit 1).
            if let Some(refusal) = delta.refusal.filter(|r| !r.is_empty()) {
                self.said.push_text(&refusal, on_delta);
                self.refused = true;
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.add_call_delta(call);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(match reason.as_str() {
                    "stop" => StopReason::EndTurn,
                    "tool_calls" | "function_call" => StopReason::ToolUse,
                    "length" => StopReason::MaxTokens,
                    "content_filter" => StopReason::ContentFilter,
                    _ => StopReason::Other,
                });
            }
        }
        Ok(false)
    }

    fn may_end(&self) -> bool {
        // Some compatible servers close after `finish_reason` without `[DONE]`.
        self.finish.is_some()
    }

    fn on_server(&mut self, server: &str) {
        self.llama_cpp |= llama_cpp::is_server_header(server);
    }

    fn finish(&mut self, on_delta: &mut dyn FnMut(Delta<'_>)) {
        let mut pieces = Vec::new();
        self.embedded.finish(&mut |piece| pieces.push(piece));
        for piece in pieces {
            self.take_piece(piece, on_delta);
        }
    }

    /// A `chat.completion` object: each choice's `message` read as one delta.
    fn on_body(
        &mut self,
        body: &Value,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<bool, ModelError> {
        let Some(choices) = body
            .get("choices")
            .and_then(Value::as_array)
            .filter(|choices| choices.iter().any(|c| c.get("message").is_some()))
        else {
            return Ok(false);
        };
        let choices: Vec<Value> = choices
            .iter()
            .map(|choice| {
                json!({
                    "delta": choice.get("message").cloned().unwrap_or(Value::Null),
                    "finish_reason": choice.get("finish_reason").cloned().unwrap_or(Value::Null),
                })
            })
            .collect();
        let mut chunk = json!({"choices": choices});
        for field in ["usage", "x_groq"] {
            if let Some(value) = body.get(field) {
                chunk[field] = value.clone();
            }
        }
        let event = Event {
            event: String::new(),
            data: chunk.to_string(),
        };
        self.on_event(&event, on_delta)?;
        Ok(true)
    }

    fn into_reply(self) -> Reply {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(position, PartialCall { mut call, .. })| {
                if call.id.is_empty() {
                    call.id = format!("call_{position}");
                }
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
                }
                call
            })
            .collect();
        let stop = match self.finish.unwrap_or(StopReason::EndTurn) {
            StopReason::EndTurn | StopReason::Other if self.refused => StopReason::ContentFilter,
            // Ollama says "stop" even when it called tools.
            StopReason::EndTurn if !tool_calls.is_empty() => StopReason::ToolUse,
            other => other,
        };
        let replay = match self.reasoning_field {
            Some(field) => vec![json!({ field: self.said.reasoning.clone() })],
            // Reasoning that came in `<think>` goes back where it came, in the content: the
            // chat templates that read it (Qwen3's, in a tool loop) take it from there, the
            // others strip it.
            None if self.embedded.thought => vec![json!({
                "content": format!("<think>{}</think>\n\n{}", self.said.reasoning, self.said.text)
            })],
            None => Vec::new(),
        };
        Reply {
            text: self.said.text,
            tool_calls,
            stop,
            reasoning: Reasoning {
                text: self.said.reasoning,
                replay,
            },
            usage: self.usage,
        }
    }
}

impl ChunkDecoder {
    /// A decoder for one try of a turn: `offered` the tools offered, `text_calls_before` the
    /// calls read from the text in earlier turns of the run.
    pub(super) fn for_turn(offered: Vec<String>, text_calls_before: usize) -> Self {
        Self {
            offered,
            text_calls_before,
            ..Self::default()
        }
    }

    /// Answer text as the server sent it: `<think>` and `<tool_call>` read out of it.
    fn push_content(&mut self, text: &str, on_delta: &mut dyn FnMut(Delta<'_>)) {
        let mut pieces = Vec::new();
        self.embedded.push(text, &mut |piece| pieces.push(piece));
        for piece in pieces {
            self.take_piece(piece, on_delta);
        }
    }

    /// One sorted piece of the content: a call written as text becomes a call only for a tool
    /// offered, with object arguments; anything else is shown as the text it was.
    fn take_piece(&mut self, piece: Piece, on_delta: &mut dyn FnMut(Delta<'_>)) {
        match piece {
            Piece::Text(text) => self.said.push_text(&text, on_delta),
            Piece::Reasoning(text) => self.said.push_reasoning(&text, on_delta),
            Piece::Call(raw) => match parse_call(&raw, &self.offered) {
                Some((name, arguments)) => {
                    self.calls.push(PartialCall {
                        index: None,
                        call: ToolCall {
                            id: format!("text_call_{}", self.text_calls_before + self.text_calls),
                            name,
                            arguments,
                            extra: None,
                        },
                    });
                    self.text_calls += 1;
                }
                None => self
                    .said
                    .push_text(&format!("<tool_call>{raw}</tool_call>"), on_delta),
            },
        }
    }

    /// One part of a content list: `text` is answer text, `thinking` (a string, or a list of
    /// text parts as Mistral sends it) is reasoning, anything else is skipped.
    fn push_part(&mut self, part: &Value, on_delta: &mut dyn FnMut(Delta<'_>)) {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    self.push_content(text, on_delta);
                }
            }
            Some("thinking" | "reasoning") => {
                let inner = part.get("thinking").or_else(|| part.get("text"));
                match inner {
                    Some(Value::String(text)) => self.said.push_reasoning(text, on_delta),
                    Some(Value::Array(pieces)) => {
                        for piece in pieces {
                            if let Some(text) = piece.get("text").and_then(Value::as_str) {
                                self.said.push_reasoning(text, on_delta);
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// Adds one tool-call delta. A new `id` starts a new call even under an `index` already
    /// seen (Ollama numbers every call 0); a delta without `index` continues the call with its
    /// `id`, or else the last call, unless it names a tool while the last call is complete
    /// (proxies that send whole calls, one per chunk, with neither).
    fn add_call_delta(&mut self, delta: ToolCallDelta) {
        let id = delta.id.filter(|id| !id.is_empty());
        let name = delta
            .function
            .as_ref()
            .and_then(|f| f.name.clone())
            .filter(|n| !n.is_empty());
        let position = match (&id, delta.index) {
            (Some(id), _) if self.calls.iter().any(|c| c.call.id == *id) => {
                self.calls.iter().rposition(|c| c.call.id == *id)
            }
            (Some(_), index) => self
                .calls
                .iter()
                .rposition(|c| c.index == index && index.is_some() && c.call.id.is_empty()),
            (None, Some(index)) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(index))
                .filter(|&at| name.is_none() || !self.calls[at].is_complete()),
            (None, None) => self
                .calls
                .len()
                .checked_sub(1)
                .filter(|&at| name.is_none() || !self.calls[at].is_complete()),
        };
        let at = position.unwrap_or_else(|| {
            self.calls.push(PartialCall {
                index: delta.index,
                call: ToolCall::default(),
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[at].call;
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id;
        }
        if let Some(extra) = delta.extra_content.filter(|e| !e.is_null()) {
            call.extra = Some(extra);
        }
        if let Some(name) = name
            && call.name.is_empty()
        {
            call.name = name;
        }
        match delta.function.and_then(|f| f.arguments) {
            Some(Value::String(text)) => call.arguments.push_str(&text),
            Some(Value::Null) | None => {}
            Some(object) => call.arguments.push_str(&object.to_string()),
        }
    }
}

impl PartialCall {
    /// Named, with arguments that already parse: a delta naming a tool starts another call.
    fn is_complete(&self) -> bool {
        !self.call.name.is_empty()
            && serde_json::from_str::<Value>(&self.call.arguments).is_ok_and(|v| v.is_object())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sse::replay;
    use pretty_assertions::assert_eq;

    /// Recorded from an OpenAI stream: text, then two tool calls, CRLF line ends.
    const TOOL_CALLS_SSE: &str = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Sur\"},\"finish_reason\":null}]}\r\n\r\n\
data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"e — ok\"},\"finish_reason\":null}]}\r\n\r\n\
: keep-alive comment\r\n\r\n\
data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"shell\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\r\n\r\n\
data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"command\\\":\"}}]},\"finish_reason\":null}]}\r\n\r\n\
data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]},\"finish_reason\":null}]}\r\n\r\n\
data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"shell\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\r\n\r\n\
data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n\
data: [DONE]\r\n\r\n";

    #[tokio::test]
    async fn every_split_of_a_recorded_stream_decodes_the_same() {
        let expected = Reply {
            text: "Sure — ok".into(),
            tool_calls: vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "shell".into(),
                    arguments: r#"{"command":"ls"}"#.into(),
                    extra: None,
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "shell".into(),
                    arguments: "{}".into(),
                    extra: None,
                },
            ],
            stop: StopReason::ToolUse,
            reasoning: Reasoning::default(),
            usage: None,
        };
        replay::every_split_gives::<ChunkDecoder>(TOOL_CALLS_SSE, &expected).await;
    }

    #[tokio::test]
    async fn an_unfinished_stream_is_an_error() {
        let cut = &TOOL_CALLS_SSE[..TOOL_CALLS_SSE
            .find("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},")
            .unwrap()];
        let (result, text) = replay::two_chunks::<ChunkDecoder>(cut, 10).await;
        assert_eq!(text, "Sure — ok");
        assert_eq!(
            result.unwrap_err().to_string(),
            "the model's reply stream failed: the stream ended before the reply was complete: try again"
        );
    }
}
