//! Before spending: the expected range of LLM calls and tokens for a depth and strategy.
//!
//! Counts follow the pipeline's shape (subquestions by depth, claims per subquestion,
//! judge batching or votes, deepen rounds and follow-ups). Tokens per call are the
//! averages measured with the offline model on the bundled corpus (benches/README.md);
//! real models write longer answers, so treat the high end as the planning figure.

use crate::research::{Depth, Strategy};

/// Expected range for one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub calls_low: u64,
    pub calls_high: u64,
    pub tokens_low: u64,
    pub tokens_high: u64,
}

/// Measured average tokens (prompt + completion) per call, by task.
const DECOMPOSE: u64 = 500;
const SUBQUERY: u64 = 150;
const EXTRACT: u64 = 1_300;
const EXTRACT_FREE: u64 = 2_700;
const JUDGE_BATCH: u64 = 900;
const JUDGE_VOTE: u64 = 1_750;
const CONFLICT: u64 = 1_500;
const DEEPEN: u64 = 400;
/// Per section (a top-level subquestion and its follow-ups).
const WRITE_SECTION: u64 = 950;
const SYNTHESIZE: u64 = 1_900;

fn one(subquestions: u64, extra_rounds: u64, claims_per: u64, strategy: Strategy) -> (u64, u64) {
    let followups = extra_rounds * crate::deepen::MAX_FOLLOWUPS as u64;
    let total_subqs = subquestions + followups;
    let claims = total_subqs * claims_per;
    let rounds = 1 + extra_rounds;
    let judge_calls = match strategy {
        Strategy::Linear | Strategy::FreeQuote => {
            subquestions.saturating_mul(claims_per).div_ceil(8)
                + followups.saturating_mul(claims_per).div_ceil(8)
        }
        Strategy::PerClaim => 3 * claims,
        Strategy::NoJudge => 0,
    };
    let judge_tokens = judge_calls
        * if strategy == Strategy::PerClaim {
            JUDGE_VOTE
        } else {
            JUDGE_BATCH
        };
    let extract = if strategy == Strategy::FreeQuote {
        EXTRACT_FREE
    } else {
        EXTRACT
    };
    // One writer per top-level subquestion (follow-ups join their section).
    let calls = 1 + 2 * total_subqs + judge_calls + rounds + extra_rounds + subquestions + 1;
    let tokens = DECOMPOSE
        + subquestions * WRITE_SECTION
        + total_subqs * (SUBQUERY + extract)
        + judge_tokens
        + rounds * CONFLICT
        + extra_rounds * DEEPEN
        + SYNTHESIZE;
    (calls, tokens)
}

pub fn estimate(depth: Depth, strategy: Strategy) -> Estimate {
    let plan = depth.plan();
    let (min, max) = (plan.min_subquestions, plan.max_subquestions);
    // A brief's subquestions may take more claims: the high estimate allows for them.
    let claims = plan
        .claims_per_subquestion
        .max(plan.brief_claims_per_subquestion) as u64;
    let extra = u64::from(plan.extra_rounds);
    let (calls_low, tokens_low) = one(min as u64, 0, claims.div_ceil(2), strategy);
    let (calls_high, tokens_high) = one(max as u64, extra, claims, strategy);
    Estimate {
        calls_low,
        calls_high,
        tokens_low,
        tokens_high,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_ordered_and_strategies_differ() {
        for depth in [Depth::Quick, Depth::Standard, Depth::Deep] {
            let linear = estimate(depth, Strategy::Linear);
            assert!(
                linear.calls_low <= linear.calls_high && linear.tokens_low <= linear.tokens_high
            );
            let votes = estimate(depth, Strategy::PerClaim);
            assert!(votes.tokens_high > 3 * linear.tokens_high, "{depth:?}");
        }
        assert!(
            estimate(Depth::Deep, Strategy::Linear).tokens_high
                > estimate(Depth::Quick, Strategy::Linear).tokens_high
        );
    }
}
