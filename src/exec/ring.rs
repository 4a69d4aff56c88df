//! A background process's recent output: the last [`RING_BYTES`] of text it printed (both
//! streams, in the order read), however much it prints — memory stays bounded.

/// The output kept per background process.
pub const RING_BYTES: usize = 64 * 1024;

/// The last `limit` bytes of text pushed (cut at a character boundary), and how many bytes
/// were pushed in all.
#[derive(Debug, Default)]
pub(crate) struct Ring {
    text: String,
    limit: usize,
    total: u64,
}

impl Ring {
    pub(crate) fn new(limit: usize) -> Self {
        Ring {
            text: String::new(),
            limit,
            total: 0,
        }
    }

    /// Adds `text`. The buffer is cut back to `limit` once it reaches twice that (so each byte
    /// is moved at most once): it never holds more than `2 × limit` plus one push.
    pub(crate) fn push(&mut self, text: &str) {
        self.total = self
            .total
            .saturating_add(u64::try_from(text.len()).unwrap_or(u64::MAX));
        // A push as large as the limit: only its end can be kept, and nothing before it.
        if text.len() >= self.limit {
            self.text.clear();
        }
        self.text.push_str(tail_of(text, self.limit));
        if self.text.len() >= self.limit.saturating_mul(2) {
            let keep = tail_of(&self.text, self.limit).len();
            self.text.drain(..self.text.len() - keep);
        }
    }

    /// The last `bytes` of what was pushed (at most `limit`), cut at a character boundary.
    pub(crate) fn tail(&self, bytes: usize) -> &str {
        tail_of(&self.text, bytes.min(self.limit))
    }

    /// Bytes pushed in all.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Bytes held now.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.text.len()
    }
}

/// The end of `text`, at most `bytes` long, starting at a character boundary.
fn tail_of(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_end_and_stays_bounded_for_any_pushes() {
        // Generated pushes of every size, ASCII and multi-byte: the tail is always the end of
        // everything pushed, and the memory held never passes twice the limit plus nothing.
        for limit in [1, 7, 64, 1000] {
            for size in [0, 1, 3, 63, 64, 65, 999, 5000] {
                let mut ring = Ring::new(limit);
                let mut all = String::new();
                for round in 0..50 {
                    let piece: String = (0..size)
                        .map(|i| if (i + round) % 5 == 0 { 'é' } else { 'x' })
                        .collect();
                    ring.push(&piece);
                    all.push_str(&piece);
                    assert!(
                        ring.held() < 2 * limit + 4,
                        "{limit} {size}: {}",
                        ring.held()
                    );
                    let tail = ring.tail(usize::MAX);
                    assert!(all.ends_with(tail), "{limit} {size}");
                    assert!(tail.len() <= limit && tail.len() + 4 > limit.min(all.len()));
                    assert_eq!(ring.total(), all.len() as u64);
                }
                let small = ring.tail(5);
                assert!(small.len() <= 5 && all.ends_with(small));
            }
        }
    }
}
