//! A `shell` call from the model: parsed, refused (sandbox required but missing, the same
//! call too often), decided, run in the sandbox with its output streamed, and reported back;
//! a denial says who denied it and what the model should do next.

use std::time::Duration;

use super::approval;
use super::tool;
use super::{
    DecidedBy, Denial, Event, Loop, MAX_IDENTICAL_CALLS, ShellCall, Stats, ToolError,
    ToolErrorCode, run_streaming,
};
use crate::approve::Approve;
use crate::exec::{self, ErrorCode, ExecRequest};
use crate::model::{Message, ToolCall};
use crate::policy::{Mode, Source, Verdict};

/// The allow rule that allowed a command on its own (no person, no mode): the hosts that rule
/// names (`net = [...]`) are open while the command runs.
fn deciding_rule(decided: &super::approval::Decided) -> Option<String> {
    (decided.by == DecidedBy::Policy)
        .then(|| decided.decision.rule.clone())
        .flatten()
}

impl Loop<'_> {
    /// Handles one call of the shell tool and returns the content for the model; `None`
    /// means the person interrupted the run.
    pub(super) async fn handle_shell<A: Approve>(
        &mut self,
        call: &ToolCall,
        approver: &mut A,
        stats: &mut Stats,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> Option<String> {
        let id = call.id.clone();
        let parsed = tool::parse(call);
        emit(call_event(call, &parsed));
        let fail =
            |error: ToolError, command: Option<String>, emit: &mut (dyn FnMut(Event) + Send)| {
                let content = tool::error_content(&error);
                emit(Event::ToolResult {
                    id: id.clone(),
                    command,
                    result: None,
                    error: Some(error),
                });
                Some(content)
            };
        if self.config.mode == Mode::Off {
            let error = ToolError::new(
                ToolErrorCode::ToolDisabled,
                "the shell tool is disabled (permissions mode \"off\"): answer without running commands",
            );
            return fail(error, None, emit);
        }
        let shell = match parsed {
            Ok(shell) => shell,
            Err(error) => return fail(error, None, emit),
        };
        let command = Some(shell.command.clone());
        if let Some(error) = self.refusal(&shell) {
            return fail(error, command, emit);
        }

        let Some(decided) = self.decide(&shell, approver, stats.turns).await else {
            interrupted(&id, &shell.command, stats, emit);
            return None;
        };
        let (decision, by) = (&decided.decision, decided.by);
        let edited = decided.edited_from.is_some();
        emit(Event::Decision {
            id: id.clone(),
            decision: decision.verdict,
            reason: decision.reason.clone(),
            source: decision.source,
            rule: decision.rule.clone(),
            by,
            command: edited.then(|| decided.command.clone()),
            edited_from: decided.edited_from.clone(),
        });
        let command = Some(decided.command.clone());
        if decision.verdict != Verdict::Allow {
            let error = denied(&decided, self.config.os, stats);
            return fail(error, command, emit);
        }

        // Allowed by the read-only list and nobody's yes: it runs read-only (DESIGN "Next").
        // Only the list's own allow: a command that mode allow-all let through is not on the
        // list (its source is builtin too, with no rule) and keeps the workspace-write sandbox.
        // A person's yes to the call's `escalate` adds exactly what it asked, for this call,
        // to the sandbox and environment the command would have had without it.
        let escalated = shell.escalate.as_ref().zip(decided.escalated);
        let plain = escalated.map_or(approval::Plain::of(decision, by), |(_, plain)| plain);
        // Counted before the runner's request is built: its refusal (`ECWD`) counts too.
        stats.commands_run += 1;
        let mut request = match self.exec_request(&decided.command, &shell, plain) {
            Ok(request) => request,
            Err(error) => return fail(error, command, emit),
        };
        let opened = escalated.and_then(|(escalate, plain)| {
            let (sandbox, opened) = escalate.apply(self.escalation_sandbox(plain));
            request.sandbox = sandbox;
            let base = self.plain_sandbox(plain);
            opened.map(|hosts| super::escalate::opening(hosts, base.as_ref()))
        });
        if !read_only(&decided) {
            let _ = self.config.snapshots.before_change(stats.turns);
        }
        let rule = deciding_rule(&decided);
        if shell.background {
            if let Some(log) = &self.config.network {
                // From now on its connections cannot be told from a command's.
                log.set_shared(true);
            }
            return Some(super::background_call::start(call, &request, emit));
        }
        let result = self
            .run_networked(&request, &id, (rule, opened), approver, emit)
            .await;
        let mut content = tool::result_content(&result);
        if result.sandbox_denied && request.sandbox.is_some() {
            let hint = super::escalate::hint(approver.can_ask(), self.config.mode);
            content = tool::with_field(&content, "escalate_hint", hint.into());
        }
        if let Some(from) = &decided.edited_from {
            content = approval::mark_edited(&content, from, &decided.command);
        }
        emit(Event::ToolResult {
            id,
            command,
            result: Some(result),
            error: None,
        });
        Some(content)
    }

    /// Runs `request` (see `run_streaming`); through the network proxy, its decisions while
    /// the command ran become `network` events and part of the result. `rule`: the allow rule
    /// that allowed it, whose own hosts (`net = [...]`) are open meanwhile, and the hosts a
    /// person opened for it (its `escalate`).
    /// A person at the terminal is asked about hosts no rule decides meanwhile.
    async fn run_networked<A: Approve>(
        &self,
        request: &ExecRequest,
        id: &str,
        (rule, opened): (Option<String>, Option<crate::net::host::Opening>),
        approver: &mut A,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> exec::ExecResult {
        let Some(log) = &self.config.network else {
            return run_streaming(request, id, emit).await;
        };
        // A rule's own hosts and the hosts a person opened for this command only while no
        // background process runs: the proxy cannot tell one's connections from this
        // command's (they share the run's namespace and bridge). Nor is a person asked about a
        // host then, in this command's name (rev5 B4, X1).
        let shared = exec::background::any_running();
        log.set_shared(shared);
        // One that reaches only what was opened for it then reaches nothing.
        let (rule, opened) = if shared {
            (None, opened.and_then(crate::net::host::Opening::shared))
        } else {
            (rule, opened)
        };
        // The rule's and the person's hosts end with the command, however it ends.
        let running = log.running(id.to_owned(), rule, opened);
        // Output is kept off the screen while a host question is shown on it.
        let hold = super::host_prompt::Hold::default();
        let mut held = |event: Event| hold.pass(event, emit);
        // On the heap: the loop's future stays small however the command is driven.
        let run = Box::pin(run_streaming(request, id, &mut held));
        let mut result = match &self.config.network_questions {
            Some(questions) => {
                let asking = (id, request.command.as_str());
                super::host_prompt::answering(run, questions, approver, asking, Some(&hold)).await
            }
            None => run.await,
        };
        hold.release(emit);
        // Background processes of the command may still connect: named by no command.
        drop(running);
        result.network = log.take().0;
        for decision in &result.network {
            emit(Event::Network(decision.clone()));
        }
        result
    }

    /// Why a well-formed call is not even decided: the sandbox is required but unavailable, a
    /// background process asks for hosts through the proxy, or the same call came too often in
    /// a row.
    fn refusal(&mut self, shell: &ShellCall) -> Option<ToolError> {
        if let Some(refusal) = self.config.sandbox.refusal() {
            return Some(ToolError::new(
                ToolErrorCode::Exec(ErrorCode::Sandbox),
                format!("{refusal}. Do not retry: answer without running commands."),
            ));
        }
        // Hosts opened through the proxy are opened for one command's connections; those of a
        // background process cannot be told from other commands' (they share the run's
        // namespace and bridge), so a grant for it alone cannot be made (rev6 F1).
        if shell.background
            && self.config.network.is_some()
            && shell.escalate.as_ref().is_some_and(|e| e.network.is_some())
        {
            return Some(ToolError::new(
                ToolErrorCode::InvalidArguments,
                "`escalate.network` cannot be given to a background process: the agent's proxy \
                 cannot tell its connections from other commands', so it cannot open hosts for \
                 it alone. Run the step that needs the network in the foreground with \
                 `escalate`, then start the background process without it."
                    .to_owned(),
            ));
        }
        (self.repeated(shell) >= MAX_IDENTICAL_CALLS).then(|| {
            ToolError::new(
                ToolErrorCode::Loop,
                format!(
                    "this exact call came {MAX_IDENTICAL_CALLS} times in a row and was not run: \
                     use the results you have or try something different"
                ),
            )
        })
    }

    /// The runner's request for an allowed command: working directory (inside the workspace),
    /// shell, limits, sandbox, and git's code-running settings off where no person said yes.
    fn exec_request(
        &self,
        command: &str,
        shell: &ShellCall,
        plain: approval::Plain,
    ) -> Result<ExecRequest, ToolError> {
        let cwd = match &shell.working_directory {
            Some(dir) => exec::resolve_working_directory(&self.config.workspace, dir)?,
            None => self.config.workspace.clone(),
        };
        let mut request = ExecRequest::new(command, cwd);
        request.shell.clone_from(&self.config.shell);
        request.limits = self.config.limits;
        request.env_remove.clone_from(&self.config.env_remove);
        request.redact.clone_from(&self.config.secrets);
        request.sandbox = self.plain_sandbox(plain);
        if plain.by != DecidedBy::Person {
            request.env_set = exec::git::neutralising_env();
        }
        request.limits.timeout = shell
            .timeout_ms
            .map(Duration::from_millis)
            .filter(|asked| !asked.is_zero())
            .map_or(self.config.limits.timeout, |asked| {
                asked.min(self.config.limits.timeout)
            })
            .min(self.time_left.unwrap_or(Duration::MAX));
        Ok(request)
    }

    /// Counts consecutive identical calls, this one included.
    fn repeated(&mut self, shell: &ShellCall) -> u32 {
        let key = (shell.command.clone(), shell.working_directory.clone());
        let count = match &self.repeat {
            Some((last, count)) if *last == key => count + 1,
            _ => 1,
        };
        self.repeat = Some((key, count));
        count
    }
}

/// Whether an allowed command only reads: the built-in read-only list decided it alone. Any
/// other allowed command may change files and gets a snapshot first.
fn read_only(decided: &approval::Decided) -> bool {
    decided.by == DecidedBy::Policy && decided.decision.source == Source::Builtin
}

/// Counts a denied call and the error the model gets for it.
fn denied(
    decided: &approval::Decided,
    os: crate::policy::OsFamily,
    stats: &mut Stats,
) -> ToolError {
    stats.commands_denied += 1;
    stats.denials.push(Denial {
        command: decided.command.clone(),
        reason: decided.decision.reason.clone(),
        allow: decided.allow_flag(os),
    });
    ToolError::new(ToolErrorCode::Denied, denial_message(decided))
}

fn denial_message(decided: &approval::Decided) -> String {
    let decision = &decided.decision;
    if let Some(note) = &decided.note {
        return format!(
            "The user denied this command at the prompt and wrote: \"{note}\". Follow the \
             user's note; do not retry the command unchanged."
        );
    }
    let who = match decided.by {
        DecidedBy::Person => "The user denied this command at the prompt",
        DecidedBy::Mode => "Denied by the permission mode",
        DecidedBy::NoTerminal => "Denied, it needs the user's approval",
        DecidedBy::Policy => "Denied by the permission policy",
    };
    format!(
        "{who}: {}. Do not retry it unchanged; adapt, or tell the user what is needed.",
        decision.reason
    )
}

/// The `tool_call` event for a call: its shell arguments, or the raw ones that did not parse.
fn call_event(call: &ToolCall, parsed: &Result<ShellCall, ToolError>) -> Event {
    match parsed {
        Ok(shell) => Event::ToolCall {
            id: call.id.clone(),
            command: Some(shell.command.clone()),
            description: Some(shell.description.clone()),
            working_directory: shell.working_directory.clone(),
            arguments: None,
            background: shell.background,
        },
        Err(_) => Event::ToolCall {
            id: call.id.clone(),
            command: None,
            description: None,
            working_directory: None,
            arguments: Some(call.arguments.clone()),
            background: false,
        },
    }
}

/// Answers a call that is not handled at all with `error` (its events, and the result for
/// the model).
pub(super) fn refused(
    call: &ToolCall,
    error: ToolError,
    emit: &mut (dyn FnMut(Event) + Send),
) -> Message {
    emit(call_event(call, &tool::parse(call)));
    let content = tool::error_content(&error);
    emit(Event::ToolResult {
        id: call.id.clone(),
        command: None,
        result: None,
        error: Some(error),
    });
    Message::ToolResult {
        call_id: call.id.clone(),
        content,
    }
}

/// Records a prompt the person answered by stopping the run: a denial.
fn interrupted(id: &str, command: &str, stats: &mut Stats, emit: &mut (dyn FnMut(Event) + Send)) {
    let reason = "denied at the prompt; the run was interrupted".to_owned();
    emit(Event::Decision {
        id: id.to_owned(),
        decision: Verdict::Deny,
        reason: reason.clone(),
        source: Source::User,
        rule: None,
        by: DecidedBy::Person,
        command: None,
        edited_from: None,
    });
    stats.commands_denied += 1;
    stats.denials.push(Denial {
        command: command.to_owned(),
        reason,
        allow: None,
    });
}
