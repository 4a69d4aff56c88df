//! The Chat Completions request: the body (system prompt, messages with their tool calls and
//! the reasoning sent back, the tools offered) and what depends on the server asked: the name
//! of the output-limit field, and the default limit for a server that is no known cloud API.

use serde_json::{Value, json};

use crate::model::{Message, Request};

/// Output limit per reply for a server that is no known cloud API, unless `max_output_tokens`
/// says otherwise — long enough for any answer or file a coding turn writes, short enough
/// that a small local model cannot ramble for minutes unasked.
pub(super) const LOCAL_OUTPUT_TOKENS: u32 = 8192;

/// Whether `server` is no known cloud API (a local or self-hosted server: llama.cpp, vLLM,
/// LM Studio, Ollama …), whose own output limit may be none at all.
pub(super) fn local_server(server: &str) -> bool {
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
pub(super) fn limit_field(server: &str) -> &'static str {
    let host = host(server);
    if host == "api.openai.com" || host.ends_with(".openai.azure.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
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
                        let arguments = if crate::model::repair::arguments_parse(&call.arguments) {
                            call.arguments.as_str()
                        } else {
                            crate::model::repair::EMPTY_ARGUMENTS
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
}
