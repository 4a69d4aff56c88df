//! Tab in the composer: after `/na` the slash command that starts so; after `@src/ma` (the
//! word before the cursor) a name from the session's workspace ([`Paths`]). One match is
//! completed, several complete their common start and are listed in the note.

use ratatui_textarea::TextArea;

use super::{Composer, sanitize};

/// The names that complete the part after `@` (`src/ma` → `src/main.rs`, `src/model/`).
pub type Paths = Box<dyn Fn(&str) -> Vec<String> + Send>;

impl Composer {
    /// Tab: an `@` mention before the cursor, else `/na`: the one command that starts so, or
    /// the list of those that do.
    pub(super) fn complete(&mut self) {
        if self.complete_mention() {
            return;
        }
        let text = self.text();
        if !text.starts_with('/') || text.contains(char::is_whitespace) {
            return;
        }
        let matches: Vec<String> = self
            .completions
            .iter()
            .filter(|name| name.starts_with(&text))
            .cloned()
            .collect();
        match matches.as_slice() {
            [] => self.note = Some(format!("no command starts with {text}: /help lists them")),
            [one] => {
                let one = format!("{one} ");
                self.set_text(&one);
            }
            several => {
                let common = common_prefix(several);
                if common.len() > text.len() {
                    self.set_text(&common);
                }
                self.note = Some(
                    several
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join("  "),
                );
            }
        }
    }

    /// Tab after `@src/ma` (the word before the cursor): the one name that starts so, or
    /// the longest common start and the list; whether the word was a mention.
    fn complete_mention(&mut self) -> bool {
        let cursor = self.text.cursor();
        let before: Vec<char> = self.text.lines()[cursor.0].chars().take(cursor.1).collect();
        let start = before
            .iter()
            .rposition(|c| c.is_whitespace())
            .map_or(0, |at| at + 1);
        let word: String = before[start..].iter().collect();
        let Some(partial) = word.strip_prefix('@') else {
            return false;
        };
        let offered = self
            .paths
            .as_ref()
            .map(|paths| paths(partial))
            .unwrap_or_default();
        let replace = |area: &mut TextArea<'static>, with: &str| {
            for _ in 0..partial.chars().count() {
                area.delete_char();
            }
            area.insert_str(with);
        };
        match offered.as_slice() {
            [] => {
                self.note = Some(format!(
                    "nothing in the workspace starts with {}",
                    sanitize::escape(partial)
                ));
            }
            [one] => {
                let done = if one.ends_with('/') {
                    one.clone()
                } else {
                    format!("{one} ")
                };
                replace(&mut self.text, &done);
            }
            several => {
                let common = common_prefix(several);
                if common.len() > partial.len() {
                    replace(&mut self.text, &common);
                }
                let names: Vec<&str> = several
                    .iter()
                    .map(|name| {
                        let end = name.trim_end_matches('/');
                        end.rfind('/').map_or(name.as_str(), |at| &name[at + 1..])
                    })
                    .collect();
                self.note = Some(sanitize::escape(&names.join("  ")).into_owned());
            }
        }
        true
    }
}

fn common_prefix(names: &[String]) -> String {
    let Some(first) = names.first() else {
        return String::new();
    };
    let mut prefix = first.clone();
    for name in &names[1..] {
        while !name.starts_with(&prefix) {
            prefix.pop();
        }
    }
    prefix
}
