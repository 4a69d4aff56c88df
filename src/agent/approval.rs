//! The final decision on one command: the policy, then the mode, then — where the
//! policy could not decide — a person, whose answer has a scope: once, this exact
//! command for the rest of the run, a prefix in this project or everywhere (saved
//! by the approver, and in force for the rest of this run at once). A person may
//! deny with a note for the model, or edit the command: the edited command goes
//! through the whole decision again and is marked as edited by the person.

use std::collections::HashSet;

use super::{DecidedBy, Loop, ShellCall};
use crate::approve::{Approval, ApprovalRequest, Approve};
use crate::policy::{self, Decision, OsFamily, Rule, Rules, Source, Verdict};

/// Edits in a row before the prompt stops offering another round: a person
/// editing this often is better served by denying with a note.
const MAX_EDITS: usize = 20;

/// The decision on a call, and the command it is about.
#[derive(Debug, Clone)]
pub(super) struct Decided {
    /// The final decision (never ask).
    pub decision: Decision,
    /// Who made it final.
    pub by: DecidedBy,
    /// The command decided: the model's, or the person's edit of it.
    pub command: String,
    /// The model's command, when the person edited it.
    pub edited_from: Option<String>,
    /// What the person told the model with a denial (`t`).
    pub note: Option<String>,
}

impl Decided {
    /// The `agent run` flag that would have allowed it, for a denial for want of a terminal
    /// (`--allow 'python3 -m pytest'`), when a rule can be offered.
    pub(super) fn allow_flag(&self, os: OsFamily) -> Option<String> {
        (self.by == DecidedBy::NoTerminal)
            .then(|| allow_flag(os, self.decision.prefix.as_deref()))
            .flatten()
    }
}

/// Commands a person allowed with `2`: the exact text, for the rest of the run — of the
/// session, for an interactive one, whose messages share one [`super::Config`] and so this.
#[derive(Debug, Default, Clone)]
pub struct RunAllowed(std::sync::Arc<std::sync::Mutex<HashSet<String>>>);

impl RunAllowed {
    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn insert(&self, command: &str) {
        self.set().insert(command.to_owned());
    }

    fn contains(&self, command: &str) -> bool {
        self.set().contains(command)
    }
}

