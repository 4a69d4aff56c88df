//! What a person sees: the plain progress lines, and (on a terminal) the
//! live inline pane. Both consume the same [`crate::agent::Event`]s.

mod backend;
mod plain;
pub mod summary;
mod tui;

pub use plain::Plain;
pub use tui::{PaneState, Tui, render};
