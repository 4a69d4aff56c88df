//! What a tool call that got no run returns: a code and a message, as
//! `{"code": "EDENIED", "message": "…"}`. Shared by the loop that makes these
//! errors and the screens, transcripts and prompts that show them, so it lives
//! below all of them; it knows nothing of models or terminals.

use serde::Serialize;

use crate::exec::{ErrorCode, ExecError};

/// Why a call got no run: the tool's own codes, or the runner's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolErrorCode {
    /// The runner's code (`ECWD`, `ESANDBOX` …).
    Exec(ErrorCode),
    /// `EDENIED`: the policy or the person denied the command.
    Denied,
    /// `ELOOP`: the same call was repeated too often.
    Loop,
    /// `ETOOL_DISABLED`: the shell tool is off.
    ToolDisabled,
    /// `EINVAL`: the call's arguments were malformed (bad JSON, missing or mistyped fields).
    InvalidArguments,
}

impl Serialize for ToolErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolErrorCode::Exec(code) => code.serialize(serializer),
            ToolErrorCode::Denied => serializer.serialize_str("EDENIED"),
            ToolErrorCode::Loop => serializer.serialize_str("ELOOP"),
            ToolErrorCode::ToolDisabled => serializer.serialize_str("ETOOL_DISABLED"),
            ToolErrorCode::InvalidArguments => serializer.serialize_str("EINVAL"),
        }
    }
}

/// A call that got no run (or whose run could not start): a code and a message for people
/// and models, as `{"code": "EDENIED", "message": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolError {
    /// Machine-readable code.
    pub code: ToolErrorCode,
    /// What happened and what to do.
    pub message: String,
}

impl ToolError {
    /// A new error.
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl From<ExecError> for ToolError {
    fn from(error: ExecError) -> Self {
        Self::new(ToolErrorCode::Exec(error.code), error.message)
    }
}
