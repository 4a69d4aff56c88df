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

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The hidden first argument that turns `agent` into the sandbox helper (Linux):
/// `agent __sandbox [--network] [--write DIR]… [--read-only DIR]… -- PROGRAM ARGS…`.
pub const HELPER_ARG: &str = "__sandbox";

/// Test-only switch: when set to `1`, the sandbox reports itself unavailable, so tests
/// can exercise the fallback and `required` on a machine where it works.
pub const TEST_UNAVAILABLE_ENV: &str = "AGENT_TEST_SANDBOX_UNAVAILABLE";

/// Test-only switch: when set to `1`, the read-only paths inside the workspace cannot be
/// protected (as where no mount namespace can be made), so tests see it reported.
pub const TEST_NO_MOUNTS_ENV: &str = "AGENT_TEST_SANDBOX_NO_MOUNTS";

/// The helper's argument that only checks whether the read-only paths can be protected here
/// (a private mount namespace can be made) and exits 0 if so.
const PROBE_MOUNTS_ARG: &str = "--probe-mounts";

/// Paths inside the workspace that stay read-only in `workspace-write` mode: a command must
/// not plant a git hook (in `.git/hooks`, or elsewhere through `core.hooksPath` in
/// `.git/config`) or loosen the project's agent settings. `.git/hooks` is protected even
/// when it does not exist yet (the helper creates it), and the `.git` directory holding
/// them is pinned so it cannot be renamed away and replaced.
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
    /// Existing directories inside `writable` that stay read-only.
    pub read_only: Vec<PathBuf>,
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
        if mode == SandboxMode::WorkspaceWrite {
            for dir in std::iter::once(workspace)
                .chain(std::iter::once(temp))
                .chain(extra.iter().map(PathBuf::as_path))
            {
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
        }
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
            && !policy.read_only.is_empty()
            && let Err(why) = read_only_protection()
        {
            limitation = Some(format!(
                "{} stay writable: {why}",
                join_paths(&policy.read_only)
            ));
            policy.read_only.clear();
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
fn read_only_protection() -> Result<(), String> {
    if std::env::var_os(TEST_NO_MOUNTS_ENV).is_some_and(|v| v == "1") {
        return Err(format!(
            "forced by {TEST_NO_MOUNTS_ENV}=1, a test-only switch"
        ));
    }
    if !cfg!(target_os = "linux") {
        return Ok(());
    }
    let exe = std::env::current_exe().map_err(|error| error.to_string())?;
    let status = std::process::Command::new(exe)
        .args([HELPER_ARG, PROBE_MOUNTS_ARG])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|error| error.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(
            "this system lets the agent make no private mount namespace (not root, and no \
             unprivileged user namespaces)"
                .to_owned(),
        )
    }
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

/// The program and arguments that run `argv` (the shell invocation) inside `policy`.
///
/// # Errors
/// When the helper (the agent's own executable) cannot be found.
#[cfg(target_os = "linux")]
pub fn wrap(policy: &Policy, argv: &[OsString]) -> std::io::Result<(PathBuf, Vec<OsString>)> {
    let exe = std::env::current_exe()?;
    let mut args = vec![OsString::from(HELPER_ARG)];
    if policy.network {
        args.push("--network".into());
    }
    for dir in &policy.writable {
        args.push("--write".into());
        args.push(dir.into());
    }
    for dir in &policy.read_only {
        args.push("--read-only".into());
        args.push(dir.into());
    }
    args.push("--".into());
    args.extend(argv.iter().cloned());
    Ok((exe, args))
}

/// The program and arguments that run `argv` (the shell invocation) inside `policy`.
///
/// # Errors
/// Never on macOS; kept fallible like the Linux version.
#[cfg(target_os = "macos")]
pub fn wrap(policy: &Policy, argv: &[OsString]) -> std::io::Result<(PathBuf, Vec<OsString>)> {
    Ok(macos::wrap(policy, argv))
}

/// No sandbox here: `argv` runs as it is.
///
/// # Errors
/// Never.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn wrap(_policy: &Policy, argv: &[OsString]) -> std::io::Result<(PathBuf, Vec<OsString>)> {
    let program = argv.first().map(PathBuf::from).unwrap_or_default();
    Ok((program, argv.iter().skip(1).cloned().collect()))
}

/// The helper's arguments, parsed.
#[derive(Debug, Default, PartialEq, Eq)]
struct HelperArgs {
    network: bool,
    writable: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    argv: Vec<OsString>,
}

fn parse_helper_args(args: impl IntoIterator<Item = OsString>) -> Result<HelperArgs, String> {
    let mut parsed = HelperArgs::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--network") => parsed.network = true,
            Some("--write") => parsed
                .writable
                .push(args.next().ok_or("`--write` needs a directory")?.into()),
            Some("--read-only") => parsed
                .read_only
                .push(args.next().ok_or("`--read-only` needs a directory")?.into()),
            Some("--") => {
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

/// The sandbox helper (`agent __sandbox …`, after [`HELPER_ARG`]): restricts this
/// process, then replaces it with the command. Returns only on failure, with exit
/// status 126 and one line on stderr; the command then did not run.
#[must_use]
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> std::process::ExitCode {
    let fail = |message: &str| {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "agent: sandbox: {message}: the command did not run (--sandbox off runs it without the sandbox)"
        );
        std::process::ExitCode::from(126)
    };
    let args: Vec<OsString> = args.into_iter().collect();
    if args.first().is_some_and(|arg| arg == PROBE_MOUNTS_ARG) {
        #[cfg(target_os = "linux")]
        return std::process::ExitCode::from(u8::from(!linux::mounts_possible()));
        #[cfg(not(target_os = "linux"))]
        return std::process::ExitCode::from(1);
    }
    let args = match parse_helper_args(args) {
        Ok(args) => args,
        Err(error) => return fail(&format!("{error} (the helper is internal to agent)")),
    };
    #[cfg(target_os = "linux")]
    {
        if let Err(error) = linux::restrict(&args) {
            return fail(&error);
        }
        use std::os::unix::process::CommandExt as _;
        let error = std::process::Command::new(&args.argv[0])
            .args(&args.argv[1..])
            .exec();
        fail(&format!(
            "cannot start `{}`: {error}",
            args.argv[0].to_string_lossy()
        ))
    }
    #[cfg(not(target_os = "linux"))]
    {
        fail(&format!(
            "the helper only exists on Linux, not for `{}`",
            args.argv[0].to_string_lossy()
        ))
    }
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
    let line: String = line.trim().chars().take(300).collect();
    let network = !policy.network && NETWORK_WORDS.iter().any(|word| line.contains(word));
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
        let policy = Policy {
            mode: SandboxMode::WorkspaceWrite,
            network: true,
            writable: vec!["/w".into(), "/t".into()],
            read_only: vec!["/w/.agent".into()],
        };
        let argv: Vec<OsString> = vec!["sh".into(), "-c".into(), "echo --write".into()];
        let mut args = vec![OsString::from("--network")];
        for dir in &policy.writable {
            args.extend(["--write".into(), dir.into()]);
        }
        args.extend(["--read-only".into(), "/w/.agent".into(), "--".into()]);
        args.extend(argv.iter().cloned());
        assert_eq!(
            parse_helper_args(args).unwrap(),
            HelperArgs {
                network: true,
                writable: policy.writable.clone(),
                read_only: policy.read_only.clone(),
                argv,
            }
        );
        assert!(parse_helper_args(vec!["--write".into()]).is_err());
        assert!(parse_helper_args(vec!["--".into()]).is_err());
        assert!(parse_helper_args(vec!["--bogus".into()]).is_err());
    }

    #[test]
    fn denials_are_recognised_and_explained() {
        let policy = Policy {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            writable: vec!["/w".into()],
            read_only: Vec::new(),
        };
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
