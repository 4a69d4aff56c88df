//! The Linux sandbox, in two processes. The helper (`agent-sandbox`) makes the command's
//! namespaces and mounts (steps 0 and 1, [`prepare`]) and starts itself again as the stage,
//! which restricts itself (steps 2 to 5, [`restrict`]) and becomes the command, so the command
//! and all its children inherit it while the helper, supervising them (`supervise.rs`), stays
//! outside their Landlock domain:
//!
//! 0. descriptors above 2 that the agent inherited are marked close-on-exec;
//! 1. in a private mount namespace (and a PID namespace where one can be made, so that
//!    nothing the command starts outlives it): every git configuration surface of the workspace (see
//!    `surfaces/`) and `.agent/` are bind-mounted read-only, the git directories pinned in
//!    place, the command's private temp directory bound over `/tmp`, and (for inspection
//!    commands) the workspace's secret files covered by `/dev/null`, and the terminals
//!    replaced (`/dev/pts` a pseudo-terminal file system of the command's own, `/dev/tty`
//!    `/dev/null`: no drawing on the person's screen, no reading their keys). Where no namespace can
//!    be made, the parent finds out first (`mounts_possible`), says so and asks for none of
//!    this; a helper asked for it and failing refuses to run;
//! 2. the command's own `/proc` (see [`private_proc`]): no other process's environment; and,
//!    for inspection commands, limits on CPU time and memory (`limits.rs`);
//! 3. Landlock: read and execute everywhere (or, for inspection commands, only beneath the
//!    readable paths: the workspace and the system's directories), write only beneath the writable
//!    directories and to the usual devices (the terminal devices only where step 1 replaced
//!    them with the command's own); with the network off, no TCP bind or
//!    connect (ABI 4 and later). Landlock also forbids any later (u)mount, so the
//!    command cannot undo steps 1 and 2;
//! 4. seccomp: `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)` fail (no typing into the person's
//!    terminal), and so do `prlimit` on another process and `setpriority`/`ioprio_set` on a
//!    process group or a user's processes; with the network off, `socket()`
//!    for any family but `AF_UNIX`, `io_uring_setup()` and every `connect()` fail with
//!    `EACCES` (UDP, kernels before ABI 4, and the local services behind Unix sockets: tmux,
//!    D-Bus, Docker, ssh-agent);
//!    every x32 system call (`__X32_SYSCALL_BIT`) fails the same way (`x32.rs`; the filter is
//!    `syscalls.rs`);
//! 5. Landlock scopes (ABI 6): no signals to processes outside the sandbox (the agent) and
//!    no abstract Unix sockets made outside it. Device nodes can never be created.
//!
//! Through the network proxy (`[network] mode = "allowlist"`, `--proxy`), before step 1 the
//! helper makes the command a network namespace of its own with the bridge to the proxy in it
//! (`netns.rs`), and binds the stub resolver's `resolv.conf` over `/etc/resolv.conf`; Landlock
//! then leaves TCP alone (the namespace holds nothing but the command's own servers and the
//! bridge) and seccomp refuses `socket()` for every family but `AF_INET` and `AF_INET6` (no
//! Unix socket to a service outside; `socketpair` still works) and `io_uring_setup`.
//!
//! No `unsafe` here: the crates' safe APIs do the system calls.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::HelperArgs;
use super::unshare::{map_user, unshare};

/// The Landlock ABI whose file-system rights are handled (ABI 5 adds device ioctls);
/// older kernels get what they support (the crate's best-effort mode).
const FS_ABI: ABI = ABI::V5;
/// The ABI that adds TCP bind/connect rights.
const NET_ABI: ABI = ABI::V4;

/// Device files any command may write (and use ioctls on): output sinks and randomness.
const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Terminal devices a command may write (and use ioctls on) only where its mount namespace
/// has replaced them ([`private_terminals`]): then `/dev/tty` is `/dev/null` and `/dev/ptmx`
/// and `/dev/pts` make and hold only the command's own pseudo-terminals. Elsewhere they
/// would be the person's terminals (the agent's own among them).
const TERMINAL_FILES: &[&str] = &["/dev/tty", "/dev/ptmx"];

/// Device directories (pseudo-terminals), with [`TERMINAL_FILES`].
const TERMINAL_DIRS: &[&str] = &["/dev/pts"];

