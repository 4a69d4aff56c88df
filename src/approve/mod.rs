//! Asking a person: whether a terminal is reachable at all, the confirmation
//! prompt for a command the policy could not decide, and saving the rules a
//! person gives there. Keys act at once, each with a visible scope: `1`, `y` or
//! Enter allow once (Enter not with a [`Caution`]), `2` this exact
//! command for the rest of the run, `3` the offered prefix in this project and
//! `a` everywhere (both show the rule and ask for a second key), `0` or `n` deny,
//! `t` deny with a note for the model, `e` edit the command (it is decided
//! again), Esc or Ctrl+C deny and end the run. Keys typed before the question
//! appeared are discarded.
//!
//! The prompt reads keys from the controlling terminal (crossterm opens
//! `/dev/tty` when stdin is a pipe), so `cat task.md | agent run` still asks.
//! It never runs where [`terminal_reachable`] says no: pipes, CI, `--no-prompt`.
//! When the asking future is dropped (the run was interrupted by a signal), the
//! prompt is cancelled and the terminal restored before the drop returns.

mod diff;
mod display;
mod host;
mod keys;
mod line;
mod notify;
mod one_key;
mod prompt;
mod rules_file;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use diff::FileQuestion;
pub use host::HostRequest;
pub use keys::Cancel;
pub use notify::configure as configure_notify;
pub use one_key::yes_or_no;
pub use prompt::{Answer, Caution, Question, Subject};
pub use rules_file::{
    List, Scope, add_rule, edit_settings, remove_rule, save_allow_rule, save_host, save_rule,
};

use crate::policy::Decision;

/// A person's answer to "run this?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run it, once.
    Allow,
    /// Run it, and this exact command again for the rest of the run.
    AllowForRun,
    /// Run it, and allow this prefix in this workspace from now on (already saved).
    AllowInProject(String),
    /// Run it, and allow this prefix from now on (already saved).
    AlwaysAllow(String),
    /// Do not run it.
    Deny,
    /// Do not run it, and tell the model this.
    DenyWithNote(String),
    /// Decide this command instead: the person edited it.
    Edit(String),
    /// Do not run it, and end the run.
    Interrupt,
}

/// What the person is asked about.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The exact command.
    pub command: String,
    /// The model's description of it.
    pub description: String,
    /// The policy's decision (ask) and why.
    pub decision: Decision,
    /// The prefix "always allow" would save, when one is safe to offer.
    pub prefix: Option<String>,
    /// The model's command, when the person edited it into this one.
    pub edited_from: Option<String>,
    /// It would run without the sandbox (an escalation, an MCP server's start).
    pub unsandboxed: bool,
    /// What the call asks for beyond the sandbox, in plain words, and the model's reason (the
    /// `shell` tool's `escalate`): shown whole, never cut; a yes grants exactly this.
    pub escalation: Option<String>,
    /// What is asked about (a command, an MCP call, an MCP server's start).
    pub subject: Subject,
}

impl ApprovalRequest {
    /// A question about running `command` without the sandbox (a local MCP server's start, a
    /// command's `escalate`): nothing is offered to save, and Enter alone does not say yes.
    #[must_use]
    pub fn unsandboxed(
        command: String,
        description: String,
        reason: String,
        subject: Subject,
    ) -> Self {
        Self {
            command,
            description,
            decision: Decision {
                verdict: crate::policy::Verdict::Ask,
                reason,
                source: crate::policy::Source::User,
                rule: None,
                destructive: false,
                prefix: None,
                parts: Vec::new(),
            },
            prefix: None,
            edited_from: None,
            unsandboxed: true,
            escalation: None,
            subject,
        }
    }

    /// Why Enter alone does not allow it, every one that applies, each its own warning line:
    /// running without the sandbox, else with more than it gives; and a protected program in
    /// the command — whatever else is asked, a destructive command says so.
    #[must_use]
    pub fn cautions(&self) -> Vec<Caution> {
        let sandbox = if self.unsandboxed {
            Some(Caution::Unsandboxed)
        } else {
            self.escalation.as_ref().map(|_| Caution::Escalated)
        };
        sandbox
            .into_iter()
            .chain(self.decision.destructive.then_some(Caution::Destructive))
            .collect()
    }
}

