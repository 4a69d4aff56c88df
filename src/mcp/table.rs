//! One settings file's `[mcp.servers.NAME]` tables read and checked: every key for its type,
//! with a one-line error naming file, line and key; unknown keys are warnings. What the
//! servers are and how the layers combine is `config`'s.

use std::path::Path;
use std::time::Duration;

use toml_edit::{Document, Item, Table};

use super::server::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerConfig, ServerOrigin, Transport,
};
use crate::sandbox::SandboxMode;
use crate::settings::SettingsError;

pub(super) fn read(path: &Path) -> Result<Option<String>, SettingsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(SettingsError::Read {
            path: path.to_path_buf(),
            message: error.to_string(),
        }),
    }
}

pub(super) fn parse_doc(path: &Path, text: &str) -> Result<Document<String>, SettingsError> {
    Document::parse(text.to_owned()).map_err(|error| SettingsError::Invalid {
        path: path.to_path_buf(),
        line: error.span().map_or(1, |span| line_of(text, span.start)),
        message: "invalid TOML".to_owned(),
    })
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).unwrap_or(text).matches('\n').count() + 1
}

/// The keys of a server's table.
const KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "url",
    "bearer_token_env",
    "headers",
    "sandbox",
    "network",
    "tools",
    "startup_timeout_secs",
    "tool_timeout_secs",
];

pub(super) struct Reader<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

type Servers = (Vec<ServerConfig>, Vec<String>);

