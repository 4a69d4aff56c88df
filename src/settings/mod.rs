//! Settings: the layers (built-in < user file < profile < project file <
//! environment < flags) merged once into plain [`Settings`], each value
//! remembering where it came from for `agent config show`.
//!
//! A project file (`.agent/settings.toml` in the workspace) can only tighten:
//! add deny rules, lower limits, make the mode stricter. Anything else it says
//! is reported and ignored — a cloned repository must not grant itself
//! permissions or point the agent at another server.

mod draft;
mod error;
mod file;
mod merged;
mod network;
mod notify;
mod origin;
mod overrides;
mod paths;
mod project;
mod show;

use std::path::Path;

pub use error::SettingsError;
pub use file::parse_mode;
pub use merged::{FileSettings, ListedRule, ModelFacts, RuleKind, Settings, SnapshotSettings};
pub use network::NetworkSettings;
pub use notify::Notify;
pub use origin::{Origin, Sourced};
pub use overrides::Overrides;
pub use paths::{state_dir, user_settings_path};
pub use show::render;

use draft::{Draft, finish};
use file::Layer;
use origin::sourced;
use overrides::apply_flags;

use crate::policy::Source;

/// Default number of model turns before the loop stops.
pub const DEFAULT_MAX_TURNS: u32 = 50;

/// Whether `a` and `b` name one file: the same path, or the same file once links and `..`
/// are resolved (relative paths from the current directory, as they are read).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

/// Loads and merges every layer for a run in `workspace`. `env` reads
/// environment variables (injected so tests need not touch the process's).
///
/// # Errors
/// A malformed or unreadable settings file, or an unknown profile.
pub fn load(
    overrides: &Overrides,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Settings, SettingsError> {
    let user_file = match &overrides.config_file {
        Some(path) if !path.exists() => {
            return Err(SettingsError::MissingConfig { path: path.clone() });
        }
        Some(path) => path.clone(),
        None => user_settings_path(env)?,
    };
    let mut draft = Draft::defaults(user_file.clone());

    let user = file::read(&user_file)?;
    draft.settings.mcp_tables = user.mcp;
    for entry in &user.entries {
        draft.apply(
            entry,
            Origin::User(user_file.clone(), entry.line),
            Source::User,
        );
    }
    for (key, entries) in &user.projects {
        if names_workspace(key, workspace) {
            for entry in entries {
                let origin = Origin::UserProject(user_file.clone(), entry.line, key.clone());
                draft.apply(entry, origin, Source::User);
            }
        }
    }
    if let Some(name) = &overrides.profile {
        let Some(entries) = user.profiles.get(name) else {
            return Err(SettingsError::UnknownProfile {
                name: name.clone(),
                defined: user.profiles.keys().cloned().collect(),
            });
        };
        for entry in entries {
            let origin = Origin::Profile(name.clone(), user_file.clone(), entry.line);
            draft.apply(entry, origin, Source::User);
        }
    }
    draft.settings.warnings.extend(user.warnings);

    let project_path = workspace.join(".agent").join("settings.toml");
    // The user file may be the project file under another name (a relative `--config` or
    // `AGENT_CONFIG_DIR`, a symlink): read once, as the user's, its warnings said once.
    if !same_file(&project_path, &user_file) && project_path.is_file() {
        let project: Layer = file::read(&project_path)?;
        draft.settings.mcp_tables |= project.mcp;
        for entry in &project.entries {
            draft.apply_project(entry, &project_path);
        }
        if !project.projects.is_empty() {
            draft.settings.warnings.push(format!(
                "{}: [projects] is ignored: per-project rules belong in the user settings file \
                 (`3` at the prompt writes them there)",
                project_path.display()
            ));
        }
        for name in project.profiles.keys() {
            draft.settings.warnings.push(format!(
                "{}: profile `{name}` is ignored: profiles belong in the user settings file",
                project_path.display()
            ));
        }
        draft.settings.warnings.extend(project.warnings);
        draft.settings.project_file = Some(project_path);
    }

    if let Some(model) = env("AGENT_MODEL").filter(|m| !m.is_empty()) {
        draft.model = Some(sourced(model, Origin::Env("AGENT_MODEL")));
    }
    apply_flags(&mut draft, overrides);
    let settings = finish(draft, env);
    check_base_url(&settings.base_url)?;
    Ok(settings)
}

/// A base URL must say its scheme: `localhost:8080/v1` would otherwise be read as a URL of
/// scheme `localhost`, or as a relative one, and fail far from where it was written.
fn check_base_url(url: &Sourced<String>) -> Result<(), SettingsError> {
    let value = url.value.trim();
    let lower = value.to_ascii_lowercase();
    if value.is_empty() || lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(());
    }
    let suggestion = match value.split_once("://") {
        Some((_, rest)) => format!("http://{rest}"),
        None => format!("http://{value}"),
    };
    Err(SettingsError::BadBaseUrl {
        url: value.to_owned(),
        origin: url.origin.to_string(),
        suggestion,
    })
}

/// Whether `key` of a `[projects."<key>"]` table names `workspace` (as written, or
/// once symbolic links are resolved).
fn names_workspace(key: &str, workspace: &Path) -> bool {
    let path = Path::new(key);
    path == workspace || path.canonicalize().is_ok_and(|path| path == workspace)
}

#[cfg(test)]
mod tests;
