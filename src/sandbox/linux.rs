//! The Linux sandbox, applied by the helper process to itself just before it `exec`s
//! the command, so the command and all its children inherit it:
//!
//! 1. `.git/hooks`, `.git/config` and `.agent/` (the policy's read-only paths) are
//!    bind-mounted read-only in a private mount namespace, `.git` pinned in place. Where no
//!    namespace can be made, the parent finds out first (`mounts_possible`), says so and
//!    passes no read-only paths; a helper asked to protect them and failing refuses to run;
//! 2. Landlock: read and execute everywhere, write only beneath the writable
//!    directories and to the usual devices; with the network off, no TCP bind or
//!    connect (ABI 4 and later). Landlock also forbids any later (u)mount, so the
//!    command cannot undo step 1;
//! 3. seccomp: `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)` fail (no typing into the person's
//!    terminal); with the network off, `socket()` for any family but `AF_UNIX`,
//!    `io_uring_setup()` and every `connect()` fail with `EACCES` (UDP, kernels before ABI 4,
//!    and the local services behind Unix sockets: tmux, D-Bus, Docker, ssh-agent);
//! 4. Landlock scopes (ABI 6): no signals to processes outside the sandbox (the agent) and
//!    no abstract Unix sockets made outside it. Device nodes can never be created.
//!
//! No `unsafe` here: the crates' safe APIs do the system calls.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::HelperArgs;

/// The Landlock ABI whose file-system rights are handled (ABI 5 adds device ioctls);
/// older kernels get what they support (the crate's best-effort mode).
const FS_ABI: ABI = ABI::V5;
/// The ABI that adds TCP bind/connect rights.
const NET_ABI: ABI = ABI::V4;

/// Device files any command may write (and use ioctls on): output sinks, randomness,
/// the terminal.
const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];
/// `ioctl` request that pushes bytes into a terminal's input, as if typed.
const TIOCSTI: u64 = 0x5412;
/// `ioctl` request that pastes into a Linux virtual console.
const TIOCLINUX: u64 = 0x541C;

/// Device directories any command may write beneath: pseudo-terminals.
const DEVICE_DIRS: &[&str] = &["/dev/pts"];
/// Shared memory, writable like the temp dir (in `workspace-write` mode only).
const SHARED_MEMORY: &str = "/dev/shm";

/// Whether Landlock works in this kernel, without restricting this process.
pub(super) fn probe() -> Result<String, String> {
    let hard = |ruleset: Ruleset| ruleset.set_compatibility(CompatLevel::HardRequirement);
    hard(Ruleset::default())
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(Ruleset::create)
        .map_err(|error| format!("Landlock is not available in this kernel: {error}"))?;
    let tcp = hard(Ruleset::default())
        .handle_access(AccessNet::from_all(NET_ABI))
        .and_then(Ruleset::create)
        .is_ok();
    Ok(if tcp {
        "Landlock (files, TCP) + seccomp".to_owned()
    } else {
        "Landlock (files) + seccomp".to_owned()
    })
}

/// Restricts this process (and what it will `exec`) as `args` say.
pub(super) fn restrict(args: &HelperArgs) -> Result<(), String> {
    if !args.read_only.is_empty() {
        // The parent checked that it can work here (`mounts_possible`): fail closed.
        protect(&args.read_only).map_err(|error| {
            format!("cannot make the workspace's protected paths read-only: {error}")
        })?;
    }
    let status = landlock(args).map_err(|error| format!("Landlock: {error}"))?;
    if status == RulesetStatus::NotEnforced {
        // The parent saw Landlock work; refuse rather than run unrestricted.
        return Err("Landlock did not enforce the rules".to_owned());
    }
    filter_syscalls(args.network).map_err(|error| format!("seccomp: {error}"))?;
    Ok(())
}

fn landlock(args: &HelperArgs) -> Result<RulesetStatus, landlock::RulesetError> {
    // Creating device nodes (`mknod`) would reach any disk or the kernel log as root.
    let everything = AccessFs::from_all(FS_ABI) & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let read = AccessFs::from_read(FS_ABI);
    let file_rights = AccessFs::from_file(FS_ABI);
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(FS_ABI))?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)?;
    if !args.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(NET_ABI))?;
    }
    let mut created = ruleset.create()?;
    // Paths that do not exist (or cannot be opened) are left out: nothing to allow.
    let open = |path: &Path| PathFd::new(path).ok();
    if let Some(root) = open(Path::new("/")) {
        created = created.add_rule(PathBeneath::new(root, read))?;
    }
    for file in DEVICE_FILES {
        if let Some(fd) = open(Path::new(file)) {
            created = created.add_rule(PathBeneath::new(fd, read | file_rights))?;
        }
    }
    let shared_memory = (!args.writable.is_empty()).then(|| PathBuf::from(SHARED_MEMORY));
    let dirs = DEVICE_DIRS
        .iter()
        .map(PathBuf::from)
        .chain(shared_memory)
        .chain(args.writable.iter().cloned());
    for dir in dirs {
        if let Some(fd) = open(&dir) {
            let rights = if dir.is_dir() {
                everything
            } else {
                read | file_rights
            };
            created = created.add_rule(PathBeneath::new(fd, rights))?;
        }
    }
    Ok(created.restrict_self()?.ruleset)
}

