//! Background processes for the model: a `shell` call with `background: true` — decided by
//! the policy exactly like any other call (`shell_call.rs` comes here only after the
//! decision) — started in the same sandbox and answered at once with its id, and the
//! `processes` tool that lists them, reads one's recent output and stops one. Both are
//! reported like a file tool's result (`tool_result` with the tool's name; the terminal shows
//! the escaped summary line).

use serde::Deserialize;
use serde_json::json;

use super::{Event, Loop};
use crate::exec::{ExecRequest, background};
use crate::model::{ToolCall, ToolSpec};
use crate::tool_error::{ToolError, ToolErrorCode};
use crate::tools::Output;

/// The tool's name.
pub const PROCESSES: &str = "processes";

/// The output a `processes` `output` call returns when it names no `tail`.
const DEFAULT_TAIL: usize = 4 * 1024;

/// The `processes` tool.
#[must_use]
pub fn processes_tool() -> ToolSpec {
    ToolSpec {
        name: PROCESSES.to_owned(),
        description: "The run's background processes (started by `shell` with `background`): \
                      `list` them, read one's recent `output` (its last `tail` bytes), or `stop` \
                      one. All of them end when the run ends."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "output", "stop"]},
                "id": {"type": "string", "description": "The process's id (`bg1`), for output and stop."},
                "tail": {"type": "integer", "description": "Bytes of output to return (default 4096, at most 65536)."}
            },
            "required": ["action"],
            "additionalProperties": false
        }),
    }
}

/// A `processes` call's arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcessesArgs {
    action: Action,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    tail: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Action {
    List,
    Output,
    Stop,
}

/// Starts an allowed `shell` call's `request` in the background and reports its id.
pub(super) fn start(
    call: &ToolCall,
    request: &ExecRequest,
    emit: &mut (dyn FnMut(Event) + Send),
) -> String {
    let result = background::start(request)
        .map(|id| Output {
            content: json!({
                "background": id,
                "status": "running",
                "note": "started in the background in the sandbox; read its output or stop \
                         it with the processes tool; it ends when the run ends",
            })
            .to_string(),
            summary: format!("started in the background as {id}"),
            diff: None,
        })
        .map_err(|error| ToolError::new(ToolErrorCode::Exec(error.code), error.message.clone()));
    super::file_call::report(call, &request.command, result, emit)
}

impl Loop<'_> {
    /// Handles a `processes` call.
    pub(super) async fn handle_processes(
        &self,
        call: &ToolCall,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> String {
        let parsed: Result<ProcessesArgs, ToolError> = serde_json::from_str(&call.arguments)
            .map_err(|error| {
                ToolError::new(
                    ToolErrorCode::InvalidArguments,
                    format!("invalid processes arguments: {error}"),
                )
            });
        let label = match &parsed {
            Ok(args) => match &args.id {
                Some(id) => format!("processes {:?} {id}", args.action).to_lowercase(),
                None => format!("processes {:?}", args.action).to_lowercase(),
            },
            Err(_) => "processes <invalid call>".to_owned(),
        };
        emit(Event::FileCall {
            id: call.id.clone(),
            tool: call.name.clone(),
            input: serde_json::from_str(&call.arguments).ok(),
            label: label.clone(),
            arguments: parsed.is_err().then(|| call.arguments.clone()),
        });
        let result = match parsed {
            Ok(args) => act(args).await,
            Err(error) => Err(error),
        };
        super::file_call::report(call, &label, result, emit)
    }
}

/// Carries out a `processes` call.
async fn act(args: ProcessesArgs) -> Result<Output, ToolError> {
    let unknown = |id: &str| {
        ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("no background process `{id}`: list them with action `list`"),
        )
    };
    let id = || {
        args.id.clone().ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::InvalidArguments,
                "`output` and `stop` need the process's `id`",
            )
        })
    };
    let output = |content: serde_json::Value, summary: String| Output {
        content: content.to_string(),
        summary,
        diff: None,
    };
    match args.action {
        Action::List => {
            let all = background::list();
            let running = all.iter().filter(|p| p.state == "running").count();
            Ok(output(
                json!({"processes": all}),
                format!("{} processes, {running} running", all.len()),
            ))
        }
        Action::Output => {
            let id = id()?;
            let tail = args
                .tail
                .unwrap_or(DEFAULT_TAIL)
                .min(crate::exec::RING_BYTES);
            let (listed, text, undone) =
                background::output(&id, tail).ok_or_else(|| unknown(&id))?;
            let mut content = json!({
                "id": listed.id,
                "state": listed.state,
                "output_bytes": listed.output_bytes,
                "output": text,
            });
            if !undone.is_empty() {
                content["sandbox_undone"] = json!(undone);
            }
            Ok(output(
                content,
                format!("{}, {} bytes shown", listed.state, text.len()),
            ))
        }
        Action::Stop => {
            let id = id()?;
            let listed = background::stop(&id).await.ok_or_else(|| unknown(&id))?;
            Ok(output(
                json!({"id": listed.id, "state": listed.state}),
                format!("stopped: {}", listed.state),
            ))
        }
    }
}
