//! The ignore rules a run's snapshots list files with, fixed when its first snapshot is
//! taken. Read live, the workspace's `.gitignore` files would let the run choose what its
//! own snapshots see: un-ignoring a person's `local.db` would make it *created* by the run
//! (and removed by `agent undo`), and `x/.gitignore` = `*` would hide `x/payload.sh` from
//! `agent diff` and undo. So the first snapshot reads the rules once — the user's global
//! excludes file (what the hermetic git reads: `$XDG_CONFIG_HOME/git/ignore`), the
//! project's `info/exclude` and every `.gitignore` git reads (never through a link) — into
//! one list of patterns anchored at the workspace root, kept in the run's record; every
//! snapshot of the run (and of its undo) lists files with that list alone
//! (`--exclude-from`, never `--exclude-standard`).
//!
//! This file owns reading and anchoring the rules, the file git reads them from, and the
//! list of what they leave out of a run's first snapshot (there before the run: undo never
//! removes it); which files to snapshot is `take.rs`'s.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::git::{self, Git};
use super::record::{StoredPath, safe_id, write_atomically};
use super::{SnapshotError, Snapshots};

/// The name of the per-directory ignore file git reads.
const GITIGNORE: &[u8] = b".gitignore";

/// Ignored paths kept in a run's first snapshot, at most (ignored directories count as one):
/// enough for any real workspace, and a record that stays small to read; past it, the
/// run's fixed rules still keep every ignored path out of its snapshots.
const MAX_IGNORED_PATHS: usize = 10_000;

/// A byte-order mark, which git skips at the start of an ignore file.
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

impl Snapshots {
    /// The file git reads the rules of `run` from: `<store>/ignore/<run id>`.
    fn rules_path(&self, run: &str) -> PathBuf {
        self.dir.join("ignore").join(safe_id(run))
    }

    /// Writes `rules` (and the line that keeps the state directory out, last, so that no
    /// workspace rule takes it back in) where git reads them for `run`; returns the path
    /// and what it holds.
    pub(crate) fn write_rules(
        &self,
        run: &str,
        rules: &[u8],
    ) -> Result<(PathBuf, Vec<u8>), SnapshotError> {
        let path = self.rules_path(run);
        let dir = self.dir.join("ignore");
        std::fs::create_dir_all(&dir).map_err(|e| SnapshotError::io("create", &dir, &e))?;
        let mut bytes = rules.to_vec();
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        bytes.extend(self.state_dir_rule());
        write_atomically(&path, &bytes)?;
        Ok((path, bytes))
    }

    /// Drops the rules file of `run` (its record is gone).
    pub(crate) fn forget_rules(&self, run: &str) {
        let _ = std::fs::remove_file(self.rules_path(run));
    }