/// The pseudo-terminal file system's options for the command's own instance: its own
/// numbering, a multiplexer anyone inside may open.
const DEVPTS_OPTIONS: &std::ffi::CStr = c"newinstance,ptmxmode=0666,mode=0620";
/// Shared memory, writable like the temp dir (in `workspace-write` mode only).
const SHARED_MEMORY: &str = "/dev/shm";
/// The proxy's socket in its directory (`net::proxy::SOCKET_NAME`).
pub(super) const PROXY_SOCKET: &str = "proxy.sock";
/// The resolver configuration the stub's replaces, through the proxy.
const RESOLV_CONF: &str = "/etc/resolv.conf";
/// Where the command's private temp directory is bound, when a mount namespace can be made.
const TMP: &str = "/tmp";

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
    let truncate = hard(Ruleset::default())
        .handle_access(AccessFs::Truncate)
        .and_then(Ruleset::create)
        .is_ok();
    let files = if truncate {
        "files".to_owned()
    } else {
        format!("files, {}", super::NO_TRUNCATE_RULE)
    };
    Ok(if tcp {
        format!("Landlock ({files}, TCP) + seccomp")
    } else {
        format!("Landlock ({files}) + seccomp")
    })
}

/// The supervising helper's part (step 0 and 1): the namespaces and mounts that its child,
/// the stage, and the command inherit. This process itself stays unrestricted otherwise.
/// Whether it made a PID namespace: then the command it starts next is its first process, and
/// nothing the command starts outlives that process (`supervise.rs`).
pub(super) fn prepare(args: &HelperArgs, first: &OsStr) -> Result<(bool, bool), String> {
    // Descriptors the agent inherited (from a shell, an editor, a CI runner) are not the
    // command's: they close when it starts (0, 1 and 2 are the command's own).
    close_fds::CloseFdsBuilder::new().cloexecfrom(3);
    // First: the run's network namespace, or one of the command's own (its bridge process
    // starts here, outside the namespaces still to come).
    let joined = match args.join.map(super::netns::join) {
        Some(Ok(())) => true,
        Some(Err(error)) => {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "agent: sandbox: cannot join the run's network namespace ({error}): this \
                 command has its own"
            );
            false
        }
        None => false,
    };
    if !joined && let (Some(dir), Some(pid)) = (&args.proxy, args.proxy_pid) {
        super::netns::enter(&dir.join(PROXY_SOCKET), pid, first)?;
    }
    let pid_namespace = if args.mounts() {
        // The parent checked that it can work here (`mounts_possible`): fail closed.
        protect(args).map_err(|error| {
            format!("cannot make the workspace's protected paths read-only: {error}")
        })?
    } else {
        // Best effort: without it the helper still ends what the command leaves behind.
        enter_namespaces(false).unwrap_or(false)
    };
    Ok((pid_namespace, joined))
}

/// The command's `TMPDIR` when its private temp directory is bound over `/tmp` (`--tmp`).
pub(super) fn command_tmp(args: &HelperArgs) -> Option<PathBuf> {
    args.tmp.as_ref().map(|_| PathBuf::from(TMP))
}

/// The stage's part (steps 2 to 4), just before it becomes the command: its own `/proc`, its
/// CPU time and memory limits (`limits.rs`), Landlock and seccomp.
pub(super) fn restrict(args: &HelperArgs) -> Result<(), String> {
    private_proc();
    args.limits.apply()?;
    drop_capabilities().map_err(|error| format!("cannot drop capabilities: {error}"))?;
    let mut writable = args.writable.clone();
    writable.extend(command_tmp(args));
    let status = landlock(args, &writable).map_err(|error| format!("Landlock: {error}"))?;
    if status == RulesetStatus::NotEnforced {
        // The parent saw Landlock work; refuse rather than run unrestricted.
        return Err("Landlock did not enforce the rules".to_owned());
    }
    // In the run's namespace or one of its own, TCP and UDP reach only that namespace.
    super::syscalls::filter(args.network, args.proxy.is_some() || args.join.is_some())
        .map_err(|error| format!("seccomp: {error}"))
}

/// The capabilities a command keeps where it has them (as root, or as root of its user
/// namespace): owning and changing the files Landlock lets it reach (`tar x` and `cp -a` as
/// root keep owners) and binding low ports. Every other one goes — `CAP_SYS_ADMIN` would clone
/// the mount tree without the read-only binds (`open_tree`), `CAP_DAC_READ_SEARCH` open files
/// past Landlock by handle, `CAP_PERFMON` and `CAP_BPF` read other processes' memory.
const KEPT_CAPABILITIES: rustix::thread::CapabilitySet = rustix::thread::CapabilitySet::CHOWN
    .union(rustix::thread::CapabilitySet::DAC_OVERRIDE)
    .union(rustix::thread::CapabilitySet::FOWNER)
    .union(rustix::thread::CapabilitySet::FSETID)
    .union(rustix::thread::CapabilitySet::NET_BIND_SERVICE);

