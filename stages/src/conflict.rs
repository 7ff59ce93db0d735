//! conflict-detect: judged claims → groups of claims from different sources that
//! contradict each other (different numbers for the same subject, or one affirming
//! what another denies). Disagreements get their own report section.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::report::{Conflict, Verdict};
use deepr_orchestrator::terms::{content_terms, numbers, words, NEGATIONS};
use deepr_orchestrator::{LedgerEntry, LlmProvider, Tier};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::extract::jaccard;
use crate::llm::{call_task, TaskCall};
use crate::types::{ClaimDraft, ConflictOut};

pub const STAGE_VERSION: u32 = 1;
/// Most conflicts reported per round (strongest first).
pub const MAX_CONFLICTS: usize = 5;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AnswerConflict {
    pub claim_ids: Vec<String>,
    pub summary: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub conflicts: Vec<AnswerConflict>,
}

/// `claims`: the round's claims with their verdicts and source titles.
pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    claims: &[(ClaimDraft, Verdict, String)],
    llm: &dyn LlmProvider,
) -> (ConflictOut, Vec<LedgerEntry>) {
    let considered: Vec<&(ClaimDraft, Verdict, String)> = claims
        .iter()
        .filter(|(_, v, _)| matches!(v, Verdict::Supported | Verdict::Partial | Verdict::Unjudged))
        .collect();
    if considered.len() < 2 {
        return (
            ConflictOut {
                conflicts: Vec::new(),
                degraded: None,
            },
            Vec::new(),
        );
    }
    let items: Vec<Value> = considered
        .iter()
        .map(|(c, _, source)| json!({"id": c.id, "subquestion": c.subquestion, "source": c.citations.first().map(|r| r.content_sha256.clone()).unwrap_or_default(), "title": source, "text": c.text}))
        .collect();
    let shown = considered
        .iter()
        .map(|(c, v, source)| {
            format!(
                "{}: ({}; {}; source: {}) {}",
                c.id,
                c.subquestion,
                v.as_str(),
                deepr_prompts::quoted(source),
                deepr_prompts::quoted(&c.text)
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let ids: BTreeSet<String> = considered.iter().map(|(c, ..)| c.id.clone()).collect();
    let result = call_task::<Answer, _>(
        llm,
        TaskCall {
            node_id,
            stage: "conflict",
            prompt,
            tier: Tier::Cheap,
            values: vec![("claims", shown)],
            task_input: json!({"claims": items}),
        },
        |answer: &Answer| {
            for conflict in &answer.conflicts {
                if conflict.claim_ids.len() < 2 {
                    return Err("a conflict needs at least two claim IDs".into());
                }
                if let Some(unknown) = conflict.claim_ids.iter().find(|id| !ids.contains(*id)) {
                    return Err(format!("conflict cites unknown claim ID {unknown:?}"));
                }
            }
            Ok(())
        },
    )
    .await;
    let subquestion_of: BTreeMap<&str, &str> = considered
        .iter()
        .map(|(c, ..)| (c.id.as_str(), c.subquestion.as_str()))
        .collect();
    let mut conflicts: Vec<Conflict> = result
        .value
        .conflicts
        .into_iter()
        .take(MAX_CONFLICTS)
        .filter_map(|c| {
            let mut claim_ids: Vec<String> = c
                .claim_ids
                .into_iter()
                .filter(|id| ids.contains(id))
                .collect();
            claim_ids.sort();
            claim_ids.dedup();
            let first = claim_ids.first()?;
            let subquestion = subquestion_of.get(first.as_str())?.to_string();
            let summary: String = crate::llm::clean_model_text(&c.summary, 400);
            (claim_ids.len() >= 2).then_some(Conflict {
                subquestion,
                summary,
                claims: claim_ids,
            })
        })
        .collect();
    conflicts.sort_by(|a, b| a.claims.cmp(&b.claims));
    conflicts.dedup_by(|a, b| a.claims == b.claims);
    (
        ConflictOut {
            conflicts,
            degraded: result.degraded,
        },
        result.calls,
    )
}

// ---------------------------------------------------------------- offline heuristic

fn negated(text: &str) -> bool {
    words(text).iter().any(|w| NEGATIONS.contains(&w.as_str()))
}

/// Offline detector: pairs of claims from different sources about the same subject
/// (shared content words) that give disjoint numbers, or where exactly one is negated.
pub fn offline_answer(input: &Value) -> Value {
    let claims: Vec<(String, String, String, String)> = input["claims"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                    (s("id"), s("source"), s("title"), s("text"))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut found: Vec<(f64, Value)> = Vec::new();
    let mut seen_pairs: BTreeSet<(String, String)> = BTreeSet::new();
    for (i, a) in claims.iter().enumerate() {
        for b in claims.iter().skip(i + 1) {
            if a.1 == b.1 {
                continue; // one source cannot disagree with itself here
            }
            let ta: BTreeSet<String> = content_terms(&a.3)
                .into_iter()
                .filter(|t| {
                    !t.chars()
                        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
                })
                .collect();
            let tb: BTreeSet<String> = content_terms(&b.3)
                .into_iter()
                .filter(|t| {
                    !t.chars()
                        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
                })
                .collect();
            let shared_count = ta.intersection(&tb).count();
            let plain = |t: &str| -> Vec<String> {
                words(t)
                    .into_iter()
                    .filter(|w| {
                        !deepr_orchestrator::terms::is_stop_word(w)
                            && w.chars().any(char::is_alphabetic)
                    })
                    .collect()
            };
            let plain_b = plain(&b.3);
            let shared: Vec<String> = plain(&a.3)
                .into_iter()
                .filter(|w| plain_b.contains(w))
                .collect();
            let similarity = jaccard(&ta, &tb);
            let (na, nb) = (numbers(&a.3), numbers(&b.3));
            let numeric = !na.is_empty()
                && !nb.is_empty()
                && na.iter().all(|n| !nb.contains(n))
                && shared_count >= 3
                && similarity >= 0.4;
            let negation = negated(&a.3) != negated(&b.3) && shared_count >= 3 && similarity >= 0.5;
            let pair = if a.3 <= b.3 {
                (a.3.clone(), b.3.clone())
            } else {
                (b.3.clone(), a.3.clone())
            };
            if (numeric || negation) && seen_pairs.insert(pair) {
                let subject = shared
                    .iter()
                    .take(4)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                let summary = if numeric {
                    format!(
                        "Sources give different numbers about {subject}: {} says {}; {} says {}.",
                        a.2,
                        na.join(", "),
                        b.2,
                        nb.join(", ")
                    )
                } else {
                    format!("Sources disagree about {subject}: one affirms what the other denies ({} vs {}).", a.2, b.2)
                };
                found.push((
                    similarity,
                    json!({"claim_ids": [a.0, b.0], "summary": summary}),
                ));
            }
        }
    }
    found.sort_by(|x, y| {
        y.0.total_cmp(&x.0).then_with(|| {
            x.1["claim_ids"]
                .to_string()
                .cmp(&y.1["claim_ids"].to_string())
        })
    });
    let conflicts: Vec<Value> = found
        .into_iter()
        .take(MAX_CONFLICTS)
        .map(|(_, v)| v)
        .collect();
    json!({"conflicts": conflicts})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn different_numbers_about_one_subject_conflict() {
        let input = json!({"claims": [
            {"id": "q1-c1", "source": "a", "title": "A", "text": "The default page size of the database file is 4096 bytes."},
            {"id": "q1-c2", "source": "b", "title": "B", "text": "The default page size of the database file is 1024 bytes."},
            {"id": "q1-c3", "source": "c", "title": "C", "text": "WAL mode uses a separate write-ahead log file."}
        ]});
        let answer = offline_answer(&input);
        assert_eq!(
            answer["conflicts"][0]["claim_ids"],
            json!(["q1-c1", "q1-c2"])
        );
        assert_eq!(answer["conflicts"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn negation_conflicts_and_same_source_does_not() {
        let input = json!({"claims": [
            {"id": "a", "source": "x", "title": "X", "text": "Readers block writers in rollback journal mode."},
            {"id": "b", "source": "y", "title": "Y", "text": "Readers do not block writers in rollback journal mode."},
            {"id": "c", "source": "y", "title": "Y", "text": "Readers never block writers in rollback journal mode."}
        ]});
        let answer = offline_answer(&input);
        let ids: Vec<String> = answer["conflicts"]
            .as_array()
            .map(|a| a.iter().map(|c| c["claim_ids"].to_string()).collect())
            .unwrap_or_default();
        assert!(ids.contains(&json!(["a", "b"]).to_string()));
        assert!(!ids.contains(&json!(["b", "c"]).to_string()));
    }
}
