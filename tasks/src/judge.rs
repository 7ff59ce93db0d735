//! judge: a batch of claims with their quotes → one verdict per claim.

use std::collections::BTreeSet;

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::{is_verdict_word, one_line, ModelTask};

pub struct Judge;

/// One claim to judge, with the quotes it cites.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    /// Model-written claim text (untrusted).
    pub text: String,
    /// The cited sentences, verbatim from the archive (untrusted page text).
    pub quotes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub claims: Vec<Claim>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerVerdict {
    pub claim_id: String,
    pub verdict: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub verdicts: Vec<AnswerVerdict>,
}

impl ModelTask for Judge {
    const ID: &'static str = "judge";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.judge
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        let claims = input
            .claims
            .iter()
            .map(|c| {
                let quotes = c
                    .quotes
                    .iter()
                    .map(|q| format!("  quote: {}", quoted(&one_line(q))))
                    .collect::<Vec<_>>()
                    .join("\n");
                format!("claim {}: {}\n{quotes}", c.id, quoted(&c.text))
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        vec![("claims", claims)]
    }

    /// Exactly one verdict per claim shown, each supported|partial|unsupported.
    fn validate(input: &Input, answer: &Answer) -> Result<(), String> {
        let shown: BTreeSet<&str> = input.claims.iter().map(|c| c.id.as_str()).collect();
        let mut seen = BTreeSet::new();
        for v in &answer.verdicts {
            if !shown.contains(v.claim_id.as_str()) {
                return Err(format!("verdict for unknown claim ID {:?}", v.claim_id));
            }
            if !is_verdict_word(&v.verdict) {
                return Err(format!(
                    "verdict {:?} is not supported|partial|unsupported",
                    v.verdict
                ));
            }
            seen.insert(v.claim_id.as_str());
        }
        if seen.len() != shown.len() {
            return Err(format!(
                "expected one verdict for each of {} claims, got {}",
                shown.len(),
                seen.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(pairs: &[(&str, &str)]) -> Answer {
        Answer {
            verdicts: pairs
                .iter()
                .map(|(id, v)| AnswerVerdict {
                    claim_id: id.to_string(),
                    verdict: v.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn one_verdict_per_claim_shown() {
        let input = Input {
            claims: ["a", "b"]
                .iter()
                .map(|id| Claim {
                    id: id.to_string(),
                    text: "t".into(),
                    quotes: vec![],
                })
                .collect(),
        };
        assert!(Judge::validate(&input, &verdicts(&[("a", "supported")])).is_err());
        assert!(Judge::validate(&input, &verdicts(&[("a", "maybe"), ("b", "partial")])).is_err());
        assert!(
            Judge::validate(&input, &verdicts(&[("a", "supported"), ("z", "partial")])).is_err()
        );
        assert!(
            Judge::validate(&input, &verdicts(&[("a", "Supported "), ("b", "partial")])).is_ok()
        );
    }
}
