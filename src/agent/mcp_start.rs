//! Starting the MCP servers of a run or a session: proposals said and left alone, local
//! servers that would run without the sandbox started only after a person's yes (never in
//! mode `deny`, never without a terminal), the rest started at once, in parallel.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::Config;
use crate::approve::Approve;
use crate::mcp::stdio::Launch;
use crate::mcp::{Catalogue, ServerConfig, Servers, Standing, listing};

/// The MCP servers of a run or a session, started before the first request (in parallel, each within
/// its startup timeout): a local server that would run without the sandbox starts only after
/// a person's yes (once per run); a proposed one never. Returns the servers (`None` when none
/// may start, or in mode `off`) and one line per problem.
pub async fn start_mcp<A: Approve>(
    catalogue: &Catalogue,
    config: &Config,
    launch: Launch,
    lookup: &dyn Fn(&str) -> Option<String>,
    approver: &mut A,
) -> (Option<Arc<Servers>>, Vec<String>) {
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
    let servers = Servers::new(catalogue, launch, lookup);
    let mut unfenced_allowed = Vec::new();
    for server in servers.unfenced().await {
        if ask_unfenced(&server, config, approver).await {
            unfenced_allowed.push(server.name);
        }
    }
    let builtin: BTreeSet<String> = std::iter::once(super::SHELL.to_owned())
        .chain(crate::tools::specs().into_iter().map(|spec| spec.name))
        .collect();
    notices.extend(servers.start(&unfenced_allowed, &builtin).await);
    (Some(Arc::new(servers)), notices)
}

/// Asks once whether `server` may run without the sandbox; no without a terminal.
async fn ask_unfenced<A: Approve>(
    server: &ServerConfig,
    config: &Config,
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
    let request = crate::approve::ApprovalRequest::unsandboxed(
        listing::describe(server),
        format!(
            "Start MCP server `{}` without the sandbox for this run: {why}",
            server.name
        ),
        format!("MCP server `{}` would run without the sandbox", server.name),
        crate::approve::Subject::McpStart,
    );
    matches!(
        approver.ask(&request).await,
        crate::approve::Approval::Allow | crate::approve::Approval::AllowForRun
    )
}
