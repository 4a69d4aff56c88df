//! Chat models with tools, behind one [`Model`] trait, and the conversation types the agent
//! loop speaks ([`Message`], [`ToolCall`], [`Reply`]). The errors a provider can report
//! ([`ModelError`]) live in `error`, the retry policy shared by the HTTP providers in `retry`,
//! and [`AnyModel`], which picks a provider from a resolved [`ProviderConfig`], in
//! `any_model`. Wire formats live in one module per provider (`openai`, `anthropic`), the HTTP
//! transport in `transport`, the streaming in `sse`, the offline model in `demo`, provider
//! kinds and their defaults in `provider`. This module knows nothing of settings files, flags,
//! the policy or the terminal.

pub mod anthropic;
mod any_model;
pub mod demo;
mod embedded;
mod error;
mod llama_cpp;
pub mod openai;
pub mod overflow;
pub mod prices;
mod provider;
pub mod repair;
mod retry;
mod sse;
mod transport;
mod usage;

pub use any_model::AnyModel;
pub use error::ModelError;
pub use provider::{
    ProviderConfig, ProviderKind, UnknownProvider, secret_header, shown_header_value, valid_header,
};
pub use retry::{RetryPolicy, retryable_status};
pub use transport::Tunable;
pub use usage::{Usage, short as short_tokens};

use std::time::Duration;

/// A tool the model may call, described by a JSON Schema for its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model calls it by (`shell`).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema object of the arguments.
    pub parameters: serde_json::Value,
}

/// One tool call the model asked for (recorded as is in `turn_end`, to rebuild the
/// conversation when a run is continued).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call; the result is sent back under it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as raw JSON text, as received: may be malformed, the loop validates.
    pub arguments: String,
    /// Provider data that must travel back with the call, verbatim: the OpenAI wire's
    /// `extra_content` (Gemini puts its `thought_signature` there). `None`: nothing to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<serde_json::Value>,
}

/// What the model reasoned before (or between) its answer, as the provider sent it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reasoning {
    /// The readable text, for people (empty when the provider sends it encrypted).
    pub text: String,
    /// What the provider needs back with the message for the conversation to go on, in its
    /// own shape: Anthropic `thinking` / `redacted_thinking` blocks in order (with their
    /// `signature`); on the OpenAI wire one object of fields for the assistant message
    /// (`{"reasoning_content": "…"}`, DeepSeek). Empty: nothing to send back.
    pub replay: Vec<serde_json::Value>,
}

/// One piece of a reply as it streams, or news about the request on its way.
#[derive(Debug, Clone, Copy)]
pub enum Delta<'a> {
    /// Answer text.
    Text(&'a str),
    /// Reasoning text (thinking), shown apart from the answer.
    Reasoning(&'a str),
    /// The request failed before anything of it was shown and is tried again after `delay`.
    Retry {
        /// The try about to be made (2 for the first retry).
        attempt: u32,
        /// Tries in all.
        tries: u32,
        /// The wait before it.
        delay: Duration,
        /// Why the last try failed.
        error: &'a ModelError,
    },
    /// Something about the server the person should know (it leaves the tools out, …): a
    /// stable `code` and one line saying what to do.
    Warning {
        /// `tools_dropped`, …
        code: &'a str,
        /// What happened and what to do.
        message: &'a str,
    },
}

/// One entry of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// What the person asked.
    User(String),
    /// A previous reply of the model.
    Assistant {
        /// Its text (may be empty).
        text: String,
        /// The tool calls it made.
        tool_calls: Vec<ToolCall>,
        /// Its reasoning, kept to be sent back where the provider needs it.
        reasoning: Reasoning,
    },
    /// The result of one tool call.
    ToolResult {
        /// The [`ToolCall::id`] it answers.
        call_id: String,
        /// The result as JSON text.
        content: String,
    },
}

/// One turn's input: system prompt, conversation so far, tools offered.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The system prompt (may be empty).
    pub system: &'a str,
    /// The conversation, oldest first.
    pub messages: &'a [Message],
    /// The tools the model may call (empty: none).
    pub tools: &'a [ToolSpec],
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// A final answer.
    EndTurn,
    /// It wants tool calls run.
    ToolUse,
    /// It ran out of output tokens: the reply is cut.
    MaxTokens,
    /// The provider's content filter stopped it (`content_filter`, Anthropic's `refusal`).
    ContentFilter,
    /// Anything else the server said.
    Other,
}

/// The complete reply of one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// All text, as streamed.
    pub text: String,
    /// Tool calls in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped. Tool calls present imply [`StopReason::ToolUse`] unless the server said
    /// otherwise ([`StopReason::MaxTokens`], …).
    pub stop: StopReason,
    /// The reasoning, as streamed.
    pub reasoning: Reasoning,
    /// The tokens the turn took, when the server said (`None`: it did not).
    pub usage: Option<Usage>,
}

impl Reply {
    /// The reply as a conversation entry, with what must be sent back.
    #[must_use]
    pub fn to_message(&self) -> Message {
        Message::Assistant {
            text: self.text.clone(),
            tool_calls: self.tool_calls.clone(),
            reasoning: self.reasoning.clone(),
        }
    }
}

/// One streaming chat model with tools.
pub trait Model {
    /// Human-readable "provider/model" for the screen and transcripts.
    fn describe(&self) -> String;

    /// The output limit each request asks for (`max_tokens`), when one is sent.
    fn output_limit(&self) -> Option<u32> {
        None
    }

    /// One turn: stream text and reasoning to `on_delta` as they arrive, return the complete
    /// reply. Nothing is sent to `on_delta` twice: a retry happens only before anything was.
    fn complete(
        &mut self,
        request: &Request<'_>,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> impl Future<Output = Result<Reply, ModelError>> + Send;
}
