//! Budgets of one invocation: `--max-tokens` (input + output the server reported) and
//! `--max-time` (wall time since the loop began). They are checked before each model turn and
//! between tool calls; `--max-time` also bounds a model request and a running command, which
//! ends like a timeout. Counting is the caller's [`Stats`]; this file only compares.

use std::future::Future;
use std::time::{Duration, Instant};

use super::Stats;
use crate::exec;
use crate::model::short_tokens;

/// Limits for one invocation (a continued run counts only its own part).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// Input plus output tokens.
    pub max_tokens: Option<u64>,
    /// Wall time.
    pub max_time: Option<Duration>,
}

impl Budget {
    /// Starts the clock.
    #[must_use]
    pub(super) fn start(self) -> Clock {
        Clock {
            budget: self,
            deadline: self
                .max_time
                .and_then(|limit| Instant::now().checked_add(limit)),
        }
    }
}

/// A budget with its clock running.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    budget: Budget,
    deadline: Option<Instant>,
}

impl Clock {
    /// The note to end the run with when a budget is spent, `None` while both last.
    pub fn spent(&self, stats: &Stats) -> Option<String> {
        if let (Some(limit), Some(usage)) = (self.budget.max_tokens, stats.usage)
            && usage.total() >= limit
        {
            return Some(format!(
                "stopped: {} tokens used of --max-tokens {limit} ({usage}); continue with \
                 `agent run --continue '…'` and a new budget",
                short_tokens(usage.total()),
            ));
        }
        if self.time_left() == Some(Duration::ZERO) {
            return Some(self.time_note());
        }
        None
    }

    /// The note for a spent `--max-time`.
    pub fn time_note(&self) -> String {
        let limit = self.budget.max_time.unwrap_or_default();
        format!(
            "stopped: --max-time {} passed; continue with `agent run --continue '…'` and a new \
             budget",
            exec::describe_duration(limit)
        )
    }

    /// What is left of `--max-time` (`None`: no limit).
    pub fn time_left(&self) -> Option<Duration> {
        self.deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// Runs `future` until it ends or `--max-time` passes (`None` then).
    pub async fn within<T>(&self, future: impl Future<Output = T>) -> Option<T> {
        match self.deadline {
            Some(deadline) => {
                tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), future)
                    .await
                    .ok()
            }
            None => Some(future.await),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Usage;

    #[test]
    fn tokens_count_input_and_output_and_time_runs_out() {
        let clock = Budget {
            max_tokens: Some(100),
            max_time: None,
        }
        .start();
        let mut stats = Stats::default();
        assert_eq!(clock.spent(&stats), None);
        stats.usage = Some(Usage {
            input: 60,
            output: 39,
            ..Usage::default()
        });
        assert_eq!(clock.spent(&stats), None);
        stats.usage = Some(Usage {
            input: 60,
            output: 40,
            ..Usage::default()
        });
        let note = clock.spent(&stats).unwrap();
        assert!(
            note.starts_with("stopped: 100 tokens used of --max-tokens 100"),
            "{note}"
        );
        let clock = Budget {
            max_tokens: None,
            max_time: Some(Duration::ZERO),
        }
        .start();
        assert!(
            clock
                .spent(&Stats::default())
                .unwrap()
                .contains("--max-time")
        );
    }
}
