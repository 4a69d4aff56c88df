//! What git reads configuration, hooks, attributes and object directories from inside a
//! workspace, and the check after each sandboxed command that undoes a change there.
//!
//! Git runs programs its configuration names (`core.fsmonitor`, `core.hooksPath`, filter and
//! diff drivers) and hooks, and takes objects from wherever `alternates` points. For a
//! repository whose git directory is G it reads them from (gitrepository-layout(5), and tried
//! with the real git):
//! - `G/config`, `G/config.worktree` and the files they include (`include.path`,
//!   `includeIf.*.path`, relative to the including file);
//! - `G/commondir`, which moves all of the rest (config, hooks, info, objects) elsewhere;
//! - `G/hooks/`; `G/info/` (`attributes` picks filter drivers; `exclude`, `sparse-checkout`,
//!   `grafts`); `G/objects/info/` (`alternates`, `http-alternates`);
//! - `G/worktrees/*/` and `G/modules/*/`: the git directories of linked worktrees and
//!   submodules, each with all of the above; `G/branches/`, `G/remotes/`: remotes (URLs) in
//!   the old file formats;
//! - every `.git` below the work tree: a directory is a repository of its own, a file
//!   (`gitdir: …`) points at one. The parent's `git status` runs git in it once the index holds
//!   a gitlink there, and editors open nested repositories on their own.
//!
//! The mount namespace keeps these directories and the existing files read-only and the git
//! directories pinned in place (`linux.rs`); a missing directory is made first and removed
//! again when it stayed empty. What a mount cannot express — a file created where there was
//! none (`commondir`, `config.worktree`, an included file), a new `.git` anywhere below the
//! workspace, a gitlink to it — is checked after the command: [`Guard::finish`] compares each
//! surface with its state before, undoes the change and says what it undid. Where no mount
//! namespace can be made, the same check is all there is (and a command could act on a change
//! while it still runs).
//!
//! Git's own writes stay possible: objects, refs, logs, the index, `HEAD` and the lock files
//! next to them are not surfaces. `git gc` cannot write `objects/info/` (commit-graph, packs
//! list) inside the sandbox; git treats that as optional.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::Read as _;
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

/// Files of a git directory that git reads configuration from (or that move it: `commondir`).
pub(super) const GIT_DIR_FILES: &[&str] = &["config", "config.worktree", "commondir"];

/// The agent's project settings: a command must not loosen them.
pub(super) const AGENT_DIR: &str = ".agent";

/// Files bigger than this are not kept for restoring (configuration files are small): a
/// change to one is reported, not undone.
const MAX_KEPT_BYTES: u64 = 1024 * 1024;

/// How deep `include.path` chains are followed (git itself stops at 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// A name that git never takes for a repository, for a `.git` a command created.
const BLOCKED_SUFFIX: &str = ".agent-blocked";

/// One path's state, compared before and after a command.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Snapshot {
    Missing,
    File(Vec<u8>),
    /// A file too big to keep: length and modification time only.
    Large(u64, Option<std::time::SystemTime>),
    Dir {
        inode: u64,
        names: BTreeSet<OsString>,
    },
    Link(PathBuf),
    Other,
}

impl Snapshot {
    fn take(path: &Path, list: bool) -> Snapshot {
        let Ok(meta) = path.symlink_metadata() else {
            return Snapshot::Missing;
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            return std::fs::read_link(path).map_or(Snapshot::Other, Snapshot::Link);
        }
        if kind.is_dir() {
            let names = if list {
                std::fs::read_dir(path)
                    .map(|entries| entries.flatten().map(|e| e.file_name()).collect())
                    .unwrap_or_default()
            } else {
                BTreeSet::new()
            };
            return Snapshot::Dir {
                inode: inode(&meta),
                names,
            };
        }
        if kind.is_file() {
            if meta.len() > MAX_KEPT_BYTES {
                return Snapshot::Large(meta.len(), meta.modified().ok());
            }
            let mut bytes = Vec::new();
            let read = std::fs::File::open(path)
                .and_then(|file| file.take(MAX_KEPT_BYTES + 1).read_to_end(&mut bytes));
            return match read {
                Ok(_) => Snapshot::File(bytes),
                Err(_) => Snapshot::Other,
            };
        }
        Snapshot::Other
    }
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> u64 {
    0
}

/// What the mount namespace keeps in place for one command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Mounts {
    /// Existing files and directories made read-only.
    pub read_only: Vec<PathBuf>,
    /// Directories bound onto themselves so that they cannot be renamed away.
    pub pinned: Vec<PathBuf>,
}

