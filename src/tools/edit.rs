//! `edit_file` and `write_file` in two steps. [`prepare_edit`] / [`prepare_write`] read the
//! file and compute the new content without touching anything — every problem (missing file,
//! directory, FIFO, too large, not UTF-8, `old_string` found 0 or several times) is an error
//! here, before anyone is asked. [`apply`] runs after the decision: it checks that the file
//! is still what was shown (changed on disk in between: nothing is written), then writes a
//! temp file in the same directory and renames it over the target, keeping its mode, so a
//! crash never leaves half a file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::{
    Counts, EDIT_FILE, EditArgs, MAX_EDIT_BYTES, Output, Scope, WRITE_FILE, WriteArgs, counts,
    invalid, io_error, plural, regular_file, unified,
};
use crate::tool_error::ToolError;

/// A change ready to be shown and applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file (resolved).
    pub path: PathBuf,
    /// The path as a person reads it.
    pub shown: String,
    /// The content now; `None` when the file does not exist yet.
    pub old: Option<String>,
    /// The content after the change.
    pub new: String,
    /// Lines added and removed.
    pub counts: Counts,
    /// Occurrences replaced (`edit_file`); `None` for `write_file`.
    pub replaced: Option<usize>,
}

impl Change {
    /// The unified diff of the change (a new file as all additions).
    #[must_use]
    pub fn diff(&self) -> String {
        unified(self.old.as_deref(), &self.new, &self.shown)
    }
}

/// The current text of an existing file, or a clear error.
fn current_text(path: &Path, shown: &str, tool: &str) -> Result<String, ToolError> {
    let metadata = regular_file(path, shown, tool)?;
    if metadata.len() > MAX_EDIT_BYTES {
        return Err(invalid(format!(
            "`{shown}` is {} bytes, over the {MAX_EDIT_BYTES}-byte limit of {tool}: change it \
             with a command instead",
            metadata.len()
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|error| io_error(format!("cannot read `{shown}`: {error}")))?;
    String::from_utf8(bytes).map_err(|_| {
        invalid(format!(
            "`{shown}` is not valid UTF-8 text: {tool} changes text files only, nothing was changed"
        ))
    })
}

/// Prepares `edit_file` on `path` (resolved).
///
/// # Errors
/// The file cannot be edited as asked; nothing was changed.
pub fn prepare_edit(scope: &Scope<'_>, path: &Path, args: &EditArgs) -> Result<Change, ToolError> {
    let shown = scope.display(path);
    if args.old_string.is_empty() {
        return Err(invalid(
            "`old_string` is empty: give the exact text to replace, or use write_file to create \
             or replace a whole file",
        ));
    }
    if args.old_string == args.new_string {
        return Err(invalid(
            "`old_string` and `new_string` are the same: there is nothing to change",
        ));
    }
    let old = current_text(path, &shown, EDIT_FILE)?;
    let found = old.matches(&args.old_string).count();
    let replace_all = args.replace_all.unwrap_or(false);
    if found == 0 {
        return Err(invalid(format!(
            "`old_string` was not found in `{shown}` (0 matches); nothing was changed: read the \
             file and copy the text exactly, whitespace and indentation included"
        )));
    }
    if found > 1 && !replace_all {
        return Err(invalid(format!(
            "`old_string` was found {found} times in `{shown}`; nothing was changed: include \
             more surrounding lines to make it unique, or set replace_all to replace all {found}"
        )));
    }
    let new = if replace_all {
        old.replace(&args.old_string, &args.new_string)
    } else {
        old.replacen(&args.old_string, &args.new_string, 1)
    };
    if u64::try_from(new.len()).unwrap_or(u64::MAX) > MAX_EDIT_BYTES {
        return Err(invalid(format!(
            "the edited `{shown}` would be over the {MAX_EDIT_BYTES}-byte limit of edit_file"
        )));
    }
    Ok(Change {
        counts: counts(&old, &new),
        path: path.to_path_buf(),
        shown,
        old: Some(old),
        new,
        replaced: Some(found),
    })
}

/// Prepares `write_file` on `path` (resolved).
///
/// # Errors
/// The path cannot be written as asked; nothing was changed.
pub fn prepare_write(
    scope: &Scope<'_>,
    path: &Path,
    args: &WriteArgs,
) -> Result<Change, ToolError> {
    let shown = scope.display(path);
    if u64::try_from(args.content.len()).unwrap_or(u64::MAX) > MAX_EDIT_BYTES {
        return Err(invalid(format!(
            "the content is over the {MAX_EDIT_BYTES}-byte limit of write_file"
        )));
    }
    let old = match std::fs::symlink_metadata(path) {
        Ok(_) => Some(current_text(path, &shown, WRITE_FILE)?),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(io_error(format!("cannot look at `{shown}`: {error}"))),
    };
    if old.as_deref() == Some(args.content.as_str()) {
        return Err(invalid(format!(
            "`{shown}` already has exactly this content: there is nothing to change"
        )));
    }
    Ok(Change {
        counts: counts(old.as_deref().unwrap_or(""), &args.content),
        path: path.to_path_buf(),
        shown,
        old,
        new: args.content.clone(),
        replaced: None,
    })
}

/// Applies a prepared change, if the file is still as it was when prepared.
///
/// # Errors
/// The file changed on disk in between, or writing failed; the file is as it was.
pub fn apply(change: &Change) -> Result<Output, ToolError> {
    let shown = &change.shown;
    let changed = || {
        invalid(format!(
            "`{shown}` changed on disk after the change was prepared; nothing was written: read \
             it again and redo the edit"
        ))
    };
    let now = match std::fs::read(&change.path) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(io_error(format!("cannot read `{shown}`: {error}"))),
    };
    if now.as_deref() != change.old.as_deref().map(str::as_bytes) {
        return Err(changed());
    }
    if now.is_some() {
        super::opened_as_decided(&change.path, shown)?;
    }
    let dir = change
        .path
        .parent()
        .ok_or_else(|| invalid(format!("`{shown}` has no parent directory")))?;
    std::fs::create_dir_all(dir)
        .map_err(|error| io_error(format!("cannot create the directory of `{shown}`: {error}")))?;
    let permissions = std::fs::metadata(&change.path)
        .ok()
        .map(|metadata| metadata.permissions());
    write_atomically(&change.path, change.new.as_bytes(), permissions)
        .map_err(|error| io_error(format!("cannot write `{shown}`: {error}; it is unchanged")))?;
    let lines = plural(change.new.lines().count() as u64, "line");
    let content = match (&change.old, change.replaced) {
        (None, _) => format!("created `{shown}` ({lines})"),
        (Some(_), Some(n)) => format!(
            "edited `{shown}`: replaced {} ({})",
            plural(n as u64, "occurrence"),
            change.counts
        ),
        (Some(_), None) => format!("replaced `{shown}` ({lines}, {})", change.counts),
    };
    Ok(Output {
        content,
        summary: change.counts.to_string(),
        diff: Some(change.diff()),
    })
}

/// Writes `bytes` to a new temp file beside `path`, with `permissions` (the old file's), and
/// renames it over `path`. The temp file is removed on any failure.
fn write_atomically(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy().into_owned());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temp = dir.join(format!(".{name}.agent-{}-{nanos}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}
