//! How each fetched document scores for a subquestion: relevance (its retrieval rank and
//! the share of the question's terms it holds), authority and recency.

use std::collections::{BTreeMap, BTreeSet};

use super::stems::score_terms;
use deepr_orchestrator::{ArchivedText, TextArchive};

use crate::rerank::round4;
use crate::types::{FetchOut, ScoredSource};

/// Each fetched document's score (relevance, authority, recency), best first, and its
/// archived text.
pub(super) fn score_sources(
    fetched: &FetchOut,
    query_terms: &BTreeSet<String>,
    archive: &dyn TextArchive,
) -> (Vec<ScoredSource>, BTreeMap<String, ArchivedText>) {
    let max_rrf = fetched
        .docs
        .iter()
        .map(|(_, rrf)| *rrf)
        .fold(0.0_f64, f64::max);
    let newest_year = fetched
        .docs
        .iter()
        .filter_map(|(d, _)| year(d.date.as_deref()))
        .max();

    let mut sources = Vec::new();
    let mut texts = BTreeMap::new();
    for (doc, rrf) in &fetched.docs {
        let Some(text) = archive.get(&doc.content_sha256) else {
            continue;
        };
        let doc_terms: BTreeSet<String> = score_terms(&doc.title)
            .into_iter()
            .chain(score_terms(&text.text))
            .collect();
        let matched = query_terms
            .iter()
            .filter(|t| doc_terms.contains(*t))
            .count();
        let term_share = if query_terms.is_empty() {
            0.0
        } else {
            matched as f64 / query_terms.len() as f64
        };
        let rank_share = if max_rrf > 0.0 { rrf / max_rrf } else { 0.0 };
        let relevance = 0.5 * rank_share + 0.5 * term_share;
        let recency = match (year(doc.date.as_deref()), newest_year) {
            _ if doc.outline.is_stale() => 0.0,
            (Some(y), Some(newest)) => (1.0 - f64::from(newest.saturating_sub(y)) / 10.0).max(0.0),
            _ => 0.5,
        };
        let authority = doc.authority.clamp(0.0, 1.0);
        let score = round4(0.6 * relevance + 0.25 * authority + 0.15 * recency);
        sources.push(ScoredSource {
            off_topic: None,
            background: false,
            doc: doc.clone(),
            relevance: round4(relevance),
            authority,
            recency: round4(recency),
            score,
        });
        texts.insert(doc.content_sha256.clone(), text);
    }
    sources.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.doc.doc_key.cmp(&b.doc.doc_key))
    });
    (sources, texts)
}

fn year(date: Option<&str>) -> Option<u32> {
    date.and_then(|d| d.get(..4)).and_then(|y| y.parse().ok())
}
