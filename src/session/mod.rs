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
mod bang;
mod changes;
pub mod compact;
mod compaction;
mod cost;
pub mod history;
mod input;
mod mcp;
mod mention;
mod model_choice;
mod ps;
mod recap;
mod record;
mod screen;
pub mod slash;
mod slash_commands;
mod turn;
mod undo;

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::Status;
use crate::agent::{self, Event};
use crate::approve::Approver;
use crate::model::{AnyModel, Message, Model as _, ProviderConfig, Usage};
use crate::policy::Mode;
use crate::settings::ListedRule;
use crate::transcript::{Rebuilt, Transcript};
use crate::ui::Tui;
use crate::ui::composer::Composer;
use crate::ui::input::{Keys, SessionTerminal};

use history::History;
use record::Recorder;
use screen::{lock, say};

pub use screen::SessionScreen;

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
    /// The MCP servers of the workspace and what starting them needs.
    pub mcp: Option<(crate::mcp::Catalogue, crate::mcp::stdio::Launch)>,
    /// The MCP servers' secrets (tokens, `env` values), kept out of the transcript.
    pub mcp_secrets: Vec<String>,
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
    let quiet = options.quiet;
    let mut session = Session::new(options, keys, stops);
    let status = session.main().await;
    session.lock_composer().hide();
    session.tui().finish();
    let recorded = session
        .recorder
        .transcript
        .as_ref()
        .map(|transcript| transcript.id().to_owned());
    drop(session);
    drop(terminal);
    if let (Some(id), false) = (recorded, quiet) {
        say(&continue_hint(&id));
    }
    status
}

/// `to continue: agent -c (…) or agent --resume 1a2b3c`: how to pick up the session that
/// just ended, by its short id (what `agent history` shows and `--resume` takes).
fn continue_hint(id: &str) -> String {
    format!(
        "to continue: agent -c (the latest in this workspace) or agent --resume {}",
        crate::transcript::short_id(id)
    )
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
    /// What the session's requests cost.
    spent: cost::Spent,
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
    /// What the model is told with the next message (files a `/undo` took back), oldest
    /// first; sent once.
    notes_for_model: Vec<String>,
    /// `!command`s run before the session had a transcript: recorded after the first
    /// message's `start`, whose message carries them to the model.
    unrecorded: Vec<Event>,
    /// The MCP servers to start (taken when they start) and what `/mcp` lists.
    mcp: Option<(crate::mcp::Catalogue, crate::mcp::stdio::Launch)>,
    mcp_secrets: Vec<String>,
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
        let mut composer = Composer::new(history.messages.clone(), slash::names(), options.color);
        let rules = Arc::clone(&options.config.files);
        composer.complete_paths_with(Box::new(move |partial| mention::complete(&rules, partial)));
        let composer = Arc::new(Mutex::new(composer));
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
        // `!command`s run after the earlier session's last message: told with the next one.
        let notes_for_model = resumed
            .as_ref()
            .map(|rebuilt| rebuilt.waiting.clone())
            .unwrap_or_default();
        let mut recorder = Recorder {
            transcript,
            failed: false,
            recorded_chars: 0,
            max_output_chars: options.config.limits.max_output_chars,
        };
        if let Some(transcript) = &mut recorder.transcript {
            for secret in options.api_key.iter().chain(&options.mcp_secrets) {
                transcript.redact(secret);
            }
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
            spent: cost::Spent::default(),
            size: None,
            started: false,
            color: options.color,
            snapshots: options.snapshots,
            last_change: None,
            notes_for_model,
            unrecorded: Vec::new(),
            mcp: options.mcp,
            mcp_secrets: options.mcp_secrets,
        }
    }

    fn lock_composer(&self) -> MutexGuard<'_, Composer> {
        lock(&self.composer)
    }

    fn tui(&self) -> MutexGuard<'_, Tui> {
        lock(&self.tui)
    }

    /// Counts a request's tokens, priced at the model that answered it.
    fn count(&mut self, usage: Usage) {
        self.usage += usage;
        let model = self.model.describe();
        self.spent
            .add(usage, cost::price_of(self.prices, &model), &model);
    }

    /// Prints `text` above the composer.
    fn say(&self, text: &str) {
        self.lock_composer().hide();
        say(text);
    }
    /// Shows and records an event of the session's own.
    fn event(&mut self, event: Event) {
        self.lock_composer().hide();
        self.tui().handle(&event);
        self.recorder.record(&event);
    }
}
