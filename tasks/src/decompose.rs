//! decompose: the topic and the headings a first search found → subquestions.

use std::collections::BTreeSet;

use deepr_evidence::terms::content_terms;
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
    /// The titles of those documents (untrusted): a title names a whole document, never
    /// a subject of its own for the offline planner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub titles: Vec<String>,
    /// The brief's parts ([`crate::brief::parse_brief`]); each must be covered.
    #[serde(default)]
    pub parts: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub subquestions: Vec<String>,
    /// Search queries for each subquestion, in the same order (1–3 each): with them the
    /// first round makes no query call per subquestion. Ignored unless there is one
    /// list per subquestion.
    #[serde(default)]
    pub queries: Vec<Vec<String>>,
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
            ("parts", parts_block(&input.parts)),
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
        if let Some(part) = uncovered_parts(&input.parts, &answer.subquestions).first() {
            return Err(format!(
                "no subquestion covers the brief's part {}; add one that uses its terms",
                quoted(part)
            ));
        }
        Ok(())
    }
}

fn parts_block(parts: &[String]) -> String {
    if parts.len() < 2 {
        return "(none)".to_string();
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // The subjects a part lists beside its own ("leadership, the workforce,
            // labour relations…"): a plan that names none of one leaves it unread.
            let subjects = crate::brief::subjects_of_part(p).beyond_whole();
            if subjects.len() < 2 {
                format!("{}. {}", i + 1, quoted(p))
            } else {
                let listed: Vec<String> = subjects.iter().map(|s| quoted(s)).collect();
                format!("{}. {} — subjects: {}", i + 1, quoted(p), listed.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The parts no subquestion covers. A part is covered by a subquestion that uses one of
/// its distinctive terms — content terms that no other part has (the company's name in
/// every part tells them apart from nothing). A part with none is taken as covered.
pub fn uncovered_parts(parts: &[String], subquestions: &[String]) -> Vec<String> {
    if parts.len() < 2 {
        return Vec::new();
    }
    let terms_of = |text: &str| -> BTreeSet<String> { content_terms(text).into_iter().collect() };
    let part_terms: Vec<BTreeSet<String>> = parts.iter().map(|p| terms_of(p)).collect();
    let asked: BTreeSet<String> = subquestions.iter().flat_map(|q| terms_of(q)).collect();
    parts
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            let distinctive: Vec<&String> = part_terms[*i]
                .iter()
                .filter(|t| {
                    part_terms
                        .iter()
                        .enumerate()
                        .all(|(j, other)| j == *i || !other.contains(*t))
                })
                .collect();
            !distinctive.is_empty() && !distinctive.iter().any(|t| asked.contains(*t))
        })
        .map(|(_, p)| p.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(topic: &str) -> Input {
        Input {
            topic: topic.into(),
            min: 2,
            max: 6,
            target: 4,
            headings: Vec::new(),
            titles: Vec::new(),
            parts: crate::brief::parse_brief(topic).parts,
        }
    }

    const BRIEF: &str = "Write a brief on Kestrelmoor Robotics covering: (1) the company's funding history, (2) its product line and pricing, and (3) operational risks. Cite your sources.";

    #[test]
    fn every_part_of_a_brief_must_be_covered() {
        let input = input(BRIEF);
        assert_eq!(input.parts.len(), 3, "{:?}", input.parts);
        let answer = |qs: &[&str]| Answer {
            subquestions: qs.iter().map(|q| q.to_string()).collect(),
            queries: Vec::new(),
        };
        let missing_risks = answer(&[
            "How has Kestrelmoor Robotics been funded?",
            "What does the product line cost?",
        ]);
        let error = Decompose::validate(&input, &missing_risks).unwrap_err();
        assert!(error.contains("operational risks"), "{error}");
        let all = answer(&[
            "How has Kestrelmoor Robotics been funded, round by round (funding history)?",
            "What does the product line cost, and what is its pricing?",
            "Which operational risks does the company track?",
        ]);
        assert_eq!(Decompose::validate(&input, &all), Ok(()));
        // The parts reach the prompt, quoted as data.
        let prompts = PromptSet::default();
        let values = Decompose::values(&input);
        let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let rendered = Decompose::prompt(&prompts).render(&values).unwrap();
        assert!(
            rendered.user.contains("3. \"operational risks\""),
            "{}",
            rendered.user
        );
        // A part's listed subjects are shown beside it, for the plan to name each.
        let listing = self::input(
            "Write a note on Lanthorn Transit covering: (1) its finances, including the budget \
             and reserves; (2) leadership, the workforce, labour relations and litigation.",
        );
        let values = Decompose::values(&listing);
        let parts = values.iter().find(|(k, _)| *k == "parts").map(|(_, v)| v);
        assert_eq!(
            parts.map(String::as_str),
            Some(
                "1. \"its finances, including the budget and reserves\" — subjects: \"Budget\", \
                 \"Reserves\"\n2. \"leadership, the workforce, labour relations and litigation\" \
                 — subjects: \"Leadership\", \"Workforce\", \"Labour relations\", \"Litigation\""
            )
        );
    }

    #[test]
    fn a_one_line_question_has_no_parts_to_cover() {
        let input = input("How does SQLite guarantee atomic commits?");
        assert!(input.parts.len() <= 1, "{:?}", input.parts);
        let answer = Answer {
            subquestions: vec!["What is a journal?".into(), "What is WAL?".into()],
            queries: Vec::new(),
        };
        assert_eq!(Decompose::validate(&input, &answer), Ok(()));
    }
}