impl Reader<'_> {
    fn line(&self, table: &dyn toml_edit::TableLike, key: &str) -> usize {
        table
            .key(key)
            .and_then(toml_edit::Key::span)
            .or_else(|| table.get(key).and_then(Item::span))
            .map_or(1, |span| line_of(self.text, span.start))
    }

    fn invalid(&self, line: usize, message: String) -> SettingsError {
        SettingsError::Invalid {
            path: self.path.to_path_buf(),
            line,
            message,
        }
    }

    /// `[mcp.servers.*]` under `table` (the root or a profile), `prefix` naming it in messages.
    pub(super) fn servers(
        &self,
        table: &Table,
        prefix: &str,
        origin: &dyn Fn(usize) -> ServerOrigin,
    ) -> Result<Servers, SettingsError> {
        let mut servers = Vec::new();
        let mut warnings = Vec::new();
        let Some(mcp) = table.get("mcp") else {
            return Ok((servers, warnings));
        };
        let mcp_line = self.line(table, "mcp");
        let Some(mcp) = mcp.as_table_like() else {
            return Err(self.invalid(mcp_line, format!("`{prefix}mcp` must be a table")));
        };
        for (key, _) in mcp.iter().filter(|(key, _)| *key != "servers") {
            warnings.push(format!(
                "{}:{}: unknown key `{key}` in [{prefix}mcp] is ignored (servers go in \
                 [{prefix}mcp.servers.NAME])",
                self.path.display(),
                self.line(mcp, key)
            ));
        }
        let Some(list) = mcp.get("servers") else {
            return Ok((servers, warnings));
        };
        let Some(list) = list.as_table_like() else {
            return Err(self.invalid(
                self.line(mcp, "servers"),
                format!("`{prefix}mcp.servers` must be a table of [{prefix}mcp.servers.NAME]"),
            ));
        };
        for (name, item) in list.iter() {
            let line = self.line(list, name);
            let dotted = format!("{prefix}mcp.servers.{name}");
            if !valid_name(name) {
                return Err(self.invalid(
                    line,
                    format!(
                        "`{dotted}`: a server name is letters, digits, `-` and single `_` \
                         (at most {MAX_NAME_CHARS} characters)"
                    ),
                ));
            }
            let Some(server) = item.as_table_like() else {
                return Err(self.invalid(line, format!("`{dotted}` must be a table")));
            };
            for (key, _) in server.iter().filter(|(key, _)| !KEYS.contains(key)) {
                warnings.push(format!(
                    "{}:{}: unknown key `{key}` in [{dotted}] is ignored",
                    self.path.display(),
                    self.line(server, key)
                ));
            }
            servers.push(self.server(
                name,
                server,
                &dotted,
                (origin(line), line),
                &mut warnings,
            )?);
        }
        Ok((servers, warnings))
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one check per key of a server's table, in the table's order"
    )]
    fn server(
        &self,
        name: &str,
        table: &dyn toml_edit::TableLike,
        dotted: &str,
        (origin, line): (ServerOrigin, usize),
        warnings: &mut Vec<String>,
    ) -> Result<ServerConfig, SettingsError> {
        let proposal = matches!(origin, ServerOrigin::Project(..));
        // What a proposal may not carry is said and left out (as a project's widening keys
        // are): a cloned repository must not be able to stop the agent from running in it.
        let mut ignored = |key: &str, why: &str| {
            warnings.push(format!(
                "{}:{}: `{dotted}.{key}` is ignored: {why}",
                self.path.display(),
                self.line(table, key.split('.').next().unwrap_or(key))
            ));
        };
        let field = |key: &str| table.get(key).map(|item| (item, self.line(table, key)));
        let wrong = |key: &str, at: usize, expected: &str| {
            self.invalid(at, format!("`{dotted}.{key}` must be {expected}"))
        };
        let string = |key: &str| -> Result<Option<String>, SettingsError> {
            match field(key) {
                None => Ok(None),
                Some((item, at)) => item
                    .as_str()
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| Some(s.to_owned()))
                    .ok_or_else(|| wrong(key, at, "a non-empty string")),
            }
        };
        let strings = |key: &str| -> Result<Vec<String>, SettingsError> {
            match field(key) {
                None => Ok(Vec::new()),
                Some((item, at)) => {
                    strings(item).ok_or_else(|| wrong(key, at, "an array of strings"))
                }
            }
        };
        let pairs = |key: &str, check: &dyn Fn(&str, &str) -> bool, expected: &str| match field(key)
        {
            None => Ok(Vec::new()),
            Some((item, at)) => pairs(item, check).ok_or_else(|| wrong(key, at, expected)),
        };
        let seconds = |key: &str, default: Duration| match field(key) {
            None => Ok(default),
            Some((item, at)) => item
                .as_integer()
                .and_then(|n| u64::try_from(n).ok())
                .filter(|n| (1..=MAX_TIMEOUT_SECS).contains(n))
                .map(Duration::from_secs)
                .ok_or_else(|| {
                    wrong(
                        key,
                        at,
                        &format!("a positive integer (seconds, at most {MAX_TIMEOUT_SECS})"),
                    )
                }),
        };
        let command = string("command")?;
        let url = string("url")?;
        let transport = match (command, url) {
            (Some(command), None) => {
                for key in ["headers", "bearer_token_env"] {
                    if let Some((_, at)) = field(key) {
                        return Err(wrong(
                            key,
                            at,
                            "left out for a local server (it needs `url`)",
                        ));
                    }
                }
                Transport::Stdio {
                    command,
                    args: strings("args")?,
                }
            }
            (None, Some(url)) => {
                let lower = url.to_ascii_lowercase();
                if !(lower.starts_with("http://") || lower.starts_with("https://")) {
                    let at = self.line(table, "url");
                    return Err(wrong("url", at, "an http:// or https:// URL"));
                }
                for key in ["args", "env"] {
                    if let Some((_, at)) = field(key) {
                        return Err(wrong(
                            key,
                            at,
                            "left out for a remote server (it needs `command`)",
                        ));
                    }
                }
                let mut bearer_token_env = string("bearer_token_env")?;
                if proposal && bearer_token_env.is_some() {
                    ignored(
                        "bearer_token_env",
                        "only your own settings file can give a server a token",
                    );
                    bearer_token_env = None;
                }
                if let Some(var) = &bearer_token_env {
                    let at = self.line(table, "bearer_token_env");
                    if !valid_env_name(var) {
                        return Err(wrong(
                            "bearer_token_env",
                            at,
                            "the name of an environment variable (the token itself never goes in the file)",
                        ));
                    }
                    if MODEL_KEY_VARS.contains(&var.as_str()) {
                        return Err(self.invalid(
                            at,
                            format!(
                                "`{dotted}.bearer_token_env` names `{var}`, the model's API key: \
                                 it never goes to an MCP server"
                            ),
                        ));
                    }
                }
                Transport::Http {
                    url,
                    headers: pairs(
                        "headers",
                        &crate::model::valid_header,
                        "a table of header names to strings",
                    )?,
                    bearer_token_env,
                }
            }
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    line,
                    format!("`{dotted}` has both `command` and `url`: give one"),
                ));
            }
            (None, None) => {
                return Err(self.invalid(
                    line,
                    format!("`{dotted}` needs `command` (a local server) or `url` (a remote one)"),
                ));
            }
        };
        let sandbox = match field("sandbox") {
            None => SandboxMode::WorkspaceWrite,
            Some((item, at)) => item.as_str().and_then(SandboxMode::parse).ok_or_else(|| {
                wrong(
                    "sandbox",
                    at,
                    "one of \"read-only\", \"workspace-write\", \"off\"",
                )
            })?,
        };
        let (tools_allow, tools_deny) = match field("tools") {
            None => (Vec::new(), Vec::new()),
            Some((item, at)) => tool_filter(item)
                .ok_or_else(|| wrong("tools", at, "a table { allow = [..], deny = [..] }"))?,
        };
        let mut env = pairs(
            "env",
            &|name, _| valid_env_name(name),
            "a table of variable names to strings",
        )?;
        if proposal {
            env.retain(|(name, _)| {
                let loader = crate::sandbox::loader_variable(name);
                if loader {
                    ignored(
                        &format!("env.{name}"),
                        "a loader variable runs code the sandbox does not fence",
                    );
                }
                !loader
            });
        }
        if let Some((loader, _)) = env
            .iter()
            .find(|(name, _)| crate::sandbox::loader_variable(name))
        {
            let at = self.line(table, "env");
            return Err(self.invalid(
                at,
                format!(
                    "`{dotted}.env.{loader}` is refused: a loader variable runs code the \
                     sandbox does not fence"
                ),
            ));
        }
        Ok(ServerConfig {
            name: name.to_owned(),
            transport,
            env,
            sandbox,
            network: strings("network")?,
            tools_allow,
            tools_deny,
            startup_timeout: seconds("startup_timeout_secs", DEFAULT_STARTUP_TIMEOUT)?,
            tool_timeout: seconds("tool_timeout_secs", DEFAULT_TOOL_TIMEOUT)?,
            origin,
        })
    }
}

