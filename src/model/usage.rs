//! Token usage as the providers report it, in one shape for both wires: [`Usage`], summed
//! over turns and runs, shown as `12.4k in (9.1k cached) · 1.3k out`. Reading it off the wire
//! is each provider's business; budgets are the loop's.

use std::fmt;
use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

/// Tokens of one turn (or of several, summed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens, cached ones included: OpenAI's `prompt_tokens`; Anthropic's
    /// `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens`.
    #[serde(default)]
    pub input: u64,
    /// Output tokens (reasoning included).
    #[serde(default)]
    pub output: u64,
    /// Input tokens read from the provider's prompt cache (part of `input`).
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the provider's prompt cache (part of `input`; Anthropic only).
    #[serde(default)]
    pub cache_write: u64,
}

impl Usage {
    /// Input plus output: what `--max-tokens` counts.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
    }
}

/// `12.4k in (9.1k cached) · 1.3k out`; the cache part only when something was read from it.
impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in", short(self.input))?;
        if self.cache_read > 0 {
            write!(f, " ({} cached)", short(self.cache_read))?;
        }
        write!(f, " · {} out", short(self.output))
    }
}

/// A token count for people: `950`, `12.4k`, `3.1M`.
#[must_use]
pub fn short(tokens: u64) -> String {
    #[expect(
        clippy::cast_precision_loss,
        reason = "one decimal of a token count shown to a person"
    )]
    let value = tokens as f64;
    if tokens < 1_000 {
        tokens.to_string()
    } else if tokens < 1_000_000 {
        format!("{:.1}k", value / 1e3)
    } else {
        format!("{:.1}M", value / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn usage_reads_as_in_the_summary() {
        let usage = Usage {
            input: 12_400,
            output: 1_300,
            cache_read: 9_100,
            cache_write: 0,
        };
        assert_eq!(usage.to_string(), "12.4k in (9.1k cached) · 1.3k out");
        let small = Usage {
            input: 950,
            output: 12,
            ..Usage::default()
        };
        assert_eq!(small.to_string(), "950 in · 12 out");
        assert_eq!(short(2_345_678), "2.3M");
        let mut sum = usage;
        sum += small;
        assert_eq!(sum.total(), 12_400 + 1_300 + 950 + 12);
    }
}