/// The surfaces of one workspace before a command, and what to do after it.
#[derive(Debug)]
pub(super) struct Guard {
    workspace: PathBuf,
    /// Every `.git` below the workspace (the workspace's own included).
    git_entries: BTreeMap<PathBuf, Snapshot>,
    /// Configuration files, surface directories, `.agent`.
    surfaces: BTreeMap<PathBuf, Snapshot>,
    /// Directories made so that they could be kept read-only; removed again when empty.
    created: Vec<PathBuf>,
    /// Where the workspace's tree is kept between processes.
    cache: Option<PathBuf>,
}

impl Guard {
    /// Finds the surfaces of `workspace`, makes the missing surface directories when `mounts`
    /// (so that they can be kept read-only), and records the state of each.
    pub(super) fn before(workspace: &Path, mounts: bool, cache: Option<&Path>) -> (Guard, Mounts) {
        let workspace = workspace
            .canonicalize()
            .unwrap_or_else(|_| workspace.to_path_buf());
        let git_entries: BTreeMap<PathBuf, Snapshot> = git_entries(&workspace, cache)
            .into_iter()
            .map(|path| {
                let snapshot = Snapshot::take(&path, false);
                (path, snapshot)
            })
            .collect();
        let git_dirs = git_dirs(&workspace, git_entries.keys());
        let mut created = Vec::new();
        let mut plan = Mounts::default();
        let mut surface_paths: Vec<(PathBuf, bool)> = Vec::new();
        for git_dir in &git_dirs {
            plan.pinned.push(git_dir.clone());
            for name in GIT_DIR_FILES {
                surface_paths.push((git_dir.join(name), false));
            }
            for name in GIT_DIR_DIRS {
                surface_paths.push((git_dir.join(name), true));
            }
            for included in included_files(git_dir, &workspace) {
                surface_paths.push((included, false));
            }
        }
        let agent = workspace.join(AGENT_DIR);
        surface_paths.push((agent.clone(), true));
        surface_paths.push((agent.join("settings.toml"), false));
        for path in git_entries.keys() {
            if path.is_file() && !path.is_symlink() {
                plan.read_only.push(path.clone());
            }
        }
        for (path, is_dir) in &surface_paths {
            let missing = path.symlink_metadata().is_err();
            if *is_dir
                && missing
                && mounts
                && path.parent().is_some_and(Path::is_dir)
                && std::fs::create_dir(path).is_ok()
            {
                created.push(path.clone());
            }
            if path.exists() && !plan.read_only.contains(path) {
                plan.read_only.push(path.clone());
            }
        }
        // What is inside the surface directories (hooks, `info/exclude`, `.agent/` …): a file
        // there changed in place is undone like the surface files themselves (the mounts
        // keep them read-only only where a mount namespace can be made).
        let inside: Vec<(PathBuf, bool)> = surface_paths
            .iter()
            .filter(|(path, is_dir)| *is_dir && path.is_dir())
            .flat_map(|(dir, _)| contents(dir))
            .take(MAX_INSIDE_SURFACES)
            .collect();
        surface_paths.extend(inside);
        let surfaces = surface_paths
            .into_iter()
            .map(|(path, is_dir)| {
                let snapshot = Snapshot::take(&path, is_dir);
                (path, snapshot)
            })
            .collect();
        // A path inside another read-only path needs no mount of its own.
        let all = plan.read_only.clone();
        plan.read_only.retain(|path| {
            !all.iter()
                .any(|other| other != path && path.starts_with(other))
        });
        if !mounts {
            plan = Mounts::default();
        }
        (
            Guard {
                workspace,
                git_entries,
                surfaces,
                created,
                cache: cache.map(Path::to_path_buf),
            },
            plan,
        )
    }