/// What the person is asked about a file tool's call (`policy::files` said ask).
#[derive(Debug, Clone)]
pub struct FileApprovalRequest {
    /// Read or write.
    pub access: crate::policy::files::Access,
    /// `edit src/lib.rs`, `read /etc/hosts`.
    pub label: String,
    /// Why the policy asks.
    pub reason: String,
    /// The unified diff of a write (a new file as all additions).
    pub diff: Option<String>,
    /// `+1 −1` for a write.
    pub counts: Option<String>,
}

/// Asks a person about commands the policy could not decide.
pub trait Approve {
    /// `Ok` when a person can be asked; otherwise why not (ask then means deny).
    ///
    /// # Errors
    /// Why nobody can be asked (no terminal, CI, `--no-prompt`).
    fn can_ask(&self) -> Result<(), &'static str>;
    /// Asks about one command.
    fn ask(&mut self, request: &ApprovalRequest) -> impl Future<Output = Approval>;
    /// Asks about one file tool's call: a read outside the workspace or of a secret, or a
    /// change shown as a diff. Answers: allow, allow for the run, deny (with a note), interrupt.
    fn ask_file(&mut self, request: &FileApprovalRequest) -> impl Future<Output = Approval>;
    /// Asks about a host a running command reached that no network rule decides; the
    /// command's connection waits meanwhile. Without a person: refused.
    fn ask_host(
        &mut self,
        request: &HostRequest,
    ) -> impl Future<Output = crate::net::ask::HostAnswer> {
        let _ = request;
        async { crate::net::ask::HostAnswer::Deny }
    }
}

/// Whether a person can answer a prompt: stderr is a terminal, stdin is one or
/// the controlling terminal can be opened, `CI` is not set and `--no-prompt`
/// was not given. `Err` says which of these failed, for the denial's reason.
///
/// # Errors
/// Why nobody can be asked.
pub fn terminal_reachable(no_prompt: bool) -> Result<(), &'static str> {
    if no_prompt {
        Err("--no-prompt was given")
    } else if std::env::var_os("CI").is_some() {
        Err("CI is set")
    } else if !std::io::stderr().is_terminal() {
        Err("there is no terminal to ask")
    } else if std::io::stdin().is_terminal() || controlling_terminal_opens() {
        Ok(())
    } else {
        Err("there is no terminal to ask")
    }
}

#[cfg(unix)]
fn controlling_terminal_opens() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
}

#[cfg(windows)]
fn controlling_terminal_opens() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("CONIN$")
        .is_ok()
}

/// Hooks around a prompt, so a live screen can step aside while it is shown.
pub trait Screen {
    /// Called before the prompt is drawn.
    fn pause(&mut self);
    /// Called after it was answered.
    fn resume(&mut self);
}

/// A screen that needs no stepping aside (plain output).
#[derive(Debug, Default)]
pub struct NoScreen;

impl Screen for NoScreen {
    fn pause(&mut self) {}
    fn resume(&mut self) {}
}

/// The screen handle the approver pauses: the live screen, or none (plain output).
impl Screen for Option<std::sync::Arc<std::sync::Mutex<crate::ui::Tui>>> {
    fn pause(&mut self) {
        if let Some(tui) = self
            && let Ok(mut tui) = tui.lock()
        {
            tui.step_aside();
        }
    }

    fn resume(&mut self) {}
}

/// The terminal approver.
#[derive(Debug)]
pub struct Approver<S> {
    reachable: Result<(), &'static str>,
    settings_file: PathBuf,
    workspace: PathBuf,
    color: bool,
    /// The screen to pause while asking.
    pub screen: S,
}

