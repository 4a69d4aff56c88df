//! Integration suites, one file per feature, and the shared test harness.

mod allow_options;
mod approvals;
mod check;
mod ci;
mod color;
mod config;
mod exec;
mod fake_model;
mod harness;
mod instructions;
mod layers;
mod model;
mod pickers;
mod readme;
mod resume;
mod rules;
mod run;
mod sandbox;
mod sanitize;
mod session;
mod ship;
mod signals;
mod snapshots;
mod tty;
mod usage;
