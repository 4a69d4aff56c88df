//! Undo: put every file a run changed back as it was before the run. The plan compares three
//! trees — before the run (B), after it (A) and now (C, a fresh snapshot) — so a file changed
//! again since the run ended (by a person or a later run) is a conflict, never silently
//! overwritten. Applying writes each file atomically (a temporary file renamed into place),
//! so an interrupt leaves every file either as it was or as it is restored, and records the
//! undo itself as a run that can be undone.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use super::diff::{FileChange, Side, corrupt};
use super::git::{self, Git};
use super::record::{Record, RecordKind, Snapshot, now_ms};
use super::{SnapshotError, Snapshots};

/// Reading one file's content back may take this long.
const READ_DEADLINE: Duration = Duration::from_secs(30);

/// What undo does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// The run modified it: its content before the run comes back.
    Restore,
    /// The run created it: it is removed.
    Remove,
    /// The run deleted it: it comes back.
    BringBack,
}

/// One file undo will touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Relative to the workspace.
    pub path: PathBuf,
    /// What happens to it.
    pub kind: StepKind,
    raw: Vec<u8>,
    target: Option<Side>,
}

/// What `agent undo` would do, before it does it.
#[derive(Debug, Clone)]
pub struct UndoPlan {
    /// The run being taken back.
    pub run: String,
    /// The id the undo is recorded under.
    pub undo_run: String,
    /// Files to put back, in the order they will be.
    pub steps: Vec<Step>,
    /// Files changed since the run ended: not touched unless forced.
    pub conflicts: Vec<PathBuf>,
    /// Files the snapshots did not cover (partial, skipped, unreadable, or ignored but there
    /// before the run): left alone.
    pub not_covered: Vec<PathBuf>,
    current: Snapshot,
    /// The run's record: the undo's snapshots list files with its ignore rules, and what
    /// was there before it is what was there before the undo's.
    taken_back: Record,
}

/// What an applied undo did.
#[derive(Debug, Clone, Default)]
pub struct UndoReport {
    /// The id the undo is recorded under (`agent undo` again takes it back).
    pub undo_run: String,
    /// Files put back.
    pub done: Vec<Step>,
    /// Files that could not be, and why.
    pub failed: Vec<(PathBuf, String)>,
    /// Stopped by an interrupt before the end.
    pub interrupted: bool,
}

impl Snapshots {
    /// Plans the undo of `record`'s run against the workspace as it is now.
    ///
    /// # Errors
    /// When the snapshots are damaged or missing (nothing is changed then), or the current
    /// state cannot be snapshotted.
    pub fn plan_undo(&self, record: &Record) -> Result<UndoPlan, SnapshotError> {
        let changes = self.changes(record)?;
        let (Some(before), Some(after)) = (record.snapshots.first(), record.snapshots.last())
        else {
            return Err(SnapshotError::UnknownRun(record.run.clone()));
        };
        let undo_run = format!("undo-{}-{}", now_ms(), std::process::id());
        // With the run's rules: what its snapshots left out, the undo's leave out too.
        let current = self.take_unrecorded(&undo_run, "before undo", record)?;
        let since: HashSet<Vec<u8>> = self
            .changes_between(&after.tree, &current.tree)
            .map_err(|error| corrupt(record, &error))?
            .into_iter()
            .map(|change| change.raw)
            .collect();
        self.verify_objects(record, &changes)?;
        let mut plan = UndoPlan {
            run: record.run.clone(),
            undo_run,
            steps: Vec::new(),
            conflicts: Vec::new(),
            not_covered: Vec::new(),
            current,
            taken_back: record.clone(),
        };
        for change in changes {
            if !safe_relative(&change.path) {
                return Err(SnapshotError::Corrupt {
                    run: record.run.clone(),
                    message: format!("a path leaves the workspace: `{}`", change.path.display()),
                });
            }
            // A path the run's first snapshot left out as ignored was there before the run:
            // whatever lists it now, undo never removes it.
            if [before, after, &plan.current]
                .iter()
                .any(|s| s.misses(&change.raw))
                || before.was_ignored(&change.raw)
            {
                plan.not_covered.push(change.path);
                continue;
            }
            if since.contains(&change.raw) {
                plan.conflicts.push(change.path.clone());
            }
            plan.steps.push(step(change));
        }
        // Removals first, shallow paths before deep ones: a link the run made is gone before
        // a directory of the same name comes back under it.
        plan.steps.sort_by_key(|step| {
            (
                step.kind != StepKind::Remove,
                step.path.components().count(),
            )
        });
        Ok(plan)
    }

