//! What the suites share beyond the harness: [`require`]'s one way to skip a test.

pub mod require;

pub use require::{require, require_program};
