//! OpenAI Chat Completions with streaming tool calls — OpenAI itself and every compatible
//! server (Ollama, vLLM, LM Studio, `llama.cpp`, OpenRouter, Gemini, DeepSeek, Mistral). Owns
//! the request body and the decoding of `chat.completion.chunk` events, with the quirks of
//! real servers: calls sharing an `index` (Ollama) or having none (Gemini), arguments sent as
//! an object (`llama.cpp`), content as a list of parts (Mistral), reasoning in
//! `reasoning_content` or `reasoning` (sent back where it came, DeepSeek needs it), a call's
//! `extra_content` (Gemini's `thought_signature`) sent back with it, errors inside the
//! stream, token usage asked for with `stream_options.include_usage` (and asked no more from a
//! server that refuses the option). The HTTP side is `sse`'s.

use std::fmt;

use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use super::embedded::{Embedded, Piece, parse_call};
use super::llama_cpp;
use super::sse::{Decoder, Event, Said, error_message, is_error_object, reported, snippet};
use super::transport::{Post, Transport, key_header};
use super::{
    Delta, Message, Model, ModelError, ProviderConfig, ProviderKind, Reasoning, Reply, Request,
    StopReason, ToolCall, Usage,
};

/// An OpenAI-compatible chat model.
pub struct OpenAi {
    transport: Transport,
    provider: ProviderKind,
    api_key: Option<String>,
    max_output_tokens: Option<u32>,
    /// The limit is agent's default for a server that is no known cloud API (not the
    /// person's): dropped for the rest of the run when the server refuses it.
    default_limit: bool,
    /// Whether to send `stream_options: {"include_usage": true}`: true until the server
    /// refuses it (Mistral answers 422, older Groq and some gateways 400).
    stream_usage: bool,
    /// The field that limits the reply (see [`limit_field`]), switched for the rest of the
    /// run when the server asks for the other one.
    limit_field: &'static str,
    /// Whether to ask for a stream: true until a `llama.cpp` server says it cannot stream
    /// tool calls; then whole replies for the rest of the run.
    stream: bool,
    /// Notices already given (each is said once a run).
    told: Told,
    /// Calls read from the text so far this run (their ids are numbered across the run).
    text_calls: usize,
    /// `api_key_header`: the header the key goes in bare, instead of `Authorization: Bearer`.
    key_header: Option<String>,
}

/// Notices said once a run.
#[derive(Debug, Default)]
struct Told {
    text_calls: bool,
    no_stream: bool,
    /// The limit field was switched (once a run).
    limit_field: bool,
    /// A `llama.cpp` server was asked whether it keeps the tools (once a run).
    tools_checked: bool,
    /// `/props` was asked before the first reply and did not say (not asked again).
    props_unanswered: bool,
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
        let transport = Transport::for_config(config, api_key.is_some(), "authorization")?;
        Ok(Self {
            transport,
            key_header: config.api_key_header.clone(),
            provider: config.provider,
            api_key,
            max_output_tokens: config
                .max_output_tokens
                .or_else(|| local_server(&config.base_url).then_some(LOCAL_OUTPUT_TOKENS)),
            default_limit: config.max_output_tokens.is_none(),
            stream_usage: true,
            limit_field: limit_field(&config.base_url),
            stream: true,
            told: Told::default(),
            text_calls: 0,
        })
    }

    /// The key's header, when there is a key.
    fn key_headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.api_key {
            let (name, value) = match &self.key_header {
                // Azure's classic endpoints (and gateways like it) take the key bare.
                Some(name) => key_header(&self.transport.server, name, key)?,
                None => key_header(
                    &self.transport.server,
                    "authorization",
                    &format!("Bearer {key}"),
                )?,
            };
            headers.insert(name, value);
        }
        Ok(headers)
    }

    /// The ids of the models the server serves (`GET /models`), when it says.
    pub async fn served_models(&self) -> Option<Vec<String>> {
        let url = format!("{}/models", self.transport.server);
        let list = self
            .transport
            .get_json(&url, self.key_headers().ok()?)
            .await?;
        let data = list.get("data").and_then(Value::as_array)?;
        Some(
            data.iter()
                .filter_map(|model| model.get("id").and_then(Value::as_str))
                .map(str::to_owned)
                .collect(),
        )
    }

    fn post(&self, request: &Request<'_>) -> Result<Post, ModelError> {
        let headers = self.key_headers()?;
        let mut body = body(&self.transport.model, request);
        if let Some(limit) = self.max_output_tokens {
            body[self.limit_field] = json!(limit);
        }
        if !self.stream {
            body["stream"] = json!(false);
        } else if self.stream_usage {
            // The official SDK leaves this to the caller; without it the stream carries no usage.
            body["stream_options"] = json!({"include_usage": true});
        }
        Ok(Post {
            url: format!("{}/chat/completions", self.transport.server),
            headers,
            body,
        })
    }
}

