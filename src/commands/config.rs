//! `agent config path|show`.

use std::process::ExitCode;

use crate::cli::{ConfigCommand, GlobalArgs};
use crate::error::{Result, Status};
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
        ConfigCommand::Show => {
            let settings = super::load_settings(global, &super::overrides(global))?;
            super::print_stdout(&settings::render(&settings, global.json))?;
        }
    }
    Ok(Status::Success.into())
}
