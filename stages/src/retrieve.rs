//! retrieve: queries × search providers → one fused ranking. Every call ends with a
//! status recorded in coverage; streams fuse by weighted reciprocal rank fusion,
//! Σ w / (60 + rank), merging hits by `doc_key`. Ties break by `doc_key`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use deepr_evidence::report::{CallStatus, Coverage};
use deepr_orchestrator::clock::Clock;
use deepr_orchestrator::{LedgerEntry, SearchHit, SearchProvider, Unfinished};

use crate::concurrent::in_order;
use crate::types::{FusedHit, RetrieveOut};

/// 2: the topic itself is searched in every subquestion's retrieval.
pub const STAGE_VERSION: u32 = 2;

/// A subquestion's queries plus the topic itself (unless already one of them): the
/// research question stays in every round's search, however the plan drifted.
pub fn with_topic(queries: &[String], topic: &str) -> Vec<String> {
    let mut all = queries.to_vec();
    let topic = topic.split_whitespace().collect::<Vec<_>>().join(" ");
    if !topic.is_empty() && !all.contains(&topic) {
        all.push(topic);
    }
    all
}
/// RRF constant (field convention).
pub const RRF_K: f64 = 60.0;
/// Hits requested per query and provider.
pub const HITS_PER_QUERY: usize = 10;

/// Run every query on every provider — at most `io_concurrency` calls at once — and
/// fuse the streams. Results are merged in (query, provider) order whatever order the
/// calls finish in, so the output is the same as a sequential run's.
pub async fn search_all(
    node_id: &str,
    stage: &str,
    queries: &[String],
    providers: &[Arc<dyn SearchProvider>],
    limit: usize,
    io_concurrency: usize,
    clock: &dyn Clock,
) -> (RetrieveOut, Vec<LedgerEntry>) {
    let pairs = queries
        .iter()
        .flat_map(|query| providers.iter().map(move |provider| (query, provider)));
    let calls = pairs
        .map(|(query, provider)| async move {
            let started = clock.now();
            let outcome = provider.search(query, limit).await;
            let elapsed_ms = clock.elapsed_ms(started);
            (query, provider, outcome, elapsed_ms)
        })
        .collect();
    let answers = in_order(calls, io_concurrency).await;
    let mut streams: Vec<(f64, Vec<SearchHit>)> = Vec::new();
    let mut coverage = Vec::new();
    let mut calls = Vec::new();
    for (query, provider, outcome, elapsed_ms) in answers {
        let hits = u32::try_from(outcome.hits.len()).unwrap_or(u32::MAX);
        // A provider that says ok but returns nothing is "no-results"; a failure is
        // never reported as "nothing found".
        let status = if outcome.status == CallStatus::Ok && hits == 0 {
            CallStatus::NoResults
        } else {
            outcome.status
        };
        coverage.push(Coverage {
            provider: provider.name(),
            query: query.clone(),
            status,
            hits,
        });
        calls.push(LedgerEntry::io_call(
            node_id,
            stage,
            "search",
            provider.name(),
            elapsed_ms,
            status.as_str(),
        ));
        if status == CallStatus::Ok {
            streams.push((provider.weight(), outcome.hits));
        }
    }
    // Every search of this step failed (none answered, not even with "no results"):
    // nothing here is worth keeping. The step stays unfinished so that a resume asks
    // again; when only some sources failed, the step goes on and coverage says so.
    if !coverage.is_empty()
        && coverage
            .iter()
            .all(|c| !matches!(c.status, CallStatus::Ok | CallStatus::NoResults))
    {
        let failed: Vec<String> = coverage
            .iter()
            .map(|c| format!("{} {}", c.provider, c.status.as_str()))
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        if let Some(last) = calls.last_mut() {
            last.unfinished = Some(Unfinished::ProviderUnavailable {
                provider: "search".into(),
                message: format!(
                    "every search failed ({}); check the network, or use --corpus DIR",
                    failed.join(", ")
                ),
            });
        }
    }
    coverage.sort_by(|a, b| (&a.provider, &a.query).cmp(&(&b.provider, &b.query)));
    (
        RetrieveOut {
            hits: fuse(&streams),
            coverage,
        },
        calls,
    )
}

/// Weighted reciprocal rank fusion of ranked streams (rank is 1-based).
pub fn fuse(streams: &[(f64, Vec<SearchHit>)]) -> Vec<FusedHit> {
    let mut fused: BTreeMap<String, FusedHit> = BTreeMap::new();
    for (weight, hits) in streams {
        for (rank, hit) in hits.iter().enumerate() {
            let contribution = weight / (RRF_K + (rank as f64 + 1.0));
            fused
                .entry(hit.doc_key.clone())
                .and_modify(|f| f.rrf += contribution)
                .or_insert_with(|| FusedHit {
                    hit: hit.clone(),
                    rrf: contribution,
                });
        }
    }
    let mut out: Vec<FusedHit> = fused.into_values().collect();
    out.sort_by(|a, b| {
        b.rrf
            .total_cmp(&a.rrf)
            .then_with(|| a.hit.doc_key.cmp(&b.hit.doc_key))
    });
    out
}

