//! Errors that must not look like success — inside 200 streams, in place of a stream — and
//! which statuses are tried again, replayed against the fake server.

use std::time::Duration;

use agent::model::Tunable as _;
use agent::model::openai::OpenAi;
use agent::model::{ModelError, ProviderKind};
use pretty_assertions::assert_eq;

use super::{ask, config, fast_retry, turn};
use crate::suite::fake_model::{self as fake, FakeModel, openai};

fn model(server: &FakeModel) -> OpenAi {
    OpenAi::new(&config(ProviderKind::OpenAi, &server.openai_url()))
        .unwrap()
        .with_retry(fast_retry())
}

fn hello() -> fake::Reply {
    fake::turn_text("hello").openai()
}

#[tokio::test]
async fn an_error_object_in_a_200_stream_is_the_servers_error_not_retried_when_final() {
    let server = FakeModel::new([fake::Reply::raw_sse(
        "data: {\"error\":{\"message\":\"Invalid schema for function 'shell'\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}\n\ndata: [DONE]\n\n",
    )]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        matches!(&error, ModelError::Reported { transient: false, message } if message == "Invalid schema for function 'shell'"),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn vllm_error_objects_in_the_stream_are_reported() {
    let server = FakeModel::new([fake::Reply::raw_sse(
        "data: {\"object\":\"error\",\"message\":\"Tool call parser failed\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}\n\n",
    )]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model server reported an error mid-reply: Tool call parser failed: check --model \
         and --base-url; the server refused this request"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn llama_cpp_error_field_followed_by_done_is_an_error() {
    // `llama.cpp` server: an `error:` field (not `data:`), then `[DONE]`.
    let stream = "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"object\":\"chat.completion.chunk\"}\n\n\
error: {\"code\":500,\"message\":\"failed to parse tool call arguments\",\"type\":\"server_error\"}\n\n\
data: [DONE]\n\n";
    let server = FakeModel::new(vec![fake::Reply::raw_sse(stream); 3]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        matches!(&error, ModelError::Reported { transient: true, message } if message == "failed to parse tool call arguments"),
        "{error:?}"
    );
    assert_eq!(
        server.requests().len(),
        3,
        "a 500 in the stream is worth retrying"
    );
}

#[tokio::test]
async fn done_with_nothing_before_it_is_not_an_answer() {
    let server = FakeModel::new(vec![fake::Reply::raw_sse("data: [DONE]\n\n"); 3]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("`[DONE]` with no reply before it"),
        "{error}"
    );
}

#[tokio::test]
async fn a_context_length_error_in_the_stream_says_the_conversation_is_too_long() {
    let server = FakeModel::new([fake::Reply::raw_sse(
        "data: {\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.\",\"type\":\"BadRequestError\",\"code\":400}\n\n",
    )]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        matches!(error, ModelError::ContextTooLong { .. }),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_html_page_on_200_names_its_type_and_start_once() {
    let page = "<!DOCTYPE html>\n<html><head><title>Hotel WiFi \u{1b}[31mLogin</title></head>\n<body>Please accept the terms</body></html>";
    let server = FakeModel::new(vec![
        fake::Reply::body(200, "text/html; charset=utf-8", page);
        3
    ]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the model server at {} answered with `text/html; charset=utf-8` instead of an event \
             stream: `<!DOCTYPE html> <html><head><title>Hotel WiFi \\u{{1b}}[31mLogin</title></head> \
             <body>Please accept the terms</body></html>`: check --base-url (a proxy or login \
             page may be in the way)",
            server.openai_url()
        )
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn only_what_can_succeed_is_tried_again() {
    for (status, tries) in [
        (400, 1),
        (401, 1),
        (403, 1),
        (404, 1),
        (413, 1),
        (422, 1),
        (501, 1),
        (408, 2),
        (409, 2),
        (429, 2),
        (500, 2),
        (502, 2),
        (503, 2),
    ] {
        let server = FakeModel::new([fake::Reply::error(status, "nope"), hello()]);
        let result = turn(&mut model(&server), &ask("hi")).await.0;
        assert_eq!(server.requests().len(), tries, "HTTP {status}: {result:?}");
        assert_eq!(result.is_ok(), tries == 2, "HTTP {status}: {result:?}");
    }
}

#[tokio::test]
async fn a_401_without_a_key_says_to_set_one_and_shows_the_servers_words() {
    let server = FakeModel::new([fake::Reply::error(401, "missing bearer token")]);
    let mut settings = config(ProviderKind::Ollama, &server.openai_url());
    settings.api_key = None;
    let error = turn(&mut OpenAi::new(&settings).unwrap(), &ask("hi"))
        .await
        .0
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the model server at {} rejected the request: no key was sent (HTTP 401: missing \
             bearer token): set `OLLAMA_API_KEY` (or `api_key_env` in settings.toml)",
            server.openai_url()
        )
    );
}

#[tokio::test]
async fn context_length_400_and_413_say_the_conversation_is_too_long() {
    let server = FakeModel::new([
        fake::Reply::status(
            400,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ),
        fake::Reply::body(
            413,
            "text/html",
            "<html>413 Request Entity Too Large</html>",
        ),
        fake::Reply::status(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        ),
    ]);
    for _ in 0..3 {
        let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
        assert!(
            matches!(error, ModelError::ContextTooLong { .. }),
            "{error:?}"
        );
        let shown = error.to_string();
        assert!(
            shown.starts_with("the conversation is too long for the model: HTTP 4")
                && shown.contains("--max-turns")
                && shown.contains("max_output_chars")
                && !shown.contains("bug"),
            "{shown}"
        );
    }
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn sse_comments_count_as_activity_for_the_idle_timeout() {
    // OpenRouter sends `: OPENROUTER PROCESSING` while the model has not started.
    let mut events = vec![fake::Events::raw(": OPENROUTER PROCESSING\n\n"); 8];
    events.extend([openai::text("hi"), openai::finish("stop"), openai::done()]);
    let server = FakeModel::new([fake::Reply::sse(events).slow(Duration::from_millis(100))]);
    let mut model = model(&server).with_idle_timeout(Duration::from_millis(400));
    let reply = turn(&mut model, &ask("hi")).await.0.unwrap();
    assert_eq!(reply.text, "hi");
    assert_eq!(server.requests().len(), 1);
}

/// A server that opens an event and never ends it cannot make the agent hold it all: past
/// 16 MiB the turn fails with a stream error (and is not answered).
#[tokio::test]
async fn an_endless_event_is_cut_off() {
    let endless = || fake::Reply::raw_sse(format!("data: {}", "x".repeat(17 * 1024 * 1024)));
    // A broken stream is tried again: every try gets the same endless event.
    let server = FakeModel::new([endless(), endless(), endless()]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(
        matches!(&error, ModelError::Stream { message } if message.contains("larger than 16 MiB")),
        "{error:?}"
    );
}

/// An error body is read only as far as its message: a 500 with an endless body still ends.
#[tokio::test]
async fn a_huge_error_body_is_read_only_at_its_start() {
    let body = format!(
        "{{\"error\":{{\"message\":\"overloaded\"}}}}{}",
        " ".repeat(8 * 1024 * 1024)
    );
    let server = FakeModel::new([fake::Reply::body(400, "application/json", body)]);
    let error = turn(&mut model(&server), &ask("hi")).await.0.unwrap_err();
    assert!(!format!("{error}").is_empty(), "{error:?}");
}
