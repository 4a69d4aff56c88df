//! What real servers send, replayed byte for byte (shapes taken from their docs and from issues
//! in other clients), and what must come out: the calls, the text, the reasoning, and what is
//! sent back on the next request.

use agent::model::Tunable as _;
use agent::model::anthropic::Anthropic;
use agent::model::openai::OpenAi;
use agent::model::{Message, ProviderKind, Reasoning, StopReason, ToolCall};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{ask, config, fast_retry, turn, turn_with_reasoning};
use crate::suite::fake_model::{self as fake, FakeModel};

fn openai(server: &FakeModel) -> OpenAi {
    OpenAi::new(&config(ProviderKind::OpenAi, &server.openai_url()))
        .unwrap()
        .with_retry(fast_retry())
}

fn call(id: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "shell".into(),
        arguments: arguments.into(),
        extra: None,
    }
}

/// A follow-up turn: the reply, a result for each of its calls, then `answer`.
async fn follow_up(model: &mut OpenAi, reply: &agent::model::Reply) -> Vec<Message> {
    let mut messages = ask("go");
    messages.push(reply.to_message());
    for call in &reply.tool_calls {
        messages.push(Message::ToolResult {
            call_id: call.id.clone(),
            content: r#"{"exit_code":0}"#.into(),
        });
    }
    turn(model, &messages).await.0.unwrap();
    messages
}

/// Ollama's OpenAI-compatible endpoint: every call at `index: 0`, each whole in one chunk,
/// distinct ids, and `finish_reason: "stop"` after them.
const OLLAMA: &str = r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_lyywui55","index":0,"type":"function","function":{"name":"shell","arguments":"{\"command\":\"ls\",\"description\":\"list\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_0scw2dos","index":0,"type":"function","function":{"name":"shell","arguments":"{\"command\":\"pwd\",\"description\":\"where\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}

data: [DONE]

"#;

#[tokio::test]
async fn ollama_calls_sharing_index_zero_are_two_calls() {
    let server = FakeModel::new([fake::Reply::raw_sse(OLLAMA).in_pieces_of(37)]);
    let reply = turn(&mut openai(&server), &ask("ls and pwd"))
        .await
        .0
        .unwrap();
    assert_eq!(
        reply.tool_calls,
        [
            call("call_lyywui55", r#"{"command":"ls","description":"list"}"#),
            call(
                "call_0scw2dos",
                r#"{"command":"pwd","description":"where"}"#
            ),
        ]
    );
    assert_eq!(reply.stop, StopReason::ToolUse);
}

/// Gemini's OpenAI-compatible endpoint: calls without `index`, one per chunk, each with
/// `extra_content.google.thought_signature`, which Gemini 3 wants back on each call.
const GEMINI: &str = r#"data: {"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"Sig-A=="}},"function":{"arguments":"{\"command\":\"ls\",\"description\":\"list\"}","name":"shell"},"id":"function-call-1","type":"function"}]},"index":0}],"created":1,"id":"g1","model":"gemini-3-pro-preview","object":"chat.completion.chunk"}

data: {"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"Sig-B=="}},"function":{"arguments":"{\"command\":\"pwd\",\"description\":\"where\"}","name":"shell"},"id":"function-call-2","type":"function"}]},"finish_reason":"tool_calls","index":0}],"created":1,"id":"g1","model":"gemini-3-pro-preview","object":"chat.completion.chunk"}

data: [DONE]

"#;

#[tokio::test]
async fn gemini_calls_without_index_keep_and_return_their_thought_signatures() {
    let server = FakeModel::new([
        fake::Reply::raw_sse(GEMINI),
        fake::turn_text("done").openai(),
    ]);
    let mut model = openai(&server);
    let reply = turn(&mut model, &ask("ls and pwd")).await.0.unwrap();
    let ids: Vec<&str> = reply.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["function-call-1", "function-call-2"]);
    assert_eq!(
        reply.tool_calls[1].arguments,
        r#"{"command":"pwd","description":"where"}"#
    );
    follow_up(&mut model, &reply).await;
    let sent = &server.request(1).messages()[2];
    assert_eq!(
        sent["tool_calls"][0]["extra_content"],
        json!({"google": {"thought_signature": "Sig-A=="}})
    );
    assert_eq!(
        sent["tool_calls"][1]["extra_content"],
        json!({"google": {"thought_signature": "Sig-B=="}})
    );
}

