//! The session's MCP servers: started (fenced, in parallel) before the first message, as
//! for `agent run`, and ended with the session; `/mcp` lists them as `agent mcp list` does,
//! `/mcp restart NAME` starts one again.

use crate::agent::{self, Event};
use crate::mcp::{listing, not_started};
use crate::ui::sanitize::escape;

use super::{Session, Stopped};

impl Session {
    /// Starts the workspace's MCP servers (asking about unfenced ones at the prompt), each
    /// problem one warning.
    pub(super) async fn start_mcp(&mut self) {
        let Some((catalogue, launch)) = &self.mcp else {
            return;
        };
        if catalogue.servers.is_empty() {
            return;
        }
        let lookup = |name: &str| std::env::var(name).ok();
        let (servers, notices) = agent::start_mcp(
            catalogue,
            &self.config,
            launch.clone(),
            &lookup,
            &mut self.approver,
        )
        .await;
        self.config.mcp = servers;
        for message in notices {
            self.event(Event::Warning {
                code: crate::event::MCP_WARNING.to_owned(),
                message,
            });
        }
    }

    /// [`Self::start_mcp`], raced against a signal: SIGINT abandons the start (the servers
    /// started so far end) and the session goes on without them; another signal ends the
    /// session.
    pub(super) async fn start_mcp_or_stop(&mut self) -> Result<(), Stopped> {
        let (_, mut stops) = tokio::sync::mpsc::unbounded_channel();
        std::mem::swap(&mut stops, &mut self.stops);
        let stopped = tokio::select! {
            () = self.start_mcp() => None,
            Some(stopped) = stops.recv() => Some(stopped),
        };
        std::mem::swap(&mut stops, &mut self.stops);
        match stopped {
            Some(stopped) if !stopped.interrupt => Err(stopped),
            Some(_) => {
                self.event(Event::Warning {
                    code: crate::event::MCP_WARNING.to_owned(),
                    message: "the MCP servers' start was interrupted: none runs in this session"
                        .to_owned(),
                });
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// `/mcp` and `/mcp restart NAME`.
    pub(super) async fn mcp_command(&mut self, words: &[String]) {
        match words {
            [] => {
                let text = self.mcp_text().await;
                self.say(text.trim_end());
            }
            [restart, name] if restart == "restart" => {
                let Some(servers) = self.config.mcp.clone() else {
                    self.say("agent: no MCP server runs in this session");
                    return;
                };
                match servers.restart(name).await {
                    Ok(()) => {
                        let text = self.mcp_text().await;
                        self.say(&format!(
                            "restarted MCP server `{}`\n{}",
                            escape(name),
                            text.trim_end()
                        ));
                    }
                    Err(why) => self.say(&format!("agent: /mcp restart: {}", escape(&why))),
                }
            }
            _ => self.say("agent: write /mcp (list the servers) or /mcp restart NAME"),
        }
    }

    /// What `agent mcp list` shows, for the servers of this session as they are now.
    async fn mcp_text(&self) -> String {
        let Some((catalogue, _)) = &self.mcp else {
            return listing::render(&[], &[]);
        };
        let (tools, mut notices) = match &self.config.mcp {
            Some(servers) => {
                let notices = servers
                    .states()
                    .await
                    .into_iter()
                    .filter_map(|(name, why)| Some(not_started(&name, &why?)))
                    .collect();
                (servers.tools(), notices)
            }
            None => {
                let why = "none starts in permissions mode \"off\"";
                let notices = catalogue
                    .startable()
                    .map(|server| not_started(&server.name, why))
                    .collect();
                (Vec::new(), notices)
            }
        };
        let rows = listing::rows(catalogue, &tools, &mut notices, &[]);
        listing::render(&rows, &notices)
    }
}
