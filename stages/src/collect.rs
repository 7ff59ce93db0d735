//! collect: everything a run's finished nodes say, gathered into one
//! [`ResearchResult`] — for a complete run, or for the part of a stopped one that
//! finished. A pure read of checkpointed outputs: no model, no I/O.

use std::collections::BTreeMap;

use deepr_evidence::report::Verdict;
use deepr_orchestrator::executor::DoneNode;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::research::*;
use crate::types::*;

fn output<T: DeserializeOwned>(done: &BTreeMap<String, DoneNode>, id: &str) -> Option<T> {
    done.get(id)
        .and_then(|n| serde_json::from_value(Value::clone(&n.output)).ok())
}

/// Everything the finished nodes say, in ID order — for a complete run or for the
/// part of a stopped one that finished (missing nodes are simply absent: claims
/// without a judge are `unjudged`, a run without synthesis has no summary).
pub fn collect(done: &BTreeMap<String, DoneNode>) -> ResearchResult {
    let mut result = ResearchResult::default();
    if let Some(scout) = output::<ScoutOut>(done, node_id::SCOUT) {
        result.coverage.extend(scout.coverage);
    }
    let mut round_subqs = match output::<DecomposeOut>(done, node_id::DECOMPOSE) {
        Some(decomposed) => {
            if let Some(why) = decomposed.degraded {
                result.degraded.push((node_id::DECOMPOSE.into(), why));
            }
            decomposed.subquestions
        }
        None => Vec::new(),
    };
    let mut round = 0u32;
    while !round_subqs.is_empty() {
        result.subquestions.extend(round_subqs.iter().cloned());
        result.rounds = round + 1;
        let judge_id = node_id::join(round, "judge");
        let judged = output::<JudgeOut>(done, &judge_id);
        let verdicts: BTreeMap<String, Verdict> = match judged {
            Some(judged) => {
                result.judge_calls.push(judged.calls);
                if let Some(why) = judged.degraded {
                    result.degraded.push((judge_id, why));
                }
                judged.verdicts.into_iter().collect()
            }
            None => BTreeMap::new(),
        };
        for subq in &round_subqs {
            collect_subquestion(done, round, subq, &verdicts, &mut result);
        }
        if let Some(conflicts) = output::<ConflictOut>(done, &node_id::join(round, "conflict")) {
            result.conflicts.extend(conflicts.conflicts);
        }
        match output::<DeepenOut>(done, &node_id::join(round, "deepen")) {
            Some(deepened) => {
                result.deepen_reasons.push(deepened.reason);
                round_subqs = deepened.followups;
                round += 1;
            }
            None => break,
        }
    }
    collect_article(done, &mut result);
    result
        .coverage
        .sort_by(|a, b| (&a.provider, &a.query).cmp(&(&b.provider, &b.query)));
    result.coverage.dedup();
    result.restored_nodes = done.values().filter(|n| n.restored).count();
    result.executed_nodes = done.len() - result.restored_nodes;
    result
}

/// What one subquestion's steps of a round say: search coverage, fetch failures,
/// sources (each at its best score), degraded steps, and its claims with their
/// verdicts.
fn collect_subquestion(
    done: &BTreeMap<String, DoneNode>,
    round: u32,
    subq: &Subq,
    verdicts: &BTreeMap<String, Verdict>,
    result: &mut ResearchResult,
) {
    let step = |name: &str| node_id::step(round, &subq.id, name);
    if let Some(retrieved) = output::<RetrieveOut>(done, &step("retrieve")) {
        result.coverage.extend(retrieved.coverage);
    }
    if let Some(fetched) = output::<FetchOut>(done, &step("fetch")) {
        result.fetch_failures.extend(fetched.failures);
    }
    if let Some(scored) = output::<ScoreOut>(done, &step("score")) {
        result.reranks.push(scored.rerank);
        for source in scored.sources {
            let entry = result
                .sources
                .entry(source.doc.content_sha256.clone())
                .or_insert_with(|| source.clone());
            if source.score > entry.score {
                *entry = source;
            }
        }
    }
    for stage in ["subquery", "extract"] {
        let id = step(stage);
        if let Some(why) = done.get(&id).and_then(|n| {
            n.output
                .get("degraded")
                .and_then(Value::as_str)
                .map(String::from)
        }) {
            result.degraded.push((id, why));
        }
    }
    if let Some(extracted) = output::<ExtractOut>(done, &step("extract")) {
        for claim in extracted.claims {
            let verdict = verdicts
                .get(&claim.id)
                .copied()
                .unwrap_or(Verdict::Unjudged);
            result.claims.push((claim, verdict));
        }
    }
}

/// The article's written sections (in section order) and its summary.
fn collect_article(done: &BTreeMap<String, DoneNode>, result: &mut ResearchResult) {
    for section in crate::write::sections(&result.subquestions) {
        let id = node_id::section(&section[0].id);
        if let Some(written) = output::<SectionOut>(done, &id) {
            if let Some(why) = &written.degraded {
                result.degraded.push((id, why.clone()));
            }
            result.sections.push(written);
        }
    }
    if let Some(synthesized) = output::<SynthesizeOut>(done, node_id::SYNTHESIZE) {
        if let Some(why) = synthesized.degraded {
            result.degraded.push((node_id::SYNTHESIZE.into(), why));
        }
        result.summary = synthesized.summary;
        result.summary_dropped = synthesized.dropped;
    }
}
