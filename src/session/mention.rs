//! `@path` in a message: each word that starts with `@` and names a file or directory
//! brings its content (or, for a directory, its listing) along with the message, as the
//! model's own `read_file` and `list_files` would give it — the same code, the same caps
//! (said in what is attached), and the same read policy: a secret file or a path outside the
//! workspace asks at the terminal (refused where nobody can be asked), a denied one is
//! refused; nothing is read silently. The transcript keeps the person's words only.
//!
//! Tab completion of `@src/ma` is [`complete`]'s: the workspace's names, ignored and secret
//! files never offered.

use std::path::{Path, PathBuf};

use crate::approve::{Approval, Approve as _, FileApprovalRequest};
use crate::policy::Verdict;
use crate::policy::files::{self, Access, FileRules};
use crate::tools::{self, ListArgs, ReadArgs};
use crate::ui::sanitize;

use super::Session;

/// Most mentions attached to one message; the rest are said and left as text.
const MAX_MENTIONS: usize = 10;
/// Most names Tab offers at once.
const MAX_OFFERED: usize = 50;
/// Characters dropped from the end of a mention that names nothing as it stands
/// (`see @src/main.rs.`).
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', '\'', '"'];

/// The words of `message` that start with `@` (without it), in order, each once.
#[must_use]
pub(super) fn mentions(message: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for word in message.split_whitespace() {
        if let Some(path) = word.strip_prefix('@')
            && !path.is_empty()
            && !found.contains(&path)
        {
            found.push(path);
        }
    }
    found
}

/// What a message's mentions bring along.
#[derive(Debug, Default)]
pub(super) struct Attached {
    /// Appended to the message the model gets.
    pub text: String,
    /// One line each, for the person.
    pub lines: Vec<String>,
    /// The person stopped at a question: the message is not sent.
    pub stopped: bool,
}

/// Whether a mentioned path may be read.
enum May {
    Read,
    /// Not: why.
    Not(String),
    /// The person stopped at the question.
    Stop,
}

impl Session {
    /// Reads what `message` mentions, asking where the read policy asks.
    pub(super) async fn attach(&mut self, message: &str) -> Attached {
        let mut attached = Attached::default();
        let mut blocks: Vec<String> = Vec::new();
        for (index, word) in mentions(message).into_iter().enumerate() {
            if index == MAX_MENTIONS {
                attached.lines.push(format!(
                    "agent: only the first {MAX_MENTIONS} @mentions are attached; the rest are \
                     sent as text"
                ));
                break;
            }
            let Some((path, shown)) = self.mentioned(word) else {
                attached.lines.push(format!(
                    "agent: @{}: no such file or directory: sent as text",
                    sanitize::escape(word)
                ));
                continue;
            };
            match self.may_read(&path, &shown, word).await {
                May::Read => {}
                May::Not(why) => {
                    attached.lines.push(format!(
                        "agent: @{} not attached: {}",
                        sanitize::escape(word),
                        sanitize::escape_prose(&why)
                    ));
                    continue;
                }
                May::Stop => {
                    attached.stopped = true;
                    return attached;
                }
            }
            let scope = crate::agent::file_scope(&self.config);
            let (tag, result) = if path.is_dir() {
                let args = ListArgs {
                    path: Some(shown.clone()),
                    pattern: None,
                };
                ("directory", tools::list(&scope, &path, &args))
            } else {
                let args = ReadArgs {
                    path: shown.clone(),
                    offset: None,
                    limit: None,
                };
                ("file", tools::read(&scope, &path, &args))
            };
            match result {
                Ok(output) => {
                    attached.lines.push(format!(
                        "  + @{}: {}",
                        sanitize::escape(word),
                        sanitize::escape_prose(&output.summary)
                    ));
                    blocks.push(format!(
                        "<{tag} path=\"{shown}\">\n{}\n</{tag}>",
                        output.content.trim_end()
                    ));
                }
                Err(error) => attached.lines.push(format!(
                    "agent: @{} not attached: {}",
                    sanitize::escape(word),
                    sanitize::escape_prose(&error.message)
                )),
            }
        }
        if !blocks.is_empty() {
            attached.text = format!(
                "\n\nWhat the user's @mentions name (as read_file and list_files give it):\n{}",
                blocks.join("\n")
            );
        }
        attached
    }

    /// The path a mention names, resolved, and as a person reads it: the word as it
    /// stands, or without trailing punctuation; `None` when neither exists.
    fn mentioned(&self, word: &str) -> Option<(PathBuf, String)> {
        let trimmed = word.trim_end_matches(TRAILING);
        [word, trimmed]
            .into_iter()
            .filter(|candidate| !candidate.is_empty())
            .find_map(|candidate| {
                let path = tools::resolve(&self.config.workspace, Some(candidate)).ok()?;
                path.symlink_metadata().ok()?;
                let shown = self.config.files.display(&path);
                Some((path, shown))
            })
    }

