//! OpenAI Chat Completions with streaming tool calls — OpenAI itself and every compatible
//! server (Ollama, vLLM, LM Studio, `llama.cpp`, OpenRouter). Owns the request body and the
//! decoding of `chat.completion.chunk` events; the HTTP side is `sse`'s.

use std::collections::BTreeMap;
use std::fmt;

use eventsource_stream::Event;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use super::sse::{Decoder, Post, Transport, error_message, snippet};
use super::{
    Message, Model, ModelError, ProviderConfig, ProviderKind, Reply, Request, StopReason, ToolCall,
};

/// An OpenAI-compatible chat model.
pub struct OpenAi {
    transport: Transport,
    provider: ProviderKind,
    api_key: Option<String>,
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("provider", &self.provider)
            .field("server", &self.transport.server)
            .field("model", &self.transport.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl OpenAi {
    /// A model at `config.base_url`. The official OpenAI URL needs a key; any other server
    /// may do without (no `Authorization` header is sent then).
    ///
    /// # Errors
    ///
    /// [`ModelError::MissingKey`] when the official server gets no key, and
    /// [`ModelError::BadUrl`] for a base URL that is not http(s).
    pub fn new(config: &ProviderConfig) -> Result<Self, ModelError> {
        let api_key = config.api_key.clone().filter(|key| !key.trim().is_empty());
        let official =
            config.base_url.trim_end_matches('/') == ProviderKind::OpenAi.default_base_url();
        if api_key.is_none() && config.provider == ProviderKind::OpenAi && official {
            return Err(ModelError::MissingKey {
                key_env: config.api_key_env.clone(),
            });
        }
        Ok(Self {
            transport: Transport::new(&config.base_url, &config.model, &config.api_key_env)?,
            provider: config.provider,
            api_key,
        })
    }

    super::sse::transport_builders!();

    fn post(&self, request: &Request<'_>) -> Result<Post, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                ModelError::BadUrl {
                    url: self.transport.server.clone(),
                    message: "the API key contains characters not allowed in a header".into(),
                }
            })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(Post {
            url: format!("{}/chat/completions", self.transport.server),
            headers,
            body: body(&self.transport.model, request),
        })
    }
}

impl Model for OpenAi {
    fn describe(&self) -> String {
        format!("{}/{}", self.provider, self.transport.model)
    }

    async fn complete(
        &mut self,
        request: &Request<'_>,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Reply, ModelError> {
        let post = self.post(request)?;
        self.transport
            .complete::<ChunkDecoder>(&post, on_text)
            .await
    }
}

/// The Chat Completions request body.
pub(super) fn body(model: &str, request: &Request<'_>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in request.messages {
        messages.push(match message {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, tool_calls } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
                let content = if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            Message::ToolResult { call_id, content } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = json!({"model": model, "stream": true, "messages": messages});
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        body["tools"] = json!(tools);
    }
    body
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
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
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// Accumulates chunks: text in order, tool calls by `index`.
#[derive(Default)]
pub(super) struct ChunkDecoder {
    text: String,
    calls: BTreeMap<usize, ToolCall>,
    finish: Option<StopReason>,
}

impl Decoder for ChunkDecoder {
    fn on_event(
        &mut self,
        event: &Event,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| ModelError::Stream {
            message: format!("malformed chunk from the server ({e}): {}", snippet(data)),
        })?;
        if let Some(error) = chunk.error {
            return Err(ModelError::Stream {
                message: format!(
                    "the server reported an error: {}",
                    error_message(&json!({"error": error}).to_string())
                ),
            });
        }
        for choice in chunk.choices {
            let delta = choice.delta.unwrap_or_default();
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                on_text(&text);
                self.text.push_str(&text);
            }
            for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                self.add_call_delta(call.index.unwrap_or(position), call);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(match reason.as_str() {
                    "stop" => StopReason::EndTurn,
                    "tool_calls" | "function_call" => StopReason::ToolUse,
                    "length" => StopReason::MaxTokens,
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

    fn into_reply(self) -> Reply {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .map(|(index, mut call)| {
                if call.id.is_empty() {
                    call.id = format!("call_{index}");
                }
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
                }
                call
            })
            .collect();
        let stop = match self.finish.unwrap_or(StopReason::EndTurn) {
            // Ollama says "stop" even when it called tools.
            StopReason::EndTurn if !tool_calls.is_empty() => StopReason::ToolUse,
            other => other,
        };
        Reply {
            text: self.text,
            tool_calls,
            stop,
        }
    }
}

impl ChunkDecoder {
    fn add_call_delta(&mut self, index: usize, delta: ToolCallDelta) {
        let call = self.calls.entry(index).or_insert_with(|| ToolCall {
            id: String::new(),
            name: String::new(),
            arguments: String::new(),
        });
        if let Some(id) = delta.id.filter(|id| !id.is_empty())
            && call.id.is_empty()
        {
            call.id = id;
        }
        let Some(function) = delta.function else {
            return;
        };
        if let Some(name) = function.name.filter(|n| !n.is_empty())
            && call.name.is_empty()
        {
            call.name = name;
        }
        if let Some(arguments) = function.arguments {
            call.arguments.push_str(&arguments);
        }
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
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "shell".into(),
                    arguments: "{}".into(),
                },
            ],
            stop: StopReason::ToolUse,
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
