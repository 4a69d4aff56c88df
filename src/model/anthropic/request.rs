//! The Messages request body: the system prompt apart, `thinking` blocks sent back first with
//! their `signature`, `tool_use` and `tool_result` blocks, roles merged where the API wants one
//! message, and prompt caching marks (`cache_control`) on the tools, the system prompt and the
//! latest turns.

use serde_json::{Value, json};

use crate::model::{Message, Request};

/// Output limit per turn unless `max_output_tokens` says otherwise; the API requires one —
/// room for a long answer or a big tool call, within what every current Claude model accepts.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;

/// Prompt-cache breakpoints on the latest user messages — with the tools and the system prompt
/// that makes 4, the most the API accepts. Two, not one: the previous request's mark is where
/// this request's cached prefix ends, and the API looks back only about 20 blocks for it.
const CACHED_USER_TURNS: usize = 2;

/// `{"type": "ephemeral"}`: cached for 5 minutes, refreshed by each read — a tool loop reads it
/// every turn.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The Messages request body, with the default output limit.
pub(super) fn body(model: &str, request: &Request<'_>) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in request.messages {
        let (role, blocks) = match message {
            Message::User(text) => ("user", text_block(text)),
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                // Thinking blocks go back first, in order, signatures untouched: the API checks
                // them before it accepts the tool results that follow.
                let mut blocks = reasoning.replay.clone();
                blocks.extend(text_block(text));
                blocks.extend(tool_calls.iter().map(|call| {
                    // The API wants an object; what the model sent may not even be JSON.
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
                }));
                ("assistant", blocks)
            }
            Message::ToolResult { call_id, content } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                let failed = serde_json::from_str::<Value>(content)
                    .is_ok_and(|v| v.get("error").is_some_and(|e| !e.is_null()));
                if failed {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        // Empty content is rejected; consecutive messages of one role become one.
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    // Cache the conversation up to the latest turns, so a tool loop is billed mostly as reads.
    for (_, blocks) in messages
        .iter_mut()
        .rev()
        .filter(|(role, _)| *role == "user")
        .take(CACHED_USER_TURNS)
    {
        if let Some(last) = blocks.last_mut() {
            last["cache_control"] = ephemeral();
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": DEFAULT_MAX_OUTPUT_TOKENS,
        "stream": true,
        "messages": messages,
    });
    if !request.system.is_empty() {
        body["system"] =
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = json!(tools);
    }
    body
}

/// A text block, or none for empty text (the API rejects empty text blocks).
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Reasoning, ToolCall};
    use pretty_assertions::assert_eq;

    #[test]
    fn tool_input_that_is_not_an_object_is_sent_as_empty() {
        let call = |arguments: &str| ToolCall {
            id: "t".into(),
            name: "shell".into(),
            arguments: arguments.into(),
            extra: None,
        };
        let messages = [Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("[1]"), call("")],
            reasoning: Reasoning::default(),
        }];
        let body = body(
            "m",
            &Request {
                system: "",
                messages: &messages,
                tools: &[],
            },
        );
        assert_eq!(body["messages"][0]["content"][0]["input"], json!({}));
        assert_eq!(body["messages"][0]["content"][1]["input"], json!({}));
        assert!(body.get("system").is_none() && body.get("tools").is_none());
    }
}
