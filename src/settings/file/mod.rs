//! Reading one settings file into a typed layer: every known key checked for
//! its type, every unknown key reported with its line (and a suggestion), every
//! error naming file, line and key. Parsing keeps spans (toml_edit) so messages
//! can point at the line.

mod reader;
mod schema;
mod suggest;
mod values;

use std::collections::BTreeMap;
use std::path::Path;

use toml_edit::Document;

use super::SettingsError;
use crate::model::ProviderKind;
use crate::policy::{Mode, ReadOnly};
use crate::sandbox::SandboxMode;

use reader::{Reader, line_of};
pub use values::parse_mode;

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
    /// Prefixes, and the hosts some of them open (rules written as inline tables).
    Allow(Vec<String>, Vec<crate::settings::network::RuleHosts>),
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
    Notify(crate::settings::Notify),
    FileDeny(Vec<String>),
    AskRead(Vec<String>),
    Edits(crate::policy::files::Edits),
    SnapshotsEnabled(bool),
    KeepDays(u32),
    MaxFileMb(u64),
    TimeBudgetMs(u64),
    /// A `[network]` value.
    Net(crate::settings::network::NetValue),
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
    /// The file has an `[mcp]` table (at the top or in a profile).
    pub mcp: bool,
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
                    value: Value::Allow(vec!["git status".into()], Vec::new()),
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
    fn mcp_tables_are_left_to_the_mcp_module() {
        let layer = parse_ok(
            "[mcp.servers.fs]\ncommand = \"x\"\n[profiles.p.mcp.servers.g]\nurl = \"http://h\"\n\
             [projects.\"/w\".mcp.approved]\nfs = \"0123\"\n",
        );
        assert!(layer.warnings.is_empty(), "{:?}", layer.warnings);
        assert!(layer.entries.is_empty());
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
            "[projects.\"/w\".permissions.commands]\nallow = [\"cargo test\"]\ndeny = [\"git push\"]\n[projects.\"/w\".limits]\nmax_turns = 3\n[ci]\nfail_on_deny = true\n\
             [projects.\"/w\".network]\nallow = [\"a.test\"]\nmode = \"full\"\n",
        );
        assert_eq!(
            layer.projects["/w"],
            vec![
                Entry {
                    value: Value::Allow(vec!["cargo test".into()], Vec::new()),
                    key: "permissions.commands.allow",
                    line: 2
                },
                Entry {
                    value: Value::Deny(vec!["git push".into()]),
                    key: "permissions.commands.deny",
                    line: 3
                },
                Entry {
                    value: Value::Net(crate::settings::network::NetValue::Allow(vec![
                        "a.test".into()
                    ])),
                    key: "network.allow",
                    line: 9
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
                "settings.toml:5: `limits.max_turns` in [projects.\"/w\"] is ignored: a project table holds only [permissions.commands] allow and deny, and [network] allow",
                "settings.toml:10: `network.mode` in [projects.\"/w\"] is ignored: a project table holds only [permissions.commands] allow and deny, and [network] allow"
            ]
        );
    }
}
