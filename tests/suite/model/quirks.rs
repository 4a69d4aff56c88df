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
async fn max_output_tokens_is_sent_only_when_set_and_anthropic_keeps_its_default() {
    let server = FakeModel::openai_turns([fake::turn_text("a"), fake::turn_text("b")]);
    turn(&mut openai(&server), &ask("x")).await.0.unwrap();
    let body = server.request(0).body;
    assert!(body.get("max_tokens").is_none() && body.get("max_completion_tokens").is_none());
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
