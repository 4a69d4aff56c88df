//! The subcommands' glue: turn parsed flags into requests for the library's
//! modules and print their results. Each subcommand has one file, or one directory when it
//! holds several ideas (`run/`).

mod check;
mod config;
mod diff;
mod exec;
mod history;
mod history_table;
mod man;
mod mcp;
mod network;
mod resume;
mod rules;
mod run;
mod session;
mod signals;
mod snapshots;
mod undo;

use std::process::ExitCode;

use std::io::Write as _;

use crate::cli::{Cli, Command, GlobalArgs, SandboxArgs};
use crate::error::{Error, Result};
use crate::sandbox::{Policy, Sandbox, State};
use crate::settings::{Overrides, Settings};

/// Runs the parsed command line.
pub(crate) fn dispatch(cli: Cli) -> Result<ExitCode> {
    let Some(command) = cli.command else {
        if !session::possible() {
            return Ok(session::short_help());
        }
        let args = crate::cli::RunArgs {
            interactive: true,
            continue_latest: cli.continue_latest,
            resume: cli.resume,
            ..crate::cli::RunArgs::default()
        };
        return session::open(&cli.global, args);
    };
    if cli.continue_latest || cli.resume.is_some() {
        return Err(Error::Usage(
            "-c/--continue and --resume before a command belong to bare `agent`: write \
             `agent run --continue …`"
                .to_owned(),
        ));
    }
    match command {
        Command::Run(args) if args.interactive => session::open(&cli.global, args),
        Command::Run(args) => run::run(&cli.global, args),
        Command::Exec(args) => exec::run(&cli.global, args),
        Command::History(args) => history::run(&cli.global, &args),
        Command::Check(args) => check::run(&cli.global, args),
        Command::Config(command) => config::run(&cli.global, &command),
        Command::Rules(args) => rules::run(&cli.global, &args),
        Command::Mcp(args) => mcp::run(&cli.global, &args),
        Command::Diff(args) => diff::run(&cli.global, &args),
        Command::Undo(args) => undo::run(&cli.global, &args),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut command, "agent", &mut out);
            print_stdout(&String::from_utf8_lossy(&out))?;
            Ok(crate::Status::Success.into())
        }
        Command::Man => {
            // The plain version keeps the checked-in page stable across commits.
            let command =
                <Cli as clap::CommandFactory>::command().version(env!("CARGO_PKG_VERSION"));
            let page = man::page(command)
                .map_err(|error| Error::Runtime(format!("cannot render the man page: {error}")))?;
            print_stdout(&page)?;
            Ok(crate::Status::Success.into())
        }
    }
}

/// Reads an environment variable for the settings layers.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The overrides every command shares (`--config`, `--profile`).
pub(crate) fn overrides(global: &GlobalArgs) -> Overrides {
    Overrides {
        config_file: global.config.clone(),
        profile: global.profile.clone(),
        ..Overrides::default()
    }
}

/// `overrides` plus the sandbox flags of `run` and `exec`.
pub(crate) fn with_sandbox_flags(overrides: Overrides, args: &SandboxArgs) -> Overrides {
    Overrides {
        sandbox_mode: args.sandbox_mode,
        network: args.network.then_some(true),
        sandbox_required: args.sandbox_required.then_some(true),
        ..overrides
    }
}

/// The sandbox for commands run in `workspace` with `settings`: `~/` in `writable`
/// is the home directory, relative paths are taken from the workspace.
pub(crate) fn sandbox(settings: &Settings, workspace: &std::path::Path) -> Sandbox {
    let home = env_var("HOME")
        .filter(|home| !home.is_empty())
        .map(std::path::PathBuf::from);
    let extra: Vec<std::path::PathBuf> = settings
        .writable
        .iter()
        .filter_map(|entry| match (entry.value.strip_prefix("~/"), &home) {
            (Some(rest), Some(home)) => Some(home.join(rest)),
            (Some(_), None) => None,
            (None, _) if entry.value == "~" => home.clone(),
            (None, _) => Some(workspace.join(&entry.value)),
        })
        .collect();
    let mut policy = Policy::new(
        settings.sandbox_mode.value,
        settings.network.value,
        workspace,
        &std::env::temp_dir(),
        &extra,
    );
    if let Some(cache) = sandbox_cache() {
        policy.keep_in(cache);
    }
    let mut sandbox = Sandbox::new(policy, settings.sandbox_required.value);
    network::say_when_impossible(settings, &mut sandbox);
    sandbox
}

