//! The score step as a node of the pipeline: its key (version, limits, the re-ranking
//! model) and what it reads — the subquestion's fetch and subquery, the earlier rounds'
//! extracts (their quotes are not offered again) and the round's triage.

use std::collections::BTreeSet;

use deepr_orchestrator::SentenceEmbedder;

use super::{
    run, Earlier, Reader, MAX_CANDIDATES, MAX_DOCUMENT_UNITS, MEANING_WEIGHT, RERANK_POOL,
    STAGE_VERSION,
};
use crate::types::FetchOut;

/// The score node's key: its version and limits, and the re-ranking model when there
/// is one (absent otherwise, so runs without a model keep their keys).
pub fn node_key(embedder: Option<&dyn SentenceEmbedder>, keep: usize) -> serde_json::Value {
    let mut key = serde_json::json!({"v": STAGE_VERSION, "max": keep});
    if let Some(embedder) = embedder {
        key["embed"] = serde_json::json!({
            "model": embedder.model_id(),
            "pool": RERANK_POOL,
            "meaning": MEANING_WEIGHT,
        });
    }
    key
}

/// A subquestion's sources and candidates; sentences cited by `earlier_extracts` (the
/// earlier rounds' extract nodes) are not offered again; `triage`, the round's triage
/// node when a model judged scope (else the title rule decides); `asked_document`, the
/// title a document follow-up asks about (its document's units are its candidates).
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    subquestion: &str,
    earlier_extracts: &[String],
    triage: Option<&str>,
    asked_document: Option<&str>,
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    let (p, t) = (cx.providers.clone(), cx.config.topic.clone());
    let (ft, sq) = (
        node_id::step(round, subquestion, "fetch"),
        node_id::step(round, subquestion, "subquery"),
    );
    let reader = if cx.model_reads_documents() {
        Reader::Documents
    } else if cx.model_extracts() {
        Reader::Model
    } else {
        Reader::Heuristic
    };
    let keep = match reader {
        Reader::Documents => MAX_DOCUMENT_UNITS,
        // A model reads its pool uncut, then the short runs and documents joined to it.
        Reader::Model => cx.config.model_pool.max(1),
        Reader::Heuristic => MAX_CANDIDATES.max(cx.config.model_pool),
    };
    let mut deps = vec![ft.clone(), sq.clone()];
    deps.extend(earlier_extracts.iter().cloned());
    deps.extend(triage.map(str::to_string));
    let triage = triage.map(str::to_string);
    let asked_document = asked_document.map(str::to_string);
    let previous = earlier_extracts.to_vec();
    let mut key = node_key(cx.providers.embedder.as_deref(), keep);
    match reader {
        Reader::Model => key["reader"] = serde_json::json!("model"),
        Reader::Documents => key["reader"] = serde_json::json!("documents"),
        Reader::Heuristic => {}
    }
    let node = spec(
        node_id::step(round, subquestion, "score"),
        "score",
        key,
        move |ctx| async move {
            let fetched: FetchOut = read(&ctx.inputs, &ft)?;
            let plan: crate::types::SubqueryOut = read(&ctx.inputs, &sq)?;
            let mut exclude = BTreeSet::new();
            for id in &previous {
                let extracted: crate::types::ExtractOut = read(&ctx.inputs, id)?;
                exclude.extend(extracted.claims.into_iter().flat_map(|c| c.citations));
            }
            let scopes: crate::triage::TriageOut = match &triage {
                Some(id) => read(&ctx.inputs, id)?,
                None => Default::default(),
            };
            // Only a model reads a follow-up's document alone: the heuristic extractor
            // takes its pool's best units, and other documents' are often the facts
            // (two shares lost one each offline when it read the document alone).
            let document = asked_document
                .as_deref()
                .filter(|_| reader != Reader::Heuristic)
                .and_then(|title| super::asked::fetched_document(title, &fetched));
            let out = run(
                &fetched,
                &plan.ranking_question,
                &t,
                &plan.queries,
                Earlier {
                    cited: &exclude,
                    scopes: &scopes,
                    document,
                },
                p.archive.as_ref(),
                p.embedder.as_deref(),
                keep,
                reader,
            )
            .await;
            finish(out, vec![])
        },
    );
    (node, deps)
}
