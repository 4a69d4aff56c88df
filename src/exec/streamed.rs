//! Background processes' output on its way to the run's events (`background_output`, in the
//! transcript and `--json`): as each process's reader reads it (secrets already redacted) it
//! is queued here, and the run takes the queue before each event it emits, so the output
//! appears among the run's events in the order it came. Bounded: each process passes on its
//! first [`STREAMED_BYTES`] bytes, its last piece then marked `capped` (the rest is still in its
//! ring, for the `processes` tool); so the queue never holds more than that per process,
//! however long nobody takes it.

use std::sync::{Mutex, PoisonError};

use super::cap::Stream;

/// Bytes of a background process's output passed on to the run's events.
pub const STREAMED_BYTES: usize = 64 * 1024;

/// A piece of a background process's output for the run's events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streamed {
    /// The process's id (`bg1`, …).
    pub id: String,
    /// stdout or stderr.
    pub stream: Stream,
    /// The text (secrets redacted).
    pub text: String,
    /// The process's output reached [`STREAMED_BYTES`] here: no more of it follows.
    pub capped: bool,
}

/// What was read and not taken yet, adjacent pieces of one process's stream joined.
static QUEUE: Mutex<Vec<Streamed>> = Mutex::new(Vec::new());

fn queue() -> std::sync::MutexGuard<'static, Vec<Streamed>> {
    QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes what the background processes printed since the last call.
#[must_use]
pub fn take() -> Vec<Streamed> {
    std::mem::take(&mut *queue())
}

/// One process's side: counts what it passed on.
#[derive(Debug)]
pub(super) struct Streamer {
    id: String,
    passed: usize,
    limit: usize,
}

impl Streamer {
    pub(super) fn new(id: &str) -> Self {
        Self::with_limit(id, STREAMED_BYTES)
    }

    fn with_limit(id: &str, limit: usize) -> Self {
        Self {
            id: id.to_owned(),
            passed: 0,
            limit,
        }
    }

    /// Queues `text` of `stream`, as much as is left of the process's bytes (cut at a
    /// character's boundary).
    pub(super) fn push(&mut self, stream: Stream, text: &str) {
        if text.is_empty() || self.passed >= self.limit {
            return;
        }
        let left = self.limit - self.passed;
        let capped = text.len() >= left;
        let mut end = text.len().min(left);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let piece = &text[..end];
        // Nothing more of it is passed on once capped, even where the cut left bytes over.
        self.passed = if capped {
            self.limit
        } else {
            self.passed + end
        };
        let mut queue = queue();
        match queue.last_mut() {
            Some(last) if last.id == self.id && last.stream == stream && !last.capped => {
                last.text.push_str(piece);
                last.capped = capped;
            }
            _ => queue.push(Streamed {
                id: self.id.clone(),
                stream,
                text: piece.to_owned(),
                capped,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated over limits × sequences of pieces (ASCII and multi-byte, two streams): what
    /// is queued is exactly the first bytes of the process's output up to the limit (never a
    /// character cut in two), joined per stream while adjacent, the last piece marked `capped`
    /// once the limit was reached, and nothing after it.
    #[test]
    fn a_process_passes_on_its_first_bytes_and_then_says_it_is_capped() {
        let pieces = ["ab", "é", "", "line\n", "ß€", "x"];
        for limit in [1, 2, 3, 5, 8, 64] {
            for bits in 0u32..1 << 6 {
                let id = format!("bg_{limit}_{bits}");
                let mut streamer = Streamer::with_limit(&id, limit);
                let mut all = String::new();
                for (n, piece) in pieces.iter().enumerate() {
                    let stream = if bits >> n & 1 == 1 {
                        Stream::Stderr
                    } else {
                        Stream::Stdout
                    };
                    streamer.push(stream, piece);
                    all.push_str(piece);
                }
                let ours: Vec<Streamed> = take().into_iter().filter(|s| s.id == id).collect();
                let passed: String = ours.iter().map(|s| s.text.as_str()).collect();
                assert!(all.starts_with(&passed), "{limit} {bits:b}: {ours:?}");
                assert!(passed.len() <= limit, "{limit} {bits:b}: {ours:?}");
                let capped = all.len() >= limit;
                assert_eq!(
                    ours.last().is_some_and(|s| s.capped),
                    capped,
                    "{limit} {bits:b}: {ours:?}"
                );
                assert!(
                    ours.iter().rev().skip(1).all(|s| !s.capped),
                    "{limit} {bits:b}: {ours:?}"
                );
                if !capped {
                    assert_eq!(passed, all, "{limit} {bits:b}");
                }
                for pair in ours.windows(2) {
                    assert_ne!(pair[0].stream, pair[1].stream, "{limit} {bits:b}: {ours:?}");
                }
            }
        }
    }
}
