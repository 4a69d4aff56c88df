//! An interactive session at the terminal: the person writes a message in the composer
//! ([`crate::ui::composer`]), the agent loop ([`crate::agent::run_after`]) answers it on
//! the same conversation, and the composer is back for the next one. While a turn runs the
//! person may type; Enter queues the message and it is sent when the turn ends. Ctrl+C or
//! Esc stops the turn: the running command's group is ended, the model's stream dropped,
//! and the conversation keeps what happened, marked interrupted. Slash commands
//! ([`slash`]) act on the session; a conversation near the model's context window is
//! compacted ([`compact`]) into a summary the model writes.
//!
//! One session is one transcript: its first message is the `start` (or, picking up a run,
//! a `continue`), every later message a `continue`, each ending in its `done`, so
//! `agent history` lists it and `--continue` rebuilds it. The confirmation prompt is the
//! same as `agent run`'s: the key reader pauses while it is open.

mod changes;
pub mod compact;
pub mod history;
pub mod slash;

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use crate::Status;
use crate::agent::{self, CompactReason, Event, Header, Outcome, Stats};
use crate::approve::{Approver, Screen};
use crate::exec;
use crate::model::{
    AnyModel, Message, Model as _, ModelError, ProviderConfig, Tunable as _, Usage,
};
use crate::policy::{Mode, Verdict};
use crate::settings::ListedRule;
use crate::transcript::{Rebuilt, Transcript};
use crate::ui::composer::{Action, Composer};
use crate::ui::input::{KeyGate, Keys, SessionTerminal};
use crate::ui::{Tui, sanitize};

use history::History;
use slash::Slash;

/// How often the live pane redraws while a turn runs.
const TICK: Duration = Duration::from_millis(100);

/// Everything a session needs, resolved by the caller from settings and flags.
pub struct Options {
    /// The loop's configuration (workspace, rules, mode, limits, sandbox …).
    pub config: agent::Config,
    /// The provider, to make another model for `/model`.
    pub provider: ProviderConfig,
    /// The model.
    pub model: AnyModel,
    /// Says a retried model request on the screen.
    pub retry_notice: Option<fn(&str)>,
    /// The first message (`agent run -i PROMPT`).
    pub first: Option<String>,
    /// The run picked up (`-c`, `--resume`): its transcript and conversation.
    pub resumed: Option<(PathBuf, Rebuilt)>,
    /// Where transcripts and the message history go (`None`: nothing is recorded).
    pub state_dir: Option<PathBuf>,
    /// Secrets kept out of the transcript.
    pub api_key: Option<String>,
    /// Colour on the screen.
    pub color: bool,
    /// `-v`.
    pub verbose: bool,
    /// `-q`.
    pub quiet: bool,
    /// Whether a person can answer the confirmation prompt, and why not.
    pub reachable: Result<(), &'static str>,
    /// The user settings file the prompt's `3` and `a` write to.
    pub settings_file: PathBuf,
    /// Every rule with where it comes from, for `/rules`.
    pub rules: Vec<ListedRule>,
    /// The strictest mode the project file allows (`/mode` may not go below it).
    pub mode_floor: Option<Mode>,
    /// `[model] context_window`, when set.
    pub context_window: Option<u64>,
    /// `[model] price_in` / `price_out`, per million tokens.
    pub prices: Option<(f64, f64)>,
    /// Where each message's snapshots go (the run's record, as `run --continue`'s).
    pub snapshots: crate::snapshot::Source,
}

/// A signal that ends (or, for SIGINT, interrupts) the session.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// The exit status it means.
    pub status: Status,
    /// What the `done` event says.
    pub note: String,
    /// SIGINT: stops a turn like Ctrl+C instead of ending the session.
    pub interrupt: bool,
}

/// How a turn ended.
enum TurnEnd {
    Finished(Result<Outcome, ModelError>),
    Interrupted,
    Stopped(Stopped),
}

/// Runs the session until the person ends it or a signal does; the exit status.
pub async fn run(options: Options, stops: tokio::sync::mpsc::UnboundedReceiver<Stopped>) -> Status {
    let terminal = match SessionTerminal::enter() {
        Ok(terminal) => terminal,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "agent: cannot put the terminal in raw mode: {error}: use `agent run 'TASK'`"
            );
            return Status::Failure;
        }
    };
    let keys = match Keys::start() {
        Ok(keys) => keys,
        Err(error) => {
            drop(terminal);
            let _ = writeln!(
                std::io::stderr(),
                "agent: cannot read the terminal's keys: {error}: use `agent run 'TASK'`"
            );
            return Status::Failure;
        }
    };
    let mut session = Session::new(options, keys, stops);
    let status = session.main().await;
    session.lock_composer().hide();
    session.tui().finish();
    drop(session);
    drop(terminal);
    status
}

