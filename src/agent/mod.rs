//! The model loop: send the conversation, stream the reply, and for each tool
//! call validate, decide (policy, mode, person), run and report back, until a
//! final answer, `--max-turns`, or an interrupt.
//!
//! It emits [`Event`]s and knows nothing of terminals: asking a person is the
//! implementation of [`Approve`]'s job, drawing is the caller's. A command reaches the runner
//! only with an allow decision from the policy or a person's yes.

mod approval;
pub use approval::RunAllowed;
mod auto;
pub use auto::auto_fallback;
mod budget;
mod file_call;
mod instructions;
mod model_text;
mod reply;
mod rerun;
mod tool;

use std::path::PathBuf;
use std::time::Duration;

pub use crate::event::{CompactReason, DecidedBy, Denial, Event, Header, Outcome};
pub use crate::tool_error::{ToolError, ToolErrorCode};
pub use budget::Budget;
pub use instructions::{Instructions, MAX_INSTRUCTION_BYTES};
pub use tool::{SHELL, ShellCall, shell_tool};

use model_text::ModelText;
use reply::{cut_note, drop_cut_calls, keep_cut_reply, push_prompt, sent_message};
use rerun::Rerun;

use crate::approve::Approve;
use crate::exec::{self, ErrorCode, ExecRequest};
use crate::model::{Delta, Message, Model, ModelError, Request, StopReason, ToolCall};
use crate::policy::{Mode, OsFamily, ReadOnly, Rule, Rules, Source, Verdict};
use crate::sandbox::Policy;

/// The same call this many times in a row is refused with `ELOOP`.
const MAX_IDENTICAL_CALLS: u32 = 4;

/// What a run needs besides the model and the person.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where commands run unless the model names a directory inside it.
    pub workspace: PathBuf,
    /// Which policy rules and shell apply.
    pub os: OsFamily,
    /// The shell program.
    pub shell: String,
    /// Allow rules (user and flags).
    pub allow: Vec<Rule>,
    /// Deny rules (every layer).
    pub deny: Vec<Rule>,
    /// The permission mode.
    pub mode: Mode,
    /// Which built-in read-only list the policy uses.
    pub read_only: ReadOnly,
    /// Per-command timeout (the model may only lower it) and output cap.
    pub limits: exec::Limits,
    /// CPU time and memory of a command the read-only list allowed (it runs with nobody's
    /// yes, in the read-only sandbox); commands a person or a rule allowed have none.
    pub inspect_limits: crate::sandbox::ResourceLimits,
    /// Model turns before stopping.
    pub max_turns: u32,
    /// Extra environment variables to keep from commands (the configured key variable).
    pub env_remove: Vec<String>,
    /// The API key and secret header values: redacted on the stream from commands' output
    /// and the model's text, and from every tool result the model is sent.
    pub secrets: exec::Secrets,
    /// The command sandbox (commands run inside it when it is active).
    pub sandbox: crate::sandbox::Sandbox,
    /// `--max-tokens` and `--max-time` for this invocation.
    pub budget: Budget,
    /// The project's AGENTS.md, added to the system prompt (words to the model only).
    pub instructions: Instructions,
    /// The file tools' rules: deny globs, secret files, `edits`, files never written.
    pub files: std::sync::Arc<crate::policy::files::FileRules>,
    /// Snapshots of the workspace: call `before_change(turn)` before changing any file (an
    /// edit tool too); the loop closes it when the run ends (`changes` in `done`).
    pub snapshots: crate::snapshot::Recorder,
    /// The commands a person allowed with `2` ("this command, this run"): empty at first,
    /// shared by every message of a session.
    pub run_allowed: RunAllowed,
}

/// Counters a caller can read even when it drops the run (Ctrl+C).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Model turns taken.
    pub turns: u32,
    /// Commands that ran.
    pub commands_run: u32,
    /// Commands denied.
    pub commands_denied: u32,
    /// Each denied command and why, in order.
    pub denials: Vec<Denial>,
    /// Tokens of this invocation's turns, when the server reported any.
    pub usage: Option<crate::model::Usage>,
}

