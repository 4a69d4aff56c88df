//! `/diff` and `/undo` in a session: the diff of the last message that changed files, and
//! taking it back. `/undo` follows `agent undo`'s rules: a file changed since that message is
//! named and left alone unless `/undo --force`, each file is written whole, and the undo is
//! itself undone by `/undo` again. It does not ask: what it did is listed, and the next
//! `/undo` puts it back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::snapshot::{self, Snapshots, UndoPlan, UndoReport};
use crate::ui::changes::{self as view, shown};
use crate::ui::composer::Action;
use crate::ui::sanitize;

use super::changes::LastChange;
use super::screen::{lock, say, stops_a_wait};
use super::{Session, Stopped};

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
                let undid_an_undo = last.label == UNDO_LABEL;
                if let Some(note) = note_for_model(&report, undid_an_undo) {
                    self.notes_for_model.push(note.clone());
                    // Recorded so a continued session tells the model too.
                    let noted = crate::agent::Event::ModelNote { note };
                    if self.recorder.transcript.is_some() {
                        self.recorder.record(&noted);
                    } else {
                        self.unrecorded.push(noted);
                    }
                }
                if let Ok(record) = store.record(Some(&report.undo_run)) {
                    self.last_change = Some(LastChange {
                        record,
                        label: UNDO_LABEL.to_owned(),
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
                    Some(event) if stops_a_wait(&event) => stop.store(true, Ordering::SeqCst),
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
/// What an undo's changes are called (`/undo` again takes them back).
const UNDO_LABEL: &str = "the /undo";

/// Most files named in a note for the model; the rest are counted.
const NOTE_FILES: usize = 20;

/// What the model is told with the next message about an undo that put files back, so it
/// does not go on believing in changes that are gone (or gone in changes that are back).
/// `None` when nothing was put back.
fn note_for_model(report: &UndoReport, undid_an_undo: bool) -> Option<String> {
    if report.done.is_empty() {
        return None;
    }
    let mut files: Vec<String> = report
        .done
        .iter()
        .take(NOTE_FILES)
        .map(|step| format!("`{}`", step.path.to_string_lossy()))
        .collect();
    if report.done.len() > NOTE_FILES {
        files.push(format!("and {} more", report.done.len() - NOTE_FILES));
    }
    let files = files.join(", ");
    let partly = if report.interrupted || !report.failed.is_empty() {
        " (only in part: the other files stayed as they were)"
    } else {
        ""
    };
    Some(if undid_an_undo {
        format!(
            "[agent: the user took back their /undo{partly}: the changes to {files} are in \
             place again, as you made them]"
        )
    } else {
        format!(
            "[agent: the user took back the changes of your last message that changed files \
             with /undo{partly}: {files} are as they were before it]"
        )
    })
}

/// The message sent to the model: the notes waiting for it (taken), then the person's words.
pub(super) fn with_notes(notes: &mut Vec<String>, message: &str) -> String {
    crate::agent::with_notes(&std::mem::take(notes), message)
}

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
    fn notes_go_once_before_the_words() {
        let mut notes = vec!["[a]".to_owned(), "[b]".to_owned()];
        assert_eq!(with_notes(&mut notes, "next"), "[a]\n[b]\n\nnext");
        assert_eq!(with_notes(&mut notes, "again"), "again");
    }
}