/// The session's screen while the prompt asks: the composer steps aside and the key reader
/// pauses, so the prompt reads the keys as in `agent run`; afterwards the terminal is put
/// back in the session's mode.
pub struct SessionScreen {
    composer: Arc<Mutex<Composer>>,
    tui: Arc<Mutex<Tui>>,
    gate: KeyGate,
}

impl Screen for SessionScreen {
    fn pause(&mut self) {
        lock(&self.composer).hide();
        Screen::pause(&mut Some(Arc::clone(&self.tui)));
        self.gate.pause();
    }

    fn resume(&mut self) {
        let _ = SessionTerminal::raw();
        self.gate.resume();
    }
}

/// What the transcript needs across messages.
struct Recorder {
    transcript: Option<Transcript>,
    failed: bool,
    /// Characters of the current call's output recorded; output past the cap is shown, not
    /// recorded.
    recorded_chars: usize,
    max_output_chars: usize,
}

impl Recorder {
    fn record(&mut self, event: &Event) {
        match event {
            Event::ToolCall { .. } => self.recorded_chars = 0,
            Event::OutputDelta { text, .. } => {
                self.recorded_chars = self.recorded_chars.saturating_add(text.chars().count());
                if self.recorded_chars > self.max_output_chars {
                    return;
                }
            }
            _ => {}
        }
        if let Some(transcript) = &mut self.transcript
            && let Err(error) = transcript.record(event)
            && !self.failed
        {
            self.failed = true;
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: cannot write the transcript `{}`: {error}: the rest of this \
                 session is not recorded",
                transcript.path().display()
            );
        }
    }
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

struct Session {
    config: agent::Config,
    provider: ProviderConfig,
    model: AnyModel,
    retry_notice: Option<fn(&str)>,
    approver: Approver<SessionScreen>,
    conversation: Vec<Message>,
    composer: Arc<Mutex<Composer>>,
    tui: Arc<Mutex<Tui>>,
    keys: Keys,
    stops: tokio::sync::mpsc::UnboundedReceiver<Stopped>,
    pending: VecDeque<String>,
    history: History,
    recorder: Recorder,
    /// The run picked up, until the first message's `continue` says so.
    resumed: Option<Rebuilt>,
    state_dir: Option<PathBuf>,
    api_key: Option<String>,
    /// Complete model turns in the conversation, for `continue` events.
    turns: u32,
    /// Tokens of the whole session.
    usage: Usage,
    requests: u32,
    rules: Vec<ListedRule>,
    mode_floor: Option<Mode>,
    context_window: Option<u64>,
    prices: Option<(f64, f64)>,
    /// The conversation's size after the last turn, in tokens.
    size: Option<u64>,
    /// The first message's `start` (or `continue`) is out.
    started: bool,
    color: bool,
    /// Where each message's snapshot recorder comes from.
    snapshots: crate::snapshot::Source,
    /// What `/diff` shows and `/undo` takes back: the last message that changed files, or
    /// the last `/undo`.
    last_change: Option<changes::LastChange>,
}

