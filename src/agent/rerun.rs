//! The offer to run a command again without the sandbox, after the sandbox likely blocked it
//! (DESIGN "Next": sandbox). One more prompt, never automatic, never without a terminal; the
//! first try's result is already reported, the second try is a command of its own in the
//! events (`tool_call`, the person's `decision`, its output and `tool_result`, same id).

use super::{DecidedBy, Event, Stats};
use crate::approve::{Approval, ApprovalRequest, Approve};
use crate::exec::{ExecRequest, ExecResult};
use crate::policy::{Decision, Source, Verdict};

/// What came of the offer.
pub(super) enum Rerun {
    /// It ran again, unsandboxed: its result.
    Ran(ExecResult),
    /// The person kept the sandboxed result.
    Declined,
    /// The person stopped the run.
    Interrupted,
}

/// Asks whether to run `request` again without the sandbox, and does so on a yes. Enter
/// alone does not say yes (the question carries [`crate::approve::Caution::Unsandboxed`]; the
/// command's own destructiveness is the policy's, as for any command). Only for a command a person
/// said yes to: the offer rests on text the command printed, so a command that ran on a rule
/// or the read-only list could print it to invite the person to lift the sandbox.
pub(super) async fn again_without_sandbox<A: Approve>(
    id: &str,
    mut request: ExecRequest,
    first: &ExecResult,
    approver: &mut A,
    stats: &mut Stats,
    emit: &mut (dyn FnMut(Event) + Send),
) -> Rerun {
    // The sandbox reports nothing of what it refused: all there is, is a line the command
    // itself printed. Say so, and show it.
    let line = request
        .sandbox
        .as_ref()
        .and_then(|policy| crate::sandbox::denial_line(policy, first.exit_code, &first.stderr))
        .unwrap_or_default();
    let reason = format!(
        "a guess from the command's own output (the sandbox reports nothing): it printed \
         `{line}`. Run it again WITHOUT the sandbox (it may then write outside the workspace \
         and use the network)?"
    );
    let question = rerun_question(&request.command, reason);
    match approver.ask(&question).await {
        Approval::Allow
        | Approval::AllowForRun
        | Approval::AllowInProject(_)
        | Approval::AlwaysAllow(_) => {}
        Approval::Deny | Approval::DenyWithNote(_) | Approval::Edit(_) => return Rerun::Declined,
        Approval::Interrupt => return Rerun::Interrupted,
    }
    emit(Event::ToolCall {
        id: id.to_owned(),
        command: Some(request.command.clone()),
        description: Some("again, without the sandbox".to_owned()),
        working_directory: None,
        arguments: None,
        background: false,
    });
    emit(Event::Decision {
        id: id.to_owned(),
        decision: Verdict::Allow,
        reason: "run again without the sandbox at the prompt".to_owned(),
        source: Source::User,
        rule: None,
        by: DecidedBy::Person,
        command: None,
        edited_from: None,
    });
    request.sandbox = None;
    let second = super::run_streaming(&request, id, emit).await;
    stats.commands_run += 1;
    Rerun::Ran(second)
}

/// The question of the offer: the command again, marked as running without the sandbox (so
/// Enter alone does not say yes) — not as destructive, which is the policy's word for a
/// protected program in the command.
fn rerun_question(command: &str, reason: String) -> ApprovalRequest {
    ApprovalRequest {
        command: command.to_owned(),
        description: "the same command, again without the sandbox".to_owned(),
        decision: Decision {
            verdict: Verdict::Ask,
            reason,
            source: Source::Parser,
            rule: None,
            destructive: false,
            prefix: None,
            parts: Vec::new(),
        },
        prefix: None,
        edited_from: None,
        unsandboxed: true,
        subject: crate::approve::Subject::Command,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approve::Caution;

    /// The offer's warning says why Enter is withheld — no sandbox — whatever the command:
    /// `cargo test` was once labelled destructive because the offer borrowed that flag.
    #[test]
    fn the_offer_is_marked_unsandboxed_never_destructive() {
        for program in [
            "cargo test",
            "make",
            "npm install",
            "touch x",
            "pytest -q",
            "go build",
        ] {
            for args in ["", " --verbose", " && echo done"] {
                let command = format!("{program}{args}");
                let question = rerun_question(&command, "it printed `Permission denied`".into());
                assert_eq!(question.caution(), Some(Caution::Unsandboxed), "{command}");
                assert!(!question.decision.destructive, "{command}");
            }
        }
    }
}
