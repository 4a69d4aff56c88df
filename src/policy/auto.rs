//! Mode `auto` (DESIGN.md "Modes"): a command the policy would ask about runs without a
//! prompt, because it runs in the workspace-write sandbox with the network closed and a
//! snapshot is taken before it. The caller applies it only where that holds (the sandbox
//! fully active, snapshots on); anywhere else `auto` is `ask`. Pure, like [`super::decide`].
//!
//! What still asks in `auto`:
//! - a possible match of a deny rule (a word that is not fixed could complete one);
//! - every command the policy marks `destructive` (a protected program anywhere, or a part
//!   that could not be checked), except one plain `rm`, `rmdir` or `mv` whose every operand
//!   lies strictly inside the workspace, outside `.git` and `.agent` and not a secret file,
//!   with options this module knows, and only when the snapshot taken before it can put back
//!   everything under those paths (the caller says so through `restorable`, asked only for
//!   such a command, with the paths relative to the workspace; a glob is given as the
//!   directory it expands in). So
//!   `sudo`, `su`, `doas`, `pkexec`, `runuser`, `shutdown`, `reboot`, `mkfs`, `dd` … ask,
//!   as do `rm` inside a pipeline or list, behind a wrapper (`xargs rm`, `env rm`), with a
//!   glob at the start of a word (it could expand to an option) or a `~`.
//!
//! Deny stays deny and allow stays allow (a command the read-only list allows keeps its
//! source, so the caller still runs it in the read-only sandbox).

use std::path::{Component, Path, PathBuf};

use super::word::{Word, WordKind, program_key};
use super::{Context, Decision, OsFamily, Verdict, simple, split};

/// Protected programs whose effect the snapshot can take back when every operand lies
/// inside the workspace.
const REMOVERS: &[&str] = &["rm", "rmdir", "mv"];

/// Directories inside the workspace that snapshots do not restore: git's and the agent's.
const UNRESTORED_DIRS: &[&str] = &[".git", ".agent"];

/// Applies mode `auto` to a decision from [`super::decide`]: ask becomes allow unless it may
/// match a deny rule or touches a protected program (see the module). `restorable` is
/// called only for a removal inside the workspace, with the paths it touches (relative to
/// the workspace): whether the snapshot taken before the command (the caller takes it then)
/// can put back everything under them.
#[must_use]
pub fn apply_auto(
    decision: Decision,
    context: &Context,
    command: &str,
    restorable: impl FnOnce(&[PathBuf]) -> bool,
) -> Decision {
    if decision.verdict != Verdict::Ask {
        return decision;
    }
    let still_asks = |decision: Decision, why: &str| Decision {
        reason: format!("{} (mode `auto` still asks: {why})", decision.reason),
        ..decision
    };
    if decision.rule.is_some() {
        return still_asks(decision, "it may match a deny rule");
    }
    if names_git(command) {
        return still_asks(
            decision,
            "it may run git, whose history and refs snapshots do not keep (git's directory is \
             read-only to what `auto` runs)",
        );
    }
    if !decision.destructive {
        // Every command `auto` runs needs the snapshot before it whole: what it changes must
        // come back with `agent undo`.
        if !restorable(&[]) {
            return still_asks(
                decision,
                "the snapshot taken before it failed or is not whole, so undo could not take \
                 it back",
            );
        }
        return allowed(decision, "runs in the sandbox");
    }
    let paths = match removal_in_workspace(context, command) {
        Ok(paths) => paths,
        Err(why) => return still_asks(decision, &why),
    };
    if !restorable(&paths) {
        return still_asks(
            decision,
            "the snapshot taken before it is not whole or leaves some of those files out, so \
             undo could not put back what it removes",
        );
    }
    allowed(
        decision,
        "runs in the sandbox, and the snapshot taken before it can put back what it removes",
    )
}

/// Whether the command's text holds `git` (or `git-…`) as a word anywhere, in any spelling a
/// shell, a script or an environment variable could use (`git`, `/usr/bin/git`, `'git'`,
/// `GIT_CONFIG_PARAMETERS`, `subprocess.run(["git", …])`): read-only git is allowed before
/// `auto` is consulted, so what reaches here may change history, refs or the stash, which
/// snapshots do not keep, or may be a git alias a deny rule cannot see. A spelling this misses
/// (`$'\x67it'`) still meets git's directory read-only (`Policy::git_read_only`).
fn names_git(command: &str) -> bool {
    // Quoting removed first: `g\it`, `g''it` and `"git"` are `git` to a shell.
    let unquoted: String = command
        .chars()
        .filter(|c| !matches!(c, '\\' | '\'' | '"'))
        .collect();
    unquoted
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .any(|word| {
            let word = word.to_ascii_lowercase();
            word == "git" || word.starts_with("git-") || word.starts_with("git_")
        })
}

fn allowed(decision: Decision, what: &str) -> Decision {
    Decision {
        verdict: Verdict::Allow,
        reason: format!("allowed by mode `auto`: {what} ({})", decision.reason),
        ..decision
    }
}

