//! One command's sandbox: what is prepared before it runs (its private temp directory, the git
//! surfaces of the workspace to keep read-only, the secret files to hide) and what is done
//! after it (the surfaces checked and changes undone, the temp directory removed).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::surfaces::{Guard, Mounts};
use super::{Policy, SandboxMode};

/// The shared temp directory that a command's private one replaces, where mounts allow.
const TMP: &str = "/tmp";

/// The stub resolver's configuration in the proxy's directory (`net::proxy::RESOLV_CONF_NAME`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const RESOLV_CONF_NAME: &str = "resolv.conf";

/// Numbers the private temp directories this process makes.
static TEMP_DIRS: AtomicU64 = AtomicU64::new(0);

/// At most this many secret files are hidden one by one (each is a mount); past it the rest
/// stay readable and the run says so.
const MAX_HIDDEN_FILES: usize = 2000;

/// One command's sandbox, from [`Run::prepare`] to [`Run::finish`].
#[derive(Debug)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Run {
    policy: Policy,
    mounts: Mounts,
    hidden: Vec<PathBuf>,
    temp: Option<PathBuf>,
    guard: Option<Guard>,
}

impl Run {
    /// Prepares a command's run in `policy`: records the workspace's git surfaces (making
    /// the missing surface directories, to keep them read-only), finds the secret files to
    /// hide, and makes the private temp directory.
    ///
    /// # Errors
    /// When the private temp directory cannot be made.
    pub fn prepare(policy: &Policy) -> std::io::Result<Run> {
        let writes = policy.mode == SandboxMode::WorkspaceWrite;
        let (guard, mounts) = if writes {
            let (guard, mut mounts) =
                Guard::before(&policy.workspace, policy.mounts, policy.cache.as_deref());
            if policy.git_read_only {
                // After the surfaces: each git directory's read-only bind covers them all.
                let git_dirs = std::mem::take(&mut mounts.git_dirs);
                mounts.read_only.extend(git_dirs);
            }
            (Some(guard), mounts)
        } else {
            (None, Mounts::default())
        };
        let hidden = if policy.hide_secrets && policy.mounts {
            secret_files(&policy.workspace, policy.cache.as_deref())
        } else {
            Vec::new()
        };
        let temp = if writes {
            Some(private_temp(&policy.temp)?)
        } else {
            None
        };
        Ok(Run {
            policy: policy.clone(),
            mounts,
            hidden,
            temp,
            guard,
        })
    }

    /// The policy this run applies.
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The command's own temp directory, when it may write (as seen outside its sandbox).
    #[must_use]
    pub fn temp_dir(&self) -> Option<&Path> {
        self.temp.as_deref()
    }

    /// The command's `TMPDIR`: `/tmp` where the helper binds the private temp directory there
    /// (`--tmp`), else that directory. Given to the helper already, the helper's environment
    /// need not change (std copies a changed environment whole).
    #[must_use]
    pub fn command_temp_dir(&self) -> Option<&Path> {
        let temp = self.temp.as_deref()?;
        Some(if self.binds_tmp(temp) {
            Path::new(TMP)
        } else {
            temp
        })
    }

    /// Whether the helper binds the private temp directory `temp` over `/tmp` (Linux, where
    /// mounts are made), unless that would hide `/tmp` itself or the private directory.
    fn binds_tmp(&self, temp: &Path) -> bool {
        let policy = &self.policy;
        let tmp = Path::new(TMP);
        let hides = std::iter::once(&policy.workspace)
            .chain(&policy.writable)
            .any(|path| path == tmp || temp.starts_with(path));
        cfg!(target_os = "linux") && policy.mounts && !hides
    }

    /// After the command: undoes changes to the git surfaces (saying what was undone) and
    /// removes the private temp directory.
    #[must_use]
    pub fn finish(mut self) -> Vec<String> {
        self.end()
    }

    /// While a long-lived process (an MCP server, a background process) runs on: undoes
    /// changes to the git surfaces since it started (saying what was undone), so that what it
    /// plants lives until the next check, not until it ends. The state before it stays the one
    /// checked against — taken anew, it could take in a plant made while the check ran (one
    /// planted in a loop would then stay for good) — and the directories made for it stay
    /// until it ends: its mount namespace keeps them read-only (removing one from outside
    /// would lift that).
    pub fn check(&mut self) -> Vec<String> {
        let Some(guard) = &self.guard else {
            return Vec::new();
        };
        let mut again = guard.clone();
        let _kept = again.take_created();
        again.finish()
    }

    fn end(&mut self) -> Vec<String> {
        if let Some(temp) = self.temp.take() {
            // Mostly the command left it empty: one `rmdir`, not a directory read first.
            if std::fs::remove_dir(&temp).is_err() {
                let _ = std::fs::remove_dir_all(temp);
            }
        }
        self.guard.take().map(Guard::finish).unwrap_or_default()
    }

    /// The helper's arguments for this run (before `--`).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(super) fn helper_args(&self) -> Vec<OsString> {
        let policy = &self.policy;
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |flag: &str, path: &Path| {
            args.push(flag.into());
            args.push(path.into());
        };
        for dir in &policy.writable {
            push("--write", dir);
        }
        for path in &self.mounts.pinned {
            push("--pin", path);
        }
        for path in &self.mounts.read_only {
            push("--read-only", path);
        }
        for path in &self.hidden {
            push("--hide", path);
        }
        for path in policy.readable.iter().flatten() {
            push("--read", path);
        }
        if let Some(temp) = &self.temp {
            // Bound over `/tmp`, the paths below it the command works with bound back in place
            // (`linux.rs`).
            push(
                if self.binds_tmp(temp) {
                    "--tmp"
                } else {
                    "--write"
                },
                temp,
            );
        }
        if !policy.network
            && let Some(proxy) = &policy.proxy
        {
            push("--proxy", proxy);
            // The bridge checks that the socket it reaches is this process's.
            push("--proxy-pid", Path::new(&std::process::id().to_string()));
            if policy.mounts {
                push("--resolv", &proxy.join(RESOLV_CONF_NAME));
            }
        }
        #[cfg(target_os = "linux")]
        if !policy.network
            && policy.run_network
            && let Some(join) = super::hold::join_arg(policy)
        {
            args.push("--join".into());
            args.push(join.into());
        }
        if policy.network {
            args.push("--network".into());
        }
        if policy.readable.is_some() {
            args.push("--restrict-reads".into());
        }
        args.extend(policy.limits.helper_args());
        args
    }
}

/// A run abandoned (the agent stopped by a signal while the command ran, its group killed
/// first) is still checked and undone, and its temp directory removed.
impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.end();
    }
}

/// Makes a new directory only this user can enter, in `parent`.
fn private_temp(parent: &Path) -> std::io::Result<PathBuf> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(false);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    loop {
        let n = TEMP_DIRS.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = parent.join(format!("agent-{}-{n}-{nanos:x}", std::process::id()));
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
    }
}

/// The files in `workspace` that hold secrets (`assets/secret-files.txt`), not looking inside
/// git directories and not following links.
fn secret_files(workspace: &Path, cache: Option<&Path>) -> Vec<PathBuf> {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    super::tree::look(&workspace, cache)
        .secret_files
        .into_iter()
        .take(MAX_HIDDEN_FILES)
        .collect()
}
