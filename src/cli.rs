//! The command line: clap definitions and help text, nothing else. Converted
//! once into settings and requests; no other module sees clap types.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// A terminal coding agent that never runs a command you did not allow.
///
/// The model asks to run shell commands; each one passes a permission policy
/// (built-in read-only list, your allow/deny rules) and, where the policy is
/// unsure, a prompt on your terminal. Without a terminal to ask, it denies.
#[derive(Debug, Parser)]
#[command(name = "agent", version = crate::VERSION, about, long_about = None)]
#[command(propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Options shared by every command.
    #[command(flatten)]
    pub global: GlobalArgs,
}

/// Options every subcommand accepts.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Read this settings file instead of the user settings file.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Overlay the keys of `[profiles.NAME]` from the settings.
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
    /// Work in DIR instead of the current directory.
    #[arg(short = 'C', long = "cwd", global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print less (errors only).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more detail.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// When to use colour (NO_COLOR is respected).
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto, value_name = "WHEN")]
    pub color: Color,
}

/// When to use colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Color {
    /// Colour on a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run COMMAND through the same runner the model uses (no policy: you typed it).
    ///
    /// Runs `sh -c COMMAND` (cmd.exe on Windows) in its own process group with
    /// stdin closed, the model API keys removed from the environment, a timeout
    /// and an output cap. Output streams through as it comes; the exit status is
    /// the command's (124 on timeout). With --json, prints one result object.
    #[command(
        after_help = "Examples:\n  agent exec 'ls -la'\n  agent exec --json --timeout 5 -- cargo test\n  agent exec -C /tmp -- 'du -sh .'"
    )]
    Exec(ExecArgs),
}

/// `agent exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Kill the command after SECS seconds (default 30; fractions allowed).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<std::time::Duration>,
    /// Keep at most N characters of stdout + stderr (head and tail) in --json output.
    #[arg(long, value_name = "N")]
    pub max_output_chars: Option<usize>,
    /// The command line; several words are joined with spaces.
    #[arg(required = true, value_name = "COMMAND", num_args = 1.., trailing_var_arg = true)]
    pub command: Vec<String>,
}

/// Parses a positive number of seconds, fractions allowed.
///
/// # Errors
/// When the value is not a positive finite number.
pub fn parse_secs(value: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = value
        .parse()
        .map_err(|_| format!("`{value}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 || secs > 86_400.0 * 365.0 {
        return Err(format!("`{value}` must be a positive number of seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}
