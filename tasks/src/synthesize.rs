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
    /// The names (title and date) of the documents its quotes come from: a summary
    /// sentence may state their numbers, as a section's may.
    #[serde(default)]
    pub sources: Vec<String>,
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
        let documents = cited_documents(input);
        let sections = input
            .subquestions
            .iter()
            .map(|s| {
                let lines = s
                    .claims
                    .iter()
                    .map(|c| shown_claim(c, &documents))
                    .collect::<Vec<_>>()
                    .join("\n");
                format!("{}: {}\n{lines}", s.id, quoted(&s.text))
            })
            .collect::<Vec<_>>()
            .join("\n");
        let legend = documents
            .iter()
            .enumerate()
            .map(|(i, name)| format!("  d{}: {}", i + 1, quoted(name)))
            .collect::<Vec<_>>()
            .join("\n");
        let claims = match legend.is_empty() {
            true => sections,
            false => format!("Documents they cite:\n{legend}\n{sections}"),
        };
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

/// The names of the documents the claims cite, each once, in the order first cited: a
/// summary that names its sources ("name the document behind each figure") needs them,
/// and a legend costs each name once.
fn cited_documents(input: &Input) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in input
        .subquestions
        .iter()
        .flat_map(|s| &s.claims)
        .flat_map(|c| &c.sources)
    {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// A claim as the summary writer sees it: its ID, text and the documents it cites (by
/// their number in `documents`); a claim the judge found only partly supported is
/// marked so and shown with its quotes (the writer must see what its words overreach,
/// as a section's writer does), the others without (they cost a summary call thousands
/// of tokens and say what the claim says).
fn shown_claim(claim: &Claim, documents: &[String]) -> String {
    let cited: Vec<String> = claim
        .sources
        .iter()
        .filter_map(|name| documents.iter().position(|d| d == name))
        .map(|i| format!("d{}", i + 1))
        .collect();
    let from = match cited.is_empty() {
        true => String::new(),
        false => format!(" ({})", cited.join(", ")),
    };
    if claim.verdict != Verdict::Partial {
        return format!("  {}: {}{from}", claim.id, quoted(&claim.text));
    }
    let quotes: String = claim
        .quotes
        .iter()
        .map(|q| format!("\n    quote: {}", quoted(q)))
        .collect();
    format!(
        "  {} [partial]: {}{from}{quotes}",
        claim.id,
        quoted(&claim.text)
    )
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
                    sources: c.sources.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_claim_is_shown_with_its_quotes_and_a_supported_one_without() {
        let claim = |id: &str, verdict: Verdict| Claim {
            id: id.into(),
            text: format!("{id} says the West is the weakest region"),
            verdict,
            quotes: vec![format!("{id}'s quote: West uptime 98.9%")],
            sources: Vec::new(),
        };
        let input = Input {
            topic: "Kestrel".into(),
            subquestions: vec![Group {
                id: "q1".into(),
                text: "Operations".into(),
                claims: vec![
                    claim("q1-c1", Verdict::Supported),
                    claim("q1-c2", Verdict::Partial),
                ],
            }],
            conflicts: Vec::new(),
            instructions: Vec::new(),
        };
        let values = Synthesize::values(&input);
        let claims = &values.iter().find(|(k, _)| *k == "claims").unwrap().1;
        assert!(
            claims.contains("q1-c2 [partial]") && claims.contains("q1-c2's quote"),
            "{claims}"
        );
        assert!(
            !claims.contains("q1-c1 [") && !claims.contains("q1-c1's quote"),
            "{claims}"
        );
    }

    #[test]
    fn the_documents_claims_cite_are_listed_once_and_each_claim_names_its_own() {
        let claim = |id: &str, sources: &[&str]| Claim {
            id: id.into(),
            text: format!("{id} says reserves are $26.1M"),
            verdict: Verdict::Supported,
            quotes: Vec::new(),
            sources: sources.iter().map(|s| s.to_string()).collect(),
        };
        let input = Input {
            topic: "LVTA".into(),
            subquestions: vec![Group {
                id: "q1".into(),
                text: "Reserves".into(),
                claims: vec![
                    claim("q1-c1", &["CFO memo (2026-04-10)"]),
                    claim("q1-c2", &["Budget (2026-03-12)", "CFO memo (2026-04-10)"]),
                    claim("q1-c3", &[]),
                ],
            }],
            conflicts: Vec::new(),
            instructions: Vec::new(),
        };
        let values = Synthesize::values(&input);
        let claims = &values.iter().find(|(k, _)| *k == "claims").unwrap().1;
        assert!(
            claims.starts_with(
                "Documents they cite:\n  d1: \"CFO memo (2026-04-10)\"\n  d2: \"Budget (2026-03-12)\"\nq1:"
            ),
            "{claims}"
        );
        assert!(claims.contains("$26.1M\" (d1)\n"), "{claims}");
        assert!(claims.contains("$26.1M\" (d2, d1)\n"), "{claims}");
        assert!(
            claims.ends_with("q1-c3 says reserves are $26.1M\""),
            "{claims}"
        );
    }

    #[test]
    fn a_summary_sentence_may_state_its_documents_date_as_a_sections_may() {
        let input = |sources: Vec<String>| Input {
            topic: "LVTA".into(),
            subquestions: vec![Group {
                id: "q1".into(),
                text: "Reserves".into(),
                claims: vec![Claim {
                    id: "q1-c1".into(),
                    text: "Unrestricted reserves were $26.1M at March 31".into(),
                    verdict: Verdict::Supported,
                    quotes: vec!["Unrestricted operating reserves: $26.1M (47 days)".into()],
                    sources,
                }],
            }],
            conflicts: Vec::new(),
            instructions: Vec::new(),
        };
        let answer = Answer {
            summary: vec![AnswerPoint {
                text:
                    "Unrestricted operating reserves were $26.1M in the CFO memo of April 10, 2026."
                        .into(),
                claim_ids: vec!["q1-c1".into()],
            }],
        };
        let dated = input(vec!["CFO memo (2026-04-10)".into()]);
        assert!(Synthesize::validate(&dated, &answer).is_ok());
        assert!(Synthesize::validate(&input(Vec::new()), &answer).is_err());
    }
}