/// A proxy that sends whole calls with neither `index` nor `id`, one per chunk.
const PROXY_NO_IDS: &str = r#"data: {"choices":[{"delta":{"tool_calls":[{"type":"function","function":{"name":"shell","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":null}]}

data: {"choices":[{"delta":{"tool_calls":[{"type":"function","function":{"name":"shell","arguments":"{\"command\":\"pwd\"}"}}]},"finish_reason":null}]}

data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

"#;

#[tokio::test]
async fn whole_calls_without_index_or_id_are_separate_calls() {
    let server = FakeModel::new([fake::Reply::raw_sse(PROXY_NO_IDS)]);
    let reply = turn(&mut openai(&server), &ask("x")).await.0.unwrap();
    assert_eq!(
        reply.tool_calls,
        [
            call("call_0", r#"{"command":"ls"}"#),
            call("call_1", r#"{"command":"pwd"}"#)
        ]
    );
}

/// `llama.cpp` (and MiniMax) may send `function.arguments` as the JSON object itself.
const OBJECT_ARGUMENTS: &str = r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"abc","type":"function","function":{"name":"shell","arguments":{"command":"ls -la","description":"list"}}}]}}],"created":1,"id":"chatcmpl-x","model":"qwen","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"created":1,"id":"chatcmpl-x","model":"qwen","object":"chat.completion.chunk"}

data: [DONE]

"#;

#[tokio::test]
async fn arguments_sent_as_an_object_are_accepted() {
    let server = FakeModel::new([fake::Reply::raw_sse(OBJECT_ARGUMENTS)]);
    let reply = turn(&mut openai(&server), &ask("x")).await.0.unwrap();
    let arguments: serde_json::Value =
        serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
    assert_eq!(
        arguments,
        json!({"command": "ls -la", "description": "list"})
    );
}

/// Mistral (Magistral): `delta.content` as a list of parts, thinking apart from text.
const MISTRAL_PARTS: &str = r#"data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"The user wants "}]}]},"finish_reason":null}]}

data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"a greeting."}]}]},"finish_reason":null}]}

data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"Hello"}]},"finish_reason":null}]}