impl Session {
    fn new(
        options: Options,
        keys: Keys,
        stops: tokio::sync::mpsc::UnboundedReceiver<Stopped>,
    ) -> Self {
        let history = History::load(options.state_dir.as_deref(), &options.config.workspace);
        if let Some(note) = &history.note {
            say(&format!("agent: warning: {note}"));
        }
        let composer = Arc::new(Mutex::new(Composer::new(
            history.messages.clone(),
            slash::names(),
            options.color,
        )));
        let tui = Arc::new(Mutex::new(
            Tui::new(options.color)
                .in_session()
                .verbose(options.verbose)
                .quiet(options.quiet),
        ));
        let screen = SessionScreen {
            composer: Arc::clone(&composer),
            tui: Arc::clone(&tui),
            gate: keys.gate(),
        };
        let approver = Approver::new(
            options.reachable,
            options.settings_file,
            options.config.workspace.clone(),
            options.color,
            screen,
        );
        let (transcript, conversation, resumed) = match options.resumed {
            Some((path, rebuilt)) => {
                let transcript = match Transcript::append(&path) {
                    Ok(transcript) => Some(transcript),
                    Err(error) => {
                        say(&format!(
                            "agent: warning: cannot append to the transcript `{}`: {error}: \
                             this session is not recorded",
                            path.display()
                        ));
                        None
                    }
                };
                (transcript, rebuilt.messages.clone(), Some(rebuilt))
            }
            None => (None, Vec::new(), None),
        };
        let turns = resumed.as_ref().map_or(0, |rebuilt| rebuilt.turns);
        let mut recorder = Recorder {
            transcript,
            failed: false,
            recorded_chars: 0,
            max_output_chars: options.config.limits.max_output_chars,
        };
        if let (Some(transcript), Some(key)) = (&mut recorder.transcript, &options.api_key) {
            transcript.redact(key);
        }
        let context_window = options
            .context_window
            .or_else(|| compact::known_window(&options.model.describe()));
        Self {
            config: options.config,
            provider: options.provider,
            model: options.model,
            retry_notice: options.retry_notice,
            approver,
            conversation,
            composer,
            tui,
            keys,
            stops,
            pending: options.first.into_iter().collect(),
            history,
            recorder,
            resumed,
            state_dir: options.state_dir,
            api_key: options.api_key,
            turns,
            usage: Usage::default(),
            requests: 0,
            rules: options.rules,
            mode_floor: options.mode_floor,
            context_window,
            prices: options.prices,
            size: None,
            started: false,
            color: options.color,
            snapshots: options.snapshots,
            last_change: None,
        }
    }

