//! When a session picks up an earlier conversation (`-c`, `--resume`): its last exchanges
//! redrawn above the composer — the person's last few messages, each followed by the
//! model's commands as one-line summaries and the start of its answer; the person's own
//! `!command`s as typed, before the message that carried them to the model (or last, when
//! none has yet). Every text is escaped as the live screen escapes it.

use crate::model::{Message, ToolCall};
use crate::transcript::Typed;
use crate::ui::sanitize;

/// How many of the person's messages are redrawn, with what followed each.
const EXCHANGES: usize = 3;
/// Lines of an answer shown; the rest is said as `…`.
const ANSWER_LINES: usize = 6;
/// Characters of one line shown; the rest is cut with `…`.
const LINE_CHARS: usize = 160;

/// The lines that redraw the last exchanges of `messages` (none for an empty conversation),
/// with the person's `typed` commands; `waiting` are the notes of those no message carried
/// yet.
pub(super) fn recap(messages: &[Message], typed: &[Typed], waiting: &[String]) -> Vec<String> {
    let mut lines = exchanges(messages, typed);
    lines.extend(
        typed
            .iter()
            .filter(|typed| waiting.contains(&typed.note))
            .map(|typed| bang_line(&typed.command)),
    );
    lines
}

/// `› !command`, as the person typed it.
fn bang_line(command: &str) -> String {
    let mut lines = command.lines();
    let first = lines.next().unwrap_or_default();
    let more = if lines.next().is_some() { " …" } else { "" };
    format!("› !{}{more}", cut(first))
}

/// A message's text without the notes of `typed` commands it begins with, and those
/// commands' lines.
fn without_notes<'a>(mut text: &'a str, typed: &[Typed], lines: &mut Vec<String>) -> &'a str {
    while let Some(found) = typed
        .iter()
        .find(|typed| !typed.note.is_empty() && text.starts_with(&typed.note))
    {
        lines.push(bang_line(&found.command));
        text = &text[found.note.len()..];
        text = text.strip_prefix('\n').unwrap_or(text);
    }
    text
}

fn exchanges(messages: &[Message], typed: &[Typed]) -> Vec<String> {
    let users: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter_map(|(at, message)| matches!(message, Message::User(_)).then_some(at))
        .collect();
    let Some(&from) = users.get(users.len().saturating_sub(EXCHANGES)) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for message in &messages[from..] {
        match message {
            Message::User(text) => {
                let text = without_notes(text, typed, &mut lines);
                let mut words = text.lines().filter(|line| !line.trim().is_empty());
                let first = words.next().unwrap_or_default();
                let more = if words.next().is_some() { " …" } else { "" };
                lines.push(format!("› {}{more}", cut(first)));
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                lines.extend(tool_calls.iter().map(|call| format!("  {}", summary(call))));
                let answer: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                for line in answer.iter().take(ANSWER_LINES) {
                    lines.push(format!("  {}", cut(line)));
                }
                if answer.len() > ANSWER_LINES {
                    lines.push("  …".to_owned());
                }
            }
            Message::ToolResult { .. } => {}
        }
    }
    lines
}

/// One call in one line: `$ command` for the shell, the tool and its path for a file tool,
/// else the tool's name.
fn summary(call: &ToolCall) -> String {
    let arguments: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
    let field = |name: &str| arguments[name].as_str().map(str::to_owned);
    if call.name == crate::agent::SHELL
        && let Some(command) = field("command")
    {
        let mut lines = command.lines();
        let first = lines.next().unwrap_or_default();
        let more = if lines.next().is_some() { " …" } else { "" };
        return format!("$ {}{more}", cut(first));
    }
    match field("path") {
        Some(path) => cut(&format!("{} {path}", call.name)),
        None => cut(&call.name),
    }
}

