//! conflict-detect: judged claims → groups of claims from different sources that
//! contradict each other (different numbers for the same subject, or one affirming
//! what another denies). Disagreements get their own report section.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::report::{Conflict, Verdict};
use deepr_orchestrator::{LedgerEntry, Tier};
use deepr_tasks::conflict::{Claim, ConflictDetect, Input};

use crate::model_call::{call_task, Models, TaskCall};
use crate::types::{ClaimDraft, ConflictOut};

/// 2: a refresh carries its parent's standing disagreements and asks only about new
/// claims ([`crate::parent_reading::ParentConflicts`]).
pub const STAGE_VERSION: u32 = 2;
pub use deepr_tasks::conflict::MAX_CONFLICTS;

/// `claims`: the round's claims with their verdicts and source titles.
pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    claims: &[(ClaimDraft, Verdict, String)],
    models: Models<'_>,
) -> (ConflictOut, Vec<LedgerEntry>) {
    let considered: Vec<&(ClaimDraft, Verdict, String)> =
        claims.iter().filter(|(_, v, _)| may_disagree(*v)).collect();
    if considered.len() < 2 {
        return (
            ConflictOut {
                conflicts: Vec::new(),
                degraded: None,
            },
            Vec::new(),
        );
    }
    let input = Input {
        claims: considered
            .iter()
            .map(|(c, verdict, title)| Claim {
                id: c.id.clone(),
                subquestion: c.subquestion.clone(),
                verdict: verdict.as_str().to_string(),
                source: c
                    .citations
                    .first()
                    .map(|r| r.content_sha256.clone())
                    .unwrap_or_default(),
                title: title.clone(),
                text: c.text.clone(),
            })
            .collect(),
    };
    let ids: BTreeSet<String> = considered.iter().map(|(c, ..)| c.id.clone()).collect();
    let result = call_task(
        models,
        TaskCall::<ConflictDetect> {
            node_id,
            stage: "conflict",
            prompt,
            tier: Tier::Cheap,
            input: &input,
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
            let summary: String = crate::model_call::clean_model_text(&c.summary, 400);
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

/// Whether a claim with `verdict` is weighed against the others (a rejected one is not).
fn may_disagree(verdict: Verdict) -> bool {
    matches!(
        verdict,
        Verdict::Supported | Verdict::Partial | Verdict::Unjudged
    )
}

/// A refresh's disagreements: the parent's that stand (among claims that may still
/// disagree) and those found now that involve a new claim.
fn refreshed(
    delta: crate::parent_reading::ConflictDelta,
    found: ConflictOut,
    claims: &[(ClaimDraft, Verdict, String)],
) -> ConflictOut {
    let considered: BTreeSet<&str> = claims
        .iter()
        .filter(|(_, v, _)| may_disagree(*v))
        .map(|(c, ..)| c.id.as_str())
        .collect();
    let mut conflicts: Vec<Conflict> = delta
        .carried
        .into_iter()
        .filter(|c| c.claims.iter().all(|id| considered.contains(id.as_str())))
        .chain(
            found
                .conflicts
                .into_iter()
                .filter(|c| c.claims.iter().any(|id| delta.new.contains(id))),
        )
        .collect();
    conflicts.sort_by(|a, b| a.claims.cmp(&b.claims));
    conflicts.dedup_by(|a, b| a.claims == b.claims);
    conflicts.truncate(MAX_CONFLICTS);
    ConflictOut {
        conflicts,
        degraded: found.degraded,
    }
}

/// The round's disagreements: its judged claims, each with its first source's title
/// (from the round's `scores`).
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    extracts: &[String],
    scores: &[String],
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    let p = cx.providers.clone();
    let judge = node_id::join(round, "judge");
    let mut deps = vec![judge.clone()];
    deps.extend(extracts.iter().cloned());
    deps.extend(scores.iter().cloned());
    let llm =
        crate::model_call::prompt_key(&cx.providers.prompts.conflict, cx.providers.cheap_models());
    let mut key = serde_json::json!({"v": STAGE_VERSION, "llm": llm});
    let id = node_id::join(round, "conflict");
    let parent = cx
        .config
        .parent_reading
        .as_ref()
        .and_then(|p| p.conflict_step(&id, round, &key));
    if let Some(parent) = &parent {
        key["parent"] = serde_json::json!(parent.digest);
    }
    let (ex, sc) = (extracts.to_vec(), scores.to_vec());
    let node = spec(id, "conflict", key, move |ctx| async move {
        let judged: crate::types::JudgeOut = read(&ctx.inputs, &judge)?;
        let verdicts: BTreeMap<String, Verdict> = judged.verdicts.into_iter().collect();
        let mut titles = BTreeMap::new();
        for id in &sc {
            let scored: crate::types::ScoreOut = read(&ctx.inputs, id)?;
            titles.extend(
                scored
                    .sources
                    .into_iter()
                    .map(|s| (s.doc.content_sha256, s.doc.title)),
            );
        }
        let mut claims = Vec::new();
        for id in &ex {
            let extracted: crate::types::ExtractOut = read(&ctx.inputs, id)?;
            for claim in extracted.claims {
                let verdict = verdicts
                    .get(&claim.id)
                    .copied()
                    .unwrap_or(Verdict::Unjudged);
                let title = claim
                    .citations
                    .first()
                    .and_then(|c| titles.get(&c.content_sha256))
                    .cloned()
                    .unwrap_or_default();
                claims.push((claim, verdict, title));
            }
        }
        let Some(parent) = &parent else {
            let (out, calls) =
                run(&ctx.node_id, &p.prompts.conflict, &claims, p.cheap_models()).await;
            return finish(out, calls);
        };
        let delta = parent.delta(&claims.iter().map(|(c, ..)| c).collect::<Vec<_>>());
        let asked: Vec<_> = claims
            .iter()
            .filter(|(c, ..)| delta.asked.contains(&c.id))
            .cloned()
            .collect();
        let (found, calls) = run(&ctx.node_id, &p.prompts.conflict, &asked, p.cheap_models()).await;
        finish(refreshed(delta, found, &claims), calls)
    });
    (node, deps)
}
