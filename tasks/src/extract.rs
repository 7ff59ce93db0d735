//! extract: candidate sentences shown by ID → claims that cite sentence IDs only (the
//! quote text is looked up from the archive, never taken from the model).

use std::collections::BTreeSet;

use deepr_prompts::{quoted, Prompt, PromptSet};
use serde::{Deserialize, Serialize};

use crate::ModelTask;

pub struct Extract;

/// Most sentence IDs one claim may cite: a comparison or a table's rows need several
/// (at 3, relayed models' comparisons across a table's rows were judged partial and
/// their figures left out of the prose).
pub const MAX_CITED: usize = 5;

/// One candidate sentence as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// The ID the model cites (`c1`, `c2`, …).
    pub id: String,
    /// The sentence on one line (page text: untrusted).
    pub text: String,
    /// The retrieval score that ranked it.
    pub weight: f64,
    /// Content hash of its document.
    pub doc: String,
    /// Its document's title (untrusted).
    pub title: String,
    /// Where in its document it stands and how current the document is.
    #[serde(default)]
    pub source: SourceNote,
}

/// What a reader is told beside a quoted unit: the headings above it, its document's
/// date, and whether a newer version replaces the document.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceNote {
    /// The headings above the unit, outermost first (page text: untrusted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<String>,
    /// The document's own date (`YYYY-MM-DD` or `YYYY-MM`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// `draft`, `archived` or `superseded`; absent for a current document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// For a list item, the sentence that introduces its list ("… all of the following
    /// requirements:"; page text: untrusted): out of its list an item does not say what
    /// it is a condition or a step of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_in: Option<String>,
}

/// Candidates grouped by document (in order of each document's best candidate, then
/// rank order within it): a line naming the document, its date and status once, a
/// line for the headings when they change, then `cN: "sentence"` lines. Saying where
/// a sentence stands costs a few tokens per document, not per sentence.
pub fn render_candidates(candidates: &[Candidate]) -> String {
    let mut documents: Vec<&str> = Vec::new();
    for c in candidates {
        if !documents.contains(&c.doc.as_str()) {
            documents.push(&c.doc);
        }
    }
    let mut lines = Vec::new();
    for doc in documents {
        let mut under: Option<&[String]> = None;
        let mut list: Option<String> = None;
        for c in candidates.iter().filter(|c| c.doc == doc) {
            if under.is_none() {
                lines.push(c.source.document_line(&c.title));
            }
            let headings = c.source.headings_below(&c.title);
            if under.is_some_and(|u| u != headings) || (under.is_none() && !headings.is_empty()) {
                if headings.is_empty() {
                    lines.push("  (no heading):".to_string());
                } else {
                    lines.push(format!("  under {}:", quoted(&headings.join(" › "))));
                }
            }
            under = Some(headings);
            if let Some(lead_in) = c
                .source
                .lead_in
                .as_ref()
                .filter(|l| list.as_ref() != Some(*l))
            {
                lines.push(format!("  in the list after {}:", quoted(lead_in)));
            }
            list = c.source.lead_in.clone();
            lines.push(format!("  {}: {}", c.id, quoted(&c.text)));
        }
    }
    lines.join("\n")
}

impl SourceNote {
    /// Whether the document says a newer version replaces it.
    pub fn is_stale(&self) -> bool {
        matches!(self.status.as_deref(), Some("archived" | "superseded"))
    }

    /// `Document "Title" (2026-04-14, superseded):` — the untrusted title quoted as
    /// data; what is unknown (no date) or usual (current) is left out.
    pub fn document_line(&self, title: &str) -> String {
        let notes: Vec<&str> = self
            .date
            .iter()
            .chain(&self.status)
            .map(String::as_str)
            .collect();
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        format!("Document {}{notes}:", quoted(title.trim()))
    }