/// `text` escaped (one line: no control character survives) and cut at [`LINE_CHARS`].
fn cut(text: &str) -> String {
    let shown = sanitize::escape(text).replace('\n', "\\n");
    if shown.chars().count() <= LINE_CHARS {
        return shown;
    }
    let mut kept: String = shown.chars().take(LINE_CHARS - 1).collect();
    kept.push('…');
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Reasoning;

    fn user(text: &str) -> Message {
        Message::User(text.to_owned())
    }

    fn answer(text: &str, calls: &[(&str, &str)]) -> Message {
        Message::Assistant {
            text: text.to_owned(),
            tool_calls: calls
                .iter()
                .map(|(name, arguments)| ToolCall {
                    id: "c".to_owned(),
                    name: (*name).to_owned(),
                    arguments: (*arguments).to_owned(),
                    extra: None,
                })
                .collect(),
            reasoning: Reasoning::default(),
        }
    }

    #[test]
    fn the_last_exchanges_are_redrawn_with_commands_in_one_line() {
        let mut messages = Vec::new();
        for n in 0..5 {
            messages.push(user(&format!("question {n}")));
            messages.push(answer(
                "",
                &[("shell", r#"{"command":"cargo test\nmore"}"#)],
            ));
            messages.push(Message::ToolResult {
                call_id: "c".to_owned(),
                content: "{\"stdout\":\"SECRET-OUTPUT\"}".to_owned(),
            });
            messages.push(answer(&format!("answer {n}"), &[]));
        }
        messages.push(answer(
            "",
            &[("write_file", r#"{"path":"a.txt","content":"x"}"#)],
        ));
        let lines = recap(&messages, &[], &[]);
        let text = lines.join("\n");
        assert!(
            !text.contains("question 1") && text.contains("question 2"),
            "{text}"
        );
        assert!(
            text.contains("› question 4\n  $ cargo test …\n  answer 4"),
            "{text}"
        );
        assert!(text.ends_with("  write_file a.txt"), "{text}");
        assert!(!text.contains("SECRET-OUTPUT"), "results are not redrawn");
        assert!(recap(&[], &[], &[]).is_empty());
    }

    #[test]
    fn every_line_is_escaped_and_cut() {
        let long = "é".repeat(LINE_CHARS * 2);
        let hostile = "\u{1b}]0;title\u{7}done";
        let answer_lines: String = (0..20).map(|n| format!("line {n}\n")).collect();
        let messages = [
            user(&format!("{hostile}\nsecond line")),
            answer(
                &answer_lines,
                &[("shell", &format!(r#"{{"command":"{long}"}}"#))],
            ),
            answer(hostile, &[("mystery", "not json")]),
        ];
        for line in recap(&messages, &[], &[]) {
            assert!(
                !line.contains('\u{1b}') && !line.contains('\u{7}'),
                "{line:?}"
            );
            assert!(line.chars().count() <= LINE_CHARS + 4, "{line:?}");
        }
        let text = recap(&messages, &[], &[]).join("\n");
        assert!(text.contains("  line 5\n  …"), "{text}");
        assert!(!text.contains("line 6"), "{text}");
        assert!(text.contains("  mystery"), "{text}");
    }

    #[test]
    fn typed_commands_show_as_typed_before_the_message_that_carried_them() {
        let note = |command: &str| crate::agent::typed_note(command, "{\"stdout\":\"x\\n\"}");
        let typed: Vec<Typed> = ["ls -a", "cat a\nb", "make\u{1b}[2J", "later"]
            .iter()
            .map(|command| Typed {
                command: (*command).to_owned(),
                note: note(command),
            })
            .collect();
        let carried = crate::agent::with_notes(
            &[typed[0].note.clone(), typed[1].note.clone()],
            "what changed?",
        );
        let messages = [
            user(&carried),
            answer("nothing", &[]),
            user(&crate::agent::with_notes(
                &[typed[2].note.clone()],
                "and now",
            )),
        ];
        let text = recap(&messages, &typed, &[typed[3].note.clone()]).join("\n");
        assert_eq!(
            text,
            "› !ls -a\n› !cat a …\n› what changed?\n  nothing\n› !make\\u{1b}[2J\n› and now\n› !later"
        );
    }
}
