//! The macOS sandbox: the command runs under `/usr/bin/sandbox-exec` with a generated
//! Seatbelt profile of the same meaning as the Linux rules (read everything; write only
//! beneath the writable directories and to the devices; `.git/hooks` and `.agent/`
//! read-only; no network but Unix sockets unless allowed, and in `[network] mode =
//! "allowlist"` the proxy's door on the loopback, `net/door.rs`). Its profile is unit-tested
//! on Linux; the macOS build is not checked here (the C dependencies need Apple's SDK), and it
//! has not been run on a Mac by this project yet (docs/sandbox.md says so).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Policy;

/// Apple's sandbox front end (deprecated in name, still shipped and used by build tools).
const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Device files any command may write.
const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/dtracehelper",
];

/// Whether `sandbox-exec` exists here.
pub(super) fn probe() -> Result<String, String> {
    if Path::new(SANDBOX_EXEC).exists() {
        Ok("Seatbelt (sandbox-exec)".to_owned())
    } else {
        Err(format!("`{SANDBOX_EXEC}` is missing"))
    }
}

/// `sandbox-exec -p PROFILE ARGV…`; `temp` is the command's private temp directory.
pub(super) fn wrap(
    policy: &Policy,
    temp: Option<&Path>,
    argv: &[OsString],
) -> (PathBuf, Vec<OsString>) {
    let mut policy = policy.clone();
    policy.writable.extend(temp.map(Path::to_path_buf));
    let mut args = vec![OsString::from("-p"), OsString::from(profile(&policy))];
    args.extend(argv.iter().cloned());
    (PathBuf::from(SANDBOX_EXEC), args)
}

/// The Seatbelt profile for `policy`. Later rules win in SBPL, so the read-only
/// directories come after the writable ones.
fn profile(policy: &Policy) -> String {
    let mut profile = String::from(
        "(version 1)\n(deny default)\n(allow process-exec)\n(allow process-fork)\n\
         (allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup)\n\
         (allow ipc-posix-shm)\n(allow file-read*)\n(allow file-ioctl)\n",
    );
    for file in DEVICE_FILES {
        profile.push_str(&format!(
            "(allow file-write* (literal {}))\n",
            quote(Path::new(file))
        ));
    }
    for dir in &policy.writable {
        profile.push_str(&format!("(allow file-write* (subpath {}))\n", quote(dir)));
    }
    for dir in &policy.read_only {
        profile.push_str(&format!("(deny file-write* (subpath {}))\n", quote(dir)));
    }
    if policy.network {
        profile.push_str("(allow network*)\n");
    } else {
        profile.push_str(
            "(allow network* (local unix-socket))\n(allow network* (remote unix-socket))\n",
        );
        // `[network] mode = "allowlist"`: the proxy's door and nothing else on any address
        // (SBPL names the loopback `localhost`; no other host is allowed in an `ip` filter).
        if let (Some(_), Some(port)) = (&policy.proxy, policy.proxy_door) {
            profile.push_str(&format!(
                "(allow network-outbound (remote ip \"localhost:{port}\"))\n"
            ));
        }
    }
    profile
}

/// A path as an SBPL string literal.
fn quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SandboxMode;

    fn policy() -> Policy {
        Policy::new(
            SandboxMode::WorkspaceWrite,
            false,
            Path::new("/work/project"),
            Path::new("/tmp"),
            &[],
        )
    }

    #[test]
    fn without_network_only_unix_sockets_are_allowed() {
        let profile = profile(&policy());
        assert!(profile.contains("(deny default)"), "{profile}");
        assert!(!profile.contains("(allow network*)\n"), "{profile}");
        assert!(!profile.contains("network-outbound"), "{profile}");
        assert!(profile.contains("(remote unix-socket)"), "{profile}");
    }

    #[test]
    fn the_allowlist_opens_the_proxys_door_and_nothing_else() {
        let mut policy = policy();
        policy.proxy = Some(PathBuf::from("/tmp/agent-net-1-0"));
        policy.proxy_door = Some(50123);
        let text = profile(&policy);
        let outbound: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("network"))
            .filter(|line| !line.contains("unix-socket"))
            .collect();
        assert_eq!(
            outbound,
            ["(allow network-outbound (remote ip \"localhost:50123\"))"]
        );
        // A door without the proxy (mode `auto` closes the network) opens nothing.
        policy.proxy = None;
        assert!(!profile(&policy).contains("network-outbound"));
    }

    #[test]
    fn the_full_network_is_all_or_nothing() {
        let mut policy = policy();
        policy.network = true;
        assert!(profile(&policy).contains("(allow network*)\n"));
    }

    #[test]
    fn paths_are_quoted_as_sbpl_strings() {
        assert_eq!(quote(Path::new("/a \"b\"\\c")), "\"/a \\\"b\\\"\\\\c\"");
    }
}
