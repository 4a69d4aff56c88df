//! Secrets (the API key, secret header values) kept out of text the agent passes on: replaced
//! by `[REDACTED]` in one piece of text, or on a stream whose reads may cut a secret anywhere.
//!
//! A stream holds back the end of each piece that could be the start of a secret (at most the
//! longest secret less one character) and passes it on with the next piece or at the end, so a
//! secret printed in two reads is still found whole. It does no I/O and knows nothing of where
//! the text goes.

use super::cap::{Stream, Utf8Decoder};

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Shortest secret worth redacting: shorter strings would mangle ordinary text.
const MIN_SECRET_CHARS: usize = 8;

/// The secrets to keep out of text, longest first (a secret holding another goes first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    values: Vec<String>,
}

impl Secrets {
    /// The secrets among `values` long enough to redact without mangling ordinary text.
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut secrets = Self::default();
        for value in values {
            secrets.add(value);
        }
        secrets
    }

    /// Adds `value` when it is long enough to redact without mangling ordinary text.
    pub fn add(&mut self, value: &str) {
        if value.chars().count() >= MIN_SECRET_CHARS && !self.values.iter().any(|v| v == value) {
            self.values.push(value.to_owned());
            self.values
                .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        }
    }

    /// No secret to redact.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every secret replaced by [`REDACTED`].
    #[must_use]
    pub fn redact(&self, mut text: String) -> String {
        for secret in &self.values {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), REDACTED);
            }
        }
        text
    }

    /// A stream of text to redact piece by piece.
    #[must_use]
    pub fn stream(&self) -> RedactedStream {
        RedactedStream {
            secrets: self.clone(),
            held: String::new(),
        }
    }

    /// Where the end of `text` that could begin a secret starts (`text.len()` when none
    /// could): the longest proper prefix of any secret that `text` ends with.
    fn open_end(&self, text: &str) -> usize {
        let longest = self.values.first().map_or(0, String::len);
        let from = text.len().saturating_sub(longest.saturating_sub(1));
        text.char_indices()
            .map(|(at, _)| at)
            .skip_while(|&at| at < from)
            .find(|&at| {
                let end = &text[at..];
                self.values
                    .iter()
                    .any(|secret| secret.len() > end.len() && secret.starts_with(end))
            })
            .unwrap_or(text.len())
    }
}

/// One stream's redaction: what has been passed on holds no secret, and what is held back is
/// shorter than the longest secret.
#[derive(Debug, Clone, Default)]
pub struct RedactedStream {
    secrets: Secrets,
    held: String,
}

impl RedactedStream {
    /// Takes the next piece of the stream and appends to `out` what may be passed on now.
    pub fn push(&mut self, text: &str, out: &mut String) {
        if self.secrets.is_empty() {
            out.push_str(text);
            return;
        }
        let mut joined = std::mem::take(&mut self.held);
        joined.push_str(text);
        let joined = self.secrets.redact(joined);
        let open = self.secrets.open_end(&joined);
        out.push_str(&joined[..open]);
        self.held = joined[open..].to_owned();
    }

    /// The stream ended: appends what was held back to `out`.
    pub fn finish(&mut self, out: &mut String) {
        out.push_str(&std::mem::take(&mut self.held));
    }
}

/// A command's stdout and stderr as text that may be passed on: each decoded (a character cut
/// by a read is held back, invalid bytes become U+FFFD) and redacted on its own.
#[derive(Debug)]
pub(super) struct OutputText {
    decoders: [Utf8Decoder; 2],
    redactors: [RedactedStream; 2],
    decoded: String,
    text: String,
}

impl OutputText {
    pub(super) fn new(secrets: &Secrets) -> Self {
        Self {
            decoders: [Utf8Decoder::default(), Utf8Decoder::default()],
            redactors: [secrets.stream(), secrets.stream()],
            decoded: String::new(),
            text: String::new(),
        }
    }