    /// The headings above the unit without a first heading that repeats the title.
    pub fn headings_below(&self, title: &str) -> &[String] {
        match self.headings.split_first() {
            Some((first, rest)) if first.trim() == title.trim() => rest,
            _ => &self.headings,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub subquestion: String,
    pub max_claims: usize,
    pub candidates: Vec<Candidate>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerClaim {
    pub text: String,
    pub sentence_ids: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub claims: Vec<AnswerClaim>,
}

impl ModelTask for Extract {
    const ID: &'static str = "extract";
    type Input = Input;
    type Answer = Answer;

    fn prompt(prompts: &PromptSet) -> &Prompt {
        &prompts.extract
    }

    fn values(input: &Input) -> Vec<(&'static str, String)> {
        let candidates = render_candidates(&input.candidates);
        vec![
            ("subquestion", quoted(&input.subquestion)),
            ("candidates", candidates),
            ("max_claims", input.max_claims.to_string()),
        ]
    }

    /// At most `max_claims` claims, each with text and 1 to [`MAX_CITED`] sentence IDs
    /// that were shown.
    fn validate(input: &Input, answer: &Answer) -> Result<(), String> {
        let shown: BTreeSet<&str> = input.candidates.iter().map(|c| c.id.as_str()).collect();
        if answer.claims.len() > input.max_claims {
            return Err(format!(
                "at most {} claims allowed, got {}",
                input.max_claims,
                answer.claims.len()
            ));
        }
        for (i, claim) in answer.claims.iter().enumerate() {
            if claim.text.trim().is_empty() {
                return Err(format!("claim {} has no text", i + 1));
            }
            if !(1..=MAX_CITED).contains(&claim.sentence_ids.len()) {
                return Err(format!(
                    "claim {} must cite 1 to {MAX_CITED} sentence IDs",
                    i + 1
                ));
            }
            if let Some(unknown) = claim
                .sentence_ids
                .iter()
                .find(|id| !shown.contains(id.as_str()))
            {
                return Err(format!(
                    "claim {} cites unknown sentence ID {unknown:?}",
                    i + 1
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> Input {
        Input {
            subquestion: "q".into(),
            max_claims: 5,
            candidates: vec![Candidate {
                id: "c1".into(),
                text: "WAL appends frames.".into(),
                weight: 1.0,
                doc: "d".into(),
                title: "t".into(),
                source: Default::default(),
            }],
        }
    }

    fn claim(ids: &[&str]) -> Answer {
        Answer {
            claims: vec![AnswerClaim {
                text: "x".into(),
                sentence_ids: ids.iter().map(|s| s.to_string()).collect(),
            }],
        }
    }

    #[test]
    fn only_ids_that_were_shown_are_valid() {
        let error = Extract::validate(&input(), &claim(&["c9"])).unwrap_err();
        assert!(error.contains("unknown sentence ID"), "{error}");
        assert!(Extract::validate(&input(), &claim(&[])).is_err());
        assert!(Extract::validate(&input(), &claim(&["c1"])).is_ok());
    }

    #[test]
    fn the_prompt_and_its_schema_say_the_same_limit() {
        let prompts = PromptSet::default();
        let prompt = Extract::prompt(&prompts);
        let schema = prompt.schema();
        let max =
            &schema["properties"]["claims"]["items"]["properties"]["sentence_ids"]["maxItems"];
        assert_eq!(max.as_u64(), Some(MAX_CITED as u64));
        let rendered = prompt
            .render(&[
                ("subquestion", "q"),
                ("candidates", ""),
                ("max_claims", "5"),
            ])
            .map(|r| r.user)
            .unwrap_or_default();
        assert!(
            rendered.contains(&format!("1 to {MAX_CITED} sentence IDs")),
            "{rendered}"
        );
    }

    #[test]
    fn a_claim_may_cite_up_to_five_rows() {
        let mut wide = input();
        wide.candidates = (1..=6)
            .map(|i| Candidate {
                id: format!("c{i}"),
                ..input().candidates[0].clone()
            })
            .collect();
        let five = claim(&["c1", "c2", "c3", "c4", "c5"]);
        assert!(Extract::validate(&wide, &five).is_ok());
        let six = claim(&["c1", "c2", "c3", "c4", "c5", "c6"]);
        let error = Extract::validate(&wide, &six).unwrap_err();
        assert!(error.contains("1 to 5"), "{error}");
    }
}
