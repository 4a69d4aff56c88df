//! Settings being assembled: the built-in defaults, each layer's entries applied in turn,
//! and the model keys resolved once every layer is in ([`finish`]).

use std::path::PathBuf;
use std::time::Duration;

use super::DEFAULT_MAX_TURNS;
use super::file::{Entry, Value};
use super::merged::{FileSettings, ListedRule, ModelFacts, RuleKind, Settings, SnapshotSettings};
use super::network::NetValue;
use super::origin::{Origin, Sourced, sourced};
use crate::model::ProviderKind;
use crate::net::NetworkMode;
use crate::policy::{Mode, ReadOnly, Rule, Source};
use crate::sandbox::SandboxMode;

/// Settings being assembled: model keys stay optional until the provider is known.
pub(super) struct Draft {
    pub(super) provider: Option<Sourced<ProviderKind>>,
    pub(super) model: Option<Sourced<String>>,
    pub(super) base_url: Option<Sourced<String>>,
    pub(super) api_key_env: Option<Sourced<String>>,
    pub(super) settings: Settings,
}

impl Draft {
    pub(super) fn apply(&mut self, entry: &Entry, origin: Origin, source: Source) {
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
            Value::Allow(rules, hosts) => {
                s.allow.extend(rules.iter().map(|r| rule(r, source)));
                s.net.rule_hosts.extend(
                    hosts
                        .iter()
                        .map(|entry| sourced(entry.clone(), origin.clone())),
                );
                s.rules
                    .extend(listed(RuleKind::Allow, rules.iter(), &origin));
            }
            Value::Deny(rules) => {
                s.deny.extend(rules.iter().map(|r| rule(r, source)));
                s.rules
                    .extend(listed(RuleKind::Deny, rules.iter(), &origin));
            }
            Value::FailOnDeny(on) => s.fail_on_deny = sourced(*on, origin),
            Value::Notify(notify) => s.notify = sourced(*notify, origin),
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

pub(super) fn listed<'a>(
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

pub(super) fn rule(prefix: &str, source: Source) -> Rule {
    Rule {
        prefix: prefix.trim().to_owned(),
        source,
    }
}

impl Draft {
    /// The built-in defaults, before any layer.
    pub(super) fn defaults(user_file: PathBuf) -> Draft {
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
                notify: sourced(crate::settings::Notify::default(), default("")),
                files: FileSettings::default(),
                timeout: sourced(crate::exec::DEFAULT_TIMEOUT, default("")),
                max_output_chars: sourced(crate::exec::DEFAULT_MAX_OUTPUT_CHARS, default("")),
                max_turns: sourced(DEFAULT_MAX_TURNS, default("")),
                inspect_cpu_secs: sourced(crate::sandbox::DEFAULT_INSPECT_CPU_SECS, default("")),
                inspect_memory_mb: sourced(crate::sandbox::DEFAULT_INSPECT_MEMORY_MB, default("")),
                shell: sourced(crate::exec::default_shell().to_owned(), default("")),
                sandbox_mode: sourced(SandboxMode::default(), default("")),
                network: sourced(false, default("")),
                net: super::NetworkSettings::built_in(),
                writable: Vec::new(),
                sandbox_required: sourced(false, default("")),
                snapshots: SnapshotSettings::built_in(),
                user_file,
                project_file: None,
                mcp_tables: false,
                warnings: Vec::new(),
            },
        }
    }
}

/// Sets one extra header, replacing an earlier one of the same name (any case).
pub(super) fn set_header(
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
pub(super) fn finish(draft: Draft, env: &dyn Fn(&str) -> Option<String>) -> Settings {
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
