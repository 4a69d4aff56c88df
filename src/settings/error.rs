//! Settings that could not be read: a malformed or unreadable file, a missing `--config`
//! file, an unknown profile, a base URL without its scheme.

use std::path::PathBuf;

/// Settings that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file is malformed or a value has the wrong type.
    #[error("{}:{line}: {message}: fix the settings file", path.display())]
    Invalid {
        /// The settings file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The file exists but could not be read.
    #[error("cannot read settings file `{}`: {message}", path.display())]
    Read {
        /// The settings file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// `--config FILE` names a file that does not exist.
    #[error("settings file `{}` does not exist: check --config", path.display())]
    MissingConfig {
        /// The file given.
        path: PathBuf,
    },
    /// `--profile NAME` is not defined.
    #[error("unknown profile `{name}`: {}", defined_profiles(defined))]
    UnknownProfile {
        /// The profile asked for.
        name: String,
        /// The profiles the settings define.
        defined: Vec<String>,
    },
    /// The model's base URL does not start with `http://` or `https://`.
    #[error(
        "base URL `{url}` ({origin}) must start with http:// or https://: write `{suggestion}` \
         (or https://) instead"
    )]
    BadBaseUrl {
        /// The URL as written.
        url: String,
        /// Where it was written.
        origin: String,
        /// The URL with `http://` in front.
        suggestion: String,
    },
    /// No home or config directory could be found.
    #[error("cannot find the configuration directory: set AGENT_CONFIG_DIR or HOME")]
    NoConfigDir,
}

fn defined_profiles(defined: &[String]) -> String {
    if defined.is_empty() {
        "no profiles are defined (add [profiles.NAME] to the settings file)".to_owned()
    } else {
        format!("defined profiles are {}", defined.join(", "))
    }
}
