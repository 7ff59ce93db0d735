//! Budgets: token, dollar and time limits for one run.
//!
//! The meter is charged as each live model call returns; [`BudgetedLlm`] refuses to
//! *start* a call once a limit is reached, so a budget is never exceeded by more than
//! the calls already in flight. A refused call ([`LlmError::Budget`]) is recorded in the
//! ledger as [`crate::Unfinished::Budget`]; the executor discards the output of any node
//! that saw one (it would rest on a fallback answer) and stops starting nodes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

use crate::clock::Clock;
use crate::provider::{LlmError, LlmProvider, LlmRequest, LlmResponse};

/// Limits for one run. Tokens and dollars count the whole run (earlier sessions of a
/// resumed run included); time counts this session.
#[derive(Debug, Default)]
pub struct Budget {
    max_tokens: Option<u64>,
    max_cost_usd: Option<f64>,
    deadline: Option<Deadline>,
    tokens: AtomicU64,
    micro_usd: AtomicU64,
    reason: Mutex<Option<String>>,
}

/// The time limit: when `clock` reads `at`, the `limit` is spent.
#[derive(Debug)]
struct Deadline {
    clock: Arc<dyn Clock>,
    at: Duration,
    limit: Duration,
}

impl Budget {
    /// No limits.
    pub fn unlimited() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Limits, starting from what earlier sessions of the run already spent; the time
    /// limit counts from now on `clock`.
    pub fn new(
        max_tokens: Option<u64>,
        max_cost_usd: Option<f64>,
        max_time: Option<Duration>,
        spent_tokens: u64,
        spent_usd: f64,
        clock: Arc<dyn Clock>,
    ) -> Arc<Self> {
        let budget = Self {
            max_tokens,
            max_cost_usd,
            deadline: max_time.map(|limit| Deadline {
                at: clock.now() + limit,
                clock,
                limit,
            }),
            ..Self::default()
        };
        budget.charge(spent_tokens, spent_usd);
        Arc::new(budget)
    }

    /// Record a live call's spending.
    pub fn charge(&self, tokens: u64, cost_usd: f64) {
        self.tokens.fetch_add(tokens, Ordering::SeqCst);
        let micro = (cost_usd.max(0.0) * 1e6).round() as u64;
        self.micro_usd.fetch_add(micro, Ordering::SeqCst);
    }

    pub fn spent_tokens(&self) -> u64 {
        self.tokens.load(Ordering::SeqCst)
    }

    pub fn spent_usd(&self) -> f64 {
        self.micro_usd.load(Ordering::SeqCst) as f64 / 1e6
    }

    /// `Err(reason)` once any limit is reached; the first reason sticks.
    pub fn check(&self) -> Result<(), String> {
        if let Ok(reason) = self.reason.lock() {
            if let Some(reason) = reason.as_ref() {
                return Err(reason.clone());
            }
        }
        let reason = if let Some(max) = self.max_tokens.filter(|max| self.spent_tokens() >= *max) {
            Some(format!(
                "token budget reached: {} of {max} tokens spent",
                self.spent_tokens()
            ))
        } else if let Some(max) = self.max_cost_usd.filter(|max| self.spent_usd() >= *max) {
            Some(format!(
                "cost budget reached: ${:.4} of ${max:.4} spent",
                self.spent_usd()
            ))
        } else {
            self.deadline
                .as_ref()
                .filter(|d| d.clock.now() >= d.at)
                .map(|d| format!("time budget reached: {} s", d.limit.as_secs()))
        };
        match reason {
            None => Ok(()),
            Some(reason) => {
                if let Ok(mut slot) = self.reason.lock() {
                    slot.get_or_insert(reason.clone());
                }
                Err(reason)
            }
        }
    }

    /// The reason the budget stopped the run, if it did.
    pub fn exhausted(&self) -> Option<String> {
        self.reason.lock().ok().and_then(|r| r.clone())
    }
}

/// An LLM provider that refuses to start calls once the budget is spent and charges
/// the budget for every live call.
pub struct BudgetedLlm {
    pub inner: Arc<dyn LlmProvider>,
    pub budget: Arc<Budget>,
}

#[async_trait]
impl LlmProvider for BudgetedLlm {
    fn model_id(&self) -> String {
        self.inner.model_id()
    }

    fn model_id_for(&self, prompt_id: &str) -> String {
        self.inner.model_id_for(prompt_id)
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        self.budget.check().map_err(LlmError::Budget)?;
        let response = self.inner.complete(request).await?;
        if !response.cache_hit {
            self.budget.charge(
                response.prompt_tokens + response.completion_tokens,
                response.cost_usd,
            );
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_trip_and_stay_tripped() {
        let clock = Arc::new(crate::clock::VirtualClock::new());
        let budget = Budget::new(Some(100), None, None, 60, 0.0, clock.clone());
        assert!(budget.check().is_ok());
        budget.charge(40, 0.0);
        let reason = budget.check().expect_err("tripped");
        assert!(
            reason.contains("100 of 100") || reason.contains("of 100"),
            "{reason}"
        );
        assert_eq!(budget.exhausted(), Some(reason));
        let dollars = Budget::new(None, Some(0.5), None, 0, 0.5, clock.clone());
        assert!(dollars.check().is_err());
        let time = Budget::new(
            None,
            None,
            Some(Duration::from_secs(60)),
            0,
            0.0,
            clock.clone(),
        );
        assert!(time.check().is_ok(), "59 s to go");
        clock.advance(Duration::from_secs(59));
        assert!(time.check().is_ok(), "1 s to go");
        clock.advance(Duration::from_secs(1));
        let reason = time.check().expect_err("deadline");
        assert!(reason.contains("time budget reached: 60 s"), "{reason}");
        assert!(Budget::unlimited().check().is_ok());
    }
}
