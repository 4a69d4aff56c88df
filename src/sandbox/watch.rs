//! Watching a workspace's directories across the commands of a run or session (inotify,
//! through `notify`), so that after a command only the directories whose entries changed are
//! read again (`tree.rs`), not every directory `stat`ed: the sandbox's cost per command then
//! does not grow with the workspace.
//!
//! What a look may trust:
//! - Every directory of the tree is watched before it is read (a new one is watched, with
//!   everything below it, before the tree walks it), so an entry made after the read is
//!   reported, and one made before is read.
//! - A directory made or moved in (from anywhere, outside the workspace included) is reported
//!   as *fresh*: whatever was known below its path is forgotten and it is walked again, watched
//!   first. So nested `mkdir -p a/b/c/.git` and a `rename` of a tree holding a `.git` are seen
//!   however fast they happened.
//! - Before a look, a cookie file is made in a directory of the agent's own that the same
//!   watcher watches: inotify reports in order, so once the cookie is reported, everything
//!   the command did before is too.
//! - A queue overflow, a watch limit reached, an error or a cookie not reported in time: the
//!   watch stops or asks for a rescan, and the tree falls back to its full look (a `stat` of
//!   every directory), as in a one-shot `agent exec`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process watches the workspaces it looks at (a run or a session): set once at
/// its start. A one-shot `agent exec` does not: starting a watch costs more than one look.
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Makes this process watch the workspaces its commands run in (see the module's text).
pub fn watch_workspaces() {
    WATCHING.store(true, Ordering::Relaxed);
}

pub(super) fn watching() -> bool {
    WATCHING.load(Ordering::Relaxed)
}

/// What changed since the last look, as the watch saw it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Changes {
    /// Directories whose entries changed (or that were removed or moved away).
    pub dirty: BTreeSet<PathBuf>,
    /// Paths made or moved in: to walk again whole.
    pub fresh: BTreeSet<PathBuf>,
}

/// Whether an event's path lies where the tree never looks: outside the workspace, or inside
/// one of its git directories (a `.git` component before its last one).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn outside_the_tree(root: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(root) else {
        return true;
    };
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        if components.peek().is_some() && component.as_os_str() == ".git" {
            return true;
        }
    }
    false
}

#[cfg(target_os = "linux")]
pub(super) use linux::Watch;

#[cfg(target_os = "linux")]
mod linux {
    use super::{Changes, outside_the_tree};
    use notify::event::{CreateKind, ModifyKind, RenameMode};
    use notify::{Event, EventKind, RecursiveMode, Watcher as _};
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::Duration;

    /// How long a look waits for its cookie to be reported before it stops watching.
    const COOKIE_WAIT: Duration = Duration::from_secs(2);

    /// What the watcher's thread has seen since the last look.
    #[derive(Debug, Default)]
    struct Seen {
        changes: Changes,
        /// Events were lost (queue overflow): the next look is a full one.
        rescan: bool,
        /// The watch cannot be trusted any more (a watch limit, a read error).
        broken: bool,
        /// The cookies reported.
        cookies: Vec<PathBuf>,
    }

    type Shared = Arc<(Mutex<Seen>, Condvar)>;

    /// A workspace watched, and the agent's directory its cookies are made in.
    pub(in crate::sandbox) struct Watch {
        watcher: notify::INotifyWatcher,
        shared: Shared,
        cookie_dir: PathBuf,
        cookies: u64,
    }

