//! One decision of the network proxy, as recorded in the transcript and `--json` (the
//! `network` event) and carried in the result of the command that made it.

use serde::Serialize;

/// Allowed or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetDecision {
    /// The connection was made.
    Allow,
    /// The connection was refused.
    Deny,
}

/// One decision of the proxy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetworkEvent {
    /// The host as decided on (normalised: lower case, IDNA, no trailing dot).
    pub host: String,
    /// The port.
    pub port: u16,
    /// Allowed or refused.
    pub decision: NetDecision,
    /// The rule that decided, or why it was refused.
    pub rule: String,
    /// The setting that would allow it, for a refusal a setting can lift.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_with: Option<String>,
    /// The command (its tool call id) that was running, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}