/// Drops every capability but [`KEPT_CAPABILITIES`] from this process and from what it may
/// ever regain (the bounding set: root's `exec` gets no more), and the ambient ones.
fn drop_capabilities() -> std::io::Result<()> {
    use rustix::io::Errno;
    use rustix::thread::{CapabilitySet, CapabilitySets};

    let current = rustix::thread::capabilities(None)?;
    if current.permitted.contains(CapabilitySet::SETPCAP) {
        for capability in CapabilitySet::all().difference(KEPT_CAPABILITIES).iter() {
            match rustix::thread::remove_capability_from_bounding_set(capability) {
                // A capability this kernel does not know.
                Ok(()) | Err(Errno::INVAL) => {}
                Err(error) => return Err(error.into()),
            }
        }
    }
    // Without capabilities there is nothing in the ambient set (and nothing to clear it
    // with on kernels before 4.3).
    let _ = rustix::thread::clear_ambient_capability_set();
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: current.effective & KEPT_CAPABILITIES,
            permitted: current.permitted & KEPT_CAPABILITIES,
            inheritable: CapabilitySet::empty(),
        },
    )?;
    Ok(())
}

/// A `/proc` that shows the command no process outside its sandbox: the agent's
/// environment (its API keys) and every other process of the user stay unreadable, which
/// Landlock alone does not ensure for `/proc/PID/environ`. Made in a mount namespace of this
/// process's own (the supervising helper keeps the system's `/proc`): inside a PID namespace
/// the namespace's own `/proc`; elsewhere (as root) one that lists only the processes the
/// command may trace, its own (`hidepid=4`). Best effort: where the kernel allows neither
/// (no namespaces, or a container's masked `/proc`) the command sees the system's.
fn private_proc() {
    use rustix::mount::{MountFlags, mount};
    use rustix::thread::UnshareFlags;

    if unshare(UnshareFlags::NEWNS).is_err() || mounts_stay_here().is_err() {
        return;
    }
    let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    let first = rustix::process::getpid().as_raw_nonzero().get() == 1;
    if mount("proc", "/proc", "proc", flags, Some(c"hidepid=4")).is_err() && first {
        // Kernels before 5.8 know no `hidepid=4`; a namespace's own `/proc` is enough.
        let _ = mount("proc", "/proc", "proc", flags, None);
    }
}

fn landlock(
    args: &HelperArgs,
    writable: &[PathBuf],
) -> Result<RulesetStatus, landlock::RulesetError> {
    // Creating device nodes (`mknod`) would reach any disk or the kernel log as root.
    let everything = AccessFs::from_all(FS_ABI) & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let read = AccessFs::from_read(FS_ABI);
    let file_rights = AccessFs::from_file(FS_ABI);
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(FS_ABI))?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)?;
    // Through the proxy or in the run's namespace, that namespace is the boundary: TCP inside it
    // (its own servers, the bridge) is free.
    if !args.network && args.proxy.is_none() && args.join.is_none() {
        ruleset = ruleset.handle_access(AccessNet::from_all(NET_ABI))?;
    }
    let mut created = ruleset.create()?;
    // Paths that do not exist (or cannot be opened) are left out: nothing to allow.
    let open = |path: &Path| PathFd::new(path).ok();
    let reads: Vec<PathBuf> = if args.restrict_reads {
        args.readable.clone()
    } else {
        vec![PathBuf::from("/")]
    };
    for path in &reads {
        if let Some(fd) = open(path) {
            let rights = if path.is_dir() {
                read
            } else {
                read & file_rights
            };
            created = created.add_rule(PathBeneath::new(fd, rights))?;
        }
    }
    // The terminals are the command's own only where its mount namespace replaced them.
    let terminals = args.mounts();
    let terminal_files = TERMINAL_FILES.iter().filter(|_| terminals);
    for file in DEVICE_FILES.iter().chain(terminal_files) {
        if let Some(fd) = open(Path::new(file)) {
            created = created.add_rule(PathBeneath::new(fd, read | file_rights))?;
        }
    }
    let shared_memory = (!writable.is_empty()).then(|| PathBuf::from(SHARED_MEMORY));
    let dirs = TERMINAL_DIRS
        .iter()
        .filter(|_| terminals)
        .map(PathBuf::from)
        .chain(shared_memory)
        .chain(writable.iter().cloned());
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

