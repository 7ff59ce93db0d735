//! fetch: fused hits → archived documents. A failed fetch is kept as data (status and
//! detail), never dropped and never fatal.

use deepr_evidence::report::CallStatus;
use deepr_orchestrator::clock::Clock;
use deepr_orchestrator::{Fetcher, LedgerEntry};

use crate::concurrent::in_order;
use crate::types::{FetchFailure, FetchOut, FusedHit, RetrieveOut};

/// 2: documents carry the outline their reader found (status, headings, places).
pub const STAGE_VERSION: u32 = 2;
/// Documents fetched per subquestion.
pub const DOCS_PER_SUBQUESTION: usize = 8;
/// Documents a subquestion reads when it reads wider (a model extracts, or the topic is
/// a brief with several parts): the top [`DOCS_PER_SUBQUESTION`] hits, then further
/// local-corpus hits up to this many; a corpus document costs no request (web pages
/// stay at [`DOCS_PER_SUBQUESTION`]). A model is shown a larger candidate pool, which
/// needs documents to fill it: measured with a capable model on the second share
/// (quick), values whose document was never fetched 11 → 5, fact coverage 38 → 45 %,
/// tokens +3 %. A brief is answered from across a share: offline, standard depth, the
/// four shares 64 · 69 · 65 · 71 % → 61 · 79 · 75 · 68 %. A one-line question read by
/// the heuristic keeps [`DOCS_PER_SUBQUESTION`]: more documents only add rivals to its
/// partitioned pool (the README report took a disclaimer over the hot-journal answer).
pub const WIDER_DOCS_PER_SUBQUESTION: usize = 16;

/// The hits a subquestion reads: the top `DOCS_PER_SUBQUESTION`, then (`wider`) local
/// documents after them up to `WIDER_DOCS_PER_SUBQUESTION` in all.
pub fn chosen(hits: &[FusedHit], wider: bool) -> Vec<&FusedHit> {
    let mut out: Vec<&FusedHit> = hits.iter().take(DOCS_PER_SUBQUESTION).collect();
    if wider {
        out.extend(
            hits.iter()
                .skip(DOCS_PER_SUBQUESTION)
                .filter(|h| !h.hit.is_web())
                .take(WIDER_DOCS_PER_SUBQUESTION.saturating_sub(DOCS_PER_SUBQUESTION)),
        );
    }
    out
}

