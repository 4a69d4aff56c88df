//! The agent's own reads and changes inside the workspace after a sandboxed command: through
//! directories opened one at a time from the workspace, never following a link on the way.
//!
//! The agent runs unsandboxed; the command it just ran could have moved a directory on the
//! way to a path (`.git/objects`, the parent of a nested repository) and put a link to
//! anywhere in its place. A plain path would then take the agent's write, removal or rename
//! outside the workspace (a `~/.bashrc` written with the content of a hook). Each step here is
//! relative to a directory opened without following links (`O_NOFOLLOW | O_DIRECTORY`), so a
//! link on the way is refused ([`Place::Unreachable`]) instead of followed.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Where a path inside the workspace stands.
#[derive(Debug)]
pub(super) enum Place {
    /// Its directory exists (reached without a link): the path can be looked at and changed.
    Here(Entry),
    /// A directory on its way does not exist.
    Gone,
    /// Something on its way is not a directory, or is a link: nothing is done through it.
    Unreachable,
}

/// What one path is, seen from its parent directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    Missing,
    File {
        len: u64,
        mode: u32,
        modified: (i64, u64),
    },
    Dir {
        inode: u64,
    },
    Link,
    Other,
}

#[cfg(unix)]
mod imp {
    use super::{BTreeSet, Component, Kind, OsString, Path, PathBuf, io};
    use std::io::{Read as _, Write as _};
    use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};

    use rustix::fd::OwnedFd;
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;

    const DIRECTORY: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    /// One path, held as its parent directory (opened link-free) and its name there.
    #[derive(Debug)]
    pub(in crate::sandbox) struct Entry {
        parent: OwnedFd,
        name: OsString,
    }

    /// Opens the parent of `relative` (normal components only) beneath `root`.
    pub(super) fn entry(root: &Path, relative: &Path) -> Result<Entry, Errno> {
        let mut parent = rustix::fs::open(root, DIRECTORY, Mode::empty())?;
        let mut names: Vec<&std::ffi::OsStr> = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => names.push(name),
                // `..`, `/`: not a path beneath the root.
                _ => return Err(Errno::INVAL),
            }
        }
        let Some(name) = names.pop() else {
            return Err(Errno::INVAL);
        };
        for dir in names {
            parent = rustix::fs::openat(&parent, dir, DIRECTORY, Mode::empty())?;
        }
        Ok(Entry {
            parent,
            name: name.to_owned(),
        })
    }

    /// Whether an error opening the way means something on it is not a directory or a link
    /// (rather than missing).
    pub(super) fn unreachable(error: Errno) -> bool {
        error != Errno::NOENT
    }

    impl Entry {
        // `stat`'s fields and the raw mode differ in type between systems.
        #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
        pub(in crate::sandbox) fn kind(&self) -> io::Result<Kind> {
            let stat = match rustix::fs::statat(&self.parent, &self.name, AtFlags::SYMLINK_NOFOLLOW)
            {
                Ok(stat) => stat,
                Err(Errno::NOENT) => return Ok(Kind::Missing),
                Err(error) => return Err(error.into()),
            };
            let mode = stat.st_mode as u32;
            Ok(match FileType::from_raw_mode(mode as rustix::fs::RawMode) {
                FileType::RegularFile => Kind::File {
                    len: u64::try_from(stat.st_size).unwrap_or(u64::MAX),
                    mode: mode & 0o7777,
                    modified: (
                        stat.st_mtime as i64,
                        u64::try_from(stat.st_mtime_nsec).unwrap_or_default(),
                    ),
                },
                FileType::Directory => Kind::Dir {
                    inode: stat.st_ino as u64,
                },
                FileType::Symlink => Kind::Link,
                _ => Kind::Other,
            })
        }

        /// The first `limit` bytes of the file (not following a link).
        pub(in crate::sandbox) fn read(&self, limit: u64) -> io::Result<Vec<u8>> {
            let fd = rustix::fs::openat(
                &self.parent,
                &self.name,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            let mut bytes = Vec::new();
            std::fs::File::from(fd)
                .take(limit)
                .read_to_end(&mut bytes)?;
            Ok(bytes)
        }

        pub(in crate::sandbox) fn read_link(&self) -> io::Result<PathBuf> {
            let target = rustix::fs::readlinkat(&self.parent, &self.name, Vec::new())?;
            Ok(PathBuf::from(OsString::from_vec(target.into_bytes())))
        }

        /// The names in the directory (not following a link).
        pub(in crate::sandbox) fn names(&self) -> io::Result<BTreeSet<OsString>> {
            let dir = rustix::fs::openat(&self.parent, &self.name, DIRECTORY, Mode::empty())?;
            let mut names = BTreeSet::new();
            for entry in rustix::fs::Dir::new(dir)? {
                let name = entry?.file_name().to_bytes().to_vec();
                if name != b"." && name != b".." {
                    names.insert(OsString::from_vec(name));
                }
            }
            Ok(names)
        }

        /// Removes the entry (a directory with everything in it), when there is one.
        pub(in crate::sandbox) fn remove(&self) -> io::Result<()> {
            Ok(remove_at(&self.parent, &self.name)?)
        }

        /// Makes the file anew with `bytes` and `mode` (there must be nothing there).
        pub(in crate::sandbox) fn create(&self, bytes: &[u8], mode: u32) -> io::Result<()> {
            #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
            let mode = Mode::from_raw_mode(mode as rustix::fs::RawMode);
            let fd = rustix::fs::openat(
                &self.parent,
                &self.name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                mode,
            )?;
            // The umask took bits off: put them back.
            rustix::fs::fchmod(&fd, mode)?;
            std::fs::File::from(fd).write_all(bytes)
        }

        pub(in crate::sandbox) fn symlink(&self, target: &Path) -> io::Result<()> {
            Ok(rustix::fs::symlinkat(target, &self.parent, &self.name)?)
        }

        /// Renames the entry to `name` in the same directory.
        pub(in crate::sandbox) fn rename(&self, name: &std::ffi::OsStr) -> io::Result<()> {
            Ok(rustix::fs::renameat(
                &self.parent,
                &self.name,
                &self.parent,
                name,
            )?)
        }

        /// Removes the directory when it is empty.
        pub(in crate::sandbox) fn remove_empty_dir(&self) -> io::Result<()> {
            Ok(rustix::fs::unlinkat(
                &self.parent,
                &self.name,
                AtFlags::REMOVEDIR,
            )?)
        }

        pub(in crate::sandbox) fn name(&self) -> &std::ffi::OsStr {
            &self.name
        }
    }

    /// Removes `name` in `dir`: a directory with its contents, each opened link-free.
    fn remove_at(dir: &OwnedFd, name: &std::ffi::OsStr) -> Result<(), Errno> {
        let stat = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => return Ok(()),
            Err(error) => return Err(error),
        };
        #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
        let is_dir = FileType::from_raw_mode((stat.st_mode as u32).into()) == FileType::Directory;
        if !is_dir {
            return rustix::fs::unlinkat(dir, name, AtFlags::empty());
        }
        let inner = rustix::fs::openat(dir, name, DIRECTORY, Mode::empty())?;
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&inner)? {
            let entry_name = entry?.file_name().to_bytes().to_vec();
            if entry_name != b"." && entry_name != b".." {
                names.push(OsString::from_vec(entry_name));
            }
        }
        for entry_name in names {
            remove_at(&inner, std::ffi::OsStr::from_bytes(entry_name.as_bytes()))?;
        }
        rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
    }
}