/// The environment variables holding the model's API keys: never a server's token.
const MODEL_KEY_VARS: &[&str] = &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// Longest timeout a server may be given: a day.
const MAX_TIMEOUT_SECS: u64 = 86_400;

/// Longest server name: with `mcp__` and `__` and one character of a tool it stays within the
/// wire's 64 characters.
pub const MAX_NAME_CHARS: usize = 32;

/// A server name: ASCII letters, digits, `-` and `_`, not starting with `_` or `-`, no `__`
/// (the separator of `mcp__SERVER__TOOL`).
#[must_use]
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && !name.contains("__")
}

/// An environment variable name as a shell takes it.
fn valid_env_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit()
}

fn strings(item: &Item) -> Option<Vec<String>> {
    let array = item.as_array()?;
    array
        .iter()
        .map(|value| value.as_str().map(str::to_owned))
        .collect()
}

fn pairs(item: &Item, check: &dyn Fn(&str, &str) -> bool) -> Option<Vec<(String, String)>> {
    let table = item.as_table_like()?;
    table
        .iter()
        .map(|(key, value)| {
            let value = value.as_str()?;
            check(key, value).then(|| (key.to_owned(), value.to_owned()))
        })
        .collect()
}

fn tool_filter(item: &Item) -> Option<(Vec<String>, Vec<String>)> {
    let table = item.as_table_like()?;
    if table.iter().any(|(key, _)| key != "allow" && key != "deny") {
        return None;
    }
    let list = |key| table.get(key).map_or(Some(Vec::new()), strings);
    Some((list("allow")?, list("deny")?))
}
