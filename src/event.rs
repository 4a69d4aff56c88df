//! The one event type of a run. The same values feed the terminal UI, the
//! plain progress lines, the `--json` stream and the transcript, so what a
//! person saw and what was recorded cannot drift apart. It lives below the
//! loop that emits it and the screens and transcripts that consume it.

use serde::Serialize;

use crate::exec::{ExecResult, Stream};
use crate::model::{ToolCall, Usage};
use crate::policy::{Source, Verdict};
use crate::tool_error::ToolError;

/// The `code` of a `warning` event about an MCP server (it did not start, it stopped and was
/// started again): the screens show these, unlike the model's warnings, which its notice says.
pub const MCP_WARNING: &str = "mcp_server";

/// The `code` of a `warning` event saying what the sandbox undid after a background process
/// (checked around each call while one runs); the screens show these too.
pub const SANDBOX_WARNING: &str = "sandbox_undone";

/// Whether the screens show a `warning` event of `code` (not the model's, which its notice
/// says).
#[must_use]
pub fn shown_warning(code: &str) -> bool {
    code == MCP_WARNING || code == SANDBOX_WARNING
}

/// Who made a decision final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The policy (rules, built-in list, parser) decided on its own.
    Policy,
    /// The permission mode turned the policy's answer into this one.
    Mode,
    /// A person answered the prompt.
    Person,
    /// The policy said ask, but there is no terminal to ask: denied.
    NoTerminal,
}

/// A command that did not run because it was denied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Denial {
    /// The command (as decided: a person's edit, when there was one).
    pub command: String,
    /// Why it was denied.
    pub reason: String,
    /// The `agent run` flag that would allow it where nobody can be asked (`--allow 'cargo
    /// test'`, `--allow-edits`), when there is one: set only for a denial for want of a
    /// terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model gave a final answer.
    Answered,
    /// `--max-turns` was reached first.
    MaxTurns,
    /// The answer was cut at the model's output limit (`max_output_tokens`).
    Truncated,
    /// The provider's content filter stopped the reply.
    ContentFilter,
    /// The person pressed Ctrl+C (or Esc at a prompt).
    Interrupted,
    /// The provider failed.
    Error,
    /// `--max-tokens` or `--max-time` was spent first.
    Budget,
}

/// Why a session's conversation was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    /// The person asked (`/compact`).
    Asked,
    /// The conversation neared the model's context window.
    ContextWindow,
    /// The server said the conversation is too long for the model.
    ContextError,
    /// The person started a new conversation (`/clear`): nothing replaces it.
    Clear,
}

/// The fields `start` and `continue` share, flattened into each.
#[derive(Debug, Clone, Serialize)]
pub struct Header {
    /// Run id (transcript file stem).
    pub id: String,
    /// UTC time this part began, RFC 3339.
    pub time: String,
    /// The task as given.
    pub prompt: String,
    /// `provider/model`.
    pub model: String,
    /// The workspace.
    pub cwd: String,
    /// `agent` version.
    pub version: String,
    /// The command sandbox: mode, whether it is active here, network, and why not.
    pub sandbox: crate::sandbox::Status,
    /// Why mode `auto` acts as `ask` here (the sandbox is not fully active, no snapshots).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode_note: Option<String>,
}

