//! One call of a file tool (`read_file`, `list_files`, `search`, `edit_file`, `write_file`):
//! validate, resolve the path (symlinks followed), prepare a write (nothing touched yet),
//! decide (`policy::files`, then the mode, then — where it asks — a person, who sees the
//! diff), run, report. Reads inside the workspace need nobody; a change reaches the disk only
//! with an allow decision or a person's yes, and only after the snapshot hook.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{DecidedBy, Denial, Event, Loop, MAX_IDENTICAL_CALLS, Stats};
use crate::approve::{Approval, Approve, FileApprovalRequest};
use crate::model::ToolCall;
use crate::policy::files::{self, Access};
use crate::policy::{Decision, Mode, Source, Verdict};
use crate::tool_error::{ToolError, ToolErrorCode};
use crate::tools::{self, Change, FileCall, Output, Scope};

/// What the person granted for the rest of the run, and the repeat counter.
#[derive(Debug, Default)]
pub(super) struct FileState {
    /// `2` at a change: every later edit that would ask is applied.
    edits_for_run: bool,
    /// `2` at a read: these paths are read without asking again.
    reads_for_run: HashSet<PathBuf>,
    /// The last call (tool and arguments) and how often it came in a row.
    repeat: Option<(String, u32)>,
}

/// A decided call, ready to run.
struct Decided {
    decision: Decision,
    by: DecidedBy,
    note: Option<String>,
    /// The `agent run` flag that would have allowed it (`--allow-edits`), for a denial for
    /// want of a terminal.
    allow: Option<String>,
}

/// The flag that lets a run without a terminal write inside the workspace.
const ALLOW_EDITS_FLAG: &str = "--allow-edits";