    /// Every object the undo will read exists: checked before any file is touched.
    fn verify_objects(&self, record: &Record, changes: &[FileChange]) -> Result<(), SnapshotError> {
        let input: String = changes
            .iter()
            .filter_map(|c| c.old.as_ref())
            .filter(|side| side.mode != "160000")
            .map(|side| format!("{}\n", side.oid))
            .collect();
        if input.is_empty() {
            return Ok(());
        }
        let output = self
            .git(None)
            .run_str(
                &["cat-file", "--batch-check"],
                Some(input.as_bytes()),
                Instant::now() + READ_DEADLINE,
            )
            .map_err(|error| corrupt(record, &error))?;
        match String::from_utf8_lossy(&output.stdout)
            .lines()
            .find(|line| line.ends_with(" missing"))
        {
            Some(line) => Err(SnapshotError::Corrupt {
                run: record.run.clone(),
                message: format!("object {line}"),
            }),
            None => Ok(()),
        }
    }

    /// Applies `plan`: conflicting files only when `force`. `stop` is asked between files;
    /// `progress` hears of each file as it is done.
    ///
    /// # Errors
    /// When the undo cannot be recorded; files that fail are in the report.
    pub fn apply_undo(
        &self,
        plan: &UndoPlan,
        force: bool,
        stop: &dyn Fn() -> bool,
        progress: &mut dyn FnMut(&Step, Result<(), &str>),
    ) -> Result<UndoReport, SnapshotError> {
        let git = self.git(None);
        let conflicts: HashSet<&PathBuf> = plan.conflicts.iter().collect();
        let mut report = UndoReport {
            undo_run: plan.undo_run.clone(),
            ..UndoReport::default()
        };
        for step in &plan.steps {
            if conflicts.contains(&step.path) && !force {
                continue;
            }
            if stop() {
                report.interrupted = true;
                break;
            }
            match self.apply_step(&git, step) {
                Ok(()) => {
                    progress(step, Ok(()));
                    report.done.push(step.clone());
                }
                Err(message) => {
                    progress(step, Err(&message));
                    report.failed.push((step.path.clone(), message));
                }
            }
        }
        // The undo is a run of its own: `agent undo` again puts the changes back.
        let after = self.take_unrecorded(&plan.undo_run, "after undo", &plan.taken_back)?;
        let record = Record {
            run: plan.undo_run.clone(),
            kind: RecordKind::Undo,
            undoes: Some(plan.run.clone()),
            workspace: self.workspace.display().to_string(),
            snapshots: vec![plan.current.clone(), after],
            ignore: plan.taken_back.ignore.clone(),
        };
        self.save(&record)?;
        Ok(report)
    }

    /// Drops what planning left behind when the plan is not applied (`--dry-run`, a
    /// conflict, a no at the prompt).
    pub fn discard(&self, plan: &UndoPlan) {
        let _ = std::fs::remove_file(self.index_path(&plan.undo_run));
        self.forget_rules(&plan.undo_run);
    }

