//! What the session's messages changed in the files: each message snapshots into the
//! session's run record (so `agent diff` and `agent undo` from the shell see the whole
//! session), and the snapshots of the last message that changed files are a record of their
//! own for `/diff` and `/undo` (`undo.rs`). A rule the person saved at the prompt is
//! picked out of the events here too.

use crate::agent::{DecidedBy, Event};
use crate::policy::Verdict;
use crate::snapshot::{self, Changes, Record, Snapshots};
use crate::ui::sanitize;

/// Characters of a message kept in the name of its changes.
const LABEL_CHARS: usize = 40;

/// The changes `/diff` shows and `/undo` takes back.
#[derive(Debug, Clone)]
pub(super) struct LastChange {
    /// The snapshots, first to last.
    pub(super) record: Record,
    /// How the screen names them: `the message «fix the test»`, `the /undo`.
    pub(super) label: String,
}

impl LastChange {
    /// The changes of the message `text`.
    pub(super) fn message(record: Record, text: &str) -> Self {
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut short: String = words.chars().take(LABEL_CHARS).collect();
        if words.chars().count() > LABEL_CHARS {
            short.push('…');
        }
        Self {
            record,
            label: format!("the message «{}»", sanitize::escape_prose(&short)),
        }
    }
}

/// For a `done` that says what changed: the screen's copy, counting what this message
/// changed (`/diff` shows it, `/undo` reverts it), and the message's own record when it
/// changed any file. `None` for every other event.
pub(super) fn screen_done(
    event: &Event,
    store: Option<&Snapshots>,
    recorder: &snapshot::Recorder,
) -> Option<(Event, Option<Record>)> {
    let Event::Done {
        changes: Some(session),
        ..
    } = event
    else {
        return None;
    };
    let (mine, record) = message_changes(session, store, recorder);
    let mut screen = event.clone();
    if let Event::Done { changes, .. } = &mut screen {
        *changes = Some(mine);
    }
    Some((screen, record))
}

fn message_changes(
    session: &Changes,
    store: Option<&Snapshots>,
    recorder: &snapshot::Recorder,
) -> (Changes, Option<Record>) {
    let nothing = Changes {
        note: session.note.clone(),
        ..Changes::default()
    };
    let (Some(store), Some(record)) = (store, recorder.taken()) else {
        return (nothing, None);
    };
    match store.changes(&record) {
        Ok(files) if files.is_empty() => (nothing, None),
        Ok(files) => {
            let mut mine = snapshot::summarize(&files);
            // `undo` off: the line names the session's way back, not `agent undo`.
            mine.undo = false;
            let hint = "/diff shows it · /undo reverts it";
            mine.note = Some(match &session.note {
                Some(note) => format!("{hint} · {note}"),
                None => hint.to_owned(),
            });
            (mine, Some(record))
        }
        Err(error) => (
            Changes {
                note: Some(format!(
                    "/diff and /undo are not available for this message: {error}"
                )),
                ..Changes::default()
            },
            None,
        ),
    }
}

/// The prefix of an allow rule the person saved at the prompt (`3`, `a`).
pub(super) fn saved_rule(event: &Event) -> Option<String> {
    match event {
        Event::Decision {
            decision: Verdict::Allow,
            by: DecidedBy::Person,
            rule: Some(prefix),
            ..
        } => Some(prefix.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_named_short_and_escaped() {
        let record = Record {
            run: "r".into(),
            kind: snapshot::RecordKind::Run,
            undoes: None,
            workspace: String::new(),
            ignore: None,
            snapshots: Vec::new(),
        };
        let long = LastChange::message(
            record.clone(),
            "fix   the\ntest \x1b[2J and much more text after it",
        );
        assert_eq!(
            long.label,
            "the message «fix the test \\u{1b}[2J and much more text aft…»"
        );
        let short = LastChange::message(record, "fix it");
        assert_eq!(short.label, "the message «fix it»");
    }

    #[test]
    fn only_a_rule_saved_at_the_prompt_is_taken_for_the_session() {
        let decision = |by, rule: Option<&str>| Event::Decision {
            id: "c".into(),
            decision: Verdict::Allow,
            reason: String::new(),
            source: crate::policy::Source::User,
            rule: rule.map(str::to_owned),
            by,
            command: None,
            edited_from: None,
        };
        assert_eq!(
            saved_rule(&decision(DecidedBy::Person, Some("touch"))),
            Some("touch".to_owned())
        );
        assert_eq!(saved_rule(&decision(DecidedBy::Person, None)), None);
        assert_eq!(saved_rule(&decision(DecidedBy::Policy, Some("ls"))), None);
    }
}