data: {"id":"m1","object":"chat.completion.chunk","created":1,"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}]}

data: [DONE]

"#;

#[tokio::test]
async fn content_as_a_list_of_parts_splits_text_from_thinking() {
    let server = FakeModel::new([fake::Reply::raw_sse(MISTRAL_PARTS)]);
    let (result, text, reasoning) = turn_with_reasoning(&mut openai(&server), &ask("hi")).await;
    let reply = result.unwrap();
    assert_eq!(reply.text, "Hello!");
    assert_eq!(text, ["Hello", "!"]);
    assert_eq!(reasoning.concat(), "The user wants a greeting.");
    assert_eq!(reply.reasoning.text, "The user wants a greeting.");
}

/// DeepSeek's thinking mode: `reasoning_content` before the call; it must come back on the
/// assistant message that carried the calls, or the next request is a 400.
const DEEPSEEK: &str = r#"data: {"id":"d1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"I should list "},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"the files."},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_00_x","type":"function","function":{"name":"shell","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"ls\"}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}

data: [DONE]

"#;

#[tokio::test]
async fn deepseek_reasoning_content_goes_back_with_the_tool_calls() {
    let server = FakeModel::new([
        fake::Reply::raw_sse(DEEPSEEK),
        fake::turn_text("two files").openai(),
    ]);
    let mut model = openai(&server);
    let (result, text, reasoning) = turn_with_reasoning(&mut model, &ask("ls")).await;
    let reply = result.unwrap();
    assert!(text.is_empty(), "{text:?}");
    assert_eq!(reasoning.concat(), "I should list the files.");
    assert_eq!(reply.tool_calls, [call("call_00_x", r#"{"command":"ls"}"#)]);
    follow_up(&mut model, &reply).await;
    assert_eq!(
        server.request(1).messages()[2],
        json!({
            "role": "assistant",
            "content": null,
            "reasoning_content": "I should list the files.",
            "tool_calls": [{"id": "call_00_x", "type": "function",
                "function": {"name": "shell", "arguments": "{\"command\":\"ls\"}"}}],
        })
    );
}

#[tokio::test]
async fn reasoning_goes_back_under_the_name_it_came_and_a_final_answer_carries_none() {
    let server = FakeModel::new([
        fake::Reply::sse([
            fake::openai::chunk(json!({"reasoning": "thinking…"}), None),
            fake::openai::tool_call(0, "c1", "shell", r#"{"command":"ls"}"#),
            fake::openai::finish("tool_calls"),
            fake::openai::done(),
        ]),
        fake::turn_text("done").openai(),
    ]);
    let mut model = openai(&server);
    let reply = turn(&mut model, &ask("ls")).await.0.unwrap();
    let mut messages = follow_up(&mut model, &reply).await;
    let sent = &server.request(1).messages()[2];
    assert_eq!(sent["reasoning"], json!("thinking…"));
    assert!(sent.get("reasoning_content").is_none(), "{sent}");
    // An answer without calls goes back as plain text, reasoning dropped.
    messages.push(Message::Assistant {
        text: "done".into(),
        tool_calls: vec![],
        reasoning: Reasoning {
            text: "x".into(),
            replay: vec![json!({"reasoning_content": "x"})],
        },
    });
    messages.push(Message::User("more".into()));
    server.push(fake::turn_text("ok").openai());
    turn(&mut model, &messages).await.0.unwrap();
    assert_eq!(
        server.request(2).messages()[4],
        json!({"role": "assistant", "content": "done"})
    );
}

/// Anthropic with thinking: a `thinking` block (deltas, then its signature), a
/// `redacted_thinking` block, text, a tool call. The blocks go back first, in order, signed.
const ANTHROPIC_THINKING: &str = "event: message_start
data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me list \"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"the files.\"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds==\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":0}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va3pzix/LafPsn4a\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":1}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Listing.\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":2}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"shell\",\"input\":{}}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"ls\\\"}\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":3}

event: message_delta
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":30}}

event: message_stop
data: {\"type\":\"message_stop\"}

";

#[tokio::test]
async fn anthropic_thinking_blocks_go_back_first_in_order_with_their_signature() {
    let server = FakeModel::new([
        fake::Reply::raw_sse(ANTHROPIC_THINKING).in_pieces_of(61),
        fake::turn_text("two files").anthropic(),
    ]);
    let mut model = Anthropic::new(&config(ProviderKind::Anthropic, &server.url()))
        .unwrap()
        .with_retry(fast_retry());
    let (result, text, reasoning) = turn_with_reasoning(&mut model, &ask("ls")).await;
    let reply = result.unwrap();
    assert_eq!(text, ["Listing."]);
    assert_eq!(reasoning.concat(), "Let me list the files.");
    assert_eq!(reply.stop, StopReason::ToolUse);
    let messages = vec![
        Message::User("ls".into()),
        reply.to_message(),
        Message::ToolResult {
            call_id: "toolu_1".into(),
            content: r#"{"exit_code":0}"#.into(),
        },
    ];
    turn(&mut model, &messages).await.0.unwrap();
    assert_eq!(
        server.request(1).messages()[1]["content"],
        json!([
            {"type": "thinking", "thinking": "Let me list the files.",
             "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds=="},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"command": "ls"}},
        ])
    );
}

#[tokio::test]
async fn stop_reasons_are_read_on_both_wires() {
    let server = FakeModel::new([
        fake::Reply::sse([
            fake::openai::text("I will not"),
            fake::openai::finish("content_filter"),
            fake::openai::done(),
        ]),
        fake::Reply::sse([
            fake::openai::text("A long ans"),
            fake::openai::finish("length"),
            fake::openai::done(),
        ]),
    ]);
    let mut model = openai(&server);
    let reply = turn(&mut model, &ask("x")).await.0.unwrap();
    assert_eq!(reply.stop, StopReason::ContentFilter);
    let reply = turn(&mut model, &ask("x")).await.0.unwrap();
    assert_eq!(reply.stop, StopReason::MaxTokens);

    let server = FakeModel::new([
        fake::Reply::sse([
            fake::anthropic::message_start(),
            fake::anthropic::text(0, "No."),
            fake::anthropic::message_delta("refusal"),
            fake::anthropic::message_stop(),
        ]),
        fake::Reply::sse([
            fake::anthropic::message_start(),
            fake::anthropic::text(0, "Cut"),
            fake::anthropic::message_delta("max_tokens"),
            fake::anthropic::message_stop(),
        ]),
    ]);
    let mut model = Anthropic::new(&config(ProviderKind::Anthropic, &server.url())).unwrap();
    assert_eq!(
        turn(&mut model, &ask("x")).await.0.unwrap().stop,
        StopReason::ContentFilter
    );
    assert_eq!(
        turn(&mut model, &ask("x")).await.0.unwrap().stop,
        StopReason::MaxTokens
    );
}

#[tokio::test]
async fn max_output_tokens_is_sent_as_set_a_local_server_gets_a_default_and_anthropic_its_own() {
    let server = FakeModel::openai_turns([fake::turn_text("a"), fake::turn_text("b")]);
    turn(&mut openai(&server), &ask("x")).await.0.unwrap();
    // A server that is no known cloud API: agent's default, so a small model cannot ramble.
    let body = server.request(0).body;
    assert_eq!(body["max_tokens"], json!(8192));
    assert!(body.get("max_completion_tokens").is_none());
    let mut settings = config(ProviderKind::OpenAi, &server.openai_url());
    settings.max_output_tokens = Some(1234);
    turn(&mut OpenAi::new(&settings).unwrap(), &ask("x"))
        .await
        .0
        .unwrap();
    assert_eq!(server.request(1).body["max_tokens"], json!(1234));

    let server = FakeModel::anthropic_turns([fake::turn_text("a"), fake::turn_text("b")]);
    let mut settings = config(ProviderKind::Anthropic, &server.url());
    turn(&mut Anthropic::new(&settings).unwrap(), &ask("x"))
        .await
        .0
        .unwrap();
    assert_eq!(server.request(0).body["max_tokens"], json!(8192));
    settings.max_output_tokens = Some(64000);
    turn(&mut Anthropic::new(&settings).unwrap(), &ask("x"))
        .await
        .0
        .unwrap();
    assert_eq!(server.request(1).body["max_tokens"], json!(64000));
}

/// OpenAI streams a refusal in `delta.refusal`, not `content`: it is shown, and the turn ends
/// as a refusal (content filter), never as an empty answer.
#[tokio::test]
async fn an_openai_refusal_is_shown_and_ends_as_a_refusal() {
    let server = FakeModel::new([fake::Reply::raw_sse(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"}}]}\n\n\
         data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't help with that.\"}}]}\n\n\
         data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
         data: [DONE]\n\n",
    )]);
    let (reply, shown) = turn(&mut openai(&server), &ask("do something bad")).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "I can't help with that.");
    assert_eq!(reply.stop, StopReason::ContentFilter);
    assert_eq!(shown.concat(), "I can't help with that.");
}

