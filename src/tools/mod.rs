//! The workspace tools offered to the model besides `shell`: `read_file`, `list_files`,
//! `search`, `edit_file` and `write_file` — their schemas (short: every byte is sent with
//! every request), the validation of a call's arguments, and their execution on a path that
//! the caller has already resolved and decided on (`policy::files`). Reads are bounded in
//! memory and output; writes are prepared first (the person sees the diff, nothing is
//! touched), then applied atomically (temp file + rename, mode kept) after checking that the
//! file did not change in between.
//!
//! `web_fetch` ([`web_fetch`]) is here too: its schema and the page made text (the request is
//! `net::fetch`'s).
//!
//! It knows nothing of prompts, modes or events: the loop (`agent`) decides and reports.

mod diff;
mod edit;
mod list;
mod read;
mod search;
pub mod web_fetch;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

pub use diff::{Counts, counts, unified};
pub use edit::{Change, apply, prepare_edit, prepare_write};
pub use list::list;
pub use read::read;
pub use search::search;

use crate::exec::ErrorCode;
use crate::model::ToolSpec;
use crate::policy::files::Access;
use crate::tool_error::{ToolError, ToolErrorCode};

/// `read_file`.
pub const READ_FILE: &str = "read_file";
/// `list_files`.
pub const LIST_FILES: &str = "list_files";
/// `search`.
pub const SEARCH: &str = "search";
/// `edit_file`.
pub const EDIT_FILE: &str = "edit_file";
/// `write_file`.
pub const WRITE_FILE: &str = "write_file";

/// Most lines `read_file` returns per call (the model reads on with `offset`).
pub const MAX_READ_LINES: u64 = 2_000;
/// Longest line shown by `read_file` and `search`, in characters: minified files stay short.
pub const MAX_LINE_CHARS: usize = 2_000;
/// Largest file `edit_file` and `write_file` work on: a source file, not a data dump (the
/// whole file is held in memory twice while the diff is shown).
pub const MAX_EDIT_BYTES: u64 = 10 * 1024 * 1024;
/// Most entries `list_files` shows; the rest are counted.
pub const MAX_LISTED: usize = 1_000;
/// Most matching lines `search` shows; the rest are counted.
pub const MAX_MATCHES_SHOWN: usize = 200;

/// Whether `name` is one of these tools.
#[must_use]
pub fn is_file_tool(name: &str) -> bool {
    [READ_FILE, LIST_FILES, SEARCH, EDIT_FILE, WRITE_FILE].contains(&name)
}

fn spec(name: &str, description: &str, parameters: serde_json::Value) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    }
}

/// The five tools' schemas. Descriptions are short on purpose: they travel with every request.
#[must_use]
pub fn specs() -> Vec<ToolSpec> {
    let path = json!({"type": "string", "description": "Relative to the workspace, or absolute."});
    vec![
        spec(
            READ_FILE,
            "Read a text file: numbered lines, at most 2000 per call. Free inside the workspace.",
            json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "offset": {"type": "integer", "description": "First line (1-based)."},
                    "limit": {"type": "integer", "description": "Number of lines."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        spec(
            LIST_FILES,
            "List files under a directory, .gitignore respected. Free inside the workspace.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Directory (default: the workspace)."},
                    "pattern": {"type": "string", "description": "Glob, e.g. **/*.rs."}
                },
                "additionalProperties": false
            }),
        ),
        spec(
            SEARCH,
            "Search files for a regular expression (ripgrep rules); returns path:line: text.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression."},
                    "path": {"type": "string", "description": "File or directory (default: the workspace)."},
                    "glob": {"type": "string", "description": "Only files matching this glob."},
                    "ignore_case": {"type": "boolean"},
                    "context": {"type": "integer", "description": "Lines of context around each match."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        ),
        spec(
            EDIT_FILE,
            "Replace an exact string in a file; old_string must match once unless replace_all. \
             The user approves the diff.",
            json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                    "replace_all": {"type": "boolean"}
                },
                "required": ["path", "old_string", "new_string"],
                "additionalProperties": false
            }),
        ),
        spec(
            WRITE_FILE,
            "Create or replace a file (parent directories too). The user approves the content.",
            json!({
                "type": "object",
                "properties": {"path": path, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        ),
    ]
}

/// `read_file` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The file.
    pub path: String,
    /// First line, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Number of lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

/// `list_files` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// The directory (default: the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A glob the relative path must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

/// `search` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// The regular expression.
    pub pattern: String,
    /// File or directory (default: the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Only files whose relative path matches this glob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// Case-insensitive matching.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_case: Option<bool>,
    /// Lines of context before and after each match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u32>,
}

/// `edit_file` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// The file.
    pub path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// What replaces it.
    pub new_string: String,
    /// Replace every occurrence (otherwise `old_string` must occur once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_all: Option<bool>,
}

