//! decompose: the topic and the headings a first search found → subquestions.

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::ModelTask;

pub struct Decompose;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The user's question.
    pub topic: String,
    /// Fewest and most subquestions allowed, and how many the depth aims for.
    pub min: usize,
    pub max: usize,
    pub target: usize,
    /// Titles and headings of the documents the scout search found (untrusted).
    pub headings: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub subquestions: Vec<String>,
}

impl ModelTask for Decompose {
    const ID: &'static str = "decompose";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.decompose
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        let headings = if input.headings.is_empty() {
            "(the first search found no documents)".to_string()
        } else {
            input
                .headings
                .iter()
                .map(|h| format!("- {}", quoted(h)))
                .collect::<Vec<_>>()
                .join("\n")
        };
        vec![
            ("topic", input.topic.clone()),
            ("min", input.min.to_string()),
            ("max", input.max.to_string()),
            ("headings", headings),
        ]
    }

    fn validate(input: &Input, answer: &Answer) -> Result<(), String> {
        let usable = answer
            .subquestions
            .iter()
            .filter(|q| !q.trim().is_empty())
            .count();
        if usable < input.min || usable > input.max {
            return Err(format!(
                "expected {} to {} subquestions, got {usable}",
                input.min, input.max
            ));
        }
        Ok(())
    }
}
