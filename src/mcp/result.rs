//! A tool call's result (`CallToolResult` as JSON) made into what the model is sent: text
//! and structured content, capped like a command's output (the cap said), images and audio
//! replaced by a one-line note, resource links listed, `isError` kept as a tool error the
//! model sees. Pure.

use serde_json::{Value, json};

/// What one call returned, ready for the model and the events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutput {
    /// The JSON sent to the model.
    pub content: String,
    /// The server said the tool failed (`isError`).
    pub is_error: bool,
    /// Characters of text before the cap.
    pub chars: usize,
    /// Text was left out to keep within the cap.
    pub truncated: bool,
}

/// Renders `result` for the model, at most `max_chars` characters of text (head and tail
/// kept, as for commands).
#[must_use]
pub fn render(server: &str, tool: &str, result: &Value, max_chars: usize) -> CallOutput {
    let mut parts: Vec<String> = Vec::new();
    let mut has_text = false;
    for item in result
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => {
                has_text = true;
                parts.push(text("text").to_owned());
            }
            "image" | "audio" => parts.push(format!(
                "[{kind} ({}, {} bytes) not shown: this conversation takes text only]",
                text("mimeType"),
                base64_bytes(text("data"))
            )),
            "resource_link" => parts.push(format!(
                "[resource link: {} <{}>]",
                text("name"),
                text("uri")
            )),
            "resource" => {
                let resource = item.get("resource").unwrap_or(&Value::Null);
                let field = |key: &str| resource.get(key).and_then(Value::as_str);
                let uri = field("uri").unwrap_or("");
                match (field("text"), field("blob")) {
                    (Some(body), _) => {
                        has_text = true;
                        parts.push(format!("[resource <{uri}>]\n{body}"));
                    }
                    (None, Some(blob)) => parts.push(format!(
                        "[resource <{uri}> ({} bytes of binary) not shown]",
                        base64_bytes(blob)
                    )),
                    (None, None) => parts.push(format!("[resource <{uri}>]")),
                }
            }
            other => parts.push(format!("[content of type `{other}` not shown]")),
        }
    }
    // Structured content usually repeats the text; it is sent when there is no text.
    if !has_text && let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null())
    {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    let text = parts.join("\n");
    let chars = text.chars().count();
    let (text, truncated) = cap(&text, chars, max_chars);
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let mut value = json!({
        "server": server,
        "tool": tool,
        "content": text,
    });
    if truncated {
        value["truncated"] = json!(true);
        value["note"] = json!(format!(
            "the result had {chars} characters; only {max_chars} are kept (head and tail)"
        ));
    }
    if is_error {
        value["is_error"] = json!(true);
    }
    CallOutput {
        content: value.to_string(),
        is_error,
        chars,
        truncated,
    }
}

/// Bytes that `data` (base64) decodes to, near enough for a note.
fn base64_bytes(data: &str) -> usize {
    data.trim_end_matches('=').len() * 3 / 4
}

/// `text` (of `chars` characters) within `max` characters: the head and the tail with a
/// marker between, never splitting a character.
fn cap(text: &str, chars: usize, max: usize) -> (String, bool) {
    if chars <= max {
        return (text.to_owned(), false);
    }
    let head = max / 2;
    let tail = max - head;
    let omitted = chars - head - tail;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(chars - tail).collect();
    (
        format!("{start}\n[… {omitted} characters omitted …]\n{end}"),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn content(result: &Value, max: usize) -> Value {
        serde_json::from_str(&render("s", "t", result, max).content).unwrap()
    }

    #[test]
    fn text_images_links_and_resources() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a", "name": "a"},
            {"type": "resource", "resource": {"uri": "file:///b", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///c", "blob": "AAAAAAAA"}},
            {"type": "mystery"}
        ]});
        assert_eq!(
            content(&result, 1000)["content"],
            "hello\n[image (image/png, 3 bytes) not shown: this conversation takes text only]\n\
             [resource link: a <file:///a>]\n[resource <file:///b>]\nbody\n\
             [resource <file:///c> (6 bytes of binary) not shown]\n[content of type `mystery` not shown]"
        );
    }

    #[test]
    fn structured_content_goes_when_there_is_no_text() {
        let result = json!({"content": [], "structuredContent": {"a": 1}});
        assert_eq!(content(&result, 1000)["content"], "{\n  \"a\": 1\n}");
        let both =
            json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": 1}});
        assert_eq!(content(&both, 1000)["content"], "x");
    }

    #[test]
    fn is_error_is_kept() {
        let result = json!({"content": [{"type": "text", "text": "boom"}], "isError": true});
        let out = render("s", "t", &result, 100);
        assert!(out.is_error);
        assert_eq!(content(&result, 100)["is_error"], true);
    }

    #[test]
    fn the_cap_keeps_head_and_tail_within_bounds_for_every_size() {
        for len in [0, 1, 9, 10, 11, 99, 1000] {
            for max in [0, 1, 2, 10, 50] {
                let text: String = (0..len)
                    .map(|i| if i % 3 == 0 { 'é' } else { 'a' })
                    .collect();
                let result = json!({"content": [{"type": "text", "text": text}]});
                let out = render("s", "t", &result, max);
                let sent = content(&result, max)["content"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                assert_eq!(out.truncated, len > max, "{len} {max}");
                if out.truncated {
                    let marker = format!("\n[… {} characters omitted …]\n", len - max);
                    assert_eq!(sent.chars().count(), max + marker.chars().count());
                    assert!(sent.contains(&marker));
                } else {
                    assert_eq!(sent, text);
                }
            }
        }
    }
}
