//! conflict: the round's judged claims → groups of claims from different sources that
//! contradict each other.

use std::collections::BTreeSet;

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::ModelTask;

pub struct ConflictDetect;

/// Most conflicts reported per round (strongest first).
pub const MAX_CONFLICTS: usize = 5;

/// One claim as the detector sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    /// The subquestion it answers (`q1`, …).
    pub subquestion: String,
    /// Its judge verdict (`supported`, `partial`, `unjudged`).
    pub verdict: String,
    /// Content hash of its first cited document: two claims of one source do not
    /// disagree with each other here.
    pub source: String,
    /// That document's title (untrusted).
    pub title: String,
    /// Model-written claim text (untrusted).
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub claims: Vec<Claim>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerConflict {
    pub claim_ids: Vec<String>,
    pub summary: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub conflicts: Vec<AnswerConflict>,
}

impl ModelTask for ConflictDetect {
    const ID: &'static str = "conflict";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.conflict
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        let claims = input
            .claims
            .iter()
            .map(|c| {
                format!(
                    "{}: ({}; {}; source: {}) {}",
                    c.id,
                    c.subquestion,
                    c.verdict,
                    quoted(&c.title),
                    quoted(&c.text)
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        vec![("claims", claims)]
    }

    fn validate(input: &Input, answer: &Answer) -> Result<(), String> {
        let shown: BTreeSet<&str> = input.claims.iter().map(|c| c.id.as_str()).collect();
        for conflict in &answer.conflicts {
            if conflict.claim_ids.len() < 2 {
                return Err("a conflict needs at least two claim IDs".into());
            }
            if let Some(unknown) = conflict
                .claim_ids
                .iter()
                .find(|id| !shown.contains(id.as_str()))
            {
                return Err(format!("conflict cites unknown claim ID {unknown:?}"));
            }
        }
        Ok(())
    }
}
