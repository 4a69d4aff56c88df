//! What a finished command's output leaves on screen under its summary line: the last
//! [`KEPT_OK`] lines when it succeeded; when it failed, up to [`KEPT_FAILED`] lines — the
//! last few, then the lines that say what went wrong (an `error`, `FAILED`, `panicked`, a
//! traceback's last frame, the line after each; then stderr), with `… N lines …` where lines
//! are left out — so a person sees which test failed without `-v` or `agent history show`.
//!
//! Lines are made safe as the pane makes them ([`super::pane::clean`]); memory stays bounded
//! however much a command prints: the last [`WINDOW_LINES`] lines, and the error lines that
//! scrolled out of them.

use std::collections::VecDeque;

use super::pane::{clean, whole_lines};
use crate::exec::Stream;

/// Lines kept under a succeeded command's summary — enough to see how it ended.
pub const KEPT_OK: usize = 5;
/// Most lines kept under a failed command's summary — enough for a failing test's name,
/// its assertion and the final error, few enough to keep the conversation in view.
pub const KEPT_FAILED: usize = 20;
/// Lines remembered while the command runs, from which the kept ones are picked.
const WINDOW_LINES: usize = 200;

/// One line of output, numbered from 0 in arrival order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Numbered {
    number: u64,
    stream: Stream,
    text: String,
}

/// What is shown under the summary, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// A line the command printed (made safe), with its stream.
    Line(Stream, String),
    /// `N` lines left out here.
    Gap(u64),
}

/// The output of the running command, remembered for its tail.
#[derive(Debug, Default)]
pub struct Tail {
    window: VecDeque<Numbered>,
    /// Error lines (and the line after each) that scrolled out of the window, the latest
    /// [`KEPT_FAILED`].
    earlier_errors: VecDeque<Numbered>,
    /// The last line to scroll out said what failed.
    after_error: bool,
    /// Unfinished last line per stream.
    partial: [String; 2],
    lines: u64,
}

impl Tail {
    /// Adds a chunk of `stream`.
    pub fn push(&mut self, stream: Stream, text: &str) {
        let mut partial = std::mem::take(&mut self.partial[stream as usize]);
        whole_lines(&mut partial, text, |line| self.add(stream, &line));
        self.partial[stream as usize] = partial;
    }

    fn add(&mut self, stream: Stream, line: &str) {
        self.window.push_back(Numbered {
            number: self.lines,
            stream,
            text: clean(line),
        });
        self.lines += 1;
        if self.window.len() > WINDOW_LINES
            && let Some(old) = self.window.pop_front()
        {
            let failed = says_what_failed(&old.text);
            if failed || self.after_error {
                self.earlier_errors.push_back(old);
                if self.earlier_errors.len() > KEPT_FAILED {
                    self.earlier_errors.pop_front();
                }
            }
            self.after_error = failed;
        }
    }

    /// The lines to keep on screen: see the module's description.
    #[must_use]
    pub fn kept(mut self, failed: bool) -> Vec<Kept> {
        for stream in [Stream::Stdout, Stream::Stderr] {
            let rest = std::mem::take(&mut self.partial[stream as usize]);
            if !rest.is_empty() {
                self.add(stream, &rest);
            }
        }
        let lines: Vec<Numbered> = self.earlier_errors.into_iter().chain(self.window).collect();
        let room = if failed { KEPT_FAILED } else { KEPT_OK };
        let mut chosen: Vec<usize> = (lines.len().saturating_sub(KEPT_OK)..lines.len()).collect();
        if failed {
            let last_frame = lines.iter().rposition(|line| is_frame(&line.text));
            // A line that says what failed or a traceback's last frame, and the line after it.
            let marks = |at: usize| says_what_failed(&lines[at].text) || Some(at) == last_frame;
            let first_choice = |at: usize| {
                marks(at)
                    || (at > 0 && lines[at - 1].number + 1 == lines[at].number && marks(at - 1))
            };
            let order = (0..lines.len())
                .rev()
                .filter(|at| first_choice(*at))
                .chain(
                    (0..lines.len())
                        .rev()
                        .filter(|at| lines[*at].stream == Stream::Stderr),
                )
                .chain((0..lines.len()).rev());
            for at in order {
                if chosen.len() >= room {
                    break;
                }
                if !chosen.contains(&at) {
                    chosen.push(at);
                }
            }
        }
        chosen.sort_unstable();
        let mut kept = Vec::new();
        let mut next = 0;
        for at in chosen {
            let line = &lines[at];
            if line.number > next {
                kept.push(Kept::Gap(line.number - next));
            }
            kept.push(Kept::Line(line.stream, line.text.clone()));
            next = line.number + 1;
        }
        kept
    }
}

/// The kept lines as written under the summary, indented: stderr red and gaps dimmed when
/// `color` is on.
#[must_use]
pub fn shown(kept: Vec<Kept>, color: bool) -> Vec<String> {
    use crossterm::style::Stylize as _;
    kept.into_iter()
        .map(|kept| match kept {
            Kept::Line(Stream::Stderr, text) if color => format!("  {}", text.red()),
            Kept::Line(_, text) => format!("  {text}"),
            Kept::Gap(lines) => {
                let gap = format!("  … {lines} line{} …", if lines == 1 { "" } else { "s" });
                if color { gap.dim().to_string() } else { gap }
            }
        })
        .collect()
}

