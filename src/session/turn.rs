//! A message's turn: the `start` or `continue` that opens it, the agent loop driven while
//! the person may type (Enter queues, Ctrl+C or Esc stops), and what the turn leaves for the
//! session — counts, the conversation's size, the changes, the rules saved at the prompt.
//! An interrupted turn's calls are answered and its words marked in the conversation.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::agent::{self, CompactReason, Event, Header, Outcome, Stats};
use crate::exec;
use crate::model::{Message, Model as _, ModelError, Usage};
use crate::policy::Verdict;
use crate::transcript::Transcript;
use crate::ui::composer::{Action, Composer};
use crate::ui::input::{KeyGate, Keys};
use crate::ui::{Tui, sanitize};

use super::screen::lock;
use super::{Session, Stopped, changes, compact};

/// How often the live pane redraws while a turn runs.
const TICK: Duration = Duration::from_millis(100);
/// Lines of a message echoed into the conversation (as many as the composer shows).
const ECHOED_LINES: usize = 10;

/// How a turn ended.
pub(super) enum TurnEnd {
    Finished(Result<Outcome, ModelError>),
    Interrupted,
    Stopped(Stopped),
}

/// What a turn's events said that the session needs afterwards.
#[derive(Default)]
struct Watch {
    /// The model's text since the last finished turn (lost when the turn is interrupted).
    partial: String,
    /// The last finished turn's tokens: about the conversation's size.
    last_usage: Option<Usage>,
    /// Allow rules the person saved at the prompt (`3`, `a`).
    saved_rules: Vec<String>,
    /// The message's own snapshots, when it changed files.
    changed: Option<crate::snapshot::Record>,
}

impl Watch {
    fn see(&mut self, event: &Event) {
        match event {
            Event::TextDelta { text } => self.partial.push_str(text),
            Event::TurnEnd { usage, .. } => {
                self.partial.clear();
                if usage.is_some() {
                    self.last_usage = *usage;
                }
            }
            _ => {}
        }
        if let Some(prefix) = changes::saved_rule(event) {
            self.saved_rules.push(prefix);
        }
    }
}

impl Session {
    /// Sends one message and handles how its turn ended.
    pub(super) async fn message(&mut self, message: &str) -> Result<(), Stopped> {
        if let (Some(window), Some(size)) = (self.context_window, self.size)
            && compact::near(size, window)
        {
            self.compact(CompactReason::ContextWindow).await;
        }
        self.echo(message);
        let attached = self.attach(message).await;
        if !attached.lines.is_empty() {
            self.say(&attached.lines.join("\n"));
        }
        if attached.stopped {
            self.say("agent: stopped: the message was not sent (↑ brings it back)");
            return Ok(());
        }
        let mut retried = false;
        loop {
            match self.turn(message, &attached.text).await {
                TurnEnd::Stopped(stopped) => return Err(stopped),
                TurnEnd::Interrupted | TurnEnd::Finished(Ok(_)) => return Ok(()),
                TurnEnd::Finished(Err(ModelError::ContextTooLong { message: said, .. }))
                    if !retried =>
                {
                    retried = true;
                    if let Some(window) = compact::window_from_error(&said) {
                        self.context_window = Some(window);
                    }
                    // The failed attempt's part is summarised with the rest; the message is
                    // sent again on the summary.
                    if let Some(at) = self
                        .conversation
                        .iter()
                        .rposition(|m| matches!(m, Message::User(text) if text.contains(message)))
                    {
                        self.conversation.remove(at);
                    }
                    if !self.compact(CompactReason::ContextError).await {
                        return Ok(());
                    }
                }
                TurnEnd::Finished(Err(error)) => {
                    let shown = sanitize::escape_prose(&error.to_string()).into_owned();
                    self.say(&format!("agent: {shown}"));
                    return Ok(());
                }
            }
        }
    }

