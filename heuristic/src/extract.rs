//! Extract: maximal marginal relevance over the candidates — informative (high
//! weight), diverse (low overlap with claims already chosen, spread across documents).
//! The claim restates its sentence; a near-duplicate sentence from another document
//! that states the same numbers is cited as corroboration.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::terms::{content_terms, numbers};
use deepr_tasks::extract::{Answer, AnswerClaim, Candidate, Extract, Input};

use crate::text::jaccard;
use crate::Heuristic;

/// Candidates below this share of the reference candidate's weight are not chosen.
const RELEVANCE_FLOOR: f64 = 0.5;
/// The reference is the best candidate when few claims are asked for, else the
/// `ceil(max_claims / FLOOR_RANK_SHARE)`-th best.
const FLOOR_RANK_SHARE: usize = 4;

impl Heuristic for Extract {
    /// 2: the relevance floor. 3: numbers compare canonically ("1,000" = "1000").
    /// 4: stale documents are quoted only when no current one has a candidate.
    /// 5: rows of one table are compared by their values, not their shared labels;
    /// short units of one document join one claim (up to three quotes).
    /// 6: a table row's cell separators are not counted as words of a short unit.
    /// 7: a stale document is quoted only when no current one has a candidate at all;
    /// the floor is taken from the candidates it may quote.
    /// 8: a list item is stated after its list's lead-in; a near-twin of a chosen
    /// sentence that states other figures (another document) is no repetition.
    /// 9: asked for many claims, the floor is taken from the candidate a quarter of
    /// the way down them, not from the best alone (one outlier row no longer leaves a
    /// section three claims).
    const VERSION: u32 = 9;