    /// The workspace's ignore rules as they are now, anchored at its root, for a run's
    /// first snapshot. `git` is the run's (its index names the tracked `.gitignore` files).
    pub(crate) fn freeze_rules(
        &self,
        git: &Git,
        run: &str,
        deadline: Instant,
    ) -> Result<StoredPath, SnapshotError> {
        let mut rules = Vec::new();
        // Lowest first: the global file, then the project's `info/exclude`.
        let global = global_excludes_file(|name| std::env::var_os(name));
        let project = self.project(deadline);
        let exclude = project.map(|project| project.common_dir.join("info/exclude"));
        for file in [global, exclude].into_iter().flatten() {
            if let Ok(text) = std::fs::read(file) {
                anchor_rules(&mut rules, b"", &text);
            }
        }
        // Which `.gitignore` files git reads depends on the rules above them (an ignored
        // directory is never entered): listed with the global and project rules in force.
        // A `.gitignore` that ignores itself is read all the same: `-x` wins over them all.
        let (base, _) = self.write_rules(run, &rules)?;
        let exclude = exclude_from(&base);
        let listed = git.run(
            &[
                "ls-files".as_ref(),
                "-z".as_ref(),
                "--cached".as_ref(),
                "--others".as_ref(),
                "--exclude=!.gitignore".as_ref(),
                &exclude,
                "--exclude-per-directory=.gitignore".as_ref(),
            ],
            None,
            deadline,
        )?;
        // The directories holding one, by their paths.
        let mut dirs: Vec<&[u8]> = git::records(&listed.stdout)
            .filter_map(|path| match path.strip_suffix(GITIGNORE)? {
                b"" => Some(&b""[..]),
                dir => dir.strip_suffix(b"/"),
            })
            .collect();
        // Deeper files win over shallower ones, as in git: each comes after its ancestors
        // (compared by components: `a/-x` sorts before `a` as bytes).
        dirs.sort_by(|a, b| components(a).cmp(components(b)));
        dirs.dedup();
        for dir in dirs {
            let mut file = dir.to_vec();
            if !file.is_empty() {
                file.push(b'/');
            }
            file.extend_from_slice(GITIGNORE);
            let full = self.workspace.join(git::path_of(&file));
            // Git does not follow a `.gitignore` that is a link; neither does the snapshot.
            if let Some(text) = regular_file(&full) {
                anchor_rules(&mut rules, dir, &text);
            }
        }
        Ok(StoredPath::new(&rules))
    }

    /// The rule that keeps the state directory out when it is inside the workspace (an
    /// agent run in the home directory): it is never snapshotted into itself.
    fn state_dir_rule(&self) -> Vec<u8> {
        let state = self.dir.parent().and_then(Path::parent);
        let Some(inside) = state.and_then(|state| state.strip_prefix(&self.workspace).ok()) else {
            return Vec::new();
        };
        let mut line = b"/".to_vec();
        line.extend(escape_glob(&git::bytes_of(inside)));
        line.extend_from_slice(b"/\n");
        line
    }
}

/// The components of a directory path (none for the root).
fn components(dir: &[u8]) -> impl Iterator<Item = &[u8]> {
    dir.split(|b| *b == b'/').filter(|part| !part.is_empty())
}

/// `--exclude-from=RULES`, for `git ls-files` without `--exclude-standard`: the run's
/// fixed rules, and no others.
pub(super) fn exclude_from(rules: &Path) -> OsString {
    let mut arg = OsString::from("--exclude-from=");
    arg.push(rules);
    arg
}

/// The files and directories (ending in `/`) that `rules` leave out, as the run's first
/// snapshot finds them; at most [`MAX_IGNORED_PATHS`].
pub(super) fn ignored(
    git: &Git,
    rules: &Path,
    deadline: Instant,
) -> Result<Vec<StoredPath>, SnapshotError> {
    let exclude = exclude_from(rules);
    let output = git.run(
        &[
            "ls-files".as_ref(),
            "-z".as_ref(),
            "--others".as_ref(),
            "--ignored".as_ref(),
            "--directory".as_ref(),
            &exclude,
        ],
        None,
        deadline,
    )?;
    Ok(git::records(&output.stdout)
        .take(MAX_IGNORED_PATHS)
        .map(StoredPath::new)
        .collect())
}

/// The excludes file git reads when `core.excludesFile` is not set — the hermetic git
/// reads no global or system configuration, so it is this one: `$XDG_CONFIG_HOME/git/ignore`,
/// else `$HOME/.config/git/ignore`.
fn global_excludes_file(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|value| !value.is_empty());
    if let Some(config) = set("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(config).join("git").join("ignore"));
    }
    let home = set("HOME");
    #[cfg(windows)]
    let home = home.or_else(|| set("USERPROFILE"));
    home.map(|home| {
        PathBuf::from(home)
            .join(".config")
            .join("git")
            .join("ignore")
    })
}

/// The bytes of `path` when it is a regular file (a link is not followed).
fn regular_file(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    std::fs::read(path).ok()
}

