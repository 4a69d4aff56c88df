//! A conversation made fit to send: servers that read a call's arguments as JSON (`llama.cpp`
//! answers HTTP 500 "Failed to parse tool call arguments as JSON") or that require tool results
//! to answer a call and turns to alternate refuse a conversation that breaks those rules, and
//! once such a conversation is recorded every continuation of the run fails the same way.
//! [`repair`] is pure: it changes the messages and says what it changed. Reading transcripts
//! and running the loop are not done here.

use serde_json::Value;

use super::{Message, ToolCall};

/// What stands in for arguments that do not parse: an empty object every server reads.
pub const EMPTY_ARGUMENTS: &str = "{}";

/// Whether a call's raw arguments are a JSON object (what every server and tool reads).
#[must_use]
pub fn arguments_parse(arguments: &str) -> bool {
    serde_json::from_str::<Value>(arguments).is_ok_and(|value| value.is_object())
}

/// The calls as they may be sent back: arguments that do not parse replaced by `{}`; how many
/// were replaced.
#[must_use]
pub fn sendable_calls(calls: &[ToolCall]) -> (Vec<ToolCall>, usize) {
    let mut repaired = 0;
    let calls = calls
        .iter()
        .map(|call| {
            let mut call = call.clone();
            if !arguments_parse(&call.arguments) {
                call.arguments = EMPTY_ARGUMENTS.to_owned();
                repaired += 1;
            }
            call
        })
        .collect();
    (calls, repaired)
}

/// The result content for a call that was never run: the run stopped before it (interrupted, a
/// budget, a damaged transcript, a reply cut at the output limit).
#[must_use]
pub fn not_run_result() -> String {
    serde_json::json!({"error": {"message": "this call was not run: the run stopped before it \
        (interrupted, a budget, a reply cut at the output limit, or a damaged transcript); run it \
        again if it is still needed"}})
    .to_string()
}

/// How the summary that replaces a compacted conversation begins.
const SUMMARY_START: &str =
    "[The earlier part of this conversation was replaced by this summary, which you wrote:]";

/// The message that stands for the earlier conversation once a session compacted it: the
/// model's own summary, said to be one. It stays a message of its own.
#[must_use]
pub fn summary_message(summary: &str) -> Message {
    Message::User(format!("{SUMMARY_START}\n\n{summary}"))
}

/// Whether a user message is the summary of a compacted conversation.
#[must_use]
pub fn is_summary(text: &str) -> bool {
    text.starts_with(SUMMARY_START)
}

/// Whether a user message may take the next one joined to it: a summary stays apart.
#[must_use]
pub fn joinable(text: &str) -> bool {
    !is_summary(text)
}

/// The message that tells the model its last reply was cut off inside `dropped` tool calls,
/// which were dropped (never run, never sent back).
#[must_use]
pub fn cut_calls_note(dropped: usize) -> Message {
    let calls = if dropped == 1 {
        "a tool call, which was".to_owned()
    } else {
        format!("{dropped} tool calls, which were")
    };
    Message::User(format!(
        "[Your previous reply was cut off at the output limit in the middle of {calls} dropped \
         and not run. Make fewer or shorter calls per reply.]"
    ))
}

