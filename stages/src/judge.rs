//! judge: claims + their quotes → a verdict per claim, one call per batch of at most
//! 8 claims (calls = ceil(claims / 8)), not votes per claim.
//!
//! A deterministic floor applies whatever the model says: a claim that shares no
//! content word with its quotes is never `supported`.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::report::Verdict;
use deepr_orchestrator::terms::{content_terms, numbers};
use deepr_orchestrator::{LedgerEntry, LlmProvider, TextArchive, Tier};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::concurrent::in_order;
use crate::llm::{call_task, TaskCall};
use crate::types::{ClaimDraft, JudgeOut};

pub const STAGE_VERSION: u32 = 1;
/// Claims per judge call.
pub const BATCH: usize = 8;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AnswerVerdict {
    pub claim_id: String,
    pub verdict: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub verdicts: Vec<AnswerVerdict>,
}

/// The quotes of a claim, looked up from the archive.
pub fn quotes(claim: &ClaimDraft, archive: &dyn TextArchive) -> Vec<String> {
    claim
        .citations
        .iter()
        .filter_map(|c| {
            archive
                .get(&c.content_sha256)
                .and_then(|t| t.sentence(c.sentence).map(str::to_string))
        })
        .collect()
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    claims: &[ClaimDraft],
    archive: &dyn TextArchive,
    llm: &dyn LlmProvider,
    io_concurrency: usize,
) -> (JudgeOut, Vec<LedgerEntry>) {
    let mut verdicts: BTreeMap<String, Verdict> = BTreeMap::new();
    let mut calls = Vec::new();
    let mut degraded = Vec::new();
    let mut batches = 0;
    // Each claim's quotes, looked up once: shown to the model and used by the floor.
    let claim_quotes: Vec<Vec<String>> = claims.iter().map(|c| quotes(c, archive)).collect();
    let judged: Vec<(&ClaimDraft, &Vec<String>)> = claims.iter().zip(&claim_quotes).collect();
    // The batches are independent calls: they run at once (at most `io_concurrency`,
    // and under the model provider's own limits), merged in batch order.
    let batch_calls = judged
        .chunks(BATCH)
        .map(|batch| async move {
            let items: Vec<Value> = batch
                .iter()
                .map(|(c, q)| json!({"id": c.id, "text": c.text, "quotes": q}))
                .collect();
            let shown = batch
                .iter()
                .map(|(c, quotes)| {
                    let q = quotes
                        .iter()
                        .map(|q| {
                            format!(
                                "  quote: {}",
                                deepr_prompts::quoted(
                                    &q.split_whitespace().collect::<Vec<_>>().join(" ")
                                )
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    format!("claim {}: {}\n{q}", c.id, deepr_prompts::quoted(&c.text))
                })
                .collect::<Vec<_>>()
                .join("\n\n");
            let ids: BTreeSet<String> = batch.iter().map(|(c, _)| c.id.clone()).collect();
            let result = call_task::<Answer, _>(
                llm,
                TaskCall {
                    node_id,
                    stage: "judge",
                    prompt,
                    tier: Tier::Cheap,
                    values: vec![("claims", shown)],
                    task_input: json!({"claims": items}),
                },
                |answer: &Answer| validate(answer, &ids),
            )
            .await;
            (ids, result)
        })
        .collect();
    let answers = in_order(batch_calls, io_concurrency).await;
    for (ids, result) in answers {
        batches += 1;
        calls.extend(result.calls);
        if let Some(why) = result.degraded {
            degraded.push(why);
        }
        for v in result.value.verdicts {
            if ids.contains(&v.claim_id) {
                verdicts.insert(v.claim_id, parse_verdict(&v.verdict));
            }
        }
    }
    // Claims the model skipped stay unjudged; the floor applies to every verdict.
    let verdicts = judged
        .iter()
        .map(|(c, q)| {
            let verdict = verdicts.get(&c.id).copied().unwrap_or(Verdict::Unjudged);
            (c.id.clone(), apply_floor(verdict, &c.text, q))
        })
        .collect();
    let degraded = if degraded.is_empty() {
        None
    } else {
        Some(degraded.join("; "))
    };
    (
        JudgeOut {
            verdicts,
            calls: batches,
            degraded,
        },
        calls,
    )
}

fn parse_verdict(text: &str) -> Verdict {
    match text.trim().to_ascii_lowercase().as_str() {
        "supported" => Verdict::Supported,
        "partial" => Verdict::Partial,
        "unsupported" => Verdict::Unsupported,
        _ => Verdict::Unjudged,
    }
}

pub fn validate(answer: &Answer, ids: &BTreeSet<String>) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for v in &answer.verdicts {
        if !ids.contains(&v.claim_id) {
            return Err(format!("verdict for unknown claim ID {:?}", v.claim_id));
        }
        if !["supported", "partial", "unsupported"]
            .contains(&v.verdict.trim().to_ascii_lowercase().as_str())
        {
            return Err(format!(
                "verdict {:?} is not supported|partial|unsupported",
                v.verdict
            ));
        }
        seen.insert(v.claim_id.clone());
    }
    if seen.len() != ids.len() {
        return Err(format!(
            "expected one verdict for each of {} claims, got {}",
            ids.len(),
            seen.len()
        ));
    }
    Ok(())
}

/// The deterministic floor: no shared content word → never supported.
pub fn apply_floor(verdict: Verdict, claim: &str, quotes: &[String]) -> Verdict {
    if verdict != Verdict::Supported {
        return verdict;
    }
    let claim_terms: BTreeSet<String> = content_terms(claim).into_iter().collect();
    let shares = quotes
        .iter()
        .any(|q| content_terms(q).iter().any(|t| claim_terms.contains(t)));
    if shares {
        verdict
    } else {
        Verdict::Unsupported
    }
}

/// The offline verdict: `supported` when at least 60 % of the claim's content words and
/// every number it states are in the evidence, `partial` from 30 %, else `unsupported`.
fn offline_verdict(claim: &str, evidence: &str) -> &'static str {
    let evidence_terms: BTreeSet<String> = content_terms(evidence).into_iter().collect();
    let claim_terms: BTreeSet<String> = content_terms(claim).into_iter().collect();
    let share = if claim_terms.is_empty() {
        0.0
    } else {
        claim_terms
            .iter()
            .filter(|t| evidence_terms.contains(*t))
            .count() as f64
            / claim_terms.len() as f64
    };
    let evidence_numbers = numbers(evidence);
    let numbers_ok = numbers(claim).iter().all(|n| evidence_numbers.contains(n));
    if share >= 0.6 && numbers_ok {
        "supported"
    } else if share >= 0.3 {
        "partial"
    } else {
        "unsupported"
    }
}

/// Offline judge: share of the claim's content words found in its quotes, and every
/// number of the claim present in a quote.
pub fn offline_answer(input: &Value) -> Value {
    let verdicts: Vec<Value> = input["claims"]
        .as_array()
        .map(|claims| {
            claims
                .iter()
                .map(|c| {
                    let claim = c["text"].as_str().unwrap_or_default();
                    let quotes: Vec<&str> = c["quotes"]
                        .as_array()
                        .map(|q| q.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let verdict = offline_verdict(claim, &quotes.join(" "));
                    json!({"claim_id": c["id"], "verdict": verdict})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"verdicts": verdicts})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_overrides_a_supported_verdict_without_shared_words() {
        let quotes = vec!["WAL mode appends changes to a log.".to_string()];
        assert_eq!(
            apply_floor(Verdict::Supported, "Bananas are yellow.", &quotes),
            Verdict::Unsupported
        );
        assert_eq!(
            apply_floor(Verdict::Supported, "WAL appends changes.", &quotes),
            Verdict::Supported
        );
        assert_eq!(
            apply_floor(Verdict::Partial, "Bananas.", &quotes),
            Verdict::Partial
        );
    }

    #[test]
    fn validation_requires_one_verdict_per_claim() {
        let ids: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        let one = Answer {
            verdicts: vec![AnswerVerdict {
                claim_id: "a".into(),
                verdict: "supported".into(),
            }],
        };
        assert!(validate(&one, &ids).is_err());
        let odd = Answer {
            verdicts: vec![
                AnswerVerdict {
                    claim_id: "a".into(),
                    verdict: "maybe".into(),
                },
                AnswerVerdict {
                    claim_id: "b".into(),
                    verdict: "partial".into(),
                },
            ],
        };
        assert!(validate(&odd, &ids).is_err());
    }
}

// ------------------------------------------------------ per-claim strategy

/// Verifier votes per claim under `per-claim`.
pub const VOTES: usize = 3;
/// Characters of each cited source's archived text a verifier reads.
pub const VOTE_SOURCE_CHARS: usize = 8000;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct VoteAnswer {
    pub verdict: String,
}

/// One verifier call: the claim, what its voters read (sources, and their rendering),
/// and the voter's number.
type Ballot<'a> = (&'a ClaimDraft, &'a (Vec<String>, String), usize);

/// `per-claim`: three independent verifier calls per claim, each reading the full
/// archived text (capped) of the claim's sources; the majority wins, ties are `partial`.
pub async fn run_votes(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    claims: &[ClaimDraft],
    archive: &dyn TextArchive,
    llm: &dyn LlmProvider,
    io_concurrency: usize,
) -> (JudgeOut, Vec<LedgerEntry>) {
    let mut verdicts = Vec::new();
    let mut calls = Vec::new();
    let mut degraded = Vec::new();
    let mut count = 0u32;
    // What each claim's voters read, built once per claim.
    let shown: Vec<(Vec<String>, String)> = claims
        .iter()
        .map(|claim| {
            let mut seen = BTreeSet::new();
            let sources: Vec<String> = claim
                .citations
                .iter()
                .filter(|c| seen.insert(c.content_sha256.clone()))
                .filter_map(|c| archive.get(&c.content_sha256))
                .map(|t| t.text.chars().take(VOTE_SOURCE_CHARS).collect())
                .collect();
            let text = sources
                .iter()
                .enumerate()
                .map(|(i, s)| format!("source {}: {}", i + 1, deepr_prompts::quoted(s)))
                .collect::<Vec<_>>()
                .join("\n\n");
            (sources, text)
        })
        .collect();
    // Every vote of every claim is an independent call: all run at once (at most
    // `io_concurrency`), tallied in (claim, voter) order.
    let ballots: Vec<Ballot<'_>> = claims
        .iter()
        .zip(&shown)
        .flat_map(|(claim, shown)| (1..=VOTES).map(move |voter| (claim, shown, voter)))
        .collect();
    // Two claims with the same text and sources ask the same question: it is asked once
    // and its answer counts for both. (Asked twice at once, both would be paid; one
    // after the other, the second would be a cache hit — the answer must not depend on
    // the schedule.)
    let mut unique: Vec<usize> = Vec::new();
    let mut slot_of: Vec<usize> = Vec::with_capacity(ballots.len());
    let mut seen: BTreeMap<(usize, &str, &str), usize> = BTreeMap::new();
    for (index, (claim, (_, text), voter)) in ballots.iter().enumerate() {
        let slot = *seen
            .entry((*voter, claim.text.as_str(), text.as_str()))
            .or_insert_with(|| {
                unique.push(index);
                unique.len() - 1
            });
        slot_of.push(slot);
    }
    let vote_calls = unique
        .iter()
        .map(|&index| ballots[index])
        .map(|(claim, (sources, text), voter)| async move {
            call_task::<VoteAnswer, _>(
                llm,
                TaskCall {
                    node_id,
                    stage: "judge",
                    prompt,
                    tier: Tier::Cheap,
                    values: vec![
                        ("voter", voter.to_string()),
                        ("claim", deepr_prompts::quoted(&claim.text)),
                        ("sources", text.clone()),
                    ],
                    task_input: json!({"voter": voter, "claim": claim.text, "sources": sources}),
                },
                |answer: &VoteAnswer| match parse_verdict(&answer.verdict) {
                    Verdict::Unjudged => Err(format!(
                        "verdict {:?} is not supported|partial|unsupported",
                        answer.verdict
                    )),
                    _ => Ok(()),
                },
            )
            .await
        })
        .collect();
    let answers = in_order(vote_calls, io_concurrency).await;
    for result in &answers {
        calls.extend(result.calls.iter().cloned());
        if let Some(why) = &result.degraded {
            degraded.push(why.clone());
        }
    }
    let mut slots = slot_of.into_iter();
    for claim in claims {
        let mut tally = BTreeMap::new();
        for slot in slots.by_ref().take(VOTES) {
            count += 1;
            let verdict = answers
                .get(slot)
                .map(|result| parse_verdict(&result.value.verdict))
                .unwrap_or(Verdict::Unjudged);
            *tally.entry(verdict).or_insert(0usize) += 1;
        }
        let top = tally.values().copied().max().unwrap_or(0);
        let winners: Vec<Verdict> = tally
            .iter()
            .filter(|(_, n)| **n == top)
            .map(|(v, _)| *v)
            .collect();
        let verdict = if winners.len() == 1 {
            winners[0]
        } else {
            Verdict::Partial
        };
        verdicts.push((
            claim.id.clone(),
            apply_floor(verdict, &claim.text, &quotes(claim, archive)),
        ));
    }
    let degraded = if degraded.is_empty() {
        None
    } else {
        Some(degraded.join("; "))
    };
    (
        JudgeOut {
            verdicts,
            calls: count,
            degraded,
        },
        calls,
    )
}

/// Offline verifier: the share of the claim's content words found in its sources.
pub fn offline_vote_answer(input: &Value) -> Value {
    let claim = input["claim"].as_str().unwrap_or_default();
    let sources: Vec<&str> = input["sources"]
        .as_array()
        .map(|s| s.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let verdict = offline_verdict(claim, &sources.join(" "));
    json!({"verdict": verdict})
}
