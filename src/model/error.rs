//! What can go wrong talking to a model ([`ModelError`]): one variant per kind of failure,
//! each message saying what to do, whether trying again may help, a stable code for `--json`.

use std::time::Duration;

use super::retry::retryable_status;

/// What can go wrong talking to a model.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No key where one is needed.
    #[error(
        "no API key: set `{key_env}` (or `api_key_env` in settings.toml), or use --provider demo"
    )]
    MissingKey {
        /// The variable that should hold it.
        key_env: String,
    },
    /// The server refused the request's credentials (401/403).
    #[error(
        "the model server at {server} rejected {} (HTTP {status}: {message}): {}",
        if *key_sent { format!("the key in `{key_env}`") } else { "the request: no key was sent".to_owned() },
        match (wants_header, *key_sent) {
            (Some(header), _) => format!(
                "this server takes the key in an `{header}` header: set `api_key_header = \"{header}\"` in [model]"
            ),
            (None, true) => "check that the key is valid for this server, or name another variable with \
             `api_key_env` in settings.toml".to_owned(),
            (None, false) => format!("set `{key_env}` (or `api_key_env` in settings.toml)"),
        }
    )]
    Auth {
        /// Base URL of the server.
        server: String,
        /// The variable the key comes from (or should).
        key_env: String,
        /// Whether a key was sent at all.
        key_sent: bool,
        /// 401 or 403.
        status: u16,
        /// The server's error message, truncated.
        message: String,
        /// The header this server reads the key from, when it is not the one it was sent in
        /// (Azure's classic endpoints read `api-key`, not `Authorization`).
        wants_header: Option<String>,
    },
    /// The account behind the key has no credit or quota left (OpenAI's 429
    /// `insufficient_quota`, OpenRouter's 402, Anthropic's "credit balance is too low").
    #[error(
        "the model server at {server} refused the request for billing reasons (HTTP {status}: \
         {message}): add credit or raise the quota of the account the key belongs to; waiting \
         does not help"
    )]
    Billing {
        /// Base URL of the server.
        server: String,
        /// The status it came with (402, 429, 400, …).
        status: u16,
        /// The server's error message, truncated.
        message: String,
    },
    /// The server said how it must be set up to serve this request (`llama.cpp` without
    /// `--jinja`, Ollama without the memory for the model): trying again cannot help.
    #[error(
        "the model server at {server} cannot serve this request (HTTP {status}: {message}): {hint}"
    )]
    ServerSetup {
        /// Base URL of the server.
        server: String,
        /// The status it came with (usually 500).
        status: u16,
        /// The server's error message, truncated.
        message: String,
        /// What to change, in the server's own terms.
        hint: String,
    },
    /// The POST was redirected in a way that cannot be followed (301/302/303 turn it into a
    /// GET; a redirect to another host would take the key along).
    #[error(
        "the model server at {server} redirects the request (HTTP {status}) to `{location}`, \
         which is not followed ({why}): set --base-url to `{suggested}`"
    )]
    Redirect {
        /// Base URL of the server.
        server: String,
        /// 301, 302, 303, 307 or 308.
        status: u16,
        /// The `Location` it named (resolved against the request URL).
        location: String,
        /// Why it is not followed.
        why: String,
        /// The base URL the location suggests.
        suggested: String,
    },
    /// The server does not know the model.
    #[error("model `{model}` not found on {server} (the server says: {message}): {}",
        if message.contains("pull") {
            format!("pull it on the server (`ollama pull {model}`), or check --model")
        } else {
            "check --model".to_owned()
        })]
    ModelNotFound {
        /// The model asked for.
        model: String,
        /// Base URL of the server.
        server: String,
        /// The server's error message, truncated.
        message: String,
    },
    /// 404 for the endpoint itself: the base URL is probably wrong.
    #[error("`{url}` does not exist on the model server (HTTP 404: {message}): check --base-url")]
    NotFound {
        /// The URL requested.
        url: String,
        /// The server's error message, truncated.
        message: String,
    },
    /// The base URL cannot be used.
    #[error("`{url}` is not a usable model server URL: {message}: check --base-url")]
    BadUrl {
        /// The URL as configured.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// 429, still after the retries.
    #[error(
        "the model server at {server} is rate limiting requests (HTTP 429): {message}: \
         wait a minute and try again"
    )]
    RateLimited {
        /// Base URL of the server.
        server: String,
        /// What `Retry-After` asked for, if anything.
        retry_after: Option<Duration>,
        /// The server's error message, truncated.
        message: String,
    },
    /// Any other error status, after the retries where retrying makes sense.
    #[error("the model server at {server} answered HTTP {status}: {message}: {}", http_hint(*status, message))]
    Http {
        /// The status code.
        status: u16,
        /// Base URL of the server.
        server: String,
        /// The server's error message, truncated.
        message: String,
    },
    /// A server error whose words say the request itself could not be read (`llama.cpp`'s
    /// 500 "Failed to parse tool call arguments as JSON"): the same request fails again.
    #[error(
        "the model server at {server} could not read the request (HTTP {status}: {message}): \
         trying it again cannot help; if this run was continued, start a new one, else this may \
         be a bug in agent, please report it with this message"
    )]
    Unreadable {
        /// Base URL of the server.
        server: String,
        /// The status it came with (5xx).
        status: u16,
        /// The server's error message, truncated.
        message: String,
    },
    /// The conversation no longer fits the model's context window (400/413 saying so).
    #[error(
        "the conversation is too long for the model: {message}: start a new run with a \
         narrower task or a lower --max-turns, or lower `max_output_chars` in [limits] so \
         command output takes less room"
    )]
    ContextTooLong {
        /// The server's error message, truncated.
        message: String,
        /// The server's context in tokens, when it said (`llama.cpp`'s `n_ctx`).
        context: Option<u64>,
        /// The prompt's tokens as the server counted them, when it said.
        prompt: Option<u64>,
    },
    /// The server's context cannot hold even the agent's prompt: the overflow came before any
    /// reply of the model (or the server's `n_ctx` is below the fixed prompt).
    #[error(
        "the server's context ({}) is smaller than the agent's prompt ({}{prompt} tokens: system \
         prompt, tool definitions and the task) (the server says: {message}): restart the server \
         with a larger context (llama-server `-c`, Ollama `num_ctx`, vLLM `--max-model-len`)",
        context.map_or_else(|| "its size unsaid".to_owned(), |n| format!("{n} tokens")),
        if *counted { "" } else { "about " }
    )]
    ContextTooSmall {
        /// The server's error message, truncated.
        message: String,
        /// The server's context in tokens, when it said.
        context: Option<u64>,
        /// The prompt's tokens: as the server counted them, or estimated.
        prompt: u64,
        /// Whether `prompt` is the server's count (not an estimate).
        counted: bool,
    },
    /// The server reported an error inside its (200) reply stream.
    #[error("the model server reported an error mid-reply: {message}: {}", if *transient {
        "try again in a moment"
    } else {
        "check --model and --base-url; the server refused this request"
    })]
    Reported {
        /// The server's error message, truncated.
        message: String,
        /// Whether it says the trouble is passing (overloaded, rate limited, 5xx).
        transient: bool,
    },
    /// A 200 whose body is neither an event stream nor JSON (a proxy's or portal's page).
    #[error(
        "the model server at {server} answered with `{content_type}` instead of an event \
         stream: {start}: check --base-url (a proxy or login page may be in the way)"
    )]
    NotAStream {
        /// Base URL of the server.
        server: String,
        /// The `Content-Type` it sent.
        content_type: String,
        /// The start of the body, on one line, quoted.
        start: String,
    },
    /// The provider's content filter stopped the reply.
    #[error(
        "the provider's content filter stopped the model's reply (`content_filter` or \
         `refusal`): rephrase the task, or ask the provider why it was filtered"
    )]
    ContentFilter,
    /// No connection at all.
    #[error(
        "cannot reach the model server at {server}: {message}: is it running? check --base-url"
    )]
    Connect {
        /// Base URL of the server.
        server: String,
        /// What the network layer said.
        message: String,
    },
    /// The reply stream broke: cut, idle too long, malformed, or an error event.
    #[error("the model's reply stream failed: {message}: try again")]
    Stream {
        /// What happened, naming the offending event where there is one.
        message: String,
    },
    /// A bug in `agent`.
    #[error(
        "internal error in the model provider: {message}: this is a bug in agent, please report it"
    )]
    Internal {
        /// What went wrong.
        message: String,
    },
}

