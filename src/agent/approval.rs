//! The final decision on one command: the policy, then the mode, then — where the
//! policy could not decide — a person, whose answer has a scope: once, this exact
//! command for the rest of the run, a prefix in this project or everywhere (saved
//! by the approver, and in force for the rest of this run at once). A person may
//! deny with a note for the model, or edit the command: the edited command goes
//! through the whole decision again and is marked as edited by the person.

use std::collections::HashSet;

use super::escalate::Escalate;
use super::{DecidedBy, Loop, ShellCall};
use crate::approve::{Approval, ApprovalRequest, Approve, Subject};
use crate::policy::{self, Decision, Mode, OsFamily, Rule, Rules, Source, Verdict};
use crate::sandbox::Policy;

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
    /// A person said yes to the call's `escalate`: how the command alone would have run,
    /// to which the yes adds exactly what that asked for.
    pub escalated: Option<Plain>,
}

/// How a command would run without its escalation: who let it through (a person's yes, where
/// it would have been asked) and whether as an inspection (read-only) — its sandbox and
/// environment (see `Loop::plain_sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plain {
    pub by: DecidedBy,
    pub inspection: bool,
}

impl Plain {
    /// From the command's own decision (allow, or ask: then as a person's yes gives).
    pub(super) fn of(decision: &Decision, by: DecidedBy) -> Self {
        if decision.verdict == Verdict::Allow {
            Self {
                by,
                inspection: by == DecidedBy::Policy && decision.source == Source::Builtin,
            }
        } else {
            Self {
                by: DecidedBy::Person,
                inspection: false,
            }
        }
    }
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
        if let Some(escalate) = &shell.escalate {
            let judged = self.judged(&shell.command, shell, turn);
            let plain = Plain::of(&judged.0, judged.1);
            let base = self.plain_sandbox(plain);
            let granted = self.escalation_sandbox(plain);
            let beyond = escalate.beyond(base.as_ref(), granted.as_ref());
            if !beyond.is_empty() {
                return self
                    .decide_escalation(shell, escalate, (&beyond, plain), judged, approver)
                    .await;
            }
        }
        self.decide_command(shell, approver, turn).await
    }

    /// [`Loop::decide`] for a call that asks for nothing beyond its sandbox.
    async fn decide_command<A: Approve>(
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
                escalated: None,
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
                escalation: None,
                subject: subject_of(shell),
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
            escalated: None,
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
        let (decision, by) = self.judged(command, shell, turn);
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

    /// The policy's decision on `command`, then the mode's: no person, no terminal asked.
    pub(super) fn judged(
        &self,
        command: &str,
        shell: &ShellCall,
        turn: u32,
    ) -> (Decision, DecidedBy) {
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
        (decision, by)
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

/// Calls with `escalate` (`super::escalate`): asked for, never assumed.
impl Loop<'_> {
    /// The sandbox a command runs in as `plain` lets it through (`None`: none): read-only as
    /// an inspection, mode `auto`'s (only the workspace writable, git's directories read-only,
    /// no network) where `auto` let it through, else the configured one.
    pub(super) fn plain_sandbox(&self, plain: Plain) -> Option<Policy> {
        let policy = self.config.sandbox.active_policy()?;
        Some(if plain.inspection {
            policy.inspection().limited(self.config.inspect_limits)
        } else if plain.by == DecidedBy::Mode && self.auto_applies() {
            super::auto::auto_policy(policy)
        } else {
            policy.clone()
        })
    }

    /// The sandbox a yes to an escalation starts from, before [`Escalate::apply`]: the one
    /// the command would have had ([`Loop::plain_sandbox`]), with only the configured means
    /// of limiting the network to hosts (the allowlist's proxy) where that one closed the
    /// network — nothing else of the configured sandbox.
    pub(super) fn escalation_sandbox(&self, plain: Plain) -> Option<Policy> {
        super::escalate::granting(
            self.plain_sandbox(plain),
            self.config.sandbox.active_policy(),
        )
    }

    /// The decision on a call whose `escalate` asks for `beyond`: a deny (rule, mode `deny`)
    /// first; then a person, asked once about the command with what it asks for; nobody
    /// to ask denies. `None` when the person interrupted.
    async fn decide_escalation<A: Approve>(
        &self,
        shell: &ShellCall,
        escalate: &Escalate,
        (beyond, plain): (&[String], Plain),
        (decision, by): (Decision, DecidedBy),
        approver: &mut A,
    ) -> Option<Decided> {
        let decided = |decision: Decision, by: DecidedBy| Decided {
            decision,
            by,
            command: shell.command.clone(),
            edited_from: None,
            note: None,
            escalated: None,
        };
        if decision.verdict == Verdict::Deny {
            return Some(decided(decision, by));
        }
        let asks = escalate.asks(beyond);
        let refuse = |why: String, by: DecidedBy| {
            let reason = format!(
                "{asks}; {why}. A person approves an escalation at the prompt of an `agent` \
                 run or session at a terminal, once per call"
            );
            Some(decided(person(&decision, Verdict::Deny, reason, None), by))
        };
        if self.config.mode == Mode::Deny {
            return refuse("mode `deny` never asks".to_owned(), DecidedBy::Mode);
        }
        if let Err(why) = approver.can_ask() {
            return refuse(
                format!("nobody can be asked ({why})"),
                DecidedBy::NoTerminal,
            );
        }
        let mut request = ApprovalRequest::unsandboxed(
            shell.command.clone(),
            shell.description.clone(),
            decision.reason.clone(),
            Subject::Escalation,
        );
        request.unsandboxed = escalate.outside_sandbox;
        request.escalation = Some(asks.clone());
        request.decision.destructive = decision.destructive;
        let answer = |verdict: Verdict, reason: String| {
            let mut answered = decided(person(&decision, verdict, reason, None), DecidedBy::Person);
            answered.escalated = (verdict == Verdict::Allow).then_some(plain);
            answered
        };
        Some(match approver.ask(&request).await {
            Approval::Allow
            | Approval::AllowForRun
            | Approval::AllowInProject(_)
            | Approval::AlwaysAllow(_) => answer(
                Verdict::Allow,
                format!("allowed at the prompt, once: {asks}"),
            ),
            Approval::Deny | Approval::Edit(_) => {
                answer(Verdict::Deny, format!("denied at the prompt: {asks}"))
            }
            Approval::DenyWithNote(note) => {
                let mut denied = answer(
                    Verdict::Deny,
                    format!("denied at the prompt with a note: {note}"),
                );
                denied.note = Some(note);
                denied
            }
            Approval::Interrupt => return None,
        })
    }
}

/// A person's decision about a command the policy asked about.
/// What the question is about: a command, or one that runs on in the background.
fn subject_of(shell: &ShellCall) -> crate::approve::Subject {
    if shell.background {
        crate::approve::Subject::Background
    } else {
        crate::approve::Subject::Command
    }
}

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
    let note = serde_json::json!({
        "note": "the user edited your command before it ran; this is the result of theirs",
        "your_command": from,
        "command_run": command,
    });
    super::tool::with_field(content, "edited_by_user", note)
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
