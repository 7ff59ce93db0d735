//! Verifier vote: the share of the claim's content words found in its sources.

use deepr_tasks::judge_vote::{Answer, Input, JudgeVote};

use crate::text::overlap_verdict;
use crate::Heuristic;

impl Heuristic for JudgeVote {
    const VERSION: u32 = 1;

    fn answer(input: &Input) -> Answer {
        Answer {
            verdict: overlap_verdict(&input.claim, &input.sources.join(" ")).to_string(),
        }
    }
}