/// `ioctl(TIOCSTI | TIOCLINUX)` fail with `EACCES`; with the network off, so do
/// `socket(family ≠ AF_UNIX, …)`, `io_uring_setup` and `connect`.
fn filter_syscalls(network: bool) -> Result<(), seccompiler::Error> {
    let request = |value: u64| {
        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
            .and_then(|condition| SeccompRule::new(vec![condition]))
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(
        libc::SYS_ioctl,
        vec![request(TIOCSTI)?, request(TIOCLINUX)?],
    );
    if !network {
        let not_unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            u64::from(libc::AF_UNIX.unsigned_abs()),
        )?;
        rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![not_unix])?]);
        // io_uring can create sockets without socket(2); nothing here needs it.
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
        // A Unix socket outside the sandbox is a local service (tmux, D-Bus, Docker,
        // ssh-agent) that acts for the user: with the network off, no connecting at all.
        rules.insert(libc::SYS_connect, Vec::new());
    }
    let arch = std::env::consts::ARCH.try_into()?;
    let errno = u32::try_from(libc::EACCES).unwrap_or(13);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )?;
    let program: BpfProgram = filter.try_into()?;
    seccompiler::apply_filter(&program)
}

/// Whether this process can make the private mount namespace `protect` needs (it is a
/// throw-away probe process: the namespace goes with it).
pub(super) fn mounts_possible() -> bool {
    use rustix::thread::UnshareFlags;
    if unshare(UnshareFlags::NEWNS).is_ok() {
        return true;
    }
    let uid = rustix::process::getuid().as_raw();
    unshare(UnshareFlags::NEWUSER | UnshareFlags::NEWNS).is_ok()
        && std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1")).is_ok()
}

/// Makes `dirs` (directories or files) read-only in a private mount namespace: directly as
/// root, else inside a new user namespace that maps this user to itself. A missing `hooks`
/// directory is created first; a `.git` directory holding protected paths is bind-mounted
/// onto itself, so it cannot be renamed away (a mount point cannot be moved).
fn protect(dirs: &[PathBuf]) -> std::io::Result<()> {
    for dir in dirs {
        if dir.ends_with(".git/hooks") && !dir.exists() {
            let _ = std::fs::create_dir(dir);
        }
    }
    use rustix::mount::{
        MountFlags, MountPropagationFlags, mount_bind, mount_change, mount_remount,
    };
    use rustix::thread::UnshareFlags;

    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    if unshare(UnshareFlags::NEWNS).is_err() {
        unshare(UnshareFlags::NEWUSER | UnshareFlags::NEWNS)?;
        // Older kernels lack `setgroups`; the maps below still work there.
        let _ = std::fs::write("/proc/self/setgroups", "deny");
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    // Nothing mounted here may reach the parent namespace.
    mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )?;
    let mut pinned: Vec<&Path> = Vec::new();
    for git in dirs.iter().filter_map(|dir| dir.parent()) {
        if git.ends_with(".git") && !pinned.contains(&git) {
            mount_bind(git, git)?;
            pinned.push(git);
        }
    }
    for dir in dirs.iter().filter(|dir| dir.exists()) {
        // A remount must keep the flags the kernel locked on the original mount.
        let kept = rustix::fs::statvfs(dir).map_or(MountFlags::empty(), |stat| {
            use rustix::fs::StatVfsMountFlags as St;
            [
                (St::NOSUID, MountFlags::NOSUID),
                (St::NODEV, MountFlags::NODEV),
                (St::NOEXEC, MountFlags::NOEXEC),
                (St::NOATIME, MountFlags::NOATIME),
                (St::NODIRATIME, MountFlags::NODIRATIME),
                (St::RELATIME, MountFlags::RELATIME),
            ]
            .into_iter()
            .filter(|(st, _)| stat.f_flag.contains(*st))
            .fold(MountFlags::empty(), |flags, (_, mount)| flags | mount)
        });
        mount_bind(dir, dir)?;
        mount_remount(dir, MountFlags::BIND | MountFlags::RDONLY | kept, "")?;
    }
    Ok(())
}

/// `unshare(2)` for namespaces only. rustix deprecated its safe wrapper because
/// `CLONE_FILES` is unsound in a multi-threaded process; this helper is single-threaded
/// and never passes `CLONE_FILES`.
#[allow(deprecated)]
fn unshare(flags: rustix::thread::UnshareFlags) -> std::io::Result<()> {
    Ok(rustix::thread::unshare(flags)?)
}