/// Fetch the chosen hits (`wider`: see [`chosen`]), at most `io_concurrency` at once
/// (the fetcher's own per-host rate limits and global cap still apply inside each
/// call). Documents and failures are merged in rank order, whatever order the fetches
/// finish in.
pub async fn run(
    node_id: &str,
    retrieved: &RetrieveOut,
    wider: bool,
    fetcher: &dyn Fetcher,
    io_concurrency: usize,
    clock: &dyn Clock,
) -> (FetchOut, Vec<LedgerEntry>) {
    let top = chosen(&retrieved.hits, wider).into_iter();
    let calls = top
        .map(|fused| async move {
            let started = clock.now();
            let outcome = fetcher.fetch(&fused.hit).await;
            let elapsed_ms = clock.elapsed_ms(started);
            (fused, outcome, elapsed_ms)
        })
        .collect();
    let fetched = in_order(calls, io_concurrency).await;
    let mut docs = Vec::new();
    let mut failures = Vec::new();
    let mut calls = Vec::new();
    for (fused, outcome, elapsed_ms) in fetched {
        calls.push(LedgerEntry::io_call(
            node_id,
            "fetch",
            "fetch",
            "fetch".into(),
            elapsed_ms,
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

/// A subquestion's best hits, fetched and archived.
pub fn node(cx: &crate::node::PipelineContext, round: u32, subquestion: &str) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    let (p, io) = (cx.providers.clone(), cx.config.io_concurrency);
    let rt = node_id::step(round, subquestion, "retrieve");
    let wider = cx.model_extracts() || cx.brief_with_parts;
    // A question read offline keeps its key; a wider reading is named in it.
    let mut key = serde_json::json!({"v": STAGE_VERSION, "docs": DOCS_PER_SUBQUESTION});
    if wider {
        key["local_docs"] = serde_json::json!(WIDER_DOCS_PER_SUBQUESTION);
    }
    let input = rt.clone();
    let node = spec(
        node_id::step(round, subquestion, "fetch"),
        "fetch",
        key,
        move |ctx| async move {
            let retrieved: RetrieveOut = read(&ctx.inputs, &input)?;
            let (out, calls) = run(
                &ctx.node_id,
                &retrieved,
                wider,
                p.fetcher.as_ref(),
                io,
                p.clock.as_ref(),
            )
            .await;
            finish(out, calls)
        },
    );
    (node, vec![rt])
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use async_trait::async_trait;
    use deepr_evidence::report::CallStatus;
    use deepr_orchestrator::clock::VirtualClock;
    use deepr_orchestrator::simulate::{Latency, SlowFetcher};
    use deepr_orchestrator::{DocMeta, FetchOutcome, Fetcher, SearchHit};

    use super::*;
    use crate::types::FusedHit;

    /// Answers every hit at once; `fail` names a document that is unreachable.
    struct Immediate(&'static str);

    #[async_trait]
    impl Fetcher for Immediate {
        async fn fetch(&self, hit: &SearchHit) -> FetchOutcome {
            if hit.doc_key == self.0 {
                return FetchOutcome {
                    status: CallStatus::Unreachable,
                    doc: None,
                    detail: Some("refused".into()),
                };
            }
            FetchOutcome {
                status: CallStatus::Ok,
                doc: Some(DocMeta {
                    doc_key: hit.doc_key.clone(),
                    locator: hit.locator.clone(),
                    title: hit.title.clone(),
                    content_sha256: format!("sha-{}", hit.doc_key),
                    date: None,
                    authority: 1.0,
                    outline: Default::default(),
                }),
                detail: None,
            }
        }
    }

    fn retrieved(n: usize) -> RetrieveOut {
        RetrieveOut {
            hits: (0..n)
                .map(|i| FusedHit {
                    hit: SearchHit {
                        doc_key: format!("doc{i}"),
                        locator: format!("doc{i}.html"),
                        title: format!("Doc {i}"),
                        score: 1.0,
                        snippet: String::new(),
                    },
                    rrf: 1.0 / (61.0 + i as f64),
                })
                .collect(),
            coverage: vec![],
        }
    }

    fn slow(fail: &'static str, clock: Arc<VirtualClock>) -> SlowFetcher {
        SlowFetcher {
            inner: Arc::new(Immediate(fail)),
            latency: Latency::Uniform(Duration::from_millis(200), Duration::from_millis(1500)),
            seed: 5,
            clock,
        }
    }

    /// Each document's own simulated latency, as the fetcher draws it.
    fn latency_of(doc: usize) -> Duration {
        Latency::Uniform(Duration::from_millis(200), Duration::from_millis(1500))
            .sample(5, format!("fetch\0doc{doc}").as_bytes())
    }

    #[test]
    fn concurrent_fetches_cost_the_slowest_not_the_sum() {
        // Virtual time: the clock moves only by what the simulated fetches sleep.
        let clock = Arc::new(VirtualClock::new());
        let fetcher = slow("doc3", Arc::clone(&clock));
        let started = clock.now();
        let (parallel, calls) =
            clock.run(run("n", &retrieved(10), false, &fetcher, 8, clock.as_ref()));
        let elapsed = clock.now() - started;
        let latencies: Vec<Duration> = (0..DOCS_PER_SUBQUESTION).map(latency_of).collect();
        let slowest = latencies.iter().copied().max().unwrap_or_default();
        let sum: Duration = latencies.iter().sum();
        // Exactly the slowest fetch.
        assert_eq!(elapsed, slowest, "sum would be {sum:?}");
        assert!(sum > slowest * 2, "the draws differ enough to tell");
        assert_eq!(
            calls.len(),
            DOCS_PER_SUBQUESTION,
            "only the top 8 are fetched"
        );

        let started = clock.now();
        let (sequential, _) =
            clock.run(run("n", &retrieved(10), false, &fetcher, 1, clock.as_ref()));
        assert_eq!(clock.now() - started, sum, "one at a time costs the sum");
        // Same documents, failures and order either way: rank order, not finish order.
        assert_eq!(parallel, sequential);
        let keys: Vec<&str> = parallel
            .docs
            .iter()
            .map(|(d, _)| d.doc_key.as_str())
            .collect();
        assert_eq!(
            keys,
            ["doc0", "doc1", "doc2", "doc4", "doc5", "doc6", "doc7"]
        );
        assert_eq!(parallel.failures.len(), 1);
        assert_eq!(parallel.failures[0].status, "unreachable");
    }

    #[test]
    fn a_model_reads_more_corpus_documents_never_more_web_pages() {
        let mut hits = retrieved(24).hits;
        // Hits 10 and 11 are web pages.
        for hit in &mut hits[10..12] {
            hit.hit.locator = format!("https://example.org/{}", hit.hit.doc_key);
        }
        let keys = |wider| -> Vec<String> {
            chosen(&hits, wider)
                .iter()
                .map(|h| h.hit.doc_key.clone())
                .collect()
        };
        let heuristic = keys(false);
        assert_eq!(heuristic.len(), DOCS_PER_SUBQUESTION);
        assert_eq!(heuristic.last().map(String::as_str), Some("doc7"));
        let model = keys(true);
        assert_eq!(model.len(), WIDER_DOCS_PER_SUBQUESTION);
        assert_eq!(model[..DOCS_PER_SUBQUESTION], heuristic[..]);
        assert!(!model.contains(&"doc10".to_string()) && !model.contains(&"doc11".to_string()));
        assert_eq!(model.last().map(String::as_str), Some("doc17"));
        // Fewer hits than either limit: all of them, in rank order.
        let few = &hits[..5];
        assert_eq!(chosen(few, true).len(), 5);
    }
}
