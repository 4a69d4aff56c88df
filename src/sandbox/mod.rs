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
#[cfg(target_os = "linux")]
mod dns;
mod in_progress;
mod limits;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "linux")]
mod netns;
mod run;
#[cfg(target_os = "linux")]
mod supervise;
mod surfaces;
mod tree;

pub use limits::{DEFAULT_INSPECT_CPU_SECS, DEFAULT_INSPECT_MEMORY_MB, ResourceLimits};
pub use run::Run;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Whether a sandboxed command runs under the helper, in a process group of its own: the
/// agent then signals the helper alone, which passes a polite signal (SIGTERM, SIGINT, SIGHUP,
/// SIGQUIT) on to the command and ends it with SIGKILL on [`HELPER_FORCE`] (`supervise.rs`):
/// Linux.
pub const HELPER_PASSES_SIGNALS: bool = cfg!(target_os = "linux");

/// The signal that asks the helper to end its command with SIGKILL (SIGUSR1).
#[cfg(target_os = "linux")]
pub use supervise::HELPER_FORCE;

/// The port of the bridge to the network proxy inside a command's own network namespace
/// (`127.0.0.1:3128`, the customary proxy port; the namespace is the command's, so nothing
/// else holds it).
pub const BRIDGE_PORT: u16 = 3128;

/// Test-only switch: when set to `1`, no network namespace can be made here (as where user
/// namespaces are off), so tests see `[network] mode = "allowlist"` refuse all network.
pub const TEST_NO_NETNS_ENV: &str = "AGENT_TEST_SANDBOX_NO_NETNS";

/// The helper's argument that only checks whether a network namespace can be made here and
/// exits 0 if so.
const PROBE_NETNS_ARG: &str = "--probe-netns";

/// The hidden first argument that turns `agent` into the sandbox helper (Linux):
/// `agent __sandbox [--network] [--write DIR]… [--read-only DIR]… -- PROGRAM ARGS…`.
pub const HELPER_ARG: &str = "__sandbox";

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

/// The helper's argument that only checks whether the read-only paths can be protected here
/// (a private mount namespace can be made) and exits 0 if so.
const PROBE_MOUNTS_ARG: &str = "--probe-mounts";

/// Said in an active sandbox's description where Landlock cannot refuse `truncate(2)`
/// (ABI 1 and 2, kernels before 6.2): a file outside the workspace could be emptied, so mode
/// `auto` acts as `ask` there.
pub const NO_TRUNCATE_RULE: &str = "no truncate rule";

/// Paths inside the workspace that stay read-only in `workspace-write` mode, as named to
/// people: a command must not plant a git hook or configuration (in `.git/hooks`, through
/// `core.hooksPath` in `.git/config`, `commondir`, …: `surfaces.rs` has the whole list, for
/// every git directory in the workspace) or loosen the project's agent settings.
pub const PROTECTED_IN_WORKSPACE: &[&str] = &[".git/hooks", ".git/config", ".agent"];

/// How much a command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Write inside the workspace, the temp dir, the devices and `writable` paths.
    #[default]
    WorkspaceWrite,
    /// Write nothing but the devices.
    ReadOnly,
    /// No sandbox.
    Off,
}

impl SandboxMode {
    /// The name used in settings and flags.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        }
    }

    /// Parses a name as written in settings and flags.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "read-only" => Some(SandboxMode::ReadOnly),
            "off" => Some(SandboxMode::Off),
            _ => None,
        }
    }

    /// Higher is stricter: off < workspace-write < read-only.
    #[must_use]
    pub fn strictness(self) -> u8 {
        match self {
            SandboxMode::Off => 0,
            SandboxMode::WorkspaceWrite => 1,
            SandboxMode::ReadOnly => 2,
        }
    }
}

/// What a sandboxed command may do, resolved for one workspace. Built purely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The mode it came from.
    pub mode: SandboxMode,
    /// TCP/UDP and every non-Unix socket allowed.
    pub network: bool,
    /// Directories (and files) writable with everything beneath them.
    pub writable: Vec<PathBuf>,
    /// Existing directories inside `writable` that stay read-only, as named to people (each
    /// command's run protects every surface `surfaces.rs` finds, these among them).
    pub read_only: Vec<PathBuf>,
    /// The workspace (canonical): its git surfaces are protected and checked per command.
    pub workspace: PathBuf,
    /// The directory in which each command gets a private temp directory (`TMPDIR`; also
    /// `/tmp` where a mount namespace can be made), removed when the command ends.
    pub temp: PathBuf,
    /// A private mount namespace can be made here (read-only paths, `/tmp`, hidden files).
    pub mounts: bool,
    /// Reads allowed only beneath these (and the devices); `None`: everywhere.
    pub readable: Option<Vec<PathBuf>>,
    /// Files that hold secrets inside the workspace are hidden (where mounts can do it).
    pub hide_secrets: bool,
    /// A directory of the agent's state where what the sandbox learns about this machine
    /// and workspace is kept between processes (the mount probe's answer, the workspace's
    /// tree), set through [`Policy::keep_in`]; `None`: nothing is kept.
    pub cache: Option<PathBuf>,
    /// CPU time and memory of the command's processes (Linux), set through
    /// [`Policy::limited`]; by default none beyond the agent's own.
    pub limits: ResourceLimits,
    /// Every git directory of the workspace is read-only as a whole (objects, refs, logs,
    /// the stash), not only its configuration and hooks: for what mode `auto` runs without a
    /// yes, since snapshots keep the working tree but not git's history. Needs `mounts`.
    pub git_read_only: bool,
    /// The network proxy's private directory (`[network] mode = "allowlist"`): the command
    /// runs in a network namespace of its own whose only way out is a bridge to the proxy's
    /// socket there (Linux). Set by whoever started the proxy; `network` is then false.
    pub proxy: Option<PathBuf>,
}

