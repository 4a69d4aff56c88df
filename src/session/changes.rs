//! What the session's messages changed in the files, and taking it back: each message
//! snapshots into the session's run record (so `agent diff` and `agent undo` from the shell
//! see the whole session), and the snapshots of the last message that changed files are a
//! record of their own for `/diff` and `/undo`. `/undo` follows `agent undo`'s rules: a
//! file changed since that message is named and left alone unless `/undo --force`, each
//! file is written whole, and the undo is itself undone by `/undo` again. It does not ask:
//! what it did is listed, and the next `/undo` puts it back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{Event as TermEvent, KeyCode, KeyModifiers};

use crate::agent::{DecidedBy, Event};
use crate::policy::Verdict;
use crate::snapshot::{self, Changes, Record, Snapshots, UndoPlan, UndoReport};
use crate::ui::changes::{self as view, shown};
use crate::ui::composer::Action;
use crate::ui::sanitize;

use super::{Session, Stopped, lock, say};

/// Characters of a message kept in the name of its changes.
const LABEL_CHARS: usize = 40;

/// The changes `/diff` shows and `/undo` takes back.
#[derive(Debug, Clone)]
pub(super) struct LastChange {
    /// The snapshots, first to last.
    record: Record,
    /// How the screen names them: `the message «fix the test»`, `the /undo`.
    label: String,
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

impl Session {
    /// Why there is nothing for `/diff` or `/undo`, or the store and the changes.
    fn changes_at_hand(&self) -> Result<(Snapshots, LastChange), String> {
        let store = match &self.snapshots {
            snapshot::Source::Store(store) => store.clone(),
            snapshot::Source::Off => {
                return Err("snapshots are off ([snapshots] enabled = false): there is \
                            nothing to show or undo"
                    .to_owned());
            }
            snapshot::Source::Unavailable(why) => {
                let why = sanitize::escape_prose(why);
                return Err(format!(
                    "this session takes no snapshots ({why}): there is nothing to show or undo"
                ));
            }
        };
        match &self.last_change {
            Some(last) => Ok((store, last.clone())),
            None => Err("no message of this session has changed files yet".to_owned()),
        }
    }

    /// `/diff`: the unified diff of the last message that changed files (or of the last
    /// `/undo`), every line escaped, coloured when the screen is.
    pub(super) fn show_diff(&self) {
        let (store, last) = match self.changes_at_hand() {
            Ok(found) => found,
            Err(why) => return self.say(&format!("agent: {why}")),
        };
        let text = store.diff_text(&last.record).and_then(|text| {
            let files = store.changes(&last.record)?;
            Ok((text, snapshot::summarize(&files)))
        });
        match text {
            Ok((text, totals)) => {
                let files = if totals.files == 1 { "file" } else { "files" };
                let body = view::diff(&text, self.color);
                self.say(&format!(
                    "agent: what {} changed ({} {files}, +{} −{}):\n{}",
                    last.label,
                    totals.files,
                    totals.added,
                    totals.removed,
                    body.trim_end()
                ));
            }
            Err(error) => {
                let error = sanitize::escape_prose(&error.to_string()).into_owned();
                self.say(&format!("agent: cannot show the diff: {error}"));
            }
        }
    }

