//! The tree in a file: a header, then one record per directory, fields ended by NUL (a byte
//! no path holds). Unix only (paths as bytes); elsewhere nothing is kept.
#![cfg_attr(not(unix), allow(unused_imports, dead_code))]
use super::{Dir, Stamp, Tree};
use std::path::Path;

const MAGIC: &[u8] = b"agent-tree 1";
/// The last field: a file without it (cut short) is not read — a directory left out
/// would never be looked at again.
const END: &[u8] = b"end";
/// A tree file bigger than this is not read (a workspace of ~2 million directories).
const MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The file for `workspace` in the cache directory: a hash of its path (the path
/// itself is checked inside).
pub(super) fn file_name(workspace: &Path) -> String {
    // FNV-1a: stable across builds, unlike the standard library's hasher.
    let hash = workspace
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("tree-{hash:016x}")
}

#[cfg(unix)]
pub(super) fn save(file: &Path, tree: &Tree) {
    use std::os::unix::ffi::OsStrExt as _;
    let mut out = Vec::with_capacity(64 * (tree.dirs.len() + 1));
    let field = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend_from_slice(bytes);
        out.push(0);
    };
    field(&mut out, MAGIC);
    field(&mut out, tree.root.as_os_str().as_bytes());
    field(&mut out, tree.looked.to_string().as_bytes());
    field(&mut out, tree.dirs.len().to_string().as_bytes());
    for (path, dir) in &tree.dirs {
        field(&mut out, path.as_os_str().as_bytes());
        let numbers = format!(
            "{} {} {} {} {}",
            dir.stamp.inode,
            dir.stamp.changed.0,
            dir.stamp.changed.1,
            u8::from(dir.git),
            dir.secrets.len()
        );
        field(&mut out, numbers.as_bytes());
        for name in &dir.secrets {
            field(&mut out, name.as_bytes());
        }
    }
    field(&mut out, END);
    super::super::write_private(file, &out);
}

#[cfg(not(unix))]
pub(super) fn save(_file: &Path, _tree: &Tree) {}

#[cfg(unix)]
pub(super) fn load(file: &Path, workspace: &Path) -> Option<Tree> {
    use std::ffi::OsStr;
    use std::io::Read as _;
    use std::os::unix::ffi::OsStrExt as _;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(MAX_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    let mut fields = bytes.split(|byte| *byte == 0);
    if fields.next()? != MAGIC || fields.next()? != workspace.as_os_str().as_bytes() {
        return None;
    }
    let number = |field: &[u8]| std::str::from_utf8(field).ok()?.parse::<i64>().ok();
    let looked = number(fields.next()?)?;
    let count = usize::try_from(number(fields.next()?)?).ok()?;
    let mut tree = Tree {
        root: workspace.to_path_buf(),
        looked,
        dirs: std::collections::BTreeMap::new(),
    };
    for _ in 0..count {
        let path = Path::new(OsStr::from_bytes(fields.next()?));
        let numbers = std::str::from_utf8(fields.next()?).ok()?;
        let mut numbers = numbers.split(' ').map(str::parse::<i64>);
        let mut next = || numbers.next()?.ok();
        let inode = u64::try_from(next()?).ok()?;
        let changed = (next()?, next()?);
        let git = next()? == 1;
        let secrets = (0..usize::try_from(next()?).ok()?)
            .map(|_| fields.next().map(|name| OsStr::from_bytes(name).to_owned()))
            .collect::<Option<Vec<_>>>()?;
        if !path.starts_with(workspace) {
            return None;
        }
        let stamp = Stamp { inode, changed };
        let dir = Dir {
            stamp,
            git,
            secrets,
        };
        tree.dirs.insert(path.to_path_buf(), dir);
    }
    let whole = fields.next()? == END && fields.next()? == b"" && fields.next().is_none();
    (whole && tree.dirs.len() == count).then_some(tree)
}

#[cfg(not(unix))]
pub(super) fn load(_file: &Path, _workspace: &Path) -> Option<Tree> {
    None
}
