//! Whether mode `auto` can apply here: only where the sandbox is fully active (Linux, active,
//! the git surfaces and read-only paths protected by a mount namespace) and snapshots can be
//! taken, so that what runs without a prompt stays inside the fence and `agent undo` takes it
//! back. Anywhere else `auto` acts as `ask`, said once at the start (screen and `start`
//! event). Never does `auto` run an unsandboxed command without a yes.

use crate::policy::Mode;
use crate::sandbox::{Policy, Sandbox, State};

/// Why mode `auto` acts as `ask` here, for the person; `None` when `auto` applies (or the
/// mode is not `auto`).
#[must_use]
pub fn auto_fallback(mode: Mode, sandbox: &Sandbox, snapshots: bool) -> Option<String> {
    if mode != Mode::Auto {
        return None;
    }
    let why = match &sandbox.state {
        State::Off => "the sandbox is off".to_owned(),
        State::Unavailable(why) => format!("the sandbox is not available ({why})"),
        State::Active(_) if !cfg!(target_os = "linux") => {
            "mode `auto` is only tested with the Linux sandbox".to_owned()
        }
        State::Active(how) if how.contains(crate::sandbox::NO_TRUNCATE_RULE) => format!(
            "the sandbox cannot refuse emptying a file outside the workspace here ({how}: \
             Landlock ABI 3, Linux 6.2, adds it)"
        ),
        State::Active(_) => match &sandbox.limitation {
            Some(limitation) => format!("the sandbox is not fully active ({limitation})"),
            None if !snapshots => {
                "snapshots are off or cannot be taken, so `agent undo` could not take a command \
                 back"
                    .to_owned()
            }
            None => return None,
        },
    };
    Some(format!(
        "mode `auto` acts as `ask` here: {why}; commands the sandbox would contain ask as usual"
    ))
}

/// The sandbox of a command mode `auto` let through: only the workspace is writable (not
/// `[sandbox] writable`'s extras, which no snapshot keeps), git's directories are read-only as
/// a whole, and the network is closed — not even the allowlist's proxy (a person's yes opens
/// it).
pub(super) fn auto_policy(policy: &Policy) -> Policy {
    Policy {
        network: false,
        proxy: None,
        writable: policy
            .writable
            .iter()
            .filter(|dir| dir.starts_with(&policy.workspace))
            .cloned()
            .collect(),
        git_read_only: true,
        ..policy.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(state: State, limitation: Option<&str>) -> Sandbox {
        Sandbox {
            state,
            limitation: limitation.map(str::to_owned),
            ..Sandbox::off()
        }
    }

    #[test]
    fn auto_applies_only_with_a_full_sandbox_and_snapshots() {
        let active = || State::Active("Landlock (files, TCP) + seccomp".into());
        let full = sandbox(active(), None);
        for mode in [Mode::Ask, Mode::Deny, Mode::Off, Mode::AllowAll] {
            assert_eq!(auto_fallback(mode, &sandbox(State::Off, None), false), None);
        }
        assert_eq!(
            auto_fallback(Mode::Auto, &full, true).is_none(),
            cfg!(target_os = "linux")
        );
        let cases = [
            (sandbox(State::Off, None), true, "the sandbox is off"),
            (
                sandbox(State::Unavailable("no Landlock".into()), None),
                true,
                "not available (no Landlock)",
            ),
            (
                sandbox(active(), Some("no mounts")),
                true,
                "not fully active",
            ),
            (full.clone(), false, "snapshots are off"),
            (
                sandbox(
                    State::Active(format!(
                        "Landlock (files, {}) + seccomp",
                        crate::sandbox::NO_TRUNCATE_RULE
                    )),
                    None,
                ),
                true,
                "cannot refuse emptying a file",
            ),
        ];
        for (sandbox, snapshots, says) in cases {
            let why = auto_fallback(Mode::Auto, &sandbox, snapshots).unwrap_or_default();
            assert!(
                why.starts_with("mode `auto` acts as `ask` here")
                    && (why.contains(says) || !cfg!(target_os = "linux")),
                "{why}"
            );
        }
    }
}
