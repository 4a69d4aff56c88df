//! What a finished reply leaves in the conversation, and what a reply cut short says: a call
//! whose arguments were cut is dropped (never run, recorded or sent back), arguments that do
//! not parse go back as `{}`, the prompt of an invocation nothing answered is taken back, and
//! the note of a cut reply names its cause — agent's output limit or the server's own context.

use crate::model::{Message, Reply, StopReason, ToolCall, Usage};
use crate::tool_error::{ToolError, ToolErrorCode};

/// How to take back a prompt pushed onto a conversation.
pub(super) struct PromptUndo {
    /// The conversation's length before the prompt.
    len: usize,
    /// Its last message before, when the prompt was joined to it.
    joined: Option<Message>,
}

impl PromptUndo {
    pub(super) fn undo(self, messages: &mut Vec<Message>) {
        messages.truncate(self.len);
        if let (Some(before), Some(last)) = (self.joined, messages.last_mut()) {
            *last = before;
        }
    }
}

/// Pushes `prompt`, joined to a user message the conversation ends with (a note about a cut
/// reply, a prompt never answered), a summary excepted: servers want turns to alternate.
pub(super) fn push_prompt(messages: &mut Vec<Message>, prompt: &str) -> PromptUndo {
    let len = messages.len();
    if let Some(Message::User(last)) = messages
        .last_mut()
        .filter(|last| matches!(last, Message::User(text) if crate::model::repair::joinable(text)))
    {
        let joined = Some(Message::User(last.clone()));
        last.push_str("\n\n");
        last.push_str(prompt);
        return PromptUndo { len, joined };
    }
    messages.push(Message::User(prompt.to_owned()));
    PromptUndo { len, joined: None }
}

/// Drops the calls of a reply cut at the output limit whose arguments were cut (they do not
/// parse): such a call is never run, recorded or sent back. How many were dropped.
pub(super) fn drop_cut_calls(reply: &mut Reply) -> usize {
    if reply.stop != StopReason::MaxTokens {
        return 0;
    }
    let before = reply.tool_calls.len();
    reply
        .tool_calls
        .retain(|call| crate::model::repair::arguments_parse(&call.arguments));
    before - reply.tool_calls.len()
}

/// The reply as it goes back to the model: arguments that do not parse (the model's mistake,
/// answered with `EINVAL`) are sent as `{}`, which every server reads.
pub(super) fn sent_message(reply: &Reply) -> Message {
    Message::Assistant {
        text: reply.text.clone(),
        tool_calls: crate::model::repair::sendable_calls(&reply.tool_calls).0,
        reasoning: reply.reasoning.clone(),
    }
}

/// What a reply cut at the output limit leaves in the conversation (as a continued run
/// rebuilds it): its text and whole calls, each answered "not run", and a note to the model
/// about the calls that were cut.
pub(super) fn keep_cut_reply(reply: &Reply, cut: usize, messages: &mut Vec<Message>) {
    messages.push(sent_message(reply));
    for call in &reply.tool_calls {
        messages.push(Message::ToolResult {
            call_id: call.id.clone(),
            content: crate::model::repair::not_run_result(),
        });
    }
    if cut > 0 {
        messages.push(crate::model::repair::cut_calls_note(cut));
    }
}

/// What a reply cut short lost — the answer's end, or its tool calls (`whole` complete ones
/// and `cut` cut off inside, none of which ran) — and why: agent's output limit (`limit`), or
/// the server's own context or limit, told by the tokens it counted (`usage`).
pub(super) fn cut_note(
    whole: usize,
    cut: usize,
    limit: Option<u32>,
    usage: Option<Usage>,
) -> String {
    let early = usage.filter(|usage| limit.is_none_or(|limit| usage.output < u64::from(limit)));
    let (at, fix) = match early {
        None => (
            "at the model's output limit".to_owned(),
            "raise `max_output_tokens` in [model] (or --max-output-tokens)".to_owned(),
        ),
        Some(usage) => (
            format!(
                "by the server after {} output tokens, {}",
                usage.output,
                limit.map_or_else(
                    || "with no output limit asked".to_owned(),
                    |limit| format!("short of the output limit ({limit})")
                )
            ),
            format!(
                "its context is likely full ({} prompt + {} output = {} tokens) or it has an \
                 output limit of its own: give the server a larger context (llama-server `-c`) \
                 or lift its limit (`-n`), or start a new run with a narrower task",
                usage.input,
                usage.output,
                usage.input + usage.output
            ),
        ),
    };
    match (whole, cut) {
        (0, 0) if early.is_none() => format!("the answer was cut {at}: {fix} to get it whole"),
        (0, 0) => format!("the answer was cut {at}: {fix}"),
        (whole, 0) => format!(
            "the reply was cut {at} after {whole} tool call{}, which {} not run: {fix}",
            if whole == 1 { "" } else { "s" },
            if whole == 1 { "was" } else { "were" },
        ),
        (whole, cut) => {
            let total = whole + cut;
            let calls = if total == 1 {
                "a tool call, which was not".to_owned()
            } else {
                format!("tool call {total} of the reply; none of its {total} calls was")
            };
            format!("the reply was cut {at} in the middle of {calls} run: {fix}")
        }
    }
}

