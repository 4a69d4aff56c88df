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
            "`{}/chat/completions` does not exist on the model server (HTTP 404: 404 page not \
             found): check --base-url",
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

// ---------------------------------------------------------------------------------------------
// Redirects, through the real binary: a POST is never turned into a GET; 307/308 keep the
// method and the body and are followed on the same host; everything else is named with the
// base URL to use instead.

mod redirects {
    use pretty_assertions::assert_eq;

    use crate::suite::fake_model::{FakeModel, Reply, turn_text};
    use crate::suite::harness::Sandbox;

    /// nginx's own page for a moved location (`ngx_http_special_response.c`).
    const NGINX_301: &str = "<html>\r\n<head><title>301 Moved Permanently</title></head>\r\n<body>\r\n<center><h1>301 Moved Permanently</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

    #[test]
    fn a_301_302_or_303_on_the_post_is_named_with_the_base_url_to_use() {
        for status in [301, 302, 303] {
            let sandbox = Sandbox::new();
            let server = FakeModel::start();
            let moved = format!("{}/openai/v1/chat/completions?from=old", server.url());
            server.push(Reply::body(status, "text/html", NGINX_301).header("location", &moved));
            let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(1), "{stderr}");
            assert_eq!(server.requests().len(), 1, "HTTP {status}: not followed");
            assert_eq!(
                stderr
                    .lines()
                    .find(|l| l.starts_with("agent: "))
                    .unwrap_or_default(),
                format!(
                    "agent: the model server at {} redirects the request (HTTP {status}) to \
                     `{moved}`, which is not followed (a POST redirected this way arrives as a \
                     GET without its body): set --base-url to `{}/openai/v1`",
                    server.openai_url(),
                    server.url()
                ),
                "HTTP {status}"
            );
        }
    }

    #[test]
    fn a_307_or_308_on_the_same_host_is_followed_with_the_body() {
        for status in [307, 308] {
            let sandbox = Sandbox::new();
            let server = FakeModel::start();
            server.push(Reply::status(status, "").header("location", "/v2/chat/completions"));
            server.push(turn_text("moved fine").openai());
            let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
            assert_eq!(
                output.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            assert_eq!(String::from_utf8_lossy(&output.stdout), "moved fine\n");
            let requests = server.requests();
            assert_eq!(requests.len(), 2);
            assert_eq!(
                (requests[1].method.as_str(), requests[1].path.as_str()),
                ("POST", "/v2/chat/completions")
            );
            assert_eq!(requests[1].body, requests[0].body);
            assert_eq!(
                requests[1].header("authorization"),
                requests[0].header("authorization")
            );
        }
    }

    #[test]
    fn a_307_to_another_host_is_not_followed_the_key_stays_home() {
        let sandbox = Sandbox::new();
        let server = FakeModel::start();
        let elsewhere = server.url().replace("127.0.0.1", "localhost") + "/v1/chat/completions";
        server.push(Reply::status(307, "").header("location", &elsewhere));
        server.push(turn_text("must not be asked").openai());
        let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert_eq!(server.requests().len(), 1);
        assert!(
            stderr.contains("which is not followed (it leads to another host, which would receive the key): set --base-url to `http://localhost:"),
            "{stderr}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Headers for Azure and gateways, through the real binary: `api_key_header`, `[model] headers`,
// `--header`; secret values never shown or recorded.

mod headers {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use crate::suite::fake_model::{FakeModel, Reply, turn_text, turn_tool_call};
    use crate::suite::harness::{KEY, Sandbox, events};

    /// A gateway key that the model manages to print: it must not reach stdout as `--json`
    /// nor the transcript.
    const GATEWAY_KEY: &str = "pk-gateway-secret-0123456789";

    fn azure_settings(sandbox: &Sandbox, server: &FakeModel) {
        sandbox.settings(&format!(
            r#"[model]
provider = "openai"
base_url = "{}"
api_key_env = "AZURE_OPENAI_API_KEY"
api_key_header = "api-key"
headers = {{ "HTTP-Referer" = "https://example.com/agent", "X-Title" = "from settings", "X-Gateway-Key" = "{GATEWAY_KEY}" }}
"#,
            server.openai_url()
        ));
    }

    /// Azure OpenAI's classic endpoints read the key from `api-key`, bare; gateways want their
    /// own headers (OpenRouter's `HTTP-Referer`, `X-Title`); `--header` beats the file.
    #[test]
    fn the_key_goes_in_api_key_and_extra_headers_go_with_every_request() {
        let sandbox = Sandbox::new();
        let server = FakeModel::new([
            turn_tool_call(&format!("echo {GATEWAY_KEY}"), "print it").openai(),
            turn_text("done").openai(),
        ]);
        azure_settings(&sandbox, &server);
        let output = sandbox
            .agent()
            .env("AZURE_OPENAI_API_KEY", KEY)
            .args([
                "run",
                "--json",
                "--header",
                "X-Title: from the flag",
                "--allow",
                "echo",
                "go",
            ])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        for request in server.requests() {
            assert_eq!(request.header("api-key"), Some(KEY));
            assert_eq!(request.header("authorization"), None);
            assert_eq!(
                request.header("http-referer"),
                Some("https://example.com/agent")
            );
            assert_eq!(request.header("x-title"), Some("from the flag"));
            assert_eq!(request.header("x-gateway-key"), Some(GATEWAY_KEY));
        }
        // The command printed the secret: nothing sent, recorded or shown holds it.
        let sent = &server.request(1).tool_results()[0].1;
        assert!(
            !sent.contains(GATEWAY_KEY) && sent.contains("[REDACTED]"),
            "{sent}"
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            !stdout.contains(GATEWAY_KEY) && stdout.contains("[REDACTED]"),
            "{stdout}"
        );
        let transcripts = sandbox.transcripts().concat();
        assert!(!transcripts.contains(GATEWAY_KEY) && !transcripts.contains(KEY));
        assert!(events(&output.stdout).iter().any(|e| e["type"] == "done"));
    }

    #[test]
    fn config_show_names_the_headers_and_never_shows_a_secret_value() {
        let sandbox = Sandbox::new();
        let server = FakeModel::start();
        azure_settings(&sandbox, &server);
        let output = sandbox.agent().args(["config", "show"]).output().unwrap();
        let shown = String::from_utf8_lossy(&output.stdout);
        assert!(!shown.contains(GATEWAY_KEY), "{shown}");
        for line in [
            "model.api_key_header = \"api-key\"",
            "model.headers.HTTP-Referer = \"https://example.com/agent\"",
            "model.headers.X-Gateway-Key = \"<redacted>\"",
        ] {
            assert!(shown.contains(line), "{line}\n{shown}");
        }
        let output = sandbox
            .agent()
            .args(["config", "show", "--json"])
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&output.stdout);
        assert!(!shown.contains(GATEWAY_KEY), "{shown}");
        let value: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(
            value["model.headers.X-Title"]["value"],
            json!("from settings")
        );
    }

    /// Azure's 401 for a key sent as `Authorization: Bearer` (SciSharp/BotSharp#386): the
    /// server's words, and the header it wants.
    #[test]
    fn a_401_from_a_host_that_wants_api_key_says_so() {
        let body = r#"{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}"#;
        let sandbox = Sandbox::new();
        let server = FakeModel::new([Reply::status(401, body)]);
        let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(server.requests().len(), 1);
        assert!(
            stderr.contains(
                "Make sure to provide a valid key for an active subscription and use a correct \
                 regional API endpoint for your resource.): this server takes the key in an \
                 `api-key` header: set `api_key_header = \"api-key\"` in [model]"
            ),
            "{stderr}"
        );
        // Sent there already: then it is the key itself.
        let server = FakeModel::new([Reply::status(401, body)]);
        azure_settings(&sandbox, &server);
        let output = sandbox
            .agent()
            .env("AZURE_OPENAI_API_KEY", KEY)
            .args(["run", "hi"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("check that the key is valid for this server")
                && !stderr.contains("set `api_key_header"),
            "{stderr}"
        );
    }

    /// A cloned repository must not send the key elsewhere or add headers.
    #[test]
    fn a_project_file_cannot_set_headers_or_the_key_header() {
        let sandbox = Sandbox::new();
        let server = FakeModel::new([turn_text("done").openai()]);
        std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
        std::fs::write(
            sandbox.work().join(".agent/settings.toml"),
            "[model]\napi_key_header = \"x-leak\"\nheaders = { \"X-Evil\" = \"1\" }\n",
        )
        .unwrap();
        let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let request = server.request(0);
        assert_eq!(request.header("x-evil"), None);
        assert_eq!(request.header("x-leak"), None);
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert!(
            stderr.contains("`model.api_key_header` is ignored")
                && stderr.contains("`model.headers` is ignored"),
            "{stderr}"
        );
    }

    #[test]
    fn a_malformed_header_is_a_usage_or_settings_error() {
        let sandbox = Sandbox::new();
        let output = sandbox
            .agent()
            .args(["run", "--header", "no colon here", "hi"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("expected `NAME: VALUE`"),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        sandbox.settings("[model]\nheaders = { \"Bad Name\" = \"x\" }\n");
        let output = sandbox.agent().args(["run", "hi"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(
                "settings.toml:2: `Bad Name` in `model.headers` is not a valid HTTP header"
            ),
            "{stderr}"
        );
    }
}
