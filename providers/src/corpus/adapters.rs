//! The corpus index behind the orchestrator's traits: `CorpusSearch` (BM25 hits) and
//! `CorpusFetcher` (a hit's archived text).

use std::sync::Arc;

use async_trait::async_trait;
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{FetchOutcome, Fetcher, SearchHit, SearchOutcome, SearchProvider};

use super::*;

/// The corpus as a [`SearchProvider`] named `corpus`.
#[derive(Clone, Debug)]
pub struct CorpusSearch(pub Arc<CorpusIndex>);

#[async_trait]
impl SearchProvider for CorpusSearch {
    fn name(&self) -> String {
        "corpus".to_string()
    }

    async fn search(&self, query: &str, limit: usize) -> SearchOutcome {
        match self.0.search(query, limit) {
            Ok(hits) if hits.is_empty() => SearchOutcome {
                status: CallStatus::NoResults,
                hits,
                detail: None,
            },
            Ok(hits) => SearchOutcome {
                status: CallStatus::Ok,
                hits,
                detail: None,
            },
            Err(err) => SearchOutcome {
                status: CallStatus::BadResponse,
                hits: Vec::new(),
                detail: Some(err.to_string()),
            },
        }
    }
}

/// The corpus as a [`Fetcher`]: a hit's document is already archived, so fetching is
/// a manifest lookup.
#[derive(Clone, Debug)]
pub struct CorpusFetcher(pub Arc<CorpusIndex>);

#[async_trait]
impl Fetcher for CorpusFetcher {
    async fn fetch(&self, hit: &SearchHit) -> FetchOutcome {
        match self.0.doc(&hit.doc_key) {
            Some(meta) => FetchOutcome {
                status: CallStatus::Ok,
                doc: Some(meta),
                detail: None,
            },
            None => FetchOutcome {
                status: CallStatus::BadResponse,
                doc: None,
                detail: Some(format!(
                    "{} is not a document of the corpus {}",
                    hit.doc_key,
                    self.0.root().display()
                )),
            },
        }
    }
}
