//! `agent` with no command at a terminal, and `agent run -i`: resolve settings and the
//! model as `run` does, then hand the terminal to the interactive session
//! ([`crate::session`]). Signals reach the session as [`session::Stopped`].

use std::io::IsTerminal as _;
use std::process::ExitCode;

use crate::approve;
use crate::cli::{GlobalArgs, RunArgs};
use crate::error::{Error, Result};
use crate::model::Model as _;
use crate::session;
use crate::settings::{self, Origin};

use super::run;
use super::signals::{Signals, Stop};

/// Whether a session can run here: keys from a terminal on stdin, a terminal on stderr.
pub(crate) fn possible() -> bool {
    std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal()
        && std::env::var("TERM").map_or(true, |term| term != "dumb")
}

/// Runs a session with `args` (`run -i`'s, or bare `agent`'s `-c`/`--resume`).
pub(crate) fn open(global: &GlobalArgs, args: RunArgs) -> Result<ExitCode> {
    if global.json {
        return Err(Error::Usage(
            "a session has no --json: use `agent run --json 'TASK'` for events".to_owned(),
        ));
    }
    if !possible() {
        return Err(Error::Usage(
            "an interactive session needs a terminal (stdin and stderr): give the task as \
             `agent run 'TASK'` or pipe it on stdin"
                .to_owned(),
        ));
    }
    let first = (!args.prompt.is_empty()).then(|| args.prompt.join(" "));
    let overrides = run::run_overrides(global, &args);
    let workspace = super::workspace(global.cwd.as_deref())?;
    let color = super::use_color(global);
    let earlier = super::resume::locate(&args, &workspace, color)?;
    let settings = super::load_settings(global, &overrides, &workspace)?;
    let catalogue = super::mcp::catalogue(global, &settings, &workspace)?;
    run::model_notice(&settings, global);
    let sandbox = super::sandbox(&settings, &workspace);
    // Its commands share one look at the workspace, kept up to date by a watch.
    crate::sandbox::watch_workspaces();
    let model = run::model_for(&settings, global.quiet)?;
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut config = run::agent_config(&settings, &workspace, &args, sandbox)?;
    let mcp_secrets = catalogue.secrets(&super::env_var);
    for secret in &mcp_secrets {
        config.secrets.add(secret);
    }
    let mcp_launch = super::mcp_launch(&config.sandbox, &workspace);
    let runtime = super::runtime()?;
    // Its commands share one network namespace, and what runs in the background ends with
    // the run (before the runtime goes: its processes' sandboxes are checked after them).
    let processes = crate::exec::background::Scope::default();
    #[cfg(unix)]
    let _proxy = super::network::start_for_loop(
        &runtime,
        &settings,
        &mut config,
        crate::approve::terminal_reachable(args.no_prompt).is_ok(),
    )?;
    run::instructions_notice(&config.instructions, global);
    super::sandbox_notice(&config.sandbox, global.quiet);
    let resumed = match earlier {
        Some(earlier) => {
            let rebuilt = super::resume::load(&earlier.path, &model.describe())?;
            Some((earlier.path, rebuilt))
        }
        None => None,
    };
    let snapshots = super::snapshots::source(&settings, &workspace, global.quiet);
    super::auto_notice(&config, snapshots.store().is_some(), global.quiet);
    let mode_floor =
        matches!(settings.mode.origin, Origin::Project(..)).then_some(settings.mode.value);
    let options = session::Options {
        provider: run::provider_config(&settings),
        model,
        retry_notice: (!global.quiet).then_some(run::retry_notice as fn(&str)),
        first,
        resumed,
        state_dir: settings::state_dir(&super::env_var),
        api_key: settings.api_key.clone(),
        color,
        verbose: global.verbose,
        quiet: global.quiet,
        reachable: approve::terminal_reachable(args.no_prompt),
        settings_file: settings.user_file.clone(),
        rules: settings.rules.clone(),
        mode_floor,
        context_window: settings.facts.context_window.as_ref().map(|w| w.value),
        prices: match (&settings.facts.price_in, &settings.facts.price_out) {
            (Some(price_in), Some(price_out)) => Some((price_in.value, price_out.value)),
            (Some(price_in), None) => Some((price_in.value, 0.0)),
            (None, Some(price_out)) => Some((0.0, price_out.value)),
            (None, None) => None,
        },
        snapshots,
        config,
        mcp: Some((catalogue, mcp_launch)),
        mcp_secrets,
    };
    let status = runtime.block_on(async {
        let mut signals = Signals::listen();
        let (sender, stops) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let stop = signals.recv().await;
                let stopped = session::Stopped {
                    status: stop.status(),
                    note: stop.note(),
                    interrupt: stop == Stop::Interrupt,
                };
                if sender.send(stopped).is_err() {
                    break;
                }
            }
        });
        // Boxed: the whole session's state is too large a future for the stack.
        Box::pin(session::run(options, stops)).await
    });
    drop(processes);
    // A prompt may still be waiting for a key on a blocking thread: do not wait for it.
    runtime.shutdown_background();
    Ok(status.into())
}

/// Bare `agent` without a terminal: the short help on stderr, exit 2, never waiting.
pub(crate) fn short_help() -> ExitCode {
    let mut command = <crate::cli::Cli as clap::CommandFactory>::command();
    let help = command.render_help();
    let _ = std::io::Write::write_all(&mut std::io::stderr(), help.to_string().as_bytes());
    crate::Status::Usage.into()
}
