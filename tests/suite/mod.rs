//! Integration suites, one file per feature, and the shared test harness.

mod allow_options;
mod approvals;
mod auto;
#[cfg(unix)]
mod background;
#[cfg(unix)]
mod background_guard;
#[cfg(unix)]
mod background_output;
#[cfg(unix)]
mod background_sandboxes;
mod bang;
mod check;
mod ci;
mod color;
mod composing;
mod config;
mod escalate;
mod exec;
mod fake_model;
mod file_tools;
mod file_tools_tty;
mod harness;
mod headless;
mod inspect;
mod instructions;
mod layers;
mod limits;
mod live;
mod mcp;
mod mcp_http;
mod model;
mod model_pick;
#[cfg(unix)]
mod network;
mod notify;
mod pickers;
mod project_warnings;
mod readme;
mod recap;
mod resume;
mod rules;
mod run;
mod runners;
mod sandbox;
mod sanitize;
mod screen_slips;
mod secrets;
mod session;
mod session_cost;
mod ship;
mod shown;
mod signals;
mod slips;
mod snapshots;
mod support;
mod terminals;
mod tty;
mod typing;
mod usage;
mod web_fetch;