impl Loop<'_> {
    /// Where the call's command would run, for the policy: the workspace and the model's
    /// `working_directory` (joined lexically; the runner resolves it again before running).
    fn context(&self, shell: &ShellCall) -> policy::Context {
        let cwd = shell.working_directory.as_deref().map_or_else(
            || self.config.workspace.clone(),
            |dir| self.config.workspace.join(dir),
        );
        policy::Context::new(
            self.config.os,
            &self.config.workspace,
            &cwd,
            self.config.read_only,
        )
        .with_secrets(self.config.files.secrets())
    }

    /// The final decision: policy, then mode, then a person where one can be asked.
    /// `None` when the person interrupted.
    pub(super) async fn decide<A: Approve>(
        &mut self,
        shell: &ShellCall,
        approver: &mut A,
        turn: u32,
    ) -> Option<Decided> {
        let mut command = shell.command.clone();
        let mut edited_from = None;
        for _ in 0..=MAX_EDITS {
            let decided = |decision: Decision, by: DecidedBy, command: &str| Decided {
                decision,
                by,
                command: command.to_owned(),
                edited_from: edited_from.clone(),
                note: None,
            };
            let decision = match self.settle(&command, shell, approver, turn) {
                Ok((decision, by)) => return Some(decided(decision, by, &command)),
                Err(ask) => ask,
            };
            let request = ApprovalRequest {
                command: command.clone(),
                description: shell.description.clone(),
                decision: decision.clone(),
                prefix: decision
                    .prefix
                    .clone()
                    .filter(|prefix| policy::allow_rule_problem(self.config.os, prefix).is_none()),
                edited_from: edited_from.clone(),
                unsandboxed: false,
                subject: if shell.background {
                    crate::approve::Subject::Background
                } else {
                    crate::approve::Subject::Command
                },
            };
            let allow = |reason: String, rule: Option<String>| {
                Some(decided(
                    person(&decision, Verdict::Allow, reason, rule),
                    DecidedBy::Person,
                    &command,
                ))
            };
            match approver.ask(&request).await {
                Approval::Allow => return allow("allowed at the prompt".into(), None),
                Approval::AllowForRun => {
                    self.config.run_allowed.insert(&command);
                    return allow(
                        "allowed at the prompt for the rest of this run".into(),
                        None,
                    );
                }
                Approval::AllowInProject(prefix) => {
                    self.add_allow_rule(&prefix);
                    let reason = format!(
                        "allowed at the prompt; \"{prefix}\" is now allowed in this project"
                    );
                    return allow(reason, Some(prefix));
                }
                Approval::AlwaysAllow(prefix) => {
                    self.add_allow_rule(&prefix);
                    let reason =
                        format!("allowed at the prompt; \"{prefix}\" is now always allowed");
                    return allow(reason, Some(prefix));
                }
                Approval::Deny => {
                    return Some(decided(
                        person(
                            &decision,
                            Verdict::Deny,
                            "denied at the prompt".into(),
                            None,
                        ),
                        DecidedBy::Person,
                        &command,
                    ));
                }
                Approval::DenyWithNote(note) => {
                    let reason = format!("denied at the prompt with a note: {note}");
                    let mut denied = decided(
                        person(&decision, Verdict::Deny, reason, None),
                        DecidedBy::Person,
                        &command,
                    );
                    denied.note = Some(note);
                    return Some(denied);
                }
                Approval::Edit(edited) => {
                    edited_from.get_or_insert_with(|| shell.command.clone());
                    command = edited;
                }
                Approval::Interrupt => return None,
            }
        }
        let reason = format!("edited {MAX_EDITS} times without an answer: denied");
        let decision = policy::decide(&self.rules, &self.context(shell), &command);
        Some(Decided {
            decision: person(&decision, Verdict::Deny, reason, None),
            by: DecidedBy::Person,
            command,
            edited_from,
            note: None,
        })
    }

    /// The decision when nobody has to be asked (policy, mode, a `2` earlier in this run, no
    /// terminal to ask), or the ask to put to the person. Mode `auto` applies only where
    /// [`super::auto_fallback`] finds nothing missing; for a removal it takes the turn's
    /// snapshot first, to know whether it can put back what the command removes.
    fn settle<A: Approve>(
        &self,
        command: &str,
        shell: &ShellCall,
        approver: &A,
        turn: u32,
    ) -> Result<(Decision, DecidedBy), Decision> {
        let context = self.context(shell);
        let policy = policy::decide(&self.rules, &context, command);
        let decision = if self.auto_applies() {
            let snapshots = &self.config.snapshots;
            policy::apply_auto(policy.clone(), &context, command, |paths| {
                snapshots.restorable(turn, paths)
            })
        } else {
            policy::apply_mode(policy.clone(), self.config.mode)
        };
        let by = if decision.verdict == policy.verdict {
            DecidedBy::Policy
        } else {
            DecidedBy::Mode
        };
        if decision.verdict != Verdict::Ask {
            return Ok((decision, by));
        }
        if self.config.run_allowed.contains(command) {
            let reason = "allowed at the prompt earlier in this run (2: this command, this run)";
            let allowed = person(&decision, Verdict::Allow, reason.to_owned(), None);
            return Ok((allowed, DecidedBy::Person));
        }
        if let Err(why) = approver.can_ask() {
            let reason = format!(
                "{}; nobody can be asked ({why}){}",
                decision.reason,
                how_to_allow(self.config.os, decision.prefix.as_deref())
            );
            let denied = Decision {
                verdict: Verdict::Deny,
                reason,
                ..decision
            };
            return Ok((denied, DecidedBy::NoTerminal));
        }
        Err(decision)
    }

    /// Mode `auto` applies: it is the mode, and the sandbox and snapshots are all there.
    pub(super) fn auto_applies(&self) -> bool {
        self.config.mode == policy::Mode::Auto
            && super::auto_fallback(
                self.config.mode,
                &self.config.sandbox,
                self.config.snapshots.available(),
            )
            .is_none()
    }

    /// A rule the person just saved applies for the rest of this run too.
    fn add_allow_rule(&mut self, prefix: &str) {
        self.allow.push(Rule {
            prefix: prefix.to_owned(),
            source: Source::User,
        });
        self.rules = Rules::new(self.allow.clone(), self.config.deny.clone());
    }
}

