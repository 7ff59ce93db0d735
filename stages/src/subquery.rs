//! subquery: a subquestion → 1–3 search queries plus a ranking question (cheap
//! model). Search text differs from ranking text: queries are keywords, the ranking
//! question is what a relevant passage must say. A subquestion whose plan wrote its
//! queries (round 0) takes them, and its own text as the ranking question, with no call.

use deepr_orchestrator::{LedgerEntry, Tier};
use deepr_tasks::subquery::{Input, Subquery};

use crate::model_call::{call_task, Models, TaskCall};
use crate::types::{Subq, SubqueryOut};

/// 2: a subquestion the plan wrote queries for makes no call.
pub const STAGE_VERSION: u32 = 2;

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    subq: &Subq,
    models: Models<'_>,
) -> (SubqueryOut, Vec<LedgerEntry>) {
    let input = Input {
        topic: topic.to_string(),
        subquestion: subq.text.clone(),
    };
    let result = call_task(
        models,
        TaskCall::<Subquery> {
            node_id,
            stage: "subquery",
            prompt,
            tier: Tier::Cheap,
            input: &input,
        },
    )
    .await;
    let mut queries: Vec<String> = Vec::new();
    for query in &result.value.queries {
        let query: String = crate::model_call::clean_model_text(query, 200);
        if !query.is_empty() && !queries.contains(&query) {
            queries.push(query);
        }
    }
    if queries.is_empty() {
        queries.push(subq.text.clone());
    }
    let ranking_question = if result.value.ranking_question.trim().is_empty() {
        subq.text.clone()
    } else {
        result
            .value
            .ranking_question
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    (
        SubqueryOut {
            queries,
            ranking_question,
            degraded: result.degraded,
        },
        result.calls,
    )
}

/// A subquestion's queries; `after`: the node that wrote the subquestion.
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    subq: &Subq,
    after: &str,
) -> crate::node::Node {
    use crate::node::{finish, spec};
    let (p, t, s) = (cx.providers.clone(), cx.config.topic.clone(), subq.clone());
    let llm =
        crate::model_call::prompt_key(&cx.providers.prompts.subquery, cx.providers.cheap_models());
    let key = serde_json::json!({"v": STAGE_VERSION, "subq": subq, "llm": llm});
    let id = crate::research::node_id::step(round, &subq.id, "subquery");
    let node = spec(id, "subquery", key, move |ctx| async move {
        // The plan wrote this subquestion's first queries: no call of its own.
        if !s.queries.is_empty() {
            let out = SubqueryOut {
                queries: s.queries.clone(),
                ranking_question: s.text.clone(),
                degraded: None,
            };
            return finish(out, Vec::new());
        }
        let (out, calls) = run(&ctx.node_id, &p.prompts.subquery, &t, &s, p.cheap_models()).await;
        finish(out, calls)
    });
    (node, vec![after.to_string()])
}
