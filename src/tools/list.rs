//! `list_files`: the files under a directory, walked with ripgrep's own walker (`ignore`:
//! `.gitignore`, `.ignore`, hidden files and directories skipped as `rg --files` does),
//! filtered by an optional glob, secret and denied files left out, capped with a count of
//! the rest.

use std::path::Path;

use globset::GlobBuilder;

use super::{ListArgs, MAX_LISTED, Output, Scope, invalid, io_error, plural};
use crate::tool_error::ToolError;

/// Lists `dir` (resolved, decided) for `args`.
///
/// # Errors
/// Missing, not a directory, a bad glob.
pub fn list(scope: &Scope<'_>, dir: &Path, args: &ListArgs) -> Result<Output, ToolError> {
    let shown = scope.display(dir);
    let metadata = std::fs::metadata(dir).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => super::not_found(format!("`{shown}` does not exist")),
        _ => io_error(format!("cannot read `{shown}`: {error}")),
    })?;
    if !metadata.is_dir() {
        return Err(invalid(format!(
            "`{shown}` is not a directory: use read_file to read a file"
        )));
    }
    let matcher = match &args.pattern {
        Some(pattern) => Some(
            GlobBuilder::new(pattern.trim_start_matches("./"))
                .literal_separator(true)
                .build()
                .map_err(|error| invalid(format!("`{pattern}` is not a valid glob: {error}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let skipped = std::sync::Arc::clone(&scope.skipped);
    let walker = ignore::WalkBuilder::new(dir)
        .sort_by_file_name(std::ffi::OsStr::cmp)
        .filter_entry(move |entry| !skipped(entry.path()))
        .build();
    let mut content = String::new();
    let mut listed = 0usize;
    let mut rest = 0u64;
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let relative = path.strip_prefix(dir).unwrap_or(path);
        if matcher.as_ref().is_some_and(|m| !m.is_match(relative)) {
            continue;
        }
        let line = scope.display(path);
        if listed >= MAX_LISTED || content.len() + line.len() + 1 > scope.max_chars {
            rest += 1;
            continue;
        }
        content.push_str(&line);
        content.push('\n');
        listed += 1;
    }
    let total = listed as u64 + rest;
    if total == 0 {
        let what = args
            .pattern
            .as_ref()
            .map_or_else(String::new, |p| format!(" matching `{p}`"));
        content = format!("no files{what} under `{shown}`");
    } else if rest > 0 {
        content.push_str(&format!(
            "[{rest} more not shown: narrow it with `path` or `pattern`]"
        ));
    }
    Ok(Output {
        content,
        summary: plural(total, "file"),
        diff: None,
    })
}
