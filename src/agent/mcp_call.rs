//! One call of an MCP tool (`mcp__SERVER__TOOL`): arguments checked (a JSON object),
//! decided like a command — rules `mcp:SERVER[/TOOL]` (deny wins), the mode, what the person
//! granted for the run, then the person at the command prompt (same keys; `3`/`a` save
//! `mcp:SERVER/TOOL`), or, without a terminal, denied with the rule that would allow it —
//! then called and reported (`mcp_call`, `decision`, `mcp_result`). The server's
//! `readOnlyHint` is shown, never trusted.

use serde_json::Value;

use super::file_call::{decision_event, person};
use super::{DecidedBy, Denial, Event, Loop, Stats};
use crate::approve::{Approval, ApprovalRequest, Approve};
use crate::mcp::{OfferedTool, display, rules};
use crate::model::ToolCall;
use crate::policy::{Decision, Verdict};
use crate::tool_error::{ToolError, ToolErrorCode};

impl Loop<'_> {
    /// Handles a call of the offered MCP tool `tool`; `None` when the person stopped the run.
    pub(super) async fn handle_mcp<A: Approve>(
        &mut self,
        call: &ToolCall,
        tool: &OfferedTool,
        approver: &mut A,
        stats: &mut Stats,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> Option<String> {
        let parsed = arguments(&call.arguments);
        emit(Event::McpCall {
            id: call.id.clone(),
            server: tool.server.clone(),
            tool: tool.tool.clone(),
            arguments: parsed.as_ref().ok().cloned().map(Value::Object),
            read_only_hint: tool.read_only_hint,
            raw_arguments: parsed.is_err().then(|| call.arguments.clone()),
        });
        let report = |result: Result<crate::mcp::Called, ToolError>,
                      emit: &mut (dyn FnMut(Event) + Send)| {
            Some(report(call, tool, result, emit))
        };
        let arguments = match parsed {
            Ok(arguments) => arguments,
            Err(error) => return report(Err(error), emit),
        };
        // The question that decides shows the arguments whole (never folded).
        let label =
            display::call_text_whole(&tool.server, &tool.tool, &Value::Object(arguments.clone()));
        let Some((decision, by, note)) = self.decide_mcp(tool, &label, approver).await else {
            let reason = "denied at the prompt; the run was interrupted".to_owned();
            emit(decision_event(
                &call.id,
                &person(Verdict::Deny, reason.clone()),
                DecidedBy::Person,
            ));
            stats.commands_denied += 1;
            stats.denials.push(Denial {
                command: rules::tool_rule(&tool.server, &tool.tool),
                reason,
                allow: None,
            });
            return None;
        };
        emit(decision_event(&call.id, &decision, by));
        if decision.verdict != Verdict::Allow {
            stats.commands_denied += 1;
            let rule = rules::tool_rule(&tool.server, &tool.tool);
            stats.denials.push(Denial {
                command: rule.clone(),
                reason: decision.reason.clone(),
                allow: (by == DecidedBy::NoTerminal).then(|| {
                    format!(
                        "--allow {}",
                        rules::offered_rule(self.config.os, &tool.server, &tool.tool)
                    )
                }),
            });
            let message = match note {
                Some(note) => format!(
                    "The user denied this MCP call at the prompt and wrote: \"{note}\". Follow \
                     the user's note; do not retry the call unchanged."
                ),
                None => format!(
                    "Denied: {}. Do not retry it unchanged; adapt, or tell the user what is \
                     needed.",
                    decision.reason
                ),
            };
            return report(Err(ToolError::new(ToolErrorCode::Denied, message)), emit);
        }
        stats.commands_run += 1;
        // An MCP tool may change files: the turn's snapshot comes first.
        let _ = self.config.snapshots.before_change(stats.turns);
        let Some(servers) = self.config.mcp.as_ref() else {
            return report(Err(internal()), emit);
        };
        let called = servers
            .call(tool, arguments, self.config.limits.max_output_chars)
            .await;
        let undone = called
            .undone
            .iter()
            .map(|what| format!("sandbox: after MCP server `{}`'s call: {what}", tool.server));
        for message in called.notice.iter().cloned().chain(undone) {
            emit(Event::Warning {
                code: crate::event::MCP_WARNING.to_owned(),
                message,
            });
        }
        report(Ok(called), emit)
    }

    /// The final decision: rules and mode, what the person granted for the run (`2`), then
    /// the person — or, with nobody to ask, deny naming the rule that would allow it. `None`:
    /// the person stopped the run. The note is the person's, for the model.
    async fn decide_mcp<A: Approve>(
        &mut self,
        tool: &OfferedTool,
        label: &str,
        approver: &mut A,
    ) -> Option<(Decision, DecidedBy, Option<String>)> {
        let config = self.config;
        let fenced = config
            .mcp
            .as_ref()
            .is_some_and(|servers| servers.fenced(&tool.server));
        let decision = rules::decide(
            &config.allow,
            &config.deny,
            config.mode,
            (&tool.server, &tool.tool),
            fenced,
        );
        if decision.verdict != Verdict::Ask {
            return Some((decision, DecidedBy::Policy, None));
        }
        if self.mcp_for_run.contains(&tool.name) {
            let reason = "allowed at the prompt earlier in this run (2: for the rest of this run)";
            return Some((
                person(Verdict::Allow, reason.to_owned()),
                DecidedBy::Person,
                None,
            ));
        }
        let rule = rules::tool_rule(&tool.server, &tool.tool);
        if let Err(why) = approver.can_ask() {
            let offered = rules::offered_rule(config.os, &tool.server, &tool.tool);
            let denied = Decision {
                verdict: Verdict::Deny,
                reason: format!(
                    "{}; nobody can be asked ({why}): allow it with the rule {offered} in \
                     [permissions.commands] allow, or `--allow {offered}`",
                    decision.reason
                ),
                ..decision
            };
            return Some((denied, DecidedBy::NoTerminal, None));
        }
        let hint = match tool.read_only_hint {
            Some(true) => " The server says this tool only reads (not checked).",
            Some(false) => " The server says this tool may change things.",
            None => "",
        };
        let request = ApprovalRequest {
            command: label.to_owned(),
            description: format!(
                "MCP tool `{}` of server `{}`.{hint}",
                tool.tool, tool.server
            ),
            decision,
            prefix: Some(rule),
            edited_from: None,
            unsandboxed: false,
            escalation: None,
            subject: crate::approve::Subject::McpCall,
        };
        let allowed = |reason: &str| {
            Some((
                person(Verdict::Allow, reason.to_owned()),
                DecidedBy::Person,
                None,
            ))
        };
        match approver.ask(&request).await {
            Approval::Allow => allowed("allowed at the prompt"),
            Approval::AllowForRun => {
                self.mcp_for_run.insert(tool.name.clone());
                allowed("allowed at the prompt for the rest of this run")
            }
            Approval::AllowInProject(rule) => allowed(&format!(
                "allowed at the prompt; `{rule}` is saved for this project"
            )),
            Approval::AlwaysAllow(rule) => {
                allowed(&format!("allowed at the prompt; `{rule}` is saved"))
            }
            Approval::DenyWithNote(note) => Some((
                person(
                    Verdict::Deny,
                    format!("denied at the prompt with a note: {note}"),
                ),
                DecidedBy::Person,
                Some(note),
            )),
            Approval::Interrupt => None,
            Approval::Deny | Approval::Edit(_) => Some((
                person(Verdict::Deny, "denied at the prompt".to_owned()),
                DecidedBy::Person,
                None,
            )),
        }
    }
}

