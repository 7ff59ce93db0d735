//! What a refresh's parent read, and how a refresh reads only what changed (`deepr
//! refresh`): its extract steps start from the claims the parent extracted and ask the
//! model about the candidates of new and changed documents alone.
//!
//! A refresh asks its parent's subquestions over the same sources, so an unchanged
//! document states what it stated: a claim the parent extracted from it still stands.
//! But one new file shifts every ranking's word weights, and a pool that differs by one
//! unit is a new prompt the response cache cannot answer — the whole pool was read
//! again (9 of 12 extract calls re-paid on a share of 25 files for one changed file).
//! Here a step whose settings equal its parent's keeps the parent's claims whose every
//! citation is in a document unchanged since ([`ParentReading::gone`] holds the hashes
//! of the changed and removed ones), and calls the extractor only on the pool's
//! candidates from documents the parent's sources did not hold (new files, and the new
//! versions of changed ones); with none, it makes no call.
//!
//! A round's conflict step likewise keeps the parent's disagreements whose claims all
//! still stand, and asks only about the claims the parent did not have, beside the
//! standing claims that share their subject ([`ParentConflicts`]); triage starts from
//! the parent's verdicts, which are by content hash, so only new and changed documents
//! are judged ([`ParentReading::scopes`]); the summary is kept while every claim it
//! states stands and no disagreement is new ([`ParentSummary`]). Pure: the session reads the parent's
//! checkpoints and hands them over as data.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use deepr_evidence::report::Conflict;

use crate::types::{ClaimDraft, ConflictOut, ExtractOut, ScoreOut, SynthesizeOut, TriageOut};

/// Distinctive words a standing claim shares with a new one to be asked about beside
/// it (a disagreement is two claims on one subject). A word is distinctive when at most
/// one in [`DISTINCTIVE_SHARE`] of the round's claims use it: the organisation's name,
/// in every claim, says nothing of a subject.
const SHARED_SUBJECT_TERMS: usize = 2;
/// See [`SHARED_SUBJECT_TERMS`].
const DISTINCTIVE_SHARE: usize = 8;

/// What the run a refresh refreshes (its parent) read and extracted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParentReading {
    /// Content hashes of every document the parent's sources held.
    pub documents: BTreeSet<String>,
    /// Of those, the ones the sources no longer hold (changed or removed since).
    pub gone: BTreeSet<String>,
    /// Its extract steps by step id: the step's key material and its output.
    pub extracted: BTreeMap<String, (Value, ExtractOut)>,
    /// Its conflict steps by step id: the step's key material and its output.
    pub conflicts: BTreeMap<String, (Value, ConflictOut)>,
    /// Its summary step: its key material and output.
    pub summary: Option<(Value, SynthesizeOut)>,
    /// Its triage steps by step id (`r{round}/triage`, each holding every earlier
    /// round's verdicts too): the step's key material and its output. None when no
    /// model judged (an offline run has no triage step).
    pub triage: BTreeMap<String, (Value, TriageOut)>,
}

/// One conflict step's share of an [`ParentReading`].
#[derive(Clone, Debug, PartialEq)]
pub struct ParentConflicts {
    /// The parent's claims of the round, by the parent's ids.
    pub claims: BTreeMap<String, ClaimDraft>,
    /// The disagreements the parent's step found among them.
    pub conflicts: Vec<Conflict>,
    /// A digest of what the step starts from (node key material).
    pub digest: String,
}

/// What a conflict step with a parent reading asks about, and what it carries over.
#[derive(Clone, Debug, PartialEq)]
pub struct ConflictDelta {
    /// Ids (now) of the claims to show the model: the new ones and the standing ones
    /// that share their subject. Empty: no call.
    pub asked: BTreeSet<String>,
    /// Ids (now) of the claims the parent did not have.
    pub new: BTreeSet<String>,
    /// The parent's disagreements whose claims all still stand, with today's ids.
    pub carried: Vec<Conflict>,
}

/// One extract step's share of an [`ParentReading`].
#[derive(Clone, Debug, PartialEq)]
pub struct ParentExtract {
    /// The parent's claims that still stand (every cited document unchanged).
    pub standing: Vec<ClaimDraft>,
    /// Hashes of the documents the parent's sources held.
    pub documents: BTreeSet<String>,
    /// A digest of what the step starts from (node key material).
    pub digest: String,
}

