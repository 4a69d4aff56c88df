//! `agent`: a terminal coding agent that drives a model in a loop, lets it run
//! shell commands only through a permission policy, and streams their output.
//!
//! Data flows one way: [`cli`] → settings → the agent loop → {model, policy,
//! approve, exec} → events → {ui, transcript, `--json`}. Lower modules never
//! import higher ones; [`exec`] knows nothing of models or terminals.

pub mod agent;
pub mod approve;
pub mod cli;
mod commands;
pub mod error;
pub mod event;
pub mod exec;
pub mod mcp;
pub mod model;
pub mod net;
pub mod policy;
pub mod sandbox;
pub mod session;
pub mod settings;
pub mod snapshot;
pub mod tool_error;
pub mod tools;
pub mod transcript;
pub mod ui;
pub mod workspace;

use std::ffi::OsString;
use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser as _;

pub use error::{Error, Result, Status};

/// The version, with the commit when the build knew it.
pub const VERSION: &str = match option_env!("AGENT_VERSION_LONG") {
    Some(version) => version,
    None => env!("CARGO_PKG_VERSION"),
};

/// Parses `args`, runs the command and returns the process exit code. Errors
/// are printed as one line `agent: <what happened>: <what to do>`.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut args = args.into_iter().peekable();
    let program = args.next();
    // The sandbox helper re-executes this binary: it restricts itself and becomes the command.
    if args.peek().is_some_and(|arg| arg == sandbox::HELPER_ARG) {
        return sandbox::helper_main(args.skip(1));
    }
    // A panic's text may quote a command's bytes: printed escaped.
    ui::panic::install_hook();
    // The agent holds API keys in its environment: other processes of this user (the
    // commands it runs among them) may not read `/proc/<agent>/environ` or attach a debugger.
    // Programs the agent starts are dumpable again after their `exec`.
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    let args: Vec<OsString> = args.collect();
    if let [only] = args.as_slice()
        && (only == "--version" || only == "-V")
    {
        let _ = std::io::stdout().write_all(version_line().as_bytes());
        return ExitCode::SUCCESS;
    }
    let cli = match cli::Cli::try_parse_from(program.into_iter().chain(args)) {
        Ok(cli) => cli,
        Err(error) => {
            let status = if error.use_stderr() {
                Status::Usage
            } else {
                Status::Success
            };
            let _ = error.print();
            return status.into();
        }
    };
    // `run --json` promises events on stdout: an error before the run starts is one too.
    let json_events = cli.global.json && matches!(cli.command, Some(cli::Command::Run(_)));
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(error) => {
            let message = error.to_string();
            let message = ui::sanitize::escape_prose(&message);
            let _ = writeln!(std::io::stderr(), "agent: {message}");
            if json_events && error.status() == Status::Usage {
                let event = serde_json::json!({
                    "type": "error",
                    "code": error.code(),
                    "message": error.to_string(),
                });
                let _ = writeln!(std::io::stdout(), "{event}");
            }
            error.status().into()
        }
    }
}

/// What `agent --version` prints: the line clap would, answered before clap builds its whole
/// command tree (a third of the start-up's work, for one line).
fn version_line() -> String {
    format!("agent {VERSION}\n")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn the_early_version_line_is_the_one_clap_prints() {
        assert_eq!(
            super::version_line(),
            super::cli::Cli::command().render_version()
        );
    }
}
