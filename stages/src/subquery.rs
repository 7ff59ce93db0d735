//! subquery: a subquestion → 1–3 search queries plus a ranking question (cheap
//! model). Search text differs from ranking text: queries are keywords, the ranking
//! question is what a relevant passage must say.

use deepr_orchestrator::terms::{is_stop_word, words};
use deepr_orchestrator::{LedgerEntry, LlmProvider, Tier};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::llm::{call_task, TaskCall};
use crate::types::{Subq, SubqueryOut};

pub const STAGE_VERSION: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub queries: Vec<String>,
    pub ranking_question: String,
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    subq: &Subq,
    llm: &dyn LlmProvider,
) -> (SubqueryOut, Vec<LedgerEntry>) {
    let result = call_task::<Answer, _>(
        llm,
        TaskCall {
            node_id,
            stage: "subquery",
            prompt,
            tier: Tier::Cheap,
            values: vec![
                ("topic", topic.to_string()),
                ("subquestion", deepr_prompts::quoted(&subq.text)),
            ],
            task_input: json!({"topic": topic, "subquestion": subq.text}),
        },
        |a: &Answer| {
            let usable = a.queries.iter().filter(|q| !q.trim().is_empty()).count();
            if !(1..=3).contains(&usable) {
                return Err(format!("expected 1 to 3 non-empty queries, got {usable}"));
            }
            Ok(())
        },
    )
    .await;
    let mut queries: Vec<String> = Vec::new();
    for query in &result.value.queries {
        let query: String = crate::llm::clean_model_text(query, 200);
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

/// Offline: the subquestion's keywords; a quoted heading as its own query; the
/// keywords plus the topic's keywords.
pub fn offline_answer(input: &Value) -> Value {
    let subquestion = input["subquestion"].as_str().unwrap_or_default();
    let topic = input["topic"].as_str().unwrap_or_default();
    let keywords = |text: &str| -> Vec<String> {
        words(text)
            .into_iter()
            .filter(|w| !is_stop_word(w) && w.chars().any(char::is_alphanumeric))
            .collect()
    };
    let own = keywords(subquestion);
    let mut queries = vec![own.join(" ")];
    if let (Some(start), Some(end)) = (subquestion.find('“'), subquestion.find('”')) {
        if end > start {
            let heading = keywords(&subquestion[start..end]).join(" ");
            if !heading.is_empty() {
                queries.push(heading);
            }
        }
    }
    let extra: Vec<String> = keywords(topic)
        .into_iter()
        .filter(|w| !own.contains(w))
        .take(3)
        .collect();
    if !extra.is_empty() && queries.len() < 3 {
        queries.push(format!(
            "{} {}",
            own.iter().take(4).cloned().collect::<Vec<_>>().join(" "),
            extra.join(" ")
        ));
    }
    queries.retain(|q| !q.trim().is_empty());
    queries.dedup();
    if queries.is_empty() {
        queries.push(subquestion.to_string());
    }
    json!({"queries": queries, "ranking_question": subquestion})
}
