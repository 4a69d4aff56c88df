//! Retries, error statuses, broken and slow streams — through the OpenAI provider, whose
//! transport the Anthropic one shares.

use std::time::{Duration, Instant};

use agent::model::Tunable as _;
use agent::model::openai::OpenAi;
use agent::model::{ModelError, ProviderKind, Reasoning, Reply, StopReason};
use pretty_assertions::assert_eq;

use super::{ask, config, fast_retry, turn};
use crate::suite::fake_model::{self as fake, FakeModel, NO_REPLY_LEFT, anthropic, openai};

fn model(server: &FakeModel) -> OpenAi {
    OpenAi::new(&config(ProviderKind::OpenAi, &server.openai_url()))
        .unwrap()
        .with_retry(fast_retry())
}

fn hello() -> fake::Reply {
    fake::Reply::sse([
        openai::text("Hel"),
        openai::text("lo"),
        openai::finish("stop"),
        openai::done(),
    ])
}

fn hello_reply() -> Reply {
    Reply {
        text: "Hello".into(),
        tool_calls: vec![],
        stop: StopReason::EndTurn,
        reasoning: Reasoning::default(),
        usage: None,
    }
}

#[tokio::test]
async fn a_500_is_retried() {
    let server = FakeModel::new([fake::Reply::error(500, "boom"), hello()]);
    let (result, pieces) = turn(&mut model(&server), &ask("hi")).await;
    assert_eq!(result.unwrap(), hello_reply());
    assert_eq!(pieces.concat(), "Hello");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn three_500s_give_up_with_the_servers_message() {
    let server = FakeModel::start();
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        matches!(error, ModelError::Http { status: 500, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains(NO_REPLY_LEFT), "{error}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_429_waits_as_retry_after_says() {
    let server = FakeModel::new([
        fake::Reply::error(429, "slow down").header("Retry-After", "1"),
        hello(),
    ]);
    let started = Instant::now();
    let result = turn(&mut model(&server), &ask("hi")).await.0;
    assert_eq!(result.unwrap(), hello_reply());
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn running_out_of_quota_is_not_retried() {
    let body =
        r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#;
    let server = FakeModel::new([fake::Reply::status(429, body)]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        error.to_string().contains("exceeded your current quota"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_401_names_the_key_variable_and_is_not_retried() {
    let server = FakeModel::new([fake::Reply::error(401, "Incorrect API key provided")]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        matches!(&error, ModelError::Auth { key_env, status: 401, key_sent: true, .. } if key_env == "OPENAI_API_KEY")
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the model server at {} rejected the key in `OPENAI_API_KEY` (HTTP 401: Incorrect \
             API key provided): check that the key is valid for this server, or name another \
             variable with `api_key_env` in settings.toml",
            server.openai_url()
        )
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_404_about_the_model_says_check_model_and_others_check_base_url() {
    let body =
        r#"{"error":{"message":"The model `test-model` does not exist","code":"model_not_found"}}"#;
    let server = FakeModel::new([
        fake::Reply::status(404, body),
        fake::Reply::status(404, "404 page not found"),
    ]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(matches!(&error, ModelError::ModelNotFound { model, .. } if model == "test-model"));
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "`{}/chat/completions` does not exist on the model server (HTTP 404): check --base-url",
            server.openai_url()
        )
    );
}

#[tokio::test]
async fn a_cut_after_text_is_a_stream_error_without_duplicated_text() {
    let server = FakeModel::new([hello().cut_after(2), hello()]);
    let (result, pieces) = turn(&mut model(&server), &ask("hi")).await;
    let error = result.unwrap_err();
    assert!(matches!(error, ModelError::Stream { .. }), "{error:?}");
    assert_eq!(pieces.concat(), "Hello");
    assert_eq!(server.requests().len(), 1, "text was shown: no retry");
}

#[tokio::test]
async fn a_cut_before_any_text_is_retried() {
    let server = FakeModel::new([hello().cut_after(0), hello().cut_after_bytes(20), hello()]);
    let (result, pieces) = turn(&mut model(&server), &ask("hi")).await;
    assert_eq!(result.unwrap(), hello_reply());
    assert_eq!(pieces.concat(), "Hello");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_malformed_chunk_before_any_text_is_retried() {
    let server = FakeModel::new([
        fake::Reply::sse([fake::Events::raw("data: not json\n\n")]),
        hello(),
    ]);
    assert_eq!(
        turn(&mut model(&server), &ask("hi")).await.0.unwrap(),
        hello_reply()
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error_after_three_tries() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut model = OpenAi::new(&config(ProviderKind::OpenAi, &base_url))
        .unwrap()
        .with_retry(fast_retry());
    let started = Instant::now();
    let error = turn(&mut model, &ask("hi")).await.0.unwrap_err();
    let ModelError::Connect { server, .. } = &error else {
        panic!("not a connect error: {error:?}")
    };
    assert_eq!(server, &base_url);
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!("cannot reach the model server at {base_url}: ")),
        "{shown}"
    );
    assert!(
        shown.ends_with(": is it running? check --base-url"),
        "{shown}"
    );
    assert!(shown.to_lowercase().contains("refused"), "{shown}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_slow_stream_within_the_idle_timeout_works() {
    let server = FakeModel::new([hello().slow(Duration::from_millis(100))]);
    let mut model = model(&server).with_idle_timeout(Duration::from_secs(1));
    let (result, pieces) = turn(&mut model, &ask("hi")).await;
    assert_eq!(result.unwrap(), hello_reply());
    assert_eq!(pieces, ["Hel", "lo"]);
}

#[tokio::test]
async fn silence_past_the_idle_timeout_is_a_stream_error() {
    let server = FakeModel::new([hello().stall_after(1)]);
    let mut model = model(&server).with_idle_timeout(Duration::from_millis(300));
    let (result, pieces) = turn(&mut model, &ask("hi")).await;
    let error = result.unwrap_err();
    assert!(matches!(error, ModelError::Stream { .. }), "{error:?}");
    assert!(
        error.to_string().contains("sent nothing for 0.3 s"),
        "{error}"
    );
    assert_eq!(pieces, ["Hel"]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn silence_before_any_text_is_retried() {
    let server = FakeModel::new([hello().stall_after(0), hello()]);
    let mut model = model(&server).with_idle_timeout(Duration::from_millis(300));
    assert_eq!(turn(&mut model, &ask("hi")).await.0.unwrap(), hello_reply());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn lines_split_across_chunks_are_reassembled() {
    let server = FakeModel::new([fake::turn_tool_call("ls -la", "list")
        .with_text("Listing héhé.")
        .openai()
        .in_pieces_of(7)]);
    let reply = turn(&mut model(&server), &ask("ls")).await.0.unwrap();
    assert_eq!(reply.text, "Listing héhé.");
    assert_eq!(
        reply.tool_calls[0].arguments,
        r#"{"command":"ls -la","description":"list"}"#
    );

    let server = FakeModel::new([fake::Reply::sse([
        anthropic::message_start(),
        anthropic::text_split(0, &["Ok ", "then"]),
        anthropic::message_delta("end_turn"),
        anthropic::message_stop(),
    ])
    .in_pieces_of(5)]);
    let mut model =
        agent::model::anthropic::Anthropic::new(&config(ProviderKind::Anthropic, &server.url()))
            .unwrap();
    assert_eq!(
        turn(&mut model, &ask("hi")).await.0.unwrap().text,
        "Ok then"
    );
}

#[tokio::test]
async fn json_instead_of_a_stream_is_reported_once() {
    let server = FakeModel::new(vec![fake::Reply::status(200, r#"{"choices":[]}"#); 3]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        error.to_string().contains(
            "answered with `application/json` instead of an event stream: `{\"choices\":[]}`"
        ),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1);
}
