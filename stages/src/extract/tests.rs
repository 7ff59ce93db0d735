//! Tests of `extract` (a child module, so they reach its private functions).

use super::*;
use crate::types::Candidate;

fn candidate(doc: &str, sentence: u32, sentence_end: Option<u32>) -> Candidate {
    Candidate {
        cid: format!("{doc}{sentence}"),
        content_sha256: doc.into(),
        sentence,
        sentence_end,
        weight: 1.0,
    }
}

fn scored(candidates: Vec<Candidate>) -> ScoreOut {
    ScoreOut {
        candidates,
        ..ScoreOut::default()
    }
}

fn kept(out: &ScoreOut) -> Vec<String> {
    out.candidates.iter().map(|c| c.cid.clone()).collect()
}

#[test]
fn each_sentence_goes_to_the_subquestion_that_ranks_it_best() {
    let round = vec![
        // q1 ranks a1 first, b5 third; shares a1 with q2 (second there) and b5 (first).
        scored(vec![
            candidate("a", 1, None),
            candidate("c", 2, None),
            candidate("b", 5, None),
        ]),
        // q2: b4–b5 is one quote spanning two sentences; it overlaps b5.
        scored(vec![candidate("b", 4, Some(5)), candidate("a", 1, None)]),
        // q3 ties q1 on c2 (second in both): the earlier subquestion keeps it.
        scored(vec![candidate("d", 9, None), candidate("c", 2, None)]),
    ];
    assert_eq!(kept(&partition(&round, 0)), ["a1", "c2"]);
    assert_eq!(kept(&partition(&round, 1)), ["b4"]);
    assert_eq!(kept(&partition(&round, 2)), ["d9"]);
    // Every candidate of the round is offered to exactly one subquestion.
    let offered: usize = (0..3).map(|i| partition(&round, i).candidates.len()).sum();
    assert_eq!(offered, 4);
    // Out of range: nothing, never a panic.
    assert!(partition(&round, 3).candidates.is_empty());
    // A round of one keeps everything.
    assert_eq!(kept(&partition(&round[..1], 0)), ["a1", "c2", "b5"]);
}

#[test]
fn a_model_reads_its_own_pool_uncut_and_the_heuristic_its_share() {
    // 100 candidates for q1, the same best one at the top of q2's list.
    let mine: Vec<Candidate> = (0..100).map(|i| candidate("a", i, None)).collect();
    let round = vec![
        scored(mine),
        scored(vec![candidate("a", 0, None), candidate("z", 1, None)]),
    ];
    // A model: up to its pool and what score joined after it (as many again), in rank
    // order, nothing given away to q2.
    let model = candidates_for(&round, 0, true, 40);
    assert_eq!(model.candidates.len(), 2 * 40);
    assert_eq!(model.candidates[0].cid, "a0");
    assert_eq!(candidates_for(&round, 1, true, 40).candidates.len(), 2);
    // The heuristic: its 30, partitioned (a0 ties at rank 1; the earlier q1 keeps it).
    let heuristic = candidates_for(&round, 0, false, 40);
    assert_eq!(heuristic.candidates.len(), crate::score::MAX_CANDIDATES);
    assert_eq!(kept(&candidates_for(&round, 1, false, 40)), ["z1"]);
}

/// `docs` with their status (`None`: current) as a subquestion's sources.
fn with_sources(mut out: ScoreOut, docs: &[(&str, Option<&str>)]) -> ScoreOut {
    out.sources = docs
        .iter()
        .map(|(doc, status)| crate::types::ScoredSource {
            off_topic: None,
            background: false,
            doc: deepr_orchestrator::DocMeta {
                doc_key: doc.to_string(),
                locator: doc.to_string(),
                title: doc.to_string(),
                content_sha256: doc.to_string(),
                date: None,
                authority: 0.5,
                outline: deepr_orchestrator::Outline {
                    status: status.map(str::to_string),
                    ..Default::default()
                },
            },
            relevance: 0.5,
            authority: 0.5,
            recency: 0.5,
            score: 0.5,
        })
        .collect();
    out
}

#[test]
fn the_heuristic_reads_an_old_version_only_when_nothing_current_answers() {
    // q1 ranks the current figures first and takes them; q2 ranked the same current
    // rows, and an archived report's and a draft's versions of them after.
    let docs = [
        ("now", None),
        ("old", Some("archived")),
        ("pre", Some("draft")),
    ];
    let round = vec![
        with_sources(scored(vec![candidate("now", 1, None)]), &docs),
        with_sources(
            scored(vec![
                candidate("now", 1, None),
                candidate("old", 1, None),
                candidate("pre", 1, None),
            ]),
            &docs,
        ),
    ];
    assert_eq!(kept(&candidates_for(&round, 0, false, 40)), ["now1"]);
    // Without the rule q2's share after the partition was the stale versions alone.
    assert!(kept(&candidates_for(&round, 1, false, 40)).is_empty());
    // A model still reads every version, marked.
    assert_eq!(candidates_for(&round, 1, true, 40).candidates.len(), 3);
    // Only old versions answer: they are read.
    let only_old = vec![with_sources(scored(vec![candidate("old", 2, None)]), &docs)];
    assert_eq!(kept(&candidates_for(&only_old, 0, false, 40)), ["old2"]);
}

#[test]
fn only_a_sentence_given_away_blocks_another() {
    // q1 wins b4–b5 (tie at the top, earlier subquestion); q2's b5–b6 overlaps it
    // and goes; b6 alone, third for q1, is then blocked by nothing given away.
    let round = vec![
        scored(vec![
            candidate("b", 4, Some(5)),
            candidate("e", 1, None),
            candidate("b", 6, None),
        ]),
        scored(vec![candidate("b", 5, Some(6)), candidate("f", 2, None)]),
    ];
    assert_eq!(kept(&partition(&round, 0)), ["b4", "e1", "b6"]);
    assert_eq!(kept(&partition(&round, 1)), ["f2"]);
}
