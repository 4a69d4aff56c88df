//! Which program is the sandbox helper: the small `agent-sandbox` beside this executable, or
//! this executable itself (`helper.rs` is what it does; `hold.rs` starts it too).

use std::ffi::OsString;
use std::path::PathBuf;

/// The hidden first argument that turns `agent` into the sandbox helper (Linux):
/// `agent __sandbox [--network] [--write DIR]… [--read-only DIR]… -- PROGRAM ARGS…`.
pub const HELPER_ARG: &str = "__sandbox";

/// The program that applies the sandbox and becomes the command, and its first argument:
/// the small `agent-sandbox` next to this executable when it is there (installed and built
/// with it), else this executable with [`HELPER_ARG`].
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) fn helper() -> std::io::Result<(PathBuf, OsString)> {
    let exe = std::env::current_exe()?;
    let small = exe.with_file_name(format!("agent-sandbox{}", std::env::consts::EXE_SUFFIX));
    if small.is_file() {
        return Ok((small, OsString::from(HELPER_VERSION_ARG)));
    }
    Ok((exe, OsString::from(HELPER_ARG)))
}

/// The first argument `agent-sandbox` takes: the version of the `agent` that starts it (the
/// arguments between them are internal and may change with any version).
pub(super) const HELPER_VERSION_ARG: &str = concat!("--agent=", env!("CARGO_PKG_VERSION"));
