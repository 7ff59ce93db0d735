//! Before spending: the expected range of LLM calls and tokens for a depth and strategy.
//!
//! Counts follow the pipeline's shape (subquestions by depth, claims per subquestion,
//! judge batching or votes, deepen rounds and follow-ups). Tokens per call are the
//! averages measured with the offline model on the bundled corpus (benches/README.md);
//! real models write longer answers, so treat the high end as the planning figure.

use crate::research::{Depth, Reading, Strategy};

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
/// A subquestion's first queries, written by the planner with it.
const PLANNED_QUERIES: u64 = 40;
const EXTRACT: u64 = 1_300;
const EXTRACT_FREE: u64 = 2_700;
/// A model reading documents: the call's budget of unit text
/// ([`crate::extract::documents::DOCUMENT_TOKENS`]), the document and heading lines,
/// the prompt and the answer.
const EXTRACT_DOCUMENTS: u64 = crate::extract::documents::DOCUMENT_TOKENS as u64 + 1_200;
const JUDGE_BATCH: u64 = 900;
const JUDGE_VOTE: u64 = 1_750;
const CONFLICT: u64 = 1_500;
const DEEPEN: u64 = 400;
/// A model's triage call: ten documents' titles, headings and openings, ten verdicts.
const TRIAGE_BATCH: u64 = 2_200;
/// Per section (a top-level subquestion and its follow-ups).
const WRITE_SECTION: u64 = 950;
const SYNTHESIZE: u64 = 1_900;

fn one(
    subquestions: u64,
    extra_rounds: u64,
    claims_per: u64,
    strategy: Strategy,
    reading: Option<Reading>,
) -> (u64, u64) {
    let followups = extra_rounds * crate::deepen::MAX_FOLLOWUPS as u64;
    let total_subqs = subquestions + followups;
    let claims = total_subqs * claims_per;
    let rounds = 1 + extra_rounds;
    let judge_calls = match strategy {
        Strategy::Linear | Strategy::FreeQuote => {
            // A batch holds whole subquestions' claims ([`crate::judge::batches_of`]).
            let batch = crate::judge::BATCH as u64;
            match claims_per {
                0 => 0,
                n if n > batch => total_subqs.saturating_mul(n.div_ceil(batch)),
                n => subquestions.div_ceil(batch / n) + followups.div_ceil(batch / n),
            }
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
    let extract = match (strategy, reading) {
        (Strategy::FreeQuote, _) => EXTRACT_FREE,
        (_, Some(Reading::Documents)) => EXTRACT_DOCUMENTS,
        _ => EXTRACT,
    };
    // A model judges each round's documents' scope: every subquestion reads up to 16,
    // most shared, so about one batch a round for a question and two for a brief.
    let triage_calls = if reading.is_some() { 2 * rounds } else { 0 };
    // One writer per top-level subquestion (follow-ups join their section); the plan
    // writes its subquestions' first queries, so only follow-ups make a query call.
    let calls = 1
        + total_subqs
        + followups
        + judge_calls
        + rounds
        + extra_rounds
        + subquestions
        + 1
        + triage_calls;
    let tokens = DECOMPOSE
        + subquestions * (PLANNED_QUERIES + WRITE_SECTION)
        + total_subqs * extract
        + followups * SUBQUERY
        + judge_tokens
        + rounds * CONFLICT
        + extra_rounds * DEEPEN
        + triage_calls * TRIAGE_BATCH
        + SYNTHESIZE;
    (calls, tokens)
}

/// The range for `depth` and `strategy`; `reading`: how a model extractor reads, `None`
/// for the offline model (its ranked share, and no triage call).
pub fn estimate(depth: Depth, strategy: Strategy, reading: Option<Reading>) -> Estimate {
    let limits = depth.limits();
    let (min, max) = (limits.min_subquestions, limits.max_subquestions);
    // A brief's subquestions may take more claims: the high estimate allows for them.
    let claims = limits
        .claims_per_subquestion
        .max(limits.brief_claims_per_subquestion) as u64;
    let extra = u64::from(limits.extra_rounds);
    let (calls_low, tokens_low) = one(min as u64, 0, claims.div_ceil(2), strategy, reading);
    let (calls_high, tokens_high) = one(max as u64, extra, claims, strategy, reading);
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
            let linear = estimate(depth, Strategy::Linear, None);
            assert!(
                linear.calls_low <= linear.calls_high && linear.tokens_low <= linear.tokens_high
            );
            let documents = estimate(depth, Strategy::Linear, Some(Reading::Documents));
            assert!(documents.tokens_high > linear.tokens_high, "{depth:?}");
            let ranked = estimate(depth, Strategy::Linear, Some(Reading::Ranked));
            assert!(documents.tokens_high > ranked.tokens_high, "{depth:?}");
            assert_eq!(documents.calls_high, ranked.calls_high, "{depth:?}");
            // A model run also triages: more calls than the offline model makes.
            assert!(ranked.calls_high > linear.calls_high, "{depth:?}");
            let votes = estimate(depth, Strategy::PerClaim, None);
            assert!(votes.tokens_high > 3 * linear.tokens_high, "{depth:?}");
        }
        assert!(
            estimate(Depth::Deep, Strategy::Linear, None).tokens_high
                > estimate(Depth::Quick, Strategy::Linear, None).tokens_high
        );
    }
}
