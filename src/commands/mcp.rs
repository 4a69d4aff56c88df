//! `agent mcp list|add|remove|approve`: the MCP servers of this workspace with where each
//! comes from, whether it may start, and its tools with what they cost per request (servers
//! that may start are started, fenced as in a run, listed and ended); writing servers into
//! the user settings file; approving a project's proposal.

use std::collections::BTreeSet;
use std::process::ExitCode;

use serde_json::json;

use crate::cli::{GlobalArgs, McpArgs, McpCommand};
use crate::error::{Error, Result, Status};
use crate::mcp::edit::{self, NewServer};
use crate::mcp::listing;
use crate::mcp::{Catalogue, Servers, Standing};
use crate::ui::sanitize::escape;

/// Runs `agent mcp …`.
pub(crate) fn run(global: &GlobalArgs, args: &McpArgs) -> Result<ExitCode> {
    let workspace = super::workspace(global.cwd.as_deref())?;
    let settings = super::load_settings(global, &super::overrides(global), &workspace)?;
    let catalogue = catalogue(global, &settings, &workspace)?;
    match &args.command {
        None | Some(McpCommand::List) => list(global, &settings, &workspace, &catalogue),
        Some(McpCommand::Add {
            name,
            env,
            url,
            command,
        }) => {
            let server = match (url, command.split_first()) {
                (Some(url), None) => NewServer::Http { url: url.clone() },
                (None, Some((program, args))) => NewServer::Stdio {
                    command: program.clone(),
                    args: args.to_vec(),
                },
                (Some(_), Some(_)) => {
                    return Err(Error::Usage(
                        "give either --url URL or `-- COMMAND ARGS…`, not both".to_owned(),
                    ));
                }
                (None, None) => {
                    return Err(Error::Usage(
                        "say how to reach the server: `agent mcp add NAME -- COMMAND ARGS…` or \
                         `agent mcp add NAME --url URL`"
                            .to_owned(),
                    ));
                }
            };
            let env = env
                .iter()
                .map(|pair| {
                    pair.split_once('=')
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .ok_or_else(|| Error::Usage(format!("--env `{pair}`: write NAME=VALUE")))
                })
                .collect::<Result<Vec<_>>>()?;
            edit::add(&settings.user_file, name, &server, &env).map_err(Error::Usage)?;
            say(&format!(
                "added MCP server `{name}` to {} (every call asks until a rule `mcp:{name}` \
                 allows it)",
                settings.user_file.display()
            ))
        }
        Some(McpCommand::Remove { name }) => {
            if edit::remove(&settings.user_file, name).map_err(Error::Runtime)? {
                say(&format!(
                    "removed MCP server `{name}` from {}",
                    settings.user_file.display()
                ))
            } else {
                Err(Error::Usage(format!(
                    "no MCP server `{name}` in {}: `agent mcp list` shows where each comes from",
                    settings.user_file.display()
                )))
            }
        }
        Some(McpCommand::Approve { name }) => {
            let Some((server, standing)) = catalogue
                .servers
                .iter()
                .find(|(server, _)| &server.name == name)
            else {
                return Err(Error::Usage(format!(
                    "no MCP server `{name}` here: `agent mcp list` shows them"
                )));
            };
            if *standing == Standing::Configured {
                return Err(Error::Usage(format!(
                    "`{name}` comes from your own settings ({}): only a project's proposals \
                     need approval",
                    server.origin
                )));
            }
            edit::approve(&settings.user_file, &workspace, server).map_err(Error::Runtime)?;
            say(&format!(
                "approved MCP server `{name}` for {} as proposed now ({}); a changed proposal \
                 needs approval again",
                workspace.display(),
                escape(&format!(
                    "{}{}",
                    listing::describe(server),
                    listing::details(server)
                ))
            ))
        }
    }
}

/// The servers for this workspace, with their warnings printed (unless -q).
pub(crate) fn catalogue(
    global: &GlobalArgs,
    settings: &crate::settings::Settings,
    workspace: &std::path::Path,
) -> Result<Catalogue> {
    // No settings file has an [mcp] table: nothing to read again.
    if !settings.mcp_tables {
        return Ok(Catalogue::default());
    }
    let catalogue = crate::mcp::config::load(
        &settings.user_file,
        global.profile.as_deref(),
        settings.project_file.as_deref(),
        workspace,
    )?;
    if !global.quiet {
        for warning in &catalogue.warnings {
            eprintln!("agent: warning: {}", escape(warning));
        }
    }
    Ok(catalogue)
}

fn say(line: &str) -> Result<ExitCode> {
    super::print_stdout(&format!("{line}\n"))?;
    Ok(Status::Success.into())
}

/// `agent mcp list`: starts what may start (fenced), lists tools, ends them.
fn list(
    global: &GlobalArgs,
    settings: &crate::settings::Settings,
    workspace: &std::path::Path,
    catalogue: &Catalogue,
) -> Result<ExitCode> {
    let launch = super::mcp_launch(&super::sandbox(settings, workspace), workspace);
    let servers = Servers::new(catalogue, launch, &super::env_var);
    let builtin: BTreeSet<String> = BTreeSet::new();
    let runtime = super::runtime()?;
    let listed = runtime.block_on(async {
        // A signal while the servers start ends them and the listing.
        let mut signals = super::signals::Signals::listen();
        let listing = async {
            let unfenced: Vec<String> = servers
                .unfenced()
                .await
                .into_iter()
                .map(|s| s.name)
                .collect();
            let notices = servers.start(&[], &builtin).await;
            (notices, servers.tools(), unfenced)
        };
        let listed = tokio::select! {
            listed = listing => Ok(listed),
            stop = signals.recv() => Err(stop),
        };
        servers.shutdown().await;
        listed
    });
    let (notices, tools, unfenced) = match listed {
        Ok(listed) => listed,
        Err(super::signals::Stop::Interrupt) => return Err(Error::Interrupted),
        Err(stop) => {
            return Err(Error::Stopped {
                signal: stop.name(),
                status: stop.status(),
            });
        }
    };
    let mut notices = notices;
    let rows = listing::rows(catalogue, &tools, &mut notices, &unfenced);
    if global.json {
        let value = json!({"servers": rows, "notices": notices});
        super::print_stdout(&format!("{value}\n"))?;
    } else {
        super::print_stdout(&listing::render(&rows, &notices))?;
    }
    Ok(Status::Success.into())
}