impl Loop<'_> {
    /// Handles one file tool's call; `None` when the person stopped the run.
    pub(super) async fn handle_file<A: Approve>(
        &mut self,
        call: &ToolCall,
        approver: &mut A,
        stats: &mut Stats,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> Option<String> {
        let (parsed, resolved, label) = self.announce(call, emit);
        let report = |result: Result<Output, ToolError>, emit: &mut (dyn FnMut(Event) + Send)| {
            Some(report(call, &label, result, emit))
        };
        if self.config.mode == Mode::Off {
            let error = ToolError::new(
                ToolErrorCode::ToolDisabled,
                "the tools are disabled (permissions mode \"off\"): answer without them",
            );
            return report(Err(error), emit);
        }
        let file = match parsed {
            Ok(file) => file,
            Err(error) => return report(Err(error), emit),
        };
        let path = match resolved {
            Some(Ok(path)) => path,
            Some(Err(error)) => return report(Err(error), emit),
            None => return report(Err(internal()), emit),
        };
        if self.files.repeated(call) >= MAX_IDENTICAL_CALLS {
            let error = ToolError::new(
                ToolErrorCode::Loop,
                format!(
                    "this exact call came {MAX_IDENTICAL_CALLS} times in a row and was not run: \
                     use the results you have or try something different"
                ),
            );
            return report(Err(error), emit);
        }
        let scope = scope(self.config);
        // A change is prepared before anyone is asked: the person sees exactly what will be
        // written, and a change that cannot be made asks nobody.
        let change = match &file {
            FileCall::Edit(args) => Some(tools::prepare_edit(&scope, &path, args)),
            FileCall::Write(args) => Some(tools::prepare_write(&scope, &path, args)),
            FileCall::Read(_) | FileCall::List(_) | FileCall::Search(_) => None,
        }
        .transpose();
        let change = match change {
            Ok(change) => change,
            Err(error) => return report(Err(error), emit),
        };
        let decided = self
            .decide_file(file.access(), &path, &label, change.as_ref(), approver)
            .await;
        let Some(decided) = decided else {
            let reason = "denied at the prompt; the run was interrupted".to_owned();
            emit(decision_event(
                &call.id,
                &person(Verdict::Deny, reason.clone()),
                DecidedBy::Person,
            ));
            stats.commands_denied += 1;
            stats.denials.push(Denial {
                command: label.clone(),
                reason,
                allow: None,
            });
            return None;
        };
        emit(decision_event(&call.id, &decided.decision, decided.by));
        if decided.decision.verdict != Verdict::Allow {
            stats.commands_denied += 1;
            stats.denials.push(Denial {
                command: label.clone(),
                reason: decided.decision.reason.clone(),
                allow: decided.allow.clone(),
            });
            let message = denial_message(&decided);
            return report(Err(ToolError::new(ToolErrorCode::Denied, message)), emit);
        }
        stats.commands_run += 1;
        let result = match change {
            // The first change of a turn is snapshotted before it reaches the disk.
            Some(change) => {
                self.config.snapshots.before_change(stats.turns);
                tools::apply(&change)
            }
            None => run_read(scope, file, path).await,
        };
        report(result, emit)
    }

    /// Validates and resolves a call and emits its `tool_call` event: (the call, its path,
    /// its label).
    #[allow(clippy::type_complexity)]
    fn announce(
        &self,
        call: &ToolCall,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> (
        Result<FileCall, ToolError>,
        Option<Result<PathBuf, ToolError>>,
        String,
    ) {
        let parsed = FileCall::parse(&call.name, &call.arguments);
        let resolved = parsed
            .as_ref()
            .ok()
            .map(|file| tools::resolve(&self.config.workspace, file.path()));
        let label = match (&parsed, &resolved) {
            (Ok(file), Some(Ok(path))) => file.label(&self.config.files.display(path)),
            (Ok(file), _) => file.label(file.path().unwrap_or(".")),
            (Err(_), _) => format!("{} <invalid call>", call.name),
        };
        emit(Event::FileCall {
            id: call.id.clone(),
            tool: call.name.clone(),
            input: parsed.as_ref().ok().map(FileCall::input),
            label: label.clone(),
            arguments: parsed.is_err().then(|| call.arguments.clone()),
        });
        (parsed, resolved, label)
    }

    /// The final decision on a file access: policy, mode, what the person granted for the
    /// run, then the person (or no terminal: deny). `None`: the person stopped the run.
    async fn decide_file<A: Approve>(
        &mut self,
        access: Access,
        path: &Path,
        label: &str,
        change: Option<&Change>,
        approver: &mut A,
    ) -> Option<Decided> {
        let policy = files::decide(&self.config.files, access, path);
        let decision = files::apply_mode(policy.clone(), self.config.mode);
        let by = if decision.verdict == policy.verdict {
            DecidedBy::Policy
        } else {
            DecidedBy::Mode
        };
        let done = |decision: Decision, by: DecidedBy| {
            Some(Decided {
                decision,
                by,
                note: None,
                allow: None,
            })
        };
        if decision.verdict != Verdict::Ask {
            return done(decision, by);
        }
        let granted = match access {
            Access::Write => self.files.edits_for_run && !decision.destructive,
            Access::Read => self.files.reads_for_run.contains(path),
        };
        if granted {
            let reason = "allowed at the prompt earlier in this run (2: for the rest of this run)";
            return done(person(Verdict::Allow, reason.to_owned()), DecidedBy::Person);
        }
        if let Err(why) = approver.can_ask() {
            // An edit inside the workspace that only asked for a yes (not a secret file: that
            // asks whatever the setting) is what `--allow-edits` allows.
            let edit = access == Access::Write && !decision.destructive;
            let hint = if edit {
                format!(
                    "; to let the file tools edit inside the workspace without a prompt, pass \
                     {ALLOW_EDITS_FLAG} to `agent run` (or set [permissions.files] edits = \
                     \"allow\" in your settings file)"
                )
            } else {
                "; run it at a terminal to approve it".to_owned()
            };
            let denied = Decision {
                verdict: Verdict::Deny,
                reason: format!("{}; nobody can be asked ({why}){hint}", decision.reason),
                ..decision
            };
            return Some(Decided {
                decision: denied,
                by: DecidedBy::NoTerminal,
                note: None,
                allow: edit.then(|| ALLOW_EDITS_FLAG.to_owned()),
            });
        }
        let request = FileApprovalRequest {
            access,
            label: label.to_owned(),
            reason: decision.reason.clone(),
            diff: change.map(Change::diff),
            counts: change.map(|change| change.counts.to_string()),
        };
        match approver.ask_file(&request).await {
            Approval::Allow => done(
                person(Verdict::Allow, "allowed at the prompt".to_owned()),
                DecidedBy::Person,
            ),
            Approval::AllowForRun => {
                let reason = match access {
                    Access::Write => {
                        self.files.edits_for_run = true;
                        "allowed at the prompt, with every edit for the rest of this run"
                    }
                    Access::Read => {
                        self.files.reads_for_run.insert(path.to_path_buf());
                        "allowed at the prompt for the rest of this run"
                    }
                };
                done(person(Verdict::Allow, reason.to_owned()), DecidedBy::Person)
            }
            Approval::DenyWithNote(note) => Some(Decided {
                decision: person(
                    Verdict::Deny,
                    format!("denied at the prompt with a note: {note}"),
                ),
                by: DecidedBy::Person,
                note: Some(note),
                allow: None,
            }),
            Approval::Interrupt => None,
            Approval::Deny
            | Approval::Edit(_)
            | Approval::AllowInProject(_)
            | Approval::AlwaysAllow(_) => done(
                person(Verdict::Deny, "denied at the prompt".to_owned()),
                DecidedBy::Person,
            ),
        }
    }
}

impl FileState {
    /// Counts consecutive identical calls, this one included.
    fn repeated(&mut self, call: &ToolCall) -> u32 {
        let key = format!("{}\u{0}{}", call.name, call.arguments);
        let count = match &self.repeat {
            Some((last, count)) if *last == key => count + 1,
            _ => 1,
        };
        self.repeat = Some((key, count));
        count
    }
}

/// Emits a call's `tool_result` and returns the content for the model.
pub(super) fn report(
    call: &ToolCall,
    label: &str,
    result: Result<Output, ToolError>,
    emit: &mut (dyn FnMut(Event) + Send),
) -> String {
    let (content, event) = match result {
        Ok(output) => (
            output.content.clone(),
            Event::FileResult {
                id: call.id.clone(),
                tool: call.name.clone(),
                label: label.to_owned(),
                summary: Some(output.summary),
                content: Some(output.content),
                diff: output.diff,
                error: None,
            },
        ),
        Err(error) => (
            super::tool::error_content(&error),
            Event::FileResult {
                id: call.id.clone(),
                tool: call.name.clone(),
                label: label.to_owned(),
                summary: None,
                content: None,
                diff: None,
                error: Some(error),
            },
        ),
    };
    emit(event);
    content
}

/// Where the tools work and what listing and search skip (also for a session's `@path`).
#[must_use]
pub fn scope(config: &super::Config) -> Scope<'_> {
    let rules = Arc::clone(&config.files);
    Scope {
        root: &config.workspace,
        skipped: Arc::new(move |path: &Path| rules.skipped(path)),
        max_chars: config.limits.max_output_chars,
    }
}

