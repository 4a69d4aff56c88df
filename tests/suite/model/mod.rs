//! The model providers driven directly against the fake model server: one file per concern.

mod anthropic;
mod errors;
mod fake_server;
mod llama_cpp;
mod openai;
mod quirks;
mod runs;
mod transport;

use std::time::Duration;

use agent::model::{ProviderConfig, ProviderKind, RetryPolicy};

/// Retries without the real backoff, so failure tests stay fast.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        tries: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(5),
    }
}

/// A config for `provider` at `base_url` with a test key.
pub fn config(provider: ProviderKind, base_url: &str) -> ProviderConfig {
    ProviderConfig {
        provider,
        model: "test-model".into(),
        base_url: base_url.into(),
        api_key: Some("sk-test-key".into()),
        api_key_env: provider.default_key_env().into(),
        max_output_tokens: None,
        idle_timeout: None,
        api_key_header: None,
        headers: Vec::new(),
    }
}

use agent::model::{Delta, Message, Model, ModelError, Reply, Request, ToolSpec};

/// The `shell` tool as the agent offers it.
pub fn shell_tool() -> ToolSpec {
    ToolSpec {
        name: "shell".into(),
        description: "Run a shell command with sh on Linux".into(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command", "description"],
        }),
    }
}

/// Runs one turn of `model` on `messages`, returning the result and the streamed text pieces.
pub async fn turn(
    model: &mut impl Model,
    messages: &[Message],
) -> (Result<Reply, ModelError>, Vec<String>) {
    let (result, pieces, _) = turn_with_reasoning(model, messages).await;
    (result, pieces)
}

/// Like [`turn`], with the streamed reasoning pieces too.
pub async fn turn_with_reasoning(
    model: &mut impl Model,
    messages: &[Message],
) -> (Result<Reply, ModelError>, Vec<String>, Vec<String>) {
    let tools = [shell_tool()];
    let request = Request {
        system: "You are a test.",
        messages,
        tools: &tools,
    };
    let mut pieces = Vec::new();
    let mut reasoning = Vec::new();
    let result = model
        .complete(&request, &mut |delta| match delta {
            Delta::Text(text) => pieces.push(text.to_owned()),
            Delta::Reasoning(text) => reasoning.push(text.to_owned()),
            Delta::Retry { .. } | Delta::Warning { .. } => {}
        })
        .await;
    (result, pieces, reasoning)
}

/// `[User(text)]`.
pub fn ask(text: &str) -> Vec<Message> {
    vec![Message::User(text.into())]
}
