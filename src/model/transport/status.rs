//! What a response that is no success means, as a [`ModelError`]: an error status read by the
//! server's words first (billing, a server set up wrongly, a request it could not read, a
//! conversation too long, the header it wants the key in), then by the status; a redirect
//! that was not followed, with the base URL that would reach its target directly.

use std::time::Duration;

use reqwest::header::LOCATION;

use super::Transport;
use super::redirect::same_origin;
use crate::model::ModelError;
use crate::model::overflow;
use crate::model::sse::{error_message, is_context_too_long};

impl Transport {
    /// A redirect the client did not follow (see
    /// [`follow_redirect`](super::redirect::follow_redirect)), named with where it leads and
    /// the base URL that would reach it directly.
    pub(super) fn redirect_error(&self, response: &reqwest::Response, url: &str) -> ModelError {
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| response.url().join(v.trim()).ok());
        let Some(location) = location else {
            return ModelError::Http {
                status,
                server: self.server.clone(),
                message: "a redirect without a usable `Location`".into(),
            };
        };
        let why = if !matches!(status, 307 | 308) {
            "a POST redirected this way arrives as a GET without its body"
        } else if !same_origin(response.url(), &location) {
            "it leads to another host, which would receive the key"
        } else {
            "too many redirects"
        };
        // The endpoint's path below the base URL (`/chat/completions`, `/v1/messages`).
        let endpoint = url.strip_prefix(&self.server).unwrap_or_default();
        let mut suggested = location.clone();
        suggested.set_query(None);
        let suggested = suggested.to_string();
        let suggested = suggested
            .strip_suffix(endpoint)
            .filter(|_| !endpoint.is_empty())
            .unwrap_or(&suggested)
            .trim_end_matches('/')
            .to_owned();
        ModelError::Redirect {
            server: self.server.clone(),
            status,
            location: location.to_string(),
            why: why.to_owned(),
            suggested,
        }
    }

    /// The error for an error status, read from the server's words first: billing, a server
    /// set up wrongly, a conversation too long say so whatever the status; the status decides
    /// the rest.
    pub(super) fn status_error(
        &self,
        status: u16,
        retry_after: Option<Duration>,
        body: &str,
        url: &str,
    ) -> ModelError {
        let message = error_message(body);
        let lower = body.to_ascii_lowercase();
        let server = self.server.clone();
        if status == 402 || is_billing(&lower) {
            return ModelError::Billing {
                server,
                status,
                message,
            };
        }
        if let Some(hint) = setup_hint(&lower) {
            return ModelError::ServerSetup {
                server,
                status,
                message,
                hint: hint.to_owned(),
            };
        }
        if status >= 500 && names_a_malformed_request(&lower) {
            return ModelError::Unreadable {
                server,
                status,
                message,
            };
        }
        let (context, prompt) = overflow::numbers(body);
        match status {
            401 | 403 => ModelError::Auth {
                wants_header: self.wanted_key_header(&lower),
                server,
                key_env: self.key_env.clone(),
                key_sent: self.key_sent,
                status,
                message,
            },
            413 => ModelError::ContextTooLong {
                message: format!("HTTP 413: {message}"),
                context,
                prompt,
            },
            400 | 422 if is_context_too_long(&lower) => ModelError::ContextTooLong {
                message: format!("HTTP {status}: {message}"),
                context,
                prompt,
            },
            404 if lower.contains("model") => ModelError::ModelNotFound {
                model: self.model.clone(),
                server,
                message,
            },
            404 => ModelError::NotFound {
                url: url.to_owned(),
                message,
            },
            _ if lower.contains("model_not_found") => ModelError::ModelNotFound {
                model: self.model.clone(),
                server,
                message,
            },
            429 => ModelError::RateLimited {
                server,
                retry_after,
                message,
            },
            _ => ModelError::Http {
                status,
                server,
                message,
            },
        }
    }

    /// The header a rejecting server wants the key in, when the key went in another one:
    /// Azure's classic endpoints read `api-key` and answer a bearer token with "invalid
    /// subscription key".
    fn wanted_key_header(&self, lower_body: &str) -> Option<String> {
        let host = reqwest::Url::parse(&self.server)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
            .unwrap_or_default();
        let azure = host.ends_with(".openai.azure.com")
            || host.ends_with(".cognitiveservices.azure.com")
            || host.ends_with(".services.ai.azure.com")
            || lower_body.contains("subscription key");
        (azure && self.key_header != "api-key").then(|| "api-key".to_owned())
    }
}

/// What a server's words (in lower case) say about the account's credit or quota.
fn is_billing(lower: &str) -> bool {
    const SIGNS: [&str; 6] = [
        "insufficient_quota",
        "exceeded your current quota",
        "credit balance is too low",
        "insufficient credits",
        "insufficient_credits",
        "requires more credits",
    ];
    SIGNS.iter().any(|sign| lower.contains(sign))
}

/// What to change on the server, when its words (in lower case) say it is set up in a way
/// that cannot serve the request — whatever the status, trying again cannot help.
fn setup_hint(lower: &str) -> Option<&'static str> {
    const SIGNS: [(&str, &str); 4] = [
        (
            "tools param requires --jinja flag",
            "start llama-server with `--jinja` (tool calls need the model's chat template)",
        ),
        (
            "cannot use tools with stream",
            "this llama-server cannot stream tool calls: update it, or start it with `--jinja`",
        ),
        (
            "model requires more system memory",
            "free memory on the server, or pick a smaller model (or a smaller quantisation) \
             with --model",
        ),
        (
            "does not support tools",
            "this model cannot call tools: pick one that can with --model",
        ),
    ];
    SIGNS
        .iter()
        .find(|(sign, _)| lower.contains(sign))
        .map(|(_, hint)| *hint)
}

/// Whether a server error's words (in lower case) say the request could not be read: its JSON,
/// or a call's arguments in it (`llama.cpp`: "Failed to parse tool call arguments as JSON …
/// unexpected end of input"). Such a request fails the same way every time.
fn names_a_malformed_request(lower: &str) -> bool {
    const SIGNS: [&str; 6] = [
        "failed to parse",
        "parse error",
        "unexpected end of input",
        "unexpected token",
        "invalid json",
        "invalid request",
    ];
    SIGNS.iter().any(|sign| lower.contains(sign))
}
