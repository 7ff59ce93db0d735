//! triage: which documents a round's searches found are in scope of the brief or
//! question. When a model runs, one `r{r}/triage` node per round asks it (batched,
//! [`DOCUMENTS_PER_CALL`] documents a call, the cheap tier), after the round's
//! fetches and before its scores, for every document no earlier round judged: each is
//! shown by its title, date, status, headings and opening lines, and gets in scope,
//! background or off-topic. Offline there is no node and no call: score applies the
//! title rule ([`deepr_tasks::triage::off_topic`], which is also the offline model's
//! answer when a model's is unusable).
//!
//! An off-topic document is never a candidate, never followed up, never a section's
//! subject, and is listed under References with its reason; a background one is read
//! like one in scope.

use std::collections::BTreeSet;

use deepr_orchestrator::{ArchivedText, DocMeta, LedgerEntry, TextArchive, Tier};
use deepr_tasks::triage::{
    Document, Input, Triage, DOCUMENTS_PER_CALL, MAX_HEADINGS, OPENING_CHARS,
};

use crate::concurrent::in_order;
use crate::model_call::{call_task, Models, TaskCall};
use crate::types::FetchOut;

/// 1: the first version.
pub const STAGE_VERSION: u32 = 1;
/// Characters of a model's reason kept for the report.
const REASON_CHARS: usize = 200;

pub use crate::types::{DocScope, TriageOut};

/// How a document is shown to the model: what it is, not what it says.
fn shown(id: String, doc: &DocMeta, text: &ArchivedText) -> Document {
    let headings: Vec<String> = crate::decompose::outline_headings(&doc.outline, &text.text)
        .into_iter()
        .take(MAX_HEADINGS)
        .collect();
    let opening: String = text.text.chars().take(OPENING_CHARS).collect();
    Document {
        id,
        title: doc.title.clone(),
        date: doc.date.clone(),
        status: doc.outline.status.clone(),
        headings,
        opening,
    }
}

/// The documents of `fetched` that `earlier` has not judged, once each, in the order
/// the round's subquestions fetched them.
fn unjudged<'f>(fetched: &'f [FetchOut], earlier: &TriageOut) -> Vec<&'f DocMeta> {
    let mut seen = BTreeSet::new();
    fetched
        .iter()
        .flat_map(|f| f.docs.iter().map(|(doc, _)| doc))
        .filter(|doc| !earlier.verdicts.contains_key(&doc.content_sha256))
        .filter(|doc| seen.insert(doc.content_sha256.clone()))
        .collect()
}

/// What one triage call needs besides its documents.
pub struct TriageCall<'c> {
    pub node_id: &'c str,
    pub prompt: &'c deepr_prompts::Prompt,
    pub topic: &'c str,
    pub archive: &'c dyn TextArchive,
    pub models: Models<'c>,
    pub io_concurrency: usize,
}

/// Judges the round's new documents and returns every verdict so far.
pub async fn run(
    call: TriageCall<'_>,
    fetched: &[FetchOut],
    earlier: TriageOut,
) -> (TriageOut, Vec<LedgerEntry>) {
    let documents: Vec<(&DocMeta, ArchivedText)> = unjudged(fetched, &earlier)
        .into_iter()
        .filter_map(|doc| Some((doc, call.archive.get(&doc.content_sha256)?)))
        .collect();
    let batches = documents.chunks(DOCUMENTS_PER_CALL).map(|batch| {
        let input = Input {
            topic: call.topic.to_string(),
            documents: batch
                .iter()
                .enumerate()
                .map(|(i, (doc, text))| shown(format!("d{}", i + 1), doc, text))
                .collect(),
        };
        let ids: Vec<&str> = batch
            .iter()
            .map(|(d, _)| d.content_sha256.as_str())
            .collect();
        let models = call.models;
        async move {
            let result = call_task(
                models,
                TaskCall::<Triage> {
                    node_id: call.node_id,
                    stage: "triage",
                    prompt: call.prompt,
                    tier: Tier::Cheap,
                    input: &input,
                },
            )
            .await;
            (ids, result)
        }
    });
    let answers = in_order(batches.collect(), call.io_concurrency).await;
    let mut out = earlier;
    let (mut calls, mut degraded) = (Vec::new(), Vec::new());
    for (ids, result) in answers {
        calls.extend(result.calls);
        degraded.extend(result.degraded);
        for verdict in result.value.verdicts {
            let index = verdict
                .id
                .strip_prefix('d')
                .and_then(|n| n.parse::<usize>().ok());
            let Some(sha) = index.and_then(|n| ids.get(n.wrapping_sub(1))) else {
                continue;
            };
            let reason = crate::model_call::clean_model_text(&verdict.reason, REASON_CHARS);
            out.verdicts.insert(
                (*sha).to_string(),
                DocScope {
                    scope: verdict.scope,
                    reason,
                },
            );
        }
    }
    if !degraded.is_empty() {
        out.degraded = Some(degraded.join("; "));
    }
    (out, calls)
}

/// The round's triage node: after its fetches (and the earlier round's triage), before
/// its scores. Only a model run has one ([`crate::node::PipelineContext::model_extracts`]).
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    fetch_ids: &[String],
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    let p = cx.providers.clone();
    let (topic, io) = (cx.config.topic.clone(), cx.config.io_concurrency);
    let earlier = round
        .checked_sub(1)
        .map(|before| node_id::join(before, "triage"));
    let mut deps = fetch_ids.to_vec();
    deps.extend(earlier.clone());
    let llm =
        crate::model_call::prompt_key(&cx.providers.prompts.triage, cx.providers.cheap_models());
    let mut key = serde_json::json!({"v": STAGE_VERSION, "llm": llm});
    // A refresh's first round starts from its parent's verdicts (by content hash: only
    // new and changed documents are judged).
    let parent = match round {
        0 => cx
            .config
            .parent_reading
            .as_ref()
            .and_then(|p| p.scopes(&key)),
        _ => None,
    };
    if let Some((_, digest)) = &parent {
        key["parent"] = serde_json::json!(digest);
    }
    let fetches = fetch_ids.to_vec();
    let node = spec(
        node_id::join(round, "triage"),
        "triage",
        key,
        move |ctx| async move {
            let fetched = fetches
                .iter()
                .map(|id| read(&ctx.inputs, id))
                .collect::<Result<Vec<FetchOut>, String>>()?;
            let before: TriageOut = match (&earlier, &parent) {
                (Some(id), _) => read(&ctx.inputs, id)?,
                (None, Some((verdicts, _))) => verdicts.clone(),
                (None, None) => TriageOut::default(),
            };
            let call = TriageCall {
                node_id: &ctx.node_id,
                prompt: &p.prompts.triage,
                topic: &topic,
                archive: p.archive.as_ref(),
                models: p.cheap_models(),
                io_concurrency: io,
            };
            let (out, calls) = run(call, &fetched, before).await;
            finish(out, calls)
        },
    );
    (node, deps)
}

#[cfg(test)]
mod tests;
