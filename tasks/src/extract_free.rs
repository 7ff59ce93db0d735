//! extract-free (the `free-quote` strategy): page text → claims with quotes the model
//! copies itself. The quote is model text: the report shows it, and verify measures
//! how often it is not verbatim — which is what this strategy exists to measure.

use std::collections::BTreeSet;

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::ModelTask;

pub struct ExtractFree;

/// One document as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// The ID the model names (`d1`, `d2`, …).
    pub id: String,
    pub title: String,
    /// The document's text, capped (untrusted).
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub subquestion: String,
    pub max_claims: usize,
    pub documents: Vec<Document>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerClaim {
    pub text: String,
    pub quote: String,
    pub document: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub claims: Vec<AnswerClaim>,
}

impl ModelTask for ExtractFree {
    const ID: &'static str = "extract_free";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.extract_free
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        let documents = input
            .documents
            .iter()
            .map(|d| {
                format!(
                    "{}: title {}\ntext {}",
                    d.id,
                    quoted(&d.title),
                    quoted(&d.text)
                )
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        vec![
            ("subquestion", quoted(&input.subquestion)),
            ("documents", documents),
            ("max_claims", input.max_claims.to_string()),
        ]
    }

    fn validate(input: &Input, answer: &Answer) -> Result<(), String> {
        let shown: BTreeSet<&str> = input.documents.iter().map(|d| d.id.as_str()).collect();
        if answer.claims.len() > input.max_claims {
            return Err(format!("at most {} claims allowed", input.max_claims));
        }
        for (i, claim) in answer.claims.iter().enumerate() {
            if claim.text.trim().is_empty() || claim.quote.trim().is_empty() {
                return Err(format!("claim {} needs text and a quote", i + 1));
            }
            if !shown.contains(claim.document.as_str()) {
                return Err(format!(
                    "claim {} names unknown document {:?}",
                    i + 1,
                    claim.document
                ));
            }
        }
        Ok(())
    }
}
