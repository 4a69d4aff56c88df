//! `agent undo [RUN]`: put back what a run changed. Lists what it will restore, remove and
//! bring back; at a terminal asks once, elsewhere the command itself is the consent;
//! `--dry-run` only lists. A file changed since the run ended stops it (exit 1, nothing
//! changed) unless `--force`. Ctrl+C stops between files: each file is written whole, and
//! what was done is said.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use crate::cli::{GlobalArgs, UndoArgs};
use crate::error::{Error, Result, Status};
use crate::snapshot::{Snapshots, Step, UndoPlan, UndoReport};
use crate::ui::changes::{self, shown};

/// Runs `agent undo`.
pub(crate) fn run(global: &GlobalArgs, args: &UndoArgs) -> Result<ExitCode> {
    let workspace = super::workspace(global.cwd.as_deref())?;
    let store = super::snapshots::existing(&workspace)?;
    let record = store
        .record(args.run.as_deref())
        .map_err(super::snapshots::runtime)?;
    let plan = store
        .plan_undo(&record)
        .map_err(super::snapshots::runtime)?;
    let run = shown(&plan.run);
    if plan.steps.is_empty() {
        store.discard(&plan);
        if global.json {
            super::print_stdout(&format!("{}\n", plan_json(&plan, None)))?;
        } else if !global.quiet {
            let _ = writeln!(std::io::stderr(), "agent: nothing to undo for run `{run}`");
        }
        return Ok(Status::Success.into());
    }
    if !plan.conflicts.is_empty() && !args.force {
        store.discard(&plan);
        if global.json {
            super::print_stdout(&format!("{}\n", plan_json(&plan, None)))?;
        }
        let mut stderr = std::io::stderr().lock();
        for path in &plan.conflicts {
            let _ = writeln!(
                stderr,
                "agent: `{}` changed since run `{run}` ended: nothing was undone (--force \
                 overwrites it)",
                shown(&path.to_string_lossy())
            );
        }
        return Ok(Status::Failure.into());
    }
    if !global.json {
        print_plan(&plan);
    }
    if args.dry_run {
        store.discard(&plan);
        if global.json {
            super::print_stdout(&format!("{}\n", plan_json(&plan, None)))?;
        }
        return Ok(Status::Success.into());
    }
    if !global.json && crate::approve::terminal_reachable(false).is_ok() && !confirmed(&plan)? {
        store.discard(&plan);
        let _ = writeln!(std::io::stderr(), "agent: nothing was undone");
        return Ok(Status::Success.into());
    }
    let report = apply(store, plan.clone(), args.force, global.json)?;
    if global.json {
        super::print_stdout(&format!("{}\n", plan_json(&plan, Some(&report))))?;
    } else {
        let mut stderr = std::io::stderr().lock();
        let done = report.done.len();
        let files = if done == 1 { "file" } else { "files" };
        let line = if report.interrupted {
            format!(
                "agent: interrupted: {done} of {} {files} put back; each file is whole, the rest \
                 are as they were",
                plan.steps.len()
            )
        } else {
            format!("agent: undid run `{run}`: {done} {files} put back")
        };
        let _ = writeln!(stderr, "{line} · `agent undo` again puts the changes back");
    }
    if report.interrupted {
        return Ok(Status::Interrupted.into());
    }
    Ok(if report.failed.is_empty() {
        Status::Success
    } else {
        Status::Failure
    }
    .into())
}

/// Applies the plan on a blocking thread while Ctrl+C (and the other stopping signals) only
/// ask it to stop between files.
fn apply(store: Snapshots, plan: UndoPlan, force: bool, json: bool) -> Result<UndoReport> {
    let runtime = super::runtime()?;
    runtime.block_on(async move {
        let mut signals = super::signals::Signals::listen();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let task = tokio::task::spawn_blocking(move || {
            let mut progress = |step: &Step, outcome: std::result::Result<(), &str>| {
                if json {
                    return;
                }
                let _ = writeln!(std::io::stderr(), "{}", changes::step_line(step, outcome));
            };
            store.apply_undo(&plan, force, &|| flag.load(Ordering::SeqCst), &mut progress)
        });
        tokio::pin!(task);
        loop {
            tokio::select! {
                joined = &mut task => {
                    let report = joined
                        .map_err(|error| Error::Runtime(format!("undo failed: {error} (a bug)")))?;
                    return report.map_err(super::snapshots::runtime);
                }
                _ = signals.recv() => stop.store(true, Ordering::SeqCst),
            }
        }
    })
}

/// Lists what the undo will do, on stderr.
fn print_plan(plan: &UndoPlan) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "agent: undo of run `{}`:", shown(&plan.run));
    for line in changes::plan_lines(plan, "--force") {
        let _ = writeln!(stderr, "{line}");
    }
}

/// Asks once, one key as at the command prompt: only `y` goes on.
fn confirmed(plan: &UndoPlan) -> Result<bool> {
    let files = if plan.steps.len() == 1 {
        "file"
    } else {
        "files"
    };
    crate::approve::yes_or_no(&format!("Put back {} {files}? [y/N] ", plan.steps.len()))
        .map_err(|error| Error::Runtime(format!("cannot read the answer: {error}")))
}

fn plan_json(plan: &UndoPlan, report: Option<&UndoReport>) -> serde_json::Value {
    let steps: Vec<_> = plan
        .steps
        .iter()
        .map(|step| json!({"path": step.path.to_string_lossy(), "action": step.kind}))
        .collect();
    let paths = |paths: &[std::path::PathBuf]| {
        paths
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    let mut value = json!({
        "run": plan.run,
        "steps": steps,
        "conflicts": paths(&plan.conflicts),
        "not_covered": paths(&plan.not_covered),
    });
    if let Some(report) = report {
        value["undo_run"] = json!(report.undo_run);
        value["done"] = json!(report.done.len());
        value["failed"] = json!(
            report
                .failed
                .iter()
                .map(|(path, why)| json!({"path": path.to_string_lossy(), "error": why}))
                .collect::<Vec<_>>()
        );
        value["interrupted"] = json!(report.interrupted);
    }
    value
}
