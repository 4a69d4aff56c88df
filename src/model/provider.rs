//! Which provider to talk to and how: [`ProviderKind`] with its defaults (base URL, model,
//! key variable) and the [`ProviderConfig`] the caller resolves from settings, flags and the
//! environment. Reading settings files is not done here.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The kinds of provider `agent` can talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI Chat Completions, or any compatible server.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// A local Ollama server (OpenAI-compatible, no key).
    Ollama,
    /// The offline demo model.
    Demo,
}

impl ProviderKind {
    /// Every kind, in the order help texts list them.
    pub const ALL: [Self; 4] = [Self::OpenAi, Self::Anthropic, Self::Ollama, Self::Demo];

    /// The name in settings and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Ollama => "ollama",
            Self::Demo => "demo",
        }
    }

    /// Where the provider's API lives unless `base_url` says otherwise.
    #[must_use]
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
            Self::Ollama => "http://127.0.0.1:11434/v1",
            Self::Demo => "",
        }
    }

    /// The model used unless `model` says otherwise.
    #[must_use]
    pub fn default_model(self) -> &'static str {
        match self {
            Self::OpenAi => "gpt-4.1-mini",
            Self::Anthropic => "claude-sonnet-4-5",
            Self::Ollama => "llama3.2",
            Self::Demo => "demo",
        }
    }

    /// The variable holding the key unless `api_key_env` says otherwise (empty: none).
    #[must_use]
    pub fn default_key_env(self) -> &'static str {
        match self {
            Self::OpenAi => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::Ollama => "OLLAMA_API_KEY",
            Self::Demo => "",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A provider name that is none of [`ProviderKind::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`: use openai, anthropic, ollama or demo")]
pub struct UnknownProvider(pub String);

impl FromStr for ProviderKind {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

/// Provider configuration resolved from settings by the caller.
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// Which wire format and defaults.
    pub provider: ProviderKind,
    /// The model name sent to the server.
    pub model: String,
    /// The API's base URL (OpenAI-style ones end in `/v1`).
    pub base_url: String,
    /// The key, already read from `api_key_env`; `None` or empty sends none.
    pub api_key: Option<String>,
    /// The variable the key was read from, for messages.
    pub api_key_env: String,
    /// Longest reply per turn in tokens (`max_output_tokens`); `None`: the provider's default
    /// (Anthropic needs one and gets 8192; the OpenAI wire sends none).
    pub max_output_tokens: Option<u32>,
    /// Longest silence of the server before the request is given up (`idle_timeout_secs`);
    /// `None`: 120 s.
    pub idle_timeout: Option<std::time::Duration>,
    /// The header the key goes in, instead of the provider's (`Authorization: Bearer …`,
    /// `x-api-key`): `api-key` for Azure's classic endpoints; the key is sent bare then.
    pub api_key_header: Option<String>,
    /// Extra headers sent with every request (gateways: `HTTP-Referer`, `X-Title`, …),
    /// after the provider's own.
    pub headers: Vec<(String, String)>,
}

impl ProviderConfig {
    /// The provider's defaults, no key.
    #[must_use]
    pub fn defaults(provider: ProviderKind) -> Self {
        Self {
            provider,
            model: provider.default_model().to_owned(),
            base_url: provider.default_base_url().to_owned(),
            api_key: None,
            api_key_env: provider.default_key_env().to_owned(),
            max_output_tokens: None,
            idle_timeout: None,
            api_key_header: None,
            headers: Vec::new(),
        }
    }
}

/// Never prints the key.
impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api_key_env", &self.api_key_env)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("idle_timeout", &self.idle_timeout)
            .field("api_key_header", &self.api_key_header)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, value)| (name.as_str(), shown_header_value(name, value)))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Whether a header's name says its value is a secret (`*key*`, `*token*`, `*secret*`,
/// `authorization`, cookies, passwords): such values are never shown or recorded.
#[must_use]
pub fn secret_header(name: &str) -> bool {
    const SECRET: [&str; 6] = [
        "key",
        "token",
        "secret",
        "authorization",
        "cookie",
        "password",
    ];
    let lower = name.to_ascii_lowercase();
    SECRET.iter().any(|word| lower.contains(word))
}

/// A header value as it may be shown: `<redacted>` when the name says it is a secret.
#[must_use]
pub fn shown_header_value<'a>(name: &str, value: &'a str) -> &'a str {
    if secret_header(name) {
        "<redacted>"
    } else {
        value
    }
}

/// Whether `name: value` can be sent as an HTTP header.
#[must_use]
pub fn valid_header(name: &str, value: &str) -> bool {
    reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok()
        && reqwest::header::HeaderValue::from_str(value).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn provider_names_round_trip() {
        for kind in ProviderKind::ALL {
            assert_eq!(kind.to_string().parse::<ProviderKind>(), Ok(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{kind}\""));
        }
        assert_eq!("OpenAI".parse::<ProviderKind>(), Ok(ProviderKind::OpenAi));
        assert_eq!(
            "gpt".parse::<ProviderKind>().unwrap_err().to_string(),
            "unknown provider `gpt`: use openai, anthropic, ollama or demo"
        );
    }

    #[test]
    fn config_debug_hides_the_key_and_secret_headers() {
        let mut config = ProviderConfig::defaults(ProviderKind::OpenAi);
        config.api_key = Some("sk-secret".into());
        config.headers = vec![
            ("X-Portkey-Api-Key".into(), "pk-secret".into()),
            ("HTTP-Referer".into(), "https://example.com".into()),
        ];
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("sk-secret") && !shown.contains("pk-secret"),
            "{shown}"
        );
        assert!(
            shown.contains("<redacted>") && shown.contains("https://example.com"),
            "{shown}"
        );
    }

    #[test]
    fn secret_header_names() {
        for name in [
            "api-key",
            "X-API-KEY",
            "Authorization",
            "x-auth-token",
            "Cookie",
            "OpenAI-Secret",
        ] {
            assert!(secret_header(name), "{name}");
        }
        for name in [
            "HTTP-Referer",
            "X-Title",
            "OpenAI-Organization",
            "anthropic-beta",
        ] {
            assert!(!secret_header(name), "{name}");
        }
        assert!(valid_header("X-Title", "agent"));
        assert!(!valid_header("X Title", "agent"));
        assert!(!valid_header("X-Title", "a\nb"));
    }
}
