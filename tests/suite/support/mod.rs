//! What the suites share: a private [`sandbox`] and the `agent` commands run in it, hermetic
//! [`git`], [`events`] read as JSON, the system's view of [`process`]es, waiting on events
//! ([`wait`]), a real terminal ([`tmux`]), [`require`]'s one way to skip a test, [`gate`]'s
//! proof that nothing of a stopped command is left, and [`reaped`] processes that end with the
//! test. `harness::` re-exports the first of these under their old path.

#![allow(dead_code)]

pub mod events;
pub mod gate;
pub mod git;
pub mod paths;
pub mod process;
pub mod reaped;
pub mod require;
pub mod sandbox;
pub mod tmux;
pub mod tools;
pub mod wait;

pub use require::{require, require_program};
