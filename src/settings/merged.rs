//! The merged settings: plain values, each with where it came from, and what the rest of
//! the agent derives from them (a command's limits, the file tools' rules).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::origin::{Origin, Sourced, sourced};
use crate::model::ProviderKind;
use crate::policy::{Mode, ReadOnly, Rule};
use crate::sandbox::SandboxMode;

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// An allow rule.
    Allow,
    /// A deny rule.
    Deny,
}

/// An allow or deny rule as written, and where: for `agent rules` and `config show`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedRule {
    /// Allow or deny.
    pub kind: RuleKind,
    /// The prefix.
    pub prefix: String,
    /// Where it was written.
    pub origin: Origin,
}

/// What an interactive session knows of the model besides how to reach it.
#[derive(Debug, Clone, Default)]
pub struct ModelFacts {
    /// Its context window in tokens (`[model] context_window`); `None`: a known default,
    /// or what the server's context-length error says.
    pub context_window: Option<Sourced<u64>>,
    /// Dollars per million input tokens (`[model] price_in`), for `/usage`.
    pub price_in: Option<Sourced<f64>>,
    /// Dollars per million output tokens (`[model] price_out`).
    pub price_out: Option<Sourced<f64>>,
}

/// The merged settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Model provider.
    pub provider: Sourced<ProviderKind>,
    /// Model name.
    pub model: Sourced<String>,
    /// Provider base URL.
    pub base_url: Sourced<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Sourced<String>,
    /// The API key itself (never printed or written anywhere).
    pub api_key: Option<String>,
    /// The header the key is sent in instead of the provider's (`api-key` for Azure).
    pub api_key_header: Option<Sourced<String>>,
    /// Extra request headers (`[model] headers`, `--header`), one per name (any case), the
    /// later layer winning.
    pub headers: Vec<Sourced<(String, String)>>,
    /// Longest model reply per turn in tokens; `None`: the provider's default.
    pub max_output_tokens: Option<Sourced<u32>>,
    /// Longest silence of the model server before it is given up on (`[model]
    /// idle_timeout_secs`); `None`: the transport's default.
    pub idle_timeout: Option<Sourced<Duration>>,
    /// The model's context window and prices, for an interactive session.
    pub facts: ModelFacts,
    /// Permission mode.
    pub mode: Sourced<Mode>,
    /// Which built-in read-only list applies (`[permissions] read_only`).
    pub read_only: Sourced<ReadOnly>,
    /// Allow rules (user and flags only).
    pub allow: Vec<Rule>,
    /// Deny rules from every layer.
    pub deny: Vec<Rule>,
    /// Every allow and deny rule with where it was written, in layer order.
    pub rules: Vec<ListedRule>,
    /// `[permissions.files]`: the file tools' settings.
    pub files: FileSettings,
    /// Exit 3 when any command was denied (`[ci] fail_on_deny`, `--fail-on-deny`).
    pub fail_on_deny: Sourced<bool>,
    /// How a prompt that waits calls the person back (`[ui] notify`).
    pub notify: Sourced<crate::settings::Notify>,
    /// Per-command timeout.
    pub timeout: Sourced<Duration>,
    /// Output cap per command.
    pub max_output_chars: Sourced<usize>,
    /// Model turns per run.
    pub max_turns: Sourced<u32>,
    /// CPU seconds per process of a command the read-only list allowed (sandboxed, Linux).
    pub inspect_cpu_secs: Sourced<u64>,
    /// Memory in MiB per process of a command the read-only list allowed (sandboxed, Linux).
    pub inspect_memory_mb: Sourced<u64>,
    /// Shell program.
    pub shell: Sourced<String>,
    /// How much commands may write (`[sandbox] mode`).
    pub sandbox_mode: Sourced<SandboxMode>,
    /// Commands may use the network inside the sandbox (every host: `[network] mode =
    /// "full"`, or the old `[sandbox] network = true`).
    pub network: Sourced<bool>,
    /// `[network]`: the mode, host rules, presets, `allow_local` and `hosts`.
    pub net: super::NetworkSettings,
    /// Extra writable paths, as written (`~` not yet expanded).
    pub writable: Vec<Sourced<String>>,
    /// Refuse to run commands when the sandbox cannot apply.
    pub sandbox_required: Sourced<bool>,
    /// `[snapshots]`: before changes, for `agent diff` and `agent undo`.
    pub snapshots: SnapshotSettings,
    /// The user settings file (it need not exist).
    pub user_file: PathBuf,
    /// The project settings file, when there is one.
    pub project_file: Option<PathBuf>,
    /// Some settings file has an `[mcp]` table: without one, a run reads no MCP settings
    /// (and pays nothing for MCP).
    pub mcp_tables: bool,
    /// Problems worth telling the person (unknown keys, ignored project keys).
    pub warnings: Vec<String>,
}

