//! One connection to a server through the official SDK (`rmcp`, client role): the
//! `initialize` handshake (protocol version negotiated as the SDK does it) bounded by the
//! server's `startup_timeout_secs`, `tools/list` and `tools/call` bounded by its
//! `tool_timeout_secs`. Results are taken as JSON (the wire's shape), so the rest of the
//! module does not follow the SDK's types. `notifications/tools/list_changed` is noted and
//! the list fetched again at the next request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use serde_json::Value;

use super::config::{ServerConfig, Transport};
use super::meter::{Broken, Metered};
use super::stdio::{self, Launch, Process};

/// How often a waiting call looks whether the agent ended its connection.
const CUT_OFF_POLL: std::time::Duration = std::time::Duration::from_millis(50);
/// Longest error text kept from a server or the SDK (one line).
const MAX_ERROR_CHARS: usize = 300;

/// The client side's handler: notes `tools/list_changed`.
#[derive(Debug, Clone, Default)]
pub struct Handler {
    changed: Arc<AtomicBool>,
}

impl rmcp::ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.store(true, Ordering::Relaxed);
    }
}

/// A started, initialised server.
pub struct Connection {
    service: RunningService<RoleClient, Handler>,
    changed: Arc<AtomicBool>,
    /// The local process (none for a remote server).
    process: Option<Process>,
    /// Why the agent ended the connection (a bound broken), if it did.
    broken: Broken,
    tool_timeout: Duration,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("process", &self.process)
            .finish_non_exhaustive()
    }
}

/// Starts `server` (a local one under `policy` with `env`; a remote one with `token`) and
/// runs the handshake, all within its startup timeout.
///
/// # Errors
/// Why it did not start, in one line.
pub async fn connect(
    server: &ServerConfig,
    policy: Option<&crate::sandbox::Policy>,
    env: stdio::ServerEnv<'_>,
    launch: &Launch,
    token: Option<String>,
) -> Result<Connection, String> {
    let handler = Handler::default();
    let changed = Arc::clone(&handler.changed);
    let bound = server.startup_timeout;
    let late = || {
        format!(
            "it did not answer `initialize` within {} s (startup_timeout_secs)",
            bound.as_secs()
        )
    };
    let (service, process, broken) = match &server.transport {
        Transport::Stdio { command, args } => {
            let (process, reader, writer) =
                stdio::spawn(&server.name, command, args, env, policy, launch)?;
            let broken = Arc::clone(&process.broken);
            let transport = Metered::new(
                rmcp::transport::async_rw::AsyncRwTransport::new_client(reader, writer),
                Arc::clone(&broken),
            );
            match tokio::time::timeout(bound, handler.serve(transport)).await {
                Ok(Ok(service)) => (service, Some(process), broken),
                Ok(Err(error)) => {
                    return Err(reason(&broken).unwrap_or_else(|| {
                        format!("its `initialize` failed: {}", one_line(&error.to_string()))
                    }));
                }
                Err(_) => return Err(late()),
            }
        }
        Transport::Http { url, headers, .. } => {
            let broken = Broken::default();
            let transport = Metered::new(
                super::http::transport(url, headers, token)?,
                Arc::clone(&broken),
            );
            match tokio::time::timeout(bound, handler.serve(transport)).await {
                Ok(Ok(service)) => (service, None, broken),
                Ok(Err(error)) => {
                    return Err(reason(&broken).unwrap_or_else(|| {
                        let error = error.to_string();
                        let why = super::http::failure(&error).unwrap_or_else(|| one_line(&error));
                        format!("{url} did not start an MCP session: {why}")
                    }));
                }
                Err(_) => return Err(late()),
            }
        }
    };
    Ok(Connection {
        service,
        changed,
        process,
        broken,
        tool_timeout: server.tool_timeout,
    })
}

fn reason(broken: &Broken) -> Option<String> {
    broken.lock().ok().and_then(|b| b.clone())
}

