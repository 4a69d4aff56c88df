//! Long conversations: how big the model's context window is (the setting, known defaults
//! for common models, or what the server's context-length error said), when a conversation
//! is near it, and the summary that replaces the earlier part. The summary is asked of the
//! model with the conversation written out as text (tool results shortened), with no
//! tools offered, so it works the same on every provider.

use crate::model::{Message, Model, ModelError, Request, Usage};

/// Part of the context window a conversation may fill before it is compacted: room left
/// for the next message, the commands' output and the reply.
const NEAR_PERCENT: u64 = 80;
/// Characters of one message or tool result written out for the summary.
const PART_CHARS: usize = 4_000;
/// Characters of the whole written-out conversation (its end kept): well inside any window.
const TOTAL_CHARS: usize = 200_000;

/// The instruction for the summary.
const SUMMARY_PROMPT: &str = "Summarize the conversation above so that you can continue the \
    work from the summary alone: the user's goals and requests, what was done (commands run \
    and what they showed, files changed), decisions and facts learned, and what is still open. \
    Be concise and specific (names, paths, numbers). Reply with the summary only.";

/// Context windows of common models, in tokens, by name prefix (the first match counts).
const KNOWN_WINDOWS: &[(&str, u64)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
];

/// The known context window of `model` (`provider/name` or a bare name).
#[must_use]
pub fn known_window(model: &str) -> Option<u64> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    KNOWN_WINDOWS
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|(_, tokens)| *tokens)
}

/// The window a context-length error names: OpenAI's "maximum context length is N tokens",
/// Anthropic's "N tokens > M maximum", llama.cpp's "context size (N)" and the like — the
/// number after "maximum"/"context", else the largest number in the message.
#[must_use]
pub fn window_from_error(message: &str) -> Option<u64> {
    let lower = message.to_ascii_lowercase();
    let numbers: Vec<(usize, u64)> = numbers(&lower);
    for keyword in [
        "context length is",
        "context size",
        "maximum context",
        "context window",
    ] {
        if let Some(at) = lower.find(keyword)
            && let Some((_, n)) = numbers.iter().find(|(pos, _)| *pos > at)
        {
            return Some(*n);
        }
    }
    if let Some(at) = lower.find("maximum")
        && let Some((_, n)) = numbers.iter().rev().find(|(pos, _)| *pos < at)
    {
        return Some(*n);
    }
    numbers.iter().map(|(_, n)| *n).filter(|n| *n >= 512).max()
}

/// Numbers in `text` with where each starts.
fn numbers(text: &str) -> Vec<(usize, u64)> {
    let mut out = Vec::new();
    let mut start = None;
    for (at, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_ascii_digit(), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                if let Ok(n) = text[from..at].parse() {
                    out.push((from, n));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Whether a conversation of `tokens` is near a window of `window`.
#[must_use]
pub fn near(tokens: u64, window: u64) -> bool {
    window > 0 && tokens.saturating_mul(100) >= window.saturating_mul(NEAR_PERCENT)
}

/// Asks `model` for a summary of `conversation`; the summary and the tokens it took.
///
/// # Errors
/// What failed, in one line: the provider's error, or a reply without text.
pub async fn summarize<M: Model>(
    model: &mut M,
    conversation: &[Message],
) -> Result<(String, Option<Usage>), String> {
    let text = written_out(conversation);
    let messages = [Message::User(format!("{text}\n\n---\n\n{SUMMARY_PROMPT}"))];
    let request = Request {
        system: "You write summaries of conversations between a user and a coding assistant.",
        messages: &messages,
        tools: &[],
    };
    let reply = model
        .complete(&request, &mut |_| {})
        .await
        .map_err(|error: ModelError| error.to_string())?;
    let summary = reply.text.trim().to_owned();
    if summary.is_empty() {
        return Err("the model wrote no summary: the conversation is left as it was".to_owned());
    }
    Ok((summary, reply.usage))
}

/// The conversation as text for the summary: each part shortened to [`PART_CHARS`], the
/// whole to its last [`TOTAL_CHARS`].
fn written_out(conversation: &[Message]) -> String {
    let mut out = String::from("The conversation so far:\n");
    for message in conversation {
        match message {
            Message::User(text) => {
                out.push_str(&format!("\n[user]\n{}\n", shortened(text)));
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                if !text.trim().is_empty() {
                    out.push_str(&format!("\n[assistant]\n{}\n", shortened(text)));
                }
                for call in tool_calls {
                    out.push_str(&format!(
                        "\n[assistant called {}]\n{}\n",
                        call.name,
                        shortened(&call.arguments)
                    ));
                }
            }
            Message::ToolResult { content, .. } => {
                out.push_str(&format!("\n[result]\n{}\n", shortened(content)));
            }
        }
    }
    let count = out.chars().count();
    if count > TOTAL_CHARS {
        out = out.chars().skip(count - TOTAL_CHARS).collect();
        out.insert_str(0, "[… the start is left out …]\n");
    }
    out
}

fn shortened(text: &str) -> String {
    let count = text.chars().count();
    if count <= PART_CHARS {
        return text.to_owned();
    }
    let half = PART_CHARS / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!(
        "{head}\n[… {} characters left out …]\n{tail}",
        count - PART_CHARS
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn windows_come_from_the_name_or_the_error() {
        assert_eq!(known_window("openai/gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_window("anthropic/claude-sonnet-4"), Some(200_000));
        assert_eq!(known_window("ollama/llama3.2"), None);
        assert_eq!(
            window_from_error(
                "This model's maximum context length is 8192 tokens. However, your messages \
                 resulted in 9500 tokens."
            ),
            Some(8192)
        );
        assert_eq!(
            window_from_error("prompt is too long: 210000 tokens > 200000 maximum"),
            Some(200_000)
        );
        assert_eq!(
            window_from_error("the request exceeds the available context size (4096 tokens)"),
            Some(4096)
        );
        assert_eq!(window_from_error("too long"), None);
    }

    #[test]
    fn near_is_four_fifths() {
        assert!(!near(79, 100));
        assert!(near(80, 100));
        assert!(!near(1, 0));
    }

    #[test]
    fn long_parts_are_shortened_in_the_middle() {
        let long = "a".repeat(PART_CHARS) + &"b".repeat(100);
        let text = written_out(&[Message::User(long)]);
        assert!(text.contains("[… 100 characters left out …]"), "{text}");
        assert!(text.ends_with(&format!("{}\n", "b".repeat(100))));
    }
}
