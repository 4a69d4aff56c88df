//! `agent run`: resolve settings, pick the model, wire events to the
//! transcript and the screen (or `--json`), and drive the loop.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use crate::agent::{self, Event, Header, Outcome, Stats};
use crate::approve::{self, Approver};
use crate::cli::{GlobalArgs, RunArgs};
use crate::error::{Error, Result, Status};
use crate::exec;
use crate::model::{AnyModel, Model as _, ProviderConfig, ProviderKind, Tunable as _};
use crate::policy::OsFamily;
use crate::settings::{self, Origin, Overrides, Settings};
use crate::transcript::Transcript;
use crate::ui::{Plain, Tui};

use super::signals::{self, Signals};

/// Runs `agent run`.
pub(crate) fn run(global: &GlobalArgs, args: RunArgs) -> Result<ExitCode> {
    let words = (!args.prompt.is_empty()).then(|| args.prompt.join(" "));
    let overrides = run_overrides(global, &args);
    let workspace = super::workspace(global.cwd.as_deref())?;
    let earlier = super::resume::locate(&args, &workspace, super::use_color(global))?;
    let prompt = task(earlier.as_ref(), words.as_deref(), global)?;
    let earlier = earlier.map(|earlier| earlier.path);
    let settings = super::load_settings(global, &overrides, &workspace)?;
    let quiet = global.quiet;
    model_notice(&settings, global);
    let sandbox = super::sandbox(&settings, &workspace);
    let mut model = model_for(&settings, global.quiet)?;
    let mut config = agent_config(&settings, &workspace, &args, sandbox)?;
    instructions_notice(&config.instructions, global);
    super::sandbox_notice(&config.sandbox, quiet);

    let start = SystemTime::now();
    let rebuilt = match &earlier {
        Some(path) => Some(super::resume::load(path, &model.describe())?),
        None => None,
    };
    let mut transcript = match &earlier {
        Some(path) => append_transcript(path, quiet),
        None => open_transcript(start, quiet),
    };
    if let Some(transcript) = &mut transcript {
        for secret in secrets(&settings) {
            transcript.redact(secret);
        }
    }
    let id = transcript
        .as_ref()
        .map_or_else(|| "unrecorded".to_owned(), |t| t.id().to_owned());
    config.snapshots = super::snapshots::recorder(&settings, &workspace, &id, quiet);
    super::auto_notice(&config, config.snapshots.available(), quiet);
    let color = super::use_color(global);
    let tui = (!global.json && !args.plain && live_screen_possible()).then(|| {
        Arc::new(Mutex::new(
            Tui::new(color).verbose(global.verbose).quiet(global.quiet),
        ))
    });
    let mut output = Output::new(global, &config, tui.clone());
    let mut emit = |event: Event| output.emit(&event, transcript.as_mut());
    let time = humantime::format_rfc3339_seconds(start).to_string();
    emit(opening_event(
        rebuilt.as_ref(),
        id,
        time,
        &prompt,
        model.describe(),
        &config,
    ));
    let mut conversation = rebuilt.map(|rebuilt| rebuilt.messages).unwrap_or_default();

    let reachable = approve::terminal_reachable(args.no_prompt);
    let mut approver = Approver::new(
        reachable,
        settings.user_file.clone(),
        workspace.clone(),
        color,
        tui.clone(),
    );
    let mut stats = Stats::default();
    let runtime = super::runtime()?;
    let outcome = runtime.block_on(drive(
        agent::run_after(
            &mut model,
            &mut approver,
            &config,
            &mut conversation,
            &prompt,
            &mut stats,
            &mut emit,
        ),
        tui.as_ref(),
    ));
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(stop) => {
            emit(interrupted_done(&stats, stop, &config));
            finish_screen(tui.as_ref());
            signals::restore_terminal();
            // A prompt may still be waiting for a key on a blocking thread: do not wait for it.
            runtime.shutdown_background();
            return Ok(stop.status().into());
        }
    };
    finish_screen(tui.as_ref());
    exit_status(outcome?, &stats, &settings, &output)
}

