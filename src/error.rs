//! The top-level error and the exit-status table (DESIGN.md "Command line").
//! Every module's error joins here; `main` prints it as one line and exits with
//! its status. Nothing else decides exit codes.

use std::process::ExitCode;

/// Exit statuses, in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Done.
    Success = 0,
    /// Runtime failure: provider, network, I/O.
    Failure = 1,
    /// Usage or settings error.
    Usage = 2,
    /// `check`: the decision is ask.
    Ask = 3,
    /// `check`: the decision is deny.
    Deny = 4,
    /// `run`: the answer was printed but cut at the model's output limit — not a clean
    /// success for a script, not a failure to answer either.
    Truncated = 5,
    /// `run`: `--max-tokens` or `--max-time` stopped it before a final answer — not 0, so a
    /// script notices; not 1, nothing failed.
    Budget = 6,
    /// Stopped by SIGHUP (the terminal was closed): 128 + 1.
    HangUp = 129,
    /// Interrupted (Ctrl+C, SIGINT): 128 + 2.
    Interrupted = 130,
    /// Stopped by SIGQUIT: 128 + 3.
    Quit = 131,
    /// Stopped by SIGTERM: 128 + 15.
    Terminated = 143,
}

impl Status {
    /// `run --fail-on-deny`: the run answered, but a command was denied on the way. The
    /// same number as `check`'s ask (each subcommand has its own 3–9); a job reads it as
    /// "something needed a person".
    pub const DENIED: Status = Status::Ask;
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> Self {
        ExitCode::from(status as u8)
    }
}

/// Anything that ends a command with an error line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments: `agent: <message>`, exit 2.
    #[error("{0}")]
    Usage(String),
    /// Settings could not be read or are invalid; exit 2.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// The model provider failed; exit 1.
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    /// Some other runtime failure; exit 1.
    #[error("{0}")]
    Runtime(String),
    /// The person pressed Ctrl+C; exit 130.
    #[error("interrupted")]
    Interrupted,
    /// A signal stopped the agent (SIGTERM, SIGHUP, SIGQUIT); exit 128 + its number.
    #[error("stopped by {signal}")]
    Stopped {
        /// The signal's name.
        signal: &'static str,
        /// The exit status that goes with it.
        status: Status,
    },
}

impl Error {
    /// A stable name for the kind of failure, for `--json` consumers.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Error::Usage(_) => "usage",
            Error::Settings(_) => "settings",
            Error::Model(error) => error.code(),
            Error::Runtime(_) => "runtime",
            Error::Interrupted | Error::Stopped { .. } => "interrupted",
        }
    }

    /// The exit status this error ends the process with.
    #[must_use]
    pub fn status(&self) -> Status {
        match self {
            Error::Usage(_)
            | Error::Settings(_)
            | Error::Model(
                crate::model::ModelError::MissingKey { .. }
                | crate::model::ModelError::BadUrl { .. },
            ) => Status::Usage,
            Error::Model(_) | Error::Runtime(_) => Status::Failure,
            Error::Interrupted => Status::Interrupted,
            Error::Stopped { status, .. } => *status,
        }
    }
}

/// Result with the top-level error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
