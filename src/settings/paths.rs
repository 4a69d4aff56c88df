//! Where settings and state live: `AGENT_CONFIG_DIR`, else
//! `$XDG_CONFIG_HOME/agent` or `~/.config/agent` (Linux and macOS alike), or
//! `%APPDATA%\agent` on Windows; state under `$XDG_STATE_HOME/agent` or the
//! platform's state/data directory.

use std::path::PathBuf;

use super::SettingsError;

/// The user settings file.
///
/// # Errors
/// When no home directory can be found.
pub fn user_settings_path(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, SettingsError> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("AGENT_CONFIG_DIR") {
        return Ok(dir.join("settings.toml"));
    }
    let base = if cfg!(windows) {
        var("APPDATA").or_else(|| directories::BaseDirs::new().map(|d| d.config_dir().to_owned()))
    } else {
        var("XDG_CONFIG_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| {
                var("HOME")
                    .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_owned()))
                    .map(|home| home.join(".config"))
            })
    };
    base.map(|dir| dir.join("agent").join("settings.toml"))
        .ok_or(SettingsError::NoConfigDir)
}

/// The directory for run transcripts' parent (`…/agent`), when one can be found.
#[must_use]
pub fn state_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("XDG_STATE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| {
            directories::BaseDirs::new().map(|d| {
                d.state_dir()
                    .unwrap_or_else(|| d.data_local_dir())
                    .to_owned()
            })
        })
        .map(|dir| dir.join("agent"))
}
