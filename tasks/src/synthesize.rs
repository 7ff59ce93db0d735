//! synthesize: the claims the article's sections rest on, grouped by section, and the
//! conflicts → the answer-first summary: sentences, each citing claim IDs, grounded in
//! those claims' quotes by the same rules as a section's sentences
//! ([`crate::write_section::ground`]).

use deepr_evidence::report::Verdict;
use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use deepr_evidence::prose::CitedClaim;

use crate::{write_section, ModelTask};

pub struct Synthesize;

/// Most summary points.
pub const MAX_POINTS: usize = 8;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    /// Model-written claim text (untrusted).
    pub text: String,
    pub verdict: Verdict,
    /// The verbatim quotes the claim rests on.
    pub quotes: Vec<String>,
}

/// A section (its first subquestion's id and its heading) and the claims its text
/// rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub id: String,
    pub text: String,
    pub claims: Vec<Claim>,
}

/// A disagreement found by the conflict step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conflict {
    pub subquestion: String,
    pub summary: String,
    pub claims: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub topic: String,
    pub subquestions: Vec<Group>,
    pub conflicts: Vec<Conflict>,
    /// The brief's writing instructions (untrusted; they never relax the rules).
    #[serde(default)]
    pub instructions: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerPoint {
    pub text: String,
    pub claim_ids: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub summary: Vec<AnswerPoint>,
}

impl ModelTask for Synthesize {
    const ID: &'static str = "synthesize";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.synthesize
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        let claims = input
            .subquestions
            .iter()
            .map(|s| {
                let lines = s
                    .claims
                    .iter()
                    .map(|c| format!("  {}: {}", c.id, quoted(&c.text)))
                    .collect::<Vec<_>>()
                    .join("\n");
                format!("{}: {}\n{lines}", s.id, quoted(&s.text))
            })
            .collect::<Vec<_>>()
            .join("\n");
        let conflicts = if input.conflicts.is_empty() {
            "(none)".to_string()
        } else {
            input
                .conflicts
                .iter()
                .map(|c| format!("- {} [{}]", quoted(&c.summary), c.claims.join(", ")))
                .collect::<Vec<_>>()
                .join("\n")
        };
        vec![
            ("topic", input.topic.clone()),
            ("claims", claims),
            ("conflicts", conflicts),
            (
                "instructions",
                crate::brief::instructions_block(&input.instructions),
            ),
        ]
    }

    /// 1 to [`MAX_POINTS`] sentences, each with text and claim IDs, and at least one
    /// that stands on the quotes of the claims it cites (the others are dropped).
    fn validate(input: &Input, answer: &Answer) -> Result<(), String> {
        if answer.summary.is_empty() || answer.summary.len() > MAX_POINTS {
            return Err(format!(
                "expected 1 to {MAX_POINTS} summary points, got {}",
                answer.summary.len()
            ));
        }
        for point in &answer.summary {
            if point.text.trim().is_empty() || point.claim_ids.is_empty() {
                return Err("every summary point needs text and at least one claim ID".into());
            }
        }
        ground(input, answer).some_stand("summary sentence")
    }
}

/// The summary's sentences that stand on their quotes (one paragraph), and the rest.
pub fn ground(input: &Input, answer: &Answer) -> write_section::Grounded {
    let shown = input
        .subquestions
        .iter()
        .flat_map(|s| &s.claims)
        .map(|c| {
            (
                c.id.clone(),
                CitedClaim {
                    verdict: c.verdict,
                    quotes: c.quotes.clone(),
                    sources: Vec::new(),
                },
            )
        })
        .collect();
    let paragraph = write_section::AnswerParagraph {
        sentences: answer
            .summary
            .iter()
            .map(|p| write_section::AnswerSentence {
                text: p.text.clone(),
                claim_ids: p.claim_ids.clone(),
            })
            .collect(),
    };
    write_section::ground(&shown, &[paragraph])
}