/// The paths (relative to the workspace) when `command` is one plain `rm`, `rmdir` or `mv`
/// that only touches paths inside it that snapshots keep; else why not, for the person.
fn removal_in_workspace(context: &Context, command: &str) -> Result<Vec<PathBuf>, String> {
    let not_plain =
        || "it may touch a protected program and is not one plain `rm`, `rmdir` or `mv`".to_owned();
    if context.os != OsFamily::Unix || command.contains("\\\n") {
        return Err(not_plain());
    }
    let words = simple::single_words(OsFamily::Unix, command).ok_or_else(not_plain)?;
    // The second reading of the words must agree, as for any allow (`decide`).
    if split::split(command).as_deref() != Some(words.as_slice()) {
        return Err(not_plain());
    }
    let (program, operands) = words.split_first().ok_or_else(not_plain)?;
    let key = program
        .known()
        .map(|text| program_key(text, OsFamily::Unix))
        .ok_or_else(not_plain)?;
    let key = key.as_ref();
    if !REMOVERS.contains(&key) {
        return Err(if super::programs::is_protected(key) {
            format!("`{key}` acts on the machine, another user or outside the workspace")
        } else {
            not_plain()
        });
    }
    let mut options_end = false;
    let mut paths = Vec::new();
    for word in operands {
        let text = word.text.as_str();
        if !options_end && text == "--" {
            options_end = true;
        } else if !options_end && text.starts_with('-') && text != "-" {
            if !known_option(key, text) {
                return Err(format!(
                    "`{key}` with option `{text}`, which mode `auto` does not know"
                ));
            }
        } else {
            paths.push(operand_inside(context, key, word)?);
        }
    }
    Ok(paths)
}

/// Options that change neither what is removed or moved nor where: `mv -t`, `-S`, `rmdir -p`
/// and anything else ask.
fn known_option(program: &str, option: &str) -> bool {
    let (short, long): (&str, &[&str]) = match program {
        "rm" => (
            "rRfivdI",
            &[
                "--recursive",
                "--force",
                "--verbose",
                "--dir",
                "--one-file-system",
            ],
        ),
        "rmdir" => ("v", &["--verbose", "--ignore-fail-on-non-empty"]),
        _ => (
            "fivnuT",
            &[
                "--force",
                "--interactive",
                "--verbose",
                "--no-clobber",
                "--update",
                "--no-target-directory",
            ],
        ),
    };
    match option.strip_prefix("--") {
        Some(_) => long.contains(&option),
        None => option[1..].chars().all(|c| short.contains(c)),
    }
}

/// The operand's path relative to the workspace (for a glob, the directory it expands in)
/// when it lies strictly inside the workspace, outside what snapshots never restore.
fn operand_inside(context: &Context, program: &str, word: &Word) -> Result<PathBuf, String> {
    let text = word.text.as_str();
    let outside = || format!("`{program} {text}` may reach outside the workspace");
    if word.kind == WordKind::Expansion || text.is_empty() || text.starts_with('~') {
        return Err(outside());
    }
    if word.kind == WordKind::Pattern && text.contains(['{', '}']) {
        return Err(format!(
            "`{program} {text}` has a brace list, which mode `auto` does not read"
        ));
    }
    if word.kind == WordKind::Pattern && text.starts_with(['*', '?', '[']) {
        return Err(format!(
            "the glob `{text}` could expand to an option (write `./{text}`)"
        ));
    }
    let path = crate::workspace::normalize(&context.cwd, Path::new(text));
    let relative = match path.strip_prefix(&context.workspace) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative,
        _ => return Err(outside()),
    };
    let unrestored = relative.components().any(|component| {
        let Component::Normal(name) = component else {
            return true;
        };
        let name = name.to_string_lossy().to_ascii_lowercase();
        // A glob is judged by what it could match: `.g*` could be `.git`; one starting with
        // another character cannot match a name starting with a dot.
        UNRESTORED_DIRS.iter().any(|dir| {
            name == *dir
                || (word.kind == WordKind::Pattern
                    && name.starts_with('.')
                    && super::word::glob_could_match(&name, dir))
        })
    });
    if unrestored {
        return Err(format!(
            "`{program} {text}` touches git's or the agent's own data, which snapshots do not \
             restore"
        ));
    }
    if let Some(pattern) = context.secrets.matching(relative) {
        return Err(format!(
            "`{program} {text}` touches a secret file (`{pattern}`), which snapshots may not keep"
        ));
    }
    // A glob stands for what it may match: everything in the directory before its first
    // wild component (the workspace itself for `./*.tmp`).
    let known = relative
        .components()
        .take_while(|component| {
            word.kind != WordKind::Pattern
                || !component
                    .as_os_str()
                    .to_string_lossy()
                    .contains(['*', '?', '['])
        })
        .collect();
    Ok(known)
}

#[cfg(test)]
mod tests;