// ---------------------------------------------------------------------------------------------
// The second round, through the real binary: fallbacks that finish the job, usage wherever it
// is sent, calls and thinking written into the text, Anthropic's server tools.

mod second_round {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use crate::suite::fake_model::{self as fake, Events, FakeModel, Reply, anthropic, openai};
    use crate::suite::harness::{Sandbox, events};

    fn stderr(output: &std::process::Output) -> String {
        String::from_utf8_lossy(&output.stderr).into_owned()
    }

    /// How often `needle` occurs in `haystack`.
    fn count(haystack: &str, needle: &str) -> usize {
        haystack.matches(needle).count()
    }

    /// OpenAI's 400 for `max_tokens` on its reasoning models (teilomillet/gollm#33,
    /// microsoft/vscode-copilot-release#8065): resent once with `max_completion_tokens`, and
    /// the next turn sends that name from the start.
    #[test]
    fn max_tokens_refused_is_resent_as_max_completion_tokens_for_the_rest_of_the_run() {
        let sandbox = Sandbox::new();
        let server = FakeModel::new([
            Reply::status(
                400,
                r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#,
            ),
            fake::turn_tool_call("echo hi", "say hi").openai(),
            fake::turn_text("done").openai(),
        ]);
        let output = sandbox
            .openai_run(&server)
            .args(["--max-output-tokens", "500", "say hi"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(String::from_utf8_lossy(&output.stdout), "done\n");
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].body["max_tokens"], 500);
        for request in &requests[1..] {
            assert_eq!(request.body["max_completion_tokens"], 500);
            assert!(request.body.get("max_tokens").is_none(), "{}", request.body);
        }
        assert!(!stderr(&output).contains("trying again"));
    }

