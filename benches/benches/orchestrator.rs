//! Orchestrator benchmarks: checkpoint write + flush per node (sled), and executor
//! overhead per node with zero-latency work.

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
                        plan: None,
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

criterion_group!(benches, checkpoint, executor);
criterion_main!(benches);