    fn apply_step(&self, git: &Git, step: &Step) -> Result<(), String> {
        let full = self.workspace.join(&step.path);
        if let Some(parent) = step.path.parent() {
            self.no_link_above(parent)?;
        }
        match &step.target {
            None => {
                match std::fs::symlink_metadata(&full) {
                    Ok(meta) if meta.is_dir() => return Err("it is a directory now".to_owned()),
                    Ok(_) => std::fs::remove_file(&full).map_err(|e| e.to_string())?,
                    Err(_) => {}
                }
                self.remove_empty_parents(&step.path);
                Ok(())
            }
            Some(side) if side.mode == "160000" => {
                Err("a nested repository: not restored".to_owned())
            }
            Some(side) => {
                let content = git
                    .run_str(
                        &["cat-file", "blob", &side.oid],
                        None,
                        Instant::now() + READ_DEADLINE,
                    )
                    .map_err(|e| e.to_string())?
                    .stdout;
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                if std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
                    return Err("it is a directory now".to_owned());
                }
                write_file(&full, &content, &side.mode).map_err(|e| e.to_string())
            }
        }
    }

    /// Refuses to write through a symbolic link inside the workspace (it may point out).
    fn no_link_above(&self, parent: &Path) -> Result<(), String> {
        let mut dir = self.workspace.clone();
        for part in parent.components() {
            dir.push(part);
            if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(format!(
                    "`{}` is a symbolic link: not written through",
                    dir.display()
                ));
            }
        }
        Ok(())
    }

    /// Removes the directories a removed file leaves empty (git records no empty directory,
    /// so one the run made for its files goes with them).
    fn remove_empty_parents(&self, path: &Path) {
        let mut dir = path.parent();
        while let Some(relative) = dir.filter(|d| !d.as_os_str().is_empty()) {
            // `remove_dir` fails on a directory that is not empty: exactly what is wanted.
            if std::fs::remove_dir(self.workspace.join(relative)).is_err() {
                break;
            }
            dir = relative.parent();
        }
    }

    /// A snapshot of the workspace now, for undo, under the undo's id but not yet recorded.
    fn take_unrecorded(
        &self,
        undo_run: &str,
        label: &str,
        taken_back: &Record,
    ) -> Result<Snapshot, SnapshotError> {
        let snapshot = self.take_with(undo_run, label, RecordKind::Undo, Some(taken_back))?;
        // `take` records it; the undo's record is written whole when the undo is applied.
        let path = self
            .dir
            .join("runs")
            .join(format!("{}.json", super::record::safe_id(undo_run)));
        let _ = std::fs::remove_file(path);
        Ok(snapshot)
    }
}

fn step(change: FileChange) -> Step {
    let kind = match (&change.old, &change.new) {
        (None, _) => StepKind::Remove,
        (Some(_), None) => StepKind::BringBack,
        (Some(_), Some(_)) => StepKind::Restore,
    };
    Step {
        path: change.path,
        kind,
        raw: change.raw,
        target: change.old,
    }
}

/// A relative path with no `..`, root or prefix: it stays inside the workspace.
fn safe_relative(path: &Path) -> bool {
    path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Writes `content` as git's `mode` (file, executable file, link) at `path`, through a
/// temporary file in the same directory and a rename.
fn write_file(path: &Path, content: &[u8], mode: &str) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(
        ".{}.agent-undo-{}",
        name.unwrap_or_default(),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&temp);
    let written = if mode == "120000" {
        make_link(&git::path_of(content), &temp)
    } else {
        std::fs::write(&temp, content).and_then(|()| set_executable(&temp, mode == "100755"))
    };
    written
        .and_then(|()| std::fs::rename(&temp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
}

#[cfg(unix)]
fn make_link(target: &Path, at: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(not(unix))]
fn make_link(_target: &Path, _at: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "symbolic links are not restored on this system",
    ))
}

#[cfg(unix)]
fn set_executable(path: &Path, executable: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut permissions = std::fs::metadata(path)?.permissions();
    let mode = permissions.mode();
    let mode = if executable {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    };
    permissions.set_mode(mode);
    std::fs::set_permissions(path, permissions)
}

#[cfg(not(unix))]
fn set_executable(_path: &Path, _executable: bool) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_are_written() {
        assert!(safe_relative(Path::new("a/b.txt")));
        assert!(!safe_relative(Path::new("../etc/passwd")));
        assert!(!safe_relative(Path::new("/etc/passwd")));
        assert!(!safe_relative(Path::new("a/../../b")));
    }

    #[cfg(unix)]
    #[test]
    fn files_links_and_modes_are_written_atomically() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        std::fs::write(&file, "old").unwrap();
        write_file(&file, b"#!/bin/sh\n", "100755").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"#!/bin/sh\n");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o100, 0o100);
        let link = dir.path().join("out");
        write_file(&link, b"/etc/hostname", "120000").unwrap();
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            PathBuf::from("/etc/hostname")
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
    }
}
