//! Undoing a command's change to a surface: putting back what was there, or moving what the
//! command made out of git's sight, and dropping a gitlink to it from the index.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::snapshot::Snapshot;
use crate::sandbox::beneath::{self, Kind, Place};

/// A name that git never takes for a repository, for a `.git` a command created.
const BLOCKED_SUFFIX: &str = ".agent-blocked";

/// The lines taken out of a state file, for a report: a few of them, quoted.
pub(super) fn shown_lines(lines: &[String]) -> String {
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

/// Moves `path` out of git's sight: renamed, in its own directory, to a name git never
/// takes (kept for the person to look at). Where it went.
pub(super) fn aside(workspace: &Path, path: &Path) -> std::io::Result<PathBuf> {
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
pub(super) fn restore(
    workspace: &Path,
    path: &Path,
    before: &Snapshot,
    after: &Snapshot,
) -> Option<String> {
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
        // What the command made there goes; where it cannot be removed (a directory it made
        // unwritable: `chmod 500 .agent`), it is moved out of the way.
        (Snapshot::Missing | Snapshot::Gone | Snapshot::Unreachable, _) => match entry.remove() {
            Ok(()) => Ok(format!("removed `{shown}`, which the command created")),
            Err(error) => aside(workspace, path)
                .map(|target| {
                    format!(
                        "`{shown}`, which the command created, could not be removed ({error}): \
                         moved to `{}`",
                        target.display()
                    )
                })
                .map_err(|_| error),
        },
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

/// Takes a gitlink at `relative` out of the index of the workspace's own repository, when
/// there is one. Runs git with no configuration but the repository's own (its code-running
/// settings off). Whether it did.
pub(super) fn drop_gitlink(workspace: &Path, relative: &Path) -> bool {
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
