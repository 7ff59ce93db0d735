//! Extract: maximal marginal relevance over the candidates — informative (high
//! weight), diverse (low overlap with claims already chosen, spread across documents).
//! The claim restates its sentence; a near-duplicate sentence from another document
//! that states the same numbers is cited as corroboration.

use std::collections::{BTreeMap, BTreeSet};

use deepr_orchestrator::terms::{content_terms, numbers};
use deepr_tasks::extract::{Answer, AnswerClaim, Extract, Input};

use crate::text::jaccard;
use crate::Heuristic;

/// Candidates below this share of the best candidate's weight are not chosen.
const RELEVANCE_FLOOR: f64 = 0.5;

impl Heuristic for Extract {
    /// 2: the relevance floor. 3: numbers compare canonically ("1,000" = "1000").
    /// 4: stale documents are quoted only when no current one has a candidate.
    const VERSION: u32 = 4;

    fn answer(input: &Input) -> Answer {
        let candidates = &input.candidates;
        let terms: Vec<BTreeSet<String>> = candidates
            .iter()
            .map(|c| content_terms(&c.text).into_iter().collect())
            .collect();
        // A relevance floor: a candidate far below the best one says little about the
        // subquestion, however diverse it would make the answer.
        let best_weight = candidates.iter().map(|c| c.weight).fold(0.0, f64::max);
        let floor = RELEVANCE_FLOOR * best_weight;
        // A document a newer one replaces (archived, superseded) is quoted only when no
        // current document has a candidate above the floor: its values are stale.
        let current_exists = candidates
            .iter()
            .any(|c| c.weight >= floor && !c.source.is_stale());
        let mut chosen: Vec<usize> = Vec::new();
        let mut per_doc: BTreeMap<&str, usize> = BTreeMap::new();
        while chosen.len() < input.max_claims {
            let mut best: Option<(f64, usize)> = None;
            for (i, candidate) in candidates.iter().enumerate() {
                if chosen.contains(&i)
                    || candidate.weight < floor
                    || (current_exists && candidate.source.is_stale())
                {
                    continue;
                }
                let redundancy = chosen
                    .iter()
                    .map(|&j| jaccard(&terms[i], &terms[j]))
                    .fold(0.0, f64::max);
                if redundancy > 0.6 {
                    continue;
                }
                let same_doc = *per_doc.get(candidate.doc.as_str()).unwrap_or(&0) as f64;
                let value = candidate.weight - 0.7 * redundancy - 0.15 * same_doc;
                if best.is_none_or(|(b, _)| value > b) {
                    best = Some((value, i));
                }
            }
            let Some((_, i)) = best else { break };
            chosen.push(i);
            *per_doc.entry(candidates[i].doc.as_str()).or_default() += 1;
        }
        let claims = chosen
            .iter()
            .map(|&i| {
                let candidate = &candidates[i];
                let mut ids = vec![candidate.id.clone()];
                // Corroboration only from a sentence that states the same numbers: a
                // near-twin with other figures is a disagreement, not support.
                let own_numbers = numbers(&candidate.text);
                if let Some(other) = candidates.iter().zip(&terms).find(|(c, t)| {
                    c.doc != candidate.doc
                        && jaccard(&terms[i], t) >= 0.5
                        && numbers(&c.text) == own_numbers
                }) {
                    ids.push(other.0.id.clone());
                }
                AnswerClaim {
                    text: candidate
                        .text
                        .trim_start_matches(['-', '*', '•', ' '])
                        .to_string(),
                    sentence_ids: ids,
                }
            })
            .collect();
        Answer { claims }
    }
}

#[cfg(test)]
mod tests {
    use deepr_tasks::extract::Candidate;

    use super::*;

    #[test]
    fn prefers_diverse_sentences() {
        let candidate = |id: &str, text: &str, weight: f64, doc: &str| Candidate {
            id: id.into(),
            text: text.into(),
            weight,
            doc: doc.into(),
            title: String::new(),
            source: Default::default(),
        };
        let input = Input {
            subquestion: "q".into(),
            max_claims: 2,
            candidates: vec![
                candidate(
                    "c1",
                    "The rollback journal stores original page content.",
                    1.0,
                    "a",
                ),
                candidate(
                    "c2",
                    "The rollback journal stores original page content too.",
                    0.9,
                    "a",
                ),
                candidate(
                    "c3",
                    "WAL mode appends changes to a separate log file.",
                    0.5,
                    "b",
                ),
            ],
        };
        let ids: Vec<String> = Extract::answer(&input)
            .claims
            .iter()
            .map(|c| c.sentence_ids[0].clone())
            .collect();
        assert_eq!(ids, ["c1", "c3"]);
    }
}
