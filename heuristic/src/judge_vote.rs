//! Verifier vote: the share of the claim's content words found in its sources.

use deepr_tasks::judge_vote::{Answer, Input, JudgeVote};

use crate::text::overlap_verdict;
use crate::Heuristic;

impl Heuristic for JudgeVote {
    /// 2: numbers compare canonically ("1,000" = "1000").
    const VERSION: u32 = 2;

    fn answer(input: &Input) -> Answer {
        Answer {
            verdict: overlap_verdict(&input.claim, &input.sources.join(" ")).to_string(),
        }
    }
}
