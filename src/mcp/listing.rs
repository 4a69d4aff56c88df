//! What `agent mcp list` and a session's `/mcp` show: each server with where it comes from,
//! whether it may start and why it is not available, and its tools with what they cost per
//! request; as JSON rows and as sanitised text (names, descriptions and errors are the
//! servers' words).

use serde_json::{Value, json};

use super::{Catalogue, OfferedTool, ServerConfig, Standing, Transport};
use crate::ui::sanitize::escape;

/// One row per server of `catalogue`; a server's reason for not being available (a
/// [`super::not_started`] line of `notices`) goes into its row and out of `notices`, so that
/// it is said once. `unfenced`: servers that start only after a yes in a run.
#[must_use]
pub fn rows(
    catalogue: &Catalogue,
    tools: &[OfferedTool],
    notices: &mut Vec<String>,
    unfenced: &[String],
) -> Vec<Value> {
    let mut rows = Vec::new();
    // A server's reason for not being available is said once: in its row, not as a note too.
    for (server, standing) in &catalogue.servers {
        let own: Vec<_> = tools.iter().filter(|t| t.server == server.name).collect();
        let unavailable = super::not_started(&server.name, "");
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
    rows
}

/// The text listing, sanitised (names, descriptions and errors are the servers' words).
pub fn render(rows: &[Value], notices: &[String]) -> String {
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

/// `stdio: npx -y server` or `http: https://…`.
#[must_use]
pub fn describe(server: &ServerConfig) -> String {
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
#[must_use]
pub fn details(server: &ServerConfig) -> String {
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
