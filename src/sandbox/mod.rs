//! The command sandbox: what a command the agent runs may write and whether it may use
//! the network, enforced by the kernel for the command's whole process tree.
//!
//! It owns the sandbox's vocabulary ([`SandboxMode`], [`Policy`]), whether a sandbox
//! can work on this machine ([`Sandbox::new`]), how a shell invocation is wrapped so
//! that it runs restricted ([`wrap`]), the re-executed helper that restricts itself
//! before `exec`ing the shell ([`helper_main`], Linux), and the guess whether a failed
//! command hit the sandbox ([`likely_denial`]). It knows nothing of settings files,
//! models or terminals. Reads are never restricted: the sandbox stops writes and
//! network use, not disclosure.
//!
//! - Linux: Landlock (files; TCP from ABI 4) plus a seccomp filter refusing `socket()`
//!   for every family but `AF_UNIX` when the network is off; `.git/hooks` and `.agent/`
//!   become read-only through a private mount namespace. See `linux.rs`.
//! - macOS: `sandbox-exec` with a generated Seatbelt profile of the same meaning
//!   (compile-checked only; untested). See `macos.rs`.
//! - Elsewhere: not available; commands run unsandboxed (or not at all when required).

mod beneath;
mod denial;
#[cfg(target_os = "linux")]
mod dns;
mod helper;
mod helper_args;
#[cfg(target_os = "linux")]
mod hold;
mod in_progress;
mod limits;
#[cfg(target_os = "linux")]
mod linux;
// Built in Linux's tests too, so that the Seatbelt profile is tested where CI runs.
#[cfg(any(target_os = "macos", test))]
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod macos;
#[cfg(target_os = "linux")]
mod netns;
mod policy;
mod program;
mod run;
mod setup;
#[cfg(target_os = "linux")]
mod supervise;
mod surfaces;
#[cfg(target_os = "linux")]
mod syscalls;
mod tree;
#[cfg(target_os = "linux")]
mod unshare;
mod watch;
#[cfg(target_os = "linux")]
mod x32;

pub use denial::{denial_line, likely_denial};
pub use helper::{
    HELPER_ARG, STAGED_ENV_PREFIX, helper_main, helper_program_main, loader_variable, unstage, wrap,
};
#[cfg(target_os = "linux")]
use helper_args::HelperArgs;
pub use limits::{DEFAULT_INSPECT_CPU_SECS, DEFAULT_INSPECT_MEMORY_MB, ResourceLimits};
pub use policy::{Policy, SandboxMode};
pub use run::Run;
#[cfg(unix)]
use setup::write_private;
pub use setup::{Sandbox, State, Status, availability, network_namespace_possible};
pub use watch::watch_workspaces;

/// Whether a sandboxed command runs under the helper, in a process group of its own: the
/// agent then signals the helper alone, which passes a polite signal (SIGTERM, SIGINT, SIGHUP,
/// SIGQUIT) on to the command and ends it with SIGKILL on [`HELPER_FORCE`] (`supervise.rs`):
/// Linux.
pub const HELPER_PASSES_SIGNALS: bool = cfg!(target_os = "linux");

/// The signal that asks the helper to end its command with SIGKILL (SIGUSR1).
#[cfg(target_os = "linux")]
pub use supervise::HELPER_FORCE;

/// From now on the sandboxed commands of this process (a run or session) share one network
/// namespace (Linux; per proxy, see `hold.rs`): a server one started is reached on `localhost`
/// by the next. `agent exec` runs one command and does not call it.
pub fn share_network_per_run() {
    #[cfg(target_os = "linux")]
    hold::share_per_run();
}

/// Why the run's network namespace could not be made, once per run (the first command after
/// it failed says so); `None` otherwise.
#[must_use]
pub fn run_network_failure() -> Option<String> {
    #[cfg(target_os = "linux")]
    return hold::take_failure();
    #[cfg(not(target_os = "linux"))]
    None
}

/// Ends the run's network namespaces' holders (the run ended).
pub fn end_network_per_run() {
    #[cfg(target_os = "linux")]
    hold::end();
}

/// Test-only switch: when set to `1`, the sandbox reports itself unavailable, so tests
/// can exercise the fallback and `required` on a machine where it works.
pub const TEST_UNAVAILABLE_ENV: &str = "AGENT_TEST_SANDBOX_UNAVAILABLE";

/// Test-only switch: when set to `1`, the read-only paths inside the workspace cannot be
/// protected (as where no mount namespace can be made), so tests see it reported.
pub const TEST_NO_MOUNTS_ENV: &str = "AGENT_TEST_SANDBOX_NO_MOUNTS";

/// Test-only switch: when set to `1` (in the command's environment, which the helper gets),
/// the helper makes no PID namespace, so tests can exercise the fallback that ends what a
/// command leaves behind without one.
pub const TEST_NO_PID_NAMESPACE_ENV: &str = "AGENT_TEST_SANDBOX_NO_PID_NAMESPACE";

/// Test-only switch: when set to `1`, no network namespace can be made here (as where user
/// namespaces are off), so tests see `[network] mode = "allowlist"` refuse all network.
pub const TEST_NO_NETNS_ENV: &str = "AGENT_TEST_SANDBOX_NO_NETNS";

/// The port of the bridge to the network proxy inside a command's own network namespace
/// (`127.0.0.1:3128`, the customary proxy port; the namespace is the command's, so nothing
/// else holds it).
pub const BRIDGE_PORT: u16 = 3128;

/// Said in an active sandbox's description where Landlock cannot refuse `truncate(2)`
/// (ABI 1 and 2, kernels before 6.2): a file outside the workspace could be emptied, so mode
/// `auto` acts as `ask` there.
pub const NO_TRUNCATE_RULE: &str = "no truncate rule";

/// Paths inside the workspace that stay read-only in `workspace-write` mode, as named to
/// people: a command must not plant a git hook or configuration (in `.git/hooks`, through
/// `core.hooksPath` in `.git/config`, `commondir`, …: `surfaces/find.rs` has the whole list, for
/// every git directory in the workspace) or loosen the project's agent settings.
pub const PROTECTED_IN_WORKSPACE: &[&str] = &[".git/hooks", ".git/config", ".agent"];