/// Everything that happens in a run, in order.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The run began.
    Start {
        /// Who, what and where.
        #[serde(flatten)]
        header: Header,
        /// The AGENTS.md files added to the system prompt.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        instructions: Vec<String>,
    },
    /// An earlier run goes on (`run --continue`, `--resume ID`): this invocation's part is
    /// appended to its transcript after this marker, in place of a `start` event.
    Continue {
        /// Who, what and where of this part (the id is the earlier part's).
        #[serde(flatten)]
        header: Header,
        /// Complete model turns of the earlier parts sent back to the model.
        resumed_turns: u32,
        /// What could not be resumed (a damaged transcript, an older format), if anything.
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A piece of the model's text, as it streams.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of the model's reasoning (thinking), as it streams; not part of the answer.
    ReasoningDelta {
        /// The text.
        text: String,
    },
    /// The model asked for a tool call.
    ToolCall {
        /// The call's id.
        id: String,
        /// The command, when the arguments parsed.
        #[serde(skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// The model's description of it.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// A requested working directory.
        #[serde(skip_serializing_if = "Option::is_none")]
        working_directory: Option<String>,
        /// The raw arguments, when they did not parse.
        #[serde(skip_serializing_if = "Option::is_none")]
        arguments: Option<String>,
        /// It is to run in the background (`background: true`): no timeout bounds it.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        background: bool,
    },
    /// The model asked for a call of a file tool (`read_file`, `list_files`, `search`,
    /// `edit_file`, `write_file`): written as a `tool_call` event with the tool's name, its
    /// arguments and the one-line label people see.
    #[serde(rename = "tool_call")]
    FileCall {
        /// The call's id.
        id: String,
        /// The tool's name.
        tool: String,
        /// The arguments, when they parsed.
        #[serde(skip_serializing_if = "Option::is_none")]
        input: Option<serde_json::Value>,
        /// `read src/lib.rs`, `search "fn add"`, `edit src/lib.rs`.
        label: String,
        /// The raw arguments, when they did not parse.
        #[serde(skip_serializing_if = "Option::is_none")]
        arguments: Option<String>,
    },
    /// A file tool's result, as sent to the model: written as a `tool_result` event.
    #[serde(rename = "tool_result")]
    FileResult {
        /// The call's id.
        id: String,
        /// The tool's name.
        tool: String,
        /// The call's label.
        label: String,
        /// What the summary line says after the label (`120 lines`, `3 matches`, `+1 −1`).
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// The text the model got, when the tool ran.
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// The unified diff of a change that was applied.
        #[serde(skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        /// The error when it did not run.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ToolError>,
    },
    /// The model asked for a call of an MCP server's tool.
    McpCall {
        /// The call's id.
        id: String,
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The arguments, when they are a JSON object.
        #[serde(skip_serializing_if = "Option::is_none")]
        arguments: Option<serde_json::Value>,
        /// What the server says of the tool (`readOnlyHint`): shown, never trusted.
        #[serde(skip_serializing_if = "Option::is_none")]
        read_only_hint: Option<bool>,
        /// The raw arguments, when they did not parse.
        #[serde(skip_serializing_if = "Option::is_none")]
        raw_arguments: Option<String>,
    },
    /// An MCP call's result, as sent to the model.
    McpResult {
        /// The call's id.
        id: String,
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// How long the call took (0 when it was not made).
        duration_ms: u64,
        /// Characters of the result's text before the cap, when there is a result.
        #[serde(skip_serializing_if = "Option::is_none")]
        chars: Option<usize>,
        /// Text was left out to keep within the cap.
        truncated: bool,
        /// The server said the tool failed (`isError`).
        is_error: bool,
        /// What the model got, when the call was made.
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// Why there is no result (denied, timed out, the server failed).
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ToolError>,
    },
    /// The final decision on a call.
    Decision {
        /// The call's id.
        id: String,
        /// allow, ask or deny (never ask once final).
        decision: Verdict,
        /// Why, for people.
        reason: String,
        /// Which layer decided.
        source: Source,
        /// The rule or list entry.
        rule: Option<String>,
        /// Who made it final.
        by: DecidedBy,
        /// The command decided, when the person edited the model's (`e` at the prompt).
        #[serde(skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// The model's command, when the person edited it: what is decided and run is
        /// `command`.
        #[serde(skip_serializing_if = "Option::is_none")]
        edited_from: Option<String>,
    },
    /// Output of a running command.
    OutputDelta {
        /// The call's id.
        id: String,
        /// stdout or stderr.
        stream: Stream,
        /// The text.
        text: String,
    },
    /// Output of a background process (`background: true`), as it is read: its first
    /// [`crate::exec::streamed::STREAMED_BYTES`] bytes, secrets redacted. Never shown on a
    /// screen; the model reads it with the `processes` tool.
    BackgroundOutput {
        /// The process's id (`bg1`, …).
        id: String,
        /// stdout or stderr.
        stream: Stream,
        /// The text.
        text: String,
        /// The process's output reached the bound here: no more of it is recorded (the
        /// `processes` tool still reads its last bytes).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        capped: bool,
    },
    /// A call's result, as sent to the model.
    ToolResult {
        /// The call's id.
        id: String,
        /// The command, when there was one.
        #[serde(skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// The runner's result when the command ran.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<ExecResult>,
        /// The error when it did not run.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ToolError>,
    },
    /// In a session: a command the person ran themselves (`!command`), with no policy and
    /// no prompt. Its result goes to the model with the person's next message — the
    /// message of the part it is recorded in, before that part's first turn ends, else the
    /// next one — and a continued run rebuilds it so.
    UserCommand {
        /// The call's id (`typed-N`).
        id: String,
        /// The command as typed.
        command: String,
        /// The runner's result.
        result: ExecResult,
    },
    /// In a session: a note the model is told with the person's next message — what a
    /// `/undo` put back — recorded so that a continued session tells it too (with the message
    /// of the part it is recorded in, before that part's first turn ends, else the next one,
    /// as a `user_command`'s).
    ModelNote {
        /// The note, as the model gets it.
        note: String,
    },
    /// A model turn finished.
    TurnEnd {
        /// 1-based turn number (counted per invocation).
        turn: u32,
        /// The tokens the turn took, when the server said.
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// The tool calls as the model made them (raw arguments, provider data), so that a
        /// continued run can send them back; empty for a final answer.
        tool_calls: Vec<ToolCall>,
        /// Provider reasoning that must be sent back with the reply (`Reasoning::replay`).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        replay: Vec<serde_json::Value>,
        /// Tool calls the output limit cut off inside their arguments: dropped (not in
        /// `tool_calls`, never run or sent back); a continued run tells the model.
        #[serde(skip_serializing_if = "is_zero")]
        cut_calls: u32,
    },
    /// The run ended.
    Done {
        /// How.
        outcome: Outcome,
        /// Model turns taken.
        turns: u32,
        /// Commands that ran.
        commands_run: u32,
        /// Commands denied.
        commands_denied: u32,
        /// Each denied command and why, in order (`--fail-on-deny` exits 3 when any).
        denials: Vec<Denial>,
        /// Tokens of this invocation's turns, when the server reported them.
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// The final answer, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
        /// A note for the person (e.g. why it stopped).
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// What the run changed in the workspace (`agent diff`, `agent undo`), when it was
        /// about to change anything.
        #[serde(skip_serializing_if = "Option::is_none")]
        changes: Option<crate::snapshot::Changes>,
    },
    /// A decision of the network proxy (`[network] mode = "allowlist"`): a host a command
    /// reached or was refused, the rule that decided, and the setting that would allow it.
    Network(crate::net::NetworkEvent),
    /// In a session: everything the model saw before this point is replaced by `summary`
    /// (written by the model), or by nothing (`/clear`). A continued run rebuilds the
    /// conversation from here.
    Compacted {
        /// Why.
        reason: CompactReason,
        /// Messages replaced.
        replaced: usize,
        /// The summary the model sees from now on.
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// A model request failed before anything of it was shown and is tried again.
    Retry {
        /// The try about to be made (2 for the first retry).
        attempt: u32,
        /// Tries in all.
        tries: u32,
        /// The wait before it, in milliseconds.
        delay_ms: u64,
        /// The kind of failure, as in `error` (`connect`, `http`, `stream`, …).
        code: String,
        /// What failed, in one line.
        reason: String,
    },
    /// Something about the model server the person should know; the run goes on.
    Warning {
        /// What kind (`tools_dropped`, …).
        code: String,
        /// One line: what happened and what to do.
        message: String,
    },
    /// Something failed; the run ends after this.
    Error {
        /// The kind of failure (`connect`, `auth`, `stream`, … or `usage`).
        code: String,
        /// One line: what happened and what to do.
        message: String,
    },
}

/// Serde's test for a count left out when zero.
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde passes a reference"
)]
fn is_zero(count: &u32) -> bool {
    *count == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn header() -> Header {
        Header {
            id: "20261203-abc".into(),
            time: "2026-12-03T08:00:00Z".into(),
            prompt: "list".into(),
            model: "demo/demo".into(),
            cwd: "/w".into(),
            version: "0.1.0".into(),
            sandbox: crate::sandbox::Status {
                mode: crate::sandbox::SandboxMode::Off,
                active: false,
                network: true,
                reason: Some("mode off".into()),
                limitation: None,
            },
            mode_note: None,
        }
    }

    #[test]
    fn start_and_continue_flatten_the_header_in_the_same_order() {
        let sandbox =
            r#""sandbox":{"mode":"off","active":false,"network":true,"reason":"mode off"}"#;
        let fields = r#""id":"20261203-abc","time":"2026-12-03T08:00:00Z","prompt":"list","model":"demo/demo","cwd":"/w","version":"0.1.0""#;
        let start = Event::Start {
            header: header(),
            instructions: vec!["AGENTS.md".into()],
        };
        assert_eq!(
            serde_json::to_string(&start).unwrap(),
            format!(r#"{{"type":"start",{fields},{sandbox},"instructions":["AGENTS.md"]}}"#)
        );
        let next = Event::Continue {
            header: header(),
            resumed_turns: 2,
            note: None,
        };
        assert_eq!(
            serde_json::to_string(&next).unwrap(),
            format!(r#"{{"type":"continue",{fields},{sandbox},"resumed_turns":2}}"#)
        );
    }
}