/// Elsewhere (Windows, where no command runs sandboxed): plain paths, each directory on the
/// way checked not to be a link first.
#[cfg(not(unix))]
mod imp {
    use super::{BTreeSet, Component, Kind, OsString, Path, PathBuf, io};
    use std::io::Read as _;

    #[derive(Debug)]
    pub(in crate::sandbox) struct Entry {
        path: PathBuf,
        name: OsString,
    }

    pub(super) fn entry(root: &Path, relative: &Path) -> Result<Entry, io::ErrorKind> {
        let mut path = root.to_path_buf();
        let mut components = relative.components().peekable();
        while let Some(component) = components.next() {
            let Component::Normal(name) = component else {
                return Err(io::ErrorKind::InvalidInput);
            };
            if components.peek().is_none() {
                return Ok(Entry {
                    path: path.join(name),
                    name: name.to_owned(),
                });
            }
            path.push(name);
            match path.symlink_metadata() {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(io::ErrorKind::InvalidInput),
                Err(error) => return Err(error.kind()),
            }
        }
        Err(io::ErrorKind::InvalidInput)
    }

    pub(super) fn unreachable(error: io::ErrorKind) -> bool {
        error != io::ErrorKind::NotFound
    }

    impl Entry {
        pub(in crate::sandbox) fn kind(&self) -> io::Result<Kind> {
            let meta = match self.path.symlink_metadata() {
                Ok(meta) => meta,
                Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Kind::Missing),
                Err(error) => return Err(error),
            };
            let kind = meta.file_type();
            Ok(if kind.is_symlink() {
                Kind::Link
            } else if kind.is_dir() {
                Kind::Dir { inode: 0 }
            } else if kind.is_file() {
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or((0, 0), |d| {
                        (
                            i64::try_from(d.as_secs()).unwrap_or_default(),
                            u64::from(d.subsec_nanos()),
                        )
                    });
                Kind::File {
                    len: meta.len(),
                    mode: 0o644,
                    modified,
                }
            } else {
                Kind::Other
            })
        }

