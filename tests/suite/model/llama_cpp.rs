//! Replays of what a live `llama.cpp` server (`llama-server` with a small model) sent, through
//! the real binary: a reply cut inside a tool call, the 500 a cut call provokes when sent
//! back, a failed `--continue`, tools the server leaves out of the prompt, retries as events.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::suite::fake_model::{Events, FakeModel, Reply, openai, turn_text};
use crate::suite::harness::{Sandbox, events};

/// `max_tokens` ran out inside the fifth call's arguments (`{\n    "`), as SmolLM2 did with
/// `--max-output-tokens 300`: four whole calls, one cut.
fn cut_in_fifth_call() -> Reply {
    let mut stream = openai::text("Let me look.");
    for n in 0..4 {
        let arguments = json!({"command": format!("ls d{n}"), "description": "list"});
        stream = stream.then(openai::tool_call(
            n,
            &format!("call_{n}"),
            "shell",
            &arguments.to_string(),
        ));
    }
    stream = stream
        .then(openai::tool_call(4, "call_4", "shell", "{\n    \""))
        .then(openai::finish("length"))
        .then(openai::done());
    Reply::sse([stream])
}

/// A sandbox with one run in it: `prompt`, answered `answer`.
fn answered(prompt: &str, answer: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text(answer)]);
    sandbox.openai_run(&server).arg(prompt).assert().success();
    sandbox
}

/// `agent run --json PROMPT` against `server`.
fn json_run(sandbox: &Sandbox, server: &FakeModel, prompt: &str) -> std::process::Output {
    sandbox
        .openai_run(server)
        .args(["--json", prompt])
        .output()
        .unwrap()
}

/// Every call's arguments in `messages` (OpenAI wire) parse as JSON objects.
fn all_arguments_parse(messages: &[Value]) -> bool {
    messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .all(|call| {
            serde_json::from_str::<Value>(call["function"]["arguments"].as_str().unwrap_or(""))
                .is_ok_and(|v| v.is_object())
        })
}

#[test]
fn a_call_cut_at_the_limit_is_never_recorded_and_the_resumed_model_is_told() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([cut_in_fifth_call()]);
    let output = sandbox
        .openai_run(&server)
        .args(["--max-output-tokens", "300", "--json", "look around"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(5));
    let printed = events(&output.stdout);
    let turn_end = printed.iter().find(|e| e["type"] == "turn_end").unwrap();
    let recorded: Vec<&str> = turn_end["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(recorded, ["call_0", "call_1", "call_2", "call_3"]);
    assert_eq!(turn_end["cut_calls"], 1);
    let done = printed.last().unwrap();
    assert_eq!(
        done["note"],
        "the reply was cut at the model's output limit in the middle of tool call 5 of the \
         reply; none of its 5 calls was run: raise `max_output_tokens` in [model] (or \
         --max-output-tokens)"
    );

    let next = FakeModel::openai_turns([turn_text("Fewer calls, then.")]);
    sandbox
        .openai_run(&next)
        .args(["--continue", "go on"])
        .assert()
        .success()
        .stdout("Fewer calls, then.\n");
    let sent = next.request(0).messages();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "tool",
            "tool",
            "user"
        ]
    );
    assert!(all_arguments_parse(&sent), "{sent:#?}");
    assert_eq!(sent[2]["content"], "Let me look.");
    assert!(sent[3]["content"].as_str().unwrap().contains("was not run"));
    let last = sent[7]["content"].as_str().unwrap();
    assert!(
        last.starts_with(
            "[Your previous reply was cut off at the output limit in the middle of a tool call"
        ) && last.ends_with("]\n\ngo on"),
        "{last}"
    );
}

