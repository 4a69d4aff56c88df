//! The two system calls every namespace the helper makes goes through (Linux): `unshare(2)`,
//! and the user mapping of a user namespace just made. Below `linux.rs` (the command's
//! namespaces) and `netns.rs` (its network namespace), which both use them.

/// `unshare(2)` for namespaces only. rustix deprecated its safe wrapper because
/// `CLONE_FILES` is unsound in a multi-threaded process; this helper is single-threaded
/// and never passes `CLONE_FILES`.
#[allow(deprecated)]
pub(super) fn unshare(flags: rustix::thread::UnshareFlags) -> std::io::Result<()> {
    Ok(rustix::thread::unshare(flags)?)
}

/// Maps this user and group (`ids`, as they were outside) to themselves in the user namespace
/// just made.
pub(super) fn map_user((uid, gid): (u32, u32)) -> std::io::Result<()> {
    // Older kernels lack `setgroups`; the maps below still work there.
    let _ = std::fs::write("/proc/self/setgroups", "deny");
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))
}
