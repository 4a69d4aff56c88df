//! Reading one settings file into a typed layer: every known key checked for
//! its type, every unknown key reported with its line (and a suggestion), every
//! error naming file, line and key. Parsing keeps spans (toml_edit) so messages
//! can point at the line.

use std::collections::BTreeMap;
use std::path::Path;

use toml_edit::{Document, Item, Table};

use super::SettingsError;
use super::network::NetKey;
use crate::model::ProviderKind;
use crate::policy::{Mode, ReadOnly};
use crate::sandbox::SandboxMode;

/// A typed value for one known key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Provider(ProviderKind),
    Model(String),
    BaseUrl(String),
    ApiKeyEnv(String),
    ApiKeyHeader(String),
    Headers(Vec<(String, String)>),
    MaxOutputTokens(u32),
    ContextWindow(u64),
    IdleTimeoutSecs(u64),
    PriceIn(f64),
    PriceOut(f64),
    Mode(Mode),
    ReadOnly(ReadOnly),
    Allow(Vec<String>),
    Deny(Vec<String>),
    TimeoutSecs(u64),
    MaxOutputChars(usize),
    MaxTurns(u32),
    InspectCpuSecs(u64),
    InspectMemoryMb(u64),
    Shell(String),
    SandboxMode(SandboxMode),
    Network(bool),
    Writable(Vec<String>),
    SandboxRequired(bool),
    FailOnDeny(bool),
    FileDeny(Vec<String>),
    AskRead(Vec<String>),
    Edits(crate::policy::files::Edits),
    SnapshotsEnabled(bool),
    KeepDays(u32),
    MaxFileMb(u64),
    TimeBudgetMs(u64),
    /// A `[network]` value.
    Net(super::network::NetValue),
}

/// A value and the line it was written on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub value: Value,
    pub key: &'static str,
    pub line: usize,
}

/// One file's settings: its top-level entries, its profiles, and its per-workspace
/// rules (`[projects."<workspace>".permissions.commands]`, keyed by the path as written).
#[derive(Debug, Default)]
pub(crate) struct Layer {
    pub entries: Vec<Entry>,
    pub profiles: BTreeMap<String, Vec<Entry>>,
    pub projects: BTreeMap<String, Vec<Entry>>,
    pub warnings: Vec<String>,
}

/// Kinds of value a key takes.
#[derive(Clone, Copy)]
enum Kind {
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
enum FilesKey {
    Deny,
    AskRead,
    Edits,
}

/// The keys of `[snapshots]`.
#[derive(Clone, Copy)]
enum SnapshotKey {
    Enabled,
    KeepDays,
    MaxFileMb,
    TimeBudgetMs,
}

/// The schema: (table, key, kind, dotted name). Profiles take the keys flat.
const SCHEMA: &[(&str, &str, Kind, &str)] = &[
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
];

/// Tables that only group other tables.
const TABLES: &[&str] = &[
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

/// `max_output_tokens`, `context_window`, `idle_timeout_secs`, `price_in` or `price_out`; what
/// it must be when it
/// is not.
fn model_fact(item: &Item, kind: Kind) -> Result<Value, &'static str> {
    #[expect(clippy::cast_precision_loss, reason = "prices are small numbers")]
    let number = item
        .as_float()
        .or_else(|| item.as_integer().map(|n| n as f64))
        .filter(|p| p.is_finite() && *p >= 0.0);
    let price = "a number (dollars per million tokens)";
    match kind {
        Kind::MaxOutputTokens => positive(item)
            .and_then(|n| u32::try_from(n).ok())
            .map(Value::MaxOutputTokens)
            .ok_or("a positive integer"),
        Kind::ContextWindow => positive(item)
            .map(Value::ContextWindow)
            .ok_or("a positive integer (tokens)"),
        Kind::IdleTimeoutSecs => positive(item)
            .map(Value::IdleTimeoutSecs)
            .ok_or("a positive integer (seconds)"),
        Kind::PriceIn => number.map(Value::PriceIn).ok_or(price),
        Kind::PriceOut => number.map(Value::PriceOut).ok_or(price),
        _ => Err("a known key"),
    }
}

/// An integer above zero.
fn positive(item: &Item) -> Option<u64> {
    item.as_integer()
        .and_then(|n| u64::try_from(n).ok())
        .filter(|n| *n > 0)
}

/// A `[snapshots]` value: `enabled` a boolean, the bounds positive integers.
fn snapshot_value(
    item: &Item,
    key: SnapshotKey,
    wrong: &dyn Fn(&str) -> SettingsError,
) -> Result<Value, SettingsError> {
    if matches!(key, SnapshotKey::Enabled) {
        let on = item.as_bool().ok_or_else(|| wrong("true or false"))?;
        return Ok(Value::SnapshotsEnabled(on));
    }
    let n = item
        .as_integer()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| wrong("a positive integer"))?;
    Ok(match key {
        SnapshotKey::KeepDays => Value::KeepDays(n),
        SnapshotKey::MaxFileMb => Value::MaxFileMb(u64::from(n)),
        SnapshotKey::Enabled | SnapshotKey::TimeBudgetMs => Value::TimeBudgetMs(u64::from(n)),
    })
}

