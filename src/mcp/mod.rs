//! MCP servers as tools. A run's servers come from the settings (`config`: a project file
//! only proposes), start fenced (`stdio`: our sandbox, scrubbed environment, stderr to a log)
//! through the official SDK (`client`), and offer their tools as `mcp__SERVER__TOOL`
//! (`names`). Every call is decided like a command (`rules`: `mcp:SERVER[/TOOL]` rules, the
//! mode, else a person) by the loop, which owns the asking; results are capped for the model
//! (`result`). Everything a run started ends with it ([`Servers`] ends its processes when
//! dropped).
//!
//! This module knows nothing of terminals or the loop: it is below `agent`, above the
//! settings, the sandbox and the policy.

pub mod client;
pub mod config;
pub mod display;
pub mod edit;
pub mod http;
pub mod listing;
mod meter;
pub mod names;
pub mod result;
pub mod rules;
mod server;
pub mod stdio;
mod table;

use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::Value;

pub use config::{Catalogue, ServerConfig, Standing, Transport};
pub use names::OfferedTool;
pub use result::CallOutput;

use client::{CallError, Connection};
use stdio::Launch;

/// One server of a run.
#[derive(Debug)]
struct Slot {
    config: ServerConfig,
    connection: Option<Connection>,
    /// Why it is not running, once said.
    failed: Option<String>,
    /// Restarts after it died (at most one per run).
    restarts: u32,
    /// It started once in this run (one that never did is not started again on a call: it
    /// already said why).
    ran: bool,
}

/// The MCP servers of one run: started together, their tools offered, called one at a time,
/// ended with the run.
#[derive(Debug)]
pub struct Servers {
    slots: tokio::sync::Mutex<Vec<Slot>>,
    tools: std::sync::Mutex<Vec<OfferedTool>>,
    /// The built-in tools' names, which no MCP tool's name may take.
    builtin: std::sync::Mutex<BTreeSet<String>>,
    launch: Launch,
    /// `PATH`, `HOME`, `LANG` of the agent, read once.
    passed: Vec<(String, String)>,
    /// Each remote server's bearer token (read once from the variable its settings name),
    /// or why there is none.
    tokens: std::collections::BTreeMap<String, Result<String, String>>,
    /// The servers whose process runs in the sandbox (local, not `sandbox = "off"`, and a
    /// sandbox here).
    fenced: BTreeSet<String>,
}

/// What one call did, for the events.
#[derive(Debug, Clone)]
pub struct Called {
    /// The result for the model, or why there is none.
    pub output: Result<CallOutput, CallError>,
    /// How long it took.
    pub duration: std::time::Duration,
    /// A notice to show once (the server died and was restarted, or not).
    pub notice: Option<String>,
    /// What the server's sandbox undid in the workspace's git surfaces (checked after each
    /// call, as after a command), one line each.
    pub undone: Vec<String>,
}

impl Servers {
    /// The servers of `catalogue` that may start (configured, or proposed and approved), not
    /// yet started; `lookup` reads the agent's environment.
    #[must_use]
    pub fn new(
        catalogue: &Catalogue,
        launch: Launch,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let slots = catalogue
            .startable()
            .map(|config| Slot {
                config: config.clone(),
                connection: None,
                failed: None,
                restarts: 0,
                ran: false,
            })
            .collect();
        let tokens = catalogue
            .startable()
            .filter_map(|config| match &config.transport {
                Transport::Http {
                    bearer_token_env: Some(var),
                    ..
                } => {
                    let token = lookup(var)
                        .filter(|t| !t.is_empty())
                        .ok_or_else(|| format!("`{var}` (its bearer_token_env) is not set"));
                    Some((config.name.clone(), token))
                }
                _ => None,
            })
            .collect();
        let fenced = catalogue
            .startable()
            .filter(|config| {
                matches!(config.transport, Transport::Stdio { .. })
                    && stdio::policy(config.sandbox, launch.sandbox.as_ref(), &launch.workspace)
                        .is_some()
            })
            .map(|config| config.name.clone())
            .collect();
        Self {
            fenced,
            slots: tokio::sync::Mutex::new(slots),
            tools: std::sync::Mutex::new(Vec::new()),
            builtin: std::sync::Mutex::new(BTreeSet::new()),
            launch,
            passed: stdio::environment(&[], lookup),
            tokens,
        }
    }