/// Runs the loop for `prompt`, emitting events; the last event is `Done`
/// unless the caller drops the future (it then emits `Done` itself).
///
/// # Errors
/// The provider's error, after an `Error` and a `Done` event.
pub async fn run<M: Model, A: Approve>(
    model: &mut M,
    approver: &mut A,
    config: &Config,
    prompt: &str,
    stats: &mut Stats,
    emit: &mut (dyn FnMut(Event) + Send),
) -> Result<Outcome, ModelError> {
    run_after(
        model,
        approver,
        config,
        &mut Vec::new(),
        prompt,
        stats,
        emit,
    )
    .await
}

/// The estimated tokens of what every request carries before the conversation: the system
/// prompt and the tool definitions (`agent config show` prints it; a server's context must
/// hold it with room to spare).
#[must_use]
pub fn fixed_prompt_tokens(config: &Config) -> u64 {
    crate::model::overflow::fixed_prompt_tokens(&system_prompt(config), &offered_tools(config))
}

/// The tools offered to the model: none in mode `off`, else `shell` and the file tools.
fn offered_tools(config: &Config) -> Vec<crate::model::ToolSpec> {
    if config.mode == Mode::Off {
        return Vec::new();
    }
    let mut tools = vec![shell_tool(config.os, &config.shell)];
    tools.extend(crate::tools::specs());
    tools
}

/// Like [`run`], going on from `conversation`: the conversation of a run being continued
/// (rebuilt from its transcript; its commands are not run again) or of an interactive
/// session. The prompt and every completed step are pushed onto it as they happen, so a
/// caller that drops the future (an interrupted turn) keeps what happened up to then.
///
/// # Errors
/// The provider's error, after an `Error` and a `Done` event.
pub async fn run_after<M: Model, A: Approve>(
    model: &mut M,
    approver: &mut A,
    config: &Config,
    conversation: &mut Vec<Message>,
    prompt: &str,
    stats: &mut Stats,
    emit: &mut (dyn FnMut(Event) + Send),
) -> Result<Outcome, ModelError> {
    // The closing snapshot comes after the run's last command, before `done` says what changed.
    let mut emit = |mut event: Event| {
        if let Event::Done {
            changes, answer, ..
        } = &mut event
        {
            *changes = config.snapshots.close();
            *answer = answer.take().map(|answer| config.secrets.redact(answer));
        }
        emit(event);
    };
    let emit: &mut (dyn FnMut(Event) + Send) = &mut emit;
    let clock = config.budget.start();
    let mut state = Loop {
        config,
        rules: Rules::new(config.allow.clone(), config.deny.clone()),
        allow: config.allow.clone(),
        repeat: None,
        time_left: None,
        files: file_call::FileState::default(),
    };
    let system = system_prompt(config);
    let tools = offered_tools(config);
    let messages = conversation;
    // A conversation continued from a transcript or a session is one every server reads.
    crate::model::repair::repair(messages);
    let prompt_undo = push_prompt(messages, prompt);
    let first_turn = stats.turns;
    while stats.turns < config.max_turns {
        if let Some(note) = clock.spent(stats) {
            emit(done(Outcome::Budget, stats, None, Some(&note)));
            return Ok(Outcome::Budget);
        }
        let request = Request {
            system: &system,
            messages,
            tools: &tools,
        };
        let Some(completed) = ask(model, &request, config, &clock, emit).await else {
            let note = clock.time_note();
            emit(done(Outcome::Budget, stats, None, Some(&note)));
            return Ok(Outcome::Budget);
        };
        let mut reply = match completed {
            Ok(reply) => reply,
            Err(error) => {
                // Nothing of this invocation was answered: its prompt is not left behind for
                // the next message or `--continue` to repeat (the transcript has the attempt).
                if stats.turns == first_turn {
                    prompt_undo.undo(messages);
                }
                return Err(failed(error, stats, emit));
            }
        };
        stats.turns += 1;
        let cut = drop_cut_calls(&mut reply);
        end_turn(&reply, cut, stats, emit);
        if let Some(ended) = cut_or_filtered(&reply, (cut, model.output_limit()), stats, emit) {
            if reply.stop == StopReason::MaxTokens {
                keep_cut_reply(&reply, cut, messages);
            }
            return ended;
        }
        let calls = reply.tool_calls.clone();
        messages.push(sent_message(&reply));
        if calls.is_empty() {
            emit(done(Outcome::Answered, stats, Some(reply.text), None));
            return Ok(Outcome::Answered);
        }
        for (at, call) in calls.iter().enumerate() {
            // Between calls, never during one (but `--max-time` ends a command like a timeout).
            if let Some(note) = clock.spent(stats) {
                emit(done(Outcome::Budget, stats, None, Some(&note)));
                return Ok(Outcome::Budget);
            }
            state.time_left = clock.time_left();
            if let Some(error) = reply::not_handled(at, &calls) {
                messages.push(refused(call, error, emit));
                continue;
            }
            let Some(content) = state.handle(call, approver, stats, emit).await else {
                emit(done(
                    Outcome::Interrupted,
                    stats,
                    None,
                    Some("interrupted at the prompt"),
                ));
                return Ok(Outcome::Interrupted);
            };
            messages.push(Message::ToolResult {
                call_id: call.id.clone(),
                content: config.secrets.redact(content),
            });
        }
    }
    let note = format!(
        "stopped after {} turns without a final answer: raise --max-turns (or limits.max_turns) to let it go further",
        config.max_turns
    );
    emit(done(Outcome::MaxTurns, stats, None, Some(&note)));
    Ok(Outcome::MaxTurns)
}

