//! Reasoning and tool calls that a server writes into the answer text instead of their own
//! fields, read back out as the text streams: `<think>…</think>` at the very start of the
//! content (DeepSeek-R1, QwQ, Qwen3 on `llama.cpp`, LM Studio, vLLM without
//! `--reasoning-parser`) and Hermes/Qwen `<tool_call>{"name": …, "arguments": …}</tool_call>`
//! blocks (vLLM without `--tool-call-parser`, some Ollama templates). Text that might be the
//! start of a tag is held back until it is clear, so nothing is shown twice or in the wrong
//! place. Whether a block is a call the agent runs is the caller's decision ([`Piece::Call`]).

/// Opens reasoning, only at the start of the content.
const THINK_OPEN: &str = "<think>";
/// Closes it.
const THINK_CLOSE: &str = "</think>";
/// Opens a call written as text.
const CALL_OPEN: &str = "<tool_call>";
/// Closes it.
const CALL_CLOSE: &str = "</tool_call>";

/// One piece of the content, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    /// Answer text.
    Text(String),
    /// Reasoning that was inside `<think>…</think>`.
    Reasoning(String),
    /// What was between `<tool_call>` and `</tool_call>` (or the end of the reply), as written.
    Call(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Nothing but whitespace yet: a `<think>` may still open.
    #[default]
    Start,
    /// Inside `<think>`.
    Thinking,
    /// Answer text; `trim` drops the whitespace that follows `</think>`.
    Text { trim: bool },
    /// Inside `<tool_call>`.
    Call,
}

/// Sorts streamed content into [`Piece`]s.
#[derive(Debug, Default)]
pub(super) struct Embedded {
    state: State,
    /// Text not yet passed on: a possible tag start, or the call being read.
    held: String,
    /// Whether a `<think>` block was read (its reasoning is sent back in the content).
    pub(super) thought: bool,
}

impl Embedded {
    /// Sorts `text`, the next piece of the content, passing on what is clear.
    pub(super) fn push(&mut self, text: &str, out: &mut dyn FnMut(Piece)) {
        self.held.push_str(text);
        loop {
            match self.state {
                State::Start => {
                    let rest = self.held.trim_start();
                    if let Some(after) = rest.strip_prefix(THINK_OPEN) {
                        self.held = after.to_owned();
                        self.state = State::Thinking;
                        self.thought = true;
                    } else if THINK_OPEN.starts_with(rest) {
                        return; // only whitespace, or a `<think>` still coming
                    } else {
                        self.state = State::Text { trim: false };
                    }
                }
                State::Thinking => match self.held.find(THINK_CLOSE) {
                    Some(at) => {
                        let after = self.held.split_off(at + THINK_CLOSE.len());
                        self.held.truncate(at);
                        emit(Piece::Reasoning(std::mem::take(&mut self.held)), out);
                        self.held = after;
                        self.state = State::Text { trim: true };
                    }
                    None => {
                        let keep = partial_suffix(&self.held, THINK_CLOSE);
                        let rest = self.held.split_off(self.held.len() - keep);
                        emit(
                            Piece::Reasoning(std::mem::replace(&mut self.held, rest)),
                            out,
                        );
                        return;
                    }
                },
                State::Text { trim } => {
                    if trim {
                        self.held = self.held.trim_start().to_owned();
                        if self.held.is_empty() {
                            return;
                        }
                        self.state = State::Text { trim: false };
                    }
                    match self.held.find(CALL_OPEN) {
                        Some(at) => {
                            let after = self.held.split_off(at + CALL_OPEN.len());
                            self.held.truncate(at);
                            emit(Piece::Text(std::mem::take(&mut self.held)), out);
                            self.held = after;
                            self.state = State::Call;
                        }
                        None => {
                            let keep = partial_suffix(&self.held, CALL_OPEN);
                            let rest = self.held.split_off(self.held.len() - keep);
                            emit(Piece::Text(std::mem::replace(&mut self.held, rest)), out);
                            return;
                        }
                    }
                }
                State::Call => match self.held.find(CALL_CLOSE) {
                    Some(at) => {
                        let after = self.held.split_off(at + CALL_CLOSE.len());
                        self.held.truncate(at);
                        out(Piece::Call(std::mem::take(&mut self.held)));
                        self.held = after;
                        // The newline between two calls is no answer.
                        self.state = State::Text { trim: true };
                    }
                    None => return,
                },
            }
        }
    }

    /// The content ended: passes on what was held (an unclosed call as a call: servers strip
    /// the closing tag when it is a stop word).
    pub(super) fn finish(&mut self, out: &mut dyn FnMut(Piece)) {
        let held = std::mem::take(&mut self.held);
        match self.state {
            State::Start | State::Text { .. } => emit(Piece::Text(held), out),
            State::Thinking => emit(Piece::Reasoning(held), out),
            State::Call => out(Piece::Call(held)),
        }
        self.state = State::Text { trim: false };
    }
}

