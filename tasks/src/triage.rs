//! triage: the documents a round's searches found → a scope verdict for each against
//! the brief or question: in scope, background, or off-topic (the office's paperwork
//! that shares the brief's words but not its subject). A document is shown by what
//! says what it is — its title, date and status, its headings, its opening lines — not
//! whole: judging scope needs no more, and it keeps the call cheap (several documents
//! a call). Every shown document gets exactly one verdict.

use std::collections::BTreeSet;

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::ModelTask;

pub mod paperwork;
pub use paperwork::{off_topic, off_topic_by_name};

pub struct Triage;

/// Documents one triage call judges at most.
pub const DOCUMENTS_PER_CALL: usize = 10;
/// Headings of a document shown at most.
pub const MAX_HEADINGS: usize = 12;
/// Characters of a document's opening shown at most.
pub const OPENING_CHARS: usize = 400;

/// One document as the model sees it (all of it page text: untrusted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// The ID the verdict names (`d1`, `d2`, …).
    pub id: String,
    pub title: String,
    /// `YYYY-MM-DD` or `YYYY-MM`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// `draft`, `archived` or `superseded`; absent for a current document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Its headings in order (at most [`MAX_HEADINGS`]).
    #[serde(default)]
    pub headings: Vec<String>,
    /// Its first lines (at most [`OPENING_CHARS`] characters).
    #[serde(default)]
    pub opening: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The brief or question, as the user gave it.
    pub topic: String,
    pub documents: Vec<Document>,
}

/// How a document stands to the brief.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// It holds facts the brief asks about.
    #[default]
    InScope,
    /// It is about the brief's subject and gives context rather than the facts asked.
    Background,
    /// It shares the brief's words but not its subject.
    OffTopic,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub id: String,
    pub scope: Scope,
    /// Why (required for off-topic; model text: untrusted, shown cleaned).
    #[serde(default)]
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub verdicts: Vec<Verdict>,
}

/// The documents as the prompt lists them: an ID line with the title, date and status,
/// the headings on one line, the opening quoted.
pub fn render_documents(documents: &[Document]) -> String {
    let mut lines = Vec::new();
    for doc in documents {
        let notes: Vec<&str> = doc
            .date
            .iter()
            .chain(&doc.status)
            .map(String::as_str)
            .collect();
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        lines.push(format!("{}: {}{notes}", doc.id, quoted(doc.title.trim())));
        if !doc.headings.is_empty() {
            let headings: Vec<String> = doc.headings.iter().map(|h| quoted(h)).collect();
            lines.push(format!("  headings: {}", headings.join(", ")));
        }
        if !doc.opening.trim().is_empty() {
            lines.push(format!(
                "  opens: {}",
                quoted(&crate::one_line(&doc.opening))
            ));
        }
    }
    lines.join("\n")
}

impl ModelTask for Triage {
    const ID: &'static str = "triage";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.triage
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        vec![
            ("topic", quoted(&input.topic)),
            ("documents", render_documents(&input.documents)),
        ]
    }

    /// One verdict per shown document, none for a document not shown, and a reason
    /// for every off-topic one.
    fn validate(input: &Input, answer: &Answer) -> Result<(), String> {
        let shown: BTreeSet<&str> = input.documents.iter().map(|d| d.id.as_str()).collect();
        let mut answered = BTreeSet::new();
        for verdict in &answer.verdicts {
            if !shown.contains(verdict.id.as_str()) {
                return Err(format!("unknown document ID {:?}", verdict.id));
            }
            if !answered.insert(verdict.id.as_str()) {
                return Err(format!("document {:?} has two verdicts", verdict.id));
            }
            if verdict.scope == Scope::OffTopic && verdict.reason.trim().is_empty() {
                return Err(format!(
                    "document {:?} is off_topic without a reason",
                    verdict.id
                ));
            }
        }
        if let Some(missing) = shown.iter().find(|id| !answered.contains(*id)) {
            return Err(format!("document {missing:?} has no verdict"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> Input {
        Input {
            topic: "Write a brief covering: (1) funding, (2) pricing.".into(),
            documents: vec![
                Document {
                    id: "d1".into(),
                    title: "Q1 Board Update".into(),
                    date: Some("2026-04-14".into()),
                    status: None,
                    headings: vec!["Funding and capital".into()],
                    opening: "The first quarter was our strongest.".into(),
                },
                Document {
                    id: "d2".into(),
                    title: "Hybrid Work Policy".into(),
                    date: None,
                    status: Some("superseded".into()),
                    headings: vec![],
                    opening: String::new(),
                },
            ],
        }
    }

    fn verdict(id: &str, scope: Scope, reason: &str) -> Verdict {
        Verdict {
            id: id.into(),
            scope,
            reason: reason.into(),
        }
    }

    #[test]
    fn every_shown_document_gets_one_verdict_and_off_topic_says_why() {
        let input = input();
        let good = Answer {
            verdicts: vec![
                verdict("d1", Scope::InScope, ""),
                verdict("d2", Scope::OffTopic, "a workplace policy"),
            ],
        };
        assert_eq!(Triage::validate(&input, &good), Ok(()));
        let unknown = Answer {
            verdicts: vec![verdict("d9", Scope::InScope, "")],
        };
        assert!(Triage::validate(&input, &unknown)
            .unwrap_err()
            .contains("unknown document"));
        let missing = Answer {
            verdicts: vec![verdict("d1", Scope::InScope, "")],
        };
        assert!(Triage::validate(&input, &missing)
            .unwrap_err()
            .contains("no verdict"));
        let twice = Answer {
            verdicts: vec![
                verdict("d1", Scope::InScope, ""),
                verdict("d1", Scope::Background, ""),
                verdict("d2", Scope::OffTopic, "x"),
            ],
        };
        assert!(Triage::validate(&input, &twice)
            .unwrap_err()
            .contains("two verdicts"));
        let silent = Answer {
            verdicts: vec![
                verdict("d1", Scope::InScope, ""),
                verdict("d2", Scope::OffTopic, " "),
            ],
        };
        assert!(Triage::validate(&input, &silent)
            .unwrap_err()
            .contains("without a reason"));
    }

    #[test]
    fn documents_are_listed_as_data() {
        let rendered = render_documents(&input().documents);
        assert!(
            rendered.starts_with("d1: \"Q1 Board Update\" (2026-04-14)"),
            "{rendered}"
        );
        assert!(
            rendered.contains("  headings: \"Funding and capital\""),
            "{rendered}"
        );
        assert!(
            rendered.contains("d2: \"Hybrid Work Policy\" (superseded)"),
            "{rendered}"
        );
        let answer: Answer = serde_json::from_str(
            r#"{"verdicts": [{"id": "d1", "scope": "background", "reason": "context"}]}"#,
        )
        .unwrap();
        assert_eq!(answer.verdicts[0].scope, Scope::Background);
    }
}
