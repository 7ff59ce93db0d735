//! Orchestrator benchmarks: checkpoint write + flush per node (sled), and executor
//! overhead per node with zero-latency work.
// A benchmark harness: a failed setup aborts the benchmark with its reason.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use deepr_checkpoints::SledStore;
use deepr_orchestrator::executor::{Dag, NoProgress, NodeResult};
use deepr_orchestrator::{CheckpointStore, Executor, NodeRecord, NodeSpec, UsageLedger};

fn checkpoint(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = runtime
        .block_on(SledStore::open(&dir.path().join("db")))
        .expect("store");
    let record = NodeRecord {
        key: "k".repeat(64),
        stage: "extract".into(),
        key_material: serde_json::Value::Null,
        deps: vec![],
        output: serde_json::json!({"claims": vec!["x".repeat(200); 5]}),
        calls: vec![],
    };
    let mut n = 0u64;
    c.bench_function("checkpoint_put_flush", |b| {
        b.iter(|| {
            n += 1;
            runtime
                .block_on(store.put_node(&format!("node/{n}"), &record))
                .expect("put");
        })
    });
}

fn executor(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut group = c.benchmark_group("executor");
    group.sample_size(10);
    group.bench_function("chain_of_100_nodes", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("tempdir"),
            |dir| {
                runtime.block_on(async {
                    let store = SledStore::open(&dir.path().join("db"))
                        .await
                        .expect("store");
                    let executor = Executor {
                        store: Arc::new(store),
                        ledger: Arc::new(UsageLedger::default()),
                        progress: Arc::new(NoProgress),
                        concurrency: 4,
                        stop: Arc::new(AtomicBool::new(false)),
                        budget: deepr_orchestrator::Budget::unlimited(),
                        preview: None,
                        retry_degraded: false,
                    };
                    let mut dag = Dag::new();
                    for i in 0..100 {
                        let deps = if i == 0 {
                            vec![]
                        } else {
                            vec![format!("n{}", i - 1)]
                        };
                        dag.add(
                            NodeSpec {
                                id: format!("n{i}"),
                                stage: "bench".into(),
                                key_material: serde_json::json!(i),
                                run: Box::new(|_| {
                                    Box::pin(async {
                                        Ok(NodeResult {
                                            output: serde_json::json!(1),
                                            calls: vec![],
                                        })
                                    })
                                }),
                            },
                            &deps,
                        )
                        .expect("add");
                    }
                    let mut done = BTreeMap::new();
                    executor.run(dag, &mut done).await.expect("run");
                })
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, checkpoint, executor, resume_restore);
criterion_main!(benches);

/// Resume overhead: a finished standard run on the fixture corpus, resumed — every node
/// restored from its checkpoint (what a resume does before its first new call).
fn resume_restore(c: &mut Criterion) {
    use deepr_checkpoints::FileArchive;
    use deepr_providers::{CorpusFetcher, CorpusIndex, CorpusSearch};
    use deepr_stages::{run_research, Depth, ResearchConfig, ResearchProviders, Strategy};

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../test_data/contradiction");
    let archive = Arc::new(FileArchive::open(dir.path()).expect("archive"));
    let (index, _) = CorpusIndex::open(&corpus, dir.path(), &archive).expect("index");
    let index = Arc::new(index);
    let llm: Arc<dyn deepr_orchestrator::LlmProvider> =
        Arc::new(deepr_heuristic::HeuristicModel::default());
    let providers = ResearchProviders {
        strong: Arc::clone(&llm),
        cheap: Arc::clone(&llm),
        fallback: llm,
        search: vec![Arc::new(CorpusSearch(Arc::clone(&index)))],
        fetcher: Arc::new(CorpusFetcher(index)),
        archive,
        prompts: Arc::default(),
        clock: Arc::new(deepr_orchestrator::clock::TokioClock::new()),
        embedder: None,
    };
    let config = ResearchConfig {
        topic: "How does the rollback journal protect a transaction, and what is the default journal page size?".into(),
        depth: Depth::Standard,
        strategy: Strategy::Linear,
        search_fingerprint: "bench".into(),
        io_concurrency: deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY,
        model_pool: deepr_stages::extract::DEFAULT_MODEL_POOL,
        reading: deepr_stages::research::Reading::default(),
        corpus_files: None,
        user_plan: None,
        shape: Default::default(),
        parent_reading: None,
    };
    let store: Arc<dyn CheckpointStore> = Arc::new(
        runtime
            .block_on(SledStore::open(&dir.path().join("run.sled")))
            .expect("store"),
    );
    let executor = || Executor {
        store: Arc::clone(&store),
        ledger: Arc::new(UsageLedger::default()),
        progress: Arc::new(NoProgress),
        concurrency: 5,
        stop: Arc::new(AtomicBool::new(false)),
        budget: deepr_orchestrator::Budget::unlimited(),
        preview: None,
        retry_degraded: false,
    };
    let first = runtime
        .block_on(run_research(&config, &providers, &executor()))
        .expect("first run");
    let nodes = first.executed_nodes;
    let bytes: u64 = walk_size(&dir.path().join("run.sled"));
    eprintln!("resume bench: {nodes} nodes checkpointed, store on disk {bytes} bytes");
    c.bench_function("resume_restore_all_nodes", |b| {
        b.iter(|| {
            let result = runtime
                .block_on(run_research(&config, &providers, &executor()))
                .expect("resume");
            assert_eq!(result.restored_nodes, nodes);
        })
    });
}

fn walk_size(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        walk_size(&p)
                    } else {
                        e.metadata().map(|m| m.len()).unwrap_or(0)
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}