/// Passes on a non-empty text piece.
fn emit(piece: Piece, out: &mut dyn FnMut(Piece)) {
    match &piece {
        Piece::Text(text) | Piece::Reasoning(text) if text.is_empty() => {}
        _ => out(piece),
    }
}

/// The length of the longest end of `text` that is a proper start of `tag` (held back: the
/// tag may be completed by the next piece).
fn partial_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| text.ends_with(&tag[..n]))
        .unwrap_or(0)
}

/// A call written as text, when it names `offered` tool and its arguments are a JSON object
/// (`arguments`, or `parameters` as some templates write it; an object or a string of one):
/// `(name, arguments as JSON text)`.
pub(super) fn parse_call(raw: &str, offered: &[String]) -> Option<(String, String)> {
    let value: serde_json::Value = serde_json::from_str(raw.trim()).ok()?;
    let name = value.get("name")?.as_str()?;
    if !offered.iter().any(|tool| tool == name) {
        return None;
    }
    let arguments = value.get("arguments").or_else(|| value.get("parameters"))?;
    let arguments = match arguments {
        serde_json::Value::String(text) => serde_json::from_str(text).ok()?,
        other => other.clone(),
    };
    arguments
        .is_object()
        .then(|| (name.to_owned(), arguments.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn sort(chunks: &[&str]) -> Vec<Piece> {
        let mut embedded = Embedded::default();
        let mut pieces: Vec<Piece> = Vec::new();
        let mut out = |piece: Piece| match (pieces.last_mut(), piece) {
            (Some(Piece::Text(a)), Piece::Text(b))
            | (Some(Piece::Reasoning(a)), Piece::Reasoning(b)) => {
                a.push_str(&b);
            }
            (_, piece) => pieces.push(piece),
        };
        for chunk in chunks {
            embedded.push(chunk, &mut out);
        }
        embedded.finish(&mut out);
        pieces
    }

    const QWEN: &str = "<think>\nThe user wants the files listed.\n</think>\n\nI will list them.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>";

    #[test]
    fn think_then_text_then_a_call() {
        assert_eq!(
            sort(&[QWEN]),
            [
                Piece::Reasoning("\nThe user wants the files listed.\n".into()),
                Piece::Text("I will list them.\n".into()),
                Piece::Call(
                    "\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n".into()
                ),
            ]
        );
    }

    proptest! {
        #[test]
        fn every_split_sorts_the_same(cuts in proptest::collection::vec(0..QWEN.len(), 0..6)) {
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| QWEN.is_char_boundary(c)).collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut chunks = Vec::new();
            let mut from = 0;
            for cut in cuts {
                chunks.push(&QWEN[from..cut]);
                from = cut;
            }
            chunks.push(&QWEN[from..]);
            prop_assert_eq!(sort(&chunks), sort(&[QWEN]));
        }

        #[test]
        fn text_without_tags_passes_unchanged(text in "[a-z <>/\n]{0,40}") {
            prop_assume!(!text.contains(CALL_OPEN) && !text.trim_start().starts_with(THINK_OPEN));
            let expected = if text.is_empty() { vec![] } else { vec![Piece::Text(text.clone())] };
            let split: Vec<&str> = text.split_inclusive('<').collect();
            prop_assert_eq!(sort(&split), expected);
        }
    }

    #[test]
    fn think_later_in_the_text_is_text_and_tags_are_held_only_while_unclear() {
        assert_eq!(
            sort(&["Use <think> tags", " like <thi", "s"]),
            [Piece::Text("Use <think> tags like <this".into())]
        );
        assert_eq!(
            sort(&["  <thin", "k>hm</th", "ink>ok"]),
            [Piece::Reasoning("hm".into()), Piece::Text("ok".into())]
        );
        assert_eq!(sort(&["<think>cut"]), [Piece::Reasoning("cut".into())]);
        assert_eq!(
            sort(&["a <tool_call>{\"name\":"]),
            [Piece::Text("a ".into()), Piece::Call("{\"name\":".into())]
        );
    }

    #[test]
    fn only_an_offered_tool_with_object_arguments_is_a_call() {
        let offered = ["shell".to_owned()];
        assert_eq!(
            parse_call(
                r#"{"name": "shell", "arguments": {"command": "ls"}}"#,
                &offered
            ),
            Some(("shell".into(), r#"{"command":"ls"}"#.into()))
        );
        assert_eq!(
            parse_call(
                r#"{"name": "shell", "arguments": "{\"command\": \"ls\"}"}"#,
                &offered
            ),
            Some(("shell".into(), r#"{"command":"ls"}"#.into()))
        );
        for raw in [
            r#"{"name": "rm_everything", "arguments": {}}"#,
            r#"{"name": "shell", "arguments": [1]}"#,
            r#"{"name": "shell", "arguments": {"command": "ls"}"#,
            r#"{"name": "shell"}"#,
            "not json",
        ] {
            assert_eq!(parse_call(raw, &offered), None, "{raw}");
        }
        assert_eq!(
            parse_call(r#"{"name": "shell", "arguments": {}}"#, &[]),
            None
        );
    }
}