/// `write_file` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file.
    pub path: String,
    /// Its whole new content.
    pub content: String,
}

/// A validated call of one of these tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileCall {
    /// `read_file`.
    Read(ReadArgs),
    /// `list_files`.
    List(ListArgs),
    /// `search`.
    Search(SearchArgs),
    /// `edit_file`.
    Edit(EditArgs),
    /// `write_file`.
    Write(WriteArgs),
}

/// `EINVAL` with `message`.
fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::new(ToolErrorCode::InvalidArguments, message)
}

/// `EIO` with `message`.
fn io_error(message: impl Into<String>) -> ToolError {
    ToolError::new(ToolErrorCode::Exec(ErrorCode::Io), message)
}

/// The file a tool opened must be the one that was decided: on Windows the final path of
/// what was opened (short names, trailing dots and links resolved) is compared with the
/// decided path, so a name Win32 rewrites, or a file swapped in between, is not read or
/// written. `real` is that final path: `std::fs::canonicalize` of the path after opening,
/// which asks Windows for the final path of a handle to it (`GetFinalPathNameByHandleW`;
/// std offers no call for an open handle without `unsafe`, which this crate forbids).
#[cfg_attr(not(windows), allow(dead_code))]
fn same_as_decided(decided: &Path, real: &Path, shown: &str) -> Result<(), ToolError> {
    if real == decided {
        return Ok(());
    }
    Err(invalid(format!(
        "`{shown}` is `{}` on disk, not the file that was decided: nothing was done",
        real.display()
    )))
}

/// [`same_as_decided`] for `path` on Windows (elsewhere the resolved path is what opens).
#[cfg_attr(not(windows), allow(clippy::unnecessary_wraps, unused_variables))]
fn opened_as_decided(path: &Path, shown: &str) -> Result<(), ToolError> {
    #[cfg(windows)]
    {
        let real = std::fs::canonicalize(path)
            .map_err(|error| io_error(format!("cannot resolve `{shown}`: {error}")))?;
        same_as_decided(path, &real, shown)?;
    }
    Ok(())
}

/// `ENOENT` with `message`.
fn not_found(message: impl Into<String>) -> ToolError {
    ToolError::new(ToolErrorCode::Exec(ErrorCode::NotFound), message)
}

impl FileCall {
    /// Validates a call of tool `name` with raw JSON `arguments`.
    ///
    /// # Errors
    /// `EINVAL` with a message the model can act on.
    pub fn parse(name: &str, arguments: &str) -> Result<FileCall, ToolError> {
        let arguments = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let value: serde_json::Value = serde_json::from_str(arguments)
            .map_err(|error| invalid(format!("the arguments are not valid JSON: {error}")))?;
        if !value.is_object() {
            return Err(invalid("the arguments must be a JSON object"));
        }
        fn typed<T: serde::de::DeserializeOwned>(
            value: serde_json::Value,
            expected: &str,
        ) -> Result<T, ToolError> {
            serde_json::from_value(value).map_err(|error| {
                invalid(format!("invalid arguments: {error}; expected {expected}"))
            })
        }
        let call = match name {
            READ_FILE => FileCall::Read(typed(
                value,
                "{\"path\": string, \"offset\"?: integer, \"limit\"?: integer}",
            )?),
            LIST_FILES => {
                FileCall::List(typed(value, "{\"path\"?: string, \"pattern\"?: string}")?)
            }
            SEARCH => FileCall::Search(typed(
                value,
                "{\"pattern\": string, \"path\"?: string, \"glob\"?: string, \
                 \"ignore_case\"?: boolean, \"context\"?: integer}",
            )?),
            EDIT_FILE => FileCall::Edit(typed(
                value,
                "{\"path\": string, \"old_string\": string, \"new_string\": string, \
                 \"replace_all\"?: boolean}",
            )?),
            WRITE_FILE => FileCall::Write(typed(value, "{\"path\": string, \"content\": string}")?),
            other => return Err(invalid(format!("unknown tool `{other}`"))),
        };
        if let Some(path) = call.path()
            && (path.trim().is_empty() || path.contains('\0'))
        {
            return Err(invalid("`path` is empty or holds a NUL character"));
        }
        Ok(call)
    }

    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            FileCall::Read(_) => READ_FILE,
            FileCall::List(_) => LIST_FILES,
            FileCall::Search(_) => SEARCH,
            FileCall::Edit(_) => EDIT_FILE,
            FileCall::Write(_) => WRITE_FILE,
        }
    }

    /// The path as the model wrote it; `None` for the workspace itself.
    #[must_use]
    pub fn path(&self) -> Option<&str> {
        match self {
            FileCall::Read(args) => Some(&args.path),
            FileCall::List(args) => args.path.as_deref(),
            FileCall::Search(args) => args.path.as_deref(),
            FileCall::Edit(args) => Some(&args.path),
            FileCall::Write(args) => Some(&args.path),
        }
    }

    /// Read or write.
    #[must_use]
    pub fn access(&self) -> Access {
        match self {
            FileCall::Read(_) | FileCall::List(_) | FileCall::Search(_) => Access::Read,
            FileCall::Edit(_) | FileCall::Write(_) => Access::Write,
        }
    }

    /// The arguments as a JSON object (for events and transcripts).
    #[must_use]
    pub fn input(&self) -> serde_json::Value {
        let value = match self {
            FileCall::Read(args) => serde_json::to_value(args),
            FileCall::List(args) => serde_json::to_value(args),
            FileCall::Search(args) => serde_json::to_value(args),
            FileCall::Edit(args) => serde_json::to_value(args),
            FileCall::Write(args) => serde_json::to_value(args),
        };
        value.unwrap_or_default()
    }

    /// One short line for people: `read src/lib.rs`, `search "fn add"`, `edit src/lib.rs`.
    /// `shown` is the path as a person reads it (relative inside the workspace).
    #[must_use]
    pub fn label(&self, shown: &str) -> String {
        match self {
            FileCall::Read(_) => format!("read {shown}"),
            FileCall::List(args) => match &args.pattern {
                Some(pattern) => format!("list {shown} {pattern}"),
                None => format!("list {shown}"),
            },
            FileCall::Search(args) => {
                let place = if shown == "." {
                    String::new()
                } else {
                    format!(" in {shown}")
                };
                format!("search \"{}\"{place}", args.pattern)
            }
            FileCall::Edit(_) => format!("edit {shown}"),
            FileCall::Write(_) => format!("write {shown}"),
        }
    }
}

