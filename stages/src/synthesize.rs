//! synthesize: supported claims and conflicts → the report's summary points (strong
//! model). Points cite claim IDs; unknown IDs make the answer invalid. The rest of the
//! report is assembled deterministically by [`crate::render`].

use std::collections::BTreeSet;

use deepr_evidence::report::{Conflict, Verdict};
use deepr_orchestrator::{LedgerEntry, Tier};
use deepr_tasks::synthesize::{self as task, Group, Input, Synthesize};

use crate::llm::{call_task, Models, TaskCall};
use crate::types::{ClaimDraft, Subq, SummaryPoint, SynthesizeOut};

pub const STAGE_VERSION: u32 = 1;
pub use deepr_tasks::synthesize::MAX_POINTS;

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    subquestions: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    conflicts: &[Conflict],
    models: Models<'_>,
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
    let input = Input {
        topic: topic.to_string(),
        subquestions: subquestions
            .iter()
            .map(|s| Group {
                id: s.id.clone(),
                text: s.text.clone(),
                claims: usable
                    .iter()
                    .filter(|(c, _)| c.subquestion == s.id)
                    .map(|(c, _)| task::Claim {
                        id: c.id.clone(),
                        text: c.text.clone(),
                    })
                    .collect(),
            })
            .collect(),
        conflicts: conflicts
            .iter()
            .map(|c| task::Conflict {
                subquestion: c.subquestion.clone(),
                summary: c.summary.clone(),
                claims: c.claims.clone(),
            })
            .collect(),
    };
    // The claims shown: a summary point may cite only these.
    let ids: BTreeSet<&str> = input
        .subquestions
        .iter()
        .flat_map(|s| s.claims.iter().map(|c| c.id.as_str()))
        .collect();
    let result = call_task(
        models,
        TaskCall::<Synthesize> {
            node_id,
            stage: "synthesize",
            prompt,
            tier: Tier::Strong,
            input: &input,
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
                .filter(|id| ids.contains(id.as_str()))
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