/// What to do after an HTTP error status, by what the server said (`message`): a 400/422 that
/// names a field of the request `agent` builds may be a bug in `agent`; any other refusal is
/// about the model or the server chosen.
fn http_hint(status: u16, message: &str) -> &'static str {
    if retryable_status(status) && status != 429 {
        "the server has a problem, try again later"
    } else if matches!(status, 400 | 422) && names_a_sent_field(message) {
        "check --model and --base-url; if they are right this may be a bug in agent, please \
         report it with this message"
    } else {
        "check --model and --base-url"
    }
}

/// Whether a server's complaint names a field of the request body `agent` builds (its words
/// quoted, as OpenAI's `'messages[2].tool_calls'` or Pydantic's `body.messages.0.content`).
fn names_a_sent_field(message: &str) -> bool {
    const FIELDS: [&str; 10] = [
        "messages",
        "tool_calls",
        "tool_call_id",
        "tool_use_id",
        "tool_use",
        "tool_result",
        "input_schema",
        "stream_options",
        "max_tokens",
        "max_completion_tokens",
    ];
    let lower = message.to_ascii_lowercase();
    FIELDS.iter().any(|field| {
        lower.match_indices(field).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + field.len()..].chars().next();
            let boundary =
                |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            boundary(before) && boundary(after)
        })
    })
}

