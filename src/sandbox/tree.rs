//! Where the `.git` entries of a workspace are, kept up to date cheaply between commands.
//!
//! The first look walks the whole workspace (not inside `.git` directories, not following
//! links) and records every directory with its inode and change time. Later looks only `stat`
//! the recorded directories: adding, removing or renaming an entry changes its directory's
//! change time (`ctime`, which no program can set back: `utimensat` moves it to now), so only
//! the directories that changed are read again, and new ones walked. A command then costs a
//! `stat` per directory before and after it, not two walks.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A directory's identity and last change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    changed: (i64, i64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = path.symlink_metadata().ok()?;
    if !meta.is_dir() {
        return None;
    }
    Some(stamp_of(&meta))
}

#[cfg(unix)]
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt as _;
    Stamp {
        inode: meta.ino(),
        changed: (meta.ctime(), meta.ctime_nsec()),
    }
}

#[cfg(not(unix))]
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    // No change time here: the modification time (which a program can set back) instead.
    let changed = meta
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or((0, 0), |d| {
            (
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                i64::from(d.subsec_nanos()),
            )
        });
    Stamp { inode: 0, changed }
}

/// The directories of one workspace and the `.git` entries in them.
#[derive(Debug, Default)]
struct Tree {
    /// When the tree was last brought up to date (seconds since the epoch).
    looked: i64,
    dirs: HashMap<PathBuf, Stamp>,
    /// Every entry named `.git`, by the directory holding it.
    git: BTreeMap<PathBuf, PathBuf>,
}

impl Tree {
    /// Walks `dir` and everything below it into the tree.
    fn walk(&mut self, dir: &Path) {
        let walk = ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(|entry| entry.depth() == 0 || entry.file_name() != ".git")
            .build();
        for entry in walk.flatten() {
            let Some(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if let Ok(meta) = entry.metadata() {
                    self.dirs
                        .insert(entry.path().to_path_buf(), stamp_of(&meta));
                }
                let git = entry.path().join(".git");
                if git.symlink_metadata().is_ok() {
                    self.git.insert(entry.path().to_path_buf(), git);
                }
            }
        }
    }

    /// Brings the tree up to date: reads again the directories whose change time moved,
    /// forgets the ones gone, walks the new ones.
    fn refresh(&mut self) {
        let mut changed = Vec::new();
        let mut gone = Vec::new();
        // Change times may come from a coarse clock: a directory changed shortly before the
        // last look could change again with the same time, so it is read again anyway.
        let recent = self.looked - RECENT_SECS;
        self.looked = now_secs();
        for (dir, old) in &self.dirs {
            match stamp(dir) {
                Some(now) if now == *old && old.changed.0 < recent => {}
                Some(_) => changed.push(dir.clone()),
                None => gone.push(dir.clone()),
            }
        }
        for dir in gone {
            self.dirs.remove(&dir);
            self.git.remove(&dir);
        }
        for dir in changed {
            if let Some(now) = stamp(&dir) {
                self.dirs.insert(dir.clone(), now);
            }
            if dir.join(".git").symlink_metadata().is_ok() {
                self.git.insert(dir.clone(), dir.join(".git"));
            } else {
                self.git.remove(&dir);
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                if is_dir && entry.file_name() != ".git" && !self.dirs.contains_key(&path) {
                    self.walk(&path);
                }
            }
        }
    }

    fn entries(&self) -> BTreeSet<PathBuf> {
        self.git.values().cloned().collect()
    }
}

/// How long before a look a directory's change counts as recent (see [`Tree::refresh`]).
const RECENT_SECS: i64 = 2;

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The trees of the workspaces this process has looked at.
static TREES: Mutex<Option<HashMap<PathBuf, Tree>>> = Mutex::new(None);

/// Every entry named `.git` below `workspace` (its own included), up to date now.
pub(super) fn git_entries(workspace: &Path) -> BTreeSet<PathBuf> {
    let mut trees = TREES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let trees = trees.get_or_insert_with(HashMap::new);
    let tree = trees.entry(workspace.to_path_buf()).or_insert_with(|| {
        let mut tree = Tree {
            looked: now_secs(),
            ..Tree::default()
        };
        tree.walk(workspace);
        tree
    });
    tree.refresh();
    tree.entries()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn new_and_removed_git_entries_are_seen_without_a_walk() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().canonicalize().unwrap();
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(work.join("a/b")).unwrap();
        assert_eq!(git_entries(&work), BTreeSet::from([work.join(".git")]));
        std::fs::create_dir_all(work.join("a/b/c/.git")).unwrap();
        std::fs::write(work.join("a/.git"), "gitdir: x").unwrap();
        std::fs::create_dir_all(work.join("new/deep")).unwrap();
        std::fs::write(work.join("new/deep/.git"), "gitdir: y").unwrap();
        assert_eq!(
            git_entries(&work),
            BTreeSet::from([
                work.join(".git"),
                work.join("a/.git"),
                work.join("a/b/c/.git"),
                work.join("new/deep/.git"),
            ])
        );
        std::fs::remove_dir_all(work.join("a/b")).unwrap();
        std::fs::rename(work.join("new"), work.join("moved")).unwrap();
        assert_eq!(
            git_entries(&work),
            BTreeSet::from([
                work.join(".git"),
                work.join("a/.git"),
                work.join("moved/deep/.git"),
            ])
        );
    }
}
