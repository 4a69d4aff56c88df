//! The walk over a settings file's tables: each known key's value typed (`values.rs`),
//! profiles and per-workspace tables read into their own entries, each unknown key reported
//! with its line.

use std::path::Path;

use toml_edit::{Item, Table};

use super::schema::{SCHEMA, TABLES, child_of};
use super::suggest::closest;
use super::{Entry, Layer, Value};
use crate::settings::SettingsError;

/// `[mcp]` at the top of a file, of a profile and of a project table: the MCP servers and their
/// approvals, which the MCP module reads (it sits above settings).
const MCP_TABLE: &str = "mcp";

pub(super) struct Reader<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
    pub(super) layer: &'a mut Layer,
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

    /// Reads `table` (the root when `prefix` is empty) into the layer.
    pub(super) fn table(&mut self, table: &Table, prefix: &str) -> Result<(), SettingsError> {
        for (key, item) in table {
            let name = if prefix.is_empty() {
                key.to_owned()
            } else {
                format!("{prefix}.{key}")
            };
            let line = self.key_line(table, key);
            if prefix.is_empty() && key == MCP_TABLE {
                // Read, checked and reported by the MCP module, which sits above settings.
                self.layer.mcp = true;
            } else if prefix.is_empty() && key == "profiles" {
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
            self.layer.mcp |= profile.contains_key(MCP_TABLE);
            for (key, item) in profile.iter().filter(|(key, _)| *key != MCP_TABLE) {
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
                // Command rules, and hosts a person allowed for this project at the prompt.
                if matches!(
                    entry.value,
                    Value::Allow(..)
                        | Value::Deny(_)
                        | Value::Net(crate::settings::network::NetValue::Allow(_))
                ) {
                    kept.push(entry);
                } else {
                    self.layer.warnings.push(format!(
                        "{}:{}: `{}` in [projects.\"{workspace}\"] is ignored: a project table \
                         holds only [permissions.commands] allow and deny, and [network] allow",
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

    pub(super) fn invalid(&self, line: usize, message: String) -> SettingsError {
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

/// 1-based line of byte offset `at` in `text`.
pub(super) fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .split(|b| *b == b'\n')
        .count()
}
