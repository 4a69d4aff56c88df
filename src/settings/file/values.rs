//! Typing one key's value: what each kind of key takes, and what it must be when it is not.

use toml_edit::Item;

use super::Value;
use super::reader::Reader;
use super::schema::{FilesKey, Kind, SnapshotKey};
use crate::policy::{Mode, ReadOnly};
use crate::sandbox::SandboxMode;
use crate::settings::SettingsError;

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

impl Reader<'_> {
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
    pub(super) fn value(
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
            Kind::Notify => {
                let value = text(item).ok_or_else(|| wrong("a string"))?;
                Value::Notify(
                    crate::settings::Notify::parse(&value)
                        .ok_or_else(|| wrong("one of \"bell\", \"desktop\", \"off\""))?,
                )
            }
            Kind::Snapshot(key) => snapshot_value(item, key, &wrong)?,
            Kind::Net(key) => Value::Net(
                crate::settings::network::read_value(key, item).map_err(|what| wrong(&what))?,
            ),
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
                let mut hosts = Vec::new();
                for value in array {
                    // An allow rule with hosts of its own: `{ command = "…", net = […] }`.
                    if let (Kind::Allow, Some(table)) = (kind, value.as_inline_table()) {
                        let entry = crate::settings::network::read_rule_hosts(table)
                            .map_err(|why| wrong(&why))?;
                        rules.push(entry.command.clone());
                        hosts.push(entry);
                        continue;
                    }
                    let rule = value.as_str().ok_or_else(|| wrong("an array of strings"))?;
                    if rule.trim().is_empty() {
                        return Err(wrong("an array of non-empty strings"));
                    }
                    rules.push(rule.to_owned());
                }
                if matches!(kind, Kind::Allow) {
                    Value::Allow(rules, hosts)
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