    fn answer(input: &Input) -> Answer {
        let candidates = &input.candidates;
        let terms: Vec<BTreeSet<String>> = candidates
            .iter()
            .map(|c| content_terms(&row_values(&c.text)).into_iter().collect())
            .collect();
        // A document a newer one replaces (archived, superseded) is quoted only when no
        // current document has a candidate: its values are stale. (Above the floor was
        // not enough: once a later round has cited the current units, the stale versions
        // of the same figures led the pool.)
        let current_exists = candidates.iter().any(|c| !c.source.is_stale());
        // A relevance floor: a candidate far below the best one it may quote says little
        // about the subquestion, however diverse it would make the answer.
        let mut weights: Vec<f64> = candidates
            .iter()
            .filter(|c| !(current_exists && c.source.is_stale()))
            .map(|c| c.weight)
            .collect();
        weights.sort_by(|a, b| b.total_cmp(a));
        let reference = input.max_claims.div_ceil(FLOOR_RANK_SHARE).max(1);
        let best_weight = weights
            .get(reference - 1)
            .or(weights.last())
            .copied()
            .unwrap_or(0.0);
        let floor = RELEVANCE_FLOOR * best_weight;
        // Chosen candidates in claims: a short fragment (a table row, a list item) joins an
        // earlier short claim of the same document, up to three quotes, so the rows of
        // one table read as one claim; `max_claims` bounds the claims, not the rows.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut chosen: Vec<usize> = Vec::new();
        let mut per_doc: BTreeMap<&str, usize> = BTreeMap::new();
        loop {
            let mut best: Option<(f64, usize)> = None;
            for (i, candidate) in candidates.iter().enumerate() {
                if chosen.contains(&i)
                    || candidate.weight < floor
                    || (current_exists && candidate.source.is_stale())
                    || (groups.len() >= input.max_claims
                        && joinable_group(&groups, candidates, i).is_none())
                {
                    continue;
                }
                // A twin in other words is a repetition; a twin in the same words with
                // other figures (another document) is a disagreement to show.
                let redundancy = chosen
                    .iter()
                    .map(|&j| jaccard(&terms[i], &terms[j]))
                    .zip(chosen.iter())
                    .filter(|&(share, &j)| {
                        share < SAME_WORDS || !disagree(&candidates[i], &candidates[j])
                    })
                    .map(|(share, _)| share)
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
            match joinable_group(&groups, candidates, i) {
                Some(g) => groups[g].push(i),
                None => groups.push(vec![i]),
            }
        }
        let claims = groups
            .iter()
            .map(|group| claim_of(group, candidates, &terms))
            .collect();
        Answer { claims }
    }
}

/// Share of content words (figures aside) two sentences hold in common to say the same
/// thing in the same words ("The default page size is 4096 bytes." / "… 1024 bytes.").
const SAME_WORDS: f64 = 0.8;

/// Whether two candidates of different documents state different figures: said in the
/// same words, the second is a disagreement to show, not a repetition to skip.
fn disagree(a: &Candidate, b: &Candidate) -> bool {
    let (x, y) = (numbers(&a.text), numbers(&b.text));
    a.doc != b.doc && !x.is_empty() && !y.is_empty() && x.iter().all(|n| !y.contains(n))
}

/// Most quotes one claim joins (within the task's limit on sentence IDs per claim).
const MAX_JOINED: usize = 3;

/// The group a short candidate may join: an earlier one of the same document whose
/// members are all short and that has room.
fn joinable_group(groups: &[Vec<usize>], candidates: &[Candidate], i: usize) -> Option<usize> {
    if !is_short(&candidates[i].text) {
        return None;
    }
    groups.iter().position(|group| {
        group.len() < MAX_JOINED
            && group
                .iter()
                .all(|&j| candidates[j].doc == candidates[i].doc && is_short(&candidates[j].text))
    })
}

/// One claim: a lone candidate restated (with a corroborating sentence from another
/// document that states the same numbers), or short units joined by semicolons.
fn claim_of(group: &[usize], candidates: &[Candidate], terms: &[BTreeSet<String>]) -> AnswerClaim {
    let unit_text = |i: usize| {
        let text = candidates[i].text.trim_start_matches(['-', '*', '•', ' ']);
        // Items joined after their lead-in read without their numbers.
        let text = match candidates[i].source.lead_in {
            Some(_) => crate::text::without_list_number(text),
            None => text,
        };
        text.trim_end_matches(['.', ';']).to_string()
    };
    if let [i] = *group {
        let candidate = &candidates[i];
        let mut ids = vec![candidate.id.clone()];
        // Corroboration only from a sentence that states the same numbers: a
        // near-twin with other figures is a disagreement, not support.
        let own_numbers = numbers(&candidate.text);
        if let Some(other) = candidates.iter().zip(terms).find(|(c, t)| {
            c.doc != candidate.doc
                && jaccard(&terms[i], t) >= 0.5
                && numbers(&c.text) == own_numbers
        }) {
            ids.push(other.0.id.clone());
        }
        let text = candidate.text.trim_start_matches(['-', '*', '•', ' ']);
        return AnswerClaim {
            text: after_lead_in(candidate.source.lead_in.as_deref(), text),
            sentence_ids: ids,
        };
    }
    let mut members = group.to_vec();
    members.sort_by_key(|&i| candidate_order(&candidates[i].id));
    let items = members
        .iter()
        .map(|&i| unit_text(i))
        .collect::<Vec<_>>()
        .join("; ");
    // Items of one list are read after its lead-in; rows of a table stand as they are.
    let lead_in = members
        .iter()
        .map(|&i| candidates[i].source.lead_in.as_deref())
        .reduce(|a, b| if a == b { a } else { None })
        .flatten();
    AnswerClaim {
        text: after_lead_in(lead_in, &items),
        sentence_ids: members.iter().map(|&i| candidates[i].id.clone()).collect(),
    }
}

/// A list item as a sentence: after its list's lead-in ("… meet all of the following
/// requirements: the PRAGMA journal_mode is not OFF, MEMORY, or WAL"), without its
/// number; an item without a lead-in as it is.
fn after_lead_in(lead_in: Option<&str>, item: &str) -> String {
    let Some(lead_in) = lead_in else {
        return item.to_string();
    };
    let item = crate::text::without_list_number(item.trim());
    let mut chars = item.chars();
    // "The PRAGMA …" reads "the PRAGMA …" after a colon; "SQLite …" and "PRAGMA …" keep
    // their capitals.
    let item = match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && second.is_lowercase() => {
            format!("{}{}", first.to_lowercase(), &item[first.len_utf8()..])
        }
        _ => item.to_string(),
    };
    format!("{} {item}", lead_in.trim_end())
}

/// Candidates in the order they were shown (`c12` after `c3`).
fn candidate_order(id: &str) -> (usize, String) {
    let n = id
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .unwrap_or(usize::MAX);
    (n, id.to_string())
}

/// Words under which a unit without a final stop is short.
const SHORT_UNIT_WORDS: usize = 20;

/// A short unit that is not a sentence: a table row or a list item (no final stop).
/// Sentences are never joined — each reads as its own claim.
fn is_short(text: &str) -> bool {
    let text = text.trim_end();
    // A table row's cell separators are no words.
    let words = text
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    !text.ends_with(['.', '!', '?', '…', '。', '！', '？']) && words < SHORT_UNIT_WORDS
}

