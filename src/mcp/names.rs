//! A server's tools as the model sees them: named `mcp__SERVER__TOOL` (cut to the wire's 64
//! characters without collisions; the `mcp__` prefix keeps them from shadowing a built-in
//! tool), described with the server's name, input schemas checked (an invalid one drops the
//! tool with a notice), and the `tools` allow/deny filter applied.
//!
//! Tool names and descriptions are third-party text: they reach the model as they are (cut to
//! a bound), and the terminal only through the sanitiser.

use std::collections::BTreeSet;

use serde_json::Value;

use super::config::ServerConfig;

/// The wire's limit on a tool name (OpenAI's, the strictest).
pub const MAX_TOOL_NAME_CHARS: usize = 64;

/// The prefix of every MCP tool's name.
pub const PREFIX: &str = "mcp__";

/// Longest description sent to the model: a server's text costs tokens on every request.
const MAX_DESCRIPTION_CHARS: usize = 2_000;

/// Largest input schema accepted, in bytes of JSON.
const MAX_SCHEMA_BYTES: usize = 32 * 1024;

/// Deepest nesting accepted in an input schema.
const MAX_SCHEMA_DEPTH: usize = 16;

/// Most tools taken from one server.
const MAX_TOOLS_PER_SERVER: usize = 128;

/// One tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    /// The name the model calls it by (`mcp__fs__read_file`).
    pub name: String,
    /// The server's name.
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
    /// The description sent to the model.
    pub description: String,
    /// The input schema, as the server gave it.
    pub schema: Value,
    /// The server's `readOnlyHint`: shown at the prompt, never trusted.
    pub read_only_hint: Option<bool>,
}

impl OfferedTool {
    /// Bytes this tool adds to every request (name, description and schema).
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.name.len() + self.description.len() + self.schema.to_string().len()
    }

    /// The model-facing definition.
    #[must_use]
    pub fn spec(&self) -> crate::model::ToolSpec {
        crate::model::ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: self.schema.clone(),
        }
    }
}

/// The tools of `server` from its `tools/list` (each as JSON), named uniquely against `taken`
/// (which gains them), and the notices for what was dropped.
pub fn offer(
    server: &ServerConfig,
    listed: &[Value],
    taken: &mut BTreeSet<String>,
) -> (Vec<OfferedTool>, Vec<String>) {
    let mut tools = Vec::new();
    let mut notices = Vec::new();
    for item in listed {
        let Some(tool) = item.get("name").and_then(Value::as_str) else {
            notices.push(format!(
                "MCP server `{}`: a tool without a name was dropped",
                server.name
            ));
            continue;
        };
        let shown = crate::ui::sanitize::escape(tool).into_owned();
        if server.tools_deny.iter().any(|t| t == tool)
            || (!server.tools_allow.is_empty() && !server.tools_allow.iter().any(|t| t == tool))
        {
            continue;
        }
        if tools.len() == MAX_TOOLS_PER_SERVER {
            notices.push(format!(
                "MCP server `{}`: only its first {MAX_TOOLS_PER_SERVER} tools are offered (use \
                 `tools = {{ allow = [...] }}` to choose)",
                server.name
            ));
            break;
        }
        // A rule (trimmed when read) could never name it, and its name is shown at the prompt.
        if tool.trim() != tool || tool.is_empty() || tool.chars().any(char::is_control) {
            notices.push(format!(
                "MCP server `{}`: tool `{shown}` dropped: its name is empty, has spaces around \
                 it or control characters (no rule could name it)",
                server.name
            ));
            continue;
        }
        let schema = item.get("inputSchema").cloned().unwrap_or(Value::Null);
        if let Err(why) = check_schema(&schema) {
            notices.push(format!(
                "MCP server `{}`: tool `{shown}` dropped: its input schema {why}",
                server.name
            ));
            continue;
        }
        let name = unique_name(&server.name, tool, taken);
        taken.insert(name.clone());
        let own = item
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        let description = cut(
            &format!("(MCP server `{}`, tool `{tool}`) {own}", server.name),
            MAX_DESCRIPTION_CHARS,
        );
        let read_only_hint = item
            .get("annotations")
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool);
        tools.push(OfferedTool {
            name,
            server: server.name.clone(),
            tool: tool.to_owned(),
            description,
            schema,
            read_only_hint,
        });
    }
    (tools, notices)
}