/// Makes the private mount namespace: directly as root, else inside a new user namespace
/// that maps this user to itself. In it the pinned directories are bound onto themselves (a
/// mount point cannot be renamed away), the read-only paths bound read-only, the hidden files
/// covered by `/dev/null`, the private temp directory bound over `/tmp`, and an empty
/// `/dev/shm` of its own.
fn protect(args: &HelperArgs) -> std::io::Result<bool> {
    use rustix::mount::mount_bind;

    let pid_namespace = enter_namespaces(true)?;
    mounts_stay_here()?;
    // Outer directories first: a later bind of a parent would cover its children's mounts.
    let mut pinned: Vec<&PathBuf> = args.pinned.iter().collect();
    pinned.sort_by_key(|path| path.components().count());
    for dir in pinned.into_iter().filter(|dir| dir.is_dir()) {
        mount_bind(dir, dir)?;
    }
    for path in args.read_only.iter().filter(|path| path.exists()) {
        bind_read_only(path)?;
    }
    for file in args.hidden.iter().filter(|file| file.is_file()) {
        mount_bind("/dev/null", file)?;
    }
    // The stub resolver's configuration (through the proxy), before `/tmp` may cover it.
    if let Some(resolv) = &args.resolv
        && Path::new(RESOLV_CONF).exists()
    {
        mount_bind(resolv, RESOLV_CONF)?;
    }
    if let Some(private) = &args.tmp {
        bind_private_tmp(args, private)?;
    }
    // The bridge (started before this namespace) reaches the proxy's directory; the command
    // neither sees nor changes it, wherever it lies.
    if let Some(dir) = args.proxy.as_ref().filter(|dir| dir.is_dir()) {
        hide_directory(dir)?;
    }
    private_shared_memory(args)?;
    private_terminals()?;
    Ok(pid_namespace)
}

/// Takes the person's terminals out of the command's reach: a pseudo-terminal file system of
/// its own over `/dev/pts` (the agent's terminal and every other one of the user's are not in
/// it; a command can still make and use pseudo-terminals, `script` and `expect` work), its
/// multiplexer over `/dev/ptmx`, and `/dev/null` over `/dev/tty` (the command's controlling
/// terminal is the agent's: writing there would draw over the screen, a question among it,
/// and reading would take the person's keys). Where the kernel refuses a pseudo-terminal file
/// system of its own, an empty one (a `tmpfs`): no pseudo-terminals at all.
fn private_terminals() -> std::io::Result<()> {
    use rustix::mount::{MountFlags, mount, mount_bind};

    let pts = Path::new(TERMINAL_DIRS[0]);
    if pts.is_dir() {
        let flags = MountFlags::NOSUID | MountFlags::NOEXEC;
        if mount("devpts", pts, "devpts", flags, Some(DEVPTS_OPTIONS)).is_ok() {
            let ptmx = Path::new("/dev/ptmx");
            if ptmx.exists() && !ptmx.is_symlink() {
                mount_bind(pts.join("ptmx"), ptmx)?;
            }
        } else {
            let flags = flags | MountFlags::NODEV;
            mount("tmpfs", pts, "tmpfs", flags, Some(c"mode=755"))?;
        }
    }
    let tty = Path::new(TERMINAL_FILES[0]);
    if tty.exists() {
        mount_bind("/dev/null", tty)?;
    }
    Ok(())
}

/// Binds the command's private temp directory over `/tmp`, with every path it is given that
/// lies below `/tmp` (a workspace there, with the read-only and hidden binds already made in
/// it) bound back in place inside it first: the command gets a `/tmp` of its own and still
/// finds its workspace where it was. Recursive binds carry the binds made below each path.
fn bind_private_tmp(args: &HelperArgs, private: &Path) -> std::io::Result<()> {
    use rustix::mount::mount_bind_recursive;

    let tmp = Path::new(TMP);
    for path in kept_below(args, tmp, private) {
        let Ok(relative) = path.strip_prefix(tmp) else {
            continue;
        };
        let target = private.join(relative);
        if path.is_dir() {
            std::fs::create_dir_all(&target)?;
        } else {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::File::create(&target)?;
        }
        mount_bind_recursive(&path, &target)?;
    }
    mount_bind_recursive(private, tmp)?;
    Ok(())
}

