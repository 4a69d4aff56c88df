//! The macOS sandbox: the command runs under `/usr/bin/sandbox-exec` with a generated
//! Seatbelt profile of the same meaning as the Linux rules (read everything; write only
//! beneath the writable directories and to the devices; `.git/hooks` and `.agent/`
//! read-only; no network but Unix sockets unless allowed). Compile-checked only: it has
//! not been run on a Mac by this project yet (the README says so).

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
    }
    profile
}

/// A path as an SBPL string literal.
fn quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}