/// What `agent` before this fix recorded for the cut reply: all five calls, the last cut.
#[test]
fn a_transcript_holding_a_cut_call_is_repaired_before_it_is_sent_again() {
    let sandbox = answered("hi", "Hello.");
    let path = sandbox.transcript_paths().remove(0);
    let mut text = std::fs::read_to_string(&path).unwrap();
    let calls: Vec<Value> = (0..5)
        .map(|n| {
            let arguments = if n == 4 {
                "{\n    \"".to_owned()
            } else {
                json!({"command": "ls", "description": "list"}).to_string()
            };
            json!({"id": format!("call_{n}"), "name": "shell", "arguments": arguments})
        })
        .collect();
    for line in [
        json!({"type": "continue", "id": "x", "prompt": "look", "model": "openai/test-model", "cwd": "/w"}),
        json!({"type": "turn_end", "turn": 1, "tool_calls": calls}),
        json!({"type": "tool_result", "id": "call_9", "error": {"code": "EINVAL", "message": "x"}}),
        json!({"type": "done", "outcome": "truncated", "turns": 1, "commands_run": 0, "commands_denied": 0}),
    ] {
        text.push_str(&format!("{line}\n"));
    }
    std::fs::write(&path, text).unwrap();
    let next = FakeModel::openai_turns([turn_text("Done.")]);
    let output = sandbox
        .openai_run(&next)
        .args(["--json", "--continue", "go on"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let sent = next.request(0).messages();
    assert!(all_arguments_parse(&sent), "{sent:#?}");
    assert_eq!(sent[4]["tool_calls"][4]["function"]["arguments"], "{}");
    let marker = &events(&output.stdout)[0];
    assert!(
        marker["note"]
            .as_str()
            .unwrap()
            .contains("1 tool call with arguments that are not JSON is sent as `{}`"),
        "{marker}"
    );
}

/// llama.cpp's answer to a call whose arguments are not JSON: the request is at fault, so
/// trying it again cannot help.
#[test]
fn a_500_naming_the_request_is_not_tried_again() {
    let sandbox = Sandbox::new();
    let body = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 2, column 5: syntax error while parsing object key - unexpected end of input; expected string literal","type":"server_error"}}"#;
    let server = FakeModel::new(vec![Reply::status(500, body); 3]);
    let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(server.requests().len(), 1, "{stderr}");
    assert!(
        !stderr.contains("trying again") && !stderr.contains("try again later"),
        "{stderr}"
    );
    assert!(
        stderr.contains("HTTP 500: Failed to parse tool call arguments as JSON")
            && stderr.contains("trying it again cannot help"),
        "{stderr}"
    );
}

#[test]
fn a_continue_that_failed_leaves_no_prompt_behind() {
    let sandbox = answered("first", "One.");
    // A dead server twice: nothing listens on the port any more.
    let dead = FakeModel::start();
    let url = dead.openai_url();
    drop(dead);
    for _ in 0..2 {
        sandbox
            .agent()
            .env("OPENAI_API_KEY", crate::suite::harness::KEY)
            .args(["run", "--provider", "openai", "--base-url", &url])
            .args(["--continue", "second"])
            .assert()
            .code(1);
    }
    let live = FakeModel::openai_turns([turn_text("Three.")]);
    sandbox
        .openai_run(&live)
        .args(["--continue", "third"])
        .assert()
        .success();
    let sent = live.request(0).messages();
    let said: Vec<(&str, &str)> = sent
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .skip(1)
        .collect();
    assert_eq!(
        said,
        [("user", "first"), ("assistant", "One."), ("user", "third")]
    );
    // The attempts are recorded all the same.
    let text = std::fs::read_to_string(sandbox.transcript_paths().remove(0)).unwrap();
    assert_eq!(text.matches("\"prompt\":\"second\"").count(), 2);
}

#[test]
fn done_counts_no_turn_when_none_finished() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new(vec![Reply::status(503, "busy"); 3]);
    let output = json_run(&sandbox, &server, "hi");
    assert_eq!(output.status.code(), Some(1));
    let done = events(&output.stdout).pop().unwrap();
    assert_eq!(
        (done["type"].clone(), done["turns"].clone()),
        (json!("done"), json!(0))
    );
}

/// llama-server's last chunk: the finish, `usage` and its own `timings`.
fn llama_final(reason: &str, prompt_tokens: u64) -> Events {
    Events::data(&json!({
        "choices": [{"finish_reason": reason, "index": 0, "delta": {}}],
        "created": 1_764_900_000,
        "id": "chatcmpl-Qx2",
        "model": "SmolLM2-135M-Instruct",
        "system_fingerprint": "b7220-5e3c4d1",
        "object": "chat.completion.chunk",
        "usage": {"completion_tokens": 12, "prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + 12},
        "timings": {"prompt_n": prompt_tokens, "prompt_ms": 80.2, "predicted_n": 12, "predicted_ms": 95.1},
    }))
}

/// An answer with no call, as SmolLM2 gave it when the tools never reached its prompt.
fn invented_answer(prompt_tokens: u64) -> Reply {
    Reply::sse([
        openai::text("There are 3 files: a.txt, b.txt and c.txt."),
        llama_final("stop", prompt_tokens),
        openai::done(),
    ])
}

/// `GET /props` of llama-server with a template that cannot call tools (the parts read).
fn props(supports_tool_calls: bool) -> Reply {
    Reply::status(
        200,
        json!({
            "default_generation_settings": {"n_ctx": 8192, "params": {"n_predict": -1}},
            "total_slots": 1,
            "model_path": "/models/SmolLM2-135M-Instruct-Q8_0.gguf",
            "chat_template": "{% for message in messages %}…{% endfor %}",
            "chat_template_caps": {
                "supports_parallel_tool_calls": false,
                "supports_system_role": true,
                "supports_tool_calls": supports_tool_calls,
                "supports_tools": supports_tool_calls,
            },
            "build_info": "b7220-5e3c4d1",
        })
        .to_string(),
    )
}

fn warnings(output: &std::process::Output) -> Vec<Value> {
    events(&output.stdout)
        .into_iter()
        .filter(|e| e["type"] == "warning")
        .collect()
}

#[test]
fn a_llama_cpp_server_whose_template_cannot_call_tools_is_named_once() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([invented_answer(367).header("Server", "llama.cpp")])
        .route("/props", props(false));
    let output = json_run(&sandbox, &server, "how many files are here?");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warned = warnings(&output);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(warned[0]["code"], "tools_dropped");
    let message = warned[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the model server (llama.cpp) leaves the tools out of the prompt")
            && message.contains("--chat-template-file"),
        "{message}"
    );
    assert!(
        stderr.contains(&format!("agent: warning: {message}")),
        "{stderr}"
    );
    assert_eq!(server.gets(), ["/v1/models", "/props"]);
    // Said first: before the model's (invented) answer reaches the screen or the events.
    let kinds: Vec<Value> = events(&output.stdout)
        .into_iter()
        .map(|e| e["type"].clone())
        .collect();
    let warned_at = kinds.iter().position(|k| k == "warning").unwrap();
    let text_at = kinds.iter().position(|k| k == "text_delta").unwrap();
    assert!(warned_at < text_at, "{kinds:?}");
}

#[test]
fn without_props_a_prompt_smaller_than_the_tools_tells() {
    let sandbox = Sandbox::new();
    // Known by its `timings` alone; `/props` answers 404 (an older server).
    let server = FakeModel::new([invented_answer(367)]);
    let output = json_run(&sandbox, &server, "how many files are here?");
    assert_eq!(output.status.code(), Some(0));
    let warned = warnings(&output);
    assert_eq!(warned.len(), 1, "{warned:?}");
    let message = warned[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "the model server counted 367 prompt tokens, fewer than the tool definitions alone take"
        ),
        "{message}"
    );
    assert_eq!(server.gets(), ["/v1/models", "/props"]);
}