/// `mcp__SERVER__TOOL` with the tool's characters outside `[A-Za-z0-9_-]` replaced by `_`,
/// cut to [`MAX_TOOL_NAME_CHARS`]; a name already taken gets a number (`_2`, `_3` …) within
/// the limit.
#[must_use]
pub fn unique_name(server: &str, tool: &str, taken: &BTreeSet<String>) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = cut_ascii(&format!("{PREFIX}{server}__{clean}"), MAX_TOOL_NAME_CHARS);
    if !taken.contains(&base) {
        return base;
    }
    (2..=taken.len() + 2)
        .map(|n| {
            let suffix = format!("_{n}");
            format!(
                "{}{suffix}",
                cut_ascii(&base, MAX_TOOL_NAME_CHARS - suffix.len())
            )
        })
        .find(|name| !taken.contains(name))
        .unwrap_or(base)
}

fn cut_ascii(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut kept: String = text.chars().take(max).collect();
    kept.push('…');
    kept
}

/// Whether `schema` is an input schema the providers take: a JSON object of `"type":
/// "object"`, `properties` an object of objects and `required` an array of strings when
/// present, bounded in size and depth. `Err` says what is wrong.
fn check_schema(schema: &Value) -> Result<(), String> {
    let Some(object) = schema.as_object() else {
        return Err("is missing or not a JSON object".to_owned());
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err("does not have `\"type\": \"object\"`".to_owned());
    }
    if let Some(properties) = object.get("properties")
        && !properties
            .as_object()
            .is_some_and(|p| p.values().all(Value::is_object))
    {
        return Err("has `properties` that is not an object of schemas".to_owned());
    }
    if let Some(required) = object.get("required")
        && !required
            .as_array()
            .is_some_and(|r| r.iter().all(Value::is_string))
    {
        return Err("has `required` that is not an array of names".to_owned());
    }
    let bytes = schema.to_string().len();
    if bytes > MAX_SCHEMA_BYTES {
        return Err(format!(
            "is {bytes} bytes (at most {MAX_SCHEMA_BYTES} are taken)"
        ));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(format!("nests deeper than {MAX_SCHEMA_DEPTH} levels"));
    }
    Ok(())
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(allow: &[&str], deny: &[&str]) -> ServerConfig {
        ServerConfig {
            name: "srv".into(),
            transport: super::super::config::Transport::Stdio {
                command: "x".into(),
                args: vec![],
            },
            env: vec![],
            sandbox: crate::sandbox::SandboxMode::ReadOnly,
            network: vec![],
            tools_allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            tools_deny: deny.iter().map(|s| (*s).to_owned()).collect(),
            startup_timeout: std::time::Duration::from_secs(1),
            tool_timeout: std::time::Duration::from_secs(1),
            origin: super::super::config::ServerOrigin::User("f".into(), 1),
        }
    }

    fn tool(name: &str) -> Value {
        json!({"name": name, "description": "d", "inputSchema": {"type": "object"}})
    }

    #[test]
    fn generated_names_are_unique_within_the_limit_and_never_a_builtin() {
        let mut taken: BTreeSet<String> = ["shell", "read_file", "edit_file"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let long = "t".repeat(100);
        let names: Vec<String> = [
            "shell",
            "read_file",
            "a.b",
            "a_b",
            "a/b",
            &long,
            &long,
            &long,
            "ü",
            "?",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain((0..50).map(|n| format!("{long}{n}")))
        .collect();
        let (tools, notices) = offer(
            &server(&[], &[]),
            &names.iter().map(|n| tool(n)).collect::<Vec<_>>(),
            &mut taken,
        );
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(tools.len(), names.len());
        let mut seen = BTreeSet::new();
        for t in &tools {
            assert!(t.name.len() <= MAX_TOOL_NAME_CHARS, "{}", t.name);
            assert!(t.name.starts_with("mcp__srv__"), "{}", t.name);
            assert!(
                t.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "{}",
                t.name
            );
            assert!(seen.insert(t.name.clone()), "duplicate {}", t.name);
            assert!(!["shell", "read_file", "edit_file"].contains(&t.name.as_str()));
        }
    }

    #[test]
    fn the_filter_keeps_allowed_and_drops_denied_tools() {
        let listed = [tool("a"), tool("b"), tool("c")];
        let names = |allow: &[&str], deny: &[&str]| -> Vec<String> {
            offer(&server(allow, deny), &listed, &mut BTreeSet::new())
                .0
                .into_iter()
                .map(|t| t.tool)
                .collect()
        };
        assert_eq!(names(&[], &[]), ["a", "b", "c"]);
        assert_eq!(names(&["a", "c"], &[]), ["a", "c"]);
        assert_eq!(names(&[], &["b"]), ["a", "c"]);
        assert_eq!(names(&["a", "b"], &["b"]), ["a"]);
    }

    #[test]
    fn every_offered_tool_can_be_named_by_its_rule() {
        // Names a rule (trimmed when read) could not name are dropped with a notice; the
        // rest are offered, and the rule of each names it.
        let names = [
            "x", " x", "x ", " x ", "\tx", "x\n", "", " ", "a b", "a\u{1b}b", "a\u{7f}", "été",
        ];
        let listed: Vec<Value> = names.iter().map(|n| tool(n)).collect();
        let (offered, notices) = offer(&server(&[], &[]), &listed, &mut BTreeSet::new());
        let kept: Vec<&str> = offered.iter().map(|t| t.tool.as_str()).collect();
        assert_eq!(kept, ["x", "a b", "été"]);
        assert_eq!(notices.len(), names.len() - kept.len(), "{notices:?}");
        for tool in offered {
            let rule = crate::policy::Rule {
                prefix: super::super::rules::tool_rule(&tool.server, &tool.tool)
                    .trim()
                    .to_owned(),
                source: crate::policy::Source::User,
            };
            let d = super::super::rules::decide(
                &[rule],
                &[],
                crate::policy::Mode::Ask,
                (&tool.server, &tool.tool),
                false,
            );
            assert_eq!(d.verdict, crate::policy::Verdict::Allow, "{:?}", tool.tool);
        }
    }

    #[test]
    fn an_invalid_schema_drops_that_tool_with_a_notice() {
        let deep = (0..40).fold(json!({}), |inner, _| json!({ "x": inner }));
        let bad = [
            json!({"name": "none"}),
            json!({"name": "array", "inputSchema": []}),
            json!({"name": "string", "inputSchema": {"type": "string"}}),
            json!({"name": "props", "inputSchema": {"type": "object", "properties": {"a": 1}}}),
            json!({"name": "req", "inputSchema": {"type": "object", "required": "a"}}),
            json!({"name": "deep", "inputSchema": {"type": "object", "properties": {"a": deep}}}),
            json!({"name": "big", "inputSchema": {"type": "object", "description": "x".repeat(40_000)}}),
            json!({"description": "no name", "inputSchema": {"type": "object"}}),
        ];
        let mut listed = bad.to_vec();
        listed.push(tool("good"));
        let (tools, notices) = offer(&server(&[], &[]), &listed, &mut BTreeSet::new());
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "mcp__srv__good");
        assert_eq!(notices.len(), bad.len(), "{notices:?}");
        assert!(notices.iter().all(|n| !n.contains('\n')));
    }

    #[test]
    fn descriptions_name_the_server_and_are_cut() {
        let listed = [json!({
            "name": "t", "description": "y".repeat(5_000), "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}
        })];
        let (tools, _) = offer(&server(&[], &[]), &listed, &mut BTreeSet::new());
        assert!(
            tools[0]
                .description
                .starts_with("(MCP server `srv`, tool `t`) yyy")
        );
        assert!(tools[0].description.chars().count() <= MAX_DESCRIPTION_CHARS + 1);
        assert_eq!(tools[0].read_only_hint, Some(true));
    }
}
