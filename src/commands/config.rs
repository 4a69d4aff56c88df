//! `agent config path|show`.

use std::process::ExitCode;

use crate::cli::{ConfigCommand, GlobalArgs};
use crate::error::{Error, Result, Status};
use crate::sandbox::State;
use crate::settings;

/// Runs `agent config …`.
pub(crate) fn run(global: &GlobalArgs, command: &ConfigCommand) -> Result<ExitCode> {
    match command {
        ConfigCommand::Path => {
            let path = match &global.config {
                Some(path) => path.clone(),
                None => settings::user_settings_path(&super::env_var)?,
            };
            super::print_stdout(&format!("{}\n", path.display()))?;
        }
        ConfigCommand::Init => {
            let path = match &global.config {
                Some(path) => path.clone(),
                None => settings::user_settings_path(&super::env_var)?,
            };
            if path.exists() {
                return Err(Error::Runtime(format!(
                    "`{}` already exists and was left unchanged: edit it, or move it away first",
                    path.display()
                )));
            }
            write_new(&path, EXAMPLE).map_err(|error| {
                Error::Runtime(format!("cannot write `{}`: {error}", path.display()))
            })?;
            super::print_stdout(&format!("wrote {}\n", path.display()))?;
        }
        ConfigCommand::Show => {
            let workspace = super::workspace(global.cwd.as_deref())?;
            let settings = super::load_settings(global, &super::overrides(global), &workspace)?;
            let sandbox = super::sandbox(&settings, &workspace);
            let active = match &sandbox.limitation {
                Some(limitation) => format!("{} (but {limitation})", sandbox_how(&sandbox)),
                None => sandbox_how(&sandbox),
            };
            let state = match &sandbox.state {
                State::Active(_) => Ok(active.as_str()),
                State::Unavailable(why) => Err(why.as_str()),
                State::Off => Err("mode off"),
            };
            super::print_stdout(&settings::render(&settings, state, global.json))?;
        }
    }
    Ok(Status::Success.into())
}

/// The commented example settings file.
pub(crate) const EXAMPLE: &str = include_str!("../../assets/settings.example.toml");

/// Creates `path` with `text`, failing if it exists (no race with another writer).
fn write_new(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(text.as_bytes())
}

/// What enforces an active sandbox (empty otherwise).
fn sandbox_how(sandbox: &crate::sandbox::Sandbox) -> String {
    match &sandbox.state {
        State::Active(how) => how.clone(),
        State::Unavailable(_) | State::Off => String::new(),
    }
}
