//! Sends each hit to the fetcher for its kind of source: URLs to the web fetcher,
//! corpus paths to the corpus fetcher.

use std::sync::Arc;

use async_trait::async_trait;
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{FetchOutcome, Fetcher, SearchHit};

/// Sends URL hits to the web fetcher and corpus paths to the corpus fetcher.
pub struct RoutingFetcher {
    pub corpus: Option<Arc<dyn Fetcher>>,
    pub web: Option<Arc<dyn Fetcher>>,
}

#[async_trait]
impl Fetcher for RoutingFetcher {
    async fn fetch(&self, hit: &SearchHit) -> FetchOutcome {
        let target = if hit.is_web() {
            &self.web
        } else {
            &self.corpus
        };
        match target {
            Some(fetcher) => fetcher.fetch(hit).await,
            None => FetchOutcome {
                status: CallStatus::Skipped,
                doc: None,
                detail: Some("no fetcher for this kind of source".into()),
            },
        }
    }
}