/// Reads `path`; a missing file is an empty layer.
pub(crate) fn read(path: &Path) -> Result<Layer, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Layer::default());
        }
        Err(error) => {
            return Err(SettingsError::Read {
                path: path.to_path_buf(),
                message: error.to_string(),
            });
        }
    };
    parse(path, &text)
}

/// Parses settings text that came from `path`.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Layer, SettingsError> {
    let doc = Document::parse(text).map_err(|error| {
        let line = error.span().map_or(1, |span| line_of(text, span.start));
        let message = error
            .message()
            .lines()
            .next()
            .unwrap_or("invalid TOML")
            .to_owned();
        SettingsError::Invalid {
            path: path.to_path_buf(),
            line,
            message,
        }
    })?;
    let mut layer = Layer::default();
    let mut reader = Reader {
        path,
        text,
        layer: &mut layer,
    };
    reader.table(doc.as_table(), "")?;
    Ok(layer)
}

struct Reader<'a> {
    path: &'a Path,
    text: &'a str,
    layer: &'a mut Layer,
}

impl Reader<'_> {
    fn line(&self, item: &Item) -> usize {
        item.span().map_or(1, |span| line_of(self.text, span.start))
    }

    fn key_line(&self, table: &Table, key: &str) -> usize {
        table.key(key).and_then(toml_edit::Key::span).map_or_else(
            || table.get(key).map_or(1, |item| self.line(item)),
            |span| line_of(self.text, span.start),
        )
    }

    fn table(&mut self, table: &Table, prefix: &str) -> Result<(), SettingsError> {
        for (key, item) in table {
            let name = if prefix.is_empty() {
                key.to_owned()
            } else {
                format!("{prefix}.{key}")
            };
            let line = self.key_line(table, key);
            if prefix.is_empty() && key == "profiles" {
                self.profiles(item, line)?;
            } else if prefix.is_empty() && key == "projects" {
                self.projects(item, line)?;
            } else if let Some(&(_, _, kind, dotted)) =
                SCHEMA.iter().find(|(t, k, ..)| *t == prefix && *k == key)
            {
                let value = self.value(item, kind, dotted, line)?;
                self.layer.entries.push(Entry {
                    value,
                    key: dotted,
                    line,
                });
            } else if TABLES.contains(&name.as_str()) {
                let owned;
                let table = match item {
                    Item::Table(table) => table,
                    Item::Value(toml_edit::Value::InlineTable(inline)) => {
                        owned = inline.clone().into_table();
                        &owned
                    }
                    _ => return Err(self.invalid(line, format!("`{name}` must be a table"))),
                };
                self.table(table, &name)?;
            } else {
                let here: Vec<&str> = SCHEMA
                    .iter()
                    .filter(|(t, ..)| *t == prefix)
                    .map(|(_, k, ..)| *k)
                    .chain(TABLES.iter().filter_map(|t| child_of(prefix, t)))
                    .collect();
                self.warn_unknown(
                    line,
                    key,
                    if prefix.is_empty() {
                        None
                    } else {
                        Some(prefix)
                    },
                    &here,
                );
            }
        }
        Ok(())
    }

    fn profiles(&mut self, item: &Item, line: usize) -> Result<(), SettingsError> {
        let Some(profiles) = item.as_table() else {
            return Err(self.invalid(line, "`profiles` must be a table of [profiles.NAME]".into()));
        };
        for (name, profile) in profiles {
            let line = self.key_line(profiles, name);
            let Some(profile) = profile.as_table() else {
                return Err(self.invalid(line, format!("`profiles.{name}` must be a table")));
            };
            let mut entries = Vec::new();
            for (key, item) in profile {
                let line = self.key_line(profile, key);
                match SCHEMA.iter().find(|(_, k, ..)| *k == key) {
                    Some(&(_, _, kind, dotted)) => {
                        let value =
                            self.value(item, kind, &format!("profiles.{name}.{key}"), line)?;
                        entries.push(Entry {
                            value,
                            key: dotted,
                            line,
                        });
                    }
                    None => {
                        let keys: Vec<&str> = SCHEMA.iter().map(|(_, k, ..)| *k).collect();
                        self.warn_unknown(line, key, Some(&format!("profiles.{name}")), &keys);
                    }
                }
            }
            self.layer.profiles.insert(name.to_owned(), entries);
        }
        Ok(())
    }

    /// `[projects."<workspace>".permissions.commands]`: allow and deny rules that apply
    /// only in that workspace; anything else there is reported and ignored.
    fn projects(&mut self, item: &Item, line: usize) -> Result<(), SettingsError> {
        let Some(projects) = item.as_table_like() else {
            return Err(self.invalid(
                line,
                "`projects` must be a table of [projects.\"/path/to/workspace\"]".into(),
            ));
        };
        for (workspace, project) in projects.iter() {
            let line = projects
                .key(workspace)
                .and_then(toml_edit::Key::span)
                .map_or(line, |span| line_of(self.text, span.start));
            let owned;
            let table = match project {
                Item::Table(table) => table,
                Item::Value(toml_edit::Value::InlineTable(inline)) => {
                    owned = inline.clone().into_table();
                    &owned
                }
                _ => {
                    return Err(
                        self.invalid(line, format!("`projects.\"{workspace}\"` must be a table"))
                    );
                }
            };
            let mut layer = Layer::default();
            Reader {
                path: self.path,
                text: self.text,
                layer: &mut layer,
            }
            .table(table, "")?;
            let mut kept = Vec::new();
            for entry in layer.entries {
                if matches!(entry.value, Value::Allow(_) | Value::Deny(_)) {
                    kept.push(entry);
                } else {
                    self.layer.warnings.push(format!(
                        "{}:{}: `{}` in [projects.\"{workspace}\"] is ignored: a project table \
                         holds only [permissions.commands] allow and deny",
                        self.path.display(),
                        entry.line,
                        entry.key
                    ));
                }
            }
            if !layer.profiles.is_empty() || !layer.projects.is_empty() {
                self.layer.warnings.push(format!(
                    "{}:{line}: tables inside [projects.\"{workspace}\"] are ignored",
                    self.path.display()
                ));
            }
            self.layer.warnings.extend(layer.warnings);
            self.layer.projects.insert(workspace.to_owned(), kept);
        }
        Ok(())
    }

    /// `api_key_header = "NAME"`, a header name.
    fn api_key_header(&self, item: &Item, name: &str, line: usize) -> Result<Value, SettingsError> {
        match item.as_str() {
            Some(header) if crate::model::valid_header(header, "x") => {
                Ok(Value::ApiKeyHeader(header.to_owned()))
            }
            _ => Err(self.invalid(
                line,
                format!("`{name}` must be a header name (letters, digits and `-`)"),
            )),
        }
    }

    /// `headers = { NAME = "VALUE", … }`, each a header that can be sent.
    fn headers(&self, item: &Item, name: &str, line: usize) -> Result<Value, SettingsError> {
        let wrong = || {
            self.invalid(
                line,
                format!("`{name}` must be a table of header names to strings"),
            )
        };
        let table = item.as_table_like().ok_or_else(wrong)?;
        let mut headers = Vec::new();
        for (header, value) in table.iter() {
            let value = value.as_str().ok_or_else(wrong)?;
            if !crate::model::valid_header(header, value) {
                return Err(self.invalid(
                    line,
                    format!(
                        "`{header}` in `{name}` is not a valid HTTP header (name: letters, \
                         digits and `-`; value: no control characters)"
                    ),
                ));
            }
            headers.push((header.to_owned(), value.to_owned()));
        }
        Ok(Value::Headers(headers))
    }

    #[allow(clippy::too_many_lines)] // one arm per kind of value: a table, not logic
    fn value(
        &self,
        item: &Item,
        kind: Kind,
        name: &str,
        line: usize,
    ) -> Result<Value, SettingsError> {
        let text = |item: &Item| item.as_str().map(str::to_owned);
        let wrong = |expected: &str| self.invalid(line, format!("`{name}` must be {expected}"));
        let flag = || item.as_bool().ok_or_else(|| wrong("true or false"));
        Ok(match kind {
            Kind::Provider => {
                let value = text(item).ok_or_else(|| wrong("a string"))?;
                Value::Provider(
                    value.parse().map_err(|_| {
                        wrong("one of \"openai\", \"anthropic\", \"ollama\", \"demo\"")
                    })?,
                )
            }
            Kind::Mode => {
                let value = text(item).ok_or_else(|| wrong("a string"))?;
                Value::Mode(parse_mode(&value).ok_or_else(|| {
                    wrong("one of \"ask\", \"auto\", \"deny\", \"off\", \"allow-all\"")
                })?)
            }
            Kind::ReadOnly => {
                let value = text(item).ok_or_else(|| wrong("a string"))?;
                Value::ReadOnly(
                    ReadOnly::parse(&value)
                        .ok_or_else(|| wrong("one of \"inspect\", \"strict\""))?,
                )
            }
            Kind::Model => Value::Model(text(item).ok_or_else(|| wrong("a string"))?),
            Kind::BaseUrl => Value::BaseUrl(text(item).ok_or_else(|| wrong("a string"))?),
            Kind::ApiKeyEnv => Value::ApiKeyEnv(text(item).ok_or_else(|| wrong("a string"))?),
            Kind::ApiKeyHeader => self.api_key_header(item, name, line)?,
            Kind::Headers => self.headers(item, name, line)?,
            Kind::MaxOutputTokens
            | Kind::ContextWindow
            | Kind::IdleTimeoutSecs
            | Kind::PriceIn
            | Kind::PriceOut => model_fact(item, kind).map_err(wrong)?,
            Kind::Shell => Value::Shell(text(item).ok_or_else(|| wrong("a string"))?),
            Kind::SandboxMode => {
                let value = text(item).ok_or_else(|| wrong("a string"))?;
                Value::SandboxMode(
                    SandboxMode::parse(&value).ok_or_else(|| {
                        wrong("one of \"workspace-write\", \"read-only\", \"off\"")
                    })?,
                )
            }
            Kind::Network => Value::Network(item.as_bool().ok_or_else(|| wrong("true or false"))?),
            Kind::SandboxRequired => Value::SandboxRequired(flag()?),
            Kind::FailOnDeny => Value::FailOnDeny(flag()?),
            Kind::Snapshot(key) => snapshot_value(item, key, &wrong)?,
            Kind::Net(key) => {
                Value::Net(super::network::read_value(key, item).map_err(|what| wrong(&what))?)
            }
            Kind::Writable => {
                let array = item.as_array().ok_or_else(|| wrong("an array of paths"))?;
                let mut paths = Vec::new();
                for value in array {
                    let path = value.as_str().ok_or_else(|| wrong("an array of paths"))?;
                    if path.trim().is_empty() {
                        return Err(wrong("an array of non-empty paths"));
                    }
                    paths.push(path.to_owned());
                }
                Value::Writable(paths)
            }
            Kind::Files(key) => files_value(item, key).map_err(|e| wrong(&e))?,
            Kind::Allow | Kind::Deny => {
                let array = item
                    .as_array()
                    .ok_or_else(|| wrong("an array of strings"))?;
                let mut rules = Vec::new();
                for value in array {
                    let rule = value.as_str().ok_or_else(|| wrong("an array of strings"))?;
                    if rule.trim().is_empty() {
                        return Err(wrong("an array of non-empty strings"));
                    }
                    rules.push(rule.to_owned());
                }
                if matches!(kind, Kind::Allow) {
                    Value::Allow(rules)
                } else {
                    Value::Deny(rules)
                }
            }
            Kind::TimeoutSecs
            | Kind::MaxOutputChars
            | Kind::MaxTurns
            | Kind::InspectCpuSecs
            | Kind::InspectMemoryMb => {
                let number = item.as_integer().ok_or_else(|| wrong("an integer"))?;
                let positive = |n: i64| u64::try_from(n).ok().filter(|n| *n > 0);
                match kind {
                    Kind::TimeoutSecs => Value::TimeoutSecs(
                        positive(number).ok_or_else(|| wrong("a positive integer"))?,
                    ),
                    Kind::InspectCpuSecs => Value::InspectCpuSecs(
                        positive(number).ok_or_else(|| wrong("a positive integer"))?,
                    ),
                    Kind::InspectMemoryMb => Value::InspectMemoryMb(
                        positive(number).ok_or_else(|| wrong("a positive integer"))?,
                    ),
                    Kind::MaxTurns => Value::MaxTurns(
                        positive(number)
                            .and_then(|n| u32::try_from(n).ok())
                            .ok_or_else(|| wrong("a positive integer"))?,
                    ),
                    _ => Value::MaxOutputChars(
                        usize::try_from(number).map_err(|_| wrong("a non-negative integer"))?,
                    ),
                }
            }
        })
    }

    fn invalid(&self, line: usize, message: String) -> SettingsError {
        SettingsError::Invalid {
            path: self.path.to_path_buf(),
            line,
            message,
        }
    }

    fn warn_unknown(&mut self, line: usize, key: &str, table: Option<&str>, known: &[&str]) {
        let place = table.map_or_else(String::new, |t| format!(" in [{t}]"));
        let hint =
            closest(key, known).map_or_else(String::new, |k| format!(" (did you mean `{k}`?)"));
        self.layer.warnings.push(format!(
            "{}:{line}: unknown key `{key}`{place} is ignored{hint}",
            self.path.display()
        ));
    }
}

