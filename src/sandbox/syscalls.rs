//! The sandbox's seccomp filter (step 4 of `linux.rs`): the system calls a command may not
//! make, or only with some arguments, and the x32 calls refused in front of it all.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// `ioctl` request that pushes bytes into a terminal's input, as if typed.
const TIOCSTI: u64 = 0x5412;
/// `ioctl` request that pastes into a Linux virtual console.
const TIOCLINUX: u64 = 0x541C;

/// `setpriority`'s `which` for one process (or thread): not a process group (`PRIO_PGRP`)
/// or a user's processes (`PRIO_USER`).
const PRIO_PROCESS: u64 = 0;

/// The bits of `socket(2)`'s type that name the kind (the rest are `SOCK_CLOEXEC`,
/// `SOCK_NONBLOCK`).
const SOCKET_TYPE_MASK: u64 = 0xf;

/// `ioprio_set`'s `which` for one process (`<linux/ioprio.h>`): not `IOPRIO_WHO_PGRP` (2)
/// or `IOPRIO_WHO_USER` (3).
const IOPRIO_WHO_PROCESS: u64 = 1;

/// `ioctl(TIOCSTI | TIOCLINUX)` fail with `EACCES`; with the network off, so do
/// `socket(family ≠ AF_UNIX, …)`, `io_uring_setup` and `connect`; through the proxy
/// (`proxied`: the command's own network namespace), `socket()` for any family but `AF_INET`
/// and `AF_INET6` (no Unix socket reaches a service outside) and `io_uring_setup`.
pub(super) fn filter(network: bool, proxied: bool) -> Result<(), seccompiler::Error> {
    let request = |value: u64| {
        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
            .and_then(|condition| SeccompRule::new(vec![condition]))
    };
    // The call fails when its first argument (a pid, a `which`, a socket family) is not
    // `value`.
    let first_not = |value: u64| -> Result<Vec<SeccompRule>, seccompiler::Error> {
        let condition = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, value)?;
        Ok(vec![SeccompRule::new(vec![condition])?])
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(
        libc::SYS_ioctl,
        vec![request(TIOCSTI)?, request(TIOCLINUX)?],
    );
    // Another process's limits (`prlimit --pid`): no open files for the helper that ends
    // what the command leaves behind, a CPU limit that kills the agent. Landlock does not
    // cover them; a process may still set its own (pid 0, as `setrlimit` does).
    rules.insert(libc::SYS_prlimit64, first_not(0)?);
    // Another process group's or user's priority (`renice -u`, `ionice -P`): lowering every
    // process of the user (the agent, the person's shell and editor, as root the machine's),
    // which outlives the command. Its own process and threads it may still nice.
    rules.insert(libc::SYS_setpriority, first_not(PRIO_PROCESS)?);
    rules.insert(libc::SYS_ioprio_set, first_not(IOPRIO_WHO_PROCESS)?);
    // What no command of a coding agent needs and each of which reaches past the sandbox
    // where a capability or a lax kernel setting allows it: the kernel's tracing (other
    // processes' memory), files by handle, the new mount API (a copy of the tree without the
    // read-only binds), other namespaces, the kernel keyrings (credentials), and the machine
    // itself (reboot, modules, clock, host name, swap).
    for call in [
        libc::SYS_perf_event_open,
        libc::SYS_bpf,
        libc::SYS_open_by_handle_at,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_mount_setattr,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_reboot,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_pivot_root,
        libc::SYS_acct,
    ] {
        rules.insert(call, Vec::new());
    }
    if proxied {
        // Inside its own network namespace the command may use TCP and UDP (they reach only
        // that namespace: its own servers and the bridge to the proxy), but no Unix socket:
        // a path or abstract name outside is a local service (D-Bus, Docker, ssh-agent) that
        // acts for the user. `socketpair` (pipes between its own processes) still works.
        let family = |value: i32| {
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                u64::from(value.unsigned_abs()),
            )
        };
        rules.insert(
            libc::SYS_socket,
            vec![SeccompRule::new(vec![
                family(libc::AF_INET)?,
                family(libc::AF_INET6)?,
            ])?],
        );
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
    } else if !network {
        // Any family but `AF_UNIX`; and a Unix datagram socket, which reaches a service
        // outside (`/dev/log`, the journal, any bound socket) by `sendto` without `connect`.
        let mut socket = first_not(u64::from(libc::AF_UNIX.unsigned_abs()))?;
        socket.push(SeccompRule::new(vec![SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(SOCKET_TYPE_MASK),
            u64::from(libc::SOCK_DGRAM.unsigned_abs()),
        )?])?);
        rules.insert(libc::SYS_socket, socket);
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
    seccompiler::apply_filter(&super::x32::refuse_x32(program, errno))
}