/// The existing paths of `args` strictly below `tmp`, outermost only (an inner one comes
/// along with its outer one), never the private temp directory itself or a path inside it.
fn kept_below(args: &HelperArgs, tmp: &Path, private: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<&PathBuf> = [
        &args.writable,
        &args.read_only,
        &args.pinned,
        &args.hidden,
        &args.readable,
    ]
    .into_iter()
    .flatten()
    .filter(|path| path.starts_with(tmp) && *path != tmp && !path.starts_with(private))
    .filter(|path| path.exists())
    .collect();
    paths.sort_by_key(|path| path.components().count());
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in paths {
        if !kept.iter().any(|outer| path.starts_with(outer)) {
            kept.push(path.clone());
        }
    }
    kept
}

/// Covers `dir` with an empty read-only file system of the namespace's own.
fn hide_directory(dir: &Path) -> std::io::Result<()> {
    use rustix::mount::{MountFlags, mount};
    let flags = MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    Ok(mount(
        "tmpfs",
        dir,
        "tmpfs",
        flags,
        Some(c"mode=0500,size=4k"),
    )?)
}

/// A `/dev/shm` of the command's own, empty, gone with its mount namespace: nothing the
/// command leaves there outlives it, and it sees no other program's shared memory. Skipped
/// where a path the command is given lies below `/dev/shm` (the new mount would hide it).
fn private_shared_memory(args: &HelperArgs) -> std::io::Result<()> {
    use rustix::mount::{MountFlags, mount};

    let shm = Path::new(SHARED_MEMORY);
    let given = [
        &args.writable,
        &args.read_only,
        &args.pinned,
        &args.hidden,
        &args.readable,
    ];
    if !shm.is_dir()
        || given
            .iter()
            .flat_map(|paths| paths.iter())
            .any(|p| p.starts_with(shm))
    {
        return Ok(());
    }
    let flags = MountFlags::NOSUID | MountFlags::NODEV;
    Ok(mount("tmpfs", shm, "tmpfs", flags, Some(c"mode=1777"))?)
}

/// Makes every mount of the mount namespace just made private: nothing mounted here reaches
/// the namespace it was copied from.
fn mounts_stay_here() -> rustix::io::Result<()> {
    use rustix::mount::{MountPropagationFlags, mount_change};
    mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
}

/// Makes a private mount namespace (when `mounts`) and a PID namespace (when it can be made;
/// see `supervise.rs`): directly as root, else inside a new user namespace that maps this
/// user to itself. Whether the PID namespace was made.
///
/// # Errors
/// When `mounts` and no mount namespace can be made.
fn enter_namespaces(mounts: bool) -> std::io::Result<bool> {
    use rustix::thread::UnshareFlags as Flags;

    // Read before a user namespace is made: inside it, unmapped, they read as nobody.
    let ids = (
        rustix::process::getuid().as_raw(),
        rustix::process::getgid().as_raw(),
    );
    let pid = if std::env::var_os(super::TEST_NO_PID_NAMESPACE_ENV).is_some_and(|v| v == "1") {
        Flags::empty()
    } else {
        Flags::NEWPID
    };
    let mount = if mounts { Flags::NEWNS } else { Flags::empty() };
    // With the PID namespace if it can be made; without it only when mounts are needed.
    let mut tries = vec![mount | pid, mount | pid | Flags::NEWUSER];
    if mounts && !pid.is_empty() {
        tries.extend([mount, mount | Flags::NEWUSER]);
    }
    // A user namespace alone is of no use.
    for flags in tries
        .into_iter()
        .filter(|flags| !flags.difference(Flags::NEWUSER).is_empty())
    {
        if unshare(flags).is_ok() {
            if flags.contains(Flags::NEWUSER) {
                map_user(ids)?;
            }
            return Ok(flags.contains(Flags::NEWPID));
        }
    }
    if mounts {
        return Err(std::io::Error::other(
            "no mount namespace can be made (not root, and no user namespaces)",
        ));
    }
    Ok(false)
}

/// Binds `path` onto itself and makes that mount read-only.
fn bind_read_only(path: &Path) -> std::io::Result<()> {
    use rustix::mount::{MountFlags, mount_bind, mount_remount};
    // A remount must keep the flags the kernel locked on the original mount.
    let kept = rustix::fs::statvfs(path).map_or(MountFlags::empty(), |stat| {
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
    mount_bind(path, path)?;
    mount_remount(path, MountFlags::BIND | MountFlags::RDONLY | kept, "")?;
    Ok(())
}