    /// The text of `stream` that may be passed on after it read `bytes`; `None`: the stream
    /// ended, and what was held back of it goes out.
    pub(super) fn take(&mut self, stream: Stream, bytes: Option<&[u8]>) -> &str {
        let at = stream as usize;
        self.decoded.clear();
        self.text.clear();
        match bytes {
            Some(bytes) => self.decoders[at].decode(bytes, &mut self.decoded),
            None => self.decoders[at].finish(&mut self.decoded),
        }
        self.redactors[at].push(&self.decoded, &mut self.text);
        if bytes.is_none() {
            self.redactors[at].finish(&mut self.text);
        }
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const KEY: &str = "sk-test-key-0123456789";

    /// `pieces` through one stream, each push's output kept apart.
    fn streamed(secrets: &Secrets, pieces: &[&str]) -> Vec<String> {
        let mut stream = secrets.stream();
        let mut out: Vec<String> = pieces
            .iter()
            .map(|piece| {
                let mut out = String::new();
                stream.push(piece, &mut out);
                out
            })
            .collect();
        let mut last = String::new();
        stream.finish(&mut last);
        out.push(last);
        out
    }

    #[test]
    fn short_values_are_not_secrets_and_longer_ones_go_first() {
        let secrets = Secrets::new(["short", "sk-abcdefgh", "sk-abcdefgh-longer", "sk-abcdefgh"]);
        assert_eq!(secrets.values, ["sk-abcdefgh-longer", "sk-abcdefgh"]);
        assert_eq!(
            secrets.redact("a sk-abcdefgh-longer b sk-abcdefgh c short".to_owned()),
            "a [REDACTED] b [REDACTED] c short"
        );
        assert!(Secrets::new(["1234567"]).is_empty());
    }

    /// Generated cases: a text holding the key (and text around it, multi-byte characters too)
    /// cut into three pieces at every pair of places. Whatever the cuts, nothing passed on
    /// holds the key or a piece of it that the next pieces complete, and everything else comes
    /// through unchanged.
    #[test]
    fn a_secret_cut_anywhere_is_redacted_whole() {
        let secrets = Secrets::new([KEY, "another-secret"]);
        for text in [
            format!("before {KEY} after\n"),
            format!("{KEY}{KEY}"),
            format!("é{KEY}ü sk-test-ke sk-"),
            format!("sk-sk-test-{KEY}-another-secre"),
        ] {
            let expected = text.replace(KEY, REDACTED);
            let bounds: Vec<usize> = (0..=text.len())
                .filter(|&at| text.is_char_boundary(at))
                .collect();
            for (i, &first) in bounds.iter().enumerate() {
                for &second in &bounds[i..] {
                    let pieces = [&text[..first], &text[first..second], &text[second..]];
                    let out = streamed(&secrets, &pieces);
                    assert_eq!(out.concat(), expected, "{pieces:?}");
                    for (at, piece) in out.iter().enumerate() {
                        assert!(
                            !piece.contains("sk-test-key"),
                            "{pieces:?}: piece {at} passed on {piece:?}"
                        );
                    }
                }
            }
        }
    }

    /// What is held back is shorter than the longest secret, and text that cannot begin a
    /// secret is passed on at once.
    #[test]
    fn only_a_possible_start_of_a_secret_is_held_back() {
        let secrets = Secrets::new([KEY]);
        assert_eq!(
            streamed(&secrets, &["plain text\n", "more"]),
            ["plain text\n", "more", ""]
        );
        assert_eq!(
            streamed(&secrets, &["value: sk-test-key-012345678", "X"]),
            ["value: ", "sk-test-key-012345678X", ""]
        );
        assert_eq!(
            streamed(&secrets, &["ends with s", "k"]),
            ["ends with ", "", "sk"]
        );
        let mut stream = secrets.stream();
        let mut out = String::new();
        for _ in 0..1000 {
            stream.push("sk-test-key-012345678", &mut out);
            assert!(stream.held.len() < KEY.len());
        }
    }

    /// Each stream is decoded and redacted on its own: a key's halves on stdout and stderr are
    /// no key, and a character or a key cut between two reads of one stream comes out whole.
    #[test]
    fn the_two_streams_are_kept_apart() {
        let mut output = OutputText::new(&Secrets::new([KEY]));
        let mut out = [String::new(), String::new()];
        let key = KEY.as_bytes();
        for (stream, bytes) in [
            (Stream::Stdout, &key[..5]),
            (Stream::Stderr, &key[5..]),
            (Stream::Stdout, &key[5..]),
            (Stream::Stderr, "é".as_bytes().split_at(1).0),
            (Stream::Stdout, b" done"),
        ] {
            out[stream as usize].push_str(output.take(stream, Some(bytes)));
        }
        for stream in [Stream::Stdout, Stream::Stderr] {
            out[stream as usize].push_str(output.take(stream, None));
        }
        assert_eq!(out, ["[REDACTED] done", "st-key-0123456789\u{fffd}"]);
    }

    #[test]
    fn with_no_secret_everything_passes_at_once() {
        let secrets = Secrets::new([]);
        assert_eq!(streamed(&secrets, &["sk-", "x"]), ["sk-", "x", ""]);
    }
}
