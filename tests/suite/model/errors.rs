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
    // The message is the body's own words, not the 8 MiB of padding after them.
    assert!(
        matches!(&error, ModelError::Http { status: 400, message, .. } if message == "overloaded"),
        "{error:?}"
    );
    assert!(format!("{error}").len() < 1024, "{error:?}");
}

// ---------------------------------------------------------------------------------------------
// The server's words before the status, through the real binary: what a person sees, how many
// requests went out, and that nothing waited for a retry that cannot help.

mod words_first {
    use pretty_assertions::assert_eq;

    use crate::suite::fake_model::{FakeModel, Reply};
    use crate::suite::harness::Sandbox;

    /// Runs `agent run hi` against `server` (OpenAI wire); `(exit code, stderr)`.
    fn run(server: &FakeModel) -> (Option<i32>, String) {
        let sandbox = Sandbox::new();
        let output = sandbox.openai_run(server).arg("hi").output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// Asserts one request, exit 1, no retry notice, and `expected` as the one error line.
    fn refused_once(server: &FakeModel, expected: &str) {
        let (code, stderr) = run(server);
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(server.requests().len(), 1, "{stderr}");
        assert!(!stderr.contains("trying again"), "{stderr}");
        assert!(
            !stderr.contains("try again later") && !stderr.contains("bug in agent"),
            "{stderr}"
        );
        let line = stderr
            .lines()
            .find(|l| l.starts_with("agent: "))
            .unwrap_or_default();
        assert_eq!(line, expected.replace("{url}", &server.openai_url()));
    }

    /// `llama.cpp` server (`format_error_response`, ERROR_TYPE_SERVER) started without
    /// `--jinja` and asked for tools: HTTP 500 — retrying cannot help.
    #[test]
    fn llama_cpp_without_jinja_is_a_setup_error_not_retried() {
        let server = FakeModel::new(vec![
            Reply::status(
                500,
                r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#,
            );
            3
        ]);
        refused_once(
            &server,
            "agent: the model server at {url} cannot serve this request (HTTP 500: tools param \
             requires --jinja flag): start llama-server with `--jinja` (tool calls need the \
             model's chat template)",
        );
    }

    /// Ollama's OpenAI endpoint (`openai.NewError(500, …)`, type `api_error`) when the model
    /// does not fit in memory (continuedev/continue#11715, ollama/ollama#10920).
    #[test]
    fn ollama_out_of_memory_is_a_setup_error_not_retried() {
        let server = FakeModel::new(vec![
            Reply::status(
                500,
                r#"{"error":{"message":"model requires more system memory (5.0 GiB) than is available (3.9 GiB)","type":"api_error","param":null,"code":null}}"#,
            );
            3
        ]);
        refused_once(
            &server,
            "agent: the model server at {url} cannot serve this request (HTTP 500: model \
             requires more system memory (5.0 GiB) than is available (3.9 GiB)): free memory on \
             the server, or pick a smaller model (or a smaller quantisation) with --model",
        );
    }

    /// OpenAI's 429 `insufficient_quota` (its error-codes guide): billing, not a rate limit.
    #[test]
    fn openai_insufficient_quota_is_billing_not_retried() {
        let server = FakeModel::new(vec![
            Reply::status(
                429,
                r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
            );
            3
        ]);
        refused_once(
            &server,
            "agent: the model server at {url} refused the request for billing reasons (HTTP \
             429: You exceeded your current quota, please check your plan and billing details. \
             For more information on this error, read the docs: \
             https://platform.openai.com/docs/guides/error-codes/api-errors.): add credit or \
             raise the quota of the account the key belongs to; waiting does not help",
        );
    }

    /// OpenRouter's 402 (its errors doc; Gitlawb/openclaude#43).
    #[test]
    fn openrouter_402_is_billing() {
        let server = FakeModel::new([Reply::status(
            402,
            r#"{"error":{"message":"Insufficient credits. This account never purchased credits. Make sure your key is on the correct account or org, and if so, purchase more at https://openrouter.ai/settings/credits","code":402}}"#,
        )]);
        refused_once(
            &server,
            "agent: the model server at {url} refused the request for billing reasons (HTTP \
             402: Insufficient credits. This account never purchased credits. Make sure your key \
             is on the correct account or org, and if so, purchase more at \
             https://openrouter.ai/settings/credits): add credit or raise the quota of the \
             account the key belongs to; waiting does not help",
        );
    }

    /// Anthropic's 400 when the credit runs out (anthropics/claude-code#4684).
    #[test]
    fn anthropic_credit_balance_is_billing() {
        let sandbox = Sandbox::new();
        let server = FakeModel::new([Reply::status(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},"request_id":"req_011CbrFTcXhtiMzr3s6EocF7"}"#,
        )]);
        let output = sandbox.anthropic_run(&server).arg("hi").output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(server.requests().len(), 1);
        assert!(
            stderr.contains(&format!(
                "agent: the model server at {} refused the request for billing reasons (HTTP \
                 400: Your credit balance is too low to access the Anthropic API. Please go to \
                 Plans & Billing to upgrade or purchase credits.): add credit",
                server.url()
            )) && !stderr.contains("bug in agent"),
            "{stderr}"
        );
    }

    /// Ollama's 404 for a model not pulled (`server/routes.go`: `model %q not found, try
    /// pulling it first`, wrapped by `openai.NewError(404, …)`): its words, and the pull.
    #[test]
    fn ollama_model_not_found_is_quoted() {
        let server = FakeModel::new([Reply::status(
            404,
            r#"{"error":{"message":"model \"test-model\" not found, try pulling it first","type":"not_found_error","param":null,"code":null}}"#,
        )]);
        let sandbox = Sandbox::new();
        let output = sandbox
            .agent()
            .args([
                "run",
                "--provider",
                "ollama",
                "--model",
                "test-model",
                "--base-url",
            ])
            .arg(server.openai_url())
            .arg("hi")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert_eq!(server.requests().len(), 1);
        assert!(
            stderr.contains(&format!(
                "agent: model `test-model` not found on {} (the server says: model \
                 \"test-model\" not found, try pulling it first): pull it on the server \
                 (`ollama pull test-model`), or check --model",
                server.openai_url()
            )),
            "{stderr}"
        );
    }

    /// "may be a bug in agent" only for a 400 naming a field of the request agent built
    /// (OpenAI's `invalid_request_error` with `param`), never for one about the model.
    #[test]
    fn bug_in_agent_only_for_a_field_agent_sent() {
        let ours = FakeModel::new([Reply::status(
            400,
            r#"{"error":{"message":"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.","type":"invalid_request_error","param":"messages.[2].role","code":null}}"#,
        )]);
        let (code, stderr) = run(&ours);
        assert_eq!(code, Some(1));
        assert!(
            stderr.contains("this may be a bug in agent, please report it"),
            "{stderr}"
        );
        let theirs = FakeModel::new([Reply::status(
            400,
            r#"{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"invalid_request_error","param":null,"code":null}}"#,
        )]);
        let (code, stderr) = run(&theirs);
        assert_eq!(code, Some(1));
        assert!(
            stderr.contains("does not support tools): this model cannot call tools: pick one that can with --model")
                && !stderr.contains("bug"),
            "{stderr}"
        );
        assert_eq!(theirs.requests().len(), 1);
    }
}
