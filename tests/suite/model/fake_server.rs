//! The fake server itself, used the way the binary's tests use it: from plain `#[test]`s.

use std::io::{Read, Write};

use agent::model::openai::OpenAi;
use agent::model::{Message, ProviderKind, Reasoning, StopReason};
use pretty_assertions::assert_eq;

use super::{config, turn};
use crate::suite::fake_model::{FakeModel, NO_REPLY_LEFT, turn_text, turn_tool_call};

#[test]
fn plays_turns_to_a_client_on_a_current_thread_runtime_and_records_what_it_sent() {
    let server =
        FakeModel::openai_turns([turn_tool_call("touch F", "create F"), turn_text("done")]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut model = OpenAi::new(&config(ProviderKind::OpenAi, &server.openai_url())).unwrap();
    let mut messages = vec![Message::User("create F".into())];

    let first = runtime.block_on(turn(&mut model, &messages)).0.unwrap();
    assert_eq!(first.stop, StopReason::ToolUse);
    let call = first.tool_calls[0].clone();
    assert!(call.id.starts_with("call_"), "{}", call.id);
    assert_eq!(
        call.arguments,
        r#"{"command":"touch F","description":"create F"}"#
    );
    messages.push(Message::Assistant {
        text: first.text,
        tool_calls: first.tool_calls,
        reasoning: Reasoning::default(),
    });
    messages.push(Message::ToolResult {
        call_id: call.id.clone(),
        content: r#"{"exit_code":0,"stdout":"","stderr":""}"#.into(),
    });

    let second = runtime.block_on(turn(&mut model, &messages)).0.unwrap();
    assert_eq!(second.text, "done");
    assert_eq!(server.remaining(), 0);
    let sent = server.request(1);
    assert_eq!(
        sent.tool_results(),
        [(
            call.id,
            r#"{"exit_code":0,"stdout":"","stderr":""}"#.to_owned()
        )]
    );
    assert_eq!(sent.last_user_text().as_deref(), Some("create F"));
    assert_eq!(sent.system().as_deref(), Some("You are a test."));
}

#[test]
fn an_empty_queue_answers_500_saying_so() {
    let server = FakeModel::start();
    let mut stream =
        std::net::TcpStream::connect(server.url().trim_start_matches("http://")).unwrap();
    stream
        .write_all(b"POST /v1/x HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 500 "), "{answer}");
    assert!(answer.ends_with(NO_REPLY_LEFT), "{answer}");
    let request = server.request(0);
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/x")
    );
    assert_eq!(request.body, serde_json::json!({}));
    assert_eq!(request.header("Host"), Some("x"));
}