/// A subquestion's searches, every provider, results fused.
pub fn node(cx: &crate::node::PipelineContext, round: u32, subquestion: &str) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    let (p, t, io) = (
        cx.providers.clone(),
        cx.config.topic.clone(),
        cx.config.io_concurrency,
    );
    let sq = node_id::step(round, subquestion, "subquery");
    let key = serde_json::json!({"v": STAGE_VERSION, "search": cx.search_names, "fp": cx.config.search_fingerprint, "k": RRF_K});
    let input = sq.clone();
    let node = spec(
        node_id::step(round, subquestion, "retrieve"),
        "retrieve",
        key,
        move |ctx| async move {
            let plan: crate::types::SubqueryOut = read(&ctx.inputs, &input)?;
            let queries = with_topic(&plan.queries, &t);
            let (out, calls) = search_all(
                &ctx.node_id,
                "retrieve",
                &queries,
                &p.search,
                HITS_PER_QUERY,
                io,
                p.clock.as_ref(),
            )
            .await;
            finish(out, calls)
        },
    );
    (node, vec![sq])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(key: &str) -> SearchHit {
        SearchHit {
            doc_key: key.into(),
            locator: key.into(),
            title: key.into(),
            score: 1.0,
            snippet: String::new(),
        }
    }

    #[test]
    fn rrf_sums_streams_and_breaks_ties_by_key() {
        let fused = fuse(&[
            (1.0, vec![hit("b"), hit("a")]),
            (1.0, vec![hit("a"), hit("b")]),
            (1.0, vec![hit("c")]),
        ]);
        let keys: Vec<&str> = fused.iter().map(|f| f.hit.doc_key.as_str()).collect();
        assert_eq!(keys, ["a", "b", "c"]);
        assert!((fused[0].rrf - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-12);
    }
}

#[cfg(test)]
mod concurrency_tests {
    use std::time::Duration;

    use async_trait::async_trait;
    use deepr_orchestrator::simulate::{Latency, SlowSearch};
    use deepr_orchestrator::SearchOutcome;

    use super::*;

    /// Ranks three documents by the query's length, so queries fuse differently.
    struct Ranked(&'static str);

    #[async_trait]
    impl SearchProvider for Ranked {
        fn name(&self) -> String {
            self.0.into()
        }
        async fn search(&self, query: &str, _: usize) -> SearchOutcome {
            let mut keys = vec!["a", "b", "c"];
            keys.rotate_left(query.len() % 3);
            SearchOutcome {
                status: CallStatus::Ok,
                hits: keys
                    .into_iter()
                    .map(|k| SearchHit {
                        doc_key: format!("{}-{k}", self.0),
                        locator: k.into(),
                        title: k.into(),
                        score: 1.0,
                        snippet: String::new(),
                    })
                    .collect(),
                detail: None,
            }
        }
    }

    #[test]
    fn all_queries_and_providers_search_at_once_and_fuse_as_in_sequence() {
        let latency = Latency::Uniform(Duration::from_millis(300), Duration::from_millis(900));
        // Virtual time: the clock moves only by what the simulated searches sleep.
        let clock = Arc::new(deepr_orchestrator::clock::VirtualClock::new());
        let providers: Vec<Arc<dyn SearchProvider>> = ["p1", "p2"]
            .into_iter()
            .map(|name| {
                Arc::new(SlowSearch {
                    inner: Arc::new(Ranked(name)),
                    latency,
                    seed: 1,
                    clock: clock.clone(),
                }) as Arc<dyn SearchProvider>
            })
            .collect();
        let queries: Vec<String> = ["wal", "rollback journal", "locks"]
            .iter()
            .map(|q| q.to_string())
            .collect();
        let draws: Vec<Duration> = queries
            .iter()
            .flat_map(|q| {
                ["p1", "p2"].map(|p| latency.sample(1, format!("search\0{p}\0{q}\010").as_bytes()))
            })
            .collect();
        let started = clock.now();
        let (parallel, calls) = clock.run(search_all(
            "n",
            "retrieve",
            &queries,
            &providers,
            10,
            8,
            clock.as_ref(),
        ));
        assert_eq!(
            clock.now() - started,
            draws.iter().copied().max().unwrap_or_default()
        );
        // Each call's entry is in (query, provider) order with its own latency, whatever
        // order the calls finished in.
        let latencies: Vec<u64> = calls.iter().map(|c| c.latency_ms).collect();
        let drawn: Vec<u64> = draws
            .iter()
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .collect();
        assert_eq!(latencies, drawn);
        let providers_in_order: Vec<&str> = calls.iter().map(|c| c.provider.as_str()).collect();
        assert_eq!(providers_in_order, ["p1", "p2", "p1", "p2", "p1", "p2"]);
        let started = clock.now();
        let (sequential, _) = clock.run(search_all(
            "n",
            "retrieve",
            &queries,
            &providers,
            10,
            1,
            clock.as_ref(),
        ));
        assert_eq!(clock.now() - started, draws.iter().sum::<Duration>());
        assert_eq!(parallel, sequential);
    }
}
