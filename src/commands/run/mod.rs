//! `agent run`: resolve settings, pick the model, wire events to the
//! transcript and the screen (or `--json`), and drive the loop.

mod config;
mod model;
mod output;
mod prompt;

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use crate::agent::{self, Event, Header, Outcome, Stats};
use crate::approve::{self, Approver};
use crate::cli::{GlobalArgs, RunArgs};
use crate::error::{Result, Status};
use crate::exec;
use crate::model::Model as _;
use crate::settings::{Origin, Settings};
use crate::ui::Tui;

use super::signals::{self, Signals};

pub(super) use config::{agent_config, instructions_notice, run_overrides};
pub(super) use model::{model_for, model_notice, provider_config, retry_notice};

use config::secrets;
use output::{Output, append_transcript, open_transcript};
use prompt::task;

/// The conversation a run goes on with (none for a new run) and what it sends: `prompt`,
/// after the `!command`s a session ran since its last message.
fn resumed_conversation(
    rebuilt: Option<crate::transcript::Rebuilt>,
    prompt: &str,
) -> (Vec<crate::model::Message>, String) {
    match rebuilt {
        Some(rebuilt) => (
            rebuilt.messages,
            agent::with_notes(&rebuilt.waiting, prompt),
        ),
        None => (Vec::new(), prompt.to_owned()),
    }
}

/// Runs `agent run`.
pub(crate) fn run(global: &GlobalArgs, args: RunArgs) -> Result<ExitCode> {
    let words = (!args.prompt.is_empty()).then(|| args.prompt.join(" "));
    let overrides = run_overrides(global, &args);
    let workspace = super::workspace(global.cwd.as_deref())?;
    let earlier = super::resume::locate(&args, &workspace, super::use_color(global))?;
    let prompt = task(earlier.as_ref(), words.as_deref(), global)?;
    let earlier = earlier.map(|earlier| earlier.path);
    let settings = super::load_settings(global, &overrides, &workspace)?;
    let catalogue = super::mcp::catalogue(global, &settings, &workspace)?;
    let quiet = global.quiet;
    model_notice(&settings, global);
    let sandbox = super::sandbox(&settings, &workspace);
    // Its commands share one look at the workspace, kept up to date by a watch.
    crate::sandbox::watch_workspaces();
    let mut model = model_for(&settings, global.quiet)?;
    let mut config = agent_config(&settings, &workspace, &args, sandbox)?;
    let (runtime, _processes) = (super::runtime()?, crate::exec::background::Scope::default());
    #[cfg(unix)]
    let _proxy = super::network::start_for_loop(
        &runtime,
        &settings,
        &mut config,
        approve::terminal_reachable(args.no_prompt).is_ok(),
    )?;
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
    keep_secrets(&settings, &catalogue, &mut config, transcript.as_mut());
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
    let (mut conversation, sent) = resumed_conversation(rebuilt, &prompt);

    let reachable = approve::terminal_reachable(args.no_prompt);
    let mut approver = Approver::new(
        reachable,
        settings.user_file.clone(),
        workspace.clone(),
        color,
        tui.clone(),
    );
    let mut stats = Stats::default();
    // Listening from before the MCP servers start: a signal while they start ends them (the
    // half-started ones too) and the run, as it does later.
    let mut signals = runtime.block_on(async { Signals::listen() });
    let started = start_mcp(&mut signals, &catalogue, &config, &mut approver, &mut emit);
    config.mcp = match runtime.block_on(started) {
        Ok(servers) => servers,
        Err(stop) => {
            emit(interrupted_done(&stats, stop, &config));
            return Ok(stopped(stop, tui.as_ref(), runtime));
        }
    };
    let outcome = runtime.block_on(drive(
        &mut signals,
        agent::run_after(
            &mut model,
            &mut approver,
            &config,
            &mut conversation,
            &sent,
            &mut stats,
            &mut emit,
        ),
        tui.as_ref(),
    ));
    // Everything the MCP servers started ends with the run.
    if let Some(servers) = &config.mcp {
        runtime.block_on(servers.shutdown());
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(stop) => {
            emit(interrupted_done(&stats, stop, &config));
            return Ok(stopped(stop, tui.as_ref(), runtime));
        }
    };
    finish_screen(tui.as_ref());
    exit_status(outcome?, &stats, &settings, &output)
}

/// The model's key, secret headers and the MCP servers' secrets (tokens, secret headers,
/// `env` values) kept out of the transcript and of what the model is given back.
fn keep_secrets(
    settings: &crate::settings::Settings,
    catalogue: &crate::mcp::Catalogue,
    config: &mut agent::Config,
    transcript: Option<&mut crate::transcript::Transcript>,
) {
    let mcp_secrets = catalogue.secrets(&super::env_var);
    for secret in &mcp_secrets {
        config.secrets.add(secret);
    }
    if let Some(transcript) = transcript {
        let mcp_secrets = mcp_secrets.iter().map(String::as_str);
        for secret in secrets(settings).into_iter().chain(mcp_secrets) {
            transcript.redact(secret);
        }
    }
}

/// The end of a run a signal stopped (its `done` event emitted): the screen closed, the
/// terminal restored, the exit status 128 + n.
fn stopped(
    stop: signals::Stop,
    tui: Option<&Arc<Mutex<Tui>>>,
    runtime: tokio::runtime::Runtime,
) -> ExitCode {
    finish_screen(tui);
    signals::restore_terminal();
    // A prompt may still be waiting for a key on a blocking thread: do not wait for it.
    runtime.shutdown_background();
    stop.status().into()
}

/// Starts the run's MCP servers, saying each problem once (a `warning` event the screens
/// show).
/// A stopping signal meanwhile ends the start (and the servers started so far).
async fn start_mcp(
    signals: &mut Signals,
    catalogue: &crate::mcp::Catalogue,
    config: &agent::Config,
    approver: &mut Approver<Option<Arc<Mutex<Tui>>>>,
    emit: &mut impl FnMut(Event),
) -> std::result::Result<Option<Arc<crate::mcp::Servers>>, signals::Stop> {
    let (servers, notices) = tokio::select! {
        started = agent::start_mcp(
            catalogue,
            config,
            super::mcp_launch(&config.sandbox, &config.workspace),
            &super::env_var,
            approver,
        ) => started,
        stop = signals.recv() => return Err(stop),
    };
    for notice in notices {
        emit(Event::Warning {
            code: crate::event::MCP_WARNING.to_owned(),
            message: notice,
        });
    }
    Ok(servers)
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
    signals: &mut Signals,
    run: impl Future<Output = std::result::Result<Outcome, crate::model::ModelError>>,
    tui: Option<&Arc<Mutex<Tui>>>,
) -> std::result::Result<std::result::Result<Outcome, crate::model::ModelError>, signals::Stop> {
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