    /// Whether `server` runs in the sandbox (what it does is fenced like a command).
    #[must_use]
    pub fn fenced(&self, server: &str) -> bool {
        self.fenced.contains(server)
    }

    /// Servers that run unfenced (`sandbox = "off"`): a person says yes once per run first.
    pub async fn unfenced(&self) -> Vec<ServerConfig> {
        self.slots
            .lock()
            .await
            .iter()
            .filter(|slot| {
                matches!(slot.config.transport, Transport::Stdio { .. })
                    && self.policy(&slot.config).is_none()
            })
            .map(|slot| slot.config.clone())
            .collect()
    }

    /// Starts every server (in parallel, each within its startup timeout) except the
    /// unfenced ones not in `unfenced_allowed`, and lists their tools. Returns one notice per
    /// server that did not start and per tool dropped, and `taken` (built-in tool names)
    /// gains the tools' names.
    pub async fn start(
        &self,
        unfenced_allowed: &[String],
        taken: &BTreeSet<String>,
    ) -> Vec<String> {
        let mut slots = self.slots.lock().await;
        let mut notices = Vec::new();
        let starts = slots.iter().map(|slot| {
            let local = matches!(slot.config.transport, Transport::Stdio { .. });
            let fenced = self.policy(&slot.config).is_some();
            let allowed = !local || fenced || unfenced_allowed.contains(&slot.config.name);
            async move {
                if !allowed {
                    return Err(
                        "it runs without the sandbox (`sandbox = \"off\"` or no sandbox \
                                here) and nobody said yes"
                            .to_owned(),
                    );
                }
                // Listed in the same task: every server's start and listing run at once.
                let connection = self.connect(&slot.config).await?;
                let listed = connection.list_tools().await?;
                Ok((connection, listed))
            }
        });
        let started = futures_util::future::join_all(starts).await;
        if let Ok(mut builtin) = self.builtin.lock() {
            builtin.clone_from(taken);
        }
        let mut taken = taken.clone();
        let mut offered = Vec::new();
        for (slot, started) in slots.iter_mut().zip(started) {
            let name = slot.config.name.clone();
            if !slot.config.network.is_empty() {
                notices.push(format!(
                    "MCP server `{name}`: `network` hosts are not reachable yet (no network proxy \
                     in this version): it runs with the network off"
                ));
            }
            match started {
                Ok((connection, listed)) => {
                    let (tools, dropped) = names::offer(&slot.config, &listed, &mut taken);
                    notices.extend(dropped);
                    offered.extend(tools);
                    slot.connection = Some(connection);
                    slot.ran = true;
                }
                Err(why) => {
                    notices.push(not_started(&name, &why));
                    slot.failed = Some(why);
                }
            }
        }
        if let Ok(mut tools) = self.tools.lock() {
            *tools = offered;
        }
        notices
    }

