//! Anthropic Messages with streaming tool use: the model itself, its request (headers, URL,
//! output limit) and how one turn goes, the limit lowered once to the model's stated maximum
//! when the API refuses it. The request body is `request`'s, the decoding of the typed events
//! `stream`'s. The HTTP side is `transport`'s and `sse`'s.

mod request;
mod stream;

use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::json;

use super::sse::Decoder;
use super::transport::{Post, Transport, key_header};
use super::{Delta, Model, ModelError, ProviderConfig, ProviderKind, Reply, Request};
pub use request::DEFAULT_MAX_OUTPUT_TOKENS;
use request::body;
use stream::EventDecoder;

/// The API version this module speaks — the only stable one, and what the block shapes of
/// `request` and the event shapes of `stream` follow.
const API_VERSION: &str = "2023-06-01";

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

    /// The API version and the key, as every request carries them.
    fn headers(&self) -> Result<HeaderMap, ModelError> {
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
        Ok(headers)
    }

    /// The URL of `/v1/{path}`, from a base URL with or without the version segment.
    fn endpoint(&self, path: &str) -> String {
        let server = &self.transport.server;
        if server.ends_with("/v1") {
            format!("{server}/{path}")
        } else {
            format!("{server}/v1/{path}")
        }
    }

    /// The ids of the models the API offers (`GET /v1/models`, its first 1000), when it says.
    pub async fn served_models(&self) -> Option<Vec<String>> {
        let url = self.endpoint("models?limit=1000");
        let list = self.transport.get_json(&url, self.headers().ok()?).await?;
        super::transport::model_ids(&list)
    }

    fn post(&self, request: &Request<'_>) -> Result<Post, ModelError> {
        let headers = self.headers()?;
        let url = self.endpoint("messages");
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

impl super::Tunable for Anthropic {
    fn transport_mut(&mut self) -> Option<&mut Transport> {
        Some(&mut self.transport)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
}