impl ParentReading {
    /// Step `step_id`'s claims in the parent, when it ran with key material `material`
    /// (a step whose prompt, model or limits differ starts afresh).
    pub fn extract_step(&self, step_id: &str, material: &Value) -> Option<ParentExtract> {
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
        Some(ParentExtract {
            standing,
            documents: self.documents.clone(),
            digest,
        })
    }
}

impl ParentReading {
    /// The parent's verdicts on the documents still there, for a triage step with key
    /// material `material`, with a digest of them; `None` when the parent's triage ran
    /// otherwise or fell back to the offline rule.
    pub fn scopes(&self, material: &Value) -> Option<(TriageOut, String)> {
        let round = |id: &str| {
            id.strip_prefix('r')
                .and_then(|rest| rest.split('/').next())
                .and_then(|n| n.parse::<u32>().ok())
        };
        // The last round's holds every verdict of the run.
        let (then, out) = self.triage.iter().max_by_key(|(id, _)| round(id))?.1;
        if then != material || out.degraded.is_some() {
            return None;
        }
        let mut kept = out.clone();
        kept.verdicts.retain(|sha, _| !self.gone.contains(sha));
        let digest = blake3::hash(&serde_json::to_vec(&kept).unwrap_or_default())
            .to_hex()
            .to_string();
        Some((kept, digest))
    }

    /// The parent's summary, with every claim and disagreement of the parent, when its
    /// summary step ran with key material `material`.
    pub fn summary_step(&self, material: &Value) -> Option<ParentSummary> {
        let (then, summary) = self.summary.as_ref()?;
        if then != material || summary.degraded.is_some() {
            return None;
        }
        let claims: BTreeMap<String, ClaimDraft> = self
            .extracted
            .values()
            .flat_map(|(_, extracted)| extracted.claims.iter())
            .map(|c| (c.id.clone(), c.clone()))
            .collect();
        let conflicts: Vec<Conflict> = self
            .conflicts
            .values()
            .flat_map(|(_, out)| out.conflicts.iter().cloned())
            .collect();
        let mut hasher = blake3::Hasher::new();
        hasher.update(&serde_json::to_vec(summary).unwrap_or_default());
        hasher.update(&serde_json::to_vec(&claims).unwrap_or_default());
        hasher.update(&serde_json::to_vec(&conflicts).unwrap_or_default());
        Some(ParentSummary {
            summary: summary.clone(),
            claims,
            conflicts,
            digest: hasher.finalize().to_hex().to_string(),
        })
    }

    /// Conflict step `step_id` of round `round`'s disagreements and claims in the parent,
    /// when it ran with key material `material`.
    pub fn conflict_step(
        &self,
        step_id: &str,
        round: u32,
        material: &Value,
    ) -> Option<ParentConflicts> {
        let (then, out) = self.conflicts.get(step_id)?;
        if then != material || out.degraded.is_some() {
            return None;
        }
        let prefix = format!("r{round}/");
        let claims: BTreeMap<String, ClaimDraft> = self
            .extracted
            .iter()
            .filter(|(id, _)| id.starts_with(&prefix))
            .flat_map(|(_, (_, extracted))| extracted.claims.iter())
            .map(|c| (c.id.clone(), c.clone()))
            .collect();
        let mut hasher = blake3::Hasher::new();
        hasher.update(&serde_json::to_vec(&claims).unwrap_or_default());
        hasher.update(&serde_json::to_vec(&out.conflicts).unwrap_or_default());
        Some(ParentConflicts {
            claims,
            conflicts: out.conflicts.clone(),
            digest: hasher.finalize().to_hex().to_string(),
        })
    }
}

