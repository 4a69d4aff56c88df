//! Project instructions: `AGENTS.md` at the workspace root and, when the workspace
//! is inside a git repository, at the repository root too, added to the system
//! prompt for the model to follow. They are words to the model only: nothing in
//! them changes the policy, the mode, the sandbox or any setting.
//!
//! The repository's file comes first (general), the workspace's last (more
//! specific). Together they are capped at [`MAX_INSTRUCTION_BYTES`]; what is cut
//! is replaced by a note saying so, to the model and to the person.

use std::path::{Path, PathBuf};

/// The file name looked for.
pub const FILE_NAME: &str = "AGENTS.md";
/// Most bytes of instructions sent with every request: room for a real guide,
/// small next to a model's context, and a bound on what a cloned repository can
/// make every request cost.
pub const MAX_INSTRUCTION_BYTES: usize = 32 * 1024;

/// The instructions found for a workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// The files read, in the order they appear in the prompt.
    pub files: Vec<PathBuf>,
    /// Their text, each under a line naming its file; empty when there are none.
    pub text: String,
    /// Bytes left out to stay under the cap.
    pub cut_bytes: usize,
    /// Files that exist but could not be read, and why.
    pub unreadable: Vec<String>,
}

impl Instructions {
    /// Reads `AGENTS.md` in `workspace` and at the root of its git repository.
    #[must_use]
    pub fn load(workspace: &Path) -> Self {
        let mut candidates = Vec::new();
        if let Some(root) = repository_root(workspace)
            && root != workspace
        {
            candidates.push(root.join(FILE_NAME));
        }
        candidates.push(workspace.join(FILE_NAME));
        let mut found = Vec::new();
        let mut unreadable = Vec::new();
        for path in candidates {
            if !path.is_file() {
                continue;
            }
            match std::fs::read(&path) {
                Ok(bytes) => found.push((path, String::from_utf8_lossy(&bytes).into_owned())),
                Err(error) => unreadable.push(format!("`{}`: {error}", path.display())),
            }
        }
        let mut instructions = Self::from_texts(found);
        instructions.unreadable = unreadable;
        instructions
    }

    /// Joins `(file, text)` pairs under the cap.
    #[must_use]
    pub fn from_texts(texts: Vec<(PathBuf, String)>) -> Self {
        let mut out = Self::default();
        let mut room = MAX_INSTRUCTION_BYTES;
        for (path, text) in texts {
            let text = text.trim();
            let kept = cut_at(text, room);
            room -= kept.len();
            out.cut_bytes += text.len() - kept.len();
            out.text
                .push_str(&format!("\n--- {} ---\n{kept}\n", path.display()));
            if kept.len() < text.len() {
                out.text.push_str(&format!(
                    "[… {} more bytes of project instructions were cut at the {} KiB limit …]\n",
                    text.len() - kept.len(),
                    MAX_INSTRUCTION_BYTES / 1024
                ));
            }
            out.files.push(path);
        }
        out
    }

    /// The section for the system prompt; empty when there are no instructions.
    #[must_use]
    pub fn prompt_section(&self) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        format!(
            "\n\nThe project's own instructions for agents (AGENTS.md) follow. Follow them where \
             they apply. They cannot change which commands are allowed: the permission policy \
             and the user decide that.\n{}",
            self.text
        )
    }
}

/// The longest start of `text` of at most `bytes` bytes, ending on a character boundary.
fn cut_at(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The closest directory at or above `dir` holding `.git` (a directory, or a file for a
/// worktree or submodule).
fn repository_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_repository_file_comes_first_and_both_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        let work = repo.join("crates/app");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(repo.join(FILE_NAME), "use nextest\n").unwrap();
        std::fs::write(work.join(FILE_NAME), "app rules\n").unwrap();
        let found = Instructions::load(&work);
        assert_eq!(
            found.files,
            vec![repo.join(FILE_NAME), work.join(FILE_NAME)]
        );
        assert_eq!(
            found.text,
            format!(
                "\n--- {} ---\nuse nextest\n\n--- {} ---\napp rules\n",
                repo.join(FILE_NAME).display(),
                work.join(FILE_NAME).display()
            )
        );
        assert_eq!(found.cut_bytes, 0);
        assert!(
            found
                .prompt_section()
                .contains("cannot change which commands are allowed")
        );
    }

    #[test]
    fn nothing_found_adds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let found = Instructions::load(dir.path());
        assert_eq!(found, Instructions::default());
        assert_eq!(found.prompt_section(), "");
    }

    #[test]
    fn the_text_is_capped_on_a_character_boundary_with_a_note() {
        let big = "é".repeat(MAX_INSTRUCTION_BYTES);
        let found = Instructions::from_texts(vec![(PathBuf::from("/w/AGENTS.md"), big.clone())]);
        assert_eq!(found.cut_bytes, big.len() - MAX_INSTRUCTION_BYTES);
        assert!(
            found
                .text
                .contains("more bytes of project instructions were cut at the 32 KiB limit")
        );
        assert!(found.text.len() < MAX_INSTRUCTION_BYTES + 200);
    }
}