    /// Lists again the tools of every server that said they changed (`tools/list_changed`);
    /// `true` when the offered tools are to be read again. Tools already offered keep their
    /// names.
    pub async fn refresh(&self) -> bool {
        // A notification that came with the last answer is handled by a task of its own: let
        // it run first.
        tokio::task::yield_now().await;
        let slots = self.slots.lock().await;
        let changed: Vec<&Slot> = slots
            .iter()
            .filter(|slot| {
                slot.connection
                    .as_ref()
                    .is_some_and(Connection::tools_changed)
            })
            .collect();
        if changed.is_empty() {
            return false;
        }
        let mut offered = self.tools();
        let mut taken = self.builtin.lock().map(|b| b.clone()).unwrap_or_default();
        for slot in changed {
            let Some(connection) = &slot.connection else {
                continue;
            };
            let Ok(listed) = connection.list_tools().await else {
                continue;
            };
            let kept: Vec<OfferedTool> = offered
                .iter()
                .filter(|tool| tool.server != slot.config.name)
                .cloned()
                .collect();
            taken.extend(kept.iter().map(|tool| tool.name.clone()));
            let (tools, _) = names::offer(&slot.config, &listed, &mut taken);
            offered = kept;
            offered.extend(tools);
        }
        if let Ok(mut tools) = self.tools.lock() {
            *tools = offered;
        }
        true
    }

