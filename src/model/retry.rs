//! When and how patiently the HTTP providers try one turn again: the statuses worth another
//! try, and the backoff between tries ([`RetryPolicy`]).

use std::time::Duration;

/// Statuses worth trying again: timeouts, conflicts, rate limits and server trouble — not
/// 501, which says the server will never do it.
#[must_use]
pub fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (status >= 500 && status != 501)
}

/// How often and how patiently the HTTP providers try one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in total, the first one included.
    pub tries: u32,
    /// Wait after the first failure; doubled after each further one.
    pub base_delay: Duration,
    /// Upper bound of any wait, `Retry-After` included.
    pub max_delay: Duration,
}

/// Tries per turn — DESIGN.md: "retries with backoff on 429/5xx and dropped streams (3 tries)".
const TRIES: u32 = 3;
/// First backoff — long enough for a blip to pass, short enough not to feel stuck.
const RETRY_BASE_DELAY: Duration = Duration::from_millis(500);
/// Cap on any wait, `Retry-After` included — a person is watching; longer is better reported.
const RETRY_MAX_DELAY: Duration = Duration::from_secs(30);

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            tries: TRIES,
            base_delay: RETRY_BASE_DELAY,
            max_delay: RETRY_MAX_DELAY,
        }
    }
}

impl RetryPolicy {
    /// The wait after failed try number `failed` (1-based), honouring `retry_after`.
    #[must_use]
    pub fn delay(&self, failed: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self
            .base_delay
            .saturating_mul(1 << failed.saturating_sub(1).min(16));
        retry_after.unwrap_or(backoff).min(self.max_delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn backoff_doubles_and_honours_retry_after_up_to_the_cap() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(1, None), Duration::from_millis(500));
        assert_eq!(policy.delay(2, None), Duration::from_secs(1));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(300))),
            Duration::from_secs(30)
        );
        assert_eq!(policy.delay(u32::MAX, None), Duration::from_secs(30));
    }
}