#[test]
fn no_warning_where_the_tools_arrive_or_the_server_is_not_llama_cpp() {
    // A template with tools, over two turns: `/props` is read once, nothing is said.
    let sandbox = Sandbox::new();
    let call = Reply::sse([
        openai::tool_call(
            0,
            "c0",
            "shell",
            r#"{"command":"pwd","description":"where"}"#,
        ),
        llama_final("tool_calls", 367),
        openai::done(),
    ]);
    let server = FakeModel::new([call, invented_answer(400)]).route("/props", props(true));
    let output = json_run(&sandbox, &server, "where am I?");
    assert_eq!(output.status.code(), Some(0));
    assert!(warnings(&output).is_empty());
    assert_eq!(server.gets(), ["/v1/models", "/props"]);
    // Another server (no `Server: llama.cpp`, no `timings`, no `/props`): asked once, before
    // the first reply, and nothing said.
    let other = FakeModel::new([Reply::sse([
        openai::text("Hi."),
        openai::finish("stop"),
        openai::usage(10, 2, 0),
        openai::done(),
    ])]);
    let output = json_run(&sandbox, &other, "hi");
    assert!(warnings(&output).is_empty());
    assert_eq!(other.gets(), ["/v1/models", "/props"]);
}

#[test]
fn a_retry_is_an_event_in_json() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([
        Reply::error(503, "Loading model"),
        turn_text("Ready now.").openai(),
    ]);
    let output = json_run(&sandbox, &server, "hi");
    assert_eq!(output.status.code(), Some(0));
    let printed = events(&output.stdout);
    let retries: Vec<&Value> = printed.iter().filter(|e| e["type"] == "retry").collect();
    assert_eq!(retries.len(), 1, "{printed:?}");
    let retry = retries[0];
    assert_eq!(
        (
            &retry["attempt"],
            &retry["tries"],
            &retry["delay_ms"],
            &retry["code"]
        ),
        (&json!(2), &json!(3), &json!(500), &json!("http"))
    );
    assert!(
        retry["reason"]
            .as_str()
            .unwrap()
            .contains("HTTP 503: Loading model"),
        "{retry}"
    );
    // Recorded too, between the start and the answer.
    let recorded = events(&std::fs::read(sandbox.transcript_paths().remove(0)).unwrap());
    let kinds: Vec<&str> = recorded
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[..2], ["start", "retry"]);
}