impl ModelError {
    /// Whether trying the same request again may succeed: network trouble, a broken stream,
    /// 408, 409, 429, 5xx but 501, an in-stream error the server calls passing. Never 400,
    /// 401, 403, 404, 413, 422. The providers retry only before anything reached the caller.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Connect { .. } | Self::RateLimited { .. } | Self::Stream { .. } => true,
            // A 429 left as `Http` is out of credit, which waiting does not cure.
            Self::Http { status, .. } => *status != 429 && retryable_status(*status),
            Self::Reported { transient, .. } => *transient,
            Self::MissingKey { .. }
            | Self::Auth { .. }
            | Self::Billing { .. }
            | Self::ServerSetup { .. }
            | Self::Redirect { .. }
            | Self::ModelNotFound { .. }
            | Self::NotFound { .. }
            | Self::BadUrl { .. }
            | Self::ContextTooLong { .. }
            | Self::ContextTooSmall { .. }
            | Self::Unreadable { .. }
            | Self::NotAStream { .. }
            | Self::ContentFilter
            | Self::Internal { .. } => false,
        }
    }

    /// A stable name for the kind of failure, for `--json` consumers.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::MissingKey { .. } => "missing_key",
            Self::Auth { .. } => "auth",
            Self::Billing { .. } => "billing",
            Self::ServerSetup { .. } => "server_setup",
            Self::Redirect { .. } => "redirect",
            Self::ModelNotFound { .. } => "model_not_found",
            Self::NotFound { .. } => "not_found",
            Self::BadUrl { .. } => "bad_url",
            Self::RateLimited { .. } => "rate_limited",
            Self::Http { .. } => "http",
            Self::Connect { .. } => "connect",
            Self::Stream { .. } => "stream",
            Self::ContextTooLong { .. } => "context_too_long",
            Self::ContextTooSmall { .. } => "context_too_small",
            Self::Unreadable { .. } => "unreadable_request",
            Self::Reported { .. } => "server_error",
            Self::NotAStream { .. } => "not_a_stream",
            Self::ContentFilter => "content_filter",
            Self::Internal { .. } => "internal",
        }
    }

    /// How long the server asked to wait before trying again (`Retry-After`).
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn bug_in_agent_only_where_the_server_names_a_field_agent_built() {
        for (message, ours) in [
            ("Invalid 'messages[2].tool_calls': empty array", true),
            ("body.messages.0.content: field required", true),
            (
                "An assistant message with 'tool_calls' must be followed by tool messages",
                true,
            ),
            (
                "unexpected `tool_use_id` found in `tool_result` blocks",
                true,
            ),
            (
                "registry.ollama.ai/library/gemma:2b does not support tools",
                false,
            ),
            ("The model `gpt-5` does not exist", false),
            ("invalid model ID", false),
            ("submessages are odd", false),
        ] {
            assert_eq!(names_a_sent_field(message), ours, "{message}");
        }
        assert!(http_hint(400, "Invalid 'messages[0]'").contains("bug in agent"));
        assert!(!http_hint(404, "Invalid 'messages[0]'").contains("bug"));
        assert!(!http_hint(429, "slow down").contains("later"));
    }

    #[test]
    fn messages_say_what_to_do() {
        let auth = ModelError::Auth {
            server: "https://api.openai.com/v1".into(),
            key_env: "OPENAI_API_KEY".into(),
            key_sent: true,
            status: 401,
            message: "Incorrect API key provided".into(),
            wants_header: None,
        };
        assert_eq!(
            auth.to_string(),
            "the model server at https://api.openai.com/v1 rejected the key in `OPENAI_API_KEY` \
             (HTTP 401: Incorrect API key provided): check that the key is valid for this \
             server, or name another variable with `api_key_env` in settings.toml"
        );
        let unsent = ModelError::Auth {
            server: "http://127.0.0.1:8000/v1".into(),
            key_env: "OPENAI_API_KEY".into(),
            key_sent: false,
            status: 401,
            message: "missing bearer token".into(),
            wants_header: None,
        };
        assert_eq!(
            unsent.to_string(),
            "the model server at http://127.0.0.1:8000/v1 rejected the request: no key was sent \
             (HTTP 401: missing bearer token): set `OPENAI_API_KEY` (or `api_key_env` in \
             settings.toml)"
        );
        let missing = ModelError::MissingKey {
            key_env: "ANTHROPIC_API_KEY".into(),
        };
        assert_eq!(
            missing.to_string(),
            "no API key: set `ANTHROPIC_API_KEY` (or `api_key_env` in settings.toml), \
             or use --provider demo"
        );
        assert!(!auth.is_retryable());
        for (status, retried) in [
            (400, false),
            (401, false),
            (403, false),
            (404, false),
            (408, true),
            (409, true),
            (413, false),
            (422, false),
            (429, true),
            (500, true),
            (501, false),
            (502, true),
            (503, true),
            (529, true),
        ] {
            assert_eq!(retryable_status(status), retried, "HTTP {status}");
        }
        assert!(
            ModelError::Http {
                status: 503,
                server: String::new(),
                message: String::new()
            }
            .is_retryable()
        );
    }
}
