//! Nested repositories a run makes. Git never lists the files of an untracked directory
//! that holds a `.git`: it names the directory (`x/`), and a snapshot leaves it out as it
//! leaves out a nested repository that was there before. A run could then hide what it
//! writes behind a `git init x` — out of `agent diff`, the summary's count and undo. So a
//! nested repository that the run's first snapshot did not leave out is the run's work
//! like any directory: its files are listed here (never a `.git` inside it, never through
//! a link), with the run's fixed ignore rules, up to [`MAX_UNTRACKED_DIR_FILES`].

use std::path::{Path, PathBuf};

use super::MAX_UNTRACKED_DIR_FILES;
use super::git;
use super::record::Snapshot;

/// The files of the nested repositories among `skipped` (git's `dir/` entries) that
/// `before` (the run's first snapshot) did not leave out, moved into `untracked`; those of
/// more than [`MAX_UNTRACKED_DIR_FILES`] files stay left out (and are said in the summary).
pub(crate) fn open_new_repositories(
    workspace: &Path,
    rules: &[u8],
    before: &Snapshot,
    skipped: &mut Vec<Vec<u8>>,
    untracked: &mut Vec<Vec<u8>>,
) {
    let mut matcher: Option<ignore::gitignore::Gitignore> = None;
    skipped.retain(|dir| {
        if !dir.ends_with(b"/") || before.misses(dir) {
            return true;
        }
        let matcher = matcher.get_or_insert_with(|| rules_matcher(workspace, rules));
        let Some(files) = files_under(workspace, &git::path_of(dir), matcher) else {
            return true;
        };
        untracked.extend(files);
        false
    });
}

/// The fixed rules as a matcher (the `ignore` crate reads git's syntax); a line it cannot
/// read is passed over, so the matcher ignores less, never more.
fn rules_matcher(workspace: &Path, rules: &[u8]) -> ignore::gitignore::Gitignore {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(workspace);
    for line in String::from_utf8_lossy(rules).lines() {
        let _ = builder.add_line(None, line);
    }
    builder
        .build()
        .unwrap_or_else(|_| ignore::gitignore::Gitignore::empty())
}

/// The files and links under `dir` (relative to `workspace`), as git's bytes, that `rules`
/// do not ignore; `None` when there are more than [`MAX_UNTRACKED_DIR_FILES`].
fn files_under(
    workspace: &Path,
    dir: &Path,
    rules: &ignore::gitignore::Gitignore,
) -> Option<Vec<Vec<u8>>> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(relative) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(workspace.join(&relative)) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_name() == ".git" {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = relative.join(entry.file_name());
            if rules
                .matched_path_or_any_parents(workspace.join(&path), kind.is_dir())
                .is_ignore()
            {
                continue;
            }
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() || kind.is_symlink() {
                if files.len() == MAX_UNTRACKED_DIR_FILES {
                    return None;
                }
                files.push(git::bytes_of(&path));
            }
        }
    }
    Some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matcher_reads_the_anchored_rules_as_git_does() {
        let root = Path::new("/w");
        let rules = b"*.tmp\n/n/**/*.log\n!/n/b/**/keep.log\n/n/s\\ p\\[1\\]/**/x\n/n/top/\n";
        let matcher = rules_matcher(root, rules);
        let ignored = |path: &str, dir: bool| {
            matcher
                .matched_path_or_any_parents(root.join(path), dir)
                .is_ignore()
        };
        assert!(ignored("n/a.tmp", false));
        assert!(ignored("n/a.log", false) && ignored("n/c/d/a.log", false));
        assert!(!ignored("n/b/keep.log", false) && !ignored("n/b/c/keep.log", false));
        assert!(ignored("n/b/other.log", false));
        assert!(ignored("n/s p[1]/q/x", false) && !ignored("n/s p1/q/x", false));
        assert!(ignored("n/top", true) && ignored("n/top/f", false));
        assert!(!ignored("n/top", false), "a file is not a directory");
        assert!(!ignored("m/a.log", false));
    }
}