/// A `[permissions.files]` value, or what was expected instead.
fn files_value(item: &Item, key: FilesKey) -> Result<Value, String> {
    Ok(match key {
        FilesKey::Edits => Value::Edits(
            item.as_str()
                .and_then(crate::policy::files::Edits::parse)
                .ok_or_else(|| "one of \"ask\", \"allow\", \"deny\"".to_owned())?,
        ),
        FilesKey::Deny => Value::FileDeny(globs(item)?),
        FilesKey::AskRead => Value::AskRead(globs(item)?),
    })
}

/// An array of valid globs, or what was expected instead.
fn globs(item: &Item) -> Result<Vec<String>, String> {
    let array = item
        .as_array()
        .ok_or_else(|| "an array of globs".to_owned())?;
    let mut globs = Vec::new();
    for value in array {
        let pattern = value
            .as_str()
            .ok_or_else(|| "an array of globs".to_owned())?;
        if pattern.trim().is_empty() {
            return Err("an array of non-empty globs".to_owned());
        }
        globset::Glob::new(pattern)
            .map_err(|error| format!("an array of globs (`{pattern}`: {error})"))?;
        globs.push(pattern.to_owned());
    }
    Ok(globs)
}

/// `permissions` is a child table of the root (`""`); `permissions.commands` of `permissions`.
fn child_of<'a>(prefix: &str, table: &'a str) -> Option<&'a str> {
    let rest = if prefix.is_empty() {
        table
    } else {
        table.strip_prefix(prefix)?.strip_prefix('.')?
    };
    (!rest.contains('.')).then_some(rest)
}

