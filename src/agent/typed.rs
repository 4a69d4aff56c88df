//! A command the person typed (`!command` in a session): run as `agent exec` runs one — no
//! policy and no prompt, in the same sandbox, with the run's limits, environment and
//! redaction — after the message's snapshot, its output streamed as the model's commands'
//! is, and its result worded for the model as theirs is.

use super::{Config, DecidedBy, Event, run_streaming, tool};
use crate::exec::{ExecRequest, ExecResult};
use crate::policy::{Source, Verdict};

/// The most of a typed command's result the model is told, in characters.
pub const TYPED_NOTE_CHARS: usize = 16_000;

/// What the model is told of a command the person ran: the command and its result (as the
/// model gets its own), cut at [`TYPED_NOTE_CHARS`] (the cut said).
#[must_use]
pub fn typed_note(command: &str, content: &str) -> String {
    let mut kept: String = content.chars().take(TYPED_NOTE_CHARS).collect();
    if content.chars().count() > TYPED_NOTE_CHARS {
        kept.push_str(&format!(
            "\n[… cut: the result had {} characters]",
            content.chars().count()
        ));
    }
    format!("[agent: the user ran `{command}` themselves with !; its result:]\n{kept}")
}

/// The message the model gets: the notes waiting (oldest first, one a line) before the
/// person's words, a blank line between; the words alone when none waits.
#[must_use]
pub fn with_notes(notes: &[String], message: &str) -> String {
    if notes.is_empty() {
        return message.to_owned();
    }
    format!("{}\n\n{message}", notes.join("\n"))
}

/// Runs `command` for the person as call `id`, emitting its call, decision, output and
/// result; the result and what the model is told of it.
pub async fn run_typed(
    config: &Config,
    id: &str,
    command: &str,
    turn: u32,
    emit: &mut (dyn FnMut(Event) + Send),
) -> (ExecResult, String) {
    emit(Event::ToolCall {
        id: id.to_owned(),
        command: Some(command.to_owned()),
        description: Some("typed by you".to_owned()),
        working_directory: None,
        arguments: None,
        background: false,
    });
    emit(Event::Decision {
        id: id.to_owned(),
        decision: Verdict::Allow,
        reason: "typed by you (!command)".to_owned(),
        source: Source::User,
        rule: None,
        by: DecidedBy::Person,
        command: None,
        edited_from: None,
    });
    let mut request = ExecRequest::new(command, config.workspace.clone());
    request.shell.clone_from(&config.shell);
    request.limits = config.limits;
    request.env_remove.clone_from(&config.env_remove);
    request.redact.clone_from(&config.secrets);
    request.sandbox = config.sandbox.active_policy().cloned();
    let _ = config.snapshots.before_change(turn);
    let result = run_streaming(&request, id, emit).await;
    let content = config.secrets.redact(tool::result_content(&result));
    emit(Event::ToolResult {
        id: id.to_owned(),
        command: Some(command.to_owned()),
        result: Some(result.clone()),
        error: None,
    });
    (result, content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_the_command_and_cuts_a_long_result() {
        let short = typed_note("ls", "{\"stdout\":\"a\"}");
        assert!(short.contains("`ls`") && short.ends_with("{\"stdout\":\"a\"}"));
        assert!(!short.contains("cut"));
        for length in [
            TYPED_NOTE_CHARS - 1,
            TYPED_NOTE_CHARS,
            TYPED_NOTE_CHARS + 1,
            TYPED_NOTE_CHARS * 3,
        ] {
            let long = typed_note("cat big", &"é".repeat(length));
            assert_eq!(
                long.contains("[… cut"),
                length > TYPED_NOTE_CHARS,
                "{length}"
            );
            assert!(long.chars().filter(|c| *c == 'é').count() <= TYPED_NOTE_CHARS);
        }
    }

    #[test]
    fn notes_go_before_the_words() {
        assert_eq!(with_notes(&[], "hi"), "hi");
        assert_eq!(
            with_notes(&["a".to_owned(), "b".to_owned()], "hi"),
            "a\nb\n\nhi"
        );
    }
}