/// The call's arguments: a JSON object (empty text is no arguments).
fn arguments(text: &str) -> Result<serde_json::Map<String, Value>, ToolError> {
    if text.trim().is_empty() {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            "the arguments must be a JSON object",
        )),
        Err(error) => Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("the arguments are not valid JSON: {error}"),
        )),
    }
}

/// Emits the `mcp_result` event and returns the content for the model.
fn report(
    call: &ToolCall,
    tool: &OfferedTool,
    result: Result<crate::mcp::Called, ToolError>,
    emit: &mut (dyn FnMut(Event) + Send),
) -> String {
    let event = |duration_ms, output: Option<&crate::mcp::CallOutput>, error: Option<ToolError>| {
        Event::McpResult {
            id: call.id.clone(),
            server: tool.server.clone(),
            tool: tool.tool.clone(),
            duration_ms,
            chars: output.map(|o| o.chars),
            truncated: output.is_some_and(|o| o.truncated),
            is_error: output.is_some_and(|o| o.is_error),
            content: output.map(|o| o.content.clone()),
            error,
        }
    };
    let (content, event) = match result {
        Err(error) => (
            super::tool::error_content(&error),
            event(0, None, Some(error)),
        ),
        Ok(called) => {
            let ms = u64::try_from(called.duration.as_millis()).unwrap_or(u64::MAX);
            match called.output {
                Ok(output) => (output.content.clone(), event(ms, Some(&output), None)),
                Err(failed) => {
                    let code = match failed {
                        crate::mcp::client::CallError::TimedOut(_) => {
                            crate::exec::ErrorCode::TimedOut
                        }
                        crate::mcp::client::CallError::Failed(_)
                        | crate::mcp::client::CallError::Closed(_) => crate::exec::ErrorCode::Io,
                    };
                    let error = ToolError::new(
                        ToolErrorCode::Exec(code),
                        format!("MCP server `{}`: {failed}", tool.server),
                    );
                    (
                        super::tool::error_content(&error),
                        event(ms, None, Some(error)),
                    )
                }
            }
        }
    };
    emit(event);
    content
}

fn internal() -> ToolError {
    ToolError::new(
        ToolErrorCode::Exec(crate::exec::ErrorCode::Io),
        "no MCP servers run in this session (this is a bug in agent)",
    )
}
