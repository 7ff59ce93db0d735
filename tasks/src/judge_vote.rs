//! judge-vote (the `per-claim` strategy): one verifier's vote on one claim, reading
//! the claim's sources.

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::{is_verdict_word, ModelTask};

pub struct JudgeVote;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Which of the claim's voters this is (1-based): voters differ only by it.
    pub voter: usize,
    /// Model-written claim text (untrusted).
    pub claim: String,
    /// What the voter reads of each cited source (untrusted page text).
    pub sources: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub verdict: String,
}

impl ModelTask for JudgeVote {
    const ID: &'static str = "judge_vote";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.judge_vote
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        let sources = input
            .sources
            .iter()
            .enumerate()
            .map(|(i, s)| format!("source {}: {}", i + 1, quoted(s)))
            .collect::<Vec<_>>()
            .join("\n\n");
        vec![
            ("voter", input.voter.to_string()),
            ("claim", quoted(&input.claim)),
            ("sources", sources),
        ]
    }

    fn validate(_: &Input, answer: &Answer) -> Result<(), String> {
        if is_verdict_word(&answer.verdict) {
            Ok(())
        } else {
            Err(format!(
                "verdict {:?} is not supported|partial|unsupported",
                answer.verdict
            ))
        }
    }
}