/// Appends the patterns of the ignore file `text`, which lies in directory `dir` (git's
/// bytes, no trailing `/`; empty for the root), to `out`, rewritten to mean the same from
/// the root: a pattern with a slash before its end is relative to `dir` (`/dir/PATTERN`),
/// one without matches at any depth below it (`/dir/**/PATTERN`). Comments and blank lines
/// are left out; a byte-order mark is dropped as git drops it.
pub(crate) fn anchor_rules(out: &mut Vec<u8>, dir: &[u8], text: &[u8]) {
    let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    let prefix = escape_glob(dir);
    for line in text.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| *b == b' ') || line.starts_with(b"#") {
            continue;
        }
        if dir.is_empty() {
            out.extend_from_slice(line);
            out.push(b'\n');
            continue;
        }
        let (negated, pattern) = match line.strip_prefix(b"!") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let core = trim_trailing_spaces(pattern);
        let core = core.strip_suffix(b"/").unwrap_or(core);
        if core.is_empty() {
            continue;
        }
        if negated {
            out.push(b'!');
        }
        out.push(b'/');
        out.extend_from_slice(&prefix);
        if core.contains(&b'/') {
            out.push(b'/');
            out.extend_from_slice(pattern.strip_prefix(b"/").unwrap_or(pattern));
        } else {
            out.extend_from_slice(b"/**/");
            out.extend_from_slice(pattern);
        }
        out.push(b'\n');
    }
}

/// `pattern` without the trailing spaces git drops (a space after a backslash stays).
fn trim_trailing_spaces(pattern: &[u8]) -> &[u8] {
    let mut end = pattern.len();
    while end > 0 && pattern[end - 1] == b' ' {
        let backslashes = pattern[..end - 1]
            .iter()
            .rev()
            .take_while(|b| **b == b'\\')
            .count();
        if backslashes % 2 == 1 {
            break;
        }
        end -= 1;
    }
    &pattern[..end]
}

/// `path` with git's glob characters escaped, to be matched as itself.
fn escape_glob(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for byte in path {
        if b"*?[]\\!# ".contains(byte) {
            out.push(b'\\');
        }
        out.push(*byte);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn anchored(dir: &str, text: &str) -> String {
        let mut out = Vec::new();
        anchor_rules(&mut out, dir.as_bytes(), text.as_bytes());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn patterns_of_a_subdirectory_are_anchored_there() {
        assert_eq!(
            anchored(
                "a/b",
                "\u{feff}# comment\n\n*.log\r\nbuild/\n/top\nx/y\n!keep.log\n**/deep\n\\#hash\n  \n"
            ),
            "/a/b/**/*.log\n/a/b/**/build/\n/a/b/top\n/a/b/x/y\n!/a/b/**/keep.log\n\
             /a/b/**/deep\n/a/b/**/\\#hash\n"
        );
        assert_eq!(anchored("", "*.db\n/x/\n!y"), "*.db\n/x/\n!y\n");
        assert_eq!(anchored("s p[1]*", "f"), "/s\\ p\\[1\\]\\*/**/f\n");
        assert_eq!(anchored("d", "!\n/\n"), "", "empty patterns are dropped");
    }

    #[test]
    fn trailing_spaces_are_trimmed_as_git_does() {
        assert_eq!(trim_trailing_spaces(b"a  "), b"a");
        assert_eq!(trim_trailing_spaces(b"a\\ "), b"a\\ ");
        assert_eq!(trim_trailing_spaces(b"a\\\\ "), b"a\\\\");
    }

    #[test]
    fn the_global_excludes_file_is_the_one_git_reads_without_configuration() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| OsString::from(value))
            }
        };
        assert_eq!(
            global_excludes_file(vars(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/git/ignore"))
        );
        assert_eq!(
            global_excludes_file(vars(&[("XDG_CONFIG_HOME", ""), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.config/git/ignore"))
        );
        assert_eq!(global_excludes_file(vars(&[])), None);
    }
}
