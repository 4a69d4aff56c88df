//! The one tool offered to the model, `shell`: its schema, the validation of a
//! call's arguments, and the JSON the model gets back.

use serde::Deserialize;
use serde_json::json;

use crate::exec::ExecResult;
use crate::model::{ToolCall, ToolSpec};
use crate::policy::OsFamily;
use crate::tool_error::{ToolError, ToolErrorCode};

/// Refused hosts named in a tool result (one event each); past it, only counted.
const MAX_REFUSED_TOLD: usize = 20;

/// The tool's name.
pub const SHELL: &str = "shell";

/// The `shell` tool, its description naming the OS and shell.
#[must_use]
pub fn shell_tool(os: OsFamily, shell: &str) -> ToolSpec {
    let os_name = match os {
        OsFamily::Unix => std::env::consts::OS,
        OsFamily::Windows => "windows",
    };
    ToolSpec {
        name: SHELL.to_owned(),
        description: format!(
            "Run one shell command on {os_name} with `{shell}` and return its exit code, stdout and \
             stderr. Every command is checked by a permission policy and may need the user's \
             approval or be denied; read-only commands without pipes, redirection or `$` run at once."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "command": { "type": "string", "description": "The command line to run." },
                "description": {
                    "type": "string",
                    "description": "One short sentence saying what the command does and why, shown to the user."
                },
                "working_directory": {
                    "type": "string",
                    "description": "Directory to run in, inside the workspace (default: the workspace)."
                },
                "timeout_ms": {
                    "type": "integer",
                    "description": "Kill the command after this many milliseconds (can only lower the limit)."
                },
                "escalate": {
                    "type": "object",
                    "description": "Ask the user for more than the sandbox gives, this call only.",
                    "properties": {
                        "network": {"description": "true, or host names"},
                        "outside_sandbox": {"type": "boolean"},
                        "reason": {"type": "string"}
                    },
                    "required": ["reason"]
                },
                "background": {
                    "type": "boolean",
                    "description": "Start a long-running process (dev server, watcher) and return at once with its id; no timeout, it ends with the run. Read or stop it with the processes tool; later commands allowed the same way (by the mode, a rule or the user) reach its ports on localhost. Do not add `&`."
                }
            },
            "required": ["command", "description"],
            "additionalProperties": false
        }),
    }
}

/// A validated `shell` call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ShellCall {
    /// The command line.
    pub command: String,
    /// What it is for, in the model's words.
    pub description: String,
    /// Requested working directory, relative to the workspace or absolute inside it.
    #[serde(default)]
    pub working_directory: Option<String>,
    /// Requested timeout in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// More than the sandbox gives, asked of a person (`super::escalate`).
    #[serde(default)]
    pub escalate: Option<super::escalate::Escalate>,
    /// Run on in the background (decided like any command; ends with the run).
    #[serde(default)]
    pub background: bool,
}

/// Validates a call's name and arguments.
///
/// # Errors
/// `EINVAL` with a message the model can act on.
pub fn parse(call: &ToolCall) -> Result<ShellCall, ToolError> {
    let invalid = |message: String| ToolError::new(ToolErrorCode::InvalidArguments, message);
    if call.name != SHELL {
        return Err(invalid(format!(
            "unknown tool `{}`: the tools are shell, read_file, list_files, search, edit_file \
             and write_file",
            call.name
        )));
    }
    let arguments = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        &call.arguments
    };
    let value: serde_json::Value = serde_json::from_str(arguments)
        .map_err(|error| invalid(format!("the arguments are not valid JSON: {error}")))?;
    if !value.is_object() {
        return Err(invalid("the arguments must be a JSON object".to_owned()));
    }
    let parsed: ShellCall = serde_json::from_value(value).map_err(|error| {
        invalid(format!(
            "invalid arguments: {error}; expected {{\"command\": string, \"description\": string, \
             \"working_directory\"?: string, \"timeout_ms\"?: integer, \"escalate\"?: object}}"
        ))
    })?;
    if parsed.command.trim().is_empty() {
        return Err(invalid("`command` is empty".to_owned()));
    }
    Ok(parsed)
}