impl Policy {
    /// The policy for `mode` in `workspace`: the workspace, `temp` and `extra` are
    /// writable in `workspace-write` mode (those that exist), nothing in `read-only`.
    #[must_use]
    pub fn new(
        mode: SandboxMode,
        network: bool,
        workspace: &Path,
        temp: &Path,
        extra: &[PathBuf],
    ) -> Self {
        let mut writable = Vec::new();
        let mut read_only = Vec::new();
        let canonical = |dir: &Path| dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        if mode == SandboxMode::WorkspaceWrite {
            // The shared temp dir is not writable: each command gets a private one in it.
            for dir in std::iter::once(workspace).chain(extra.iter().map(PathBuf::as_path)) {
                let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
                if dir.exists() && !writable.contains(&dir) {
                    writable.push(dir);
                }
            }
            let git = workspace.join(".git");
            let git_repository = git.is_dir() && !git.is_symlink();
            read_only = PROTECTED_IN_WORKSPACE
                .iter()
                .map(|sub| workspace.join(sub))
                .filter(|path| {
                    !path.is_symlink()
                        && (path.exists() || (git_repository && path.ends_with(".git/hooks")))
                })
                .collect();
        }
        Self {
            mode,
            network,
            writable,
            read_only,
            workspace: canonical(workspace),
            temp: canonical(temp),
            mounts: true,
            readable: None,
            hide_secrets: false,
            cache: None,
            limits: ResourceLimits::default(),
            git_read_only: false,
            proxy: None,
        }
    }

    /// The policy for a command that runs without a person's yes because the built-in
    /// read-only list allowed it: no writes, no network, reads only of the workspace, the
    /// system's own directories and git's configuration, and the workspace's secret files
    /// hidden (where a mount namespace can be made).
    #[must_use]
    pub fn inspection(&self) -> Policy {
        Policy {
            mode: SandboxMode::ReadOnly,
            network: false,
            writable: Vec::new(),
            read_only: Vec::new(),
            workspace: self.workspace.clone(),
            temp: self.temp.clone(),
            mounts: self.mounts,
            readable: Some(inspection_reads(&self.workspace)),
            hide_secrets: true,
            cache: self.cache.clone(),
            limits: self.limits,
            git_read_only: false,
            proxy: None,
        }
    }

    /// This policy with `limits` on its commands' CPU time and memory.
    #[must_use]
    pub fn limited(mut self, limits: ResourceLimits) -> Policy {
        self.limits = limits;
        self
    }

    /// Keeps what the sandbox learns in `cache`, unless commands may write there (a
    /// workspace or writable directory that holds the agent's state directory): what a
    /// command could write is no place to learn from. Decided once, here, so that every
    /// policy derived from this one ([`Policy::inspection`]) has the same answer.
    pub fn keep_in(&mut self, cache: PathBuf) {
        let writable = self.writable.iter().chain([&self.workspace]);
        let reachable = writable
            .into_iter()
            .any(|dir| cache.starts_with(dir) || dir.starts_with(&cache));
        self.cache = (!reachable).then_some(cache);
    }
}

/// The system's own directories: programs, libraries, their data and configuration. What an
/// inspection command (`cat`, `rg`, `git status`, `find`, `sed -n`) needs besides the
/// workspace. `/proc` whole: a program's own entries live under its pid, and the command's
/// `/proc` is its own (`linux.rs`'s `private_proc`), listing no process outside the sandbox
/// (Landlock keeps `mem` and `fd` of those from it, but not `environ`).
const SYSTEM_READS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/proc",
    "/nix/store",
];

/// What an inspection command may read: the workspace, [`SYSTEM_READS`], the git directories
/// the workspace's `.git` file points at (a linked worktree's), and git's configuration in
/// the home directory (not the rest of it).
fn inspection_reads(workspace: &Path) -> Vec<PathBuf> {
    let mut reads: Vec<PathBuf> = SYSTEM_READS.iter().map(PathBuf::from).collect();
    reads.push(workspace.to_path_buf());
    reads.extend(surfaces::outside_git_dirs(workspace));
    if let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) {
        let home = PathBuf::from(home);
        reads.push(home.join(".gitconfig"));
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|dir| !dir.is_empty())
            .map_or_else(|| home.join(".config"), PathBuf::from);
        reads.push(config.join("git"));
    }
    reads
}

