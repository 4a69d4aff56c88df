//! What a person sees: the plain progress lines, and (on a terminal) the
//! live inline pane. Both consume the same [`crate::event::Event`]s. Everything
//! from a model or a command passes [`sanitize`] on its way to a terminal.

mod backend;
pub mod changes;
pub mod composer;
pub mod input;
pub mod markdown;
pub mod network;
mod pane;
pub mod panic;
pub mod pick;
mod plain;
pub mod sanitize;
mod stream;
pub mod summary;
mod tail;
mod tui;
mod working;

pub use pane::{PaneState, render};
pub use plain::Plain;
pub use tui::Tui;