/// Runs a read on a blocking thread: walking and searching a large tree takes a while, and
/// the loop's thread also serves signals.
async fn run_read(scope: Scope<'_>, file: FileCall, path: PathBuf) -> Result<Output, ToolError> {
    let root = scope.root.to_path_buf();
    let skipped = scope.skipped;
    let max_chars = scope.max_chars;
    tokio::task::spawn_blocking(move || {
        let scope = Scope {
            root: &root,
            skipped,
            max_chars,
        };
        match &file {
            FileCall::Read(args) => tools::read(&scope, &path, args),
            FileCall::List(args) => tools::list(&scope, &path, args),
            FileCall::Search(args) => tools::search(&scope, &path, args),
            FileCall::Edit(_) | FileCall::Write(_) => Err(internal()),
        }
    })
    .await
    .unwrap_or_else(|_| Err(internal()))
}

fn internal() -> ToolError {
    ToolError::new(
        ToolErrorCode::Exec(crate::exec::ErrorCode::Io),
        "the file tool failed unexpectedly (this is a bug in agent)",
    )
}

/// A person's decision.
pub(super) fn person(verdict: Verdict, reason: String) -> Decision {
    Decision {
        verdict,
        reason,
        source: Source::User,
        rule: None,
        destructive: false,
        prefix: None,
        parts: Vec::new(),
    }
}

/// The `decision` event of a call that is not a shell command.
pub(super) fn decision_event(id: &str, decision: &Decision, by: DecidedBy) -> Event {
    Event::Decision {
        id: id.to_owned(),
        decision: decision.verdict,
        reason: decision.reason.clone(),
        source: decision.source,
        rule: decision.rule.clone(),
        by,
        command: None,
        edited_from: None,
    }
}

/// What the model is told about a denied call.
fn denial_message(decided: &Decided) -> String {
    if let Some(note) = &decided.note {
        return format!(
            "The user denied this at the prompt and wrote: \"{note}\". Follow the user's note; \
             do not retry the call unchanged."
        );
    }
    let who = match decided.by {
        DecidedBy::Person => "The user denied this at the prompt",
        DecidedBy::Mode => "Denied by the permission mode",
        DecidedBy::NoTerminal => "Denied, it needs the user's approval",
        DecidedBy::Policy => "Denied by the file-access policy",
    };
    format!(
        "{who}: {}. Do not retry it unchanged; adapt, or tell the user what is needed.",
        decided.decision.reason
    )
}