    /// The tools offered to the model now.
    #[must_use]
    pub fn tools(&self) -> Vec<OfferedTool> {
        self.tools.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The offered tool the model calls `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<OfferedTool> {
        self.tools
            .lock()
            .ok()
            .and_then(|tools| tools.iter().find(|tool| tool.name == name).cloned())
    }

    /// Calls `tool` with `arguments`, rendering at most `max_chars` characters for the model.
    /// A server that died is restarted once per run and the call made again.
    pub async fn call(
        &self,
        tool: &OfferedTool,
        arguments: serde_json::Map<String, Value>,
        max_chars: usize,
    ) -> Called {
        let started = Instant::now();
        let mut slots = self.slots.lock().await;
        let Some(slot) = slots.iter_mut().find(|s| s.config.name == tool.server) else {
            return called(
                started,
                Err(CallError::Failed("no such server".to_owned())),
                None,
            );
        };
        let mut notice = None;
        if slot.connection.as_ref().is_none_or(Connection::is_closed) {
            // Cut off by the agent between calls (a flood): said once, not started again.
            if let Some(why) = slot.connection.as_ref().and_then(Connection::ended) {
                slot.restarts = slot.restarts.max(1);
                slot.failed = Some(why.clone());
                slot.connection = None;
                return called(
                    started,
                    Err(CallError::Failed(format!(
                        "the server is not running: {why}"
                    ))),
                    Some(not_started(&slot.config.name, &why)),
                );
            }
            let why = slot
                .failed
                .clone()
                .unwrap_or_else(|| "its process ended".to_owned());
            if !slot.ran || slot.restarts >= 1 {
                return called(
                    started,
                    Err(CallError::Failed(format!(
                        "the server is not running: {why}"
                    ))),
                    None,
                );
            }
            slot.restarts += 1;
            slot.connection = None;
            match self.connect(&slot.config).await {
                Ok(connection) => {
                    notice = Some(format!(
                        "MCP server `{}` had stopped ({why}); restarted it (once per run)",
                        slot.config.name
                    ));
                    // Its tools are listed again before the next request.
                    connection.mark_changed();
                    slot.connection = Some(connection);
                }
                Err(again) => {
                    slot.failed = Some(again.clone());
                    return called(
                        started,
                        Err(CallError::Failed(format!(
                            "the server stopped and did not start again: {again}"
                        ))),
                        Some(not_started(&slot.config.name, &again)),
                    );
                }
            }
        }
        let Some(connection) = slot.connection.as_ref() else {
            return called(
                started,
                Err(CallError::Failed("not running".to_owned())),
                notice,
            );
        };
        let output = connection
            .call(&tool.tool, arguments)
            .await
            .map(|result| result::render(&tool.server, &tool.tool, &result, max_chars));
        let closed = matches!(output, Err(CallError::Closed(_))) || connection.is_closed();
        let ended = connection.ended();
        let undone = slot
            .connection
            .as_mut()
            .map(Connection::check_surfaces)
            .unwrap_or_default();
        // A server that stopped is started again at the next call (once per run); one the
        // agent cut off (a flood, a message too large) is not: it would do the same again.
        if closed {
            if let Some(why) = &ended {
                slot.restarts = slot.restarts.max(1);
                notice.get_or_insert_with(|| not_started(&slot.config.name, why));
            }
            slot.failed = Some(ended.unwrap_or_else(|| "its connection ended".to_owned()));
            slot.connection = None;
        }
        Called {
            undone,
            ..called(started, output, notice)
        }
    }

    /// Each server's name, and why it is not running now (`None`: it runs).
    pub async fn states(&self) -> Vec<(String, Option<String>)> {
        self.slots
            .lock()
            .await
            .iter()
            .map(|slot| {
                let running = slot
                    .connection
                    .as_ref()
                    .is_some_and(|connection| !connection.is_closed());
                let why = (!running).then(|| {
                    slot.failed
                        .clone()
                        .unwrap_or_else(|| "its process ended".to_owned())
                });
                (slot.config.name.clone(), why)
            })
            .collect()
    }

    /// Starts server `name` again (a person asked: `/mcp restart`), its tools listed anew.
    ///
    /// # Errors
    /// Why it was not started again, in one line.
    pub async fn restart(&self, name: &str) -> Result<(), String> {
        {
            let mut slots = self.slots.lock().await;
            let Some(slot) = slots.iter_mut().find(|slot| slot.config.name == name) else {
                return Err(format!("there is no MCP server `{name}` in this session"));
            };
            let local = matches!(slot.config.transport, Transport::Stdio { .. });
            if local && !slot.ran && self.policy(&slot.config).is_none() {
                return Err(format!(
                    "MCP server `{name}` runs without the sandbox and was not allowed to start: \
                     a new session asks again"
                ));
            }
            // The old process ends (with everything it started) before the new one starts.
            slot.connection = None;
            match self.connect(&slot.config).await {
                Ok(connection) => {
                    connection.mark_changed();
                    slot.connection = Some(connection);
                    slot.failed = None;
                    slot.ran = true;
                    slot.restarts = 0;
                }
                Err(why) => {
                    slot.failed = Some(why.clone());
                    return Err(not_started(name, &why));
                }
            }
        }
        self.refresh().await;
        Ok(())
    }

    /// The process ids of the running servers (for tests and `/mcp`).
    pub async fn pids(&self) -> Vec<(String, u32)> {
        self.slots
            .lock()
            .await
            .iter()
            .filter_map(|slot| {
                let pid = slot.connection.as_ref()?.pid()?;
                Some((slot.config.name.clone(), pid))
            })
            .collect()
    }

    /// Ends every server (also done when dropped).
    pub async fn shutdown(&self) {
        for slot in self.slots.lock().await.iter_mut() {
            slot.connection = None;
        }
    }

    fn policy(&self, config: &ServerConfig) -> Option<crate::sandbox::Policy> {
        stdio::policy(
            config.sandbox,
            self.launch.sandbox.as_ref(),
            &self.launch.workspace,
        )
    }

    async fn connect(&self, config: &ServerConfig) -> Result<Connection, String> {
        let policy = self.policy(config);
        let token = match self.tokens.get(&config.name) {
            Some(Ok(token)) => Some(token.clone()),
            Some(Err(why)) => return Err(why.clone()),
            None => None,
        };
        client::connect(
            config,
            policy.as_ref(),
            (&self.passed, &config.env),
            &self.launch,
            token,
        )
        .await
    }
}

fn called(
    started: Instant,
    output: Result<CallOutput, CallError>,
    notice: Option<String>,
) -> Called {
    Called {
        output,
        duration: started.elapsed(),
        notice,
        undone: Vec::new(),
    }
}

/// The line for a server that is not available in this run (`why` may be empty, to match
/// the start of such lines).
#[must_use]
pub fn not_started(name: &str, why: &str) -> String {
    format!("MCP server `{name}` is not available in this run: {why}")
}
