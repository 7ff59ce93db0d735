//! deepen: decide whether to run another round, and for which gaps.
//!
//! The decision is deterministic code over node outputs only (never timings or token
//! totals): a gap is a subquestion of this round with fewer than
//! [`MIN_SUPPORTED`] supported claims, or one involved in a conflict. Rounds are bounded
//! by depth (quick 0, standard ≤ 1, deep ≤ 3). The model only words the follow-up
//! questions.

use std::collections::BTreeSet;

use deepr_evidence::report::{Conflict, Verdict};
use deepr_orchestrator::terms::{is_stop_word, words};
use deepr_orchestrator::{LedgerEntry, LlmProvider, Tier};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::decompose::clean_question;
use crate::llm::{call_task, TaskCall};
use crate::types::{ClaimDraft, DeepenOut, Subq};

pub const STAGE_VERSION: u32 = 1;
/// A subquestion with fewer supported claims than this is thin.
pub const MIN_SUPPORTED: usize = 2;
/// Most follow-ups per round.
pub const MAX_FOLLOWUPS: usize = 4;

/// Extra rounds allowed by depth.
pub fn max_rounds(depth: &str) -> u32 {
    match depth {
        "quick" => 0,
        "deep" => 3,
        _ => 1,
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AnswerFollowup {
    pub gap_id: String,
    pub question: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub followups: Vec<AnswerFollowup>,
}

#[allow(clippy::too_many_arguments)]
pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    depth: &str,
    round: u32,
    subquestions: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    conflicts: &[Conflict],
    llm: &dyn LlmProvider,
) -> (DeepenOut, Vec<LedgerEntry>) {
    let mut gaps: Vec<(Subq, String)> = Vec::new();
    for subq in subquestions {
        let supported = claims
            .iter()
            .filter(|(c, v)| c.subquestion == subq.id && *v == Verdict::Supported)
            .count();
        if let Some(conflict) = conflicts.iter().find(|c| c.subquestion == subq.id) {
            gaps.push((
                subq.clone(),
                format!("sources disagree: {}", conflict.summary),
            ));
        } else if supported < MIN_SUPPORTED {
            gaps.push((
                subq.clone(),
                format!("only {supported} supported claim(s), fewer than {MIN_SUPPORTED}"),
            ));
        }
    }
    let limit = max_rounds(depth);
    if gaps.is_empty() {
        let reason = format!("no gaps after round {round}: every subquestion has at least {MIN_SUPPORTED} supported claims and no disagreement");
        return (
            DeepenOut {
                followups: vec![],
                reason,
            },
            vec![],
        );
    }
    let gap_list = gaps
        .iter()
        .map(|(s, why)| format!("{}: {why}", s.id))
        .collect::<Vec<_>>()
        .join("; ");
    if round >= limit {
        let reason =
            format!("depth {depth} allows {limit} extra round(s); gaps left open: {gap_list}");
        return (
            DeepenOut {
                followups: vec![],
                reason,
            },
            vec![],
        );
    }
    gaps.truncate(MAX_FOLLOWUPS);
    let ids: BTreeSet<String> = gaps.iter().map(|(s, _)| s.id.clone()).collect();
    let shown = gaps
        .iter()
        .map(|(s, why)| format!("- {}: {} ({why})", s.id, deepr_prompts::quoted(&s.text)))
        .collect::<Vec<_>>()
        .join("\n");
    let items: Vec<Value> = gaps
        .iter()
        .map(|(s, why)| json!({"id": s.id, "text": s.text, "why": why}))
        .collect();
    let result = call_task::<Answer, _>(
        llm,
        TaskCall {
            node_id,
            stage: "deepen",
            prompt,
            tier: Tier::Cheap,
            values: vec![("topic", topic.to_string()), ("gaps", shown)],
            task_input: json!({"topic": topic, "gaps": items}),
        },
        |answer: &Answer| {
            if let Some(bad) = answer.followups.iter().find(|f| !ids.contains(&f.gap_id)) {
                return Err(format!("follow-up for unknown gap ID {:?}", bad.gap_id));
            }
            if answer
                .followups
                .iter()
                .any(|f| f.question.trim().is_empty())
            {
                return Err("a follow-up question is empty".into());
            }
            Ok(())
        },
    )
    .await;
    let mut followups: Vec<Subq> = Vec::new();
    for f in result.value.followups {
        let text = clean_question(&f.question);
        if text.is_empty()
            || followups
                .iter()
                .any(|s| s.parent.as_deref() == Some(f.gap_id.as_str()))
        {
            continue;
        }
        followups.push(Subq {
            id: format!("{}.r{}", f.gap_id, round + 1),
            text,
            round: round + 1,
            parent: Some(f.gap_id),
        });
    }
    followups.sort_by(|a, b| a.id.cmp(&b.id));
    let reason = format!("round {} follows up {}", round + 1, gap_list);
    (DeepenOut { followups, reason }, result.calls)
}

/// Offline: a sharper follow-up built from the gap's own key terms.
pub fn offline_answer(input: &Value) -> Value {
    let followups: Vec<Value> = input["gaps"]
        .as_array()
        .map(|gaps| {
            gaps.iter()
                .map(|g| {
                    let text = g["text"].as_str().unwrap_or_default();
                    let why = g["why"].as_str().unwrap_or_default();
                    let key: Vec<String> = words(text).into_iter().filter(|w| !is_stop_word(w) && w.chars().any(char::is_alphabetic)).take(6).collect();
                    let question = if why.starts_with("sources disagree") {
                        format!("Which figure is correct for {}, and under what conditions does each hold?", key.join(" "))
                    } else {
                        format!("What specific mechanisms, numbers or conditions describe {}?", key.join(" "))
                    };
                    json!({"gap_id": g["id"], "question": question})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"followups": followups})
}
