//! The suites' first path to their shared support, kept so every `harness::` import (here and
//! on branches merging later) goes on working: everything lives in [`super::support`].

#![allow(unused_imports)]

pub use super::support::events::{events, json};
pub use super::support::git::git;
#[cfg(unix)]
pub use super::support::paths::first_on_path;
pub use super::support::paths::path_str;
pub use super::support::process::{Process, kill_left, left_running, live_processes};
pub use super::support::sandbox::{KEY, Sandbox};
pub use super::support::wait::wait_for;
