//! The sandbox helper: how a shell invocation is wrapped so that it runs restricted
//! ([`wrap`]), and the re-executed helper that makes the command's namespaces and mounts, then
//! restricts itself before `exec`ing the command ([`helper_main`], Linux).

use std::ffi::OsString;
use std::path::PathBuf;

#[cfg(target_os = "linux")]
use super::helper_args::HelperArgs;
use super::helper_args::parse_helper_args;
#[cfg(target_os = "linux")]
use super::linux;
#[cfg(target_os = "macos")]
use super::macos;
use super::program::HELPER_VERSION_ARG;
pub(super) use super::program::helper;
use super::run::Run;
#[cfg(target_os = "linux")]
use super::supervise;

pub use super::program::HELPER_ARG;

/// Variables the helper passes to the command under this prefix only: the stage sets them
/// under their own names after it restricted itself ([`unstage`]), so what a server's settings
/// name (`LD_PRELOAD`, `GLIBC_TUNABLES`, …) never reaches the dynamic loader of the helper,
/// which stays outside the sandbox.
pub const STAGED_ENV_PREFIX: &str = "AGENT_SANDBOX_STAGED_";

/// Loader variables: they make the dynamic loader run or look for code before `main`.
#[must_use]
pub fn loader_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("LD_") || upper.starts_with("DYLD_") || upper == "GLIBC_TUNABLES"
}

/// The staged variables of `vars` (see [`STAGED_ENV_PREFIX`]): the names to remove from the
/// command's environment, and the variables to set instead (loader variables never).
#[must_use]
pub fn unstage(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> (Vec<OsString>, Vec<(OsString, OsString)>) {
    let mut remove = Vec::new();
    let mut set = Vec::new();
    for (key, value) in vars {
        let Some(name) = key.to_str().and_then(|k| k.strip_prefix(STAGED_ENV_PREFIX)) else {
            continue;
        };
        if !name.is_empty() && !loader_variable(name) {
            set.push((OsString::from(name), value));
        }
        remove.push(key);
    }
    (remove, set)
}

/// The helper's argument that only checks whether the read-only paths can be protected here
/// (a private mount namespace can be made) and exits 0 if so.
pub(super) const PROBE_MOUNTS_ARG: &str = "--probe-mounts";

/// The helper's argument that only checks whether a network namespace can be made here and
/// exits 0 if so.
pub(super) const PROBE_NETNS_ARG: &str = "--probe-netns";

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
    if args.first().is_some_and(|arg| arg == PROBE_NETNS_ARG) {
        #[cfg(target_os = "linux")]
        return std::process::ExitCode::from(u8::from(!super::netns::possible()));
        #[cfg(not(target_os = "linux"))]
        return std::process::ExitCode::from(1);
    }
    #[cfg(target_os = "linux")]
    if args
        .first()
        .is_some_and(|arg| arg == super::netns::BRIDGE_ARG)
    {
        let pid = args.get(2).and_then(|pid| pid.to_str()?.parse().ok());
        return match (args.get(1), pid) {
            (Some(socket), Some(pid)) => {
                super::netns::bridge_main(std::path::Path::new(socket), pid)
            }
            _ => fail(
                "`--bridge` needs the proxy's socket and process id (the helper is internal to \
                 agent)",
            ),
        };
    }
    #[cfg(target_os = "linux")]
    if args.first().is_some_and(|arg| arg == super::hold::HOLD_ARG) {
        let pid = args.get(2).and_then(|pid| pid.to_str()?.parse().ok());
        return match (args.get(1), pid) {
            (Some(socket), Some(pid)) => {
                super::hold::hold_main(Some((std::path::Path::new(socket), pid)))
            }
            (None, _) => super::hold::hold_main(None),
            _ => fail("`--hold` needs the proxy's socket and process id, or nothing"),
        };
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
        // Ended with its parent: the helper with the agent (killed with SIGKILL, say), the
        // command with the helper — and, as a PID namespace's first process, all it started.
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        if stage {
            return match become_command(&parsed) {
                Err(error) => fail(&error),
            };
        }
        let (pid_namespace, joined) = match linux::prepare(&parsed, std::ffi::OsStr::new(first)) {
            Ok(prepared) => prepared,
            Err(error) => return fail(&error),
        };
        if !joined {
            // The stage must not take the run's namespace for granted (its seccomp filter).
            args = without_join(args);
        }
        // This very program, however its file is named or replaced meanwhile.
        let mut command = std::process::Command::new("/proc/self/exe");
        std::os::unix::process::CommandExt::arg0(&mut command, "agent-sandbox");
        command.args([first, STAGE_ARG]).args(&args);
        // The agent gives it already (`Run::command_temp_dir`): a changed environment would
        // be copied whole.
        if let Some(temp) = linux::command_tmp(&parsed)
            && std::env::var_os("TMPDIR").is_none_or(|given| given != temp.as_os_str())
        {
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

/// The helper's arguments without `--join` and its value.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn without_join(args: Vec<OsString>) -> Vec<OsString> {
    let mut kept = Vec::with_capacity(args.len());
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            kept.push(arg);
            kept.extend(args);
            break;
        }
        if arg == "--join" {
            args.next();
        } else {
            kept.push(arg);
        }
    }
    kept
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
    let mut command = std::process::Command::new(program);
    let (remove, set) = unstage(std::env::vars_os());
    for key in remove {
        command.env_remove(key);
    }
    let error = command.args(&args.argv[1..]).envs(set).exec();
    Err(format!(
        "cannot start `{}`: {error}",
        program.to_string_lossy()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_join_drops_only_the_flag_before_the_command() {
        let args: Vec<OsString> = [
            "--write", "/w", "--join", "9:1:2", "--", "sh", "--join", "x",
        ]
        .map(OsString::from)
        .to_vec();
        let kept: Vec<OsString> = ["--write", "/w", "--", "sh", "--join", "x"]
            .map(OsString::from)
            .to_vec();
        assert_eq!(without_join(args), kept);
    }

    #[test]
    fn staged_variables_are_set_under_their_names_and_loader_variables_never() {
        let vars = [
            ("PATH", "/bin"),
            ("AGENT_SANDBOX_STAGED_GITHUB_TOKEN", "t"),
            ("AGENT_SANDBOX_STAGED_", "x"),
            ("AGENT_SANDBOX_STAGED_LD_PRELOAD", "/x.so"),
            ("AGENT_SANDBOX_STAGED_ld_audit", "/x.so"),
            ("AGENT_SANDBOX_STAGED_DYLD_INSERT_LIBRARIES", "/x"),
            ("AGENT_SANDBOX_STAGED_GLIBC_TUNABLES", "x"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let (remove, set) = unstage(vars.clone());
        assert_eq!(remove.len(), vars.len() - 1, "{remove:?}");
        assert!(!remove.contains(&OsString::from("PATH")));
        assert_eq!(set, vec![("GITHUB_TOKEN".into(), "t".into())]);
        for name in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "ld_audit",
            "DYLD_X",
            "GLIBC_TUNABLES",
        ] {
            assert!(loader_variable(name), "{name}");
        }
        for name in ["PATH", "HOME", "OLD_PRELOAD", "GLIBC"] {
            assert!(!loader_variable(name), "{name}");
        }
    }
}