/// The JSON sent back for a command that ran.
#[must_use]
pub fn result_content(result: &ExecResult) -> String {
    let mut value = json!({
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "duration_ms": result.duration_ms,
        "timed_out": result.timed_out,
        "truncated": result.truncated,
    });
    if let Some(error) = &result.error {
        value["error"] = json!(error);
    }
    if result.sandbox_denied {
        value["sandbox_denied"] = json!(true);
        value["sandbox_note"] = json!(result.sandbox_note);
    }
    if !result.sandbox_undone.is_empty() {
        value["sandbox_undone"] = json!(result.sandbox_undone);
    }
    // What the network proxy refused, and the setting that would allow it: the model can
    // tell the person instead of retrying.
    // One per host, the first few (the rest counted): the result stays small.
    let mut hosts = std::collections::BTreeSet::new();
    let refused: Vec<_> = result
        .network
        .iter()
        .filter(|event| event.decision == crate::net::NetDecision::Deny)
        .filter(|event| hosts.insert(event.host.as_str()))
        .collect();
    if !refused.is_empty() {
        let told = refused.len().min(MAX_REFUSED_TOLD);
        value["network_refused"] = json!(refused[..told]);
        if refused.len() > told {
            value["network_refused_more_hosts"] = json!(refused.len() - told);
        }
    }
    value.to_string()
}

/// `content` (a JSON object) with `key` set to `value`.
#[must_use]
pub fn with_field(content: &str, key: &str, value: serde_json::Value) -> String {
    let mut object: serde_json::Value =
        serde_json::from_str(content).unwrap_or_else(|_| json!({ "result": content }));
    if let Some(fields) = object.as_object_mut() {
        fields.insert(key.to_owned(), value);
    }
    object.to_string()
}

/// The JSON sent back for a call that did not run.
#[must_use]
pub fn error_content(error: &ToolError) -> String {
    json!({ "error": error }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{ErrorCode, ExecError};
    use pretty_assertions::assert_eq;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: "1".into(),
            name: name.into(),
            arguments: arguments.into(),
            extra: None,
        }
    }

    #[test]
    fn valid_arguments_parse() {
        let parsed = parse(&call(
            "shell",
            r#"{"command":"ls","description":"list","timeout_ms":5}"#,
        ))
        .unwrap();
        assert_eq!(parsed.command, "ls");
        assert_eq!(parsed.timeout_ms, Some(5));
    }

    #[test]
    fn malformed_arguments_are_einval_with_a_message() {
        for (name, args, needle) in [
            ("shell", "{not json", "not valid JSON"),
            ("shell", "[1,2]", "must be a JSON object"),
            ("shell", r#"{"description":"x"}"#, "missing field `command`"),
            (
                "shell",
                r#"{"command":"ls"}"#,
                "missing field `description`",
            ),
            (
                "shell",
                r#"{"command":1,"description":"x"}"#,
                "invalid type",
            ),
            (
                "shell",
                r#"{"command":"  ","description":"x"}"#,
                "`command` is empty",
            ),
            (
                "python",
                r#"{"command":"ls","description":"x"}"#,
                "unknown tool `python`",
            ),
            ("shell", "", "missing field `command`"),
        ] {
            let error = parse(&call(name, args)).unwrap_err();
            assert_eq!(error.code, ToolErrorCode::InvalidArguments, "{args}");
            assert!(error.message.contains(needle), "{args}: {}", error.message);
        }
    }

    #[test]
    fn error_content_has_code_and_message() {
        let content = error_content(&ToolError::new(ToolErrorCode::Denied, "no"));
        assert_eq!(content, r#"{"error":{"code":"EDENIED","message":"no"}}"#);
        let cwd = ToolError::from(ExecError::new(ErrorCode::Cwd, "gone"));
        let content = error_content(&cwd);
        assert_eq!(content, r#"{"error":{"code":"ECWD","message":"gone"}}"#);
    }

    /// The model is told each refused host once, the first few only: a command refusing
    /// hosts in a loop cannot flood the model's context.
    #[test]
    fn refused_hosts_are_told_once_each_and_bounded() {
        use crate::net::{NetDecision, NetworkEvent};
        let mut result = ExecResult::failed(crate::exec::ExecError::new(
            crate::exec::ErrorCode::TimedOut,
            "x",
        ));
        for n in 0..500 {
            result.network.push(NetworkEvent {
                host: format!("h{}.test", n % 100),
                port: 443,
                decision: NetDecision::Deny,
                rule: "not in `[network] allow`".to_owned(),
                allow_with: None,
                command: None,
            });
        }
        let value: serde_json::Value = serde_json::from_str(&result_content(&result)).unwrap();
        let told = value["network_refused"].as_array().unwrap();
        assert_eq!(told.len(), MAX_REFUSED_TOLD);
        assert_eq!(told[1]["host"], "h1.test");
        assert_eq!(value["network_refused_more_hosts"], 100 - MAX_REFUSED_TOLD);
    }
}