/// A line that says what went wrong: `error`, `FAILED`, `panicked`, an exception name.
fn says_what_failed(line: &str) -> bool {
    line.contains("FAILED")
        || line.contains("panicked")
        || line.to_lowercase().contains("error")
        || line.starts_with("Traceback ")
}

/// A frame of a Python traceback: `  File "x.py", line 3, in f`.
fn is_frame(line: &str) -> bool {
    line.trim_start().starts_with("File \"") && line.contains(", line ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn out(text: &str) -> Kept {
        Kept::Line(Stream::Stdout, text.to_owned())
    }

    fn tail(chunks: &[(Stream, String)]) -> Tail {
        let mut tail = Tail::default();
        for (stream, text) in chunks {
            tail.push(*stream, text);
        }
        tail
    }

    fn numbers(from: u32, to: u32) -> String {
        (from..=to).map(|n| format!("line {n}\n")).collect()
    }

    #[test]
    fn a_success_keeps_its_last_lines() {
        let kept = tail(&[(Stream::Stdout, numbers(1, 30))]).kept(false);
        let mut expected = vec![Kept::Gap(25)];
        expected.extend((26..=30).map(|n| out(&format!("line {n}"))));
        assert_eq!(kept, expected);
        let short = tail(&[(Stream::Stdout, "a\nb".to_owned())]).kept(false);
        assert_eq!(short, [out("a"), out("b")]);
        assert_eq!(Tail::default().kept(true), []);
    }

    #[test]
    fn a_failure_keeps_what_failed_before_the_rest() {
        let mut cargo = numbers(1, 40);
        cargo.push_str("test parse::tests::empty ... FAILED\n");
        cargo.push_str(&numbers(41, 80));
        cargo.push_str("thread 'parse::tests::empty' panicked at src/parse.rs:9:5:\n");
        cargo.push_str("assertion `left == right` failed\n");
        cargo.push_str(&numbers(81, 300));
        cargo.push_str("test result: FAILED. 9 passed; 1 failed\n");
        let kept = tail(&[
            (Stream::Stdout, cargo),
            (
                Stream::Stderr,
                "error: test failed, to rerun pass `--lib`\n".to_owned(),
            ),
        ])
        .kept(true);
        let lines: Vec<&str> = kept
            .iter()
            .filter_map(|k| match k {
                Kept::Line(_, text) => Some(text.as_str()),
                Kept::Gap(_) => None,
            })
            .collect();
        assert!(lines.len() <= KEPT_FAILED, "{kept:?}");
        for needed in [
            "test parse::tests::empty ... FAILED",
            "thread 'parse::tests::empty' panicked at src/parse.rs:9:5:",
            "assertion `left == right` failed",
            "test result: FAILED. 9 passed; 1 failed",
            "error: test failed, to rerun pass `--lib`",
            "line 300",
        ] {
            assert!(lines.contains(&needed), "`{needed}` not kept: {kept:?}");
        }
        let gaps: u64 = kept
            .iter()
            .map(|k| if let Kept::Gap(n) = k { *n } else { 0 })
            .sum();
        assert_eq!(gaps + lines.len() as u64, 300 + 5, "{kept:?}");
    }

    #[test]
    fn a_traceback_keeps_its_last_frame_and_stderr_comes_next() {
        let mut text = numbers(1, 30);
        text.push_str("Traceback (most recent call last):\n");
        text.push_str("  File \"a.py\", line 1, in <module>\n    main()\n");
        text.push_str("  File \"a.py\", line 7, in main\n    1 / 0\n");
        text.push_str("ZeroDivisionError: division by zero\n");
        let kept = tail(&[
            (Stream::Stderr, "warning: slow\n".to_owned()),
            (Stream::Stdout, text),
        ])
        .kept(true);
        let has = |line: &str| {
            kept.iter()
                .any(|k| matches!(k, Kept::Line(_, t) if t == line))
        };
        assert!(has("  File \"a.py\", line 7, in main"), "{kept:?}");
        assert!(has("    1 / 0"), "{kept:?}");
        assert!(has("warning: slow"), "{kept:?}");
        assert!(has("ZeroDivisionError: division by zero"), "{kept:?}");
    }

    #[test]
    fn an_early_error_is_kept_however_much_follows() {
        let mut text = "error[E0308]: mismatched types\n".to_owned();
        text.push_str(&numbers(1, 5000));
        let kept = tail(&[(Stream::Stdout, text)]).kept(true);
        assert_eq!(kept[0], out("error[E0308]: mismatched types"), "{kept:?}");
        assert_eq!(kept.len(), KEPT_FAILED + 1, "one gap: {kept:?}");
    }

    #[test]
    fn output_is_made_safe() {
        let kept = tail(&[(
            Stream::Stdout,
            "\u{1b}[31mred\u{1b}[0m \u{1b}]0;t\u{7}\n".into(),
        )])
        .kept(false);
        assert_eq!(kept, [out("red \\u{1b}]0;t\\u{7}")]);
    }
}
