//! subquery: a subquestion → 1–3 search queries and a ranking question.

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::ModelTask;

pub struct Subquery;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub topic: String,
    /// The subquestion (planner text: untrusted).
    pub subquestion: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub queries: Vec<String>,
    pub ranking_question: String,
}

impl ModelTask for Subquery {
    const ID: &'static str = "subquery";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.subquery
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        vec![
            ("topic", input.topic.clone()),
            ("subquestion", quoted(&input.subquestion)),
        ]
    }

    fn validate(_: &Input, answer: &Answer) -> Result<(), String> {
        let usable = answer
            .queries
            .iter()
            .filter(|q| !q.trim().is_empty())
            .count();
        if !(1..=3).contains(&usable) {
            return Err(format!("expected 1 to 3 non-empty queries, got {usable}"));
        }
        Ok(())
    }
}
