//! Refusals a changed request may cure: a server that does without `stream_options`, reads the
//! other name of the output-limit field, counts agent's default limit into its context, or
//! cannot stream tool calls — each read from the error it answered with.

use crate::model::ModelError;

/// A context overflow that counts the output limit in (vLLM: "you requested 8292 tokens (100
/// in the messages, 8192 in the completion)", "'max_tokens' … is too large").
pub(super) fn counts_the_limit(error: &ModelError) -> bool {
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
pub(super) fn refuses_stream_options(error: &ModelError) -> bool {
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
pub(super) fn other_limit_field(error: &ModelError, sent: &'static str) -> Option<&'static str> {
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
pub(super) fn cannot_stream_tools(error: &ModelError) -> bool {
    matches!(error, ModelError::ServerSetup { message, .. } if message.contains("Cannot use tools with stream"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
}