    /// The person's message in the conversation on screen: its first
    /// [`ECHOED_LINES`] lines, and how many more were sent (a long paste).
    pub(super) fn echo(&self, message: &str) {
        let shown = sanitize::escape_prose(message);
        let mut lines = shown.lines();
        let mut out = format!("› {}", lines.next().unwrap_or_default());
        for line in lines.by_ref().take(ECHOED_LINES - 1) {
            out.push_str(&format!("\n  {line}"));
        }
        let more = lines.count();
        if more > 0 {
            out.push_str(&format!(
                "\n  … {more} more line{} sent",
                if more == 1 { "" } else { "s" }
            ));
        }
        self.say(&if self.color {
            format!("\x1b[1m{out}\x1b[0m")
        } else {
            out
        });
    }

    /// The `start` or `continue` event of a message, opening the transcript at the first.
    fn opening(&mut self, message: &str) -> Event {
        let first = !self.started;
        self.started = true;
        if first && self.recorder.transcript.is_none() && self.resumed.is_none() {
            self.recorder.transcript = self.create_transcript();
            if let Some(transcript) = &mut self.recorder.transcript {
                for secret in self.api_key.iter().chain(&self.mcp_secrets) {
                    transcript.redact(secret);
                }
            }
        }
        let id = self
            .recorder
            .transcript
            .as_ref()
            .map_or_else(|| "unrecorded".to_owned(), |t| t.id().to_owned());
        let header = Header {
            id,
            time: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            prompt: message.to_owned(),
            model: self.model.describe(),
            cwd: self.config.workspace.display().to_string(),
            version: crate::VERSION.to_owned(),
            sandbox: self.config.sandbox.status(),
            mode_note: crate::agent::auto_fallback(
                self.config.mode,
                &self.config.sandbox,
                self.snapshots.store().is_some(),
            ),
        };
        if let Some(rebuilt) = self.resumed.take() {
            Event::Continue {
                header,
                resumed_turns: rebuilt.turns,
                note: rebuilt.note,
            }
        } else if first {
            Event::Start {
                header,
                instructions: self
                    .config
                    .instructions
                    .files
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect(),
            }
        } else {
            Event::Continue {
                header,
                resumed_turns: self.turns,
                note: None,
            }
        }
    }

    pub(super) fn create_transcript(&mut self) -> Option<Transcript> {
        let runs = self.state_dir.as_ref()?.join("runs");
        match Transcript::create(&runs, SystemTime::now()) {
            Ok(transcript) => Some(transcript),
            Err(error) => {
                self.recorder.failed = true;
                self.say(&format!(
                    "agent: warning: cannot create a transcript in `{}`: {error}: this session \
                     is not recorded",
                    runs.display()
                ));
                None
            }
        }
    }

    /// Runs one turn of the loop for `message`, the person free to type meanwhile.
    /// `attached`: what the message's `@path` mentions bring, after the person's words.
    async fn turn(&mut self, message: &str, attached: &str) -> TurnEnd {
        let opening = self.opening(message);
        // The person's words are what is recorded; the model also gets the notes waiting
        // and what the mentions bring.
        let mut sent = super::undo::with_notes(&mut self.notes_for_model, message);
        sent.push_str(attached);
        self.recorder.record(&opening);
        for typed in std::mem::take(&mut self.unrecorded) {
            self.recorder.record(&typed);
        }
        // Each message snapshots into the session's run record, as `run --continue` does.
        let run = match &opening {
            Event::Start { header, .. } | Event::Continue { header, .. } => header.id.clone(),
            _ => String::new(),
        };
        self.config.snapshots = self.snapshots.recorder(&run);
        self.lock_composer().set_busy(true);
        self.tui().request_sent();
        let mut stats = Stats::default();
        let mut watch = Watch::default();
        let Self {
            config,
            model,
            approver,
            conversation,
            composer,
            tui,
            keys,
            stops,
            pending,
            recorder,
            snapshots,
            ..
        } = self;
        let config: &agent::Config = config;
        let gate = keys.gate();
        let mut emit = |event: Event| {
            // The screen says what this message changed (and how to take it back); the
            // transcript's `done` keeps what the whole session changed, as a run's does.
            let screen = changes::screen_done(&event, snapshots.store(), &config.snapshots);
            let shown = screen.as_ref().map_or(&event, |(screen, _)| screen);
            show(composer, tui, &gate, shown);
            watch.see(&event);
            if let Some((_, record)) = screen {
                watch.changed = record;
            }
            recorder.record(&event);
        };
        let end = {
            let run = agent::run_after(
                model,
                approver,
                config,
                conversation,
                &sent,
                &mut stats,
                &mut emit,
            );
            drive(run, keys, stops, composer, tui, pending).await
        };
        let note = match &end {
            TurnEnd::Interrupted => {
                Some("interrupted: the conversation keeps what happened; write the next message")
            }
            TurnEnd::Stopped(stopped) => Some(stopped.note.as_str()),
            TurnEnd::Finished(_) => None,
        };
        if note.is_some() {
            // The loop was dropped, maybe while a prompt asked (a signal): the screen is put
            // back as an answered prompt leaves it — raw mode, keys read, the composer drawn.
            crate::approve::Screen::resume(&mut self.approver.screen);
        }
        if let Some(note) = note {
            // The loop was dropped: its closing snapshot is taken here.
            emit(done_event(&stats, note, config.snapshots.close()));
        }
        if note.is_some() {
            mark_interrupted(conversation, &watch.partial);
        }
        self.settle(&stats, watch, message);
        end
    }

