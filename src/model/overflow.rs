//! What a context overflow means: the conversation grew past the server's context, or — on a
//! request that holds no reply of the model yet (nor a summary of earlier ones) — the agent's
//! own prompt (system prompt, tool definitions, the task) does not fit it at all, which no
//! narrower task can mend: only a server with a larger context can. Reads the numbers a
//! server gives (`llama.cpp`'s `n_ctx` and `n_prompt_tokens`). Pure.

use serde_json::Value;

use super::{Message, ModelError, Request};

/// A rough count of bytes per token (3–4 for English and JSON), for an estimate shown to the
/// person, never a limit.
const BYTES_PER_TOKEN: usize = 4;

/// The context size and the prompt's tokens a server's error body names (`llama.cpp`:
/// `{"error": {"type": "exceed_context_size_error", "n_prompt_tokens": 1321, "n_ctx": 1024}}`).
#[must_use]
pub(super) fn numbers(body: &str) -> (Option<u64>, Option<u64>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    let field = |name: &str| {
        value
            .pointer(&format!("/error/{name}"))
            .or_else(|| value.get(name))
            .and_then(Value::as_u64)
    };
    (field("n_ctx"), field("n_prompt_tokens"))
}

/// The tokens of a request's fixed part — system prompt and tool definitions — estimated
/// from their size.
#[must_use]
pub fn fixed_prompt_tokens(system: &str, tools: &[super::ToolSpec]) -> u64 {
    let bytes = system.len()
        + tools
            .iter()
            .map(|tool| {
                tool.name.len() + tool.description.len() + tool.parameters.to_string().len()
            })
            .sum::<usize>();
    u64::try_from(bytes / BYTES_PER_TOKEN).unwrap_or(u64::MAX)
}

/// `error` as the person should read it for `request`: an overflow of a request that holds
/// no reply of the model yet is the agent's prompt not fitting the server's context.
#[must_use]
pub(super) fn explain(error: ModelError, request: &Request<'_>) -> ModelError {
    let ModelError::ContextTooLong {
        message,
        context,
        prompt,
    } = error
    else {
        return error;
    };
    // A summary stands for replies of the model too.
    let answered = request.messages.iter().any(|message| match message {
        Message::Assistant { .. } => true,
        Message::User(text) => super::repair::is_summary(text),
        Message::ToolResult { .. } => false,
    });
    let fixed = fixed_prompt_tokens(request.system, request.tools);
    if answered && context.is_none_or(|context| context >= fixed) {
        return ModelError::ContextTooLong {
            message,
            context,
            prompt,
        };
    }
    ModelError::ContextTooSmall {
        message,
        context,
        prompt: prompt.unwrap_or(fixed),
        counted: prompt.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn llama_cpp_names_its_context_and_the_prompt() {
        let body = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":1321,"n_ctx":1024}}"#;
        assert_eq!(numbers(body), (Some(1024), Some(1321)));
        assert_eq!(numbers("not json"), (None, None));
        assert_eq!(numbers(r#"{"error":{"message":"x"}}"#), (None, None));
    }

    #[test]
    fn only_a_request_with_no_reply_yet_blames_the_servers_context() {
        let overflow = || ModelError::ContextTooLong {
            message: "too long".into(),
            context: Some(1024),
            prompt: Some(1321),
        };
        let first = [Message::User("go".into())];
        let later = [
            Message::User("go".into()),
            Message::Assistant {
                text: "ok".into(),
                tool_calls: Vec::new(),
                reasoning: super::super::Reasoning::default(),
            },
            Message::User("more".into()),
        ];
        let request = |messages| Request {
            system: "s",
            messages,
            tools: &[],
        };
        let explained = explain(overflow(), &request(&first));
        assert_eq!(
            explained.to_string(),
            "the server's context (1024 tokens) is smaller than the agent's prompt (1321 tokens: \
             system prompt, tool definitions and the task) (the server says: too long): restart \
             the server with a larger context (llama-server `-c`, Ollama `num_ctx`, vLLM \
             `--max-model-len`)"
        );
        assert_eq!(explained.code(), "context_too_small");
        let compacted = [
            super::super::repair::summary_message("so far"),
            Message::User("more".into()),
        ];
        for messages in [&later[..], &compacted[..]] {
            assert!(matches!(
                explain(overflow(), &request(messages)),
                ModelError::ContextTooLong { .. }
            ));
        }
    }
}