impl ParentConflicts {
    /// What to ask about `now` (the round's claims that may disagree), and which of the
    /// parent's disagreements stand: a claim is the parent's when its subquestion,
    /// text and citations are.
    pub fn delta(&self, now: &[&ClaimDraft]) -> ConflictDelta {
        let now_id = ids_now(&self.claims, now);
        let known: BTreeSet<&str> = now_id.values().copied().collect();
        let new: BTreeSet<String> = now
            .iter()
            .filter(|c| !known.contains(c.id.as_str()))
            .map(|c| c.id.clone())
            .collect();
        let carried = self
            .conflicts
            .iter()
            .filter_map(|conflict| {
                let ids: Option<Vec<String>> = conflict
                    .claims
                    .iter()
                    .map(|id| now_id.get(id.as_str()).map(|now| now.to_string()))
                    .collect();
                let mut ids = ids?;
                ids.sort();
                Some(Conflict {
                    claims: ids,
                    ..conflict.clone()
                })
            })
            .collect();
        let terms = distinctive_terms(now);
        let new_terms: Vec<&BTreeSet<String>> = now
            .iter()
            .zip(&terms)
            .filter(|(c, _)| new.contains(&c.id))
            .map(|(_, t)| t)
            .collect();
        let related = |mine: &BTreeSet<String>| {
            new_terms
                .iter()
                .any(|t| t.intersection(mine).count() >= SHARED_SUBJECT_TERMS)
        };
        let asked = match new.is_empty() {
            true => BTreeSet::new(),
            false => now
                .iter()
                .zip(&terms)
                .filter(|(c, mine)| new.contains(&c.id) || related(mine))
                .map(|(c, _)| c.id.clone())
                .collect(),
        };
        ConflictDelta {
            asked,
            new,
            carried,
        }
    }
}

/// Today's id of each of the parent's claims that is still a claim today: the same
/// subquestion, text and citations (ids are renumbered when earlier claims fall).
fn ids_now<'a>(
    then: &'a BTreeMap<String, ClaimDraft>,
    now: &[&'a ClaimDraft],
) -> BTreeMap<&'a str, &'a str> {
    let same = |a: &ClaimDraft, b: &ClaimDraft| {
        a.subquestion == b.subquestion && a.text == b.text && a.citations == b.citations
    };
    then.values()
        .filter_map(|then| {
            let found = now.iter().find(|c| same(c, then))?;
            Some((then.id.as_str(), found.id.as_str()))
        })
        .collect()
}

/// The parent's summary, and what it stood on.
#[derive(Clone, Debug, PartialEq)]
pub struct ParentSummary {
    pub summary: SynthesizeOut,
    /// Every claim of the parent, by its id.
    pub claims: BTreeMap<String, ClaimDraft>,
    /// Every disagreement the parent found.
    pub conflicts: Vec<Conflict>,
    /// A digest of what the step starts from (node key material).
    pub digest: String,
}

impl ParentSummary {
    /// The parent's summary with today's claim ids, when every claim it rests on is
    /// still a claim today and usable (`usable`: its verdict lets a writer cite it), and
    /// the disagreements are the parent's: its sentences then state only what still
    /// stands, and what is new is told by the sections and "What changed". `None`: the
    /// summary is written again.
    pub fn still_stands(
        &self,
        now: &[&ClaimDraft],
        usable: &dyn Fn(&str) -> bool,
        conflicts_now: &[Conflict],
    ) -> Option<SynthesizeOut> {
        let ids = ids_now(&self.claims, now);
        let mapped = |claims: &[String]| -> Option<Vec<String>> {
            let mut out: Vec<String> = claims
                .iter()
                .map(|id| ids.get(id.as_str()).map(|now| now.to_string()))
                .collect::<Option<_>>()?;
            out.sort();
            Some(out)
        };
        let then: BTreeSet<Vec<String>> = self
            .conflicts
            .iter()
            .map(|c| mapped(&c.claims))
            .collect::<Option<_>>()?;
        let now: BTreeSet<Vec<String>> = conflicts_now
            .iter()
            .map(|c| {
                let mut ids = c.claims.clone();
                ids.sort();
                ids
            })
            .collect();
        if then != now {
            return None;
        }
        let mut summary = self.summary.clone();
        for point in &mut summary.summary {
            point.claim_ids = point
                .claim_ids
                .iter()
                .map(|id| ids.get(id.as_str()).map(|now| now.to_string()))
                .collect::<Option<_>>()?;
            if !point.claim_ids.iter().all(|id| usable(id)) {
                return None;
            }
        }
        Some(summary)
    }
}

