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
//! directories pinned in place (`linux.rs`); a missing directory inside a git directory is
//! made first and removed again when it stayed empty. A missing `.agent/` is not made (it
//! would show in the command's listings of the workspace): one the command makes is removed
//! after it, with what it holds. What a mount cannot express — a file created where there was
//! none (`commondir`, `config.worktree`, an included file), a new `.git` anywhere below the
//! workspace, a gitlink to it — is checked after the command: [`Guard::finish`] compares each
//! surface with its state before, undoes the change and says what it undid. Where no mount
//! namespace can be made, the same check is all there is (and a command could act on a change
//! while it still runs).
//!
//! Git's own writes stay possible: objects, refs, logs, the index, `HEAD` and the lock files
//! next to them are not surfaces. `git gc` cannot write `objects/info/` (commit-graph, packs
//! list) inside the sandbox; git treats that as optional.

mod find;
mod snapshot;
mod undo;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::beneath::{self, Place};
use super::in_progress::{self, Runs};
pub(super) use find::outside_git_dirs;
use find::{
    AGENT_DIR, GIT_DIR_DIRS, GIT_DIR_FILES, GIT_DIR_HELD, MAX_INSIDE_SURFACES, contents, git_dirs,
    git_entries, included_files,
};
use snapshot::Snapshot;
use undo::{aside, drop_gitlink, restore, shown_lines};

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
#[derive(Debug, Clone)]
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
            // A missing `.agent` is not made: the command would see it (`ls -a`), and the
            // check after the command removes one it made, settings and all, before anything
            // reads them (the agent reads them when a run starts).
            if *is_dir
                && missing
                && mounts
                && *path != agent
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

    /// The directories made for the command (to be removed when it ends), no longer this
    /// guard's to remove.
    pub(super) fn take_created(&mut self) -> Vec<PathBuf> {
        std::mem::take(&mut self.created)
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
