//! Where git reads configuration, hooks, attributes and object directories from in a
//! workspace: its `.git` entries, the git directories they are or point at, the files their
//! configuration includes, and what is inside the surface directories.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Directories of a git directory that hold configuration, hooks, attributes, object
/// directories or other git directories; kept read-only as a whole.
pub(super) const GIT_DIR_DIRS: &[&str] = &[
    "hooks",
    "info",
    "objects/info",
    "worktrees",
    "modules",
    "branches",
    "remotes",
];

/// Directories of a git directory that hold a surface directory and that git writes in
/// itself: pinned in place (so that the surface inside cannot be moved away with them) and
/// checked (a replaced one is moved out of the way).
pub(super) const GIT_DIR_HELD: &[&str] = &["objects"];

/// Files of a git directory that git reads configuration from (or that move it: `commondir`).
pub(super) const GIT_DIR_FILES: &[&str] = &["config", "config.worktree", "commondir"];

/// The agent's project settings: a command must not loosen them.
pub(super) const AGENT_DIR: &str = ".agent";

/// How deep `include.path` chains are followed (git itself stops at 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// At most this many entries inside the surface directories are kept before a command.
pub(super) const MAX_INSIDE_SURFACES: usize = 1000;
/// How deep inside a surface directory entries are kept (`worktrees/NAME/config.worktree`).
const INSIDE_SURFACE_DEPTH: usize = 3;

/// The entries below `dir` (not `dir` itself), not following links: each with whether it is
/// a directory (listed, so that what is added to it is found).
pub(super) fn contents(dir: &Path) -> Vec<(PathBuf, bool)> {
    ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .follow_links(false)
        .max_depth(Some(INSIDE_SURFACE_DEPTH))
        .build()
        .flatten()
        .filter(|entry| entry.depth() > 0)
        .map(|entry| {
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            (entry.into_path(), is_dir)
        })
        .collect()
}

pub(super) fn git_entries(workspace: &Path, cache: Option<&Path>) -> BTreeSet<PathBuf> {
    crate::sandbox::tree::look(workspace, cache).git_entries
}

/// The git directories inside `workspace` that the `.git` entries are or point at, and the
/// common directories those name.
pub(super) fn git_dirs<'a>(
    workspace: &Path,
    entries: impl Iterator<Item = &'a PathBuf>,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let add = |dir: PathBuf, dirs: &mut Vec<PathBuf>| {
        let Ok(dir) = dir.canonicalize() else { return };
        if dir.starts_with(workspace) && dir.is_dir() && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    };
    for entry in entries {
        if entry.is_symlink() {
            continue;
        }
        if entry.is_dir() {
            add(entry.clone(), &mut dirs);
        } else if let Some(target) = gitfile_target(entry) {
            add(target, &mut dirs);
        }
    }
    let mut index = 0;
    while index < dirs.len() {
        let common = dirs[index].join("commondir");
        if let Ok(text) = std::fs::read_to_string(&common) {
            let target = dirs[index].join(text.trim_end_matches(['\n', '\r']));
            add(target, &mut dirs);
        }
        index += 1;
    }
    dirs
}

/// The git directories outside `workspace` that its `.git` file points at (a linked
/// worktree's own and the common one), for reading.
pub(in crate::sandbox) fn outside_git_dirs(workspace: &Path) -> Vec<PathBuf> {
    let file = workspace.join(".git");
    let Some(git_dir) = file
        .is_file()
        .then(|| gitfile_target(&file))
        .flatten()
        .and_then(|dir| dir.canonicalize().ok())
    else {
        return Vec::new();
    };
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .and_then(|text| {
            git_dir
                .join(text.trim_end_matches(['\n', '\r']))
                .canonicalize()
                .ok()
        });
    std::iter::once(git_dir)
        .chain(common)
        .filter(|dir| !dir.starts_with(workspace))
        .collect()
}

/// The directory a `.git` file (`gitdir: PATH`) points at, relative to the file's directory.
fn gitfile_target(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.strip_prefix("gitdir:")?.trim();
    Some(file.parent()?.join(target))
}

/// Files inside `workspace` that the configuration of `git_dir` includes (followed through
/// included files), existing or not.
pub(super) fn included_files(git_dir: &Path, workspace: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut pending: Vec<(PathBuf, usize)> = ["config", "config.worktree"]
        .iter()
        .map(|name| (git_dir.join(name), 0))
        .collect();
    while let Some((file, depth)) = pending.pop() {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let base = file.parent().unwrap_or(git_dir).to_path_buf();
        for path in include_paths(&text) {
            if path.starts_with('~') {
                continue; // the home directory: outside the workspace (and not writable).
            }
            let path = crate::workspace::normalize(&base, Path::new(&path));
            let resolved = path
                .parent()
                .and_then(|parent| parent.canonicalize().ok())
                .and_then(|parent| path.file_name().map(|name| parent.join(name)))
                .unwrap_or_else(|| path.clone());
            if resolved.starts_with(workspace) && !found.contains(&resolved) {
                found.push(resolved.clone());
                if depth < MAX_INCLUDE_DEPTH {
                    pending.push((resolved, depth + 1));
                }
            }
        }
    }
    found
}

/// The `path` values of `[include]` and `[includeIf "…"]` sections, as written (quotes
/// removed).
fn include_paths(config: &str) -> Vec<String> {
    let mut in_include = false;
    let mut paths = Vec::new();
    for line in config.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let section = rest.split([']', ' ', '"', '.']).next().unwrap_or_default();
            in_include = section.eq_ignore_ascii_case("include")
                || section.eq_ignore_ascii_case("includeif");
            // `[include] path = x` on one line.
            let Some((_, after)) = rest.split_once(']') else {
                continue;
            };
            if !in_include {
                continue;
            }
            if let Some(path) = path_value(after.trim()) {
                paths.push(path);
            }
            continue;
        }
        if in_include && let Some(path) = path_value(line) {
            paths.push(path);
        }
    }
    paths
}

fn path_value(line: &str) -> Option<String> {
    let (key, value) = line.split_once('=')?;
    if !key.trim().eq_ignore_ascii_case("path") {
        return None;
    }
    let value = value.trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    (!value.is_empty()).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn include_paths_are_found_in_every_spelling() {
        let config = "[core]\n\tpath = not-this\n[include]\n\tpath = a.inc\n\
                      [includeIf \"gitdir:~/x/\"]\n  PATH = \"b c.inc\"\n\
                      [include] path = ../d.inc\n[user]\n\tpath = no\n";
        assert_eq!(include_paths(config), vec!["a.inc", "b c.inc", "../d.inc"]);
    }
}