/// Whether a command can get a network namespace of its own here (for `[network] mode =
/// "allowlist"`), asked of a throw-away helper process; why not, when not.
///
/// # Errors
/// Why no network namespace can be made (to be said once, with what to do).
pub fn network_namespace_possible() -> Result<(), String> {
    if std::env::var_os(TEST_NO_NETNS_ENV).is_some_and(|v| v == "1") {
        return Err(format!(
            "forced by {TEST_NO_NETNS_ENV}=1, a test-only switch"
        ));
    }
    if !cfg!(target_os = "linux") {
        return Err(format!(
            "network namespaces are Linux's; {} has none",
            std::env::consts::OS
        ));
    }
    let (helper, first) = helper().map_err(|error| error.to_string())?;
    let status = std::process::Command::new(helper)
        .arg(first)
        .arg(PROBE_NETNS_ARG)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|error| error.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(
            "this system lets the agent make no network namespace (not root, and no \
             unprivileged user namespaces, e.g. Ubuntu's AppArmor restriction)"
                .to_owned(),
        )
    }
}

/// Whether the sandbox applies on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Mode `off`: nothing to apply.
    Off,
    /// Commands run restricted; says by what (`Landlock (files, TCP) + seccomp`).
    Active(String),
    /// The sandbox cannot apply here; says why.
    Unavailable(String),
}

/// The sandbox of a run: the policy, whether it must apply, and whether it can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// What commands may do.
    pub policy: Policy,
    /// Refuse to run commands when the sandbox cannot apply.
    pub required: bool,
    /// Whether it applies here.
    pub state: State,
    /// What an active sandbox cannot do here, said once on stderr and in the `start` event
    /// (the read-only paths stay writable where no mount namespace can be made).
    pub limitation: Option<String>,
}

impl Sandbox {
    /// Resolves `policy` against this machine: active, unavailable (and why) or off.
    #[must_use]
    pub fn new(mut policy: Policy, required: bool) -> Self {
        let state = if policy.mode == SandboxMode::Off {
            State::Off
        } else {
            match availability() {
                Ok(how) => State::Active(how),
                Err(why) => State::Unavailable(why),
            }
        };
        let mut limitation = None;
        if matches!(state, State::Active(_))
            && let Err(why) = read_only_protection(policy.cache.as_deref())
        {
            policy.mounts = false;
            let mut what = Vec::new();
            if !policy.read_only.is_empty() {
                what.push(format!(
                    "{} stay writable (changes there are undone after each command)",
                    join_paths(&policy.read_only)
                ));
            }
            what.push(
                "secret files in the workspace stay readable to commands the read-only list \
                 allows"
                    .to_owned(),
            );
            limitation = Some(format!("{}: {why}", what.join("; ")));
            policy.read_only.clear();
        }
        if cfg!(target_os = "macos") && matches!(state, State::Active(_)) {
            limitation = Some(
                "commands the read-only list allows can read outside the workspace and its \
                 secret files (the Seatbelt profile restricts writes only)"
                    .to_owned(),
            );
        }
        Self {
            policy,
            required,
            state,
            limitation,
        }
    }

    /// A sandbox that is off.
    #[must_use]
    pub fn off() -> Self {
        Self {
            policy: Policy {
                mode: SandboxMode::Off,
                network: true,
                writable: Vec::new(),
                read_only: Vec::new(),
                workspace: PathBuf::new(),
                temp: std::env::temp_dir(),
                mounts: false,
                readable: None,
                hide_secrets: false,
                cache: None,
                limits: ResourceLimits::default(),
                git_read_only: false,
                proxy: None,
            },
            required: false,
            state: State::Off,
            limitation: None,
        }
    }

    /// The policy to wrap commands with, when the sandbox is active.
    #[must_use]
    pub fn active_policy(&self) -> Option<&Policy> {
        matches!(self.state, State::Active(_)).then_some(&self.policy)
    }

    /// Commands must not run: the sandbox is required but cannot apply. Says why.
    #[must_use]
    pub fn refusal(&self) -> Option<String> {
        match &self.state {
            State::Unavailable(why) if self.required => Some(format!(
                "the sandbox is required but not available here ({why}): no command runs; \
                 lift `required` (or --sandbox-required), or use --sandbox off"
            )),
            _ => None,
        }
    }

    /// The state as recorded in the `start` event.
    #[must_use]
    pub fn status(&self) -> Status {
        let (active, reason) = match &self.state {
            State::Off => (false, Some("mode off".to_owned())),
            State::Active(_) => (true, None),
            State::Unavailable(why) => (false, Some(why.clone())),
        };
        Status {
            mode: self.policy.mode,
            active,
            network: self.policy.network || self.policy.mode == SandboxMode::Off,
            reason,
            limitation: self.limitation.clone(),
        }
    }
}

