//! `agent mcp`'s arguments.

use clap::{Args, Subcommand};

/// `agent mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// list (default), add, remove or approve.
    #[command(subcommand)]
    pub command: Option<McpCommand>,
}

/// `agent mcp …`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the servers of this workspace: where each comes from, whether it may start, and
    /// its tools with what they add to every request (servers that may start are started,
    /// fenced as in a run, and ended).
    List,
    /// Write `[mcp.servers.NAME]` into your settings file: a local server (`-- COMMAND
    /// ARGS…`) or a remote one (`--url`).
    Add {
        /// The server's name (letters, digits, `-`, single `_`).
        #[arg(value_name = "NAME")]
        name: String,
        /// An environment variable the server gets, NAME=VALUE (repeatable); it gets no
        /// other besides PATH, HOME and LANG.
        #[arg(long, value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// A streamable-HTTP server's URL instead of a command.
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// The program and its arguments.
        #[arg(value_name = "COMMAND", num_args = 0.., last = true)]
        command: Vec<String>,
    },
    /// Take `[mcp.servers.NAME]` out of your settings file.
    Remove {
        /// The server's name.
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Trust a server this project's `.agent/settings.toml` proposes, as it is proposed now
    /// (kept for this workspace in your settings file; a changed proposal asks again).
    Approve {
        /// The server's name.
        #[arg(value_name = "NAME")]
        name: String,
    },
}
