//! Diffs of a change, with `similar`: the +/- line counts and a unified diff (three lines of
//! context) for the prompt, the transcript and the summary line. A diff that takes too long
//! (huge, very different files) is approximated rather than waited for.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// Longest time spent finding the smallest diff before settling for a larger one.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);
/// Lines of context around each change, as `diff -u` and git show.
const CONTEXT_LINES: usize = 3;

/// Lines added and removed by a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "+{} \u{2212}{}", self.added, self.removed)
    }
}

fn text_diff<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, str> {
    TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new)
}

/// The lines `new` adds to and removes from `old`.
#[must_use]
pub fn counts(old: &str, new: &str) -> Counts {
    let mut counts = Counts::default();
    for change in text_diff(old, new).iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => counts.added += 1,
            ChangeTag::Delete => counts.removed += 1,
            ChangeTag::Equal => {}
        }
    }
    counts
}

/// The unified diff from `old` to `new`, headed `a/PATH` and `b/PATH` (`/dev/null` for a new
/// file when `old` is `None`).
#[must_use]
pub fn unified(old: Option<&str>, new: &str, path: &str) -> String {
    let diff = text_diff(old.unwrap_or(""), new);
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    diff.unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&from, &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_one_line_change_is_plus_one_minus_one() {
        let old = "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
        let new = "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
        assert_eq!(
            counts(old, new),
            Counts {
                added: 1,
                removed: 1
            }
        );
        assert_eq!(counts(old, new).to_string(), "+1 \u{2212}1");
        assert_eq!(
            unified(Some(old), new, "src/lib.rs"),
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn add(a: i32, b: i32) -> i32 {\n-    a - b\n+    a + b\n }\n"
        );
    }

    #[test]
    fn a_new_file_is_all_additions() {
        assert_eq!(
            counts("", "a\nb\n"),
            Counts {
                added: 2,
                removed: 0
            }
        );
        assert_eq!(
            unified(None, "a\nb\n", "new.txt"),
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        );
    }
}
