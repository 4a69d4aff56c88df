//! Integration suites, one file per feature, and the shared test harness.

mod exec;
mod harness;
