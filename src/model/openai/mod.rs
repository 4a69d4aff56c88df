//! OpenAI Chat Completions with streaming tool calls — OpenAI itself and every compatible
//! server (Ollama, vLLM, LM Studio, `llama.cpp`, OpenRouter, Gemini, DeepSeek, Mistral): the
//! model itself, what it remembers across a run (the fallbacks taken, the notices given) and
//! how one turn goes. The request body is `request`'s, the decoding of `chat.completion.chunk`
//! events `stream`'s, the reading of a refusal that a changed request may cure `fallback`'s.
//! The HTTP side is `transport`'s and `sse`'s.

mod fallback;
mod request;
mod stream;

use std::fmt;

use reqwest::header::HeaderMap;
use serde_json::json;

use super::llama_cpp;
use super::sse::Decoder;
use super::transport::{Post, Transport, key_header};
use super::{Delta, Model, ModelError, ProviderConfig, ProviderKind, Reply, Request};
use fallback::{cannot_stream_tools, counts_the_limit, other_limit_field, refuses_stream_options};
use request::{LOCAL_OUTPUT_TOKENS, body, limit_field, local_server};
use stream::ChunkDecoder;

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
        super::transport::model_ids(&list)
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
        let fresh = || ChunkDecoder::for_turn(offered.clone(), text_calls_before);
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

impl super::Tunable for OpenAi {
    fn transport_mut(&mut self) -> Option<&mut Transport> {
        Some(&mut self.transport)
    }
}
