//! The Anthropic provider: typed events, tool use, the request it sends.

use agent::model::Tunable as _;
use agent::model::anthropic::Anthropic;
use agent::model::{
    Message, Model, ModelError, ProviderKind, Reasoning, Reply, StopReason, ToolCall, Usage,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{ask, config, fast_retry, turn, turn_with_reasoning};
use crate::suite::fake_model::{self as fake, Events, FakeModel, anthropic};

fn model(server: &FakeModel) -> Anthropic {
    Anthropic::new(&config(ProviderKind::Anthropic, &server.url()))
        .unwrap()
        .with_retry(fast_retry())
}

#[tokio::test]
async fn streams_text_and_tool_use_with_split_input() {
    let server = FakeModel::new([fake::Reply::sse([
        anthropic::message_start(),
        anthropic::ping(),
        anthropic::text_split(0, &["I'll list ", "the files."]),
        anthropic::tool_use_split(
            1,
            "toolu_1",
            "shell",
            &["", r#"{"command": "#, r#""ls -la"}"#],
        ),
        anthropic::tool_use(2, "toolu_2", "shell", r#"{"command": "pwd"}"#),
        anthropic::message_delta("tool_use"),
        anthropic::message_stop(),
    ])]);
    let (result, pieces) = turn(&mut model(&server), &ask("list the files")).await;
    assert_eq!(
        result.unwrap(),
        Reply {
            text: "I'll list the files.".into(),
            tool_calls: vec![
                ToolCall {
                    id: "toolu_1".into(),
                    name: "shell".into(),
                    arguments: r#"{"command": "ls -la"}"#.into(),
                    extra: None,
                },
                ToolCall {
                    id: "toolu_2".into(),
                    name: "shell".into(),
                    arguments: r#"{"command": "pwd"}"#.into(),
                    extra: None,
                },
            ],
            stop: StopReason::ToolUse,
            reasoning: Reasoning::default(),
            usage: Some(Usage {
                input: 1,
                output: 1,
                cache_read: 0,
                cache_write: 0
            }),
        }
    );
    assert_eq!(pieces, ["I'll list ", "the files."]);
    let request = server.request(0);
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-test-key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test]
async fn keeps_thinking_and_ignores_unknown_events() {
    let server = FakeModel::new([fake::Reply::sse([
        anthropic::message_start(),
        Events::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        Events::named(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
        ),
        anthropic::block_stop(0),
        Events::named(
            "brand_new_event",
            &json!({"type": "brand_new_event", "x": 1}),
        ),
        anthropic::text(1, "Done."),
        anthropic::message_delta("end_turn"),
        anthropic::message_stop(),
    ])]);
    let (result, _, reasoning) = turn_with_reasoning(&mut model(&server), &ask("hi")).await;
    assert_eq!(reasoning, ["hmm"]);
    assert_eq!(
        result.unwrap(),
        Reply {
            text: "Done.".into(),
            tool_calls: vec![],
            stop: StopReason::EndTurn,
            reasoning: Reasoning {
                text: "hmm".into(),
                replay: vec![json!({"type": "thinking", "thinking": "hmm", "signature": ""})],
            },
            usage: Some(Usage {
                input: 1,
                output: 1,
                cache_read: 0,
                cache_write: 0
            }),
        }
    );
}

#[tokio::test]
async fn sends_tool_use_and_merged_tool_results() {
    let server = FakeModel::anthropic_turns([fake::turn_text("Both ran.")]);
    let call = |id: &str, arguments: &str| ToolCall {
        id: id.into(),
        name: "shell".into(),
        arguments: arguments.into(),
        extra: None,
    };
    let messages = vec![
        Message::User("run two".into()),
        Message::Assistant {
            text: "Running.".into(),
            tool_calls: vec![
                call("toolu_1", r#"{"command":"ls"}"#),
                call("toolu_2", "{broken"),
            ],
            reasoning: Reasoning::default(),
        },
        Message::ToolResult {
            call_id: "toolu_1".into(),
            content: r#"{"exit_code":0,"stdout":"a\n"}"#.into(),
        },
        Message::ToolResult {
            call_id: "toolu_2".into(),
            content: r#"{"error":{"code":"EDENIED","message":"no"}}"#.into(),
        },
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![],
            reasoning: Reasoning::default(),
        },
        Message::User("and now?".into()),
    ];
    let reply = turn(&mut model(&server), &messages).await.0.unwrap();
    assert_eq!(reply.text, "Both ran.");
    assert_eq!(
        server.request(0).body,
        json!({
            "model": "test-model",
            "max_tokens": 8192,
            "stream": true,
            "system": [{"type": "text", "text": "You are a test.",
                        "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "run two",
                    "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Running."},
                    {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"command": "ls"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "shell", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": "{\"exit_code\":0,\"stdout\":\"a\\n\"}"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
                     "content": "{\"error\":{\"code\":\"EDENIED\",\"message\":\"no\"}}"},
                    {"type": "text", "text": "and now?", "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "tools": [{
                "name": "shell",
                "description": "Run a shell command with sh on Linux",
                "input_schema": super::shell_tool().parameters,
                "cache_control": {"type": "ephemeral"},
            }],
        })
    );
    assert_eq!(server.request(0).tool_results().len(), 2);
}

#[tokio::test]
async fn an_error_event_after_text_is_reported_without_a_retry() {
    let server = FakeModel::new([fake::Reply::sse([
        anthropic::message_start(),
        anthropic::text(0, "Start"),
        anthropic::error("overloaded_error", "Overloaded"),
    ])]);
    let (result, pieces) = turn(&mut model(&server), &ask("hi")).await;
    let error = result.unwrap_err();
    assert!(
        matches!(
            error,
            ModelError::Reported {
                transient: true,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("`overloaded_error`: Overloaded"),
        "{error}"
    );
    assert_eq!(pieces, ["Start"]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_event_before_any_text_is_retried() {
    let server = FakeModel::anthropic_turns([]);
    server.push(fake::Reply::sse([
        anthropic::message_start(),
        anthropic::error("overloaded_error", "Overloaded"),
    ]));
    server.push(fake::turn_text("Recovered.").anthropic());
    let (result, pieces) = turn(&mut model(&server), &ask("hi")).await;
    assert_eq!(result.unwrap().text, "Recovered.");
    assert_eq!(pieces.concat(), "Recovered.");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_without_message_stop_or_stop_reason_is_an_error() {
    let server = FakeModel::new([fake::Reply::sse([
        anthropic::message_start(),
        anthropic::text(0, "Hi"),
    ])]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("ended before the reply was complete"),
        "{error}"
    );
}

#[tokio::test]
async fn model_not_found_names_the_model() {
    let body =
        r#"{"type":"error","error":{"type":"not_found_error","message":"model: test-model"}}"#;
    let server = FakeModel::new([fake::Reply::status(404, body)]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "model `test-model` not found on {} (the server says: model: test-model): check \
             --model",
            server.url()
        )
    );
}

#[test]
fn the_official_server_needs_a_key_and_describe_names_the_model() {
    let mut settings = config(ProviderKind::Anthropic, "https://api.anthropic.com");
    settings.api_key = None;
    let error = Anthropic::new(&settings).unwrap_err();
    assert!(matches!(&error, ModelError::MissingKey { key_env } if key_env == "ANTHROPIC_API_KEY"));
    settings.api_key = Some("sk-ant".into());
    assert_eq!(
        Anthropic::new(&settings).unwrap().describe(),
        "anthropic/test-model"
    );
    assert!(!format!("{:?}", Anthropic::new(&settings).unwrap()).contains("sk-ant"));
}