    /// Compares every surface with its state before the command, undoes each change, removes
    /// the directories made for the command when they stayed empty, and says what it undid.
    pub(super) fn finish(self) -> Vec<String> {
        let mut undone = Vec::new();
        for (path, before) in &self.surfaces {
            let listed = matches!(before, Snapshot::Dir { .. });
            let after = Snapshot::take(path, listed);
            if after != *before
                && let Some(what) = restore(path, before, &after)
            {
                undone.push(what);
            }
        }
        // Before the look below, so that the tree (kept between processes) never records
        // them: each command would otherwise change it twice.
        for dir in self.created.iter().rev() {
            // Only an empty directory goes: `remove_dir` refuses anything else.
            let _ = std::fs::remove_dir(dir);
        }
        let now = git_entries(&self.workspace, self.cache.as_deref());
        // A repository moved (a directory holding it renamed) is the same one, not a new one.
        let known: Vec<&Snapshot> = self.git_entries.values().collect();
        for path in now {
            let after = Snapshot::take(&path, false);
            match self.git_entries.get(&path) {
                Some(before) if *before == after => {}
                None if matches!(after, Snapshot::Dir { .. }) && known.contains(&&after) => {}
                Some(before @ (Snapshot::File(_) | Snapshot::Link(_))) => {
                    if let Some(what) = restore(&path, before, &after) {
                        undone.push(what);
                    }
                }
                _ => undone.push(self.block(&path)),
            }
        }
        undone
    }

    /// Moves a `.git` the command made out of git's sight (kept, under a name git ignores) and
    /// drops a gitlink to it from the workspace's index.
    fn block(&self, path: &Path) -> String {
        let shown = self.shown(path);
        let mut target = path.as_os_str().to_owned();
        target.push(BLOCKED_SUFFIX);
        let mut target = PathBuf::from(target);
        let mut n = 1;
        while target.symlink_metadata().is_ok() {
            n += 1;
            let mut next = path.as_os_str().to_owned();
            next.push(format!("{BLOCKED_SUFFIX}-{n}"));
            target = PathBuf::from(next);
        }
        if let Err(error) = std::fs::rename(path, &target) {
            return format!(
                "`{shown}` was created by the command and could not be moved away ({error}): \
                 remove it before running git there"
            );
        }
        let mut what = format!(
            "`{shown}` (a repository git would read configuration and hooks from) was created \
             by the command: moved to `{}`",
            self.shown(&target)
        );
        if let Some(worktree) = path.parent()
            && worktree != self.workspace
            && let Ok(relative) = worktree.strip_prefix(&self.workspace)
            && drop_gitlink(&self.workspace, relative)
        {
            what.push_str(&format!(
                ", and its gitlink `{}` taken out of the index",
                relative.display()
            ));
        }
        what
    }

    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.workspace)
            .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
    }
}

/// At most this many entries inside the surface directories are kept before a command.
const MAX_INSIDE_SURFACES: usize = 1000;
/// How deep inside a surface directory entries are kept (`worktrees/NAME/config.worktree`).
const INSIDE_SURFACE_DEPTH: usize = 3;

