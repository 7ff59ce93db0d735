//! deepen: decide whether to run another round, and for which gaps.
//!
//! The decision is deterministic code over node outputs only (never timings or token
//! totals): a gap is a subquestion of this round with fewer than
//! [`MIN_SUPPORTED`] supported claims, or one involved in a conflict. Rounds are bounded
//! by depth (quick 0, standard ≤ 1, deep ≤ 3). The model only words the follow-up
//! questions.

use deepr_evidence::report::{Conflict, Verdict};
use deepr_orchestrator::{LedgerEntry, Tier};
use deepr_tasks::deepen::{Deepen, Gap, Input};

use crate::decompose::clean_question;
use crate::llm::{call_task, Models, TaskCall};
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
    models: Models<'_>,
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
    let input = Input {
        topic: topic.to_string(),
        gaps: gaps
            .iter()
            .map(|(s, why)| Gap {
                id: s.id.clone(),
                text: s.text.clone(),
                why: why.clone(),
            })
            .collect(),
    };
    let result = call_task(
        models,
        TaskCall::<Deepen> {
            node_id,
            stage: "deepen",
            prompt,
            tier: Tier::Cheap,
            input: &input,
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
