//! Settings: the layers (built-in < user file < profile < project file <
//! environment < flags) merged once into plain [`Settings`], each value
//! remembering where it came from for `agent config show`.
//!
//! A project file (`.agent/settings.toml` in the workspace) can only tighten:
//! add deny rules, lower limits, make the mode stricter. Anything else it says
//! is reported and ignored — a cloned repository must not grant itself
//! permissions or point the agent at another server.

mod file;
mod network;
mod paths;
mod project;
mod show;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use file::parse_mode;
pub use paths::{state_dir, user_settings_path};
pub use show::render;

use file::{Entry, Layer, Value};

use crate::model::ProviderKind;
use crate::net::NetworkMode;
use crate::policy::{Mode, ReadOnly, Rule, Source};
use crate::sandbox::SandboxMode;
use network::NetValue;
pub use network::NetworkSettings;

/// Default number of model turns before the loop stops.
pub const DEFAULT_MAX_TURNS: u32 = 50;

/// Settings that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file is malformed or a value has the wrong type.
    #[error("{}:{line}: {message}: fix the settings file", path.display())]
    Invalid {
        /// The settings file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The file exists but could not be read.
    #[error("cannot read settings file `{}`: {message}", path.display())]
    Read {
        /// The settings file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// `--config FILE` names a file that does not exist.
    #[error("settings file `{}` does not exist: check --config", path.display())]
    MissingConfig {
        /// The file given.
        path: PathBuf,
    },
    /// `--profile NAME` is not defined.
    #[error("unknown profile `{name}`: {}", defined_profiles(defined))]
    UnknownProfile {
        /// The profile asked for.
        name: String,
        /// The profiles the settings define.
        defined: Vec<String>,
    },
    /// The model's base URL does not start with `http://` or `https://`.
    #[error(
        "base URL `{url}` ({origin}) must start with http:// or https://: write `{suggestion}` \
         (or https://) instead"
    )]
    BadBaseUrl {
        /// The URL as written.
        url: String,
        /// Where it was written.
        origin: String,
        /// The URL with `http://` in front.
        suggestion: String,
    },
    /// No home or config directory could be found.
    #[error("cannot find the configuration directory: set AGENT_CONFIG_DIR or HOME")]
    NoConfigDir,
}