    /// What a turn leaves for the rest of the session: counts, the conversation's size, the
    /// changes `/diff` and `/undo` act on, and the rules saved at the prompt.
    fn settle(&mut self, stats: &Stats, watch: Watch, message: &str) {
        if let Some(record) = watch.changed {
            self.last_change = Some(changes::LastChange::message(record, message));
        }
        // A rule saved at the prompt (3, a) holds for the rest of the session too.
        for prefix in watch.saved_rules {
            self.config.allow.push(crate::policy::Rule {
                prefix,
                source: crate::policy::Source::User,
            });
        }
        self.turns += stats.turns;
        if let Some(usage) = stats.usage {
            self.count(usage);
        }
        self.requests += stats.turns;
        if let Some(usage) = watch.last_usage {
            self.size = Some(usage.total());
        }
    }
}

/// Shows a turn's event above the composer, which comes back once nothing is live.
pub(super) fn show(composer: &Mutex<Composer>, tui: &Mutex<Tui>, gate: &KeyGate, event: &Event) {
    // Recorded, never shown (nor does it move the composer).
    if let Event::BackgroundOutput { .. } = event {
        return;
    }
    let mut composer = lock(composer);
    composer.hide();
    let opens_pane = matches!(
        event,
        Event::Decision {
            decision: Verdict::Allow,
            ..
        }
    );
    // The pane asks the terminal where the cursor is: the key reader waits.
    if opens_pane {
        gate.pause();
    }
    {
        let mut tui = lock(tui);
        tui.handle(event);
        place(&mut composer, &mut tui);
    }
    if opens_pane {
        gate.resume();
    }
}

/// Puts the composer where it belongs: in the rows under a running command's live pane, or
/// under the conversation once nothing is half-written there.
pub(super) fn place(composer: &mut Composer, tui: &mut Tui) {
    if let Some(rows) = tui.footer_rows() {
        composer.hide();
        if let Some(footer) = composer.under_pane(rows) {
            tui.set_footer(footer);
        }
    } else if !composer.is_shown() && tui.at_line_start() {
        composer.show();
    }
}