/// Most tool calls handled from one reply — more than any task needs at once (a small model
/// once made 30 in one reply); the rest get an error asking for fewer.
pub(super) const MAX_CALLS_PER_REPLY: usize = 16;

/// Why call number `at` of a reply's `calls` is not handled at all: past the cap, or the same
/// call (tool and arguments) as an earlier one of the same reply, which was handled once.
pub(super) fn not_handled(at: usize, calls: &[ToolCall]) -> Option<ToolError> {
    let call = calls.get(at)?;
    if at >= MAX_CALLS_PER_REPLY {
        return Some(ToolError::new(
            ToolErrorCode::Loop,
            format!(
                "this reply made {} tool calls; only the first {MAX_CALLS_PER_REPLY} are handled \
                 in one reply, so this one was not run: make fewer calls per reply and ask again \
                 for what is still needed",
                calls.len()
            ),
        ));
    }
    let same = calls[..at]
        .iter()
        .find(|earlier| earlier.name == call.name && same_arguments(earlier, call))?;
    Some(ToolError::new(
        ToolErrorCode::Loop,
        format!(
            "this call is the same as call `{}` earlier in this reply, which was handled once: \
             use its result",
            same.id
        ),
    ))
}

/// Whether two calls' arguments say the same (as JSON values where both parse).
fn same_arguments(a: &ToolCall, b: &ToolCall) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(&a.arguments),
        serde_json::from_str::<serde_json::Value>(&b.arguments),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => a.arguments.trim() == b.arguments.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::repair::tests::call;
    use pretty_assertions::assert_eq;

    fn usage(input: u64, output: u64) -> Option<Usage> {
        let usage = Usage {
            input,
            output,
            ..Usage::default()
        };
        (input + output > 0).then_some(usage)
    }

    #[test]
    fn a_cut_names_agents_limit_only_when_the_reply_reached_it() {
        let fix = "raise `max_output_tokens` in [model] (or --max-output-tokens)";
        // The limit reached, or no count to tell: agent's limit.
        for (limit, counted) in [(Some(300), usage(50, 300)), (Some(300), None), (None, None)] {
            assert_eq!(
                cut_note(0, 0, limit, counted),
                format!("the answer was cut at the model's output limit: {fix} to get it whole")
            );
        }
        // Stopped short of it, or with none asked: the server's context or its own limit.
        let full = "its context is likely full (1321 prompt + 6871 output = 8192 tokens) or it \
                    has an output limit of its own: give the server a larger context \
                    (llama-server `-c`) or lift its limit (`-n`), or start a new run with a \
                    narrower task";
        assert_eq!(
            cut_note(0, 0, Some(8192), usage(1321, 6871)),
            format!(
                "the answer was cut by the server after 6871 output tokens, short of the output \
                 limit (8192): {full}"
            )
        );
        assert_eq!(
            cut_note(2, 0, None, usage(1321, 6871)),
            format!(
                "the reply was cut by the server after 6871 output tokens, with no output limit \
                 asked after 2 tool calls, which were not run: {full}"
            )
        );
        assert_eq!(
            cut_note(0, 1, Some(300), usage(50, 300)),
            format!(
                "the reply was cut at the model's output limit in the middle of a tool call, \
                 which was not run: {fix}"
            )
        );
    }

    #[test]
    fn a_prompt_joined_or_pushed_is_taken_back_whole() {
        let note = crate::model::repair::cut_calls_note(1);
        let summary = crate::model::repair::summary_message("so far");
        for before in [
            vec![],
            vec![Message::User("a".into()), note.clone()],
            vec![summary],
        ] {
            let mut messages = before.clone();
            let undo = push_prompt(&mut messages, "next");
            let joined = matches!(before.last(), Some(m) if *m == note);
            assert_eq!(messages.len(), before.len() + usize::from(!joined));
            let Some(Message::User(last)) = messages.last() else {
                panic!("{messages:?}");
            };
            assert!(last.ends_with("next"), "{last}");
            undo.undo(&mut messages);
            assert_eq!(messages, before);
        }
    }

    #[test]
    fn a_reply_is_handled_up_to_the_cap_and_each_call_once() {
        let ls = r#"{"command":"ls","description":"list"}"#;
        let ls_reordered = r#"{"description":"list", "command":"ls"}"#;
        let mut calls = vec![call("a", ls), call("b", ls_reordered), call("c", "{}")];
        calls.extend(
            (0..20).map(|n| call(&format!("n{n}"), &format!(r#"{{"command":"echo {n}"}}"#))),
        );
        let handled: Vec<&str> = (0..calls.len())
            .filter(|&at| not_handled(at, &calls).is_none())
            .map(|at| calls[at].id.as_str())
            .collect();
        let mut expected = vec!["a", "c"];
        expected.extend([
            "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10", "n11", "n12",
        ]);
        assert_eq!(handled, expected);
        let repeated = not_handled(1, &calls).unwrap();
        assert!(
            repeated.message.contains("same as call `a`"),
            "{repeated:?}"
        );
        let capped = not_handled(16, &calls).unwrap();
        assert!(
            capped.message.contains("this reply made 23 tool calls"),
            "{capped:?}"
        );
        // Another tool with the same arguments is another call.
        let mut other = call("d", ls);
        other.name = "read_file".into();
        assert!(not_handled(1, &[call("a", ls), other]).is_none());
    }
}
