//! Reading documents as documents (`--reading documents`, a model extractor only).
//!
//! A ranked pool is a search result: a capable model shown the units that share words
//! with the question finds what the ranking found, and never the "Incidents" item of a
//! report whose headings would have told it where to look. Here score hands over every
//! unit of the found documents ([`crate::score::Reader::Documents`]: unmatched ones at
//! weight 0) and [`pool`] shows the model documents: in order of their best-ranked unit,
//! each one's units in document order under their headings — a short document whole, a
//! long one by its sections, those holding its best-ranked units first — until
//! [`WHOLE_SHARE`] of the call's token budget ([`DOCUMENT_TOKENS`]) is spent; the rest
//! goes to the best-ranked units of the documents not read whole, so a fact ranked high
//! in the sixth document is still seen. Each document's units are shown together, in
//! document order; units are renumbered `c1…` in the order shown. Pure: the archive is
//! read, nothing else.

use std::collections::{BTreeMap, BTreeSet};

use deepr_orchestrator::tokens::count_tokens;
use deepr_orchestrator::{DocMeta, TextArchive};

use crate::types::{Candidate, ScoreOut};

/// Tokens of unit text one extract call is shown when it reads documents (the ranked
/// pool's 40 units are some 1,500).
pub const DOCUMENT_TOKENS: usize = 5_000;
/// A document up to this many tokens is shown whole; a longer one by its sections.
pub const WHOLE_DOCUMENT_TOKENS: usize = 1_500;
/// Share of the budget spent reading documents whole (or by their sections); the
/// rest shows the best-ranked units of the others.
pub const WHOLE_SHARE: f64 = 0.6;
/// Tokens a line costs beside its text (`  c12: "…"`).
const LINE_TOKENS: usize = 6;

/// One unit as it may be shown: its candidate, its rank in score's order (unmatched
/// units rank after every matched one), its tokens and its headings.
struct Unit {
    candidate: Candidate,
    rank: usize,
    matched: bool,
    tokens: usize,
    headings: Vec<String>,
}

