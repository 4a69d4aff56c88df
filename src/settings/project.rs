//! The project file `.agent/settings.toml` can only tighten: its deny rules are added,
//! limits only lowered, the mode and the sandbox only made stricter, `fail_on_deny` only
//! turned on, `writable` only narrowed. Anything else it says is reported and ignored — a
//! cloned repository must not grant itself permissions.

use std::path::Path;
use std::time::Duration;

use super::file::{Entry, Value};
use super::{Draft, Origin};
use crate::policy::{Mode, ReadOnly, Source};

impl Draft {
    /// A project entry: only what tightens is applied; the rest is reported.
    pub(super) fn apply_project(&mut self, entry: &Entry, path: &Path) {
        let origin = Origin::Project(path.to_path_buf(), entry.line);
        if let Value::Writable(paths) = &entry.value {
            self.narrow_writable(paths, path, entry.line);
            return;
        }
        if let Value::Net(value) = &entry.value
            && let Some(why) = self.settings.net.project_refusal(value)
        {
            self.settings.warnings.push(format!(
                "{}:{}: `{}` is ignored: {why}",
                path.display(),
                entry.line,
                entry.key
            ));
            return;
        }
        let s = &self.settings;
        let tightens = match &entry.value {
            // What narrows the network (the rest was refused above).
            Value::Deny(_) | Value::FileDeny(_) | Value::AskRead(_) | Value::Net(_) => true,
            Value::Edits(edits) => edits.strictness() >= s.files.edits.value.strictness(),
            // `auto` is consent the person gives: a cloned repository never chooses it.
            Value::Mode(mode) => {
                *mode != Mode::Auto && mode.strictness() >= s.mode.value.strictness()
            }
            Value::ReadOnly(list) => {
                *list == ReadOnly::Strict || s.read_only.value == ReadOnly::Inspect
            }
            Value::TimeoutSecs(secs) => Duration::from_secs(*secs) <= s.timeout.value,
            Value::MaxOutputChars(n) => *n <= s.max_output_chars.value,
            Value::MaxTurns(n) => *n <= s.max_turns.value,
            Value::InspectCpuSecs(secs) => *secs <= s.inspect_cpu_secs.value,
            Value::InspectMemoryMb(mb) => *mb <= s.inspect_memory_mb.value,
            Value::SandboxMode(mode) => mode.strictness() >= s.sandbox_mode.value.strictness(),
            Value::Network(network) => !network || s.network.value,
            Value::SandboxRequired(required) => *required || !s.sandbox_required.value,
            Value::FailOnDeny(on) => *on || !s.fail_on_deny.value,
            // Snapshots are the person's way back: a project may turn them on, not off.
            Value::SnapshotsEnabled(on) => *on,
            _ => false,
        };
        if tightens {
            self.apply(entry, origin, Source::Project);
        } else {
            let why = match &entry.value {
                Value::Allow(..) => "a project file cannot add allow rules",
                Value::Mode(Mode::Auto) => {
                    "a project file cannot choose mode `auto` (only the user file or --mode can)"
                }
                Value::Mode(_) => "a project file can only make the mode stricter",
                Value::ReadOnly(_) => "a project file can only choose the strict read-only list",
                Value::TimeoutSecs(_)
                | Value::MaxOutputChars(_)
                | Value::MaxTurns(_)
                | Value::InspectCpuSecs(_)
                | Value::InspectMemoryMb(_) => "a project file can only lower limits",
                Value::SandboxMode(_) => "a project file can only make the sandbox stricter",
                Value::Network(_) => "a project file can only turn the network off",
                Value::SandboxRequired(_) => "a project file can only require the sandbox",
                Value::FailOnDeny(_) => "a project file can only turn fail_on_deny on",
                Value::Edits(_) => "a project file can only make `edits` stricter",
                Value::SnapshotsEnabled(_) => "a project file can only turn snapshots on",
                Value::KeepDays(_) | Value::MaxFileMb(_) | Value::TimeBudgetMs(_) => {
                    "snapshot bounds are the user's to set"
                }
                Value::Notify(_) => "how a prompt calls you is the user's to set",
                _ => "a project file can only add deny rules and lower limits",
            };
            self.settings.warnings.push(format!(
                "{}:{}: `{}` is ignored: {why}",
                path.display(),
                entry.line,
                entry.key
            ));
        }
    }

    /// A project's `writable` list keeps only the user's entries it names: it can
    /// remove writable paths, never add one.
    fn narrow_writable(&mut self, paths: &[String], file: &Path, line: usize) {
        let s = &mut self.settings;
        s.writable.retain(|entry| paths.contains(&entry.value));
        for path in paths {
            if !s.writable.iter().any(|entry| entry.value == *path) {
                s.warnings.push(format!(
                    "{}:{line}: writable path `{path}` is ignored: a project file can only remove \
                     writable paths, not add them",
                    file.display()
                ));
            }
        }
    }
}
