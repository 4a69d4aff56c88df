//! What a person sees: the plain progress lines, and (on a terminal) the
//! live inline pane. Both consume the same [`crate::agent::Event`]s.

mod plain;
pub mod summary;

pub use plain::Plain;