fn defined_profiles(defined: &[String]) -> String {
    if defined.is_empty() {
        "no profiles are defined (add [profiles.NAME] to the settings file)".to_owned()
    } else {
        format!("defined profiles are {}", defined.join(", "))
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Built-in default (with why, when derived).
    Default(&'static str),
    /// The user settings file.
    User(PathBuf, usize),
    /// This workspace's table in the user settings file
    /// (`[projects."<workspace>".permissions.commands]`).
    UserProject(PathBuf, usize, String),
    /// A profile in the user settings file.
    Profile(String, PathBuf, usize),
    /// The project settings file.
    Project(PathBuf, usize),
    /// An environment variable.
    Env(&'static str),
    /// A command-line flag.
    Flag(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default("") => write!(f, "default"),
            Origin::Default(why) => write!(f, "default ({why})"),
            Origin::User(path, line) => write!(f, "user {}:{line}", path.display()),
            Origin::UserProject(path, line, workspace) => write!(
                f,
                "user {}:{line} [projects.\"{workspace}\"]",
                path.display()
            ),
            Origin::Profile(name, path, line) => {
                write!(f, "profile {name} {}:{line}", path.display())
            }
            Origin::Project(path, line) => write!(f, "project {}:{line}", path.display()),
            Origin::Env(var) => write!(f, "env {var}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its origin.
    pub origin: Origin,
}

fn sourced<T>(value: T, origin: Origin) -> Sourced<T> {
    Sourced { value, origin }
}

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

/// What the command line asks for, already out of clap's types.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--config FILE`: replaces the user settings file.
    pub config_file: Option<PathBuf>,
    /// `--profile NAME`.
    pub profile: Option<String>,
    /// `--provider`.
    pub provider: Option<ProviderKind>,
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--max-output-tokens`.
    pub max_output_tokens: Option<u32>,
    /// `--header 'NAME: VALUE'` (repeatable), already split.
    pub headers: Vec<(String, String)>,
    /// `--mode`.
    pub mode: Option<Mode>,
    /// `--allow` prefixes.
    pub allow: Vec<String>,
    /// `--deny` prefixes.
    pub deny: Vec<String>,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--max-output-chars`.
    pub max_output_chars: Option<usize>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--sandbox MODE`.
    pub sandbox_mode: Option<SandboxMode>,
    /// `--network`: commands may use the network inside the sandbox.
    pub network: Option<bool>,
    /// `--sandbox-required`.
    pub sandbox_required: Option<bool>,
    /// `--fail-on-deny`.
    pub fail_on_deny: Option<bool>,
    /// `--allow-edits`: the file tools' edits inside the workspace need no yes.
    pub edits: Option<crate::policy::files::Edits>,
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
    pub net: NetworkSettings,
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
    fn built_in() -> Self {
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

/// Settings being assembled: model keys stay optional until the provider is known.
struct Draft {
    provider: Option<Sourced<ProviderKind>>,
    model: Option<Sourced<String>>,
    base_url: Option<Sourced<String>>,
    api_key_env: Option<Sourced<String>>,
    settings: Settings,
}

impl Draft {
    fn apply(&mut self, entry: &Entry, origin: Origin, source: Source) {
        let s = &mut self.settings;
        match &entry.value {
            Value::Provider(kind) => self.provider = Some(sourced(*kind, origin)),
            Value::Model(model) => self.model = Some(sourced(model.clone(), origin)),
            Value::BaseUrl(url) => self.base_url = Some(sourced(url.clone(), origin)),
            Value::ApiKeyEnv(var) => self.api_key_env = Some(sourced(var.clone(), origin)),
            Value::ApiKeyHeader(name) => s.api_key_header = Some(sourced(name.clone(), origin)),
            Value::Headers(headers) => {
                for header in headers {
                    set_header(&mut s.headers, header, &origin);
                }
            }
            Value::MaxOutputTokens(n) => s.max_output_tokens = Some(sourced(*n, origin)),
            Value::ContextWindow(n) => s.facts.context_window = Some(sourced(*n, origin)),
            Value::IdleTimeoutSecs(n) => {
                s.idle_timeout = Some(sourced(Duration::from_secs(*n), origin));
            }
            Value::PriceIn(p) => s.facts.price_in = Some(sourced(*p, origin)),
            Value::PriceOut(p) => s.facts.price_out = Some(sourced(*p, origin)),
            Value::Mode(mode) => s.mode = sourced(*mode, origin),
            Value::ReadOnly(list) => s.read_only = sourced(*list, origin),
            Value::Allow(rules) => {
                s.allow.extend(rules.iter().map(|r| rule(r, source)));
                s.rules
                    .extend(listed(RuleKind::Allow, rules.iter(), &origin));
            }
            Value::Deny(rules) => {
                s.deny.extend(rules.iter().map(|r| rule(r, source)));
                s.rules
                    .extend(listed(RuleKind::Deny, rules.iter(), &origin));
            }
            Value::FailOnDeny(on) => s.fail_on_deny = sourced(*on, origin),
            Value::FileDeny(globs) => {
                s.files
                    .deny
                    .extend(globs.iter().map(|pattern| crate::policy::files::FileRule {
                        pattern: pattern.clone(),
                        source,
                    }));
            }
            Value::AskRead(globs) => s.files.ask_read.extend(globs.iter().cloned()),
            Value::Edits(edits) => s.files.edits = sourced(*edits, origin),
            Value::TimeoutSecs(secs) => s.timeout = sourced(Duration::from_secs(*secs), origin),
            Value::MaxOutputChars(n) => s.max_output_chars = sourced(*n, origin),
            Value::MaxTurns(n) => s.max_turns = sourced(*n, origin),
            Value::InspectCpuSecs(secs) => s.inspect_cpu_secs = sourced(*secs, origin),
            Value::InspectMemoryMb(mb) => s.inspect_memory_mb = sourced(*mb, origin),
            Value::Shell(shell) => s.shell = sourced(shell.clone(), origin),
            Value::SandboxMode(mode) => s.sandbox_mode = sourced(*mode, origin),
            Value::Network(network) => {
                // The old key: on is every host, off no network.
                let mode = if *network {
                    NetworkMode::Full
                } else {
                    NetworkMode::Off
                };
                s.net.mode = sourced(mode, origin.clone());
                s.network = sourced(*network, origin);
            }
            Value::Net(value) => {
                s.net.apply(value, &origin);
                if let NetValue::Mode(mode) = value {
                    s.network = sourced(*mode == NetworkMode::Full, origin);
                }
            }
            Value::Writable(paths) => s.writable.extend(
                paths
                    .iter()
                    .map(|path| sourced(path.clone(), origin.clone())),
            ),
            Value::SandboxRequired(required) => s.sandbox_required = sourced(*required, origin),
            Value::SnapshotsEnabled(on) => s.snapshots.enabled = sourced(*on, origin),
            Value::KeepDays(days) => s.snapshots.keep_days = sourced(*days, origin),
            Value::MaxFileMb(mb) => s.snapshots.max_file_mb = sourced(*mb, origin),
            Value::TimeBudgetMs(ms) => s.snapshots.time_budget_ms = sourced(*ms, origin),
        }
    }
}

fn listed<'a>(
    kind: RuleKind,
    rules: impl Iterator<Item = &'a String>,
    origin: &Origin,
) -> Vec<ListedRule> {
    rules
        .map(|prefix| ListedRule {
            kind,
            prefix: prefix.trim().to_owned(),
            origin: origin.clone(),
        })
        .collect()
}

/// Whether `key` of a `[projects."<key>"]` table names `workspace` (as written, or
/// once symbolic links are resolved).
fn names_workspace(key: &str, workspace: &Path) -> bool {
    let path = Path::new(key);
    path == workspace || path.canonicalize().is_ok_and(|path| path == workspace)
}

fn rule(prefix: &str, source: Source) -> Rule {
    Rule {
        prefix: prefix.trim().to_owned(),
        source,
    }
}

impl Draft {
    /// The built-in defaults, before any layer.
    fn defaults(user_file: PathBuf) -> Draft {
        let default = |why| Origin::Default(why);
        Draft {
            provider: None,
            model: None,
            base_url: None,
            api_key_env: None,
            settings: Settings {
                provider: sourced(ProviderKind::Demo, default("")),
                model: sourced(String::new(), default("")),
                base_url: sourced(String::new(), default("")),
                api_key_env: sourced(String::new(), default("")),
                api_key: None,
                api_key_header: None,
                headers: Vec::new(),
                max_output_tokens: None,
                idle_timeout: None,
                facts: ModelFacts::default(),
                mode: sourced(Mode::Ask, default("")),
                read_only: sourced(ReadOnly::default(), default("")),
                allow: Vec::new(),
                deny: Vec::new(),
                rules: Vec::new(),
                fail_on_deny: sourced(false, default("")),
                files: FileSettings::default(),
                timeout: sourced(crate::exec::DEFAULT_TIMEOUT, default("")),
                max_output_chars: sourced(crate::exec::DEFAULT_MAX_OUTPUT_CHARS, default("")),
                max_turns: sourced(DEFAULT_MAX_TURNS, default("")),
                inspect_cpu_secs: sourced(crate::sandbox::DEFAULT_INSPECT_CPU_SECS, default("")),
                inspect_memory_mb: sourced(crate::sandbox::DEFAULT_INSPECT_MEMORY_MB, default("")),
                shell: sourced(crate::exec::default_shell().to_owned(), default("")),
                sandbox_mode: sourced(SandboxMode::default(), default("")),
                network: sourced(false, default("")),
                net: NetworkSettings::built_in(),
                writable: Vec::new(),
                sandbox_required: sourced(false, default("")),
                snapshots: SnapshotSettings::built_in(),
                user_file,
                project_file: None,
                warnings: Vec::new(),
            },
        }
    }
}

/// Loads and merges every layer for a run in `workspace`. `env` reads
/// environment variables (injected so tests need not touch the process's).
///
/// # Errors
/// A malformed or unreadable settings file, or an unknown profile.
pub fn load(
    overrides: &Overrides,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Settings, SettingsError> {
    let user_file = match &overrides.config_file {
        Some(path) if !path.exists() => {
            return Err(SettingsError::MissingConfig { path: path.clone() });
        }
        Some(path) => path.clone(),
        None => user_settings_path(env)?,
    };
    let mut draft = Draft::defaults(user_file.clone());

    let user = file::read(&user_file)?;
    for entry in &user.entries {
        draft.apply(
            entry,
            Origin::User(user_file.clone(), entry.line),
            Source::User,
        );
    }
    for (key, entries) in &user.projects {
        if names_workspace(key, workspace) {
            for entry in entries {
                let origin = Origin::UserProject(user_file.clone(), entry.line, key.clone());
                draft.apply(entry, origin, Source::User);
            }
        }
    }
    if let Some(name) = &overrides.profile {
        let Some(entries) = user.profiles.get(name) else {
            return Err(SettingsError::UnknownProfile {
                name: name.clone(),
                defined: user.profiles.keys().cloned().collect(),
            });
        };
        for entry in entries {
            let origin = Origin::Profile(name.clone(), user_file.clone(), entry.line);
            draft.apply(entry, origin, Source::User);
        }
    }
    draft.settings.warnings.extend(user.warnings);

    let project_path = workspace.join(".agent").join("settings.toml");
    if project_path != user_file && project_path.is_file() {
        let project: Layer = file::read(&project_path)?;
        for entry in &project.entries {
            draft.apply_project(entry, &project_path);
        }
        if !project.projects.is_empty() {
            draft.settings.warnings.push(format!(
                "{}: [projects] is ignored: per-project rules belong in the user settings file \
                 (`3` at the prompt writes them there)",
                project_path.display()
            ));
        }
        for name in project.profiles.keys() {
            draft.settings.warnings.push(format!(
                "{}: profile `{name}` is ignored: profiles belong in the user settings file",
                project_path.display()
            ));
        }
        draft.settings.warnings.extend(project.warnings);
        draft.settings.project_file = Some(project_path);
    }

    if let Some(model) = env("AGENT_MODEL").filter(|m| !m.is_empty()) {
        draft.model = Some(sourced(model, Origin::Env("AGENT_MODEL")));
    }
    apply_flags(&mut draft, overrides);
    let settings = finish(draft, env);
    check_base_url(&settings.base_url)?;
    Ok(settings)
}

/// A base URL must say its scheme: `localhost:8080/v1` would otherwise be read as a URL of
/// scheme `localhost`, or as a relative one, and fail far from where it was written.
fn check_base_url(url: &Sourced<String>) -> Result<(), SettingsError> {
    let value = url.value.trim();
    let lower = value.to_ascii_lowercase();
    if value.is_empty() || lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(());
    }
    let suggestion = match value.split_once("://") {
        Some((_, rest)) => format!("http://{rest}"),
        None => format!("http://{value}"),
    };
    Err(SettingsError::BadBaseUrl {
        url: value.to_owned(),
        origin: url.origin.to_string(),
        suggestion,
    })
}

fn apply_flags(draft: &mut Draft, overrides: &Overrides) {
    let s = &mut draft.settings;
    if let Some(provider) = overrides.provider {
        draft.provider = Some(sourced(provider, Origin::Flag("--provider")));
    }
    if let Some(model) = &overrides.model {
        draft.model = Some(sourced(model.clone(), Origin::Flag("--model")));
    }
    if let Some(url) = &overrides.base_url {
        draft.base_url = Some(sourced(url.clone(), Origin::Flag("--base-url")));
    }
    if let Some(n) = overrides.max_output_tokens {
        s.max_output_tokens = Some(sourced(n, Origin::Flag("--max-output-tokens")));
    }
    for header in &overrides.headers {
        set_header(&mut s.headers, header, &Origin::Flag("--header"));
    }
    if let Some(mode) = overrides.mode {
        s.mode = sourced(mode, Origin::Flag("--mode"));
    }
    s.allow
        .extend(overrides.allow.iter().map(|r| rule(r, Source::Flag)));
    s.deny
        .extend(overrides.deny.iter().map(|r| rule(r, Source::Flag)));
    s.rules.extend(listed(
        RuleKind::Allow,
        overrides.allow.iter(),
        &Origin::Flag("--allow"),
    ));
    s.rules.extend(listed(
        RuleKind::Deny,
        overrides.deny.iter(),
        &Origin::Flag("--deny"),
    ));
    if let Some(on) = overrides.fail_on_deny {
        s.fail_on_deny = sourced(on, Origin::Flag("--fail-on-deny"));
    }
    if let Some(edits) = overrides.edits {
        s.files.edits = sourced(edits, Origin::Flag("--allow-edits"));
    }
    if let Some(timeout) = overrides.timeout {
        s.timeout = sourced(timeout, Origin::Flag("--timeout"));
    }
    if let Some(n) = overrides.max_output_chars {
        s.max_output_chars = sourced(n, Origin::Flag("--max-output-chars"));
    }
    if let Some(n) = overrides.max_turns {
        s.max_turns = sourced(n, Origin::Flag("--max-turns"));
    }
    if let Some(mode) = overrides.sandbox_mode {
        s.sandbox_mode = sourced(mode, Origin::Flag("--sandbox"));
    }
    if let Some(network) = overrides.network {
        s.network = sourced(network, Origin::Flag("--network"));
        if network {
            s.net.mode = sourced(NetworkMode::Full, Origin::Flag("--network"));
        }
    }
    if let Some(required) = overrides.sandbox_required {
        s.sandbox_required = sourced(required, Origin::Flag("--sandbox-required"));
    }
}

/// Sets one extra header, replacing an earlier one of the same name (any case).
fn set_header(
    headers: &mut Vec<Sourced<(String, String)>>,
    header: &(String, String),
    origin: &Origin,
) {
    headers.retain(|kept| !kept.value.0.eq_ignore_ascii_case(&header.0));
    headers.push(sourced(header.clone(), origin.clone()));
}

/// Resolves the model keys: an unset provider is picked from the keys present; with no key,
/// a configured model, base URL or key variable still means a real provider (Anthropic for a
/// `claude` model without a base URL, else OpenAI-compatible) — whose missing key is then an
/// error, never a silent demo — and only with nothing configured at all is it the demo. Unset
/// model, URL and key variable follow the provider.
fn finish(draft: Draft, env: &dyn Fn(&str) -> Option<String>) -> Settings {
    let has = |var: &str| env(var).is_some_and(|v| !v.is_empty());
    let configured = draft
        .model
        .as_ref()
        .or(draft.base_url.as_ref())
        .or(draft.api_key_env.as_ref())
        .is_some()
        || has("OPENAI_BASE_URL");
    let claude = draft
        .model
        .as_ref()
        .is_some_and(|m| m.value.to_ascii_lowercase().starts_with("claude"));
    let provider = draft.provider.unwrap_or_else(|| {
        if has("OPENAI_API_KEY") {
            sourced(
                ProviderKind::OpenAi,
                Origin::Default("OPENAI_API_KEY is set"),
            )
        } else if has("ANTHROPIC_API_KEY") {
            sourced(
                ProviderKind::Anthropic,
                Origin::Default("ANTHROPIC_API_KEY is set"),
            )
        } else if claude && draft.base_url.is_none() {
            sourced(
                ProviderKind::Anthropic,
                Origin::Default("a claude model is configured"),
            )
        } else if configured {
            sourced(
                ProviderKind::OpenAi,
                Origin::Default("a model or base URL is configured"),
            )
        } else {
            sourced(
                ProviderKind::Demo,
                Origin::Default("no provider configured and no API key set"),
            )
        }
    });
    let kind = provider.value;
    let mut settings = draft.settings;
    settings.model = draft
        .model
        .unwrap_or_else(|| sourced(kind.default_model().to_owned(), Origin::Default("")));
    // The environment beats the files, the flag beats the environment; `OPENAI_BASE_URL`
    // is the OpenAI provider's only.
    let env_url =
        env("OPENAI_BASE_URL").filter(|url| kind == ProviderKind::OpenAi && !url.is_empty());
    settings.base_url = match (draft.base_url, env_url) {
        (Some(flag), _) if matches!(flag.origin, Origin::Flag(_)) => flag,
        (_, Some(url)) => sourced(url, Origin::Env("OPENAI_BASE_URL")),
        (Some(file), None) => file,
        (None, None) => sourced(kind.default_base_url().to_owned(), Origin::Default("")),
    };
    settings.api_key_env = draft
        .api_key_env
        .unwrap_or_else(|| sourced(kind.default_key_env().to_owned(), Origin::Default("")));
    settings.api_key = Some(settings.api_key_env.value.as_str())
        .filter(|var| !var.is_empty())
        .and_then(env)
        .filter(|key| !key.is_empty());
    settings.provider = provider;
    settings
}

#[cfg(test)]
mod tests;