/// Output limit per reply for a server that is no known cloud API, unless `max_output_tokens`
/// says otherwise — long enough for any answer or file a coding turn writes, short enough
/// that a small local model cannot ramble for minutes unasked.
const LOCAL_OUTPUT_TOKENS: u32 = 8192;

/// Whether `server` is no known cloud API (a local or self-hosted server: llama.cpp, vLLM,
/// LM Studio, Ollama …), whose own output limit may be none at all.
fn local_server(server: &str) -> bool {
    const CLOUDS: [&str; 12] = [
        "api.openai.com",
        "openai.azure.com",
        "openrouter.ai",
        "api.deepseek.com",
        "generativelanguage.googleapis.com",
        "api.mistral.ai",
        "api.groq.com",
        "api.together.xyz",
        "api.fireworks.ai",
        "api.x.ai",
        "api.perplexity.ai",
        "api.cerebras.ai",
    ];
    let host = host(server);
    !CLOUDS
        .iter()
        .any(|cloud| host == *cloud || host.ends_with(&format!(".{cloud}")))
}

/// The host of a server's URL, in lower case (empty when it has none).
fn host(server: &str) -> String {
    reqwest::Url::parse(server)
        .ok()
        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_default()
}

/// The field that limits the reply: OpenAI (and Azure OpenAI) deprecated `max_tokens` for
/// `max_completion_tokens`, which their reasoning models require; every compatible server
/// (Ollama, vLLM, `llama.cpp`, LM Studio, Gemini, DeepSeek, Mistral, OpenRouter) reads
/// `max_tokens`, and not all of them the newer name.
fn limit_field(server: &str) -> &'static str {
    let host = host(server);
    if host == "api.openai.com" || host.ends_with(".openai.azure.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

impl Model for OpenAi {
    fn describe(&self) -> String {
        format!("{}/{}", self.provider, self.transport.model)
    }

    fn output_limit(&self) -> Option<u32> {
        self.max_output_tokens
    }

    async fn complete(
        &mut self,
        request: &Request<'_>,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> Result<Reply, ModelError> {
        if !self.told.tools_checked
            && !request.tools.is_empty()
            && local_server(&self.transport.server)
        {
            // Before the first reply, so the warning is the first thing said: a server whose
            // `/props` answers tells whether its template keeps the tools. One that does not
            // answer is judged by its first reply (below).
            let props = self.props().await;
            if props.as_ref().is_some_and(|props| {
                props
                    .pointer("/chat_template_caps/supports_tool_calls")
                    .is_some()
            }) {
                self.told.tools_checked = true;
                self.warn_dropped(props.as_ref(), None, request, on_delta);
            } else {
                self.told.props_unanswered = true;
            }
        }
        let offered: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
        let text_calls_before = self.text_calls;
        let fresh = || ChunkDecoder {
            offered: offered.clone(),
            text_calls_before,
            ..ChunkDecoder::default()
        };
        // Each fallback changes the request once; nothing reached `on_delta` before a refusal.
        let mut fallbacks = 0;
        let decoder = loop {
            let post = self.post(request)?;
            match self.transport.complete(&post, &fresh, on_delta).await {
                Ok(decoder) => break decoder,
                Err(error) if fallbacks < FALLBACKS && self.fall_back(&error) => fallbacks += 1,
                Err(error) => return Err(error),
            }
        };
        self.text_calls += decoder.text_calls;
        if decoder.llama_cpp && !self.told.tools_checked && !request.tools.is_empty() {
            self.told.tools_checked = true;
            let prompt_tokens = decoder.usage.map(|usage| usage.input);
            self.check_tools(request, prompt_tokens, on_delta).await;
        }
        if decoder.text_calls > 0 && !self.told.text_calls {
            self.told.text_calls = true;
            self.notice(
                "the server sends tool calls as text (`<tool_call>…</tool_call>` in the answer): \
                 they are read from there and decided like any other call; a server-side tool \
                 parser (llama.cpp: `--jinja` with a tool-capable `--chat-template-file`; vLLM: \
                 `--tool-call-parser hermes`; Ollama: the model's template) does it better",
            );
        }
        Ok(decoder.into_reply())
    }
}

/// Fallbacks per turn at most — one of each kind.
const FALLBACKS: usize = 3;

impl OpenAi {
    /// Changes the request for the rest of the run when `error` is a refusal of something the
    /// server does without (`stream_options`, the limit field's name, streaming with tools);
    /// `false` when it is none of those.
    fn fall_back(&mut self, error: &ModelError) -> bool {
        // vLLM refuses a request whose prompt plus `max_tokens` exceeds its context: agent's
        // default limit goes, the server's own applies.
        if self.default_limit && self.max_output_tokens.is_some() && counts_the_limit(error) {
            self.default_limit = false;
            self.max_output_tokens = None;
            return true;
        }
        if self.stream_usage && self.stream && refuses_stream_options(error) {
            self.stream_usage = false;
            return true;
        }
        if self.max_output_tokens.is_some()
            && !self.told.limit_field
            && let Some(other) = other_limit_field(error, self.limit_field)
        {
            // Once a run: a server refusing both names gets the error, not a ping-pong.
            self.told.limit_field = true;
            self.limit_field = other;
            return true;
        }
        if self.stream && cannot_stream_tools(error) {
            self.stream = false;
            if !self.told.no_stream {
                self.told.no_stream = true;
                self.notice(
                    "this server cannot stream replies that may call tools (`Cannot use tools \
                     with stream`): replies come whole for the rest of the run",
                );
            }
            return true;
        }
        false
    }

    /// Once a run, on a `llama.cpp` server: warns when it leaves the tools out of the prompt
    /// (its `/props`, or else the prompt tokens it counted, say so).
    async fn check_tools(
        &self,
        request: &Request<'_>,
        prompt_tokens: Option<u64>,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) {
        let props = if self.told.props_unanswered {
            None
        } else {
            self.props().await
        };
        self.warn_dropped(props.as_ref(), prompt_tokens, request, on_delta);
    }

    /// The server's `/props` (`llama.cpp`), if it answers with JSON.
    async fn props(&self) -> Option<serde_json::Value> {
        let url = llama_cpp::props_url(&self.transport.server);
        match self.key_headers() {
            Ok(headers) => self.transport.get_json(&url, headers).await,
            Err(_) => None,
        }
    }

    /// Says so when `props` or the prompt tokens show the tools left out of the prompt.
    fn warn_dropped(
        &self,
        props: Option<&serde_json::Value>,
        prompt_tokens: Option<u64>,
        request: &Request<'_>,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) {
        if let Some(message) = llama_cpp::dropped_tools(props, prompt_tokens, request.tools) {
            self.notice(&format!("warning: {message}"));
            on_delta(Delta::Warning {
                code: "tools_dropped",
                message: &message,
            });
        }
    }

    fn notice(&self, message: &str) {
        if let Some(notice) = self.transport.notice {
            notice(message);
        }
    }
}

/// A context overflow that counts the output limit in (vLLM: "you requested 8292 tokens (100
/// in the messages, 8192 in the completion)", "'max_tokens' … is too large").
fn counts_the_limit(error: &ModelError) -> bool {
    let ModelError::ContextTooLong { message, .. } = error else {
        return false;
    };
    let lower = message.to_ascii_lowercase();
    ["in the completion", "max_tokens", "max_completion_tokens"]
        .iter()
        .any(|sign| lower.contains(sign))
}

/// A 400/422 that names `stream_options` (Mistral's `extra_forbidden`, Groq's "property
/// 'stream_options' is unsupported", gateways' "Unknown parameter").
fn refuses_stream_options(error: &ModelError) -> bool {
    match error {
        ModelError::Http {
            status: 400 | 422,
            message,
            ..
        } => message.contains("stream_options") || message.contains("include_usage"),
        _ => false,
    }
}

/// The other name of the output limit, when a 400/422 refuses the one sent: OpenAI's
/// "Unsupported parameter: 'max_tokens' is not supported with this model. Use
/// 'max_completion_tokens' instead." (and servers that know only `max_tokens` refusing
/// `max_completion_tokens`).
fn other_limit_field(error: &ModelError, sent: &'static str) -> Option<&'static str> {
    let ModelError::Http {
        status: 400 | 422,
        message,
        ..
    } = error
    else {
        return None;
    };
    let other = if sent == "max_tokens" {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    let names = |field: &str| {
        message.match_indices(field).any(|(at, _)| {
            let before = message[..at].chars().next_back();
            let after = message[at + field.len()..].chars().next();
            let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            !part(before) && !part(after)
        })
    };
    names(sent).then_some(other)
}

/// `llama.cpp` servers before streamed tool calls (May 2025) answer HTTP 500
/// `{"error":{"code":500,"message":"Cannot use tools with stream","type":"server_error"}}`.
fn cannot_stream_tools(error: &ModelError) -> bool {
    matches!(error, ModelError::ServerSetup { message, .. } if message.contains("Cannot use tools with stream"))
}

/// The Chat Completions request body (no output limit: the caller adds it).
pub(super) fn body(model: &str, request: &Request<'_>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in request.messages {
        messages.push(match message {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant {
                text, tool_calls, ..
            } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        // Arguments that are not JSON are never sent back: servers that read
                        // them (llama.cpp) refuse the whole request, every time.
                        let arguments = if super::repair::arguments_parse(&call.arguments) {
                            call.arguments.as_str()
                        } else {
                            super::repair::EMPTY_ARGUMENTS
                        };
                        let mut sent = json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": arguments},
                        });
                        if let Some(extra) = &call.extra {
                            sent["extra_content"] = extra.clone();
                        }
                        sent
                    })
                    .collect();
                let content = if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                let mut sent =
                    json!({"role": "assistant", "content": content, "tool_calls": calls});
                // DeepSeek's thinking mode refuses the next request without the reasoning of
                // a turn that called tools: send back the fields as they came.
                for fields in &reasoning.replay {
                    if let (Some(sent), Some(fields)) = (sent.as_object_mut(), fields.as_object()) {
                        sent.extend(fields.clone());
                    }
                }
                sent
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
    usage: Option<Usage>,
    /// The tools offered: a call written as text counts only when it names one.
    offered: Vec<String>,
    /// Reasoning and calls written into the content.
    embedded: Embedded,
    /// Calls read from the text.
    text_calls: usize,
    /// Calls read from the text in earlier turns of the run.
    text_calls_before: usize,
    /// The server showed itself as `llama.cpp` (its `Server` header, `timings` in a chunk).
    llama_cpp: bool,
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

impl super::Tunable for OpenAi {
    fn transport_mut(&mut self) -> Option<&mut Transport> {
        Some(&mut self.transport)
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

    #[test]
    fn the_official_servers_get_max_completion_tokens_and_the_others_max_tokens() {
        for (server, field) in [
            ("https://api.openai.com/v1", "max_completion_tokens"),
            (
                "https://my-team.openai.azure.com/openai/v1",
                "max_completion_tokens",
            ),
            ("http://127.0.0.1:11434/v1", "max_tokens"),
            ("https://api.deepseek.com", "max_tokens"),
            (
                "https://generativelanguage.googleapis.com/v1beta/openai",
                "max_tokens",
            ),
            ("https://openrouter.ai/api/v1", "max_tokens"),
        ] {
            assert_eq!(limit_field(server), field, "{server}");
        }
    }

    #[test]
    fn a_refused_limit_field_switches_to_the_other_name_and_nothing_else_does() {
        let http = |status: u16, message: &str| ModelError::Http {
            status,
            server: String::new(),
            message: message.into(),
        };
        let openai = http(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use \
             'max_completion_tokens' instead.",
        );
        assert_eq!(
            other_limit_field(&openai, "max_tokens"),
            Some("max_completion_tokens")
        );
        let groq = http(400, "property 'max_completion_tokens' is unsupported");
        assert_eq!(
            other_limit_field(&groq, "max_completion_tokens"),
            Some("max_tokens")
        );
        // Naming only the other field, or a 500, or a field merely containing the name: no.
        assert_eq!(other_limit_field(&groq, "max_tokens"), None);
        assert_eq!(
            other_limit_field(&http(500, "max_tokens"), "max_tokens"),
            None
        );
        assert_eq!(
            other_limit_field(&http(400, "bad max_tokens_per_call"), "max_tokens"),
            None
        );
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
