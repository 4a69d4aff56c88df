//! Bounded capture of a command's output: incremental UTF-8 decoding and the
//! `max_output_chars` cap shared by stdout and stderr.
//!
//! The cap keeps the first half of the budget (the head, across both streams in
//! arrival order) and the last half (the tail of each stream), and counts what
//! was dropped so the result can say `[… N characters omitted …]`. Memory is
//! bounded by the budget, however much a command prints. This module does no I/O.

use std::fmt::Write as _;

/// Decodes a byte stream into text chunk by chunk, never splitting a character
/// across chunks and replacing invalid bytes with U+FFFD.
#[derive(Debug, Default)]
pub(crate) struct Utf8Decoder {
    /// At most three bytes of an incomplete character from the previous chunk.
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes `bytes`, appending text to `out`. An incomplete character at the
    /// end is held back until the next call (or `finish`).
    pub(crate) fn decode(&mut self, bytes: &[u8], out: &mut String) {
        let owned;
        let mut input: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            self.pending.extend_from_slice(bytes);
            owned = std::mem::take(&mut self.pending);
            &owned
        };
        loop {
            match std::str::from_utf8(input) {
                Ok(text) => {
                    out.push_str(text);
                    return;
                }
                Err(error) => {
                    let (valid, rest) = input.split_at(error.valid_up_to());
                    // Safe: `valid_up_to` marks the end of a valid prefix.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            input = &rest[len..];
                        }
                        None => {
                            self.pending = rest.to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Flushes an incomplete trailing character as U+FFFD.
    pub(crate) fn finish(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            self.pending.clear();
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
}

/// The most recent characters of one stream, bounded to `limit` characters.
#[derive(Debug)]
struct Tail {
    text: String,
    chars: usize,
    limit: usize,
}

impl Tail {
    fn new(limit: usize) -> Self {
        Self {
            text: String::new(),
            chars: 0,
            limit,
        }
    }

    fn push(&mut self, text: &str, chars: usize) {
        if self.limit == 0 {
            return;
        }
        self.text.push_str(text);
        self.chars += chars;
        // Trim only when twice over the limit so trimming stays amortised O(1).
        if self.chars > self.limit.saturating_mul(2) {
            self.keep_last(self.limit);
        }
    }

    fn keep_last(&mut self, keep: usize) {
        if self.chars <= keep {
            return;
        }
        let drop = self.chars - keep;
        let at = self
            .text
            .char_indices()
            .nth(drop)
            .map_or(self.text.len(), |(i, _)| i);
        self.text.drain(..at);
        self.chars = keep;
    }
}

/// One stream's capture: its share of the head, its tail, and how much it printed.
#[derive(Debug)]
struct Capture {
    head: String,
    head_chars: usize,
    tail: Tail,
    seen: usize,
}

/// Which output stream a piece of text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// The `max_output_chars` cap over stdout and stderr together.
#[derive(Debug)]
pub(crate) struct OutputCap {
    limit: usize,
    head_left: usize,
    tail_limit: usize,
    stdout: Capture,
    stderr: Capture,
}

/// What the cap kept.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Captured {
    pub stdout: String,
    pub stderr: String,
    pub truncated: bool,
}

impl OutputCap {
    /// A cap of `limit` characters across both streams.
    pub(crate) fn new(limit: usize) -> Self {
        let head = limit / 2;
        let tail_limit = limit - head;
        let capture = || Capture {
            head: String::new(),
            head_chars: 0,
            tail: Tail::new(tail_limit),
            seen: 0,
        };
        Self {
            limit,
            head_left: head,
            tail_limit,
            stdout: capture(),
            stderr: capture(),
        }
    }

    /// Adds decoded text from one stream.
    pub(crate) fn push(&mut self, stream: Stream, text: &str) {
        if text.is_empty() {
            return;
        }
        let capture = match stream {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
        };
        let chars = text.chars().count();
        capture.seen += chars;
        if self.head_left >= chars {
            capture.head.push_str(text);
            capture.head_chars += chars;
            self.head_left -= chars;
            return;
        }
        let split = text
            .char_indices()
            .nth(self.head_left)
            .map_or(text.len(), |(i, _)| i);
        let (head, rest) = text.split_at(split);
        capture.head.push_str(head);
        capture.head_chars += self.head_left;
        let rest_chars = chars - self.head_left;
        self.head_left = 0;
        capture.tail.push(rest, rest_chars);
    }

    /// Total characters seen so far on both streams.
    pub(crate) fn seen(&self) -> usize {
        self.stdout.seen + self.stderr.seen
    }

    /// Assembles the kept text, marking where characters were omitted.
    pub(crate) fn finish(mut self) -> Captured {
        let truncated = self.seen() > self.limit;
        let (out_keep, err_keep) = if truncated {
            let half = self.tail_limit / 2;
            let out_len = self.stdout.tail.chars.min(self.tail_limit);
            let err_len = self.stderr.tail.chars.min(self.tail_limit);
            // Each stream gets half of the tail budget; what one leaves unused goes to the other.
            let out_keep = out_len.min(half.max(self.tail_limit - err_len));
            let err_keep = err_len.min(self.tail_limit - out_keep);
            (out_keep, err_keep)
        } else {
            (self.stdout.tail.chars, self.stderr.tail.chars)
        };
        self.stdout.tail.keep_last(out_keep);
        self.stderr.tail.keep_last(err_keep);
        Captured {
            stdout: assemble(self.stdout),
            stderr: assemble(self.stderr),
            truncated,
        }
    }
}

fn assemble(capture: Capture) -> String {
    let omitted = capture.seen - capture.head_chars - capture.tail.chars;
    let mut text = capture.head;
    if omitted > 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        let _ = writeln!(text, "[… {omitted} characters omitted …]");
    }
    text.push_str(&capture.tail.text);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn decode_chunks(chunks: &[&[u8]]) -> String {
        let mut decoder = Utf8Decoder::default();
        let mut out = String::new();
        for chunk in chunks {
            decoder.decode(chunk, &mut out);
        }
        decoder.finish(&mut out);
        out
    }

    #[test]
    fn decoder_joins_characters_split_across_chunks() {
        let bytes = "héllo ✓ 🦀".as_bytes();
        for split in 0..bytes.len() {
            let (a, b) = bytes.split_at(split);
            assert_eq!(decode_chunks(&[a, b]), "héllo ✓ 🦀", "split at {split}");
        }
        let single: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_chunks(&single), "héllo ✓ 🦀");
    }

    #[test]
    fn decoder_replaces_invalid_bytes() {
        assert_eq!(decode_chunks(&[b"a\xffb"]), "a\u{fffd}b");
        assert_eq!(decode_chunks(&[b"a\xc3"]), "a\u{fffd}");
        assert_eq!(decode_chunks(&[b"\xe2\x9c", b"x"]), "\u{fffd}x");
        assert_eq!(
            decode_chunks(&[b"\xed\xa0\x80"]),
            "\u{fffd}\u{fffd}\u{fffd}"
        );
    }

    #[test]
    fn under_the_cap_everything_is_kept() {
        let mut cap = OutputCap::new(10);
        cap.push(Stream::Stdout, "abc");
        cap.push(Stream::Stderr, "de");
        cap.push(Stream::Stdout, "fgh");
        cap.push(Stream::Stderr, "ij");
        let got = cap.finish();
        assert_eq!(
            got,
            Captured {
                stdout: "abcfgh".into(),
                stderr: "deij".into(),
                truncated: false
            }
        );
    }

    #[test]
    fn over_the_cap_keeps_head_and_tail_with_marker() {
        let mut cap = OutputCap::new(10);
        for _ in 0..100 {
            cap.push(Stream::Stdout, "0123456789");
        }
        let got = cap.finish();
        assert!(got.truncated);
        assert_eq!(got.stdout, "01234\n[… 990 characters omitted …]\n56789");
        assert_eq!(got.stderr, "");
    }

    #[test]
    fn cap_counts_characters_not_bytes() {
        let mut cap = OutputCap::new(4);
        cap.push(Stream::Stdout, "ééééé");
        let got = cap.finish();
        assert_eq!(got.stdout, "éé\n[… 1 characters omitted …]\néé");
    }

    #[test]
    fn both_streams_share_the_budget() {
        let mut cap = OutputCap::new(8);
        cap.push(Stream::Stdout, "aaaaaaaaaa");
        cap.push(Stream::Stderr, "bbbbbbbbbb");
        let got = cap.finish();
        assert_eq!(got.stdout, "aaaa\n[… 4 characters omitted …]\naa");
        assert_eq!(got.stderr, "[… 8 characters omitted …]\nbb");
    }

    #[test]
    fn unused_tail_share_goes_to_the_other_stream() {
        let mut cap = OutputCap::new(8);
        cap.push(Stream::Stdout, "aaaaaaaaaaaa");
        cap.push(Stream::Stderr, "b");
        let got = cap.finish();
        assert_eq!(got.stdout, "aaaa\n[… 5 characters omitted …]\naaa");
        assert_eq!(got.stderr, "b");
    }

    #[test]
    fn zero_cap_keeps_nothing_but_counts() {
        let mut cap = OutputCap::new(0);
        cap.push(Stream::Stdout, "abc");
        let got = cap.finish();
        assert_eq!(got.stdout, "[… 3 characters omitted …]\n");
        assert!(got.truncated);
    }

    #[test]
    fn tail_memory_stays_bounded() {
        let mut cap = OutputCap::new(100);
        let chunk = "x".repeat(1000);
        for _ in 0..10_000 {
            cap.push(Stream::Stdout, &chunk);
        }
        assert!(
            cap.stdout.tail.text.len() <= 1100,
            "{}",
            cap.stdout.tail.text.len()
        );
        let got = cap.finish();
        assert_eq!(got.stdout.matches('x').count(), 100);
    }
}
