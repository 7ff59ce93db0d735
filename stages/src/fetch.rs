//! fetch: fused hits → archived documents. A failed fetch is kept as data (status and
//! detail), never dropped and never fatal.

use std::time::Instant;

use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{Fetcher, LedgerEntry};

use crate::types::{FetchFailure, FetchOut, RetrieveOut};

pub const STAGE_VERSION: u32 = 1;
/// Documents fetched per subquestion.
pub const DOCS_PER_SUBQUESTION: usize = 8;

pub async fn run(
    node_id: &str,
    retrieved: &RetrieveOut,
    fetcher: &dyn Fetcher,
) -> (FetchOut, Vec<LedgerEntry>) {
    let mut docs = Vec::new();
    let mut failures = Vec::new();
    let mut calls = Vec::new();
    for fused in retrieved.hits.iter().take(DOCS_PER_SUBQUESTION) {
        let started = Instant::now();
        let outcome = fetcher.fetch(&fused.hit).await;
        calls.push(LedgerEntry::io_call(
            node_id,
            "fetch",
            "fetch",
            "fetch".into(),
            u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            outcome.status.as_str(),
        ));
        match (outcome.status, outcome.doc) {
            (CallStatus::Ok, Some(doc)) => docs.push((doc, fused.rrf)),
            (status, _) => failures.push(FetchFailure {
                doc_key: fused.hit.doc_key.clone(),
                locator: fused.hit.locator.clone(),
                status: status.as_str().to_string(),
                detail: outcome.detail,
            }),
        }
    }
    (FetchOut { docs, failures }, calls)
}
