//! A refresh reads only what changed (`deepr refresh`): its extract steps start from
//! the claims the earlier run extracted and ask the model about the candidates of new
//! and changed documents alone.
//!
//! A refresh asks its parent's subquestions over the same sources, so an unchanged
//! document states what it stated: a claim the parent extracted from it still stands.
//! But one new file shifts every ranking's word weights, and a pool that differs by one
//! unit is a new prompt the response cache cannot answer — the whole pool was read
//! again (9 of 12 extract calls re-paid on a share of 25 files for one changed file).
//! Here a step whose settings equal its parent's keeps the parent's claims whose every
//! citation is in a document unchanged since ([`EarlierReading::gone`] holds the hashes
//! of the changed and removed ones), and calls the extractor only on the pool's
//! candidates from documents the parent's sources did not hold (new files, and the new
//! versions of changed ones); with none, it makes no call. Pure: the session reads the
//! parent's checkpoints and hands them over as data.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::types::{ClaimDraft, ExtractOut, ScoreOut};

/// What the run a refresh refreshes read and extracted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EarlierReading {
    /// Content hashes of every document the earlier run's sources held.
    pub documents: BTreeSet<String>,
    /// Of those, the ones the sources no longer hold (changed or removed since).
    pub gone: BTreeSet<String>,
    /// Its extract steps by step id: the step's key material and its output.
    pub extracted: BTreeMap<String, (Value, ExtractOut)>,
}

/// One extract step's share of an [`EarlierReading`].
#[derive(Clone, Debug, PartialEq)]
pub struct EarlierStep {
    /// The earlier claims that still stand (every cited document unchanged).
    pub standing: Vec<ClaimDraft>,
    /// Hashes of the documents the earlier run's sources held.
    pub documents: BTreeSet<String>,
    /// A digest of what the step starts from (node key material).
    pub digest: String,
}

impl EarlierReading {
    /// Step `step_id`'s earlier claims, when it ran with key material `material`
    /// (a step whose prompt, model or limits differ starts afresh).
    pub fn step(&self, step_id: &str, material: &Value) -> Option<EarlierStep> {
        let (then, out) = self.extracted.get(step_id)?;
        // A degraded step (the model failed; the heuristic answered) is read again.
        if then != material || out.degraded.is_some() {
            return None;
        }
        let standing: Vec<ClaimDraft> = out
            .claims
            .iter()
            .filter(|claim| {
                claim
                    .citations
                    .iter()
                    .all(|c| !self.gone.contains(&c.content_sha256))
            })
            .cloned()
            .collect();
        let digest = {
            let mut hasher = blake3::Hasher::new();
            for doc in &self.documents {
                hasher.update(doc.as_bytes());
                hasher.update(b"\n");
            }
            hasher.update(&serde_json::to_vec(&standing).unwrap_or_default());
            hasher.finalize().to_hex().to_string()
        };
        Some(EarlierStep {
            standing,
            documents: self.documents.clone(),
            digest,
        })
    }
}

impl EarlierStep {
    /// The pool's candidates from documents the earlier run's sources did not hold.
    pub fn news(&self, pool: &ScoreOut) -> ScoreOut {
        let mut news = pool.clone();
        news.candidates
            .retain(|c| !self.documents.contains(&c.content_sha256));
        news
    }

    /// The standing claims, then the new ones (numbered after them, never above
    /// `max_claims` new ones), each claim's id renumbered in that order.
    pub fn merged(&self, new: ExtractOut, subquestion: &str, max_claims: usize) -> ExtractOut {
        let mut claims = self.standing.clone();
        claims.extend(new.claims.into_iter().take(max_claims));
        for (i, claim) in claims.iter_mut().enumerate() {
            claim.id = format!("{subquestion}-c{}", i + 1);
        }
        ExtractOut {
            claims,
            degraded: new.degraded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Candidate, SentenceRef};

    fn claim(id: &str, doc: &str) -> ClaimDraft {
        ClaimDraft {
            id: id.into(),
            subquestion: "sq1".into(),
            text: format!("a claim on {doc}"),
            citations: vec![SentenceRef {
                content_sha256: doc.into(),
                sentence: 0,
                sentence_end: None,
                written_quote: None,
            }],
        }
    }

    fn candidate(doc: &str, sentence: u32) -> Candidate {
        Candidate {
            cid: format!("c{sentence}"),
            content_sha256: doc.into(),
            sentence,
            sentence_end: None,
            weight: 1.0,
        }
    }

    fn earlier() -> EarlierReading {
        EarlierReading {
            documents: ["same", "changed-then"].map(String::from).into(),
            gone: ["changed-then"].map(String::from).into(),
            extracted: [(
                "r0/sq1/extract".to_string(),
                (
                    serde_json::json!({"v": 1}),
                    ExtractOut {
                        claims: vec![claim("sq1-c1", "changed-then"), claim("sq1-c2", "same")],
                        degraded: None,
                    },
                ),
            )]
            .into(),
        }
    }

    #[test]
    fn claims_on_changed_documents_fall_and_only_new_documents_are_read_again() {
        let step = earlier()
            .step("r0/sq1/extract", &serde_json::json!({"v": 1}))
            .expect("same settings: the earlier claims are used");
        assert_eq!(step.standing.len(), 1, "the changed document's claim falls");
        assert_eq!(step.standing[0].citations[0].content_sha256, "same");
        let pool = ScoreOut {
            candidates: vec![
                candidate("same", 1),
                candidate("changed-now", 2),
                candidate("added", 3),
            ],
            ..ScoreOut::default()
        };
        let news: Vec<String> = step
            .news(&pool)
            .candidates
            .into_iter()
            .map(|c| c.content_sha256)
            .collect();
        assert_eq!(news, ["changed-now", "added"]);
        let merged = step.merged(
            ExtractOut {
                claims: vec![claim("sq1-c1", "changed-now"), claim("sq1-c2", "added")],
                degraded: None,
            },
            "sq1",
            1,
        );
        let ids: Vec<(&str, &str)> = merged
            .claims
            .iter()
            .map(|c| (c.id.as_str(), c.citations[0].content_sha256.as_str()))
            .collect();
        assert_eq!(ids, [("sq1-c1", "same"), ("sq1-c2", "changed-now")]);
    }

    #[test]
    fn a_step_with_other_settings_or_no_earlier_run_starts_afresh() {
        let reading = earlier();
        assert!(reading
            .step("r0/sq1/extract", &serde_json::json!({"v": 2}))
            .is_none());
        assert!(reading
            .step("r1/sq1/extract", &serde_json::json!({"v": 1}))
            .is_none());
    }
}