/// Makes `messages` a conversation servers accept: call arguments that do not parse become
/// `{}`, a tool result that answers no call of the assistant message before it is dropped,
/// consecutive user messages are joined (a blank line between). Returns one note per kind of
/// change, for the person.
pub fn repair(messages: &mut Vec<Message>) -> Vec<String> {
    let mut repaired_arguments = 0;
    let mut orphans = 0;
    let mut joined = 0;
    let mut open_calls: Vec<String> = Vec::new();
    let mut kept: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages.drain(..) {
        match message {
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } => {
                let (tool_calls, repaired) = sendable_calls(&tool_calls);
                repaired_arguments += repaired;
                open_calls = tool_calls.iter().map(|call| call.id.clone()).collect();
                kept.push(Message::Assistant {
                    text,
                    tool_calls,
                    reasoning,
                });
            }
            Message::ToolResult { call_id, content } => {
                if let Some(at) = open_calls.iter().position(|id| *id == call_id) {
                    open_calls.remove(at);
                    kept.push(Message::ToolResult { call_id, content });
                } else {
                    orphans += 1;
                }
            }
            Message::User(text) => {
                open_calls.clear();
                if let Some(Message::User(before)) = kept
                    .last_mut()
                    .filter(|last| matches!(last, Message::User(t) if joinable(t)))
                {
                    before.push_str("\n\n");
                    before.push_str(&text);
                    joined += 1;
                } else {
                    kept.push(Message::User(text));
                }
            }
        }
    }
    *messages = kept;
    let mut notes = Vec::new();
    if repaired_arguments > 0 {
        notes.push(format!(
            "{repaired_arguments} tool call{} with arguments that are not JSON {} sent as `{{}}`",
            plural(repaired_arguments),
            if repaired_arguments == 1 { "is" } else { "are" }
        ));
    }
    if orphans > 0 {
        notes.push(format!(
            "{orphans} tool result{} answering no call {} left out",
            plural(orphans),
            if orphans == 1 { "is" } else { "are" }
        ));
    }
    if joined > 0 {
        notes.push(format!(
            "{joined} user message{} without a reply between {} joined to the one before",
            plural(joined),
            if joined == 1 { "is" } else { "are" }
        ));
    }
    notes
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::Reasoning;
    use pretty_assertions::assert_eq;

    /// A `shell` call with `arguments` as given.
    pub(crate) fn call(id: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "shell".into(),
            arguments: arguments.into(),
            extra: None,
        }
    }

    fn assistant(calls: Vec<ToolCall>) -> Message {
        Message::Assistant {
            text: "t".into(),
            tool_calls: calls,
            reasoning: Reasoning::default(),
        }
    }

    fn result(id: &str) -> Message {
        Message::ToolResult {
            call_id: id.into(),
            content: "{}".into(),
        }
    }

    #[test]
    fn only_json_objects_are_arguments() {
        for (arguments, parses) in [
            (r#"{"command":"ls"}"#, true),
            ("{}", true),
            (" {\n} ", true),
            ("{\n    \"", false),
            ("", false),
            ("[]", false),
            ("\"ls\"", false),
            ("null", false),
            (r#"{"command":"ls"}}"#, false),
        ] {
            assert_eq!(arguments_parse(arguments), parses, "{arguments:?}");
        }
    }

    #[test]
    fn a_conversation_is_repaired_and_every_change_named() {
        let mut messages = vec![
            Message::User("first".into()),
            assistant(vec![
                call("a", r#"{"command":"ls"}"#),
                call("b", "{\n    \""),
            ]),
            result("a"),
            result("b"),
            result("zzz"),
            Message::User("second".into()),
            Message::User("second".into()),
            Message::User("third".into()),
        ];
        let notes = repair(&mut messages);
        assert_eq!(
            messages,
            vec![
                Message::User("first".into()),
                assistant(vec![call("a", r#"{"command":"ls"}"#), call("b", "{}")]),
                result("a"),
                result("b"),
                Message::User("second\n\nsecond\n\nthird".into()),
            ]
        );
        assert_eq!(
            notes,
            [
                "1 tool call with arguments that are not JSON is sent as `{}`",
                "1 tool result answering no call is left out",
                "2 user messages without a reply between are joined to the one before",
            ]
        );
        // A sound conversation is left as it is, with nothing to say.
        let sound = messages.clone();
        assert!(repair(&mut messages).is_empty());
        assert_eq!(messages, sound);
    }

    #[test]
    fn a_summary_stays_a_message_of_its_own() {
        let mut messages = vec![summary_message("we did x"), Message::User("next".into())];
        let whole = messages.clone();
        assert!(repair(&mut messages).is_empty());
        assert_eq!(messages, whole);
    }

    #[test]
    fn a_result_counts_once_and_only_after_its_call() {
        let mut messages = vec![
            result("a"),
            assistant(vec![call("a", "{}")]),
            result("a"),
            result("a"),
            Message::User("next".into()),
            result("a"),
        ];
        let notes = repair(&mut messages);
        assert_eq!(
            messages,
            vec![
                assistant(vec![call("a", "{}")]),
                result("a"),
                Message::User("next".into()),
            ]
        );
        assert_eq!(notes, ["3 tool results answering no call are left out"]);
    }
}
