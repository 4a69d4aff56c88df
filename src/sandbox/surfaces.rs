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
use std::path::{Path, PathBuf};

use super::beneath::{self, Kind, Place};
use super::in_progress::{self, Runs};

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

/// Files bigger than this are not kept for restoring (configuration files are small): a
/// change to one is reported, not undone.
const MAX_KEPT_BYTES: u64 = 1024 * 1024;

/// How deep `include.path` chains are followed (git itself stops at 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// A name that git never takes for a repository, for a `.git` a command created.
const BLOCKED_SUFFIX: &str = ".agent-blocked";

/// One path's state, compared before and after a command (seen link-free from the
/// workspace: `beneath.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Snapshot {
    Missing,
    /// A directory on its way does not exist.
    Gone,
    /// Something on its way is a link or not a directory.
    Unreachable,
    File {
        bytes: Vec<u8>,
        mode: u32,
    },
    /// A file too big to keep: what it is, not what it holds.
    Large(Kind),
    Dir {
        inode: u64,
        /// The names in it, for a directory whose contents are surfaces.
        names: Option<BTreeSet<OsString>>,
    },
    Link(PathBuf),
    Other,
}

impl Snapshot {
    fn take(workspace: &Path, path: &Path, list: bool) -> Snapshot {
        let entry = match beneath::place(workspace, path) {
            Place::Here(entry) => entry,
            Place::Gone => return Snapshot::Gone,
            Place::Unreachable => return Snapshot::Unreachable,
        };
        match entry.kind() {
            Ok(Kind::Missing) => Snapshot::Missing,
            Ok(Kind::Link) => entry.read_link().map_or(Snapshot::Other, Snapshot::Link),
            Ok(Kind::Dir { inode }) => Snapshot::Dir {
                inode,
                names: list.then(|| entry.names().unwrap_or_default()),
            },
            Ok(kind @ Kind::File { len, .. }) if len > MAX_KEPT_BYTES => Snapshot::Large(kind),
            Ok(Kind::File { mode, .. }) => entry
                .read(MAX_KEPT_BYTES + 1)
                .map_or(Snapshot::Other, |bytes| Snapshot::File { bytes, mode }),
            Ok(Kind::Other) | Err(_) => Snapshot::Other,
        }
    }

    /// Whether nothing is (or can be reached) there.
    fn is_absent(&self) -> bool {
        matches!(
            self,
            Snapshot::Missing | Snapshot::Gone | Snapshot::Unreachable
        )
    }
}

/// What the mount namespace keeps in place for one command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Mounts {
    /// Existing files and directories made read-only.
    pub read_only: Vec<PathBuf>,
    /// Directories bound onto themselves so that they cannot be renamed away.
    pub pinned: Vec<PathBuf>,
    /// The workspace's git directories (its own and nested ones), for a policy that keeps
    /// them read-only as a whole (`Policy::git_read_only`).
    pub git_dirs: Vec<PathBuf>,
}

/// The surfaces of one workspace before a command, and what to do after it.
#[derive(Debug)]
pub(super) struct Guard {
    workspace: PathBuf,
    /// Every `.git` below the workspace (the workspace's own included).
    git_entries: BTreeMap<PathBuf, Snapshot>,
    /// Configuration files, surface directories, `.agent`.
    surfaces: BTreeMap<PathBuf, Snapshot>,
    /// The state files of a git operation in progress that name programs for git to run
    /// (`in_progress.rs`), and the directories they are in.
    in_progress: Vec<InProgress>,
    /// Directories made so that they could be kept read-only; removed again when empty.
    created: Vec<PathBuf>,
    /// Where the workspace's tree is kept between processes.
    cache: Option<PathBuf>,
}

/// A state file of an operation in progress (how it names programs; `None` for its directory)
/// and its state before the command.
type InProgress = (PathBuf, Option<Runs>, Snapshot);

