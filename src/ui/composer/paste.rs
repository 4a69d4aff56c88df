//! A long paste stands in the composer as one placeholder, `[pasted 300 lines]`, so the
//! text around it stays easy to read and edit; the message sent carries the whole paste in
//! its place. A placeholder edited away (or broken by an edit inside it) is sent as it
//! stands and its paste is dropped; Backspace right after one takes it away whole.

/// Pastes of more lines than this collapse into a placeholder.
pub const COLLAPSE_LINES: usize = 10;

/// The pastes standing behind placeholders in the composer's text, in pasting order.
#[derive(Debug, Default)]
pub(super) struct Pastes(Vec<(String, String)>);

impl Pastes {
    /// The placeholder for `text` (already escaped), remembered with it; `None` when `text`
    /// is short enough to stand for itself.
    pub(super) fn collapse(&mut self, text: String) -> Option<String> {
        let lines = text.lines().count();
        if lines <= COLLAPSE_LINES {
            return None;
        }
        let base = format!("[pasted {lines} lines");
        let mut placeholder = format!("{base}]");
        let mut number = 2;
        while self.0.iter().any(|(taken, _)| *taken == placeholder) {
            placeholder = format!("{base} #{number}]");
            number += 1;
        }
        self.0.push((placeholder.clone(), text));
        Some(placeholder)
    }

    /// `message` with each placeholder in it (its first occurrence) replaced by its paste;
    /// the pastes are forgotten. Placeholders are found in `message` as typed, so a paste
    /// that itself holds placeholder-like text is never searched.
    pub(super) fn expand(&mut self, message: &str) -> String {
        let mut found: Vec<(usize, &str, &str)> = self
            .0
            .iter()
            .filter_map(|(placeholder, text)| {
                message
                    .find(placeholder.as_str())
                    .map(|at| (at, placeholder.as_str(), text.as_str()))
            })
            .collect();
        found.sort_by_key(|(at, _, _)| *at);
        let mut out = String::with_capacity(message.len() + self.bytes());
        let mut from = 0;
        for (at, placeholder, text) in found {
            if at < from {
                continue;
            }
            out.push_str(&message[from..at]);
            out.push_str(text);
            from = at + placeholder.len();
        }
        out.push_str(&message[from..]);
        self.0.clear();
        out
    }

    /// The placeholder that `before` (the line up to the cursor) ends with: forgotten, and
    /// its length in characters returned, for Backspace to take it away whole.
    pub(super) fn take_ending(&mut self, before: &str) -> Option<usize> {
        let at = self
            .0
            .iter()
            .position(|(placeholder, _)| before.ends_with(placeholder.as_str()))?;
        let (placeholder, _) = self.0.remove(at);
        Some(placeholder.chars().count())
    }

    /// Bytes of the pastes, which count toward the message's limit.
    pub(super) fn bytes(&self) -> usize {
        self.0.iter().map(|(_, text)| text.len()).sum()
    }

    pub(super) fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn lines(count: usize, word: &str) -> String {
        (1..=count).map(|n| format!("{word} {n}\n")).collect()
    }

    #[test]
    fn only_pastes_longer_than_the_limit_collapse() {
        let mut pastes = Pastes::default();
        for count in 0..=COLLAPSE_LINES {
            assert_eq!(pastes.collapse(lines(count, "x")), None, "{count}");
        }
        for count in [COLLAPSE_LINES + 1, 300] {
            assert_eq!(
                pastes.collapse(lines(count, "x")),
                Some(format!("[pasted {count} lines]"))
            );
        }
        assert_eq!(
            pastes.collapse(lines(300, "y")),
            Some("[pasted 300 lines #2]".to_owned())
        );
    }

    #[test]
    fn each_placeholder_is_replaced_by_its_own_paste_wherever_it_stands() {
        let mut pastes = Pastes::default();
        let first = lines(12, "a");
        // The second paste holds the first's placeholder as text: it stays text.
        let second = format!("[pasted 12 lines]\n{}", lines(11, "b"));
        let one = pastes.collapse(first.clone()).unwrap();
        let two = pastes.collapse(second.clone()).unwrap();
        assert_eq!(pastes.bytes(), first.len() + second.len());
        let sent = pastes.expand(&format!("see {two} and {one}."));
        assert_eq!(sent, format!("see {second} and {first}."));
        assert_eq!(pastes.bytes(), 0, "forgotten once sent");
        let mut pastes = Pastes::default();
        let one = pastes.collapse(first).unwrap();
        let broken = one.replace("12", "1");
        assert_eq!(
            pastes.expand(&broken),
            broken,
            "an edited placeholder stays"
        );
    }

    #[test]
    fn backspace_after_a_placeholder_takes_it_whole() {
        let mut pastes = Pastes::default();
        let one = pastes.collapse(lines(20, "a")).unwrap();
        assert_eq!(pastes.take_ending("look at [pasted 20 lines"), None);
        assert_eq!(
            pastes.take_ending(&format!("look at {one}")),
            Some(one.chars().count())
        );
        assert_eq!(pastes.bytes(), 0);
    }
}
