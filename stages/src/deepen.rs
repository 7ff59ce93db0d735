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
use crate::model_call::{call_task, Models, TaskCall};
use crate::types::{ClaimDraft, DeepenOut, Subq};

pub const STAGE_VERSION: u32 = 1;
/// A subquestion with fewer supported claims than this is thin.
pub const MIN_SUPPORTED: usize = 2;
/// Most follow-ups per round.
pub const MAX_FOLLOWUPS: usize = 4;

/// The round's gaps: a subquestion its sources disagree on, or with fewer than
/// [`MIN_SUPPORTED`] supported claims, each with why.
fn gaps(
    subquestions: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    conflicts: &[Conflict],
) -> Vec<(Subq, String)> {
    let mut gaps = Vec::new();
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
    gaps
}

/// The answer's follow-ups as the next round's subquestions: one per gap, cleaned,
/// in id order.
fn followups(answered: Vec<deepr_tasks::deepen::AnswerFollowup>, round: u32) -> Vec<Subq> {
    let mut followups: Vec<Subq> = Vec::new();
    for f in answered {
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
    followups
}

#[allow(clippy::too_many_arguments)]
pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    depth: crate::Depth,
    round: u32,
    subquestions: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    conflicts: &[Conflict],
    models: Models<'_>,
) -> (DeepenOut, Vec<LedgerEntry>) {
    let mut gaps = gaps(subquestions, claims, conflicts);
    let limit = depth.plan().extra_rounds;
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
        let reason = format!(
            "depth {} allows {limit} extra round(s); gaps left open: {gap_list}",
            depth.as_str()
        );
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
    let followups = followups(result.value.followups, round);
    let reason = format!("round {} follows up {}", round + 1, gap_list);
    (DeepenOut { followups, reason }, result.calls)
}

/// The round's follow-ups (the next round's subquestions), from its gaps: thin
/// subquestions and disagreements.
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    extracts: &[String],
    subquestions: &[Subq],
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    let (p, t, d) = (cx.providers.clone(), cx.topic.clone(), cx.depth);
    let (judge, conflict) = (
        node_id::join(round, "judge"),
        node_id::join(round, "conflict"),
    );
    let mut deps = vec![judge.clone(), conflict.clone()];
    deps.extend(extracts.iter().cloned());
    let llm =
        crate::model_call::prompt_key(&cx.providers.prompts.deepen, cx.providers.cheap_models());
    let key =
        serde_json::json!({"v": STAGE_VERSION, "depth": cx.depth, "round": round, "llm": llm});
    let (ex, subqs) = (extracts.to_vec(), subquestions.to_vec());
    let node = spec(
        node_id::join(round, "deepen"),
        "deepen",
        key,
        move |ctx| async move {
            let judged: crate::types::JudgeOut = read(&ctx.inputs, &judge)?;
            let verdicts: std::collections::BTreeMap<String, Verdict> =
                judged.verdicts.into_iter().collect();
            let conflicts: crate::types::ConflictOut = read(&ctx.inputs, &conflict)?;
            let mut claims = Vec::new();
            for id in &ex {
                let extracted: crate::types::ExtractOut = read(&ctx.inputs, id)?;
                claims.extend(extracted.claims.into_iter().map(|c| {
                    let v = verdicts.get(&c.id).copied().unwrap_or(Verdict::Unjudged);
                    (c, v)
                }));
            }
            let (out, calls) = run(
                &ctx.node_id,
                &p.prompts.deepen,
                &t,
                d,
                round,
                &subqs,
                &claims,
                &conflicts.conflicts,
                p.cheap_models(),
            )
            .await;
            finish(out, calls)
        },
    );
    (node, deps)
}