/// Drives a turn's loop until it ends, the person stops it (Ctrl+C, Esc) or a signal does;
/// keys typed meanwhile go to the composer, and Enter queues its message.
pub(super) async fn drive(
    run: impl Future<Output = Result<Outcome, ModelError>>,
    keys: &mut Keys,
    stops: &mut tokio::sync::mpsc::UnboundedReceiver<Stopped>,
    composer: &Mutex<Composer>,
    tui: &Mutex<Tui>,
    pending: &mut VecDeque<String>,
) -> TurnEnd {
    tokio::pin!(run);
    let mut tick = tokio::time::interval(TICK);
    loop {
        tokio::select! {
            outcome = &mut run => break TurnEnd::Finished(outcome),
            event = keys.next() => {
                let Some(event) = event else {
                    exec::stop_running().await;
                    break TurnEnd::Interrupted;
                };
                let action = lock(composer).handle(&event);
                match action {
                    Action::Submit(line) => {
                        pending.push_back(line);
                        let mut composer = lock(composer);
                        composer.set_queued(pending.iter().cloned().collect());
                        if composer.is_shown() {
                            composer.hide();
                            composer.show();
                        }
                    }
                    Action::Interrupt => {
                        exec::stop_running().await;
                        break interrupted(composer, pending);
                    }
                    Action::Quit | Action::None => {}
                }
                place(&mut lock(composer), &mut lock(tui));
            }
            stopped = stops.recv() => match stopped {
                Some(stopped) if stopped.interrupt => {
                    exec::stop_running().await;
                    break interrupted(composer, pending);
                }
                Some(stopped) => {
                    exec::stop_running().await;
                    break TurnEnd::Stopped(stopped);
                }
                None => {}
            },
            _ = tick.tick() => {
                let mut composer = lock(composer);
                let mut tui = lock(tui);
                tui.tick();
                let changed = composer.set_activity(tui.working_status());
                if changed && composer.is_shown() {
                    composer.hide();
                    composer.show();
                }
                place(&mut composer, &mut tui);
            }
        }
    }
}

/// A turn the person stopped: the messages queued during it are not sent but come back
/// into the composer, to be edited and sent again.
fn interrupted(composer: &Mutex<Composer>, pending: &mut VecDeque<String>) -> TurnEnd {
    lock(composer).take_back(pending.drain(..).collect());
    TurnEnd::Interrupted
}

/// The `done` of a turn the session stopped.
fn done_event(stats: &Stats, note: &str, changes: Option<crate::snapshot::Changes>) -> Event {
    Event::Done {
        outcome: Outcome::Interrupted,
        turns: stats.turns,
        commands_run: stats.commands_run,
        commands_denied: stats.commands_denied,
        denials: stats.denials.clone(),
        usage: stats.usage,
        answer: None,
        note: Some(note.to_owned()),
        changes,
    }
}

/// After an interrupted turn: every call without a result gets one saying it was
/// interrupted, and the model's words end with a marker (its unfinished text kept).
fn mark_interrupted(conversation: &mut Vec<Message>, partial: &str) {
    let last_user = conversation
        .iter()
        .rposition(|m| matches!(m, Message::User(_)))
        .unwrap_or(0);
    let mut answered: Vec<String> = Vec::new();
    let mut calls: Vec<String> = Vec::new();
    for message in &conversation[last_user..] {
        match message {
            Message::Assistant { tool_calls, .. } => {
                calls.extend(tool_calls.iter().map(|call| call.id.clone()));
            }
            Message::ToolResult { call_id, .. } => answered.push(call_id.clone()),
            Message::User(_) => {}
        }
    }
    for id in calls.into_iter().filter(|id| !answered.contains(id)) {
        conversation.push(Message::ToolResult {
            call_id: id,
            content: serde_json::json!({"error": {"message":
                "interrupted by the user before it finished"}})
            .to_string(),
        });
    }
    let partial = partial.trim_end();
    let text = if partial.is_empty() {
        "[interrupted by the user]".to_owned()
    } else {
        format!("{partial}\n[interrupted by the user]")
    };
    conversation.push(Message::Assistant {
        text,
        tool_calls: Vec::new(),
        reasoning: crate::model::Reasoning::default(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use pretty_assertions::assert_eq;

    #[test]
    fn an_interrupted_turn_answers_its_calls_and_says_so() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "shell".into(),
            arguments: "{}".into(),
            extra: None,
        };
        let mut conversation = vec![
            Message::User("go".into()),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("a"), call("b")],
                reasoning: crate::model::Reasoning::default(),
            },
            Message::ToolResult {
                call_id: "a".into(),
                content: "{}".into(),
            },
        ];
        mark_interrupted(&mut conversation, "half an ans");
        assert_eq!(conversation.len(), 5);
        assert!(
            matches!(&conversation[3], Message::ToolResult { call_id, content } if call_id == "b" && content.contains("interrupted"))
        );
        assert!(
            matches!(&conversation[4], Message::Assistant { text, .. } if text == "half an ans\n[interrupted by the user]")
        );
    }
}