    /// Anthropic's 400 for a `max_tokens` above the model's maximum (OpenHands/OpenHands#11090):
    /// resent once with the stated maximum, said once, kept for the next turn.
    #[test]
    fn anthropic_max_tokens_above_the_maximum_is_resent_with_it_and_said_once() {
        let sandbox = Sandbox::new();
        let server = FakeModel::new([
            Reply::status(
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens for claude-3-haiku-20240307"}}"#,
            ),
            fake::turn_tool_call("echo hi", "say hi").anthropic(),
            fake::turn_text("done").anthropic(),
        ]);
        let output = sandbox
            .anthropic_run(&server)
            .args(["--model", "claude-3-haiku-20240307", "say hi"])
            .output()
            .unwrap();
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let sent: Vec<Value> = server
            .requests()
            .iter()
            .map(|r| r.body["max_tokens"].clone())
            .collect();
        assert_eq!(sent, [json!(8192), json!(4096), json!(4096)]);
        assert_eq!(
            count(
                &stderr,
                "agent: `claude-3-haiku-20240307` allows at most 4096 output tokens per reply, \
                 not 8192: using 4096 for the rest of the run"
            ),
            1,
            "{stderr}"
        );
    }

    /// A `llama.cpp` server from before streamed tool calls (ggml-org/llama.cpp#12379):
    /// HTTP 500 `Cannot use tools with stream` (containers/ramalama#1431). One whole request
    /// instead, and whole requests for the rest of the run, said once; the whole
    /// `chat.completion` body (llama.cpp's non-streamed shape) is the reply.
    #[test]
    fn llama_cpp_cannot_stream_tools_gets_whole_replies_for_the_rest_of_the_run() {
        let sandbox = Sandbox::new();
        let whole = |message: Value, finish: &str| {
            Reply::status(
                200,
                json!({"choices":[{"finish_reason":finish,"index":0,"message":message}],
                    "created":1_748_000_000,"model":"qwen2.5-7b-instruct","system_fingerprint":"b5480",
                    "object":"chat.completion",
                    "usage":{"completion_tokens":20,"prompt_tokens":180,"total_tokens":200},
                    "id":"chatcmpl-llama","timings":{"prompt_n":180,"predicted_n":20}})
                .to_string(),
            )
        };
        let server = FakeModel::new([
            Reply::status(
                500,
                r#"{"error":{"code":500,"message":"Cannot use tools with stream","type":"server_error"}}"#,
            ),
            whole(
                json!({"role":"assistant","content":null,"tool_calls":[{"type":"function",
                    "function":{"name":"shell","arguments":"{\"command\":\"echo hi\",\"description\":\"say hi\"}"},
                    "id":"call_llama1"}]}),
                "tool_calls",
            ),
            whole(json!({"role":"assistant","content":"It said hi."}), "stop"),
        ]);
        let output = sandbox.openai_run(&server).arg("say hi").output().unwrap();
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "It said hi.\n");
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].body["stream"], true);
        for request in &requests[1..] {
            assert_eq!(request.body["stream"], false);
            assert!(request.body.get("stream_options").is_none());
        }
        assert!(
            requests[2].tool_results()[0].1.contains("hi"),
            "{:?}",
            requests[2].tool_results()
        );
        assert_eq!(
            count(&stderr, "cannot stream replies that may call tools"),
            1,
            "{stderr}"
        );
        assert!(!stderr.contains("trying again"), "{stderr}");
        assert!(
            stderr.contains("agent: tokens: 360 in · 40 out"),
            "{stderr}"
        );
    }

    /// A server that ignores `stream: true` and answers one `chat.completion` as
    /// `application/json` (Ollama's shape, `openai.ToChatCompletion`): used as the reply.
    #[test]
    fn a_whole_json_reply_to_a_streamed_request_is_the_answer() {
        let sandbox = Sandbox::new();
        let server = FakeModel::new([Reply::status(
            200,
            r#"{"id":"chatcmpl-310","object":"chat.completion","created":1748000000,"model":"llama3.2","system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],"usage":{"prompt_tokens":26,"completion_tokens":4,"total_tokens":30}}"#,
        )]);
        let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(String::from_utf8_lossy(&output.stdout), "Hello there.\n");
        assert_eq!(server.requests().len(), 1);
    }

    /// Groq puts the usage under `x_groq` on the last chunk (vercel/ai#1651).
    #[test]
    fn groq_usage_under_x_groq_counts() {
        let sandbox = Sandbox::new();
        let stream = r#"data: {"id":"chatcmpl-8566","object":"chat.completion.chunk","created":1716131679,"model":"llama3-8b-8192","system_fingerprint":"fp_179b0f92c9","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi!"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-8566","object":"chat.completion.chunk","created":1716131679,"model":"llama3-8b-8192","system_fingerprint":"fp_179b0f92c9","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"x_groq":{"id":"req_01hy8ppkajfqk987jv2vx88m9r","usage":{"queue_time":0.07535312,"prompt_tokens":23,"prompt_time":0.006,"completion_tokens":19,"completion_time":0.022,"total_tokens":42,"total_time":0.027999999999999997}}}

data: [DONE]

"#;
        let server = FakeModel::new([Reply::raw_sse(stream)]);
        let output = sandbox
            .openai_run(&server)
            .args(["--json", "--max-tokens", "1000", "hi"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let done = events(&output.stdout).pop().unwrap();
        assert_eq!(done["usage"]["input"], 23);
        assert_eq!(done["usage"]["output"], 19);
        assert!(!stderr(&output).contains("cannot be enforced"));
    }

    /// A server that reports no usage at all: `--max-tokens` says once that it cannot hold.
    #[test]
    fn no_usage_at_all_makes_max_tokens_say_once_it_cannot_be_enforced() {
        let sandbox = Sandbox::new();
        let server = FakeModel::new([
            fake::turn_tool_call("echo hi", "say hi").openai(),
            fake::turn_text("done").openai(),
        ]);
        let output = sandbox
            .openai_run(&server)
            .args(["--max-tokens", "1000", "say hi"])
            .output()
            .unwrap();
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert_eq!(server.requests().len(), 2);
        assert_eq!(
            count(
                &stderr,
                "agent: warning: the model server reports no token usage, so --max-tokens 1000 \
                 cannot be enforced: use --max-turns or --max-time to bound the run"
            ),
            1,
            "{stderr}"
        );
    }

    /// Qwen2.5 in the Hermes format with vLLM started without `--tool-call-parser` (or an
    /// Ollama template without tool parsing): the call is written into `content`.
    fn hermes(call: &str) -> Reply {
        let content = format!("I will run it.\n<tool_call>\n{call}\n</tool_call>");
        let mut events = Vec::new();
        // Split the way a tokenizer streams it, tags cut in the middle.
        for piece in content.as_bytes().chunks(7) {
            events.push(openai::text(std::str::from_utf8(piece).unwrap()));
        }
        events.extend([openai::finish("stop"), openai::done()]);
        Reply::sse(events)
    }

    #[test]
    fn a_hermes_call_written_as_text_runs_through_the_policy_and_is_said_once() {
        let sandbox = Sandbox::new();
        let server = FakeModel::new([
            hermes(
                r#"{"name": "shell", "arguments": {"command": "echo from-text", "description": "say"}}"#,
            ),
            hermes(
                r#"{"name": "shell", "arguments": {"command": "echo again", "description": "say"}}"#,
            ),
            fake::turn_text("done").openai(),
        ]);
        let output = sandbox.openai_run(&server).arg("say").output().unwrap();
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!stdout.contains("tool_call"), "{stdout}");
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        assert!(requests[1].tool_results()[0].1.contains("from-text"));
        let results = requests[2].tool_results();
        assert!(results[1].1.contains("again"), "{results:?}");
        assert_ne!(results[0].0, results[1].0, "each call has its own id");
        // Sent back as a structured call, the text without the block.
        let assistant = &requests[1].messages()[2];
        assert_eq!(assistant["tool_calls"][0]["function"]["name"], "shell");
        assert_eq!(assistant["content"], "I will run it.\n");
        assert_eq!(
            count(&stderr, "the server sends tool calls as text"),
            1,
            "{stderr}"
        );
        // Each server's own fix is named, llama.cpp's too.
        for fix in [
            "llama.cpp: `--jinja` with a tool-capable `--chat-template-file`",
            "vLLM: `--tool-call-parser hermes`",
        ] {
            assert!(stderr.contains(fix), "{stderr}");
        }
    }

    /// A call written as text gets the same policy as any other: no terminal, not allowed,
    /// denied — and one for a tool never offered, or with broken arguments, is only text.
    #[test]
    fn a_text_call_is_denied_like_any_other_and_unoffered_or_broken_ones_are_only_text() {
        let sandbox = Sandbox::new();
        std::fs::write(sandbox.work().join("keep"), "x").unwrap();
        let server = FakeModel::new([
            hermes(
                r#"{"name": "shell", "arguments": {"command": "rm keep", "description": "rm"}}"#,
            ),
            hermes(r#"{"name": "delete_everything", "arguments": {}}"#),
        ]);
        let output = sandbox.openai_run(&server).arg("go").output().unwrap();
        assert!(sandbox.work().join("keep").exists());
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{}", stderr(&output));
        assert!(
            requests[1].tool_results()[0].1.contains("EDENIED"),
            "{:?}",
            requests[1].tool_results()
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(
                "<tool_call>\n{\"name\": \"delete_everything\", \"arguments\": {}}\n</tool_call>"
            ),
            "{stdout}"
        );
        let broken = FakeModel::new([hermes(
            r#"{"name": "shell", "arguments": {"command": "rm keep""#,
        )]);
        let output = sandbox.openai_run(&broken).arg("go").output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(broken.requests().len(), 1);
        assert!(sandbox.work().join("keep").exists());
    }

    /// DeepSeek-R1 / QwQ / Qwen3 on `llama.cpp` or vLLM without `--reasoning-parser`: the
    /// reasoning opens the content in `<think>…</think>`. Shown as reasoning, not answer, and
    /// sent back in the content on a message that called tools.
    #[test]
    fn think_at_the_start_of_content_is_reasoning_and_goes_back_in_the_content() {
        let sandbox = Sandbox::new();
        let thinking_call = Reply::sse([
            openai::text("<thi"),
            openai::text("nk>\nI should greet"),
            openai::text(".\n</th"),
            openai::text("ink>\n\n"),
            openai::tool_call(
                0,
                "call_1",
                "shell",
                r#"{"command":"echo hi","description":"greet"}"#,
            ),
            openai::finish("tool_calls"),
            openai::done(),
        ]);
        let thinking_answer = Reply::sse([
            openai::text("<think>It worked.</think>\n\nHello!"),
            openai::finish("stop"),
            openai::done(),
        ]);
        let server = FakeModel::new([thinking_call, thinking_answer]);
        let output = sandbox
            .openai_run(&server)
            .args(["--json", "hi"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let events = events(&output.stdout);
        let text: String = events
            .iter()
            .filter(|e| e["type"] == "text_delta")
            .filter_map(|e| e["text"].as_str())
            .collect();
        assert_eq!(text, "Hello!");
        let reasoning: String = events
            .iter()
            .filter(|e| e["type"] == "reasoning_delta")
            .filter_map(|e| e["text"].as_str())
            .collect();
        assert_eq!(reasoning, "\nI should greet.\nIt worked.");
        assert_eq!(events.last().unwrap()["answer"], "Hello!");
        let sent = &server.request(1).messages()[2];
        assert_eq!(sent["content"], "<think>\nI should greet.\n</think>\n\n");
        assert_eq!(sent["tool_calls"][0]["id"], "call_1");
    }

    /// Anthropic's web search, streamed as in its streaming docs: a `server_tool_use` with its
    /// input in `input_json_delta`s, a `web_search_tool_result`, cited text, then a client
    /// `tool_use` — which runs; the server blocks go back on the next request as they came.
    #[test]
    fn anthropic_server_tool_blocks_are_kept_and_the_client_call_after_them_runs() {
        let sandbox = Sandbox::new();
        let start = |index: usize, block: Value| {
            Events::named(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": block}),
            )
        };
        let delta = |index: usize, delta: Value| {
            Events::named(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        let result = json!({"type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
            "content": [{"type": "web_search_result", "title": "Rust 1.95 released",
                "url": "https://blog.rust-lang.org/", "encrypted_content": "Ev0DCioIAxgCIiQ3NmU4",
                "page_age": null}]});
        let server = FakeModel::new([
            Reply::sse([
                anthropic::message_start(),
                start(
                    0,
                    json!({"type": "server_tool_use", "id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB", "name": "web_search", "input": {}}),
                ),
                delta(0, json!({"type": "input_json_delta", "partial_json": ""})),
                delta(
                    0,
                    json!({"type": "input_json_delta", "partial_json": "{\"query"}),
                ),
                delta(
                    0,
                    json!({"type": "input_json_delta", "partial_json": "\": \"rust 1.95\"}"}),
                ),
                anthropic::block_stop(0),
                start(1, result.clone()),
                anthropic::block_stop(1),
                start(2, json!({"type": "text", "text": "", "citations": []})),
                delta(
                    2,
                    json!({"type": "citations_delta", "citation": {"type": "web_search_result_location", "cited_text": "Rust 1.95", "url": "https://blog.rust-lang.org/", "title": "Rust 1.95 released", "encrypted_index": "Eo8BCioIAhgB"}}),
                ),
                delta(
                    2,
                    json!({"type": "text_delta", "text": "Rust 1.95 is out."}),
                ),
                anthropic::block_stop(2),
                anthropic::tool_use(
                    3,
                    "toolu_1",
                    "shell",
                    r#"{"command":"echo checked","description":"check"}"#,
                ),
                anthropic::message_delta("tool_use"),
                anthropic::message_stop(),
            ]),
            fake::turn_text("done").anthropic(),
        ]);
        let output = sandbox.anthropic_run(&server).arg("news").output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let next = server.request(1);
        assert!(
            next.tool_results()[0].1.contains("checked"),
            "{:?}",
            next.tool_results()
        );
        let blocks = next.messages()[1]["content"].as_array().cloned().unwrap();
        let types: Vec<&str> = blocks.iter().filter_map(|b| b["type"].as_str()).collect();
        assert_eq!(
            types,
            [
                "server_tool_use",
                "web_search_tool_result",
                "text",
                "tool_use"
            ]
        );
        assert_eq!(blocks[0]["input"], json!({"query": "rust 1.95"}));
        assert_eq!(blocks[1], result);
    }
}