/// A hung server: the configured idle timeout fires, and the error names it.
#[test]
fn the_idle_timeout_is_a_setting_and_named_when_it_fires() {
    let sandbox = Sandbox::new();
    sandbox.settings("[model]\nidle_timeout_secs = 1\n");
    let server =
        FakeModel::new([Reply::sse([openai::text("Thinking"), openai::done()]).stall_after(1)]);
    let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "the server sent nothing for 1 s mid-reply (the idle timeout: raise \
             `idle_timeout_secs` in [model] for a slower server)"
        ),
        "{stderr}"
    );
    let shown = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("model.idle_timeout_secs"), "{shown}");
}

/// No `-n` and no limit of the person's: the reply ended `length` because prompt and output
/// filled the server's context (1,321 + 6,871 = 8,192 = `n_ctx`), short of agent's default.
#[test]
fn a_reply_stopped_by_a_full_context_says_so_not_raise_the_limit() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([Reply::sse([
        openai::text("Here is the whole file: …"),
        Events::data(&json!({
            "choices": [{"finish_reason": "length", "index": 0, "delta": {}}],
            "object": "chat.completion.chunk",
            "usage": {"completion_tokens": 6871, "prompt_tokens": 1321, "total_tokens": 8192},
            "timings": {"prompt_n": 1321, "predicted_n": 6871},
        })),
        openai::done(),
    ])]);
    let output = sandbox
        .openai_run(&server)
        .arg("write it")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert_eq!(server.request(0).body["max_tokens"], json!(8192));
    assert!(
        stderr.contains(
            "the answer was cut by the server after 6871 output tokens, short of the output \
             limit (8192): its context is likely full (1321 prompt + 6871 output = 8192 tokens)"
        ) && stderr.contains("llama-server `-c`")
            && !stderr.contains("raise `max_output_tokens`"),
        "{stderr}"
    );
}

/// vLLM counts `max_tokens` into its context: agent's default goes, the request is made again
/// once without it (a limit the person set stays, and gets the error).
#[test]
fn a_server_refusing_the_default_limit_gets_none() {
    let sandbox = Sandbox::new();
    let refusal = "This model's maximum context length is 4096 tokens. However, you requested \
                   9400 tokens (1208 in the messages, 8192 in the completion). Please reduce the \
                   length of the messages or completion.";
    let server = FakeModel::new([Reply::error(400, refusal), turn_text("Fine.").openai()]);
    sandbox
        .openai_run(&server)
        .arg("hi")
        .assert()
        .success()
        .stdout("Fine.\n");
    assert_eq!(server.request(0).body["max_tokens"], json!(8192));
    assert!(server.request(1).body.get("max_tokens").is_none());
    let server = FakeModel::new([Reply::error(400, refusal), turn_text("Fine.").openai()]);
    sandbox
        .openai_run(&server)
        .args(["--max-output-tokens", "8192", "hi"])
        .assert()
        .code(1);
    assert_eq!(server.requests().len(), 1);
}

/// `llama-server -c 1536`: the system prompt, tool schemas and task (1,600 tokens, as the server
/// counted them) do not fit. The advice is a larger context, not a narrower task; later in a run it is the task.
#[test]
fn an_overflow_before_any_reply_asks_for_a_larger_context() {
    let sandbox = Sandbox::new();
    let body = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":1600,"n_ctx":1536}}"#;
    let server = FakeModel::new([Reply::status(400, body)]);
    let output = json_run(&sandbox, &server, "hi");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "agent: the server's context (1536 tokens) is smaller than the agent's prompt (1600 \
             tokens: system prompt, tool definitions and the task)"
        ) && stderr.contains("restart the server with a larger context (llama-server `-c`"),
        "{stderr}"
    );
    let error = events(&output.stdout)
        .into_iter()
        .find(|e| e["type"] == "error")
        .unwrap();
    assert_eq!(error["code"], "context_too_small");
    // After a reply: the conversation grew, the old advice holds (in a context the agent's
    // own prompt fits in: the prompt alone is close to 1024 tokens).
    let grown = body.replace("1321", "9000").replace("1024", "8192");
    let server = FakeModel::new([
        crate::suite::fake_model::turn_tool_call("pwd", "where").openai(),
        Reply::status(400, grown),
    ]);
    let output = sandbox.openai_run(&server).arg("hi").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("agent: the conversation is too long for the model"),
        "{stderr}"
    );
}

