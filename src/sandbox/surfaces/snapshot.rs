//! One surface's state (seen link-free from the workspace), taken before and after a command
//! and compared.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::sandbox::beneath::{self, Kind, Place};

/// Files bigger than this are not kept for restoring (configuration files are small): a
/// change to one is reported, not undone.
const MAX_KEPT_BYTES: u64 = 1024 * 1024;

/// One path's state, compared before and after a command (seen link-free from the
/// workspace: `beneath.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Snapshot {
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
    pub(super) fn take(workspace: &Path, path: &Path, list: bool) -> Snapshot {
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
    pub(super) fn is_absent(&self) -> bool {
        matches!(
            self,
            Snapshot::Missing | Snapshot::Gone | Snapshot::Unreachable
        )
    }
}