/// Each claim's distinctive words ([`SHARED_SUBJECT_TERMS`]).
fn distinctive_terms(claims: &[&ClaimDraft]) -> Vec<BTreeSet<String>> {
    let texts: Vec<&str> = claims.iter().map(|c| c.text.as_str()).collect();
    deepr_evidence::terms::distinctive_terms(&texts, DISTINCTIVE_SHARE, 3)
}

impl ParentExtract {
    /// The pool's candidates from documents the parent's sources did not hold.
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

    fn fixture() -> ParentReading {
        ParentReading {
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
            conflicts: BTreeMap::new(),
            summary: None,
            triage: BTreeMap::new(),
        }
    }

    #[test]
    fn claims_on_changed_documents_fall_and_only_new_documents_are_read_again() {
        let step = fixture()
            .extract_step("r0/sq1/extract", &serde_json::json!({"v": 1}))
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
        let reading = fixture();
        assert!(reading
            .extract_step("r0/sq1/extract", &serde_json::json!({"v": 2}))
            .is_none());
        assert!(reading
            .extract_step("r1/sq1/extract", &serde_json::json!({"v": 1}))
            .is_none());
    }

    #[test]
    fn standing_disagreements_are_carried_and_only_new_claims_are_asked_about() {
        let worded = |id: &str, doc: &str, text: &str| ClaimDraft {
            text: text.into(),
            ..claim(id, doc)
        };
        let then_a = worded("q1-c1", "a", "Fleet uptime was 99.2% in the quarter");
        let then_b = worded("q1-c2", "b", "Fleet uptime was 97.8% in the quarter");
        let then_c = worded(
            "q1-c3",
            "c",
            "Kestrelmoor Robotics headcount reached 318 people",
        );
        // The rest of the round: every claim names the company.
        let others: Vec<ClaimDraft> = ["revenue", "margin", "pricing", "roadmap", "hiring"]
            .iter()
            .enumerate()
            .map(|(i, topic)| {
                let text = format!("Kestrelmoor Robotics {topic} figure {i}");
                worded(&format!("q2-c{}", i + 1), "e", &text)
            })
            .collect();
        let mut reading = fixture();
        let mut then = vec![then_a.clone(), then_b.clone(), then_c.clone()];
        then.extend(others.iter().cloned());
        reading.extracted = [(
            "r0/q1/extract".to_string(),
            (
                Value::Null,
                ExtractOut {
                    claims: then,
                    degraded: None,
                },
            ),
        )]
        .into();
        reading.conflicts = [(
            "r0/conflict".to_string(),
            (
                Value::Null,
                ConflictOut {
                    conflicts: vec![Conflict {
                        subquestion: "q1".into(),
                        summary: "uptime differs".into(),
                        claims: vec!["q1-c1".into(), "q1-c2".into()],
                    }],
                    degraded: None,
                },
            ),
        )]
        .into();
        let step = reading
            .conflict_step("r0/conflict", 0, &Value::Null)
            .expect("same settings");
        assert!(reading
            .conflict_step("r1/conflict", 1, &Value::Null)
            .is_none());

        // Nothing new: the disagreement is carried under today's ids, no call.
        let (a, b, c) = (
            ClaimDraft {
                id: "q1-c3".into(),
                ..then_a.clone()
            },
            ClaimDraft {
                id: "q1-c1".into(),
                ..then_b.clone()
            },
            ClaimDraft {
                id: "q1-c2".into(),
                ..then_c.clone()
            },
        );
        let mut now: Vec<&ClaimDraft> = vec![&a, &b, &c];
        now.extend(&others);
        let delta = step.delta(&now);
        assert!(delta.asked.is_empty() && delta.new.is_empty());
        assert_eq!(delta.carried[0].claims, ["q1-c1", "q1-c3"]);

        // A new uptime figure: asked beside the uptime claims, not beside every claim
        // that names the company.
        let d = worded(
            "q1-c4",
            "d",
            "Kestrelmoor Robotics fleet uptime was 98.7% in the quarter",
        );
        now.push(&d);
        let delta = step.delta(&now);
        assert_eq!(delta.new, BTreeSet::from(["q1-c4".to_string()]));
        let asked: Vec<&str> = delta.asked.iter().map(String::as_str).collect();
        assert_eq!(asked, ["q1-c1", "q1-c3", "q1-c4"]);

        // A claim gone: its disagreement goes with it.
        let delta = step.delta(&[&b, &c]);
        assert!(delta.carried.is_empty());
    }

