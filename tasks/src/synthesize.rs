//! synthesize: the supported claims, grouped by subquestion, and the conflicts → the
//! report's summary points, each citing claim IDs.

use std::collections::BTreeSet;

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::ModelTask;

pub struct Synthesize;

/// Most summary points.
pub const MAX_POINTS: usize = 8;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    /// Model-written claim text (untrusted).
    pub text: String,
}

/// A subquestion and its usable claims.
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
        ]
    }

    /// 1 to [`MAX_POINTS`] points, each with text and claim IDs that were shown.
    fn validate(input: &Input, answer: &Answer) -> Result<(), String> {
        let shown: BTreeSet<&str> = input
            .subquestions
            .iter()
            .flat_map(|s| s.claims.iter().map(|c| c.id.as_str()))
            .collect();
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
            if let Some(unknown) = point
                .claim_ids
                .iter()
                .find(|id| !shown.contains(id.as_str()))
            {
                return Err(format!("summary cites unknown claim ID {unknown:?}"));
            }
        }
        Ok(())
    }
}
