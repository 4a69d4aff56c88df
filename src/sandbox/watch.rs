//! Watching a workspace's directories across the commands of a run or session (inotify,
//! through `rustix`), so that after a command only the directories whose entries changed are
//! read again (`tree.rs`), not every directory `stat`ed: the sandbox's cost per command then
//! does not grow with the workspace.
//!
//! What a look may trust:
//! - Every directory of the tree is watched before it is read (a new one is watched, with
//!   everything below it, before the tree walks it), so an entry made after the read is
//!   reported, and one made before is read. Directories inside `.git` directories are not
//!   watched: the tree never looks there (and git's own writes there cost nothing).
//! - A directory made or moved in (from anywhere, outside the workspace included) is reported
//!   as *fresh*: whatever was known below its path is forgotten and it is walked again, watched
//!   first. So nested `mkdir -p a/b/c/.git` and a `rename` of a tree holding a `.git` are seen
//!   however fast they happened.
//! - The kernel queues an event before the system call that caused it returns: a look reads
//!   the queue until it is empty and so has everything the command did before it ended.
//! - A queue overflow, a watch limit reached, a directory that cannot be watched or read, the
//!   workspace moved away: that look (or every later one) is the full one (a `stat` of every
//!   directory), as in a one-shot `agent exec`.
//!
//! Not the `notify` crate: its thread scans every watch whenever a watched directory is
//! removed or moved (O(directories) per `rmdir`, quadratic for an `rm -rf` of a tree), and it
//! asks for opens and writes too.

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
    use rustix::fd::OwnedFd;
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;
    use std::collections::HashMap;
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::{Path, PathBuf};

    /// What a directory's watch reports: entries made, removed and moved (not opens, reads,
    /// writes or attribute changes, which the tree does not need), never through a link.
    const ENTRIES: WatchFlags = WatchFlags::CREATE
        .union(WatchFlags::DELETE)
        .union(WatchFlags::MOVED_FROM)
        .union(WatchFlags::MOVED_TO)
        .union(WatchFlags::ONLYDIR)
        .union(WatchFlags::DONT_FOLLOW);

    /// The workspace's own watch reports besides that it was removed or moved away.
    const ROOT: WatchFlags = ENTRIES
        .union(WatchFlags::DELETE_SELF)
        .union(WatchFlags::MOVE_SELF);

    /// A workspace watched: one inotify instance, one watch per directory of the tree (not
    /// inside `.git` directories, where the tree never looks), read only when a look asks.
    ///
    /// No thread reads it: the kernel queues an event before the system call that caused it
    /// returns, so a look that reads the queue until it is empty has everything a command
    /// that ended did. A queue that overflowed (`max_queued_events`) says so, and that look
    /// is a full one. A removed directory costs the kernel's own `IN_IGNORED`, one map entry
    /// here — never a scan of every watch.
    pub(in crate::sandbox) struct Watch {
        fd: OwnedFd,
        root: PathBuf,
        /// The directory each watch descriptor stands for (updated when a directory moved
        /// inside the workspace is walked again: the kernel gives its watch back).
        dirs: HashMap<i32, PathBuf>,
        /// The watch cannot be trusted any more (a watch limit, a directory that could not be
        /// watched or read, the workspace itself moved away).
        broken: bool,
    }

    impl std::fmt::Debug for Watch {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Watch")
                .field("root", &self.root)
                .field("dirs", &self.dirs.len())
                .field("broken", &self.broken)
                .finish_non_exhaustive()
        }
    }

    /// Keeps what an event about `path` (with `flags`) says about the tree in `changes`.
    fn note(changes: &mut Changes, root: &Path, path: PathBuf, flags: ReadFlags) {
        let fresh = flags.contains(ReadFlags::MOVED_TO)
            || flags.contains(ReadFlags::CREATE | ReadFlags::ISDIR);
        let entries = fresh
            || flags.intersects(ReadFlags::CREATE | ReadFlags::DELETE | ReadFlags::MOVED_FROM);
        if !entries || !path.starts_with(root) || outside_the_tree(root, &path) {
            return;
        }
        if let Some(parent) = path.parent().filter(|parent| parent.starts_with(root)) {
            changes.dirty.insert(parent.to_path_buf());
        }
        if fresh {
            changes.fresh.insert(path);
        } else {
            changes.dirty.insert(path);
        }
    }

    impl Watch {
        /// Starts watching `root` and every directory below it (not following links, not
        /// inside `.git` directories). `None` where that cannot be done.
        pub(in crate::sandbox) fn start(root: &Path) -> Option<Watch> {
            let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?;
            let wd = inotify::add_watch(&fd, root, ROOT).ok()?;
            let mut watch = Watch {
                fd,
                root: root.to_path_buf(),
                dirs: HashMap::from([(wd, root.to_path_buf())]),
                broken: false,
            };
            watch.add(root).then_some(watch)
        }

        /// Watches `dir` and every directory below it, each before it is read (so that an
        /// entry made after the read is reported). Whether that worked (else the watch can no
        /// longer be trusted: a watch limit reached, a directory that cannot be watched).
        pub(in crate::sandbox) fn add(&mut self, dir: &Path) -> bool {
            let mut stack = vec![dir.to_path_buf()];
            while let Some(dir) = stack.pop() {
                let flags = if dir == self.root { ROOT } else { ENTRIES };
                match inotify::add_watch(&self.fd, &dir, flags) {
                    Ok(wd) => {
                        self.dirs.insert(wd, dir.clone());
                    }
                    // Gone or replaced by a link since its parent was read: the parent's
                    // watch reports that.
                    Err(Errno::NOENT | Errno::NOTDIR) => continue,
                    // The watch limit (`ENOSPC`), a directory this user cannot read …
                    Err(_) => {
                        self.broken = true;
                        return false;
                    }
                }
                // One that cannot be read is the tree's to distrust (it reads it next).
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    if entry.file_name() != ".git"
                        && entry.file_type().is_ok_and(|kind| kind.is_dir())
                    {
                        stack.push(entry.path());
                    }
                }
            }
            true
        }

        /// Stops trusting the watch: a directory of the tree could not be read, so what it
        /// holds is unknown, and a later change that makes it readable (a `chmod` of it or of
        /// a directory above it) is not an entry change the watch would report. Every later
        /// look is a full one.
        pub(in crate::sandbox) fn distrust(&mut self) {
            self.broken = true;
        }

        /// What changed since the last look: every event queued until now. `None` when the
        /// watch cannot say (stopped, events lost): then the caller looks at everything. A
        /// watch that can no longer be trusted stays so.
        pub(in crate::sandbox) fn changes(&mut self) -> Option<Changes> {
            let mut changes = Changes::default();
            let mut lost = false;
            let mut buffer = [MaybeUninit::<u8>::uninit(); 8192];
            let mut events = inotify::Reader::new(&self.fd, &mut buffer);
            loop {
                let event = match events.next() {
                    Ok(event) => event,
                    Err(Errno::INTR) => continue,
                    Err(Errno::AGAIN) => break,
                    Err(_) => {
                        self.broken = true;
                        break;
                    }
                };
                let flags = event.events();
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    lost = true;
                } else if flags.contains(ReadFlags::IGNORED) {
                    self.dirs.remove(&event.wd());
                } else if flags
                    .intersects(ReadFlags::UNMOUNT | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF)
                {
                    // The workspace itself removed or moved away (or a file system below it
                    // unmounted): nothing here can be trusted.
                    self.broken = true;
                } else if let Some(dir) = self.dirs.get(&event.wd()) {
                    let path = match event.file_name() {
                        Some(name) => dir.join(std::ffi::OsStr::from_bytes(name.to_bytes())),
                        None => dir.clone(),
                    };
                    note(&mut changes, &self.root, path, flags);
                }
            }
            (!self.broken && !lost).then_some(changes)
        }

        /// Whether the watch can still be trusted after a full look (events were lost, but
        /// the watches stand): false once it stopped.
        pub(in crate::sandbox) fn usable(&self) -> bool {
            !self.broken
        }
    }
}

/// No watching here: every look is a full one.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub(super) struct Watch;

#[cfg(not(target_os = "linux"))]
impl Watch {
    pub(super) fn start(_root: &Path) -> Option<Watch> {
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
