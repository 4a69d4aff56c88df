//! The helper's arguments, parsed: what the parent's [`Run`](super::Run) passes to the
//! sandbox helper (`linux.rs` applies them).

use std::ffi::OsString;
use std::path::PathBuf;

use super::limits::ResourceLimits;

/// The helper's arguments, parsed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct HelperArgs {
    pub(super) network: bool,
    /// The network proxy's directory: a network namespace of the command's own, bridged to
    /// the proxy's socket there.
    pub(super) proxy: Option<PathBuf>,
    /// The agent's process id (with `proxy`): the bridge connects only to a socket that
    /// process listens on, whatever the path has become.
    pub(super) proxy_pid: Option<u32>,
    /// The stub resolver's configuration, bound over `/etc/resolv.conf` (with `proxy`).
    pub(super) resolv: Option<PathBuf>,
    /// The run's network namespace to join instead of making one (`hold.rs`).
    pub(super) join: Option<Joined>,
    pub(super) writable: Vec<PathBuf>,
    /// Existing paths made read-only in the mount namespace.
    pub(super) read_only: Vec<PathBuf>,
    /// Directories bound onto themselves (cannot be renamed away).
    pub(super) pinned: Vec<PathBuf>,
    /// Files hidden (`/dev/null` bound over them).
    pub(super) hidden: Vec<PathBuf>,
    /// The command's private temp directory, bound over `/tmp`.
    pub(super) tmp: Option<PathBuf>,
    /// Reads only beneath `readable` (and the devices).
    pub(super) restrict_reads: bool,
    pub(super) readable: Vec<PathBuf>,
    /// CPU time and memory, set by the stage.
    pub(super) limits: ResourceLimits,
    pub(super) argv: Vec<OsString>,
}

impl HelperArgs {
    /// Whether the helper needs a private mount namespace.
    #[cfg(target_os = "linux")]
    pub(super) fn mounts(&self) -> bool {
        !(self.read_only.is_empty()
            && self.pinned.is_empty()
            && self.hidden.is_empty()
            && self.tmp.is_none()
            && self.resolv.is_none())
    }
}

/// The run's network namespace, as the agent saw it: its holder's process id and the inode
/// numbers of the holder's network and user namespaces (checked again before joining, so that
/// a process id used again by another process never leads into its namespaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Joined {
    pub(super) pid: u32,
    pub(super) net: u64,
    pub(super) user: u64,
}

impl Joined {
    /// `PID:NET:USER`, as [`Joined::arg`] writes it.
    pub(super) fn parse(spec: &str) -> Option<Joined> {
        let mut parts = spec.split(':').map(str::parse::<u64>);
        let (Some(Ok(pid)), Some(Ok(net)), Some(Ok(user)), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let pid = u32::try_from(pid).ok().filter(|pid| *pid > 1)?;
        Some(Joined { pid, net, user })
    }

    /// The helper's `--join` value.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(super) fn arg(self) -> String {
        format!("{}:{}:{}", self.pid, self.net, self.user)
    }
}

pub(super) fn parse_helper_args(
    args: impl IntoIterator<Item = OsString>,
) -> Result<HelperArgs, String> {
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
            "--proxy-pid" => {
                let pid = value()?;
                let pid = pid.to_str().and_then(|pid| pid.parse().ok());
                parsed.proxy_pid = Some(pid.ok_or("`--proxy-pid` needs a process id")?);
            }
            "--resolv" => parsed.resolv = Some(value()?),
            "--join" => {
                let spec = value()?;
                let joined = spec.to_str().and_then(Joined::parse);
                parsed.join = Some(joined.ok_or("`--join` needs PID:NET:USER")?);
            }
            "--" => {
                parsed.argv = args.collect();
                break;
            }
            _ => return Err(format!("unknown argument `{}`", arg.to_string_lossy())),
        }
    }
    if parsed.proxy.is_some() && parsed.proxy_pid.is_none() {
        return Err("`--proxy` needs `--proxy-pid`".to_owned());
    }
    if parsed.argv.is_empty() {
        return Err("no program to run after `--`".to_owned());
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Policy, Run, SandboxMode};
    use pretty_assertions::assert_eq;

    #[test]
    fn a_join_value_is_three_numbers_and_never_process_zero_or_one() {
        let joined = Joined {
            pid: 42,
            net: 4_026_532_000,
            user: 4_026_531_837,
        };
        assert_eq!(Joined::parse(&joined.arg()), Some(joined));
        for bad in [
            "",
            "42",
            "42:1",
            "42:1:2:3",
            "0:1:2",
            "1:1:2",
            "-5:1:2",
            "x:1:2",
            "42:1:y",
            "99999999999:1:2",
            " 42:1:2",
        ] {
            assert_eq!(Joined::parse(bad), None, "{bad:?}");
        }
        let args = ["--join", "42:7:8", "--", "sh"].map(OsString::from);
        let parsed = parse_helper_args(args).unwrap();
        assert_eq!(
            parsed.join,
            Some(Joined {
                pid: 42,
                net: 7,
                user: 8
            })
        );
        assert!(parse_helper_args(["--join", "1:2", "--", "sh"].map(OsString::from)).is_err());
    }

    /// The `TMPDIR` the agent gives the helper is the one the helper's mounts make true:
    /// `/tmp` where it binds the private temp directory there, else that directory.
    #[test]
    fn the_command_temp_dir_is_where_the_helper_puts_it() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let (work, temp) = (root.join("work"), root.join("tmp"));
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        for mounts in [true, false] {
            for writable in [vec![], vec![temp.clone()], vec![root.clone()]] {
                let mut policy = Policy::new(SandboxMode::WorkspaceWrite, true, &work, &temp, &[]);
                policy.mounts = mounts;
                policy.writable.extend(writable.iter().cloned());
                let run = Run::prepare(&policy).unwrap();
                let private = run.temp_dir().unwrap().to_path_buf();
                let parsed = parse_helper_args(
                    run.helper_args()
                        .into_iter()
                        .chain(["--".into(), "sh".into()]),
                )
                .unwrap();
                let expected = if parsed.tmp.is_some() {
                    std::path::PathBuf::from("/tmp")
                } else {
                    assert!(parsed.writable.contains(&private), "{parsed:?}");
                    private.clone()
                };
                assert_eq!(
                    run.command_temp_dir(),
                    Some(expected.as_path()),
                    "mounts {mounts}, writable {writable:?}"
                );
                // Bound only where mounts are made and the binding hides nothing given.
                assert_eq!(
                    parsed.tmp.is_some(),
                    cfg!(target_os = "linux") && mounts && writable.is_empty(),
                    "mounts {mounts}, writable {writable:?}"
                );
                let _ = run.finish();
            }
        }
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
        // No `.agent` is made for the command to see (the check after it removes one it makes).
        assert!(
            !parsed.read_only.contains(&work.join(".agent")) && !work.join(".agent").exists(),
            "{parsed:?}"
        );
        // The workspace is below /tmp here: the private temp dir is only made writable.
        assert!(parsed.writable.contains(&private) || parsed.tmp == Some(private.clone()));
        assert_eq!(
            run.command_temp_dir(),
            Some(if parsed.tmp.is_some() {
                std::path::Path::new("/tmp")
            } else {
                private.as_path()
            })
        );
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
}
