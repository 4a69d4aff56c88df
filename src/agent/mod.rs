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
mod background_call;
pub use auto::auto_fallback;
mod budget;
mod escalate;
mod file_call;
mod host_prompt;
mod instructions;
mod mcp_call;
mod mcp_start;
mod model_text;
mod prompt;
mod reply;
mod shell_call;
mod tool;
mod turn;
mod typed;
mod web_call;

use std::path::PathBuf;
use std::time::Duration;

pub use crate::event::{CompactReason, DecidedBy, Denial, Event, Header, Outcome};
pub use crate::tool_error::{ToolError, ToolErrorCode};
pub use budget::Budget;
pub use escalate::{Escalate, Network};
pub use file_call::scope as file_scope;
pub use instructions::{Instructions, MAX_INSTRUCTION_BYTES};
pub use mcp_start::start_mcp;
pub use prompt::{fixed_prompt_tokens, system_prompt};
pub use tool::{SHELL, ShellCall, shell_tool};
pub use typed::{TYPED_NOTE_CHARS, run_typed, typed_note, with_notes};

use prompt::{offered_tools, refresh_tools};
use reply::{drop_cut_calls, keep_cut_reply, push_prompt, sent_message};
use shell_call::refused;
use turn::{ask, cut_or_filtered, done, end_turn, failed};

use crate::approve::Approve;
use crate::exec::{self, ExecRequest};
use crate::model::{Message, Model, ModelError, Request, StopReason};
use crate::policy::{Mode, OsFamily, ReadOnly, Rule, Rules};

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
    /// The network proxy's log, when commands go through it (`[network] mode =
    /// "allowlist"`): each command's decisions become `network` events and part of its result.
    pub network: Option<crate::net::Log>,
    /// What commands reach through the proxy, as the settings write it (host patterns, then
    /// `host.agent.internal:PORT`), for the system prompt; empty without the proxy.
    pub network_reach: Vec<String>,
    /// Questions about hosts no rule decides, asked of a person while a command runs (at a
    /// terminal, through the proxy); `None`: such hosts are refused at once.
    pub network_questions: Option<crate::net::ask::Questions>,
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
    /// The MCP servers of this run (started, their tools offered), when any are configured.
    pub mcp: Option<std::sync::Arc<crate::mcp::Servers>>,
    /// `web_fetch`'s requests under the run's host rules, when it is offered (`[network]
    /// mode` not "off", or `[network] web_fetch = true`).
    pub web_fetch: Option<std::sync::Arc<crate::net::fetch::Fetcher>>,
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
    let mut emit = |event: Event| pass_on(event, config, &mut *emit);
    let emit: &mut (dyn FnMut(Event) + Send) = &mut emit;
    let clock = config.budget.start();
    let mut state = Loop {
        config,
        rules: Rules::new(config.allow.clone(), config.deny.clone()),
        allow: config.allow.clone(),
        repeat: None,
        time_left: None,
        files: file_call::FileState::default(),
        mcp_for_run: std::collections::HashSet::new(),
    };
    let system = system_prompt(config);
    let mut tools = offered_tools(config);
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
        refresh_tools(config, &mut tools).await;
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
    /// MCP tools a person allowed for the rest of the run (`2`), by their offered name.
    mcp_for_run: std::collections::HashSet<String>,
}

impl Loop<'_> {
    /// Handles one call (a file tool's, an MCP tool's, else the shell's) and returns the
    /// content for the model; `None` means the person interrupted the run.
    async fn handle<A: Approve>(
        &mut self,
        call: &crate::model::ToolCall,
        approver: &mut A,
        stats: &mut Stats,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> Option<String> {
        check_background(emit);
        let content = self.dispatch(call, approver, stats, emit).await;
        check_background(emit);
        content
    }

    /// [`Loop::handle`]'s call, by tool.
    async fn dispatch<A: Approve>(
        &mut self,
        call: &crate::model::ToolCall,
        approver: &mut A,
        stats: &mut Stats,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> Option<String> {
        if crate::tools::is_file_tool(&call.name) {
            return self.handle_file(call, approver, stats, emit).await;
        }
        if call.name == background_call::PROCESSES {
            return Some(self.handle_processes(call, emit).await);
        }
        if call.name == crate::tools::web_fetch::WEB_FETCH && self.config.web_fetch.is_some() {
            return Some(Box::pin(self.handle_web_fetch(call, approver, stats, emit)).await);
        }
        if let Some(tool) = self
            .config
            .mcp
            .as_ref()
            .and_then(|mcp| mcp.find(&call.name))
        {
            // Boxed: the SDK's call is a large future the loop should not carry inline.
            return Box::pin(self.handle_mcp(call, &tool, approver, stats, emit)).await;
        }
        self.handle_shell(call, approver, stats, emit).await
    }
}

/// Undoes what background processes planted in the workspace's git surfaces since the last
/// check (around every call and at the end of a turn, so that nothing they plant reaches a
/// command, the agent's own git, or the person's after the turn), saying so.
fn check_background(emit: &mut (dyn FnMut(Event) + Send)) {
    for message in exec::background::check_all() {
        emit(Event::Warning {
            code: crate::event::SANDBOX_WARNING.to_owned(),
            message,
        });
    }
}

/// Passes one of the run's events on to `emit`: first what background processes printed
/// since the last one (`background_output`: among the run's events in the order it came); the
/// closing snapshot comes after the run's last command, before `done` says what changed.
fn pass_on(mut event: Event, config: &Config, emit: &mut (dyn FnMut(Event) + Send)) {
    for piece in exec::streamed::take() {
        emit(Event::BackgroundOutput {
            id: piece.id,
            stream: piece.stream,
            text: piece.text,
            capped: piece.capped,
        });
    }
    if let Event::Done {
        changes, answer, ..
    } = &mut event
    {
        *changes = config.snapshots.close();
        *answer = answer.take().map(|answer| config.secrets.redact(answer));
    }
    emit(event);
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