fn shell_call(n: usize, arguments: &Value) -> Events {
    openai::tool_call(n, &format!("call_{n}"), "shell", &arguments.to_string())
}

/// SmolLM2 made 30 calls in one reply, the same one six times: each distinct call is handled
/// once, and none past the 16th; the rest are answered with `ELOOP`.
#[test]
fn one_reply_gets_each_call_once_and_at_most_sixteen() {
    let sandbox = Sandbox::new();
    let pwd = json!({"command": "pwd", "description": "where"});
    let mut calls: Vec<Events> = (0..6).map(|n| shell_call(n, &pwd)).collect();
    calls.extend((6..30).map(|n| {
        shell_call(
            n,
            &json!({"command": format!("echo {n}"), "description": "say"}),
        )
    }));
    calls.extend([openai::finish("tool_calls"), openai::done()]);
    let server = FakeModel::new([Reply::sse(calls), turn_text("Done.").openai()]);
    let output = json_run(&sandbox, &server, "go");
    assert_eq!(output.status.code(), Some(0));
    let done = events(&output.stdout).pop().unwrap();
    // Of the first 16: pwd once, echo 6 … echo 15.
    assert_eq!(done["commands_run"], 11, "{done}");
    let results = server.request(1).tool_results();
    assert_eq!(results.len(), 30);
    let refused: Vec<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, (_, content))| content.contains("ELOOP"))
        .map(|(at, _)| at)
        .collect();
    let mut expected: Vec<usize> = (1..6).collect();
    expected.extend(16..30);
    assert_eq!(refused, expected);
    assert!(
        results[1].1.contains("same as call `call_0`"),
        "{}",
        results[1].1
    );
    assert!(
        results[29].1.contains("only the first 16"),
        "{}",
        results[29].1
    );
}

/// A command allowed but refused by the runner for its directory (`ECWD`) counts as run,
/// like the runner's other refusals.
#[test]
fn a_command_refused_for_its_directory_counts_as_run() {
    let sandbox = Sandbox::new();
    let call = json!({"command": "pwd", "description": "where", "working_directory": "/"});
    let server = FakeModel::new([
        Reply::sse([
            shell_call(0, &call),
            openai::finish("tool_calls"),
            openai::done(),
        ]),
        turn_text("Done.").openai(),
    ]);
    let output = json_run(&sandbox, &server, "go");
    assert_eq!(output.status.code(), Some(0));
    assert!(server.request(1).tool_results()[0].1.contains("ECWD"));
    let done = events(&output.stdout).pop().unwrap();
    assert_eq!(done["commands_run"], 1, "{done}");
}

/// `GET /v1/models` of a llama-server started with `--alias`.
fn models(ids: &[&str]) -> Reply {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "llamacpp"}))
        .collect();
    Reply::status(200, json!({"object": "list", "data": data}).to_string())
}

#[test]
fn with_no_model_named_a_custom_server_is_asked_which_it_serves() {
    let sandbox = Sandbox::new();
    let server =
        FakeModel::openai_turns([turn_text("Hi.")]).route("/v1/models", models(&["smollm2"]));
    let output = json_run(&sandbox, &server, "hi");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(server.request(0).body["model"], "smollm2");
    assert_eq!(events(&output.stdout)[0]["model"], "openai/smollm2");
    assert_eq!(server.gets(), ["/v1/models", "/props"]);

    // Several: none is guessed, all are named.
    let server = FakeModel::openai_turns([turn_text("Hi.")])
        .route("/v1/models", models(&["qwen3-8b", "smollm2"]));
    sandbox
        .openai_run(&server)
        .arg("hi")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "serves 2 models (`qwen3-8b`, `smollm2`) and none is named: choose one with --model",
        ));
    assert!(server.requests().is_empty());

    // A model named: its list is not asked for (`/props` still is, before the first reply).
    let server = FakeModel::openai_turns([turn_text("Hi.")])
        .route("/v1/models", models(&["qwen3-8b", "smollm2"]));
    sandbox
        .openai_run(&server)
        .args(["--model", "qwen3-8b", "hi"])
        .assert()
        .success();
    assert_eq!(server.gets(), ["/props"]);
    assert_eq!(server.request(0).body["model"], "qwen3-8b");
}