/// One request to the model, its text and reasoning streamed as (redacted) events; `None`
/// when `--max-time` ran out first.
async fn ask<M: Model>(
    model: &mut M,
    request: &Request<'_>,
    config: &Config,
    clock: &budget::Clock,
    emit: &mut (dyn FnMut(Event) + Send),
) -> Option<Result<crate::model::Reply, ModelError>> {
    let mut deltas = ModelText::new(&config.secrets);
    let completed = clock
        .within(model.complete(request, &mut |delta| deltas.push(delta, emit)))
        .await;
    deltas.finish(emit);
    completed
}

/// Reports a provider's `error` (an `error` event, then `done`) and returns it.
fn failed(error: ModelError, stats: &Stats, emit: &mut (dyn FnMut(Event) + Send)) -> ModelError {
    emit(Event::Error {
        code: error.code().to_owned(),
        message: error.to_string(),
    });
    emit(done(Outcome::Error, stats, None, None));
    error
}

/// The event for news about a request on its way (a retry, a warning about the server);
/// `None` for the reply's own text and reasoning.
fn news_event(delta: Delta<'_>) -> Option<Event> {
    match delta {
        Delta::Text(_) | Delta::Reasoning(_) => None,
        Delta::Retry {
            attempt,
            tries,
            delay,
            error,
        } => Some(Event::Retry {
            attempt,
            tries,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            code: error.code().to_owned(),
            reason: error.to_string(),
        }),
        Delta::Warning { code, message } => Some(Event::Warning {
            code: code.to_owned(),
            message: message.to_owned(),
        }),
    }
}

/// Counts a finished turn's tokens and records the turn (with what a continued run needs:
/// the calls as they may be sent back, and how many were cut off).
fn end_turn(
    reply: &crate::model::Reply,
    cut: usize,
    stats: &mut Stats,
    emit: &mut (dyn FnMut(Event) + Send),
) {
    if let Some(usage) = reply.usage {
        *stats.usage.get_or_insert_default() += usage;
    }
    emit(Event::TurnEnd {
        turn: stats.turns,
        usage: reply.usage,
        tool_calls: crate::model::repair::sendable_calls(&reply.tool_calls).0,
        replay: reply.reasoning.replay.clone(),
        cut_calls: u32::try_from(cut).unwrap_or(u32::MAX),
    });
}

/// Ends the run when the reply was cut at the output limit (the text is the answer, with a
/// note; tool calls in a cut reply are not run, their arguments may be cut too) or stopped by
/// a content filter (an error). `None`: the reply is whole.
fn cut_or_filtered(
    reply: &crate::model::Reply,
    (cut, limit): (usize, Option<u32>),
    stats: &Stats,
    emit: &mut (dyn FnMut(Event) + Send),
) -> Option<Result<Outcome, ModelError>> {
    match reply.stop {
        StopReason::MaxTokens => {
            let note = cut_note(reply.tool_calls.len(), cut, limit, reply.usage);
            emit(done(
                Outcome::Truncated,
                stats,
                Some(reply.text.clone()),
                Some(&note),
            ));
            Some(Ok(Outcome::Truncated))
        }
        StopReason::ContentFilter => {
            let error = ModelError::ContentFilter;
            emit(Event::Error {
                code: error.code().to_owned(),
                message: error.to_string(),
            });
            let note = "the provider's content filter stopped the reply";
            emit(done(Outcome::ContentFilter, stats, None, Some(note)));
            Some(Err(error))
        }
        StopReason::EndTurn | StopReason::ToolUse | StopReason::Other => None,
    }
}