impl<S: Screen> Approver<S> {
    /// An approver that asks when a terminal is reachable; rules go to `settings_file`
    /// (those for this project under the `workspace`'s table).
    pub fn new(
        reachable: Result<(), &'static str>,
        settings_file: PathBuf,
        workspace: PathBuf,
        color: bool,
        screen: S,
    ) -> Self {
        Self {
            reachable,
            settings_file,
            workspace,
            color,
            screen,
        }
    }
}

impl<S: Screen> Approve for Approver<S> {
    fn can_ask(&self) -> Result<(), &'static str> {
        self.reachable
    }

    async fn ask(&mut self, request: &ApprovalRequest) -> Approval {
        let question = Question {
            command: request.command.clone(),
            description: request.description.clone(),
            reason: request.decision.reason.clone(),
            cautions: request.cautions(),
            prefix: request.prefix.clone(),
            rule_file: self.settings_file.clone(),
            workspace: self.workspace.clone(),
            edited_from: request.edited_from.clone(),
            escalation: request.escalation.clone(),
            color: self.color,
            subject: request.subject,
        };
        self.screen.pause();
        let cancel = Arc::new(Cancel::default());
        let _stop = StopOnDrop(Arc::clone(&cancel));
        let answer = tokio::task::spawn_blocking(move || {
            let _finished = FinishOnDrop(&cancel);
            question.ask(&cancel)
        })
        .await
        .unwrap_or(Answer::Deny);
        let approval = match answer {
            Answer::Allow => Approval::Allow,
            Answer::AllowForRun => Approval::AllowForRun,
            Answer::Deny => Approval::Deny,
            Answer::DenyWithNote(note) => Approval::DenyWithNote(note),
            Answer::Edit(command) => Approval::Edit(command),
            Answer::Interrupt => Approval::Interrupt,
            Answer::AlwaysAllow(prefix) => self
                .save(Scope::Everywhere, &prefix, "is always allowed")
                .map_or(Approval::Allow, |()| Approval::AlwaysAllow(prefix)),
            Answer::AllowInProject(prefix) => {
                let workspace = self.workspace.clone();
                self.save(
                    Scope::Project(&workspace),
                    &prefix,
                    "is allowed in this project",
                )
                .map_or(Approval::Allow, |()| Approval::AllowInProject(prefix))
            }
        };
        self.screen.resume();
        approval
    }

    async fn ask_file(&mut self, request: &FileApprovalRequest) -> Approval {
        self.ask_about_file(request).await
    }

    async fn ask_host(&mut self, request: &HostRequest) -> crate::net::ask::HostAnswer {
        use crate::net::ask::HostAnswer;
        if self.reachable.is_err() {
            return HostAnswer::Deny;
        }
        self.screen.pause();
        let cancel = Arc::new(Cancel::default());
        let _stop = StopOnDrop(Arc::clone(&cancel));
        let question = request.clone();
        let answer = tokio::task::spawn_blocking(move || {
            let _finished = FinishOnDrop(&cancel);
            question.ask(&cancel)
        })
        .await
        .unwrap_or(HostAnswer::NoAnswer);
        let scope = match answer {
            HostAnswer::Project => Some(Scope::Project(&self.workspace)),
            HostAnswer::Always => Some(Scope::Everywhere),
            HostAnswer::Once | HostAnswer::Run | HostAnswer::Deny | HostAnswer::NoAnswer => None,
        };
        if let Some(scope) = scope {
            let note = match save_host(&self.settings_file, scope, &request.host) {
                Ok(()) => format!(
                    "saved: `{}` in {} allow ({})",
                    request.host,
                    scope.network_table(),
                    self.settings_file.display()
                ),
                Err(error) => {
                    format!("agent: could not save the host: {error}: allowed for this run")
                }
            };
            prompt::note(&note);
        }
        self.screen.resume();
        answer
    }
}

