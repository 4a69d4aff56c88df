//! A command the person typed (`!command` in a session): run as `agent exec` runs one — no
//! policy and no prompt, in the same sandbox, with the run's limits, environment and
//! redaction — after the message's snapshot, its output streamed as the model's commands'
//! is, and its result worded for the model as theirs is.

use super::{Config, DecidedBy, Event, run_streaming, tool};
use crate::exec::{ExecRequest, ExecResult};
use crate::policy::{Source, Verdict};

/// Runs `command` for the person as call `id`, emitting its call, decision, output and
/// result; the result and what the model is told of it.
pub async fn run_typed(
    config: &Config,
    id: &str,
    command: &str,
    turn: u32,
    emit: &mut (dyn FnMut(Event) + Send),
) -> (ExecResult, String) {
    emit(Event::ToolCall {
        id: id.to_owned(),
        command: Some(command.to_owned()),
        description: Some("typed by you".to_owned()),
        working_directory: None,
        arguments: None,
    });
    emit(Event::Decision {
        id: id.to_owned(),
        decision: Verdict::Allow,
        reason: "typed by you (!command)".to_owned(),
        source: Source::User,
        rule: None,
        by: DecidedBy::Person,
        command: None,
        edited_from: None,
    });
    let mut request = ExecRequest::new(command, config.workspace.clone());
    request.shell.clone_from(&config.shell);
    request.limits = config.limits;
    request.env_remove.clone_from(&config.env_remove);
    request.redact.clone_from(&config.secrets);
    request.sandbox = config.sandbox.active_policy().cloned();
    let _ = config.snapshots.before_change(turn);
    let result = run_streaming(&request, id, emit).await;
    let content = config.secrets.redact(tool::result_content(&result));
    emit(Event::ToolResult {
        id: id.to_owned(),
        command: Some(command.to_owned()),
        result: Some(result.clone()),
        error: None,
    });
    (result, content)
}