/// What starting an MCP server needs: the workspace, the commands' sandbox policy (when
/// active) and the log directory (`<state>/mcp`).
pub(crate) fn mcp_launch(
    sandbox: &Sandbox,
    workspace: &std::path::Path,
) -> crate::mcp::stdio::Launch {
    crate::mcp::stdio::Launch {
        workspace: workspace.to_path_buf(),
        sandbox: sandbox.active_policy().cloned(),
        log_dir: crate::settings::state_dir(&env_var).map(|dir| dir.join("mcp")),
    }
}

/// Where the sandbox keeps what it learns between processes: `<state dir>/sandbox`, with
/// the links in the part that exists resolved (so that it can be compared with the
/// writable directories).
fn sandbox_cache() -> Option<std::path::PathBuf> {
    let dir = crate::settings::state_dir(&env_var)?.join("sandbox");
    dir.ancestors().find_map(|existing| {
        let rest = dir.strip_prefix(existing).ok()?;
        let resolved = existing.canonicalize().ok()?;
        Some(resolved.join(rest))
    })
}

/// Says once on stderr when the sandbox cannot apply: a warning (unless -q) when
/// commands run without it, an error line when it is required and nothing will run.
pub(crate) fn sandbox_notice(sandbox: &Sandbox, quiet: bool) {
    let line = match (&sandbox.state, sandbox.refusal(), &sandbox.limitation) {
        (_, Some(refusal), _) => format!("agent: {refusal}"),
        (State::Unavailable(why), None, _) if !quiet => format!(
            "agent: warning: the sandbox is not available here ({why}): commands run without it"
        ),
        (State::Active(_), None, Some(limitation)) if !quiet => {
            format!("agent: warning: the sandbox is active, but {limitation}")
        }
        _ => return,
    };
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Says once on stderr (unless -q) when mode `auto` acts as `ask` here, and why.
pub(crate) fn auto_notice(config: &crate::agent::Config, snapshots: bool, quiet: bool) {
    let note = crate::agent::auto_fallback(config.mode, &config.sandbox, snapshots);
    if let (Some(note), false) = (note, quiet) {
        let _ = writeln!(std::io::stderr(), "agent: warning: {note}");
    }
}

/// Loads the settings for the workspace and prints their warnings (unless -q).
pub(crate) fn load_settings(
    global: &GlobalArgs,
    overrides: &Overrides,
    workspace: &std::path::Path,
) -> Result<Settings> {
    let settings = crate::settings::load(overrides, workspace, &env_var)?;
    crate::approve::configure_notify(settings.notify.value, global.json);
    if !global.quiet {
        let mut stderr = std::io::stderr().lock();
        for warning in &settings.warnings {
            // A project file's text (an unknown key): escaped like every other such text.
            let warning = crate::ui::sanitize::escape_prose(warning);
            let _ = writeln!(stderr, "agent: warning: {warning}");
        }
    }
    Ok(settings)
}

/// A current-thread runtime: the agent is I/O-bound and single-threaded.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Error::Runtime(format!("cannot start the async runtime: {error}")))
}

/// The workspace: `-C DIR` (relative to the current directory) or the current directory.
pub(crate) fn workspace(cwd: Option<&std::path::Path>) -> Result<std::path::PathBuf> {
    let here = std::env::current_dir()
        .map_err(|error| Error::Runtime(format!("cannot read the current directory: {error}")))?;
    let dir = match cwd {
        Some(dir) => here.join(dir),
        None => here,
    };
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(Error::Usage(format!(
            "working directory `{}` {what}: check -C/--cwd",
            dir.display()
        )));
    }
    Ok(dir.canonicalize().unwrap_or(dir))
}

/// Writes to stdout, treating a closed pipe (`agent … | head`) as a quiet end.
pub(crate) fn print_stdout(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(error) => Err(Error::Runtime(format!("cannot write to stdout: {error}"))),
    }
}

/// Whether to colour stderr: `--color`, then NO_COLOR, then whether it is a terminal.
pub(crate) fn use_color(global: &GlobalArgs) -> bool {
    use std::io::IsTerminal as _;
    match global.color {
        crate::cli::Color::Always => true,
        crate::cli::Color::Never => false,
        crate::cli::Color::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stderr().is_terminal()
        }
    }
}