/// A person's decision about a command the policy asked about.
fn person(asked: &Decision, verdict: Verdict, reason: String, rule: Option<String>) -> Decision {
    Decision {
        verdict,
        reason,
        source: Source::User,
        rule,
        destructive: asked.destructive,
        prefix: None,
        parts: Vec::new(),
    }
}

/// The offered prefix as a rule a person may write (the checks of the prompt's offer), as
/// one shell word: in single quotes on Unix, double quotes on Windows (cmd.exe and
/// PowerShell). The rule is plain printable ASCII without quotes, so nothing needs escaping
/// or sanitising.
fn quoted_rule(os: OsFamily, prefix: Option<&str>) -> Option<String> {
    let prefix = prefix.filter(|prefix| policy::allow_rule_problem(os, prefix).is_none())?;
    Some(match os {
        OsFamily::Unix => format!("'{prefix}'"),
        OsFamily::Windows => format!("\"{prefix}\""),
    })
}

/// The `agent run` flag that allows a command denied for want of a terminal, when a rule can
/// be offered for it: `--allow 'python3 -m pytest'`.
pub(super) fn allow_flag(os: OsFamily, prefix: Option<&str>) -> Option<String> {
    quoted_rule(os, prefix).map(|rule| format!("--allow {rule}"))
}

/// `; to allow it without a prompt, pass --allow 'git push' …`: the flag and the settings
/// line, or that only a person at a terminal can approve it.
pub(super) fn how_to_allow(os: OsFamily, prefix: Option<&str>) -> String {
    match quoted_rule(os, prefix) {
        Some(rule) => format!(
            "; to allow it without a prompt, pass --allow {rule} to `agent run`, or keep it with \
             `agent rules add {rule}` (the allow list of [permissions.commands] in settings.toml)"
        ),
        None => "; no rule can be offered for it: run it at a terminal to approve it".to_owned(),
    }
}

/// The result sent to the model for a command the person edited: it says what ran
/// instead of what the model asked for.
pub(super) fn mark_edited(content: &str, from: &str, command: &str) -> String {
    let mut value: serde_json::Value =
        serde_json::from_str(content).unwrap_or_else(|_| serde_json::json!({ "result": content }));
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "edited_by_user".to_owned(),
            serde_json::json!({
                "note": "the user edited your command before it ran; this is the result of theirs",
                "your_command": from,
                "command_run": command,
            }),
        );
    }
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_denial_without_a_terminal_names_the_flag() {
        let unix = how_to_allow(OsFamily::Unix, Some("python3 -m pytest"));
        assert!(
            unix.contains("pass --allow 'python3 -m pytest' to `agent run`")
                && unix.contains("`agent rules add 'python3 -m pytest'`"),
            "{unix}"
        );
        assert_eq!(
            allow_flag(OsFamily::Windows, Some("npx jest")).as_deref(),
            Some("--allow \"npx jest\"")
        );
        // A prefix the prompt would not offer is not offered here either.
        for refused in ["python", "bash", "it's", "a;b", "x\u{1b}[31m"] {
            assert_eq!(
                allow_flag(OsFamily::Unix, Some(refused)),
                None,
                "{refused:?}"
            );
            assert!(how_to_allow(OsFamily::Unix, Some(refused)).contains("at a terminal"));
        }
        assert!(how_to_allow(OsFamily::Unix, None).contains("run it at a terminal"));
    }

    #[test]
    fn an_edited_result_names_both_commands() {
        let content = mark_edited(r#"{"exit_code":0}"#, "cargo test", "cargo nextest run");
        let value: serde_json::Value = serde_json::from_str(&content).unwrap();
        assert_eq!(value["exit_code"], 0);
        assert_eq!(value["edited_by_user"]["your_command"], "cargo test");
        assert_eq!(value["edited_by_user"]["command_run"], "cargo nextest run");
    }
}