/// The entries below `dir` (not `dir` itself), not following links: each with whether it is
/// a directory (listed, so that what is added to it is found).
fn contents(dir: &Path) -> Vec<(PathBuf, bool)> {
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

/// Puts `path` back as `before` was, as far as that can be done; says what was done.
fn restore(path: &Path, before: &Snapshot, after: &Snapshot) -> Option<String> {
    let shown = path.display();
    let removed = |path: &Path| match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => Ok(()),
    };
    let result = match (before, after) {
        (Snapshot::Missing, _) => {
            removed(path).map(|()| format!("removed `{shown}`, which the command created"))
        }
        (Snapshot::File(bytes), _) => removed(path)
            .and_then(|()| std::fs::write(path, bytes))
            .map(|()| format!("restored `{shown}`, which the command changed")),
        #[cfg(unix)]
        (Snapshot::Link(target), _) => removed(path)
            .and_then(|()| std::os::unix::fs::symlink(target, path))
            .map(|()| format!("restored the link `{shown}`, which the command changed")),
        (
            Snapshot::Dir { inode, names },
            Snapshot::Dir {
                inode: now,
                names: now_names,
            },
        ) if inode == now => {
            let new: Vec<&OsString> = now_names.difference(names).collect();
            if new.is_empty() {
                return None;
            }
            let mut gone = Vec::new();
            for name in new {
                let entry = path.join(name);
                match removed(&entry) {
                    Ok(()) => gone.push(format!("`{}`", entry.display())),
                    Err(error) => {
                        return Some(format!(
                            "`{}` was created by the command and could not be removed ({error})",
                            entry.display()
                        ));
                    }
                }
            }
            Ok(format!(
                "removed {}, which the command created",
                gone.join(", ")
            ))
        }
        _ => Ok(format!(
            "`{shown}` was changed by the command and cannot be put back as it was: check it \
             before running git or agent there"
        )),
    };
    Some(result.unwrap_or_else(|error| {
        format!("`{shown}` was changed by the command and could not be put back ({error})")
    }))
}

fn git_entries(workspace: &Path, cache: Option<&Path>) -> BTreeSet<PathBuf> {
    super::tree::look(workspace, cache).git_entries
}

/// The git directories inside `workspace` that the `.git` entries are or point at, and the
/// common directories those name.
fn git_dirs<'a>(workspace: &Path, entries: impl Iterator<Item = &'a PathBuf>) -> Vec<PathBuf> {
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
pub(super) fn outside_git_dirs(workspace: &Path) -> Vec<PathBuf> {
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
fn included_files(git_dir: &Path, workspace: &Path) -> Vec<PathBuf> {
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

/// Takes a gitlink at `relative` out of the index of the workspace's own repository, when
/// there is one. Runs git with no configuration but the repository's own (its code-running
/// settings off). Whether it did.
fn drop_gitlink(workspace: &Path, relative: &Path) -> bool {
    let git_dir = workspace.join(".git");
    if !git_dir.is_dir() {
        return false;
    }
    let git = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new("git")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_DIR", &git_dir)
            .env("GIT_WORK_TREE", workspace)
            .args([
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
            ])
            .args(args)
            .current_dir(workspace)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|output| output.status.success())
    };
    let path = relative.as_os_str();
    let listed = git(&["ls-files".as_ref(), "-s".as_ref(), "--".as_ref(), path]);
    let is_gitlink = listed.is_some_and(|out| out.stdout.starts_with(b"160000 "));
    is_gitlink
        && git(&[
            "update-index".as_ref(),
            "--force-remove".as_ref(),
            "--".as_ref(),
            path,
        ])
        .is_some()
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

    #[test]
    fn new_git_entries_and_surface_files_are_undone() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().canonicalize().unwrap();
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::write(
            work.join(".git/config"),
            "[include]\n\tpath = ../shared.inc\n",
        )
        .unwrap();
        std::fs::write(work.join("shared.inc"), "[user]\n").unwrap();
        let (guard, _) = Guard::before(&work, false, None);
        std::fs::create_dir_all(work.join("sub/.git")).unwrap();
        std::fs::write(work.join(".git/commondir"), "../evil").unwrap();
        std::fs::write(work.join(".git/hooks/pre-commit"), "#!/bin/sh").unwrap();
        std::fs::write(work.join("shared.inc"), "[core]\nfsmonitor = x\n").unwrap();
        let undone = guard.finish();
        assert_eq!(undone.len(), 4, "{undone:?}");
        assert!(!work.join(".git/commondir").exists());
        assert!(!work.join(".git/hooks/pre-commit").exists());
        assert!(!work.join("sub/.git").exists());
        assert!(work.join("sub/.git.agent-blocked").is_dir());
        assert_eq!(
            std::fs::read_to_string(work.join("shared.inc")).unwrap(),
            "[user]\n"
        );
    }
}