/// The result of a tool that ran: the text for the model and a short summary for people
/// (`120 lines`, `3 matches`, `+1 −1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// What the model gets.
    pub content: String,
    /// What the one-line summary says after the label.
    pub summary: String,
    /// The unified diff of a change that was applied.
    pub diff: Option<String>,
}

/// Where the tools work: the workspace root (canonical), which paths listing and search leave
/// out, and the output cap in characters.
#[derive(Clone)]
pub struct Scope<'a> {
    /// The workspace.
    pub root: &'a Path,
    /// Paths `list_files` and `search` skip (secret files, denied globs).
    pub skipped: std::sync::Arc<dyn Fn(&Path) -> bool + Send + Sync>,
    /// The most characters a result may have.
    pub max_chars: usize,
}

impl Scope<'_> {
    /// `path` relative to the root when inside, absolute otherwise.
    #[must_use]
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// The path a call is about, resolved against `root` (symlinks followed).
///
/// # Errors
/// `EIO` when not even the root can be resolved.
pub fn resolve(root: &Path, path: Option<&str>) -> Result<PathBuf, ToolError> {
    let path = path.unwrap_or(".");
    let expanded = if let Some(rest) = path.strip_prefix("~/") {
        match std::env::var_os("HOME") {
            Some(home) => Path::new(&home).join(rest),
            None => PathBuf::from(path),
        }
    } else {
        PathBuf::from(path)
    };
    crate::workspace::resolve(root, &expanded)
        .map_err(|error| io_error(format!("cannot resolve `{path}`: {error}")))
}

/// `n thing` or `n things`.
#[must_use]
pub fn plural(n: u64, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// A line cut to [`MAX_LINE_CHARS`] characters, saying how much was left out.
fn clip_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => std::borrow::Cow::Borrowed(line),
        Some((at, _)) => {
            let rest = line[at..].chars().count();
            std::borrow::Cow::Owned(format!("{}… [{rest} more characters]", &line[..at]))
        }
    }
}

/// Metadata of `path` for a tool that needs a regular file: missing, a directory or a
/// special file (FIFO, device, socket) each get a clear error.
fn regular_file(path: &Path, shown: &str, tool: &str) -> Result<std::fs::Metadata, ToolError> {
    let metadata = std::fs::metadata(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => not_found(format!(
            "`{shown}` does not exist: check the path (list_files shows what is there)"
        )),
        _ => io_error(format!("cannot read `{shown}`: {error}")),
    })?;
    if metadata.is_dir() {
        let hint = if tool == READ_FILE {
            ": use list_files to see what it holds"
        } else {
            ""
        };
        return Err(invalid(format!("`{shown}` is a directory{hint}")));
    }
    if !metadata.is_file() {
        return Err(invalid(format!(
            "`{shown}` is not a regular file (a FIFO, socket or device): {tool} reads only files"
        )));
    }
    Ok(metadata)
}

#[cfg(test)]
mod tests;
