//! What `agent` knows of `llama.cpp`'s `llama-server` beyond the OpenAI wire: how the server
//! shows itself (its `Server` header, `timings` in the stream), where its `/props` are and
//! what they say — whether the chat template can call tools at all: with `--jinja` and a
//! template without tool support the server leaves the tools out of the prompt without a
//! word, and the model, offered nothing, invents answers. Where `/props` does not say, the
//! prompt tokens the server counted tell: fewer than the tool definitions alone need.
//! Pure: fetching is the transport's, deciding when to look is the provider's.

use serde_json::Value;

use super::ToolSpec;

/// A rough count of the bytes per token of JSON and English prose under the tokenizers in use
/// (3–4; fewer bytes per token for code and JSON) — an estimate for messages, never a limit.
const BYTES_PER_TOKEN: usize = 4;
/// The tool definitions take at least this share of their estimated tokens under any real
/// tokenizer (JSON runs 3–4 bytes a token; 6 is far on the safe side): a prompt counted below
/// it cannot have held them.
const SURE_BYTES_PER_TOKEN: usize = 6;

/// Whether a `Server` response header names `llama.cpp` (`llama-server` sends `llama.cpp`).
#[must_use]
pub(super) fn is_server_header(value: &str) -> bool {
    value.to_ascii_lowercase().contains("llama.cpp")
}

/// Where `/props` is for a server at `base`: at its root, beside `/v1`.
#[must_use]
pub(super) fn props_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    format!("{root}/props")
}

/// The tokens the tool definitions take, estimated from their JSON (for messages).
#[must_use]
pub(super) fn tool_tokens(tools: &[ToolSpec]) -> u64 {
    u64::try_from(tools_bytes(tools) / BYTES_PER_TOKEN).unwrap_or(u64::MAX)
}

fn tools_bytes(tools: &[ToolSpec]) -> usize {
    tools
        .iter()
        .map(|tool| tool.name.len() + tool.description.len() + tool.parameters.to_string().len())
        .sum()
}

/// What to change on the server, the same for either sign.
const FIX: &str = "start llama-server with `--jinja` and `--chat-template-file` naming a \
    template with tool support, or serve a model whose chat template has tools";

/// The warning when the server leaves the tools out of the prompt, from its `/props` (when it
/// answered) or else the prompt tokens it counted for a request that offered `tools`. `None`:
/// no sign of it.
#[must_use]
pub(super) fn dropped_tools(
    props: Option<&Value>,
    prompt_tokens: Option<u64>,
    tools: &[ToolSpec],
) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let supports = props
        .and_then(|props| props.pointer("/chat_template_caps/supports_tool_calls"))
        .and_then(Value::as_bool);
    match supports {
        Some(false) => Some(format!(
            "the model server (llama.cpp) leaves the tools out of the prompt: its chat template \
             cannot call tools (`/props`: `chat_template_caps.supports_tool_calls` is false), so \
             the model cannot run anything and may invent answers: {FIX}"
        )),
        Some(true) => None,
        None => {
            let counted = prompt_tokens?;
            let floor = u64::try_from(tools_bytes(tools) / SURE_BYTES_PER_TOKEN).ok()?;
            (counted < floor).then(|| {
                format!(
                    "the model server counted {counted} prompt tokens, fewer than the tool \
                     definitions alone take (about {}): it likely leaves the tools out of the \
                     prompt, so the model cannot run anything and may invent answers: {FIX}",
                    tool_tokens(tools)
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn tools(bytes: usize) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "shell".into(),
            description: "d".repeat(bytes - "shell{}".len()),
            parameters: json!({}),
        }]
    }

    #[test]
    fn props_sit_beside_v1() {
        for (base, props) in [
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/props"),
            ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/props"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080/props"),
            ("http://h/llama/v1", "http://h/llama/props"),
        ] {
            assert_eq!(props_url(base), props, "{base}");
        }
        assert!(is_server_header("llama.cpp"));
        assert!(!is_server_header("uvicorn"));
    }

    #[test]
    fn props_decide_and_the_token_count_only_where_they_do_not() {
        let offered = tools(4600);
        let unsupported = json!({"chat_template_caps": {"supports_tool_calls": false}});
        let supported = json!({"chat_template_caps": {"supports_tool_calls": true}});
        let older = json!({"default_generation_settings": {"n_ctx": 8192}});
        let warned = dropped_tools(Some(&unsupported), Some(5000), &offered).unwrap();
        assert!(warned.contains("supports_tool_calls` is false"), "{warned}");
        assert_eq!(dropped_tools(Some(&supported), Some(10), &offered), None);
        // No caps in `/props` (or none at all): the count decides, with room for any tokenizer.
        for props in [Some(&older), None] {
            let warned = dropped_tools(props, Some(367), &offered).unwrap();
            assert!(
                warned.contains("counted 367 prompt tokens") && warned.contains("about 1150"),
                "{warned}"
            );
            assert_eq!(dropped_tools(props, Some(800), &offered), None);
            assert_eq!(dropped_tools(props, None, &offered), None);
        }
        assert_eq!(dropped_tools(Some(&unsupported), Some(1), &[]), None);
    }
}
