//! The subcommands' glue: turn parsed flags into requests for the library's
//! modules and print their results. Each subcommand has one file.

mod exec;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::error::{Error, Result};

/// Runs the parsed command line.
pub(crate) fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Exec(args) => exec::run(&cli.global, args),
    }
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
        return Err(Error::Usage(format!(
            "working directory `{}` does not exist: check -C/--cwd",
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
