//! How a call is shown to a person (the prompt, the live pane, `history show`): the server,
//! the tool, and the arguments as pretty JSON with long string values folded (head, a
//! count, tail). The screens sanitise it like a command; the transcript keeps the arguments
//! whole.

use serde_json::Value;

/// String values longer than this many characters are folded.
const FOLD_ABOVE_CHARS: usize = 200;
/// Characters kept at each end of a folded value.
const FOLD_KEEP_CHARS: usize = 60;

/// `mcp SERVER/TOOL` and, below it, the arguments (none when empty), long values folded:
/// for the live pane and summaries, never for the question that decides ([`call_text_whole`]).
#[must_use]
pub fn call_text(server: &str, tool: &str, arguments: &Value) -> String {
    call_text_whole(server, tool, &fold(arguments))
}

/// `mcp SERVER/TOOL` and the arguments whole: what a person approves is all shown (the prompt
/// wraps it and counts what does not fit, as for a command).
#[must_use]
pub fn call_text_whole(server: &str, tool: &str, arguments: &Value) -> String {
    let head = format!("mcp {server}/{tool}");
    let empty = arguments.as_object().is_some_and(serde_json::Map::is_empty) || arguments.is_null();
    if empty {
        return head;
    }
    let pretty = serde_json::to_string_pretty(arguments).unwrap_or_default();
    format!("{head}\n{pretty}")
}

/// `arguments` with every long string value folded.
fn fold(value: &Value) -> Value {
    match value {
        Value::String(text) => {
            let chars = text.chars().count();
            if chars <= FOLD_ABOVE_CHARS {
                return value.clone();
            }
            let head: String = text.chars().take(FOLD_KEEP_CHARS).collect();
            let tail: String = text.chars().skip(chars - FOLD_KEEP_CHARS).collect();
            let hidden = chars - 2 * FOLD_KEEP_CHARS;
            Value::String(format!("{head}[… {hidden} characters folded …]{tail}"))
        }
        Value::Array(items) => Value::Array(items.iter().map(fold).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), fold(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn arguments_are_pretty_and_long_values_folded_at_any_depth() {
        assert_eq!(call_text("s", "t", &json!({})), "mcp s/t");
        assert_eq!(
            call_text("s", "t", &json!({"a": 1})),
            "mcp s/t\n{\n  \"a\": 1\n}"
        );
        let long = "x".repeat(500);
        for nested in [
            json!({"v": long}),
            json!({"v": [long]}),
            json!({"v": {"w": long}}),
        ] {
            let text = call_text("s", "t", &nested);
            assert!(text.contains("[… 380 characters folded …]"), "{text}");
            assert!(text.len() < 300, "{text}");
        }
        // The whole text hides nothing, at any depth.
        let payload = format!(
            "{}; DROP TABLE users; --{}",
            "a".repeat(300),
            "b".repeat(300)
        );
        for nested in [json!({"q": payload}), json!({"q": [{"r": payload}]})] {
            assert!(call_text_whole("s", "t", &nested).contains(&payload));
            assert!(!call_text("s", "t", &nested).contains("DROP TABLE"));
        }
        let short = "y".repeat(200);
        assert!(call_text("s", "t", &json!({"v": short})).contains(&short));
    }
}