/// `[snapshots]`, each value with where it came from.
#[derive(Debug, Clone)]
pub struct SnapshotSettings {
    /// Snapshots are taken (`enabled`).
    pub enabled: Sourced<bool>,
    /// Days snapshot data is kept (`keep_days`).
    pub keep_days: Sourced<u32>,
    /// Untracked files larger than this many MB are left out (`max_file_mb`).
    pub max_file_mb: Sourced<u64>,
    /// A snapshot stops (partial) after this many ms (`time_budget_ms`).
    pub time_budget_ms: Sourced<u64>,
}

impl SnapshotSettings {
    pub(super) fn built_in() -> Self {
        let limits = crate::snapshot::Limits::default();
        let default = || Origin::Default("");
        Self {
            enabled: sourced(true, default()),
            keep_days: sourced(
                u32::try_from(limits.keep.as_secs() / 86_400).unwrap_or(7),
                default(),
            ),
            max_file_mb: sourced(limits.max_file_bytes / (1024 * 1024), default()),
            time_budget_ms: sourced(
                u64::try_from(limits.time_budget.as_millis()).unwrap_or(2000),
                default(),
            ),
        }
    }

    /// What a snapshot may cost.
    #[must_use]
    pub fn limits(&self) -> crate::snapshot::Limits {
        crate::snapshot::Limits {
            max_file_bytes: self.max_file_mb.value.saturating_mul(1024 * 1024),
            time_budget: Duration::from_millis(self.time_budget_ms.value),
            keep: Duration::from_secs(u64::from(self.keep_days.value) * 86_400),
        }
    }
}

impl Settings {
    /// The limits a command runs under.
    #[must_use]
    pub fn limits(&self) -> crate::exec::Limits {
        crate::exec::Limits {
            timeout: self.timeout.value,
            max_output_chars: self.max_output_chars.value,
        }
    }

    /// The CPU time and memory of a command the read-only list allowed.
    #[must_use]
    pub fn inspect_limits(&self) -> crate::sandbox::ResourceLimits {
        crate::sandbox::ResourceLimits::inspection(
            self.inspect_cpu_secs.value,
            self.inspect_memory_mb.value,
        )
    }
}

/// `[permissions.files]`: what the file tools may read and write.
#[derive(Debug, Clone)]
pub struct FileSettings {
    /// `deny`: globs no file tool may read or write (every layer).
    pub deny: Vec<crate::policy::files::FileRule>,
    /// `ask_read`: secret-file globs added to the built-in list.
    pub ask_read: Vec<String>,
    /// `edits`: what an edit inside the workspace needs.
    pub edits: Sourced<crate::policy::files::Edits>,
}

impl Default for FileSettings {
    fn default() -> Self {
        Self {
            deny: Vec::new(),
            ask_read: Vec::new(),
            edits: sourced(crate::policy::files::Edits::Ask, Origin::Default("")),
        }
    }
}

impl Settings {
    /// The file tools' rules for `workspace` (canonical): the deny and ask_read globs, the
    /// `edits` setting, and the user settings file, which no tool may write.
    ///
    /// # Errors
    /// A glob that does not parse (the file reader checks them, so this is a bug).
    pub fn file_rules(&self, workspace: &Path) -> Result<crate::policy::files::FileRules, String> {
        let user_file = crate::workspace::resolve(workspace, &self.user_file)
            .unwrap_or_else(|_| self.user_file.clone());
        crate::policy::files::FileRules::new(
            workspace.to_path_buf(),
            self.files.deny.clone(),
            &self.files.ask_read,
            self.files.edits.value,
            vec![user_file],
        )
    }
}
