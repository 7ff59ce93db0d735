//! Stage outputs: what each node stores in its checkpoint and hands downstream.

use deepr_evidence::report::{Coverage, Verdict};
use deepr_orchestrator::{DocMeta, SearchHit};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subq {
    pub id: String,
    pub text: String,
    pub round: u32,
    /// The subquestion a follow-up deepens.
    pub parent: Option<String>,
    /// The search queries the plan wrote with it (round 0): its subquery step then
    /// makes no call of its own. Empty when the plan wrote none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoutOut {
    pub docs: Vec<DocMeta>,
    pub headings: Vec<String>,
    pub coverage: Vec<Coverage>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecomposeOut {
    pub subquestions: Vec<Subq>,
    pub degraded: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubqueryOut {
    pub queries: Vec<String>,
    pub ranking_question: String,
    pub degraded: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FusedHit {
    pub hit: SearchHit,
    /// Weighted reciprocal-rank-fusion score Σ w / (60 + rank).
    pub rrf: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetrieveOut {
    pub hits: Vec<FusedHit>,
    pub coverage: Vec<Coverage>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchFailure {
    pub doc_key: String,
    pub locator: String,
    pub status: String,
    pub detail: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchOut {
    /// Fetched documents with their fused retrieval score.
    pub docs: Vec<(DocMeta, f64)>,
    pub failures: Vec<FetchFailure>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoredSource {
    pub doc: DocMeta,
    pub relevance: f64,
    pub authority: f64,
    pub recency: f64,
    pub score: f64,
    /// Why triage judged the document off-topic for the brief (`stages/src/triage.rs`):
    /// none of its units is a candidate and it is never followed up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_topic: Option<String>,
    /// Triage judged it background (about the subject, context rather than the facts
    /// asked): its units may be quoted, but it is never followed up as a subject.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

/// A candidate sentence shown to the extractor under a prompt-local ID.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub cid: String,
    pub content_sha256: String,
    /// The first sentence of the quote.
    pub sentence: u32,
    /// The last, when the candidate is quoted with the sentence before it (it leans on
    /// it: "This is how…").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentence_end: Option<u32>,
    pub weight: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreOut {
    pub sources: Vec<ScoredSource>,
    pub candidates: Vec<Candidate>,
    /// How the candidates were re-ranked by meaning; absent when no embedding model
    /// was wired (lexical order only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<Rerank>,
    /// Why re-ranking failed (the word order was kept), so that `resume
    /// --retry-degraded` ranks the step again once the model is back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
}

/// The embedding re-ranker's part in a score step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rerank {
    /// The model's readable name.
    pub model: String,
    /// The model's id (a hash of its files), as in the node key.
    pub model_id: String,
    /// Lexical candidates it re-ranked.
    pub sentences: u32,
    /// Why it could not (the lexical order was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// A cited sentence: (document content hash, sentence index).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SentenceRef {
    pub content_sha256: String,
    pub sentence: u32,
    /// The quote's last sentence when it spans more than `sentence`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentence_end: Option<u32>,
    /// `free-quote` strategy only: the quote exactly as the model wrote it (kept, never
    /// repaired, so its verbatim rate can be measured). `sentence` is then the sentence
    /// that best matches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_quote: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimDraft {
    pub id: String,
    pub subquestion: String,
    pub text: String,
    pub citations: Vec<SentenceRef>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExtractOut {
    pub claims: Vec<ClaimDraft>,
    pub degraded: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeOut {
    /// (claim id, verdict), sorted by claim id.
    pub verdicts: Vec<(String, Verdict)>,
    pub calls: u32,
    pub degraded: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConflictOut {
    pub conflicts: Vec<deepr_evidence::report::Conflict>,
    pub degraded: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeepenOut {
    pub followups: Vec<Subq>,
    /// Why the run deepens, or why it stops.
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryPoint {
    pub text: String,
    pub claim_ids: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthesizeOut {
    /// The summary's sentences that stand on their quotes.
    pub summary: Vec<SummaryPoint>,
    /// Sentences dropped by the grounding check.
    #[serde(default)]
    pub dropped: Vec<deepr_evidence::report::DroppedSentence>,
    pub degraded: Option<String>,
}

/// One article section as written: its sentences that stand on their quotes, and
/// those dropped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SectionOut {
    /// The first subquestion's id (the section's id).
    pub section: String,
    pub subquestions: Vec<String>,
    pub heading: String,
    pub paragraphs: Vec<deepr_evidence::report::Paragraph>,
    pub dropped: Vec<deepr_evidence::report::DroppedSentence>,
    pub degraded: Option<String>,
}

/// A document's scope as triage judged it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocScope {
    pub scope: deepr_tasks::triage::Scope,
    /// Why (model text, cleaned; the offline rule's words when the fallback answered).
    pub reason: String,
}

/// Every document judged so far in the run — this round's and the earlier rounds' —
/// by content hash.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriageOut {
    pub verdicts: std::collections::BTreeMap<String, DocScope>,
    /// Why a batch's answer was unusable (the offline rule answered it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
}

impl TriageOut {
    /// Why `content_sha256` is off-topic: `Some(reason)` when judged so, `None` when
    /// judged in scope or background, and the title rule's answer when never judged.
    pub fn off_topic(
        &self,
        doc: &DocMeta,
        headings: &[String],
        brief: &deepr_tasks::brief::Brief,
    ) -> Option<String> {
        match self.verdicts.get(&doc.content_sha256) {
            Some(judged) if judged.scope == deepr_tasks::triage::Scope::OffTopic => {
                Some(judged.reason.clone())
            }
            Some(_) => None,
            None => {
                deepr_tasks::triage::off_topic_by_name(&doc.title, &doc.locator, headings, brief)
            }
        }
    }

    /// Whether triage judged `content_sha256` background.
    pub fn is_background(&self, content_sha256: &str) -> bool {
        self.verdicts
            .get(content_sha256)
            .is_some_and(|judged| judged.scope == deepr_tasks::triage::Scope::Background)
    }
}
