//! The sandbox's vocabulary: how much a command may write ([`SandboxMode`]) and what a
//! sandboxed command may do in one workspace ([`Policy`]), built purely from the settings.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::PROTECTED_IN_WORKSPACE;
use super::limits::ResourceLimits;
use super::surfaces;

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
    /// command's run protects every surface `surfaces/find.rs` finds, these among them).
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
    /// The port of the proxy's door on this machine's loopback (`net/door.rs`), where no
    /// network namespace can hold the bridge (macOS): the command may connect there and
    /// nowhere else. `None`: the bridge's port inside the command's namespace (Linux).
    pub proxy_door: Option<u16>,
    /// The command joins the network namespace its run's commands share (Linux, with the
    /// network not `full`; see `hold.rs`). Off for an MCP server, which gets its own.
    pub run_network: bool,
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
            proxy_door: None,
            run_network: true,
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
            proxy_door: None,
            run_network: true,
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

pub(super) fn join_paths(paths: &[PathBuf]) -> String {
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
}