/// The documents a model reads for one subquestion, within `budget` tokens of unit text.
pub fn pool(scored: &ScoreOut, archive: &dyn TextArchive, budget: usize) -> ScoreOut {
    let docs: BTreeMap<&str, &DocMeta> = scored
        .sources
        .iter()
        .map(|s| (s.doc.content_sha256.as_str(), &s.doc))
        .collect();
    // Each document's candidates, documents in order of their first (best) one.
    let mut order: Vec<&str> = Vec::new();
    let mut of_doc: BTreeMap<&str, Vec<(usize, &Candidate)>> = BTreeMap::new();
    for (rank, candidate) in scored.candidates.iter().enumerate() {
        let doc = candidate.content_sha256.as_str();
        if !of_doc.contains_key(doc) {
            order.push(doc);
        }
        of_doc.entry(doc).or_default().push((rank, candidate));
    }
    let mut by_doc: BTreeMap<&str, Vec<Unit>> = BTreeMap::new();
    for (doc, candidates) in &of_doc {
        let Some(text) = archive.get(doc) else {
            continue;
        };
        let index = docs.get(doc).map(|d| d.outline.heading_index(&text.text));
        let units = candidates.iter().filter_map(|(rank, candidate)| {
            let quote = text.quote(candidate.sentence, candidate.sentence_end)?;
            let start = text.sentences.get(candidate.sentence as usize)?.start;
            let headings = index.as_ref().map_or_else(Vec::new, |index| {
                index.path_at(start).iter().map(|h| h.to_string()).collect()
            });
            Some(Unit {
                candidate: (*candidate).clone(),
                rank: *rank,
                matched: candidate.weight > 0.0,
                tokens: count_tokens(quote) as usize + LINE_TOKENS,
                headings,
            })
        });
        by_doc.insert(doc, units.collect());
    }
    // Documents in order of their best unit: one holding a matched unit before any
    // that holds none (score ranks every matched unit first).
    let mut shown: BTreeSet<(usize, u32)> = BTreeSet::new();
    let whole_budget = (budget as f64 * WHOLE_SHARE) as usize;
    let mut left = budget;
    for (at, doc) in order.iter().enumerate() {
        let Some(units) = by_doc.get_mut(doc) else {
            continue;
        };
        units.sort_by_key(|u| u.candidate.sentence);
        let room = whole_budget.saturating_sub(budget - left);
        if room < LINE_TOKENS * 4 {
            break;
        }
        for i in chosen_units(units, room) {
            left = left.saturating_sub(units[i].tokens);
            shown.insert((at, units[i].candidate.sentence));
        }
    }
    // The rest of the budget: the best-ranked units not shown yet, wherever they stand.
    let mut ranked: Vec<(usize, usize, &Unit)> = order
        .iter()
        .enumerate()
        .filter_map(|(at, doc)| by_doc.get(doc).map(|units| (at, units)))
        .flat_map(|(at, units)| units.iter().map(move |u| (u.rank, at, u)))
        .filter(|(_, _, u)| u.matched)
        .collect();
    ranked.sort_by_key(|(rank, _, _)| *rank);
    for (_, at, unit) in ranked {
        if unit.tokens <= left && shown.insert((at, unit.candidate.sentence)) {
            left -= unit.tokens;
        }
    }
    // Each document's units together, in document order, documents by their best unit.
    let mut shown: Vec<Candidate> = shown
        .into_iter()
        .filter_map(|(at, sentence)| {
            let units = by_doc.get(order.get(at)?)?;
            let unit = units.iter().find(|u| u.candidate.sentence == sentence)?;
            Some(unit.candidate.clone())
        })
        .collect();
    for (i, candidate) in shown.iter_mut().enumerate() {
        candidate.cid = format!("c{}", i + 1);
    }
    ScoreOut {
        sources: scored.sources.clone(),
        candidates: shown,
        rerank: scored.rerank.clone(),
        degraded: scored.degraded.clone(),
    }
}

/// Which of a document's units (in document order) are shown with `left` tokens to
/// spend: all of a short one that fits; else its sections (runs of units under the
/// same headings) in order of their best-ranked matched unit, each whole when it
/// fits and by its matched units in rank order when it does not; a long document
/// takes at most [`WHOLE_DOCUMENT_TOKENS`] or a third of the call's budget, whichever
/// is more. A document none of whose units matched is shown only whole.
fn chosen_units(units: &[Unit], left: usize) -> Vec<usize> {
    let total: usize = units.iter().map(|u| u.tokens).sum();
    if total <= left.min(WHOLE_DOCUMENT_TOKENS) {
        return (0..units.len()).collect();
    }
    if !units.iter().any(|u| u.matched) {
        return Vec::new();
    }
    let mut room = left.min(WHOLE_DOCUMENT_TOKENS.max(left / 3));
    let mut sections: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
    let mut start = 0;
    for i in 1..=units.len() {
        if i == units.len() || units[i].headings != units[start].headings {
            let best = units[start..i]
                .iter()
                .filter(|u| u.matched)
                .map(|u| u.rank)
                .min();
            if let Some(best) = best {
                sections.push((best, start..i));
            }
            start = i;
        }
    }
    sections.sort_by_key(|(best, range)| (*best, range.start));
    let mut chosen: Vec<usize> = Vec::new();
    for (_, range) in sections {
        let cost: usize = units[range.clone()].iter().map(|u| u.tokens).sum();
        if cost <= room {
            room -= cost;
            chosen.extend(range);
            continue;
        }
        let mut matched: Vec<usize> = range.filter(|&i| units[i].matched).collect();
        matched.sort_by_key(|&i| units[i].rank);
        for i in matched {
            if units[i].tokens <= room {
                room -= units[i].tokens;
                chosen.push(i);
            }
        }
    }
    chosen.sort_unstable();
    chosen
}

#[cfg(test)]
mod tests;