/// A table row's values without its column labels (`Round: Seed · Amount: $3.5M` →
/// `Seed $3.5M`): rows of one table share every label, which says nothing about
/// whether they state the same thing. Other text is returned as it is.
fn row_values(text: &str) -> String {
    if !text.contains(" · ") {
        return text.to_string();
    }
    text.split(" · ")
        .map(|cell| cell.split_once(": ").map_or(cell, |(_, value)| value))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outlier_does_not_set_the_floor_when_many_claims_are_asked() {
        let candidate = |id: &str, text: &str, weight: f64| Candidate {
            id: id.into(),
            text: text.into(),
            weight,
            doc: id.into(),
            title: String::new(),
            source: Default::default(),
        };
        let candidates = vec![
            candidate("c1", "Plan: Professional · Price per technician: £49", 3.0),
            candidate("c2", "Revenue for the half was £20.9M, up 22.9%.", 1.4),
            candidate("c3", "ARR reached £41.7M, up 29% year on year.", 1.3),
            candidate("c4", "Net new ARR in the quarter was £2.2M.", 1.0),
        ];
        let chosen = |max_claims: usize| -> Vec<String> {
            let input = Input {
                subquestion: "q".into(),
                max_claims,
                candidates: candidates.clone(),
            };
            Extract::answer(&input)
                .claims
                .iter()
                .flat_map(|c| c.sentence_ids.clone())
                .collect()
        };
        // Eight claims asked: the floor is half the second best's weight (0.7).
        assert_eq!(chosen(8).len(), 4, "{:?}", chosen(8));
        // Four asked: half the best's (1.5), as before — only the outlier stands.
        assert_eq!(chosen(4), ["c1"]);
    }

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
        // A near-twin from another document with other figures is a disagreement: kept.
        let input = Input {
            subquestion: "q".into(),
            max_claims: 2,
            candidates: vec![
                candidate("c1", "The default page size is 4096 bytes.", 1.0, "a"),
                candidate("c2", "The default page size is 1024 bytes.", 0.9, "b"),
                candidate("c3", "WAL mode appends changes to a log.", 0.6, "b"),
            ],
        };
        let ids: Vec<String> = Extract::answer(&input)
            .claims
            .iter()
            .map(|c| c.sentence_ids[0].clone())
            .collect();
        assert_eq!(ids, ["c1", "c2"]);
    }

    #[test]
    fn items_of_one_list_are_stated_after_its_lead_in_without_their_numbers() {
        let item = |id: &str, text: &str, weight: f64| Candidate {
            id: id.into(),
            text: text.into(),
            weight,
            doc: "a".into(),
            title: String::new(),
            source: deepr_tasks::extract::SourceNote {
                lead_in: Some("It is created when all of the following hold:".into()),
                ..Default::default()
            },
        };
        let input = Input {
            subquestion: "q".into(),
            max_claims: 1,
            candidates: vec![
                item("c1", "1. The database is modified", 1.0),
                item("c2", "2. The PRAGMA journal_mode is not OFF", 0.9),
            ],
        };
        let claims = Extract::answer(&input).claims;
        assert_eq!(
            claims[0].text,
            "It is created when all of the following hold: the database is modified; The PRAGMA \
             journal_mode is not OFF"
        );
    }

    #[test]
    fn a_table_row_is_short_by_its_words_not_its_cell_separators() {
        // 17 words and 5 separators: short, so rows of one table join one claim.
        let row = "Agency: LVTA · Operating cost per hour: $168.40 · Cost per boarding: $4.05 · Farebox: 28.1% · Rank: 2 · Year: 2025";
        assert!(row.split_whitespace().count() >= SHORT_UNIT_WORDS);
        assert!(is_short(row));
        assert!(!is_short("A sentence ends with a stop."));
        let long = "word ".repeat(SHORT_UNIT_WORDS);
        assert!(!is_short(long.trim()));
    }

    #[test]
    fn rows_of_one_table_are_told_apart_by_their_values() {
        let row = |id: &str, text: &str| Candidate {
            id: id.into(),
            text: text.into(),
            weight: 1.0,
            doc: "board".into(),
            title: String::new(),
            source: Default::default(),
        };
        let input = Input {
            subquestion: "funding rounds".into(),
            max_claims: 2,
            candidates: vec![
                row("c1", "Round: Seed · Date: Jun 2019 · Amount: $3.5M · Lead investor: Tallgrass Seed Fund"),
                row("c2", "Round: Series A · Date: Mar 2021 · Amount: $12M · Lead investor: Brightwater Ventures"),
                row("c3", "Round: Series B · Date: Apr 2023 · Amount: $22M · Lead investor: Harrow Partners"),
                row("c4", "Round: Series C · Date: Oct 2025 · Amount: $48M · Lead investor: Fenwick Ridge Capital"),
            ],
        };
        // Four short rows in two claims; none is redundant with another.
        let claims = Extract::answer(&input).claims;
        let ids: Vec<Vec<String>> = claims.iter().map(|c| c.sentence_ids.clone()).collect();
        assert_eq!(ids.concat().len(), 4, "{ids:?}");
        assert_eq!(claims.len(), 2);
        assert!(claims[0].text.contains("; "), "{}", claims[0].text);
    }
}