fn done(outcome: Outcome, stats: &Stats, answer: Option<String>, note: Option<&str>) -> Event {
    Event::Done {
        outcome,
        turns: stats.turns,
        commands_run: stats.commands_run,
        commands_denied: stats.commands_denied,
        denials: stats.denials.clone(),
        usage: stats.usage,
        answer,
        note: note.map(str::to_owned),
        changes: None,
    }
}

/// Per-run state of the loop.
struct Loop<'a> {
    config: &'a Config,
    rules: Rules,
    allow: Vec<Rule>,
    /// The last call's (command, working directory) and how often it came in a row.
    repeat: Option<((String, Option<String>), u32)>,
    /// What is left of `--max-time`: a command runs at most this long.
    time_left: Option<Duration>,
    /// Exact commands a person allowed for the rest of the run (`2`).
    /// What the person granted the file tools for the run, and their repeat counter.
    files: file_call::FileState,
}

impl Loop<'_> {
    /// Handles one call and returns the content for the model; `None` means
    /// the person interrupted the run.
    async fn handle<A: Approve>(
        &mut self,
        call: &ToolCall,
        approver: &mut A,
        stats: &mut Stats,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> Option<String> {
        if crate::tools::is_file_tool(&call.name) {
            return self.handle_file(call, approver, stats, emit).await;
        }
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
            stats.commands_denied += 1;
            stats.denials.push(Denial {
                command: decided.command.clone(),
                reason: decision.reason.clone(),
                allow: decided.allow_flag(self.config.os),
            });
            let error = ToolError::new(ToolErrorCode::Denied, denial_message(&decided));
            return fail(error, command, emit);
        }

        // Allowed by the read-only list and nobody's yes: it runs read-only (DESIGN "Next").
        // Only the list's own allow: a command that mode allow-all let through is not on the
        // list (its source is builtin too, with no rule) and keeps the workspace-write sandbox.
        let inspection = decision.source == Source::Builtin && by == DecidedBy::Policy;
        // Counted before the runner's request is built: its refusal (`ECWD`) counts too.
        stats.commands_run += 1;
        let request = match self.exec_request(&decided.command, &shell, by, inspection) {
            Ok(request) => request,
            Err(error) => return fail(error, command, emit),
        };
        if !read_only(&decided) {
            let _ = self.config.snapshots.before_change(stats.turns);
        }
        let mut result = run_streaming(&request, &id, emit).await;
        let mark = |content: String| match &decided.edited_from {
            Some(from) => approval::mark_edited(&content, from, &decided.command),
            None => content,
        };
        if result.sandbox_denied
            && request.sandbox.is_some()
            && by == DecidedBy::Person
            && approver.can_ask().is_ok()
        {
            emit(Event::ToolResult {
                id: id.clone(),
                command: command.clone(),
                result: Some(result.clone()),
                error: None,
            });
            match rerun::again_without_sandbox(&id, request, &result, approver, stats, emit).await {
                Rerun::Ran(second) => result = second,
                Rerun::Declined => return Some(mark(tool::result_content(&result))),
                Rerun::Interrupted => return None,
            }
        }
        let content = mark(tool::result_content(&result));
        emit(Event::ToolResult {
            id,
            command,
            result: Some(result),
            error: None,
        });
        Some(content)
    }

    /// Why a well-formed call is not even decided: the sandbox is required but unavailable, or
    /// the same call came too often in a row.
    fn refusal(&mut self, shell: &ShellCall) -> Option<ToolError> {
        if let Some(refusal) = self.config.sandbox.refusal() {
            return Some(ToolError::new(
                ToolErrorCode::Exec(ErrorCode::Sandbox),
                format!("{refusal}. Do not retry: answer without running commands."),
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
        by: DecidedBy,
        inspection: bool,
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
        // What mode `auto` let through runs with the network closed, whatever the settings.
        let auto = by == DecidedBy::Mode && self.auto_applies();
        request.sandbox = self.config.sandbox.active_policy().map(|policy| {
            if inspection {
                policy.inspection().limited(self.config.inspect_limits)
            } else if auto {
                // Only the workspace is writable (not `[sandbox] writable`'s extras, which no
                // snapshot keeps), and git's directories are read-only as a whole.
                Policy {
                    network: false,
                    writable: policy
                        .writable
                        .iter()
                        .filter(|dir| dir.starts_with(&policy.workspace))
                        .cloned()
                        .collect(),
                    git_read_only: true,
                    ..policy.clone()
                }
            } else {
                policy.clone()
            }
        });
        if by != DecidedBy::Person {
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
        },
        Err(_) => Event::ToolCall {
            id: call.id.clone(),
            command: None,
            description: None,
            working_directory: None,
            arguments: Some(call.arguments.clone()),
        },
    }
}

/// Answers a call that is not handled at all with `error` (its events, and the result for
/// the model).
fn refused(call: &ToolCall, error: ToolError, emit: &mut (dyn FnMut(Event) + Send)) -> Message {
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

/// Runs `request`, streaming its output as `output_delta` events of call `id`.
async fn run_streaming(
    request: &ExecRequest,
    id: &str,
    emit: &mut (dyn FnMut(Event) + Send),
) -> exec::ExecResult {
    let mut sink = |chunk: exec::Chunk<'_>| {
        if !chunk.text.is_empty() {
            emit(Event::OutputDelta {
                id: id.to_owned(),
                stream: chunk.stream,
                text: chunk.text.to_owned(),
            });
        }
    };
    exec::run(request, &mut sink).await
}

/// What the sandbox lets commands do, for the system prompt (empty when it is not active).
fn sandbox_sentence(sandbox: &crate::sandbox::Sandbox) -> String {
    use crate::sandbox::SandboxMode;
    let Some(policy) = sandbox.active_policy() else {
        return String::new();
    };
    let writes = match policy.mode {
        SandboxMode::ReadOnly => "cannot write any file".to_owned(),
        SandboxMode::WorkspaceWrite | SandboxMode::Off => format!(
            "can write only inside {}",
            policy
                .writable
                .iter()
                .map(|dir| dir.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let network = if policy.network {
        ""
    } else {
        " and cannot use the network"
    };
    format!(
        " Commands run in a sandbox: they can read files but {writes}{network}; a result with \
         `sandbox_denied` means the sandbox likely refused something."
    )
}

/// The system prompt: OS, shell, workspace and the rules of the tool.
#[must_use]
pub fn system_prompt(config: &Config) -> String {
    let os = match config.os {
        OsFamily::Unix => std::env::consts::OS,
        OsFamily::Windows => "windows",
    };
    let tool = if config.mode == Mode::Off {
        "No tools are available in this session: answer from what you know and what the user said."
            .to_owned()
    } else {
        format!(
            "You can run shell commands with the `shell` tool. Each command runs with `{shell}` as a \
             fresh process in {cwd} (or a `working_directory` inside it): no state carries over between \
             calls except files, stdin is closed, it is killed after {timeout}, and stdout plus stderr \
             are capped at {cap} characters. Every command passes a permission policy: read-only \
             commands run at once; anything else needs the user's approval and may be denied. Pipes, \
             redirections, `;`, `&&`, `$` and backticks always need approval, so prefer one simple \
             command per call. Give every call a short `description` the user will read. When a call \
             is denied, do not repeat it unchanged: adapt, or explain what you need. To look at \
             code use `read_file`, `list_files` and `search` (free inside the workspace), not \
             `cat`, `ls`, `find` or `grep`; to change a file use `edit_file` or `write_file` (the \
             user approves a diff), not `sed -i`, `echo >` or a here-document.",
            shell = config.shell,
            cwd = config.workspace.display(),
            timeout = exec::describe_duration(config.limits.timeout),
            cap = config.limits.max_output_chars,
        ) + &sandbox_sentence(&config.sandbox)
    };
    format!(
        "You are agent, a coding assistant working in a terminal on {os}, in the directory {cwd}.\n\
         {tool}\nWhen you are done, reply with a short final answer grounded in what the commands showed.{instructions}",
        cwd = config.workspace.display(),
        instructions = config.instructions.prompt_section(),
    )
}
