//! What a run changed, for a terminal: the unified diff of its snapshots (every line
//! sanitised, coloured by its kind) and the lines of an undo's plan and progress. Shared by
//! `agent diff`, `agent undo` and the interactive session's `/diff` and `/undo`.

use crate::snapshot::{Step, StepKind, UndoPlan};

use super::sanitize;

/// The diff for a terminal: every line sanitised, coloured by its kind when `color`.
#[must_use]
pub fn diff(text: &[u8], color: bool) -> String {
    let text = String::from_utf8_lossy(text);
    let mut out = String::new();
    for line in text.lines() {
        let shown = sanitize::escape(line);
        let code = if line.starts_with("diff --git")
            || line.starts_with("+++ ")
            || line.starts_with("--- ")
        {
            "1"
        } else if line.starts_with("@@") {
            "36"
        } else if line.starts_with('+') {
            "32"
        } else if line.starts_with('-') {
            "31"
        } else {
            ""
        };
        out.push_str(&paint(&shown, code, color));
        out.push('\n');
    }
    out
}

/// `text` in SGR `code` when `color` (and `code` is not empty).
#[must_use]
pub fn paint(text: &str, code: &str, color: bool) -> String {
    if color && !code.is_empty() {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// A path or id for a terminal line: hidden characters escaped, newlines shown as `⏎`.
#[must_use]
pub fn shown(text: &str) -> String {
    sanitize::escape(text).replace('\n', "⏎")
}

/// The lines of what an undo will do, one per file (without a heading); `force` names how
/// a conflicting file would be overwritten (`--force`, `/undo --force`).
#[must_use]
pub fn plan_lines(plan: &UndoPlan, force: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for step in &plan.steps {
        let word = match step.kind {
            StepKind::Restore => "restore   ",
            StepKind::Remove => "remove    ",
            StepKind::BringBack => "bring back",
        };
        let conflict = if plan.conflicts.contains(&step.path) {
            format!(" (changed since the run: overwritten, {force})")
        } else {
            String::new()
        };
        let path = shown(&step.path.to_string_lossy());
        lines.push(format!("  {word} {path}{conflict}"));
    }
    lines.extend(not_covered_lines(plan));
    lines
}

/// The lines of the files an undo leaves alone because the snapshots did not cover them.
#[must_use]
pub fn not_covered_lines(plan: &UndoPlan) -> Vec<String> {
    plan.not_covered
        .iter()
        .map(|path| {
            let path = shown(&path.to_string_lossy());
            format!("  left alone {path} (the snapshots did not cover it)")
        })
        .collect()
}

/// The line of one file an undo put back (or could not).
#[must_use]
pub fn step_line(step: &Step, outcome: Result<(), &str>) -> String {
    let path = shown(&step.path.to_string_lossy());
    match outcome {
        Ok(()) => format!("  {} {path}", done_word(step.kind)),
        Err(why) => format!("  ✗ {path}: {}", sanitize::escape_prose(why)),
    }
}

fn done_word(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Restore => "restored",
        StepKind::Remove => "removed",
        StepKind::BringBack => "brought back",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_are_sanitised_and_coloured_by_kind() {
        let text = b"diff --git a/x b/x\n@@ -1 +1 @@\n-old\n+new \x1b]0;title\x07\n";
        let out = diff(text, true);
        assert!(out.contains("\x1b[31m-old\x1b[0m"), "{out:?}");
        assert!(out.contains("\\u{1b}]0;title"), "{out:?}");
        assert!(!diff(text, false).contains("\x1b[3"));
    }

    #[test]
    fn shown_paths_cannot_break_a_line() {
        assert_eq!(shown("a\nb\x1b[2J"), "a⏎b\\u{1b}[2J");
    }
}