/// The key and the values of secret headers (`api-key`, `X-Auth-Token`, …): they never
/// reach a transcript or `--json`.
fn secrets(settings: &Settings) -> Vec<&str> {
    settings
        .api_key
        .as_deref()
        .into_iter()
        .chain(
            settings
                .headers
                .iter()
                .filter(|h| crate::model::secret_header(&h.value.0))
                .map(|h| h.value.1.as_str()),
        )
        .collect()
}

/// The `done` event of a run a signal stopped (the loop was dropped): what it counted, and
/// the closing snapshot.
fn interrupted_done(stats: &Stats, stop: signals::Stop, config: &agent::Config) -> Event {
    Event::Done {
        outcome: Outcome::Interrupted,
        turns: stats.turns,
        commands_run: stats.commands_run,
        commands_denied: stats.commands_denied,
        denials: stats.denials.clone(),
        usage: stats.usage,
        answer: None,
        note: Some(stop.note()),
        changes: config.snapshots.close(),
    }
}

/// Names the AGENTS.md files read (`-v`), and warns (unless -q) when they were cut or
/// could not be read.
pub(super) fn instructions_notice(instructions: &agent::Instructions, global: &GlobalArgs) {
    let mut stderr = std::io::stderr().lock();
    if global.verbose {
        for path in &instructions.files {
            let _ = writeln!(stderr, "agent: instructions: {}", path.display());
        }
    }
    if global.quiet {
        return;
    }
    if instructions.cut_bytes > 0 {
        let _ = writeln!(
            stderr,
            "agent: warning: AGENTS.md is cut at {} KiB ({} bytes left out): shorten it, the \
             model sees only the start",
            agent::MAX_INSTRUCTION_BYTES / 1024,
            instructions.cut_bytes
        );
    }
    for problem in &instructions.unreadable {
        let _ = writeln!(
            stderr,
            "agent: warning: cannot read {problem}: it is left out"
        );
    }
}

/// Says why the run exits 3 (`--fail-on-deny`), with -q too: it is why a job fails.
fn denials_notice(denials: &[agent::Denial], origin: &Origin) {
    let count = denials.len();
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "agent: {count} command{} denied; exiting 3 (fail_on_deny, {origin})",
        if count == 1 { " was" } else { "s were" },
    );
    for denial in denials {
        let command = crate::ui::summary::one_line(&denial.command);
        let reason = crate::ui::sanitize::escape_prose(&denial.reason).replace('\n', "⏎");
        let _ = writeln!(stderr, "  ⊘ {command}: {reason}");
    }
}

/// Drives the loop until it ends or a signal stops it (redrawing the live pane meanwhile); a
/// stopped loop's command is ended (TERM, then KILL) before the loop is dropped.
async fn drive(
    run: impl Future<Output = std::result::Result<Outcome, crate::model::ModelError>>,
    tui: Option<&Arc<Mutex<Tui>>>,
) -> std::result::Result<std::result::Result<Outcome, crate::model::ModelError>, signals::Stop> {
    let mut signals = Signals::listen();
    tokio::pin!(run);
    let mut tick = tokio::time::interval(TICK);
    let stop = loop {
        tokio::select! {
            outcome = &mut run => return Ok(outcome),
            stop = signals.recv() => break stop,
            _ = tick.tick(), if tui.is_some() => {
                if let Some(tui) = tui {
                    tui.lock().unwrap_or_else(PoisonError::into_inner).tick();
                }
            }
        }
    };
    // The loop is no longer polled: end its command (TERM, then KILL) before it is dropped.
    exec::stop_running().await;
    Err(stop)
}

/// Closes the live screen, if there is one.
fn finish_screen(tui: Option<&Arc<Mutex<Tui>>>) {
    if let Some(tui) = tui {
        tui.lock().unwrap_or_else(PoisonError::into_inner).finish();
    }
}

/// The model the settings name, saying each retry on stderr unless `quiet`.
pub(super) fn model_for(settings: &Settings, quiet: bool) -> Result<AnyModel> {
    let mut config = provider_config(settings);
    if let Some(name) = served_model(settings, &config)? {
        config.model = name;
    }
    let model = AnyModel::new(&config, cfg!(windows))?;
    Ok(if quiet {
        model
    } else {
        model.with_retry_notice(retry_notice)
    })
}

