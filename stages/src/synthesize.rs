//! synthesize: supported claims and conflicts → the report's summary points (strong
//! model). Points cite claim IDs; unknown IDs make the answer invalid. The rest of the
//! report is assembled deterministically by [`crate::render`].

use std::collections::BTreeSet;

use deepr_evidence::report::{Conflict, Verdict};
use deepr_orchestrator::{LedgerEntry, LlmProvider, Tier};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::llm::{call_task, TaskCall};
use crate::types::{ClaimDraft, Subq, SummaryPoint, SynthesizeOut};

pub const STAGE_VERSION: u32 = 1;
pub const MAX_POINTS: usize = 8;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub summary: Vec<SummaryPoint>,
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    subquestions: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    conflicts: &[Conflict],
    llm: &dyn LlmProvider,
) -> (SynthesizeOut, Vec<LedgerEntry>) {
    let usable: Vec<&(ClaimDraft, Verdict)> = claims
        .iter()
        .filter(|(_, v)| matches!(v, Verdict::Supported | Verdict::Unjudged))
        .collect();
    if usable.is_empty() {
        return (
            SynthesizeOut {
                summary: vec![],
                degraded: None,
            },
            vec![],
        );
    }
    let groups: Vec<Value> = subquestions
        .iter()
        .map(|s| json!({"id": s.id, "text": s.text, "claims": usable.iter().filter(|(c, _)| c.subquestion == s.id).map(|(c, _)| json!({"id": c.id, "text": c.text})).collect::<Vec<_>>()}))
        .collect();
    let shown_claims = subquestions
        .iter()
        .map(|s| {
            let lines = usable
                .iter()
                .filter(|(c, _)| c.subquestion == s.id)
                .map(|(c, _)| format!("  {}: {}", c.id, deepr_prompts::quoted(&c.text)))
                .collect::<Vec<_>>()
                .join("\n");
            format!("{}: {}\n{lines}", s.id, deepr_prompts::quoted(&s.text))
        })
        .collect::<Vec<_>>()
        .join("\n");
    let shown_conflicts = if conflicts.is_empty() {
        "(none)".to_string()
    } else {
        conflicts
            .iter()
            .map(|c| {
                format!(
                    "- {} [{}]",
                    deepr_prompts::quoted(&c.summary),
                    c.claims.join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let ids: BTreeSet<String> = usable.iter().map(|(c, _)| c.id.clone()).collect();
    let result = call_task::<Answer, _>(
        llm,
        TaskCall {
            node_id,
            stage: "synthesize",
            prompt,
            tier: Tier::Strong,
            values: vec![
                ("topic", topic.to_string()),
                ("claims", shown_claims),
                ("conflicts", shown_conflicts),
            ],
            task_input: json!({"topic": topic, "subquestions": groups, "conflicts": conflicts}),
        },
        |answer: &Answer| {
            if answer.summary.is_empty() || answer.summary.len() > MAX_POINTS {
                return Err(format!(
                    "expected 1 to {MAX_POINTS} summary points, got {}",
                    answer.summary.len()
                ));
            }
            for point in &answer.summary {
                if point.text.trim().is_empty() || point.claim_ids.is_empty() {
                    return Err("every summary point needs text and at least one claim ID".into());
                }
                if let Some(unknown) = point.claim_ids.iter().find(|id| !ids.contains(*id)) {
                    return Err(format!("summary cites unknown claim ID {unknown:?}"));
                }
            }
            Ok(())
        },
    )
    .await;
    let summary = result
        .value
        .summary
        .into_iter()
        .take(MAX_POINTS)
        .map(|p| SummaryPoint {
            text: crate::llm::clean_model_text(&p.text, 500),
            claim_ids: p
                .claim_ids
                .into_iter()
                .filter(|id| ids.contains(id))
                .collect(),
        })
        .filter(|p| !p.text.is_empty() && !p.claim_ids.is_empty())
        .collect();
    (
        SynthesizeOut {
            summary,
            degraded: result.degraded,
        },
        result.calls,
    )
}

/// Offline: the first claim of each subquestion, in plan order, as a summary point.
pub fn offline_answer(input: &Value) -> Value {
    let mut points = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for group in input["subquestions"].as_array().into_iter().flatten() {
        let fresh = group["claims"].as_array().and_then(|c| {
            c.iter()
                .find(|claim| !used.contains(&claim["text"].to_string()))
        });
        if let Some(claim) = fresh {
            used.push(claim["text"].to_string());
            let text = claim["text"].as_str().unwrap_or_default();
            let short: String = if text.chars().count() > 220 {
                let cut: String = text.chars().take(220).collect();
                format!(
                    "{}…",
                    cut.rsplit_once(' ').map(|(head, _)| head).unwrap_or(&cut)
                )
            } else {
                text.to_string()
            };
            points.push(json!({"text": short, "claim_ids": [claim["id"]]}));
        }
        if points.len() >= MAX_POINTS {
            break;
        }
    }
    json!({"summary": points})
}
