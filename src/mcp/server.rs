//! What one configured MCP server is: how it is reached, what it may do, its bounds, and
//! where it was written. Read by `table`, combined into a run's catalogue by `config`.

use std::path::PathBuf;
use std::time::Duration;

use crate::sandbox::SandboxMode;

/// How long a local server may take to start and answer `initialize`, by default.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one tool call may take, by default: a server that hangs must not hang the run.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// How the agent reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A local program speaking JSON-RPC on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// The endpoint.
        url: String,
        /// Extra request headers.
        headers: Vec<(String, String)>,
        /// The environment variable holding the bearer token (never the token itself).
        bearer_token_env: Option<String>,
    },
}

/// Where a server's table was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerOrigin {
    /// The user settings file.
    User(PathBuf, usize),
    /// A profile in the user settings file.
    Profile(String, PathBuf, usize),
    /// The project settings file: a proposal.
    Project(PathBuf, usize),
}

impl std::fmt::Display for ServerOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerOrigin::User(path, line) => write!(f, "user {}:{line}", path.display()),
            ServerOrigin::Profile(name, path, line) => {
                write!(f, "profile {name} {}:{line}", path.display())
            }
            ServerOrigin::Project(path, line) => write!(f, "project {}:{line}", path.display()),
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Its name (`[mcp.servers.NAME]`), part of its tools' names.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// The only environment variables it gets besides `PATH`, `HOME` and `LANG`.
    pub env: Vec<(String, String)>,
    /// The sandbox a local server runs in (`off` asks once per run).
    pub sandbox: SandboxMode,
    /// Hosts a local server may reach; empty: no network.
    pub network: Vec<String>,
    /// Tools the model sees: only these when non-empty.
    pub tools_allow: Vec<String>,
    /// Tools the model never sees (beats `tools_allow`).
    pub tools_deny: Vec<String>,
    /// Start and `initialize` bound.
    pub startup_timeout: Duration,
    /// One call's bound.
    pub tool_timeout: Duration,
    /// Where it was written.
    pub origin: ServerOrigin,
}