impl Connection {
    /// What its sandbox undid in the workspace's git surfaces since the last check.
    pub fn check_surfaces(&mut self) -> Vec<String> {
        self.process
            .as_mut()
            .map(Process::check_surfaces)
            .unwrap_or_default()
    }
    /// The local process's id.
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(Process::id)
    }

    /// Has its tools listed again at the next refresh (a restarted server's may differ).
    pub fn mark_changed(&self) {
        self.changed.store(true, Ordering::Relaxed);
    }

    /// Whether the server said its tools changed since the last listing (and forgets it).
    pub fn tools_changed(&self) -> bool {
        self.changed.swap(false, Ordering::Relaxed)
    }

    /// Its tools, as JSON objects of the wire (`name`, `description`, `inputSchema`, …).
    ///
    /// # Errors
    /// Why they could not be listed, in one line.
    pub async fn list_tools(&self) -> Result<Vec<Value>, String> {
        let listed = tokio::time::timeout(self.tool_timeout, self.service.list_all_tools()).await;
        match listed {
            Ok(Ok(tools)) => Ok(tools
                .iter()
                .filter_map(|tool| serde_json::to_value(tool).ok())
                .collect()),
            Ok(Err(error)) => Err(self.failure("`tools/list`", &error.to_string())),
            Err(_) => Err(format!(
                "`tools/list` got no answer within {} s (tool_timeout_secs)",
                self.tool_timeout.as_secs()
            )),
        }
    }

    /// Calls `tool` with `arguments` (a JSON object); the result as wire JSON.
    ///
    /// # Errors
    /// A timeout, a closed connection or a protocol error, in one line (a tool's own failure
    /// is a result with `isError`).
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Value, CallError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        // The agent may end the connection while the call waits (a flood on the call's own
        // stream): the call ends then too, not at its timeout.
        let cut_off = async {
            loop {
                if let Some(why) = self.ended() {
                    return why;
                }
                tokio::time::sleep(CUT_OFF_POLL).await;
            }
        };
        let call = async {
            tokio::select! {
                result = self.service.call_tool(params) => Ok(result),
                why = cut_off => Err(why),
            }
        };
        match tokio::time::timeout(self.tool_timeout, call).await {
            Ok(Ok(Ok(result))) => serde_json::to_value(&result).map_err(|error| {
                CallError::Failed(format!("its result did not serialise: {error}"))
            }),
            Ok(Ok(Err(
                error
                @ (rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)),
            ))) => Err(CallError::Closed(
                self.failure("the call", &error.to_string()),
            )),
            Ok(Ok(Err(error))) => Err(CallError::Failed(
                self.failure("the call", &error.to_string()),
            )),
            Ok(Err(why)) => Err(CallError::Closed(format!(
                "the server's connection ended: {why}"
            ))),
            Err(_) => Err(CallError::TimedOut(self.tool_timeout)),
        }
    }

    fn failure(&self, what: &str, error: &str) -> String {
        match self.ended() {
            Some(why) => format!("the server's connection ended: {why}"),
            None => format!("{what} failed: {}", one_line(error)),
        }
    }

    /// Why the agent ended the connection (a message too large, a flood), if it did: such a
    /// server is not started again in the run (it would do the same).
    #[must_use]
    pub fn ended(&self) -> Option<String> {
        reason(&self.broken)
    }

    /// Whether the connection is closed (the server exited or broke the protocol).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed()
    }
}

/// A call that got no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// No answer within the tool timeout.
    TimedOut(Duration),
    /// The server answered with an error, or broke the protocol.
    Failed(String),
    /// The connection ended during the call (the server stopped): it may or may not have
    /// acted on it.
    Closed(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::TimedOut(after) => write!(
                f,
                "no answer within {} s (tool_timeout_secs)",
                after.as_secs()
            ),
            CallError::Failed(why) => f.write_str(why),
            CallError::Closed(why) => write!(
                f,
                "{why}: the server stopped during the call (whether it acted on it is unknown)"
            ),
        }
    }
}

/// `text` on one line, cut to [`MAX_ERROR_CHARS`] characters and sanitised.
fn one_line(text: &str) -> String {
    let line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_ERROR_CHARS)
        .collect();
    crate::ui::sanitize::escape(&line).into_owned()
}