impl<S: Screen> Approver<S> {
    /// The file prompt (`approve::diff`), on a blocking thread, cancelled when dropped.
    async fn ask_about_file(&mut self, request: &FileApprovalRequest) -> Approval {
        let question = FileQuestion {
            access: request.access,
            label: request.label.clone(),
            reason: request.reason.clone(),
            diff: request.diff.clone(),
            counts: request.counts.clone(),
            color: self.color,
        };
        self.screen.pause();
        let cancel = Arc::new(Cancel::default());
        let _stop = StopOnDrop(Arc::clone(&cancel));
        let answer = tokio::task::spawn_blocking(move || {
            let _finished = FinishOnDrop(&cancel);
            question.ask(&cancel)
        })
        .await
        .unwrap_or(Answer::Deny);
        self.screen.resume();
        match answer {
            Answer::Allow => Approval::Allow,
            Answer::AllowForRun => Approval::AllowForRun,
            Answer::DenyWithNote(note) => Approval::DenyWithNote(note),
            Answer::Interrupt => Approval::Interrupt,
            Answer::Deny | Answer::Edit(_) | Answer::AllowInProject(_) | Answer::AlwaysAllow(_) => {
                Approval::Deny
            }
        }
    }
}

impl<S> Approver<S> {
    /// Saves a rule the person confirmed and says so; `None` (allowed once) when it failed.
    fn save(&self, scope: Scope<'_>, prefix: &str, what: &str) -> Option<()> {
        match save_rule(&self.settings_file, scope, prefix) {
            Ok(()) => {
                prompt::note(&format!(
                    "saved: \"{prefix}\" {what} ({} in {})",
                    scope.table(),
                    self.settings_file.display()
                ));
                Some(())
            }
            Err(error) => {
                prompt::note(&format!(
                    "agent: could not save the rule: {error}: allowed this once"
                ));
                None
            }
        }
    }
}

/// Longest wait, when the asking future is dropped, for the prompt to put the
/// terminal back: a few key polls, so nothing is printed in raw mode after it.
const RESTORE_WAIT: Duration = Duration::from_millis(500);

/// Cancels the prompt when the asking future is dropped before its answer
/// (the run was interrupted), and waits until the terminal is restored.
struct StopOnDrop(Arc<Cancel>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
        self.0.wait_finished(RESTORE_WAIT);
    }
}

/// Says the prompt is over, on every path out of it (panics included).
struct FinishOnDrop<'a>(&'a Cancel);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated over without the sandbox × with more than it gives × destructive: every
    /// warning that applies is on the question — a destructive command says so whatever else
    /// is asked — and Enter alone allows only when none does.
    #[test]
    fn every_caution_that_applies_is_shown() {
        for unsandboxed in [false, true] {
            for escalation in [
                None,
                Some("this command asks with network to any host".to_owned()),
            ] {
                for destructive in [false, true] {
                    let mut request = ApprovalRequest::unsandboxed(
                        "rm -rf build".into(),
                        "clean".into(),
                        "why".into(),
                        Subject::Escalation,
                    );
                    request.unsandboxed = unsandboxed;
                    request.escalation.clone_from(&escalation);
                    request.decision.destructive = destructive;
                    let case = format!("{unsandboxed} {escalation:?} {destructive}");
                    let cautions = request.cautions();
                    let question = Question {
                        command: request.command.clone(),
                        description: request.description.clone(),
                        reason: request.decision.reason.clone(),
                        cautions: cautions.clone(),
                        prefix: None,
                        rule_file: PathBuf::from("/settings.toml"),
                        workspace: PathBuf::from("/w"),
                        edited_from: None,
                        escalation: escalation.clone(),
                        color: false,
                        subject: Subject::Escalation,
                    };
                    let shown = question.render(120, 40);
                    for (caution, applies) in [
                        (Caution::Destructive, destructive),
                        (Caution::Unsandboxed, unsandboxed),
                        (Caution::Escalated, escalation.is_some() && !unsandboxed),
                    ] {
                        assert_eq!(cautions.contains(&caution), applies, "{case}");
                        assert_eq!(shown.contains(caution.line()), applies, "{case}: {shown}");
                    }
                    let any = unsandboxed || escalation.is_some() || destructive;
                    assert_eq!(!shown.contains("1. Allow (Enter)"), any, "{case}: {shown}");
                }
            }
        }
    }
}