    /// `/undo [--force]`: puts back the files of the last changes, as `agent undo` does.
    pub(super) async fn undo(&mut self, force: bool) -> Result<(), Stopped> {
        let (store, last) = match self.changes_at_hand() {
            Ok(found) => found,
            Err(why) => {
                self.say(&format!("agent: {why}"));
                return Ok(());
            }
        };
        let planner = store.clone();
        let record = last.record.clone();
        let planned = tokio::task::spawn_blocking(move || planner.plan_undo(&record)).await;
        let plan = match planned {
            Ok(Ok(plan)) => plan,
            Ok(Err(error)) => {
                let error = sanitize::escape_prose(&error.to_string()).into_owned();
                self.say(&format!("agent: cannot undo {}: {error}", last.label));
                return Ok(());
            }
            Err(error) => {
                self.say(&format!("agent: the undo failed: {error} (a bug)"));
                return Ok(());
            }
        };
        if plan.steps.is_empty() {
            store.discard(&plan);
            self.say(&format!("agent: nothing to undo for {}", last.label));
            return Ok(());
        }
        if !plan.conflicts.is_empty() && !force {
            store.discard(&plan);
            let lines: Vec<String> = plan
                .conflicts
                .iter()
                .map(|path| {
                    format!(
                        "agent: `{}` changed since {}: nothing was undone (/undo --force \
                         overwrites it)",
                        shown(&path.to_string_lossy()),
                        last.label
                    )
                })
                .collect();
            self.say(&lines.join("\n"));
            return Ok(());
        }
        // No question first: each file is said as it is put back, and `/undo` again takes
        // the whole undo back.
        let mut heading = vec![format!("agent: undo of {}:", last.label)];
        heading.extend(view::not_covered_lines(&plan));
        self.say(&heading.join("\n"));
        let (report, stopped) = self.apply(store.clone(), plan.clone(), force).await;
        match report {
            Ok(report) => {
                self.say(&done_line(&plan, &report, &last.label));
                if let Ok(record) = store.record(Some(&report.undo_run)) {
                    self.last_change = Some(LastChange {
                        record,
                        label: "the /undo".to_owned(),
                    });
                }
            }
            Err(error) => {
                let error = sanitize::escape_prose(&error).into_owned();
                self.say(&format!("agent: the undo failed: {error}"));
            }
        }
        stopped.map_or(Ok(()), Err)
    }

    /// Applies `plan` on a blocking thread; Ctrl+C, Esc and the stopping signals only ask it
    /// to stop between files (each file is written whole). Other keys go to the composer, a
    /// message sent meanwhile is queued. A signal that ends the session is handed back.
    async fn apply(
        &mut self,
        store: Snapshots,
        plan: UndoPlan,
        force: bool,
    ) -> (Result<UndoReport, String>, Option<Stopped>) {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let task = tokio::task::spawn_blocking(move || {
            let mut progress = |step: &snapshot::Step, outcome: Result<(), &str>| {
                say(&view::step_line(step, outcome));
            };
            store.apply_undo(&plan, force, &|| flag.load(Ordering::SeqCst), &mut progress)
        });
        tokio::pin!(task);
        let mut ended = None;
        loop {
            tokio::select! {
                joined = &mut task => {
                    let report = match joined {
                        Ok(report) => report.map_err(|error| error.to_string()),
                        Err(error) => Err(format!("{error} (a bug)")),
                    };
                    return (report, ended);
                }
                event = self.keys.next() => match event {
                    None => stop.store(true, Ordering::SeqCst),
                    Some(TermEvent::Key(key))
                        if key.code == KeyCode::Esc
                            || (key.code == KeyCode::Char('c')
                                && key.modifiers.contains(KeyModifiers::CONTROL)) =>
                    {
                        stop.store(true, Ordering::SeqCst);
                    }
                    Some(event) => {
                        if let Action::Submit(line) = lock(&self.composer).handle(&event) {
                            self.pending.push_back(line);
                        }
                    }
                },
                stopped = self.stops.recv() => {
                    stop.store(true, Ordering::SeqCst);
                    if let Some(stopped) = stopped.filter(|s| !s.interrupt) {
                        ended = Some(stopped);
                    }
                }
            }
        }
    }
}

/// What the undo did, in one line.
fn done_line(plan: &UndoPlan, report: &UndoReport, label: &str) -> String {
    let done = report.done.len();
    let files = if done == 1 { "file" } else { "files" };
    if report.interrupted {
        format!(
            "agent: interrupted: {done} of {} {files} put back; each file is whole, the rest are \
             as they were · /undo puts back what was undone",
            plan.steps.len()
        )
    } else if report.failed.is_empty() {
        format!("agent: undid {label}: {done} {files} put back · /undo again puts the changes back")
    } else {
        format!(
            "agent: undid {label} in part: {done} {files} put back, {} could not be · /undo \
             again puts back what was undone",
            report.failed.len()
        )
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