/// The sandbox's state in the `start` event:
/// `{"mode": "workspace-write", "active": false, "network": false, "reason": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// The configured mode.
    pub mode: SandboxMode,
    /// Whether commands run restricted.
    pub active: bool,
    /// Whether commands may use the network.
    pub network: bool,
    /// Why it is not active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What it cannot do here although active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limitation: Option<String>,
}

/// Whether the read-only paths inside the workspace can be protected here: the helper
/// tries, in a child process, to make the private mount namespace it needs.
///
/// # Errors
/// Why not, in words for people.
fn read_only_protection(cache: Option<&Path>) -> Result<(), String> {
    if std::env::var_os(TEST_NO_MOUNTS_ENV).is_some_and(|v| v == "1") {
        return Err(format!(
            "forced by {TEST_NO_MOUNTS_ENV}=1, a test-only switch"
        ));
    }
    if !cfg!(target_os = "linux") {
        return Ok(());
    }
    // A yes is kept for this boot, user and namespaces (a container has its own); a no is
    // asked again each time, so a fixed machine is seen at once.
    let kept = cache
        .zip(mounts_probe_key())
        .map(|(dir, key)| (dir.join(MOUNTS_OK_FILE), key));
    if let Some((file, key)) = &kept
        && std::fs::read(file).is_ok_and(|text| text == key.as_bytes())
    {
        return Ok(());
    }
    let (helper, first) = helper().map_err(|error| error.to_string())?;
    let status = std::process::Command::new(helper)
        .arg(first)
        .arg(PROBE_MOUNTS_ARG)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|error| error.to_string())?;
    if status.success() {
        if let Some((file, key)) = kept {
            write_private(&file, key.as_bytes());
        }
        Ok(())
    } else {
        Err(
            "this system lets the agent make no private mount namespace (not root, and no \
             unprivileged user namespaces)"
                .to_owned(),
        )
    }
}

#[cfg(not(target_os = "linux"))]
fn mounts_probe_key() -> Option<String> {
    None
}