    /// The file tools' read decision on `path`, and the person's answer where it asks.
    async fn may_read(&mut self, path: &Path, shown: &str, word: &str) -> May {
        let decision = files::apply_mode(
            files::decide(&self.config.files, Access::Read, path),
            self.config.mode,
        );
        match decision.verdict {
            Verdict::Allow => return May::Read,
            Verdict::Deny => return May::Not(decision.reason),
            Verdict::Ask => {}
        }
        if let Err(why) = self.approver.can_ask() {
            return May::Not(format!("{}; nobody can be asked ({why})", decision.reason));
        }
        let request = FileApprovalRequest {
            access: Access::Read,
            label: format!(
                "read {} (your @{}: its content goes to the model with your message)",
                sanitize::escape(shown),
                sanitize::escape(word)
            ),
            reason: decision.reason.clone(),
            diff: None,
            counts: None,
        };
        self.lock_composer().hide();
        match self.approver.ask_file(&request).await {
            Approval::Allow | Approval::AllowForRun => May::Read,
            Approval::Interrupt => May::Stop,
            Approval::Deny
            | Approval::DenyWithNote(_)
            | Approval::Edit(_)
            | Approval::AllowInProject(_)
            | Approval::AlwaysAllow(_) => May::Not("denied at the prompt".to_owned()),
        }
    }
}

/// The workspace names that complete `partial` (what follows `@`): the entries of its
/// directory whose names start with its last part, directories with a `/`, sorted, at most
/// [`MAX_OFFERED`]. What `list_files` leaves out is never offered: ignored files (the
/// `ignore` walk), secret files and denied ones; nothing outside the workspace (no absolute
/// path, no `..`); hidden names only when the part typed starts with `.`.
#[must_use]
pub fn complete(rules: &FileRules, partial: &str) -> Vec<String> {
    let (dir, prefix) = match partial.rfind('/') {
        Some(at) => (&partial[..=at], &partial[at + 1..]),
        None => ("", partial),
    };
    let relative = Path::new(dir);
    if relative.is_absolute()
        || relative
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Vec::new();
    }
    let root = rules.root().join(relative);
    let walker = ignore::WalkBuilder::new(&root)
        .max_depth(Some(1))
        .hidden(!prefix.starts_with('.'))
        .parents(true)
        .require_git(false)
        .build();
    let mut offered: Vec<String> = walker
        .filter_map(Result::ok)
        .filter(|entry| entry.depth() == 1)
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_owned();
            if !name.starts_with(prefix)
                || name == ".git"
                || name.chars().any(sanitize::is_hidden)
                || rules.skipped(entry.path())
            {
                return None;
            }
            let slash = if entry.file_type()?.is_dir() { "/" } else { "" };
            Some(format!("{dir}{name}{slash}"))
        })
        .collect();
    offered.sort();
    offered.truncate(MAX_OFFERED);
    offered
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn workspace() -> (tempfile::TempDir, FileRules) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for file in [
            "src/main.rs",
            "src/mod.rs",
            "src/model/a.rs",
            "target/debug/x",
            ".env",
            ".github/ci.yml",
            "id_rsa",
            "Makefile",
            "secrets/key.txt",
            "a\u{1b}]52;x",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        let deny = vec![crate::policy::files::FileRule {
            pattern: "secrets/**".into(),
            source: crate::policy::Source::User,
        }];
        let rules = FileRules::new(root, deny, &[], files::Edits::Ask, Vec::new()).unwrap();
        (dir, rules)
    }

    #[test]
    fn tab_offers_the_workspace_names_but_no_ignored_secret_denied_or_outside_one() {
        let (_dir, rules) = workspace();
        assert_eq!(complete(&rules, "src/mo"), ["src/mod.rs", "src/model/"]);
        assert_eq!(complete(&rules, "src/ma"), ["src/main.rs"]);
        assert_eq!(complete(&rules, ""), ["Makefile", "src/"]);
        assert_eq!(complete(&rules, "."), [".github/", ".gitignore"]);
        for none in [
            "t", "id", ".e", "secrets/", "se", "a", "../", "/etc/pa", "src/../s",
        ] {
            assert!(
                complete(&rules, none).is_empty(),
                "{none}: {:?}",
                complete(&rules, none)
            );
        }
    }

    #[test]
    fn a_mention_is_a_word_that_starts_with_an_at() {
        assert_eq!(
            mentions("see @src/main.rs and me@example.com, @ alone, @src/main.rs again @a."),
            vec!["src/main.rs", "a."]
        );
        assert!(mentions("no mention here").is_empty());
    }
}
