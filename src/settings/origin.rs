//! Where a value came from (a layer and its line), kept with the value for
//! `agent config show`.

use std::fmt;
use std::path::PathBuf;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Built-in default (with why, when derived).
    Default(&'static str),
    /// The user settings file.
    User(PathBuf, usize),
    /// This workspace's table in the user settings file
    /// (`[projects."<workspace>".permissions.commands]`).
    UserProject(PathBuf, usize, String),
    /// A profile in the user settings file.
    Profile(String, PathBuf, usize),
    /// The project settings file.
    Project(PathBuf, usize),
    /// An environment variable.
    Env(&'static str),
    /// A command-line flag.
    Flag(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default("") => write!(f, "default"),
            Origin::Default(why) => write!(f, "default ({why})"),
            Origin::User(path, line) => write!(f, "user {}:{line}", path.display()),
            Origin::UserProject(path, line, workspace) => write!(
                f,
                "user {}:{line} [projects.\"{workspace}\"]",
                path.display()
            ),
            Origin::Profile(name, path, line) => {
                write!(f, "profile {name} {}:{line}", path.display())
            }
            Origin::Project(path, line) => write!(f, "project {}:{line}", path.display()),
            Origin::Env(var) => write!(f, "env {var}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its origin.
    pub origin: Origin,
}

pub(super) fn sourced<T>(value: T, origin: Origin) -> Sourced<T> {
    Sourced { value, origin }
}
