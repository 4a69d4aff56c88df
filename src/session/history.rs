//! The messages a person sent in sessions, per workspace, for the composer's Up/Down: one
//! NDJSON file in the state directory (`history.ndjson`, a line `{"cwd", "text"}` per
//! message). A line that does not parse is left out with one note; a file that cannot be
//! read or written costs the history, never the session.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// Messages kept for Up/Down, the latest ones — more than anyone scrolls through.
const KEPT: usize = 500;
/// Longest history file read; a longer one is read from its end.
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// This workspace's earlier messages, and where new ones go.
#[derive(Debug, Default)]
pub struct History {
    path: Option<PathBuf>,
    workspace: String,
    /// Oldest first.
    pub messages: Vec<String>,
    /// What went wrong reading it, for the person.
    pub note: Option<String>,
}

impl History {
    /// Reads the history of `workspace` from `state_dir` (none: no history).
    #[must_use]
    pub fn load(state_dir: Option<&Path>, workspace: &Path) -> Self {
        let workspace = workspace.display().to_string();
        let Some(dir) = state_dir else {
            return Self {
                workspace,
                ..Self::default()
            };
        };
        let path = dir.join("history.ndjson");
        let (messages, note) = match read_tail(&path) {
            Ok(text) => parse(&text, &workspace, &path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => (Vec::new(), None),
            Err(error) => (
                Vec::new(),
                Some(format!(
                    "cannot read the message history `{}`: {error}: Up/Down start empty",
                    path.display()
                )),
            ),
        };
        Self {
            path: Some(path),
            workspace,
            messages,
            note,
        }
    }

    /// Records a sent message; says why when it could not be.
    pub fn add(&mut self, message: &str) -> Option<String> {
        if self.messages.last().is_some_and(|last| last == message) {
            return None;
        }
        self.messages.push(message.to_owned());
        let path = self.path.as_ref()?;
        let line = json!({"cwd": self.workspace, "text": message}).to_string() + "\n";
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
            })
            .and_then(|mut file| file.write_all(line.as_bytes()));
        match written {
            Ok(()) => None,
            Err(error) => {
                let note = format!(
                    "cannot write the message history `{}`: {error}: this message is not kept for Up",
                    path.display()
                );
                self.path = None;
                Some(note)
            }
        }
    }
}

/// The file's text, or its last [`MAX_READ_BYTES`] from a line start.
fn read_tail(path: &Path) -> std::io::Result<String> {
    use std::io::{Read as _, Seek as _};
    let mut file = std::fs::File::open(path)?;
    let length = file.metadata()?.len();
    let mut bytes = Vec::new();
    if length > MAX_READ_BYTES {
        file.seek(std::io::SeekFrom::Start(length - MAX_READ_BYTES))?;
        file.read_to_end(&mut bytes)?;
        let start = bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(0, |at| at + 1);
        bytes.drain(..start);
    } else {
        file.read_to_end(&mut bytes)?;
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The messages of `workspace` in `text`, and a note when lines were unreadable.
fn parse(text: &str, workspace: &str, path: &Path) -> (Vec<String>, Option<String>) {
    let mut messages = Vec::new();
    let mut unreadable = 0_usize;
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            unreadable += 1;
            continue;
        };
        match (entry["cwd"].as_str(), entry["text"].as_str()) {
            (Some(cwd), Some(message)) if cwd == workspace => messages.push(message.to_owned()),
            (Some(_), Some(_)) => {}
            _ => unreadable += 1,
        }
    }
    let drop = messages.len().saturating_sub(KEPT);
    messages.drain(..drop);
    let note = (unreadable > 0).then(|| {
        format!(
            "the message history `{}` is damaged: {unreadable} unreadable line{} ignored",
            path.display(),
            if unreadable == 1 { "" } else { "s" }
        )
    });
    (messages, note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn messages_are_kept_per_workspace_and_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut here = History::load(Some(dir.path()), Path::new("/w/a"));
        assert!(here.messages.is_empty() && here.note.is_none());
        assert_eq!(here.add("first"), None);
        assert_eq!(here.add("first"), None);
        let mut there = History::load(Some(dir.path()), Path::new("/w/b"));
        there.add("elsewhere");
        here.add("line 1\nline 2");
        let again = History::load(Some(dir.path()), Path::new("/w/a"));
        assert_eq!(again.messages, vec!["first", "line 1\nline 2"]);
    }

    #[test]
    fn a_damaged_file_is_read_around_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("history.ndjson"),
            "{\"cwd\":\"/w\",\"text\":\"kept\"}\n\u{0}garbage\n{\"cwd\":\"/w\"}\n",
        )
        .unwrap();
        let history = History::load(Some(dir.path()), Path::new("/w"));
        assert_eq!(history.messages, vec!["kept"]);
        assert!(
            history
                .note
                .as_deref()
                .is_some_and(|note| note.contains("2 unreadable lines ignored")),
            "{:?}",
            history.note
        );
    }
}