/// The state files (and their directories) of an operation in progress in each git directory,
/// as they are before the command.
fn in_progress_state(workspace: &Path, git_dirs: &[PathBuf]) -> Vec<InProgress> {
    let mut state = Vec::new();
    for git_dir in git_dirs {
        for name in in_progress::DIRS {
            let path = git_dir.join(name);
            let snapshot = Snapshot::take(workspace, &path, false);
            state.push((path, None, snapshot));
        }
        for (name, runs) in in_progress::FILES {
            let path = git_dir.join(name);
            let snapshot = Snapshot::take(workspace, &path, false);
            state.push((path, Some(*runs), snapshot));
        }
    }
    state
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
                let snapshot = Snapshot::take(&workspace, &path, false);
                (path, snapshot)
            })
            .collect();
        let git_dirs = git_dirs(&workspace, git_entries.keys());
        let mut created = Vec::new();
        let mut plan = Mounts::default();
        let mut surface_paths: Vec<(PathBuf, bool)> = Vec::new();
        let mut held = Vec::new();
        let in_progress = in_progress_state(&workspace, &git_dirs);
        plan.git_dirs.clone_from(&git_dirs);
        for git_dir in &git_dirs {
            plan.pinned.push(git_dir.clone());
            for name in GIT_DIR_HELD {
                let dir = git_dir.join(name);
                if dir.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
                    plan.pinned.push(dir.clone());
                    held.push((dir, false));
                }
            }
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
        surface_paths.extend(held);
        let surfaces = surface_paths
            .into_iter()
            .map(|(path, is_dir)| {
                let snapshot = Snapshot::take(&workspace, &path, is_dir);
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
                in_progress,
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
            let listed = matches!(before, Snapshot::Dir { names: Some(_), .. });
            let after = Snapshot::take(&self.workspace, path, listed);
            if after != *before
                && let Some(what) = restore(&self.workspace, path, before, &after)
            {
                undone.push(what);
            }
        }
        for (path, runs, before) in &self.in_progress {
            if let Some(what) = self.check_in_progress(path, *runs, before) {
                undone.push(what);
            }
        }
        // Before the look below, so that the tree (kept between processes) never records
        // them: each command would otherwise change it twice.
        for dir in self.created.iter().rev() {
            // Only an empty directory goes: `rmdir` refuses anything else.
            if let Place::Here(entry) = beneath::place(&self.workspace, dir) {
                let _ = entry.remove_empty_dir();
            }
        }
        let now = git_entries(&self.workspace, self.cache.as_deref());
        // A repository moved (a directory holding it renamed) is the same one, not a new one.
        let known: Vec<&Snapshot> = self.git_entries.values().collect();
        for path in now {
            let after = Snapshot::take(&self.workspace, &path, false);
            match self.git_entries.get(&path) {
                Some(before) if *before == after => {}
                None if matches!(after, Snapshot::Dir { .. }) && known.contains(&&after) => {}
                Some(before @ (Snapshot::File { .. } | Snapshot::Link(_))) => {
                    if let Some(what) = restore(&self.workspace, &path, before, &after) {
                        undone.push(what);
                    }
                }
                _ => undone.push(self.block(&path)),
            }
        }
        undone
    }

    /// Takes out of a state file of a git operation in progress what the command added there
    /// for git to run when the operation is continued; moves away what cannot be checked (a
    /// link, a file too big to read, a state directory replaced by a link or a file).
    fn check_in_progress(
        &self,
        path: &Path,
        runs: Option<Runs>,
        before: &Snapshot,
    ) -> Option<String> {
        let after = Snapshot::take(&self.workspace, path, false);
        if after == *before || after.is_absent() {
            return None;
        }
        let shown = self.shown(path);
        let Some(runs) = runs else {
            // A state directory: git follows a link there to state that is not checked.
            if matches!(after, Snapshot::Dir { .. }) {
                return None;
            }
            return Some(self.move_unchecked(
                path,
                &shown,
                "`git rebase`, `cherry-pick` or `revert`",
            ));
        };
        let continued = in_progress::continued_by(runs);
        let Snapshot::File { bytes, mode } = &after else {
            return Some(self.move_unchecked(path, &shown, continued));
        };
        let old = match before {
            Snapshot::File { bytes, .. } => Some(bytes.as_slice()),
            _ => None,
        };
        let (kept, dropped) = in_progress::added_programs(runs, old, bytes)?;
        // A strategy file is one line: it goes back to what it was.
        let (kept, mode) = match (runs, before) {
            (Runs::Strategy, Snapshot::File { bytes, mode }) => (Some(bytes.clone()), *mode),
            (Runs::Strategy, _) => (None, *mode),
            _ => (Some(kept), *mode),
        };
        let Place::Here(entry) = beneath::place(&self.workspace, path) else {
            return Some(format!(
                "`{shown}` names programs the command added for git to run at the next                  {continued}, and could not be changed: do not continue that operation"
            ));
        };
        let result = entry
            .remove()
            .and_then(|()| kept.map_or(Ok(()), |kept| entry.create(&kept, mode)));
        let lines = shown_lines(&dropped);
        Some(match result {
            Ok(()) => format!(
                "took out of `{shown}` what the command added for git to run at the next                  {continued}: {lines}"
            ),
            Err(error) => format!(
                "`{shown}` names programs the command added for git to run at the next                  {continued} ({lines}), and could not be changed ({error}): do not continue                  that operation"
            ),
        })
    }

    /// Moves a state file or directory that cannot be checked out of git's sight.
    fn move_unchecked(&self, path: &Path, shown: &str, continued: &str) -> String {
        match aside(&self.workspace, path) {
            Ok(target) => format!(
                "`{shown}` was made by the command into something that cannot be checked for                  programs git would run at the next {continued}: moved to `{}`",
                self.shown(&target)
            ),
            Err(error) => format!(
                "`{shown}` was made by the command into something that cannot be checked for                  programs git would run at the next {continued}, and could not be moved away                  ({error}): do not continue that operation"
            ),
        }
    }

    /// Moves a `.git` the command made out of git's sight (kept, under a name git ignores) and
    /// drops a gitlink to it from the workspace's index.
    fn block(&self, path: &Path) -> String {
        let shown = self.shown(path);
        let target = match aside(&self.workspace, path) {
            Ok(target) => target,
            Err(error) => {
                return format!(
                    "`{shown}` was created by the command and could not be moved away ({error}): \
                     remove it before running git there"
                );
            }
        };
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

/// The lines taken out of a state file, for a report: a few of them, quoted.
fn shown_lines(lines: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut shown: Vec<String> = lines
        .iter()
        .take(SHOWN)
        .map(|line| format!("`{}`", line.trim()))
        .collect();
    if lines.len() > SHOWN {
        shown.push(format!("and {} more", lines.len() - SHOWN));
    }
    shown.join(", ")
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

/// Moves `path` out of git's sight: renamed, in its own directory, to a name git never
/// takes (kept for the person to look at). Where it went.
fn aside(workspace: &Path, path: &Path) -> std::io::Result<PathBuf> {
    let Place::Here(entry) = beneath::place(workspace, path) else {
        return Err(std::io::Error::other(
            "a directory on its way is a link or gone",
        ));
    };
    for n in 1..1000 {
        let mut name = entry.name().to_owned();
        name.push(BLOCKED_SUFFIX);
        if n > 1 {
            name.push(format!("-{n}"));
        }
        let target = path.with_file_name(&name);
        if matches!(beneath::place(workspace, &target), Place::Here(free) if free.kind().is_ok_and(|kind| kind == Kind::Missing))
        {
            entry.rename(&name)?;
            return Ok(target);
        }
    }
    Err(std::io::Error::other("no free name next to it"))
}

/// Puts `path` back as `before` was, as far as that can be done, and otherwise moves what
/// the command put there out of git's sight; says what was done. Every change goes through
/// directories reached link-free from the workspace (`beneath.rs`): where the command put a
/// link on the way, nothing is changed through it (the link's own directory is checked on
/// its own: `.git/objects`, the `.git` entries).
fn restore(workspace: &Path, path: &Path, before: &Snapshot, after: &Snapshot) -> Option<String> {
    let shown = path.display();
    // Nothing was there and nothing can be reached there now; or the way to it is gone (a
    // nested repository removed with its directory) or leads through a link, which git in
    // the workspace does not follow to it.
    if after.is_absent() && (before.is_absent() || !matches!(after, Snapshot::Missing)) {
        return None;
    }
    let Place::Here(entry) = beneath::place(workspace, path) else {
        return None;
    };
    let result = match (before, after) {
        (Snapshot::Missing | Snapshot::Gone | Snapshot::Unreachable, _) => entry
            .remove()
            .map(|()| format!("removed `{shown}`, which the command created")),
        (Snapshot::File { bytes, mode }, _) => entry
            .remove()
            .and_then(|()| entry.create(bytes, *mode))
            .map(|()| format!("restored `{shown}`, which the command changed")),
        (Snapshot::Link(target), _) => entry
            .remove()
            .and_then(|()| entry.symlink(target))
            .map(|()| format!("restored the link `{shown}`, which the command changed")),
        (
            Snapshot::Dir {
                inode,
                names: Some(names),
            },
            Snapshot::Dir {
                inode: now,
                names: Some(now_names),
            },
        ) if inode == now => {
            let new: Vec<&OsString> = now_names.difference(names).collect();
            if new.is_empty() {
                return None;
            }
            let mut gone = Vec::new();
            for name in new {
                let inner = path.join(name);
                let removed = match beneath::place(workspace, &inner) {
                    Place::Here(inner_entry) => inner_entry.remove(),
                    _ => Ok(()),
                };
                match removed {
                    Ok(()) => gone.push(format!("`{}`", inner.display())),
                    Err(error) => {
                        return Some(format!(
                            "`{}` was created by the command and could not be removed ({error})",
                            inner.display()
                        ));
                    }
                }
            }
            Ok(format!(
                "removed {}, which the command created",
                gone.join(", ")
            ))
        }
        (Snapshot::Dir { .. } | Snapshot::Large(_), Snapshot::Missing) => Ok(format!(
            "`{shown}` was removed by the command and cannot be put back as it was: check it \
             before running git or agent there"
        )),
        // Replaced (another directory, a link, a file), or too big to have kept: what is
        // there now is the command's, moved out of the way.
        (Snapshot::Dir { .. } | Snapshot::Large(_), _) => aside(workspace, path).map(|target| {
            format!(
                "`{shown}` was replaced by the command and cannot be put back as it was: the new \
                 one moved to `{}`; check it before running git or agent there",
                target.display()
            )
        }),
        (Snapshot::Other, _) => Ok(format!(
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

    /// A workspace with a repository and a nested one, each with surface files and
    /// directories; every file holds `text`.
    #[cfg(unix)]
    fn fixture(root: &Path, text: &str) {
        for repo in ["", "vendor/lib/"] {
            for dir in ["hooks", "info", "objects/info", "objects/pack", "refs"] {
                std::fs::create_dir_all(root.join(format!("{repo}.git/{dir}"))).unwrap();
            }
            for file in [
                "config",
                "hooks/pre-commit",
                "info/exclude",
                "objects/pack/p.pack",
            ] {
                std::fs::write(root.join(format!("{repo}.git/{file}")), text).unwrap();
            }
        }
        std::fs::create_dir_all(root.join(".agent")).unwrap();
        std::fs::write(root.join(".agent/settings.toml"), text).unwrap();
    }

    /// Every file below `dir` with its bytes (links not followed).
    #[cfg(unix)]
    fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .build()
            .flatten()
            .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
            .map(|entry| {
                let bytes = std::fs::read(entry.path()).unwrap();
                (entry.into_path(), bytes)
            })
            .collect()
    }

    /// The rule behind the cases: whichever directory on the way to a surface the command
    /// replaces with a link (to the same layout outside, holding other files), undoing the
    /// command's changes never writes, removes or renames anything outside.
    #[cfg(unix)]
    #[test]
    fn undoing_never_reaches_through_a_link_on_the_way() {
        let ways = [
            ".git",
            ".git/objects",
            ".git/objects/info",
            ".git/hooks",
            ".git/info",
            "vendor",
            "vendor/lib",
            "vendor/lib/.git",
            "vendor/lib/.git/hooks",
            "vendor/lib/.git/objects",
            ".agent",
        ];
        for way in ways {
            let root = tempfile::tempdir().unwrap();
            let root = root.path().canonicalize().unwrap();
            let (work, outside) = (root.join("work"), root.join("outside"));
            fixture(&work, "the workspace's\n");
            fixture(&outside, "the person's own\n");
            let kept = files(&outside);
            let (guard, _) = Guard::before(&work, false, None);
            let moved = work.join(format!("{way}.moved"));
            std::fs::rename(work.join(way), &moved).unwrap();
            std::os::unix::fs::symlink(outside.join(way), work.join(way)).unwrap();
            // And a change on the way, so that there is something to undo.
            std::fs::write(moved.join("new"), "x").unwrap();
            let undone = guard.finish();
            assert_eq!(files(&outside), kept, "through `{way}`: {undone:?}");
            assert!(outside.join(way).is_dir(), "through `{way}`: {undone:?}");
        }
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

    #[test]
    fn what_an_operation_in_progress_would_run_is_taken_out() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().canonicalize().unwrap();
        let state = work.join(".git/rebase-merge");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::create_dir_all(work.join(".git/sequencer")).unwrap();
        let todo = "pick 1 one\nexec make test\n";
        std::fs::write(state.join("git-rebase-todo"), todo).unwrap();
        std::fs::write(state.join("strategy"), "ort\n").unwrap();
        let (guard, _) = Guard::before(&work, false, None);
        std::fs::write(
            state.join("git-rebase-todo"),
            format!("{todo}exec touch pwned\npick 2 two\n"),
        )
        .unwrap();
        std::fs::write(state.join("strategy"), "x/../evil\n").unwrap();
        std::fs::write(
            work.join(".git/sequencer/opts"),
            "[options]\n\tstrategy = x/../evil\n",
        )
        .unwrap();
        let undone = guard.finish();
        assert_eq!(undone.len(), 3, "{undone:?}");
        assert!(undone[0].contains("`exec touch pwned`"), "{undone:?}");
        assert_eq!(
            std::fs::read_to_string(state.join("git-rebase-todo")).unwrap(),
            format!("{todo}pick 2 two\n")
        );
        assert_eq!(
            std::fs::read_to_string(state.join("strategy")).unwrap(),
            "ort\n"
        );
        assert_eq!(
            std::fs::read_to_string(work.join(".git/sequencer/opts")).unwrap(),
            "[options]\n"
        );

        // A state directory made a link (git follows it) is moved away; a state file made a
        // link too.
        #[cfg(unix)]
        {
            let elsewhere = root.path().join("elsewhere");
            let (guard, _) = Guard::before(&work, false, None);
            std::fs::rename(work.join(".git/sequencer"), &elsewhere).unwrap();
            std::os::unix::fs::symlink(&elsewhere, work.join(".git/sequencer")).unwrap();
            std::fs::remove_file(state.join("git-rebase-todo")).unwrap();
            std::os::unix::fs::symlink(&elsewhere, state.join("git-rebase-todo")).unwrap();
            let undone = guard.finish();
            assert_eq!(undone.len(), 2, "{undone:?}");
            assert!(work.join(".git/sequencer.agent-blocked").is_symlink());
            assert!(state.join("git-rebase-todo.agent-blocked").is_symlink());
            assert!(!work.join(".git/sequencer").exists());
        }
    }
}