/// Writes `bytes` to `file` in the cache directory, readable by this user only, whole or not
/// at all (written aside and renamed): a cache that cannot be written is only slower.
fn write_private(file: &Path, bytes: &[u8]) {
    use std::io::Write as _;
    let Some(parent) = file.parent() else { return };
    let mut dirs = std::fs::DirBuilder::new();
    dirs.recursive(true);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        std::os::unix::fs::DirBuilderExt::mode(&mut dirs, 0o700);
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    if dirs.create(parent).is_err() {
        return;
    }
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let temp = parent.join(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let written = options.open(&temp).and_then(|mut out| {
        out.write_all(bytes)?;
        std::fs::rename(&temp, file)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
}

/// The file in the cache directory that says the mount probe succeeded, and for what.
const MOUNTS_OK_FILE: &str = "mounts-ok";

/// What the mount probe's answer depends on: the boot, the user, the namespaces this
/// process is in, and the switches that allow unprivileged user namespaces.
#[cfg(target_os = "linux")]
fn mounts_probe_key() -> Option<String> {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let link = |path: &str| {
        std::fs::read_link(path)
            .map(|target| target.display().to_string())
            .unwrap_or_default()
    };
    let boot = read("/proc/sys/kernel/random/boot_id");
    if boot.is_empty() {
        return None;
    }
    let uid = rustix::process::getuid().as_raw();
    Some(format!(
        "boot {} uid {uid} ns {} {} userns {} {} {}\n",
        boot.trim(),
        link("/proc/self/ns/user"),
        link("/proc/self/ns/mnt"),
        read("/proc/sys/kernel/unprivileged_userns_clone").trim(),
        read("/proc/sys/user/max_user_namespaces").trim(),
        read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").trim(),
    ))
}

/// Whether a sandbox can apply on this machine: what enforces it, or why not.
///
/// # Errors
/// The reason, in words for people.
pub fn availability() -> Result<String, String> {
    if std::env::var_os(TEST_UNAVAILABLE_ENV).is_some_and(|v| v == "1") {
        return Err(format!(
            "forced unavailable by {TEST_UNAVAILABLE_ENV}=1, a test-only switch"
        ));
    }
    platform_availability()
}

#[cfg(target_os = "linux")]
fn platform_availability() -> Result<String, String> {
    linux::probe()
}

#[cfg(target_os = "macos")]
fn platform_availability() -> Result<String, String> {
    macos::probe()
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn platform_availability() -> Result<String, String> {
    Err(format!(
        "no sandbox is implemented for {}",
        std::env::consts::OS
    ))
}

/// The program and arguments that run `argv` (the shell invocation) inside `run`.
///
/// # Errors
/// When the helper (the agent's own executable) cannot be found.
#[cfg(target_os = "linux")]
pub fn wrap(run: &Run, argv: &[OsString]) -> std::io::Result<(PathBuf, Vec<OsString>)> {
    let (helper, first) = helper()?;
    let mut args = vec![first];
    args.extend(run.helper_args());
    args.push("--".into());
    args.extend(argv.iter().cloned());
    Ok((helper, args))
}

/// The program and arguments that run `argv` (the shell invocation) inside `run`.
///
/// # Errors
/// Never on macOS; kept fallible like the Linux version.
#[cfg(target_os = "macos")]
pub fn wrap(run: &Run, argv: &[OsString]) -> std::io::Result<(PathBuf, Vec<OsString>)> {
    Ok(macos::wrap(run.policy(), run.temp_dir(), argv))
}

/// No sandbox here: `argv` runs as it is.
///
/// # Errors
/// Never.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn wrap(_run: &Run, argv: &[OsString]) -> std::io::Result<(PathBuf, Vec<OsString>)> {
    let program = argv.first().map(PathBuf::from).unwrap_or_default();
    Ok((program, argv.iter().skip(1).cloned().collect()))
}

/// The helper's arguments, parsed.
#[derive(Debug, Default, PartialEq, Eq)]
struct HelperArgs {
    network: bool,
    /// The network proxy's directory: a network namespace of the command's own, bridged to
    /// the proxy's socket there.
    proxy: Option<PathBuf>,
    /// The stub resolver's configuration, bound over `/etc/resolv.conf` (with `proxy`).
    resolv: Option<PathBuf>,
    writable: Vec<PathBuf>,
    /// Existing paths made read-only in the mount namespace.
    read_only: Vec<PathBuf>,
    /// Directories bound onto themselves (cannot be renamed away).
    pinned: Vec<PathBuf>,
    /// Files hidden (`/dev/null` bound over them).
    hidden: Vec<PathBuf>,
    /// The command's private temp directory, bound over `/tmp`.
    tmp: Option<PathBuf>,
    /// Reads only beneath `readable` (and the devices).
    restrict_reads: bool,
    readable: Vec<PathBuf>,
    /// CPU time and memory, set by the stage.
    limits: ResourceLimits,
    argv: Vec<OsString>,
}

impl HelperArgs {
    /// Whether the helper needs a private mount namespace.
    #[cfg(target_os = "linux")]
    fn mounts(&self) -> bool {
        !(self.read_only.is_empty()
            && self.pinned.is_empty()
            && self.hidden.is_empty()
            && self.tmp.is_none()
            && self.resolv.is_none())
    }
}

fn parse_helper_args(args: impl IntoIterator<Item = OsString>) -> Result<HelperArgs, String> {
    let mut parsed = HelperArgs::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let flag = arg.to_str().unwrap_or_default();
        if parsed.limits.parse_arg(flag, || args.next())? {
            continue;
        }
        let mut value = || -> Result<PathBuf, String> {
            args.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("`{flag}` needs a path"))
        };
        match flag {
            "--network" => parsed.network = true,
            "--restrict-reads" => parsed.restrict_reads = true,
            "--write" => parsed.writable.push(value()?),
            "--read-only" => parsed.read_only.push(value()?),
            "--pin" => parsed.pinned.push(value()?),
            "--hide" => parsed.hidden.push(value()?),
            "--read" => parsed.readable.push(value()?),
            "--tmp" => parsed.tmp = Some(value()?),
            "--proxy" => parsed.proxy = Some(value()?),
            "--resolv" => parsed.resolv = Some(value()?),
            "--" => {
                parsed.argv = args.collect();
                break;
            }
            _ => return Err(format!("unknown argument `{}`", arg.to_string_lossy())),
        }
    }
    if parsed.argv.is_empty() {
        return Err("no program to run after `--`".to_owned());
    }
    Ok(parsed)
}

/// The program that applies the sandbox and becomes the command, and its first argument:
/// the small `agent-sandbox` next to this executable when it is there (installed and built
/// with it), else this executable with [`HELPER_ARG`].
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn helper() -> std::io::Result<(PathBuf, OsString)> {
    let exe = std::env::current_exe()?;
    let small = exe.with_file_name(format!("agent-sandbox{}", std::env::consts::EXE_SUFFIX));
    if small.is_file() {
        return Ok((small, OsString::from(HELPER_VERSION_ARG)));
    }
    Ok((exe, OsString::from(HELPER_ARG)))
}

/// The first argument `agent-sandbox` takes: the version of the `agent` that starts it (the
/// arguments between them are internal and may change with any version).
const HELPER_VERSION_ARG: &str = concat!("--agent=", env!("CARGO_PKG_VERSION"));

/// `agent-sandbox`'s `main`: checks that the `agent` starting it is of its own version,
/// then is [`helper_main`].
#[must_use]
pub fn helper_program_main(args: impl IntoIterator<Item = OsString>) -> std::process::ExitCode {
    let mut args = args.into_iter();
    let first = args.next();
    if first.as_deref() != Some(std::ffi::OsStr::new(HELPER_VERSION_ARG)) {
        use std::io::Write as _;
        // Debug formatting on purpose: the argument is shown quoted and escaped.
        #[allow(clippy::unnecessary_debug_formatting)]
        let _ = writeln!(
            std::io::stderr(),
            "agent-sandbox: this is the sandbox helper of agent {} and runs only for it (it got \
             {}): nothing ran; reinstall agent so that both come from one build",
            env!("CARGO_PKG_VERSION"),
            first.map_or_else(|| "no arguments".to_owned(), |arg| format!("{arg:?}")),
        );
        return std::process::ExitCode::from(126);
    }
    helper_with(HELPER_VERSION_ARG, args)
}

/// The sandbox helper (`agent __sandbox …`, after [`HELPER_ARG`]): makes the command's
/// namespaces and mounts, then runs the command as its child until nothing the command
/// started is left, and ends as the command did (`supervise.rs`). The child is this program
/// again ([`STAGE_ARG`]), which restricts itself (Landlock, seccomp) and becomes the command:
/// this process stays outside the command's Landlock domain, where nothing the command runs
/// can signal it. Returns only on failure, with exit status 126 and one line on stderr; the
/// command then did not run.
#[must_use]
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> std::process::ExitCode {
    helper_with(HELPER_ARG, args)
}

/// The helper's argument that makes it the command's stage: it restricts itself and becomes
/// the command (`STAGE_ARG` and then the helper's own arguments).
const STAGE_ARG: &str = "--stage";

/// [`helper_main`], started with `first` (the argument that starts this program again as the
/// helper: [`HELPER_ARG`] or [`HELPER_VERSION_ARG`]).
fn helper_with(first: &str, args: impl IntoIterator<Item = OsString>) -> std::process::ExitCode {
    let fail = |message: &str| {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "agent: sandbox: {message}: the command did not run (--sandbox off runs it without the sandbox)"
        );
        std::process::ExitCode::from(126)
    };
    let mut args: Vec<OsString> = args.into_iter().collect();
    if args.first().is_some_and(|arg| arg == PROBE_MOUNTS_ARG) {
        #[cfg(target_os = "linux")]
        return std::process::ExitCode::from(u8::from(!linux::mounts_possible()));
        #[cfg(not(target_os = "linux"))]
        return std::process::ExitCode::from(1);
    }
    #[cfg(target_os = "linux")]
    if args.first().is_some_and(|arg| arg == netns::BRIDGE_ARG) {
        return match args.get(1) {
            Some(socket) => netns::bridge_main(Path::new(socket)),
            None => fail("`--bridge` needs the proxy's socket (the helper is internal to agent)"),
        };
    }
    if args.first().is_some_and(|arg| arg == PROBE_NETNS_ARG) {
        #[cfg(target_os = "linux")]
        return std::process::ExitCode::from(u8::from(!netns::possible()));
        #[cfg(not(target_os = "linux"))]
        return std::process::ExitCode::from(1);
    }
    let stage = args.first().is_some_and(|arg| arg == STAGE_ARG);
    let given = if stage {
        args.split_off(1)
    } else {
        args.clone()
    };
    let parsed = match parse_helper_args(given) {
        Ok(args) => args,
        Err(error) => return fail(&format!("{error} (the helper is internal to agent)")),
    };
    #[cfg(target_os = "linux")]
    {
        if stage {
            return match become_command(&parsed) {
                Err(error) => fail(&error),
            };
        }
        let pid_namespace = match linux::prepare(&parsed, std::ffi::OsStr::new(first)) {
            Ok(pid_namespace) => pid_namespace,
            Err(error) => return fail(&error),
        };
        // This very program, however its file is named or replaced meanwhile.
        let mut command = std::process::Command::new("/proc/self/exe");
        std::os::unix::process::CommandExt::arg0(&mut command, "agent-sandbox");
        command.args([first, STAGE_ARG]).args(&args);
        if let Some(temp) = linux::command_tmp(&parsed) {
            command.env("TMPDIR", temp);
        }
        match supervise::run(command, pid_namespace) {
            Err(error) => fail(&error),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (first, stage);
        fail(&format!(
            "the helper only exists on Linux, not for `{}`",
            parsed.argv[0].to_string_lossy()
        ))
    }
}

/// The stage: restricts this process as `args` say and becomes the command.
///
/// # Errors
/// Why the command cannot run (it returns only then).
#[cfg(target_os = "linux")]
fn become_command(args: &HelperArgs) -> Result<std::convert::Infallible, String> {
    use std::os::unix::process::CommandExt as _;
    linux::restrict(args)?;
    let program = &args.argv[0];
    let error = std::process::Command::new(program)
        .args(&args.argv[1..])
        .exec();
    Err(format!(
        "cannot start `{}`: {error}",
        program.to_string_lossy()
    ))
}

/// Words in a command's stderr that say the kernel refused something.
const DENIAL_WORDS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
];