    fn lock_composer(&self) -> MutexGuard<'_, Composer> {
        lock(&self.composer)
    }

    fn tui(&self) -> MutexGuard<'_, Tui> {
        lock(&self.tui)
    }

    /// Prints `text` above the composer.
    fn say(&self, text: &str) {
        self.lock_composer().hide();
        say(text);
    }

    async fn main(&mut self) -> Status {
        if let Some(rebuilt) = &self.resumed {
            self.say(&format!(
                "agent: going on with the earlier conversation ({} turns)",
                rebuilt.turns
            ));
        }
        loop {
            let line = match self.pending.pop_front() {
                Some(line) => {
                    self.show_queue();
                    line
                }
                None => match self.idle().await {
                    Ok(Some(line)) => line,
                    Ok(None) => return Status::Success,
                    Err(stopped) => return stopped.status,
                },
            };
            self.remember(&line);
            if let Some(command) = slash::parse(&line) {
                match self.slash(command).await {
                    Ok(true) => {}
                    Ok(false) => return Status::Success,
                    Err(stopped) => return stopped.status,
                }
                continue;
            }
            let message = slash::message_text(&line);
            if let Err(stopped) = self.message(&message).await {
                return stopped.status;
            }
        }
    }

    fn remember(&mut self, line: &str) {
        self.lock_composer().remember(line);
        if let Some(note) = self.history.add(line) {
            self.say(&format!("agent: warning: {note}"));
        }
    }

    fn show_queue(&self) {
        self.lock_composer()
            .set_queued(self.pending.iter().cloned().collect());
    }

    /// Waits for the next line at the composer; `None`: the person ended the session.
    async fn idle(&mut self) -> Result<Option<String>, Stopped> {
        {
            let mut composer = self.lock_composer();
            composer.set_busy(false);
            composer.set_queued(Vec::new());
            composer.hide();
            composer.show();
        }
        loop {
            tokio::select! {
                event = self.keys.next() => {
                    let Some(event) = event else { return Ok(None) };
                    match self.lock_composer().handle(&event) {
                        Action::Submit(line) => return Ok(Some(line)),
                        Action::Quit => return Ok(None),
                        Action::Interrupt | Action::None => {}
                    }
                }
                stopped = self.stops.recv() => match stopped {
                    Some(stopped) if stopped.interrupt => {}
                    Some(stopped) => return Err(stopped),
                    None => {}
                },
            }
        }
    }

    /// Sends one message and handles how its turn ended.
    async fn message(&mut self, message: &str) -> Result<(), Stopped> {
        if let (Some(window), Some(size)) = (self.context_window, self.size)
            && compact::near(size, window)
        {
            self.compact(CompactReason::ContextWindow).await;
        }
        self.echo(message);
        let mut retried = false;
        loop {
            match self.turn(message).await {
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
                        .rposition(|m| matches!(m, Message::User(text) if text == message))
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

    /// The person's message in the conversation on screen.
    fn echo(&self, message: &str) {
        let shown = sanitize::escape_prose(message);
        let mut lines = shown.lines();
        let mut out = format!("› {}", lines.next().unwrap_or_default());
        for line in lines {
            out.push_str(&format!("\n  {line}"));
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
            if let (Some(transcript), Some(key)) = (&mut self.recorder.transcript, &self.api_key) {
                transcript.redact(key);
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

    fn create_transcript(&mut self) -> Option<Transcript> {
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
    async fn turn(&mut self, message: &str) -> TurnEnd {
        let opening = self.opening(message);
        self.recorder.record(&opening);
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
                tui.handle(shown);
                if !tui.pane_open() && tui.at_line_start() {
                    composer.show();
                }
            }
            if opens_pane {
                gate.resume();
            }
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
                message,
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
            self.usage += usage;
        }
        self.requests += stats.turns;
        if let Some(usage) = watch.last_usage {
            self.size = Some(usage.total());
        }
    }

    /// Replaces the conversation by a summary; says why not when it cannot. Whether it did.
    async fn compact(&mut self, reason: CompactReason) -> bool {
        if self.conversation.is_empty() {
            self.say("agent: nothing to compact yet");
            return false;
        }
        self.say("agent: writing a summary of the conversation …");
        let summarized = {
            let Self {
                model,
                conversation,
                keys,
                stops,
                ..
            } = self;
            let work = compact::summarize(model, conversation);
            tokio::pin!(work);
            loop {
                tokio::select! {
                    done = &mut work => break Some(done),
                    event = keys.next() => {
                        if let Some(crossterm::event::Event::Key(key)) = event
                            && (key.code == crossterm::event::KeyCode::Esc
                                || (key.code == crossterm::event::KeyCode::Char('c')
                                    && key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL)))
                        {
                            break None;
                        }
                    }
                    stopped = stops.recv() => if stopped.is_some() { break None },
                }
            }
        };
        match summarized {
            None => {
                self.say("agent: the summary was stopped: the conversation is left as it was");
                false
            }
            Some(Err(error)) => {
                let error = sanitize::escape_prose(&error).into_owned();
                self.say(&format!(
                    "agent: cannot compact the conversation: {error}: /clear starts a new one"
                ));
                false
            }
            Some(Ok((summary, usage))) => {
                if let Some(usage) = usage {
                    self.usage += usage;
                    self.size = Some(usage.output);
                }
                self.requests += 1;
                let replaced = self.conversation.len();
                self.conversation = vec![crate::transcript::summary_message(&summary)];
                self.event(Event::Compacted {
                    reason,
                    replaced,
                    summary: Some(summary),
                });
                true
            }
        }
    }

    /// Shows and records an event of the session's own.
    fn event(&mut self, event: Event) {
        self.lock_composer().hide();
        self.tui().handle(&event);
        self.recorder.record(&event);
    }

    /// Carries out a slash command; `false` ends the session.
    async fn slash(&mut self, command: Slash) -> Result<bool, Stopped> {
        match command {
            Slash::Help => self.say(&slash::help()),
            Slash::Exit => return Ok(false),
            Slash::Rules => self.say(&self.rules_text()),
            Slash::Usage => self.say(&self.usage_text()),
            Slash::Model(name) => self.switch_model(name),
            Slash::Mode(mode) => self.switch_mode(mode.as_deref()),
            Slash::Clear => {
                let replaced = std::mem::take(&mut self.conversation).len();
                self.size = None;
                self.event(Event::Compacted {
                    reason: CompactReason::Clear,
                    replaced,
                    summary: None,
                });
            }
            Slash::Compact => {
                self.compact(CompactReason::Asked).await;
            }
            Slash::Diff => self.show_diff(),
            Slash::Undo(argument) => match argument.as_deref() {
                None => self.undo(false).await?,
                Some("--force" | "-f") => self.undo(true).await?,
                Some(other) => {
                    let other = sanitize::escape(other).into_owned();
                    self.say(&format!(
                        "agent: /undo takes no argument but --force (not {other})"
                    ));
                }
            },
            Slash::Unknown(name) => {
                let name = sanitize::escape(&name).into_owned();
                self.say(&format!(
                    "agent: there is no session command {name}: /help lists them (// sends a \
                     line starting with /)"
                ));
            }
        }
        Ok(true)
    }

    fn rules_text(&self) -> String {
        if self.rules.is_empty() {
            return "no allow or deny rules: the built-in read-only list decides, everything \
                    else asks"
                .to_owned();
        }
        let mut out = String::new();
        for rule in &self.rules {
            let prefix = sanitize::escape_command(&rule.prefix).replace('\n', "⏎");
            let kind = match rule.kind {
                crate::settings::RuleKind::Allow => "allow",
                crate::settings::RuleKind::Deny => "deny",
            };
            out.push_str(&format!("  {kind:<5} {prefix}   ({})\n", rule.origin));
        }
        out.push_str(&format!("mode: {}", mode_name(self.config.mode)));
        out
    }

    fn usage_text(&self) -> String {
        let mut out = format!(
            "this session: {} ({} model request{})",
            self.usage,
            self.requests,
            if self.requests == 1 { "" } else { "s" }
        );
        if let Some((price_in, price_out)) = self.prices {
            #[expect(clippy::cast_precision_loss, reason = "token counts far below 2^52")]
            let cost = self.usage.input as f64 / 1e6 * price_in
                + self.usage.output as f64 / 1e6 * price_out;
            out.push_str(&format!(" · about ${cost:.4}"));
        } else {
            out.push_str(
                " · set [model] price_in and price_out (per million tokens) to see the cost",
            );
        }
        if let (Some(size), Some(window)) = (self.size, self.context_window) {
            out.push_str(&format!(
                "\nconversation: about {} of a {} token window",
                crate::model::short_tokens(size),
                crate::model::short_tokens(window)
            ));
        }
        out
    }

    fn switch_model(&mut self, name: Option<String>) {
        let Some(name) = name else {
            self.say(&format!(
                "model: {} (/model NAME changes it)",
                self.model.describe()
            ));
            return;
        };
        let mut provider = self.provider.clone();
        provider.model = name;
        match AnyModel::new(&provider, cfg!(windows)) {
            Ok(model) => {
                self.model = match self.retry_notice {
                    Some(notice) => model.with_retry_notice(notice),
                    None => model,
                };
                self.provider = provider;
                self.context_window = compact::known_window(&self.model.describe());
                let shown = sanitize::escape(&self.model.describe()).into_owned();
                self.say(&format!("agent: model {shown} from the next message"));
            }
            Err(error) => {
                let error = sanitize::escape_prose(&error.to_string()).into_owned();
                self.say(&format!("agent: {error}"));
            }
        }
    }

    fn switch_mode(&mut self, mode: Option<&str>) {
        let wanted = match mode {
            Some("ask") => Mode::Ask,
            Some("auto") => Mode::Auto,
            Some("deny") => Mode::Deny,
            Some("allow-all") => Mode::AllowAll,
            _ => {
                self.say(&format!(
                    "mode: {} (/mode ask, /mode auto, /mode deny or /mode allow-all changes it)",
                    mode_name(self.config.mode)
                ));
                return;
            }
        };
        if let Some(floor) = self.mode_floor
            && wanted.strictness() < floor.strictness()
        {
            self.say(&format!(
                "agent: the project file sets mode {}: a session may not loosen it",
                mode_name(floor)
            ));
            return;
        }
        self.config.mode = wanted;
        self.say(&format!("agent: mode {} from now on", mode_name(wanted)));
        let snapshots = self.snapshots.store().is_some();
        if let Some(note) = crate::agent::auto_fallback(wanted, &self.config.sandbox, snapshots) {
            self.say(&format!("agent: {note}"));
        }
    }
}

fn mode_name(mode: Mode) -> &'static str {
    mode.name()
}

/// Drives a turn's loop until it ends, the person stops it (Ctrl+C, Esc) or a signal does;
/// keys typed meanwhile go to the composer, and Enter queues its message.
async fn drive(
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
                        break TurnEnd::Interrupted;
                    }
                    Action::Quit | Action::None => {}
                }
            }
            stopped = stops.recv() => match stopped {
                Some(stopped) if stopped.interrupt => {
                    exec::stop_running().await;
                    break TurnEnd::Interrupted;
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
                if !composer.is_shown() && !tui.pane_open() && tui.at_line_start() {
                    composer.show();
                }
            }
        }
    }
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

/// A line on stderr (the caller hid the composer).
fn say(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
    let _ = stderr.flush();
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