/// With no model named anywhere, an OpenAI-compatible server that is not OpenAI's own is
/// asked which it serves (`GET /models`): its only model is used rather than OpenAI's default
/// name; several are listed in a usage error. `None`: keep the name (the server did not say).
fn served_model(settings: &Settings, config: &ProviderConfig) -> Result<Option<String>> {
    let unnamed = matches!(settings.model.origin, Origin::Default(_));
    let own = config.base_url.trim_end_matches('/') == config.provider.default_base_url();
    if !unnamed || own || config.provider != ProviderKind::OpenAi {
        return Ok(None);
    }
    // Its own client and runtime, both gone before the run's begin.
    let probe = crate::model::openai::OpenAi::new(config)?;
    let served = super::runtime()?.block_on(probe.served_models());
    match served.as_deref() {
        Some([only]) => Ok(Some(only.clone())),
        Some(several @ [_, _, ..]) => Err(Error::Usage(format!(
            "the model server at {} serves {} models ({}) and none is named: choose one with \
             --model (or `model` in [model])",
            config.base_url,
            several.len(),
            several
                .iter()
                .map(|name| format!("`{}`", crate::ui::sanitize::escape_prose(name)))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        _ => Ok(None),
    }
}

/// The provider the settings name.
pub(super) fn provider_config(settings: &Settings) -> ProviderConfig {
    ProviderConfig {
        provider: settings.provider.value,
        model: settings.model.value.clone(),
        base_url: settings.base_url.value.clone(),
        api_key: settings.api_key.clone(),
        api_key_env: settings.api_key_env.value.clone(),
        max_output_tokens: settings.max_output_tokens.as_ref().map(|n| n.value),
        idle_timeout: settings.idle_timeout.as_ref().map(|idle| idle.value),
        api_key_header: settings.api_key_header.as_ref().map(|h| h.value.clone()),
        headers: settings.headers.iter().map(|h| h.value.clone()).collect(),
    }
}

/// The settings overrides `agent run` takes from its flags.
pub(super) fn run_overrides(global: &GlobalArgs, args: &RunArgs) -> Overrides {
    Overrides {
        provider: args.provider,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        max_output_tokens: args.max_output_tokens,
        headers: args.headers.clone(),
        mode: args.mode,
        allow: args.allow.clone(),
        deny: args.deny.clone(),
        timeout: args.timeout,
        max_turns: args.max_turns,
        fail_on_deny: args.fail_on_deny.then_some(true),
        edits: args
            .allow_edits
            .then_some(crate::policy::files::Edits::Allow),
        ..super::with_sandbox_flags(super::overrides(global), &args.sandbox)
    }
}

/// What the loop needs, from the settings and the flags.
pub(super) fn agent_config(
    settings: &Settings,
    workspace: &std::path::Path,
    args: &RunArgs,
    sandbox: crate::sandbox::Sandbox,
) -> Result<agent::Config> {
    let files = settings.file_rules(workspace).map_err(|error| {
        Error::Usage(format!("{error}: fix [permissions.files] in the settings"))
    })?;
    Ok(agent::Config {
        workspace: workspace.to_path_buf(),
        os: OsFamily::current(),
        shell: settings.shell.value.clone(),
        allow: settings.allow.clone(),
        deny: settings.deny.clone(),
        mode: settings.mode.value,
        read_only: settings.read_only.value,
        limits: settings.limits(),
        inspect_limits: settings.inspect_limits(),
        max_turns: settings.max_turns.value,
        env_remove: Some(settings.api_key_env.value.clone())
            .into_iter()
            .filter(|v| !v.is_empty())
            .collect(),
        secrets: exec::Secrets::new(secrets(settings)),
        sandbox,
        budget: agent::Budget {
            max_tokens: args.max_tokens,
            max_time: args.max_time,
        },
        instructions: if args.no_project_instructions {
            agent::Instructions::default()
        } else {
            agent::Instructions::load(workspace)
        },
        files: std::sync::Arc::new(files),
        snapshots: crate::snapshot::Recorder::default(),
        run_allowed: agent::RunAllowed::default(),
    })
}

/// The run's first event: `start`, or `continue` for a run picked up again.
fn opening_event(
    rebuilt: Option<&crate::transcript::Rebuilt>,
    id: String,
    time: String,
    prompt: &str,
    model: String,
    config: &agent::Config,
) -> Event {
    let header = Header {
        id,
        time,
        prompt: prompt.to_owned(),
        model,
        cwd: config.workspace.display().to_string(),
        version: crate::VERSION.to_owned(),
        sandbox: config.sandbox.status(),
        mode_note: agent::auto_fallback(config.mode, &config.sandbox, config.snapshots.available()),
    };
    match rebuilt {
        Some(rebuilt) => Event::Continue {
            header,
            resumed_turns: rebuilt.turns,
            note: rebuilt.note.clone(),
        },
        None => Event::Start {
            header,
            instructions: config
                .instructions
                .files
                .iter()
                .map(|path| path.display().to_string())
                .collect(),
        },
    }
}

/// The exit status of a run that ended by itself (DESIGN's table), after the answer.
fn exit_status(
    outcome: Outcome,
    stats: &Stats,
    settings: &Settings,
    output: &Output,
) -> Result<ExitCode> {
    let fail_on_deny = settings.fail_on_deny.value && !stats.denials.is_empty();
    match outcome {
        Outcome::Answered | Outcome::MaxTurns if fail_on_deny => {
            output.finish()?;
            denials_notice(&stats.denials, &settings.fail_on_deny.origin);
            Ok(Status::DENIED.into())
        }
        Outcome::Answered | Outcome::MaxTurns => {
            output.finish()?;
            Ok(Status::Success.into())
        }
        Outcome::Truncated => {
            output.finish()?;
            Ok(Status::Truncated.into())
        }
        Outcome::Budget => Ok(Status::Budget.into()),
        Outcome::Interrupted => Ok(Status::Interrupted.into()),
        Outcome::Error | Outcome::ContentFilter => Ok(Status::Failure.into()),
    }
}

/// How often the live pane redraws its spinner and clock.
const TICK: Duration = Duration::from_millis(100);

/// The live pane needs stderr to be a capable terminal.
pub(super) fn live_screen_possible() -> bool {
    std::io::stderr().is_terminal() && std::env::var("TERM").map_or(true, |term| term != "dumb")
}

/// The task: for a run picked from a list at the keyboard with no task given yet, asked for
/// there; else [`read_prompt`].
fn task(
    earlier: Option<&super::resume::Earlier>,
    words: Option<&str>,
    global: &GlobalArgs,
) -> Result<String> {
    match earlier {
        Some(earlier) if earlier.picked && words.is_none() && std::io::stdin().is_terminal() => {
            super::resume::ask_next_message(super::use_color(global))
        }
        _ => read_prompt(words),
    }
}

/// The prompt from the argument, or all of stdin for `-` / no argument when stdin is piped.
fn read_prompt(arg: Option<&str>) -> Result<String> {
    let from_stdin = match arg {
        Some("-") => true,
        Some(_) => false,
        None if std::io::stdin().is_terminal() => {
            return Err(Error::Usage(
                "no prompt: give the task as an argument (`agent run 'list the files'`) or pipe it on stdin"
                    .to_owned(),
            ));
        }
        None => true,
    };
    let prompt = if from_stdin {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map_err(|error| {
            Error::Runtime(format!("cannot read the prompt from stdin: {error}"))
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::Usage("the prompt on stdin is not valid UTF-8".to_owned()))?;
        text.trim_end().to_owned()
    } else {
        arg.unwrap_or_default().to_owned()
    };
    if prompt.trim().is_empty() {
        return Err(Error::Usage(
            "the prompt is empty: say what to do (`agent run 'list the files'`)".to_owned(),
        ));
    }
    Ok(prompt)
}

/// Says why a model request is taking longer: it failed and is being tried again.
pub(super) fn retry_notice(message: &str) {
    // The message may quote the server's reply: sanitised like everything else.
    let message = crate::ui::sanitize::escape_prose(message);
    // At a terminal the working line may be drawn where the cursor waits: erased first.
    let clear = if std::io::stderr().is_terminal() {
        "\r\x1b[K"
    } else {
        ""
    };
    let _ = writeln!(std::io::stderr(), "{clear}agent: {message}");
}

/// `agent: openai gpt-4.1-mini · OPENAI_API_KEY is set`, `agent: demo · no provider
/// configured …`: the provider and model this run uses, and why that provider.
fn provider_line(settings: &Settings) -> String {
    use crate::ui::summary::{home_path, one_line};
    let provider = settings.provider.value;
    let what = match provider {
        ProviderKind::Demo => "demo".to_owned(),
        _ => format!("{} {}", provider.name(), one_line(&settings.model.value)),
    };
    let why = match &settings.provider.origin {
        Origin::Default(why) => (*why).to_owned(),
        Origin::Flag(flag) => format!("{flag} {}", provider.name()),
        Origin::Env(var) => format!("{var} is set"),
        Origin::User(path, line)
        | Origin::Project(path, line)
        | Origin::UserProject(path, line, _) => {
            format!("{}:{line}", home_path(path))
        }
        Origin::Profile(name, path, line) => {
            format!("profile {name} in {}:{line}", home_path(path))
        }
    };
    let demo = match (&settings.provider.origin, provider) {
        (Origin::Default(_), ProviderKind::Demo) => {
            " (offline demo model: set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)"
        }
        (_, ProviderKind::Demo) => " (offline demo model)",
        _ => "",
    };
    format!("agent: {what} · {why}{demo}")
}

/// On a terminal, the first line: which model answers and why; elsewhere only the demo says
/// so (scripts read stderr). Nothing with -q.
pub(super) fn model_notice(settings: &Settings, global: &GlobalArgs) {
    if global.quiet {
        return;
    }
    let color = super::use_color(global);
    if std::io::stderr().is_terminal() {
        dim_line(&provider_line(settings), color);
    } else if settings.provider.value == ProviderKind::Demo {
        demo_notice(settings, color);
    }
}

/// Says the demo model answers, dimmed when `color` (the one colour decision: `--color`,
/// `NO_COLOR`, a terminal).
pub(super) fn demo_notice(settings: &Settings, color: bool) {
    let line = match &settings.provider.origin {
        Origin::Default(_) => {
            "agent: offline demo model (set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)"
        }
        _ => "agent: offline demo model",
    };
    dim_line(line, color);
}

/// One dim line on stderr (plain without colour).
fn dim_line(line: &str, color: bool) {
    let mut stderr = std::io::stderr().lock();
    if color {
        let _ = writeln!(stderr, "\x1b[2m{line}\x1b[0m");
    } else {
        let _ = writeln!(stderr, "{line}");
    }
}

fn open_transcript(start: SystemTime, quiet: bool) -> Option<Transcript> {
    let warn = |message: String| {
        if !quiet {
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: {message}: this run is not recorded"
            );
        }
    };
    let Some(dir) = settings::state_dir(&super::env_var) else {
        warn("no state directory (set XDG_STATE_HOME or HOME)".to_owned());
        return None;
    };
    let runs = dir.join("runs");
    match Transcript::create(&runs, start) {
        Ok(transcript) => Some(transcript),
        Err(error) => {
            warn(format!(
                "cannot create a transcript in `{}`: {error}",
                runs.display()
            ));
            None
        }
    }
}

/// The transcript of a run being continued, opened to append.
fn append_transcript(path: &std::path::Path, quiet: bool) -> Option<Transcript> {
    match Transcript::append(path) {
        Ok(transcript) => Some(transcript),
        Err(error) => {
            if !quiet {
                let _ = writeln!(
                    std::io::stderr(),
                    "agent: warning: cannot append to the transcript `{}`: {error}: this part \
                     of the run is not recorded",
                    path.display()
                );
            }
            None
        }
    }
}

/// Where events go besides the transcript: `--json` lines or plain progress.
struct Output {
    json: bool,
    plain: Plain,
    tui: Option<Arc<Mutex<Tui>>>,
    answer: Option<String>,
    /// Characters of the current call's output already recorded; output past
    /// the cap is still shown live but not recorded or printed as events.
    recorded_chars: usize,
    max_output_chars: usize,
    transcript_failed: bool,
    stdout_closed: bool,
    /// Colour the answer when stdout is a terminal (`--color`, NO_COLOR).
    stdout_color: bool,
    /// Secrets (the API key) never written to stdout as `--json`.
    redact: exec::Secrets,
    /// `--max-tokens`, to say once (unless -q) that a server reporting no usage cannot be
    /// held to it.
    max_tokens: Option<u64>,
    quiet: bool,
    usage_missing_said: bool,
}

impl Output {
    /// A turn ended without usage: `--max-tokens` counts nothing on this server.
    fn usage_missing(&mut self) {
        if let (Some(limit), false, false) = (self.max_tokens, self.quiet, self.usage_missing_said)
        {
            self.usage_missing_said = true;
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: the model server reports no token usage, so --max-tokens \
                 {limit} cannot be enforced: use --max-turns or --max-time to bound the run"
            );
        }
    }

    fn new(global: &GlobalArgs, config: &agent::Config, tui: Option<Arc<Mutex<Tui>>>) -> Self {
        let stdout_color = match global.color {
            crate::cli::Color::Always => true,
            crate::cli::Color::Never => false,
            crate::cli::Color::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        let mut plain = Plain::new(global.verbose, global.quiet)
            .streaming(!global.json && std::io::stderr().is_terminal());
        plain.dim = super::use_color(global);
        Self {
            json: global.json,
            stdout_color,
            tui,
            plain,
            answer: None,
            recorded_chars: 0,
            max_output_chars: config.limits.max_output_chars,
            transcript_failed: false,
            stdout_closed: false,
            redact: config.secrets.clone(),
            max_tokens: config.budget.max_tokens,
            quiet: global.quiet,
            usage_missing_said: false,
        }
    }

    fn emit(&mut self, event: &Event, transcript: Option<&mut Transcript>) {
        if let Some(tui) = &self.tui {
            tui.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .handle(event);
        } else if !self.json {
            self.plain.handle(event);
        }
        match event {
            Event::ToolCall { .. } => self.recorded_chars = 0,
            Event::OutputDelta { text, .. } => {
                let chars = text.chars().count();
                self.recorded_chars = self.recorded_chars.saturating_add(chars);
                if self.recorded_chars > self.max_output_chars {
                    return;
                }
            }
            Event::Done { answer, .. } => self.answer.clone_from(answer),
            Event::TurnEnd { usage: None, .. } => self.usage_missing(),
            _ => {}
        }
        if let Some(transcript) = transcript
            && let Err(error) = transcript.record(event)
            && !self.transcript_failed
        {
            self.transcript_failed = true;
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: cannot write the transcript `{}`: {error}: the rest of this run is not recorded",
                transcript.path().display()
            );
        }
        if self.json && !self.stdout_closed {
            let line = self
                .redact
                .redact(serde_json::to_string(event).unwrap_or_default());
            let mut stdout = std::io::stdout().lock();
            if writeln!(stdout, "{line}")
                .and_then(|()| stdout.flush())
                .is_err()
            {
                self.stdout_closed = true;
            }
        }
    }

    /// Prints the final answer on stdout, unless it already streamed onto the
    /// same terminal (live screen with stdout a terminal) or went out as JSON.
    fn finish(&self) -> Result<()> {
        let shown_live = self.tui.as_ref().map_or_else(
            || self.plain.streams_text(),
            |tui| {
                tui.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .shows_text()
            },
        );
        let on_screen = shown_live && std::io::stdout().is_terminal();
        match &self.answer {
            Some(answer) if !self.json && !on_screen => {
                let answer = answer.trim_end();
                // A terminal gets the Markdown rendered (and escape sequences escaped); a file
                // or pipe gets the exact bytes.
                let answer = if std::io::stdout().is_terminal() {
                    crate::ui::markdown::render(answer, self.stdout_color)
                } else {
                    answer.to_owned()
                };
                super::print_stdout(&format!("{answer}\n"))
            }
            _ => Ok(()),
        }
    }
}
