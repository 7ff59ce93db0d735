//! Judge: each claim's verdict from the share of its content words (and all of its
//! numbers) found in its quotes.

use deepr_tasks::judge::{Answer, AnswerVerdict, Input, Judge};

use crate::text::overlap_verdict;
use crate::Heuristic;

impl Heuristic for Judge {
    /// 2: numbers compare canonically ("1,000" = "1000").
    const VERSION: u32 = 2;

    fn answer(input: &Input) -> Answer {
        Answer {
            verdicts: input
                .claims
                .iter()
                .map(|claim| AnswerVerdict {
                    claim_id: claim.id.clone(),
                    verdict: overlap_verdict(&claim.text, &claim.quotes.join(" ")).to_string(),
                })
                .collect(),
        }
    }
}