    impl std::fmt::Debug for Watch {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Watch")
                .field("cookie_dir", &self.cookie_dir)
                .finish_non_exhaustive()
        }
    }

    fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Seen> {
        shared
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps what `event` says about the directories below `root` in `seen`.
    fn note(seen: &mut Seen, root: &Path, cookie_dir: &Path, event: Event) {
        if event.need_rescan() {
            seen.rescan = true;
        }
        let fresh = matches!(
            event.kind,
            EventKind::Create(CreateKind::Folder | CreateKind::Any | CreateKind::Other)
                | EventKind::Modify(ModifyKind::Name(
                    RenameMode::To | RenameMode::Both | RenameMode::Any | RenameMode::Other
                ))
                | EventKind::Any
                | EventKind::Other
        );
        let entries = fresh
            || matches!(
                event.kind,
                EventKind::Create(_)
                    | EventKind::Remove(_)
                    | EventKind::Modify(ModifyKind::Name(_))
            );
        for path in event.paths {
            if path.parent() == Some(cookie_dir) {
                if matches!(event.kind, EventKind::Create(_)) {
                    seen.cookies.push(path);
                }
                continue;
            }
            if !entries || !path.starts_with(root) || outside_the_tree(root, &path) {
                continue;
            }
            if let Some(parent) = path.parent().filter(|parent| parent.starts_with(root)) {
                seen.changes.dirty.insert(parent.to_path_buf());
            }
            if fresh {
                seen.changes.fresh.insert(path);
            } else {
                seen.changes.dirty.insert(path);
            }
        }
    }

    impl Watch {
        /// Starts watching `root` (every directory below it, not following links), with its
        /// cookies in a directory of its own in `cache`. `None` where that cannot be done.
        pub(in crate::sandbox) fn start(root: &Path, cache: &Path) -> Option<Watch> {
            static STARTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            sweep(cache);
            let cookie_dir = cache.join(format!("{COOKIE_DIR_PREFIX}{}-{n}", std::process::id()));
            std::fs::create_dir_all(&cookie_dir).ok()?;
            let shared: Shared = Arc::default();
            let handler = {
                let shared = Arc::clone(&shared);
                let root = root.to_path_buf();
                let cookie_dir = cookie_dir.clone();
                move |event: notify::Result<Event>| {
                    let mut seen = lock(&shared);
                    match event {
                        Ok(event) => note(&mut seen, &root, &cookie_dir, event),
                        Err(_) => seen.broken = true,
                    }
                    drop(seen);
                    shared.1.notify_all();
                }
            };
            let config = notify::Config::default().with_follow_symlinks(false);
            let watch = notify::INotifyWatcher::new(handler, config)
                .ok()
                .map(|watcher| Watch {
                    watcher,
                    shared,
                    cookie_dir: cookie_dir.clone(),
                    cookies: 0,
                });
            let Some(mut watch) = watch else {
                let _ = std::fs::remove_dir_all(&cookie_dir);
                return None;
            };
            let dir = watch.cookie_dir.clone();
            (watch
                .watcher
                .watch(&dir, RecursiveMode::NonRecursive)
                .is_ok()
                && watch.add(root))
            .then_some(watch)
        }

        /// Watches `dir` and every directory below it. Whether that worked (else the watch
        /// can no longer be trusted: a watch limit reached).
        pub(in crate::sandbox) fn add(&mut self, dir: &Path) -> bool {
            let added = self.watcher.watch(dir, RecursiveMode::Recursive).is_ok();
            if !added {
                lock(&self.shared).broken = true;
            }
            added
        }

        /// Stops trusting the watch: a directory of the tree could not be read, so what it
        /// holds is unknown, and a later change that makes it readable (a `chmod` of it or of
        /// a directory above it) is not an entry change the watch would report. Every later
        /// look is a full one.
        pub(in crate::sandbox) fn distrust(&mut self) {
            lock(&self.shared).broken = true;
        }

        /// What changed since the last look, once everything before now was reported; `None`
        /// when the watch cannot say (stopped, events lost): then the caller looks at
        /// everything. A watch that can no longer be trusted stays so.
        pub(in crate::sandbox) fn changes(&mut self) -> Option<Changes> {
            self.cookies += 1;
            let cookie = self.cookie_dir.join(self.cookies.to_string());
            let made = std::fs::write(&cookie, b"").is_ok();
            let mut seen = lock(&self.shared);
            if made {
                let deadline = std::time::Instant::now() + COOKIE_WAIT;
                while !seen.broken && !seen.cookies.contains(&cookie) {
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        seen.broken = true;
                        break;
                    }
                    seen = self
                        .shared
                        .1
                        .wait_timeout(seen, left)
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0;
                }
            } else {
                seen.broken = true;
            }
            seen.cookies.clear();
            let changes = std::mem::take(&mut seen.changes);
            let lost = std::mem::take(&mut seen.rescan);
            let broken = seen.broken;
            drop(seen);
            let _ = std::fs::remove_file(&cookie);
            (!broken && !lost).then_some(changes)
        }

        /// Whether the watch can still be trusted after a full look (events were lost, but
        /// the watches stand): false once it stopped.
        pub(in crate::sandbox) fn usable(&self) -> bool {
            !lock(&self.shared).broken
        }
    }

    /// The cookie directories are named this, then the process id.
    const COOKIE_DIR_PREFIX: &str = "watch-";

    /// Removes the cookie directories of processes that ended (a watch kept for the whole
    /// process is never dropped).
    fn sweep(cache: &Path) {
        let Ok(entries) = std::fs::read_dir(cache) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|name| name.strip_prefix(COOKIE_DIR_PREFIX))
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok());
            if let Some(pid) = pid
                && !Path::new("/proc").join(pid.to_string()).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }

    impl Drop for Watch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.cookie_dir);
        }
    }
}

/// No watching here: every look is a full one.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub(super) struct Watch;

#[cfg(not(target_os = "linux"))]
impl Watch {
    pub(super) fn start(_root: &Path, _cache: &Path) -> Option<Watch> {
        None
    }

    pub(super) fn add(&mut self, _dir: &Path) -> bool {
        false
    }

    pub(super) fn distrust(&mut self) {}

    pub(super) fn changes(&mut self) -> Option<Changes> {
        None
    }

    pub(super) fn usable(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_inside_git_directories_and_outside_are_not_kept() {
        let root = Path::new("/w");
        for (path, inside) in [
            ("/w/.git", false),
            ("/w/a/.git", false),
            ("/w/.git/objects", true),
            ("/w/a/.git/hooks/x", true),
            ("/w/a/.gitx/y", false),
            ("/elsewhere/x", true),
        ] {
            assert_eq!(outside_the_tree(root, Path::new(path)), inside, "{path}");
        }
    }
}
