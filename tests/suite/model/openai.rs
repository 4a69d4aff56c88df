//! The OpenAI-compatible provider: streamed text and tool calls, the request it sends.

use agent::model::Tunable as _;
use agent::model::openai::OpenAi;
use agent::model::{
    Message, Model, ModelError, ProviderKind, Reasoning, Reply, StopReason, ToolCall,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{ask, config, fast_retry, turn};
use crate::suite::fake_model::{self as fake, Events, FakeModel, openai};

fn model(server: &FakeModel) -> OpenAi {
    OpenAi::new(&config(ProviderKind::OpenAi, &server.openai_url()))
        .unwrap()
        .with_retry(fast_retry())
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
        extra: None,
    }
}

#[tokio::test]
async fn streams_text_and_ends_the_turn() {
    let server = FakeModel::new([fake::Reply::sse([
        openai::text("Hel"),
        openai::text(""),
        openai::text("lo!"),
        openai::finish("stop"),
        openai::done(),
    ])]);
    let (result, pieces) = turn(&mut model(&server), &ask("hi")).await;
    assert_eq!(
        result.unwrap(),
        Reply {
            text: "Hello!".into(),
            tool_calls: vec![],
            stop: StopReason::EndTurn,
            reasoning: Reasoning::default(),
            usage: None,
        }
    );
    assert_eq!(pieces, ["Hel", "lo!"]);
    let request = server.request(0);
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.body["stream"], json!(true));
    assert_eq!(request.body["model"], json!("test-model"));
    assert_eq!(request.last_user_text().as_deref(), Some("hi"));
    assert_eq!(request.tool_names(), ["shell"]);
}

