//! The schema of a settings file: every known key with its table and the kind of value it
//! takes, and the tables that only group other tables.

use crate::settings::network::NetKey;

/// Kinds of value a key takes.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Provider,
    Model,
    BaseUrl,
    ApiKeyEnv,
    ApiKeyHeader,
    Headers,
    MaxOutputTokens,
    ContextWindow,
    IdleTimeoutSecs,
    PriceIn,
    PriceOut,
    Mode,
    ReadOnly,
    Allow,
    Deny,
    TimeoutSecs,
    MaxOutputChars,
    MaxTurns,
    InspectCpuSecs,
    InspectMemoryMb,
    Shell,
    SandboxMode,
    Network,
    Writable,
    SandboxRequired,
    FailOnDeny,
    Files(FilesKey),
    /// A `[snapshots]` key.
    Snapshot(SnapshotKey),
    /// A `[network]` key.
    Net(NetKey),
}

/// The keys of `[permissions.files]`.
#[derive(Clone, Copy)]
pub(super) enum FilesKey {
    Deny,
    AskRead,
    Edits,
}

/// The keys of `[snapshots]`.
#[derive(Clone, Copy)]
pub(super) enum SnapshotKey {
    Enabled,
    KeepDays,
    MaxFileMb,
    TimeBudgetMs,
}

/// The schema: (table, key, kind, dotted name). Profiles take the keys flat.
pub(super) const SCHEMA: &[(&str, &str, Kind, &str)] = &[
    ("model", "provider", Kind::Provider, "model.provider"),
    ("model", "model", Kind::Model, "model.model"),
    ("model", "base_url", Kind::BaseUrl, "model.base_url"),
    ("model", "api_key_env", Kind::ApiKeyEnv, "model.api_key_env"),
    (
        "model",
        "api_key_header",
        Kind::ApiKeyHeader,
        "model.api_key_header",
    ),
    ("model", "headers", Kind::Headers, "model.headers"),
    (
        "model",
        "max_output_tokens",
        Kind::MaxOutputTokens,
        "model.max_output_tokens",
    ),
    (
        "model",
        "context_window",
        Kind::ContextWindow,
        "model.context_window",
    ),
    (
        "model",
        "idle_timeout_secs",
        Kind::IdleTimeoutSecs,
        "model.idle_timeout_secs",
    ),
    ("model", "price_in", Kind::PriceIn, "model.price_in"),
    ("model", "price_out", Kind::PriceOut, "model.price_out"),
    ("permissions", "mode", Kind::Mode, "permissions.mode"),
    (
        "permissions",
        "read_only",
        Kind::ReadOnly,
        "permissions.read_only",
    ),
    (
        "permissions.commands",
        "allow",
        Kind::Allow,
        "permissions.commands.allow",
    ),
    (
        "permissions.commands",
        "deny",
        Kind::Deny,
        "permissions.commands.deny",
    ),
    (
        "permissions.files",
        "deny",
        Kind::Files(FilesKey::Deny),
        "permissions.files.deny",
    ),
    (
        "permissions.files",
        "ask_read",
        Kind::Files(FilesKey::AskRead),
        "permissions.files.ask_read",
    ),
    (
        "permissions.files",
        "edits",
        Kind::Files(FilesKey::Edits),
        "permissions.files.edits",
    ),
    (
        "limits",
        "timeout_secs",
        Kind::TimeoutSecs,
        "limits.timeout_secs",
    ),
    (
        "limits",
        "max_output_chars",
        Kind::MaxOutputChars,
        "limits.max_output_chars",
    ),
    ("limits", "max_turns", Kind::MaxTurns, "limits.max_turns"),
    (
        "limits",
        "inspect_cpu_secs",
        Kind::InspectCpuSecs,
        "limits.inspect_cpu_secs",
    ),
    (
        "limits",
        "inspect_memory_mb",
        Kind::InspectMemoryMb,
        "limits.inspect_memory_mb",
    ),
    ("exec", "shell", Kind::Shell, "exec.shell"),
    ("sandbox", "mode", Kind::SandboxMode, "sandbox.mode"),
    ("sandbox", "network", Kind::Network, "sandbox.network"),
    ("sandbox", "writable", Kind::Writable, "sandbox.writable"),
    (
        "sandbox",
        "required",
        Kind::SandboxRequired,
        "sandbox.required",
    ),
    ("ci", "fail_on_deny", Kind::FailOnDeny, "ci.fail_on_deny"),
    (
        "snapshots",
        "enabled",
        Kind::Snapshot(SnapshotKey::Enabled),
        "snapshots.enabled",
    ),
    (
        "snapshots",
        "keep_days",
        Kind::Snapshot(SnapshotKey::KeepDays),
        "snapshots.keep_days",
    ),
    (
        "snapshots",
        "max_file_mb",
        Kind::Snapshot(SnapshotKey::MaxFileMb),
        "snapshots.max_file_mb",
    ),
    (
        "snapshots",
        "time_budget_ms",
        Kind::Snapshot(SnapshotKey::TimeBudgetMs),
        "snapshots.time_budget_ms",
    ),
    ("network", "mode", Kind::Net(NetKey::Mode), "network.mode"),
    (
        "network",
        "allow",
        Kind::Net(NetKey::Allow),
        "network.allow",
    ),
    ("network", "deny", Kind::Net(NetKey::Deny), "network.deny"),
    (
        "network",
        "presets",
        Kind::Net(NetKey::Presets),
        "network.presets",
    ),
    (
        "network",
        "allow_local",
        Kind::Net(NetKey::AllowLocal),
        "network.allow_local",
    ),
    (
        "network",
        "hosts",
        Kind::Net(NetKey::Hosts),
        "network.hosts",
    ),
    (
        "network",
        "web_fetch",
        Kind::Net(NetKey::WebFetch),
        "network.web_fetch",
    ),
];

/// Tables that only group other tables.
pub(super) const TABLES: &[&str] = &[
    "model",
    "permissions",
    "permissions.commands",
    "permissions.files",
    "limits",
    "exec",
    "sandbox",
    "ci",
    "snapshots",
    "network",
];

/// `permissions` is a child table of the root (`""`); `permissions.commands` of `permissions`.
pub(super) fn child_of<'a>(prefix: &str, table: &'a str) -> Option<&'a str> {
    let rest = if prefix.is_empty() {
        table
    } else {
        table.strip_prefix(prefix)?.strip_prefix('.')?
    };
    (!rest.contains('.')).then_some(rest)
}