/// Words that say the refused thing was network use.
const NETWORK_WORDS: &[&str] = &[
    "connect",
    "socket",
    "network",
    "Network",
    "resolve",
    "name resolution",
];

/// When a command run in `policy` failed in a way the sandbox likely caused (a refused
/// write or connection in its stderr), a note for the model saying so and naming the
/// line; `None` otherwise. A guess from the text: the note says "likely".
#[must_use]
pub fn likely_denial(policy: &Policy, exit_code: Option<i32>, stderr: &str) -> Option<String> {
    let line = denial_line(policy, exit_code, stderr)?;
    let network = !policy.network && NETWORK_WORDS.iter().any(|word| line.contains(word));
    if !network
        && policy.mode == SandboxMode::WorkspaceWrite
        && let Some(git_dir) = surfaces::outside_git_dirs(&policy.workspace)
            .into_iter()
            .find(|dir| line.contains(dir.to_string_lossy().as_ref()))
    {
        // Not "make it writable": the git directory holds the configuration and hooks
        // that git runs programs from, which a command must not reach.
        return Some(format!(
            "likely refused by the sandbox: `{line}`. This workspace is a linked git \
             worktree: its git directory {} is outside the workspace and stays read-only in \
             the sandbox, so git cannot write there (commit, add, checkout, rebase). Do not \
             ask for it to be made writable (it holds git's configuration and hooks); tell \
             the user to run this git command themselves, or to work in the main checkout",
            git_dir.display()
        ));
    }
    let what = if network {
        "network use is off in the sandbox".to_owned()
    } else {
        match policy.mode {
            SandboxMode::ReadOnly => "the sandbox is read-only".to_owned(),
            SandboxMode::WorkspaceWrite | SandboxMode::Off => format!(
                "the sandbox allows writes only in {}{}",
                join_paths(&policy.writable),
                if policy.read_only.is_empty() {
                    String::new()
                } else {
                    format!(" (not in {})", join_paths(&policy.read_only))
                }
            ),
        }
    };
    let lift = if network {
        "`--network`"
    } else {
        "`--sandbox off`, or a `writable` path in the user settings"
    };
    Some(format!(
        "likely refused by the sandbox ({} mode; {what}): `{line}`. Work within these limits, \
         or tell the user what needs them lifted ({lift})",
        policy.mode.name(),
    ))
}