#[tokio::test]
async fn accumulates_two_tool_calls_split_over_interleaved_chunks() {
    let first = |args: &str| json!({"tool_calls": [{"index": 0, "function": {"arguments": args}}]});
    let second =
        |args: &str| json!({"tool_calls": [{"index": 1, "function": {"arguments": args}}]});
    let server = FakeModel::new([fake::Reply::sse([
        openai::text("Running two commands."),
        openai::chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                "function": {"name": "shell", "arguments": ""}}]}),
            None,
        ),
        openai::chunk(first(r#"{"comm"#), None),
        openai::chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                "function": {"name": "shell", "arguments": "{\"command\""}}]}),
            None,
        ),
        openai::chunk(first(r#"and": "ls"}"#), None),
        openai::chunk(second(r#": "pwd"}"#), None),
        openai::tool_call(2, "call_c", "noargs", ""),
        openai::finish("tool_calls"),
        openai::done(),
    ])]);
    let (result, pieces) = turn(&mut model(&server), &ask("ls and pwd")).await;
    assert_eq!(
        result.unwrap(),
        Reply {
            text: "Running two commands.".into(),
            tool_calls: vec![
                call("call_a", "shell", r#"{"command": "ls"}"#),
                call("call_b", "shell", r#"{"command": "pwd"}"#),
                call("call_c", "noargs", "{}"),
            ],
            stop: StopReason::ToolUse,
            reasoning: Reasoning::default(),
            usage: None,
        }
    );
    assert_eq!(pieces, ["Running two commands."]);
}

#[tokio::test]
async fn tool_calls_with_finish_reason_stop_still_mean_tool_use() {
    // Ollama's compatible endpoint says "stop" after a tool call.
    let server = FakeModel::new([fake::Reply::sse([
        openai::tool_call_split(0, "call_1", "shell", &[r#"{"command":"#, r#""ls"}"#]),
        openai::finish("stop"),
        openai::done(),
    ])]);
    let reply = turn(&mut model(&server), &ask("ls")).await.0.unwrap();
    assert_eq!(reply.stop, StopReason::ToolUse);
    assert_eq!(
        reply.tool_calls,
        [call("call_1", "shell", r#"{"command":"ls"}"#)]
    );
}

#[tokio::test]
async fn a_stream_closed_after_finish_reason_without_done_is_complete() {
    let server = FakeModel::new([fake::Reply::sse([
        openai::text("ok"),
        openai::finish("length"),
    ])]);
    let reply = turn(&mut model(&server), &ask("hi")).await.0.unwrap();
    assert_eq!(
        reply,
        Reply {
            text: "ok".into(),
            tool_calls: vec![],
            stop: StopReason::MaxTokens,
            reasoning: Reasoning::default(),
            usage: None,
        }
    );
}

#[tokio::test]
async fn sends_the_whole_conversation_in_chat_completions_shape() {
    let server = FakeModel::openai_turns([fake::turn_text("It has two files.")]);
    let messages = vec![
        Message::User("list the files".into()),
        Message::Assistant {
            text: "Listing.".into(),
            tool_calls: vec![call("call_1", "shell", r#"{"command":"ls"}"#)],
            reasoning: Reasoning::default(),
        },
        Message::ToolResult {
            call_id: "call_1".into(),
            content: r#"{"exit_code":0,"stdout":"a\nb\n"}"#.into(),
        },
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("call_2", "shell", "not json")],
            reasoning: Reasoning::default(),
        },
        Message::ToolResult {
            call_id: "call_2".into(),
            content: r#"{"error":{"code":"EDENIED","message":"no"}}"#.into(),
        },
        Message::Assistant {
            text: "Two files.".into(),
            tool_calls: vec![],
            reasoning: Reasoning::default(),
        },
        Message::User("thanks".into()),
    ];
    let reply = turn(&mut model(&server), &messages).await.0.unwrap();
    assert_eq!(reply.text, "It has two files.");
    let body = server.request(0).body;
    assert_eq!(
        body,
        json!({
            "model": "test-model",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 8192,
            "messages": [
                {"role": "system", "content": "You are a test."},
                {"role": "user", "content": "list the files"},
                {"role": "assistant", "content": "Listing.", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "shell", "arguments": "{\"command\":\"ls\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1",
                 "content": "{\"exit_code\":0,\"stdout\":\"a\\nb\\n\"}"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_2", "type": "function",
                     "function": {"name": "shell", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_2",
                 "content": "{\"error\":{\"code\":\"EDENIED\",\"message\":\"no\"}}"},
                {"role": "assistant", "content": "Two files."},
                {"role": "user", "content": "thanks"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "shell",
                "description": "Run a shell command with sh on Linux",
                "parameters": super::shell_tool().parameters,
            }}],
        })
    );
}

#[tokio::test]
async fn ollama_sends_no_authorization_without_a_key() {
    let server = FakeModel::openai_turns([fake::turn_text("hi")]);
    let mut settings = config(ProviderKind::Ollama, &server.openai_url());
    settings.api_key = None;
    let mut model = OpenAi::new(&settings).unwrap();
    assert_eq!(model.describe(), "ollama/test-model");
    turn(&mut model, &ask("hi")).await.0.unwrap();
    assert_eq!(server.request(0).header("authorization"), None);
}

#[test]
fn the_official_server_needs_a_key() {
    let mut settings = config(ProviderKind::OpenAi, "https://api.openai.com/v1");
    settings.api_key = Some("  ".into());
    let error = OpenAi::new(&settings).unwrap_err();
    assert!(matches!(&error, ModelError::MissingKey { key_env } if key_env == "OPENAI_API_KEY"));
    assert_eq!(
        error.to_string(),
        "no API key: set `OPENAI_API_KEY` (or `api_key_env` in settings.toml), or use --provider demo"
    );
}

#[test]
fn a_bad_base_url_is_reported_at_once() {
    let error = OpenAi::new(&config(ProviderKind::OpenAi, "localhost:8080")).unwrap_err();
    assert!(matches!(error, ModelError::BadUrl { .. }), "{error}");
    assert!(error.to_string().contains("check --base-url"), "{error}");
}

#[tokio::test]
async fn a_malformed_chunk_after_text_is_a_stream_error_naming_it() {
    let server = FakeModel::new([fake::Reply::sse([
        openai::text("partial"),
        Events::raw("data: {\"choices\": [oops\n\n"),
        openai::done(),
    ])]);
    let (result, pieces) = turn(&mut model(&server), &ask("hi")).await;
    let error = result.unwrap_err();
    let ModelError::Stream { message } = &error else {
        panic!("not a stream error: {error:?}")
    };
    assert!(
        message.contains("malformed chunk") && message.contains("[oops"),
        "{message}"
    );
    assert_eq!(pieces, ["partial"]);
    assert_eq!(server.requests().len(), 1, "text was shown: no retry");
}

#[tokio::test]
async fn an_error_object_in_the_stream_is_reported() {
    let server = FakeModel::new([fake::Reply::sse([
        openai::text("a"),
        openai::error("the model crashed"),
    ])]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(error.to_string().contains("the model crashed"), "{error}");
}
