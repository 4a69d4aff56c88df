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
    Notify,
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

/// One row of [`SCHEMA`]: its dotted name is made from the table and the key, never written.
macro_rules! row {
    ($table:literal, $key:literal, $kind:expr) => {
        ($table, $key, $kind, concat!($table, ".", $key))
    };
}

/// The schema: (table, key, kind, dotted name). Profiles take the keys flat.
pub(super) const SCHEMA: &[(&str, &str, Kind, &str)] = &[
    row!("model", "provider", Kind::Provider),
    row!("model", "model", Kind::Model),
    row!("model", "base_url", Kind::BaseUrl),
    row!("model", "api_key_env", Kind::ApiKeyEnv),
    row!("model", "api_key_header", Kind::ApiKeyHeader),
    row!("model", "headers", Kind::Headers),
    row!("model", "max_output_tokens", Kind::MaxOutputTokens),
    row!("model", "context_window", Kind::ContextWindow),
    row!("model", "idle_timeout_secs", Kind::IdleTimeoutSecs),
    row!("model", "price_in", Kind::PriceIn),
    row!("model", "price_out", Kind::PriceOut),
    row!("permissions", "mode", Kind::Mode),
    row!("permissions", "read_only", Kind::ReadOnly),
    row!("permissions.commands", "allow", Kind::Allow),
    row!("permissions.commands", "deny", Kind::Deny),
    row!("permissions.files", "deny", Kind::Files(FilesKey::Deny)),
    row!(
        "permissions.files",
        "ask_read",
        Kind::Files(FilesKey::AskRead)
    ),
    row!("permissions.files", "edits", Kind::Files(FilesKey::Edits)),
    row!("limits", "timeout_secs", Kind::TimeoutSecs),
    row!("limits", "max_output_chars", Kind::MaxOutputChars),
    row!("limits", "max_turns", Kind::MaxTurns),
    row!("limits", "inspect_cpu_secs", Kind::InspectCpuSecs),
    row!("limits", "inspect_memory_mb", Kind::InspectMemoryMb),
    row!("exec", "shell", Kind::Shell),
    row!("sandbox", "mode", Kind::SandboxMode),
    row!("sandbox", "network", Kind::Network),
    row!("sandbox", "writable", Kind::Writable),
    row!("sandbox", "required", Kind::SandboxRequired),
    row!("ci", "fail_on_deny", Kind::FailOnDeny),
    row!("ui", "notify", Kind::Notify),
    row!("snapshots", "enabled", Kind::Snapshot(SnapshotKey::Enabled)),
    row!(
        "snapshots",
        "keep_days",
        Kind::Snapshot(SnapshotKey::KeepDays)
    ),
    row!(
        "snapshots",
        "max_file_mb",
        Kind::Snapshot(SnapshotKey::MaxFileMb)
    ),
    row!(
        "snapshots",
        "time_budget_ms",
        Kind::Snapshot(SnapshotKey::TimeBudgetMs)
    ),
    row!("network", "mode", Kind::Net(NetKey::Mode)),
    row!("network", "allow", Kind::Net(NetKey::Allow)),
    row!("network", "deny", Kind::Net(NetKey::Deny)),
    row!("network", "presets", Kind::Net(NetKey::Presets)),
    row!("network", "allow_local", Kind::Net(NetKey::AllowLocal)),
    row!("network", "hosts", Kind::Net(NetKey::Hosts)),
    row!("network", "web_fetch", Kind::Net(NetKey::WebFetch)),
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
    "ui",
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
