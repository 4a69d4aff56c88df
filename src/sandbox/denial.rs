//! The guess whether a failed command hit the sandbox ([`likely_denial`]), from the words
//! of its stderr.

use super::policy::{Policy, SandboxMode, join_paths};
use super::surfaces;

/// Words in a command's stderr that say the kernel refused something.
const DENIAL_WORDS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
];

/// Words that say a connection found nobody: with the network closed in the run's own
/// namespace (`hold.rs`), what a connection outside meets.
const CLOSED_WORDS: &[&str] = &["Connection refused", "Network is unreachable"];

/// Words that say the refused thing was network use.
const NETWORK_WORDS: &[&str] = &[
    "connect",
    "socket",
    "network",
    "Network",
    "resolve",
    "name resolution",
    "Connection refused",
    "unreachable",
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
    let what = if network && policy.proxy.is_some() {
        "the network reaches only the hosts `[network] allow` names, through the agent's proxy"
            .to_owned()
    } else if network && policy.run_network {
        "network use is off in the sandbox: `localhost` is the run's own, where only servers the \
         run's commands started in the background listen"
            .to_owned()
    } else if network {
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
    let lift = if network && policy.proxy.is_some() {
        "the host in `[network] allow`"
    } else if network {
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
    // Closed in the run's own namespace, a connection finds nobody instead of a refusal.
    let closed = !policy.network && policy.proxy.is_none() && policy.run_network;
    let nobody = stderr
        .lines()
        .find(|line| closed && CLOSED_WORDS.iter().any(|word| line.contains(word)));
    let line = stderr
        .lines()
        .find(|line| DENIAL_WORDS.iter().any(|word| line.contains(word)))
        .or(name_resolution)
        .or(nobody)?;
    Some(line.trim().chars().take(300).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Sandbox;
    use pretty_assertions::assert_eq;

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
        let proxied = Policy {
            proxy: Some("/run/proxy".into()),
            proxy_door: None,
            ..policy.clone()
        };
        let note = likely_denial(
            &proxied,
            Some(7),
            "curl: (7) Failed to connect: socket: Permission denied\n",
        )
        .unwrap();
        assert!(
            note.contains("only the hosts `[network] allow` names"),
            "{note}"
        );
        assert!(note.contains("(the host in `[network] allow`)"), "{note}");
        // Closed in the run's namespace a connection finds nobody: said so; not through the
        // proxy (its own refusals say more), nor for a command of its own (`run_network` off).
        for refused in [
            "bash: connect: Connection refused\n",
            "ConnectionRefusedError: [Errno 111] Connection refused\n",
            "connect: Network is unreachable\n",
        ] {
            let shared = Policy {
                run_network: true,
                ..policy.clone()
            };
            let note = likely_denial(&shared, Some(1), refused).unwrap();
            assert!(note.contains("`localhost` is the run's own"), "{note}");
            let proxied = Policy {
                run_network: true,
                ..proxied.clone()
            };
            assert_eq!(likely_denial(&proxied, Some(1), refused), None, "{refused}");
            assert_eq!(likely_denial(&policy, Some(1), refused), None, "{refused}");
        }
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
}
