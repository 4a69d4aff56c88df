//! The parent's setup: whether the sandbox can apply on this machine ([`Sandbox::new`],
//! [`availability`]), whether the read-only paths can be protected here (the mount probe, its
//! answer kept between processes), and the state recorded in the `start` event.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::helper::{PROBE_MOUNTS_ARG, PROBE_NETNS_ARG, helper};
use super::limits::ResourceLimits;
#[cfg(target_os = "linux")]
use super::linux;
#[cfg(target_os = "macos")]
use super::macos;
use super::policy::{Policy, SandboxMode, join_paths};
use super::{TEST_NO_MOUNTS_ENV, TEST_UNAVAILABLE_ENV};

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
    /// Why no command may run although the sandbox is off or unavailable: a setting only it
    /// could enforce (`[network] mode = "allowlist"`). Said like [`Sandbox::refusal`].
    pub refused: Option<String>,
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
            refused: None,
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
                proxy_door: None,
                run_network: false,
            },
            required: false,
            state: State::Off,
            limitation: None,
            refused: None,
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
        if let Some(refused) = &self.refused {
            return Some(refused.clone());
        }
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
            limitation: self.refused.clone().or_else(|| self.limitation.clone()),
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
    if helper_says_yes(PROBE_MOUNTS_ARG)? {
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

/// Asks a throw-away helper process `probe` (it exits 0 for yes).
fn helper_says_yes(probe: &str) -> Result<bool, String> {
    let (helper, first) = helper().map_err(|error| error.to_string())?;
    let status = std::process::Command::new(helper)
        .arg(first)
        .arg(probe)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|error| error.to_string())?;
    Ok(status.success())
}

/// Whether a command can get a network namespace of its own here (for `[network] mode =
/// "allowlist"`), asked of a throw-away helper process.
///
/// # Errors
/// Why no network namespace can be made (to be said once, with what to do).
pub fn network_namespace_possible() -> Result<(), String> {
    if std::env::var_os(super::TEST_NO_NETNS_ENV).is_some_and(|v| v == "1") {
        return Err(format!(
            "forced by {}=1, a test-only switch",
            super::TEST_NO_NETNS_ENV
        ));
    }
    if !cfg!(target_os = "linux") {
        return Err(format!(
            "network namespaces are Linux's; {} has none",
            std::env::consts::OS
        ));
    }
    if helper_says_yes(PROBE_NETNS_ARG)? {
        Ok(())
    } else {
        Err(
            "this system lets the agent make no network namespace (not root, and no \
             unprivileged user namespaces, e.g. Ubuntu's AppArmor restriction)"
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
pub(super) fn write_private(file: &Path, bytes: &[u8]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
