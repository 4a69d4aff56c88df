//! `agent mcp list|add|remove|approve`: the MCP servers of this workspace with where each
//! comes from, whether it may start, and its tools with what they cost per request (servers
//! that may start are started, fenced as in a run, listed and ended); writing servers into
//! the user settings file; approving a project's proposal.

use std::collections::BTreeSet;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::cli::{GlobalArgs, McpArgs, McpCommand};
use crate::error::{Error, Result, Status};
use crate::mcp::edit::{self, NewServer};
use crate::mcp::{Catalogue, ServerConfig, Servers, Standing, Transport};
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
                escape(&format!("{}{}", describe(server), details(server)))
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

/// `stdio: npx -y server` or `http: https://…`.
fn describe(server: &ServerConfig) -> String {
    match &server.transport {
        Transport::Stdio { command, args } => {
            let mut words = vec![command.clone()];
            words.extend(args.iter().cloned());
            format!("stdio: {}", words.join(" "))
        }
        Transport::Http { url, .. } => format!("http: {url}"),
    }
}

/// What else decides what a server can do or get, by name only (values may be secrets):
/// `; env A, B; token from $T; headers X; network h` — empty when there is nothing.
fn details(server: &ServerConfig) -> String {
    let names = |pairs: &[(String, String)]| {
        pairs
            .iter()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !server.env.is_empty() {
        parts.push(format!("env {}", names(&server.env)));
    }
    if let Transport::Http {
        headers,
        bearer_token_env,
        ..
    } = &server.transport
    {
        if let Some(var) = bearer_token_env {
            parts.push(format!("token from ${var}"));
        }
        if !headers.is_empty() {
            parts.push(format!("headers {}", names(headers)));
        }
    }
    if !server.network.is_empty() {
        parts.push(format!("network {}", server.network.join(", ")));
    }
    parts.iter().map(|part| format!("; {part}")).collect()
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
    let mut rows = Vec::new();
    // A server's reason for not being available is said once: in its row, not as a note too.
    let mut notices = notices;
    for (server, standing) in &catalogue.servers {
        let own: Vec<_> = tools.iter().filter(|t| t.server == server.name).collect();
        let unavailable = crate::mcp::not_started(&server.name, "");
        let reason = notices
            .iter()
            .position(|n| n.starts_with(&unavailable))
            .map(|at| notices.remove(at)[unavailable.len()..].to_owned());
        let state = match (standing, reason) {
            (Standing::Proposed, _) => format!(
                "proposed by the project: not started until `agent mcp approve {}`",
                server.name
            ),
            _ if unfenced.contains(&server.name) => {
                "runs without the sandbox: started only after a yes in a run".to_owned()
            }
            (_, Some(reason)) => format!("not available: {reason}"),
            (_, None) => "started".to_owned(),
        };
        let bytes: usize = own.iter().map(|t| t.bytes()).sum();
        rows.push(json!({
            "name": server.name,
            "origin": server.origin.to_string(),
            "standing": standing.name(),
            "state": state,
            "transport": describe(server),
            "details": details(server),
            "sandbox": server.sandbox.name(),
            "tools": own.iter().map(|t| json!({
                "name": t.name,
                "tool": t.tool,
                "bytes": t.bytes(),
                "read_only_hint": t.read_only_hint,
                "description": t.description,
            })).collect::<Vec<_>>(),
            "bytes": bytes,
            "tokens": bytes.div_ceil(4),
        }));
    }
    if global.json {
        let value = json!({"servers": rows, "notices": notices});
        super::print_stdout(&format!("{value}\n"))?;
    } else {
        super::print_stdout(&render(&rows, &notices))?;
    }
    Ok(Status::Success.into())
}

/// The text listing, sanitised (names, descriptions and errors are the servers' words).
fn render(rows: &[Value], notices: &[String]) -> String {
    if rows.is_empty() {
        return "no MCP servers: add one with `agent mcp add NAME -- COMMAND ARGS…` (or \
                [mcp.servers.NAME] in the settings file)\n"
            .to_owned();
    }
    let text = |v: &Value| escape(v.as_str().unwrap_or("")).into_owned();
    let mut out = String::new();
    for row in rows {
        out.push_str(&format!(
            "{}  {}  {}{}  [{}]\n  {}  (sandbox {})\n",
            text(&row["name"]),
            text(&row["standing"]),
            text(&row["transport"]),
            text(&row["details"]),
            text(&row["origin"]),
            text(&row["state"]),
            text(&row["sandbox"]),
        ));
        let tools = row["tools"].as_array().map_or(&[][..], Vec::as_slice);
        if !tools.is_empty() {
            out.push_str(&format!(
                "  {} tools, {} bytes (~{} tokens) on every request\n",
                tools.len(),
                row["bytes"],
                row["tokens"]
            ));
        }
        for tool in tools {
            let description: String = text(&tool["description"]).chars().take(80).collect();
            let hint = if tool["read_only_hint"] == json!(true) {
                "  (says read-only)"
            } else {
                ""
            };
            out.push_str(&format!(
                "    {}  {} bytes{hint}  {description}\n",
                text(&tool["name"]),
                tool["bytes"],
            ));
        }
    }
    for notice in notices {
        out.push_str(&format!("note: {}\n", escape(notice)));
    }
    out
}

/// The MCP servers of `agent run`, started before the first request (in parallel, each within
/// its startup timeout): a local server that would run without the sandbox starts only after
/// a person's yes (once per run); a proposed one never. Returns the servers (`None` when none
/// may start, or in mode `off`) and one line per problem.
pub(crate) async fn start_for_run<A: crate::approve::Approve>(
    catalogue: &Catalogue,
    config: &crate::agent::Config,
    approver: &mut A,
) -> (Option<std::sync::Arc<Servers>>, Vec<String>) {
    let mut notices: Vec<String> = catalogue
        .servers
        .iter()
        .filter(|(_, standing)| *standing == Standing::Proposed)
        .map(|(server, _)| {
            format!(
                "MCP server `{}` is proposed by {} and not started: `agent mcp approve {}` \
                 trusts it",
                server.name, server.origin, server.name
            )
        })
        .collect();
    if config.mode == crate::policy::Mode::Off || catalogue.startable().next().is_none() {
        return (None, notices);
    }
    let launch = super::mcp_launch(&config.sandbox, &config.workspace);
    let servers = Servers::new(catalogue, launch, &super::env_var);
    let mut unfenced_allowed = Vec::new();
    for server in servers.unfenced().await {
        if ask_unfenced(&server, config, approver).await {
            unfenced_allowed.push(server.name);
        }
    }
    let builtin: BTreeSet<String> = std::iter::once(crate::agent::SHELL.to_owned())
        .chain(crate::tools::specs().into_iter().map(|spec| spec.name))
        .collect();
    notices.extend(servers.start(&unfenced_allowed, &builtin).await);
    (Some(std::sync::Arc::new(servers)), notices)
}

/// Asks once whether `server` may run without the sandbox; no without a terminal.
async fn ask_unfenced<A: crate::approve::Approve>(
    server: &ServerConfig,
    config: &crate::agent::Config,
    approver: &mut A,
) -> bool {
    // Mode `deny` never prompts: an unfenced start is one more thing it denies.
    if config.mode == crate::policy::Mode::Deny || approver.can_ask().is_err() {
        return false;
    }
    let why = if server.sandbox == crate::sandbox::SandboxMode::Off {
        "its settings say `sandbox = \"off\"`".to_owned()
    } else {
        format!(
            "the sandbox is not available here ({})",
            config.sandbox.status().limitation.unwrap_or_default()
        )
    };
    let request = crate::approve::ApprovalRequest {
        command: describe(server),
        description: format!(
            "Start MCP server `{}` without the sandbox for this run: {why}",
            server.name
        ),
        decision: crate::policy::Decision {
            verdict: crate::policy::Verdict::Ask,
            reason: format!("MCP server `{}` would run without the sandbox", server.name),
            source: crate::policy::Source::User,
            rule: None,
            destructive: false,
            prefix: None,
            parts: Vec::new(),
        },
        prefix: None,
        edited_from: None,
        unsandboxed: true,
        subject: crate::approve::Subject::McpStart,
    };
    matches!(
        approver.ask(&request).await,
        crate::approve::Approval::Allow | crate::approve::Approval::AllowForRun
    )
}