/// The line of a failed command's stderr that says the kernel refused something (the text
/// [`likely_denial`] guesses from). The command wrote it: it is no evidence.
#[must_use]
pub fn denial_line(policy: &Policy, exit_code: Option<i32>, stderr: &str) -> Option<String> {
    if exit_code == Some(0) {
        return None;
    }
    let name_resolution = if policy.network {
        None
    } else {
        stderr.lines().find(|line| {
            line.contains("Temporary failure in name resolution")
                || line.contains("Could not resolve host")
        })
    };
    let line = stderr
        .lines()
        .find(|line| DENIAL_WORDS.iter().any(|word| line.contains(word)))
        .or(name_resolution)?;
    Some(line.trim().chars().take(300).collect())
}

fn join_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn modes_parse_and_order_by_strictness() {
        for mode in [
            SandboxMode::Off,
            SandboxMode::WorkspaceWrite,
            SandboxMode::ReadOnly,
        ] {
            assert_eq!(SandboxMode::parse(mode.name()), Some(mode));
        }
        assert_eq!(SandboxMode::parse("on"), None);
        assert!(SandboxMode::ReadOnly.strictness() > SandboxMode::WorkspaceWrite.strictness());
        assert!(SandboxMode::WorkspaceWrite.strictness() > SandboxMode::Off.strictness());
    }

    #[test]
    fn nothing_is_kept_where_commands_could_write_it() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let (work, extra, state) = (root.join("work"), root.join("extra"), root.join("state"));
        for dir in [&work, &extra, &state] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let policy = |extra: &[PathBuf], cache: PathBuf| {
            let mut policy = Policy::new(SandboxMode::WorkspaceWrite, false, &work, &root, extra);
            policy.keep_in(cache);
            policy
        };
        let kept = policy(&[], state.join("agent/sandbox"));
        assert_eq!(kept.cache, Some(state.join("agent/sandbox")));
        assert_eq!(kept.inspection().cache, kept.cache);
        for (extra, cache) in [
            (vec![], work.join(".state/agent/sandbox")),
            (vec![extra.clone()], extra.join("agent/sandbox")),
            (
                vec![state.join("agent/sandbox/deeper")],
                state.join("agent/sandbox"),
            ),
        ] {
            for dir in &extra {
                std::fs::create_dir_all(dir).unwrap();
            }
            let policy = policy(&extra, cache.clone());
            assert_eq!(policy.cache, None, "{cache:?} with {extra:?}");
            // The read-only policy made from it may not write either; it follows the one
            // it comes from, whose commands could.
            assert_eq!(policy.inspection().cache, None, "{cache:?}");
        }
    }

    #[test]
    fn workspace_write_covers_workspace_temp_and_existing_extras() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let work = root.join("work");
        let temp = root.join("tmp");
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::write(work.join(".git/config"), "").unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        let policy = Policy::new(
            SandboxMode::WorkspaceWrite,
            false,
            &work,
            &temp,
            &[root.join("missing"), temp.clone()],
        );
        assert_eq!(policy.writable, vec![work.clone(), temp.clone()]);
        assert_eq!(
            policy.read_only,
            vec![work.join(".git/hooks"), work.join(".git/config")]
        );
        let read_only = Policy::new(SandboxMode::ReadOnly, false, &work, &temp, &[]);
        assert!(read_only.writable.is_empty() && read_only.read_only.is_empty());
    }

    #[test]
    fn helper_arguments_round_trip() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let (work, temp) = (root.join("work"), root.join("tmp"));
        std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        std::fs::write(work.join(".env"), "KEY=1").unwrap();
        let policy = Policy::new(SandboxMode::WorkspaceWrite, true, &work, &temp, &[]);
        let argv: Vec<OsString> = vec!["sh".into(), "-c".into(), "echo --write".into()];
        let run = Run::prepare(&policy).unwrap();
        let private = run.temp_dir().unwrap().to_path_buf();
        let mut args = run.helper_args();
        args.push("--".into());
        args.extend(argv.iter().cloned());
        let parsed = parse_helper_args(args).unwrap();
        assert!(parsed.network && !parsed.restrict_reads);
        assert_eq!(parsed.argv, argv);
        assert_eq!(parsed.pinned, vec![work.join(".git")]);
        assert!(
            parsed.read_only.contains(&work.join(".git/hooks")),
            "{parsed:?}"
        );
        assert!(
            parsed.read_only.contains(&work.join(".agent")),
            "{parsed:?}"
        );
        // The workspace is below /tmp here: the private temp dir is only made writable.
        assert!(parsed.writable.contains(&private) || parsed.tmp == Some(private.clone()));
        assert!(parsed.hidden.is_empty());
        let _ = run.finish();
        assert!(!private.exists() && !work.join(".agent").exists());

        let inspection = policy.inspection();
        let run = Run::prepare(&inspection).unwrap();
        let parsed = parse_helper_args(
            run.helper_args()
                .into_iter()
                .chain(["--".into(), "cat".into()]),
        )
        .unwrap();
        assert!(!parsed.network && parsed.restrict_reads && parsed.writable.is_empty());
        assert!(parsed.readable.contains(&work) && parsed.readable.contains(&"/usr".into()));
        assert_eq!(parsed.hidden, vec![work.join(".env")]);
        assert!(run.temp_dir().is_none());

        assert!(parse_helper_args(vec!["--write".into()]).is_err());
        assert!(parse_helper_args(vec!["--".into()]).is_err());
        assert!(parse_helper_args(vec!["--bogus".into()]).is_err());
    }

    #[test]
    fn denials_are_recognised_and_explained() {
        let mut policy = Sandbox::off().policy;
        policy.mode = SandboxMode::WorkspaceWrite;
        policy.network = false;
        policy.writable = vec!["/w".into()];
        let note = likely_denial(
            &policy,
            Some(1),
            "touch: cannot touch '/etc/x': Permission denied\n",
        )
        .unwrap();
        assert!(note.contains("writes only in /w"), "{note}");
        assert!(note.contains("cannot touch '/etc/x'"), "{note}");
        let note = likely_denial(
            &policy,
            Some(7),
            "curl: (7) Failed to connect: socket: Permission denied\n",
        )
        .unwrap();
        assert!(note.contains("network use is off"), "{note}");
        assert_eq!(
            likely_denial(&policy, Some(1), "error: no such file\n"),
            None
        );
        assert_eq!(
            likely_denial(&policy, Some(0), "Permission denied\n"),
            None,
            "a command that succeeded was not stopped"
        );
    }

    #[test]
    fn status_says_why_it_is_not_active() {
        let mut sandbox = Sandbox::off();
        assert_eq!(
            serde_json::to_value(sandbox.status()).unwrap(),
            serde_json::json!({"mode": "off", "active": false, "network": true, "reason": "mode off"})
        );
        sandbox.policy.mode = SandboxMode::WorkspaceWrite;
        sandbox.policy.network = false;
        sandbox.state = State::Unavailable("no Landlock".into());
        sandbox.required = true;
        assert_eq!(
            serde_json::to_value(sandbox.status()).unwrap(),
            serde_json::json!({"mode": "workspace-write", "active": false, "network": false, "reason": "no Landlock"})
        );
        assert!(sandbox.refusal().unwrap().contains("required"));
    }
}