/// Parses a mode name as written in settings and flags.
#[must_use]
pub fn parse_mode(value: &str) -> Option<Mode> {
    match value {
        "ask" => Some(Mode::Ask),
        "auto" => Some(Mode::Auto),
        "deny" => Some(Mode::Deny),
        "off" => Some(Mode::Off),
        "allow-all" => Some(Mode::AllowAll),
        _ => None,
    }
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .split(|b| *b == b'\n')
        .count()
}

/// The known key closest to `key` by edit distance, when it is close.
fn closest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (edit_distance(key, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j] + 1).min(row[j + 1] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse_ok(text: &str) -> Layer {
        parse(Path::new("settings.toml"), text).unwrap()
    }

    fn parse_err(text: &str) -> String {
        parse(Path::new("settings.toml"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn known_keys_are_read_with_their_lines() {
        let layer = parse_ok(
            "# comment\n[model]\nprovider = \"openai\"\n\n[permissions.commands]\nallow = [\"git status\"]\n[limits]\nmax_turns = 7\n",
        );
        assert_eq!(
            layer.entries,
            vec![
                Entry {
                    value: Value::Provider(ProviderKind::OpenAi),
                    key: "model.provider",
                    line: 3
                },
                Entry {
                    value: Value::Allow(vec!["git status".into()]),
                    key: "permissions.commands.allow",
                    line: 6
                },
                Entry {
                    value: Value::MaxTurns(7),
                    key: "limits.max_turns",
                    line: 8
                },
            ]
        );
        assert!(layer.warnings.is_empty());
    }

    #[test]
    fn unknown_keys_warn_with_a_suggestion() {
        let layer = parse_ok("[permissions.commands]\nalow = [\"ls\"]\n[limitz]\nx = 1\n");
        assert_eq!(
            layer.warnings,
            vec![
                "settings.toml:2: unknown key `alow` in [permissions.commands] is ignored (did you mean `allow`?)",
                "settings.toml:3: unknown key `limitz` is ignored (did you mean `limits`?)",
            ]
        );
    }

    #[test]
    fn wrong_types_name_file_line_and_key() {
        assert_eq!(
            parse_err("[limits]\n\ntimeout_secs = \"ten\"\n"),
            "settings.toml:3: `limits.timeout_secs` must be an integer: fix the settings file"
        );
        assert_eq!(
            parse_err("[permissions]\nmode = \"yolo\"\n"),
            "settings.toml:2: `permissions.mode` must be one of \"ask\", \"auto\", \"deny\", \"off\", \"allow-all\": fix the settings file"
        );
        assert_eq!(
            parse_err("[permissions.commands]\ndeny = [1]\n"),
            "settings.toml:2: `permissions.commands.deny` must be an array of strings: fix the settings file"
        );
        assert_eq!(
            parse_err("[limits]\nmax_turns = 0\n"),
            "settings.toml:2: `limits.max_turns` must be a positive integer: fix the settings file"
        );
    }

    #[test]
    fn malformed_toml_names_the_line() {
        let message = parse_err("[model]\nprovider = \"openai\"\nmodel = \n");
        assert!(message.starts_with("settings.toml:3: "), "{message}");
    }

    #[test]
    fn profiles_take_flat_keys() {
        let layer = parse_ok("[profiles.fast]\nmodel = \"m\"\nmax_turns = 200\nbogus = 1\n");
        assert_eq!(
            layer.profiles["fast"],
            vec![
                Entry {
                    value: Value::Model("m".into()),
                    key: "model.model",
                    line: 2
                },
                Entry {
                    value: Value::MaxTurns(200),
                    key: "limits.max_turns",
                    line: 3
                },
            ]
        );
        assert_eq!(layer.warnings.len(), 1);
    }

    #[test]
    fn project_tables_keep_their_rules_and_report_the_rest() {
        let layer = parse_ok(
            "[projects.\"/w\".permissions.commands]\nallow = [\"cargo test\"]\ndeny = [\"git push\"]\n[projects.\"/w\".limits]\nmax_turns = 3\n[ci]\nfail_on_deny = true\n",
        );
        assert_eq!(
            layer.projects["/w"],
            vec![
                Entry {
                    value: Value::Allow(vec!["cargo test".into()]),
                    key: "permissions.commands.allow",
                    line: 2
                },
                Entry {
                    value: Value::Deny(vec!["git push".into()]),
                    key: "permissions.commands.deny",
                    line: 3
                },
            ]
        );
        assert_eq!(
            layer.entries,
            vec![Entry {
                value: Value::FailOnDeny(true),
                key: "ci.fail_on_deny",
                line: 7
            }]
        );
        assert_eq!(
            layer.warnings,
            vec![
                "settings.toml:5: `limits.max_turns` in [projects.\"/w\"] is ignored: a project table holds only [permissions.commands] allow and deny"
            ]
        );
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        assert_eq!(edit_distance("alow", "allow"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(closest("zzzzzz", &["allow", "deny"]), None);
    }
}