    #[test]
    fn triage_starts_from_the_last_rounds_verdicts_on_documents_still_there() {
        use crate::types::DocScope;
        use deepr_tasks::triage::Scope;
        let judged = |docs: &[&str]| TriageOut {
            verdicts: docs
                .iter()
                .map(|d| {
                    let scope = DocScope {
                        scope: Scope::OffTopic,
                        reason: "paperwork".into(),
                    };
                    (d.to_string(), scope)
                })
                .collect(),
            degraded: None,
        };
        let mut reading = fixture();
        reading.triage = [
            ("r0/triage".to_string(), (Value::Null, judged(&["same"]))),
            (
                "r1/triage".to_string(),
                (Value::Null, judged(&["same", "changed-then", "later"])),
            ),
        ]
        .into();
        let (kept, _) = reading.scopes(&Value::Null).expect("same settings");
        let docs: Vec<&str> = kept.verdicts.keys().map(String::as_str).collect();
        assert_eq!(
            docs,
            ["later", "same"],
            "the changed document is judged again"
        );
        assert!(reading.scopes(&serde_json::json!({"v": 2})).is_none());
        reading.triage.get_mut("r1/triage").unwrap().1.degraded = Some("down".into());
        assert!(
            reading.scopes(&Value::Null).is_none(),
            "a fallback's verdicts are not kept"
        );
    }

    #[test]
    fn a_summary_is_kept_while_every_claim_it_states_stands_and_no_disagreement_is_new() {
        use crate::types::SummaryPoint;
        let worded = |id: &str, doc: &str, text: &str| ClaimDraft {
            text: text.into(),
            ..claim(id, doc)
        };
        let revenue = worded("q1-c1", "board", "Revenue was $14.2M");
        let uptime = worded("q1-c2", "ops", "Fleet uptime was 99.2%");
        let headcount = worded("q1-c3", "hr", "Headcount was 318");
        let mut reading = fixture();
        reading.extracted = [(
            "r0/q1/extract".to_string(),
            (
                Value::Null,
                ExtractOut {
                    claims: vec![revenue.clone(), uptime.clone(), headcount.clone()],
                    degraded: None,
                },
            ),
        )]
        .into();
        reading.summary = Some((
            Value::Null,
            SynthesizeOut {
                summary: vec![SummaryPoint {
                    text: "Revenue was $14.2M and headcount 318.".into(),
                    claim_ids: vec!["q1-c1".into(), "q1-c3".into()],
                }],
                dropped: Vec::new(),
                degraded: None,
            },
        ));
        let parent = reading.summary_step(&Value::Null).expect("same settings");
        let all = |_: &str| true;
        // The uptime claim fell (its document changed) and a new one came: the summary
        // stated neither, so it stands, under today's ids.
        let (revenue_now, headcount_now) = (
            ClaimDraft {
                id: "q1-c1".into(),
                ..revenue.clone()
            },
            ClaimDraft {
                id: "q1-c2".into(),
                ..headcount.clone()
            },
        );
        let new = worded("q1-c3", "ops2", "Fleet uptime was 98.7%");
        let now = [&revenue_now, &headcount_now, &new];
        let kept = parent.still_stands(&now, &all, &[]).expect("it stands");
        assert_eq!(kept.summary[0].claim_ids, ["q1-c1", "q1-c2"]);
        // A claim it states fell: written again.
        assert!(parent
            .still_stands(&[&revenue_now, &new], &all, &[])
            .is_none());
        // A claim it states is no longer usable: written again.
        let not_headcount = |id: &str| id != "q1-c2";
        assert!(parent.still_stands(&now, &not_headcount, &[]).is_none());
        // A new disagreement: written again.
        let disagreement = Conflict {
            subquestion: "q1".into(),
            summary: "uptime differs".into(),
            claims: vec!["q1-c1".into(), "q1-c3".into()],
        };
        assert!(parent.still_stands(&now, &all, &[disagreement]).is_none());
    }
}
