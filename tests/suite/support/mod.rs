//! What the suites share beyond the harness: [`require`]'s one way to skip a test,
//! [`gate`]'s proof that nothing of a stopped command is left, and [`reaped`] processes that
//! end with the test.

pub mod gate;
pub mod reaped;
pub mod require;

pub use require::{require, require_program};
