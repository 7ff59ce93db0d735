//! Simulated latency for search and fetch providers: a **simulation setting** for
//! orchestration benchmarks (with the offline model's `--offline-latency`), never a
//! change to any answer.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::provider::{FetchOutcome, Fetcher, SearchHit, SearchOutcome, SearchProvider};

pub struct SlowSearch {
    pub inner: Arc<dyn SearchProvider>,
    pub latency: Duration,
}

#[async_trait]
impl SearchProvider for SlowSearch {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn weight(&self) -> f64 {
        self.inner.weight()
    }
    async fn search(&self, query: &str, limit: usize) -> SearchOutcome {
        tokio::time::sleep(self.latency).await;
        self.inner.search(query, limit).await
    }
}

pub struct SlowFetcher {
    pub inner: Arc<dyn Fetcher>,
    pub latency: Duration,
}

#[async_trait]
impl Fetcher for SlowFetcher {
    async fn fetch(&self, hit: &SearchHit) -> FetchOutcome {
        tokio::time::sleep(self.latency).await;
        self.inner.fetch(hit).await
    }
}