        pub(in crate::sandbox) fn read(&self, limit: u64) -> io::Result<Vec<u8>> {
            let mut bytes = Vec::new();
            std::fs::File::open(&self.path)?
                .take(limit)
                .read_to_end(&mut bytes)?;
            Ok(bytes)
        }

        pub(in crate::sandbox) fn read_link(&self) -> io::Result<PathBuf> {
            std::fs::read_link(&self.path)
        }

        pub(in crate::sandbox) fn names(&self) -> io::Result<BTreeSet<OsString>> {
            Ok(std::fs::read_dir(&self.path)?
                .flatten()
                .map(|entry| entry.file_name())
                .collect())
        }

        pub(in crate::sandbox) fn remove(&self) -> io::Result<()> {
            match self.path.symlink_metadata() {
                Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&self.path),
                Ok(_) => std::fs::remove_file(&self.path),
                Err(_) => Ok(()),
            }
        }

        pub(in crate::sandbox) fn create(&self, bytes: &[u8], _mode: u32) -> io::Result<()> {
            std::fs::write(&self.path, bytes)
        }

        pub(in crate::sandbox) fn symlink(&self, _target: &Path) -> io::Result<()> {
            Err(io::Error::other("links are not restored on this system"))
        }

        pub(in crate::sandbox) fn rename(&self, name: &std::ffi::OsStr) -> io::Result<()> {
            std::fs::rename(&self.path, self.path.with_file_name(name))
        }

        pub(in crate::sandbox) fn remove_empty_dir(&self) -> io::Result<()> {
            std::fs::remove_dir(&self.path)
        }

        pub(in crate::sandbox) fn name(&self) -> &std::ffi::OsStr {
            &self.name
        }
    }
}

pub(super) use imp::Entry;

/// Where `path` (inside `root`, both as the agent names them) stands, reached link-free.
pub(super) fn place(root: &Path, path: &Path) -> Place {
    let Ok(relative) = path.strip_prefix(root) else {
        return Place::Unreachable;
    };
    match imp::entry(root, relative) {
        Ok(entry) => Place::Here(entry),
        Err(error) if imp::unreachable(error) => Place::Unreachable,
        Err(_) => Place::Gone,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_link_on_the_way_is_never_followed() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let work = root.join("work");
        let outside = root.join("outside");
        std::fs::create_dir_all(work.join("real/inner")).unwrap();
        std::fs::create_dir_all(outside.join("inner")).unwrap();
        std::fs::write(outside.join("inner/keep"), "mine").unwrap();
        std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();

        for path in ["link/inner/keep", "link/inner/new"] {
            assert!(
                matches!(place(&work, &work.join(path)), Place::Unreachable),
                "{path}"
            );
        }
        assert!(matches!(
            place(&work, &work.join("gone/inner/x")),
            Place::Gone
        ));
        assert!(matches!(
            place(&work, &work.join("../outside/inner/keep")),
            Place::Unreachable
        ));
        // The link itself is an entry of its directory: removing it leaves its target be.
        let Place::Here(link) = place(&work, &work.join("link")) else {
            panic!("the link's directory is reachable");
        };
        assert_eq!(link.kind().unwrap(), Kind::Link);
        link.remove().unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.join("inner/keep")).unwrap(),
            "mine"
        );
        // A directory's contents go with it, a link inside it removed, not followed.
        std::os::unix::fs::symlink(&outside, work.join("real/inner/out")).unwrap();
        std::fs::write(work.join("real/inner/file"), "x").unwrap();
        let Place::Here(real) = place(&work, &work.join("real")) else {
            panic!("reachable");
        };
        real.remove().unwrap();
        assert!(!work.join("real").exists());
        assert!(outside.join("inner/keep").is_file());
        let Place::Here(new) = place(&work, &work.join("hook")) else {
            panic!("reachable");
        };
        new.create(b"#!/bin/sh\n", 0o755).unwrap();
        let meta = std::fs::metadata(work.join("hook")).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o755
        );
    }
}
