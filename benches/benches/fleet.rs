//! Fleet benchmarks: one node checkpoint in PostgreSQL (`PgStore`: one transaction that
//! checks the lease, then commits durably) beside the same record in sled (batch +
//! flush), in one run so their ratio is comparable. Needs PostgreSQL
//! (`DEEPR_BENCH_PG`, default the local server's `postgres` database); without it only
//! the sled figure is measured and the PostgreSQL one is skipped with a note.
// A benchmark harness: a failed setup aborts the benchmark with its reason.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use criterion::{criterion_group, criterion_main, Criterion};
use deepr_checkpoints::SledStore;
use deepr_fleet::{Fleet, PgStore};
use deepr_orchestrator::{CheckpointStore, NodeRecord};

fn record() -> NodeRecord {
    NodeRecord {
        key: "k".repeat(64),
        stage: "extract".into(),
        key_material: serde_json::Value::Null,
        deps: vec![],
        output: serde_json::json!({"claims": vec!["x".repeat(200); 5]}),
        calls: vec![],
    }
}

fn checkpoints(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let record = record();
    let dir = tempfile::tempdir().expect("tempdir");
    let sled = runtime
        .block_on(SledStore::open(&dir.path().join("db")))
        .expect("store");
    let mut n = 0u64;
    let mut group = c.benchmark_group("checkpoint_per_node");
    group.bench_function("sled", |b| {
        b.iter(|| {
            n += 1;
            runtime
                .block_on(sled.put_node(&format!("node/{n}"), &record))
                .expect("put");
        })
    });

    let admin = std::env::var("DEEPR_BENCH_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let database = format!("deepr_bench_checkpoints_{}", std::process::id());
    let setup = runtime.block_on(async {
        let fleet = Fleet::connect(&admin).await.map_err(|e| e.to_string())?;
        sqlx::query(&format!("CREATE DATABASE {database}"))
            .execute(&fleet.pool)
            .await
            .map_err(|e| e.to_string())?;
        fleet.pool.close().await;
        let (base, _) = admin.rsplit_once('/').ok_or("no database in the URL")?;
        let fleet = Fleet::connect(&format!("{base}/{database}"))
            .await
            .map_err(|e| e.to_string())?;
        fleet.migrate().await.map_err(|e| e.to_string())?;
        fleet
            .submit("bench", &serde_json::json!({}))
            .await
            .map_err(|e| e.to_string())?;
        let claim = fleet
            .claim("bench", 3600, 5)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("no claim")?;
        let store = PgStore::open(&fleet.pool, "bench", claim.epoch)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>((fleet, store))
    });
    match &setup {
        Ok((_, store)) => {
            let mut n = 0u64;
            group.bench_function("postgres", |b| {
                b.iter(|| {
                    n += 1;
                    runtime
                        .block_on(store.put_node(&format!("node/{n}"), &record))
                        .expect("put");
                })
            });
        }
        Err(why) => eprintln!("checkpoint_per_node/postgres skipped: PostgreSQL at {admin}: {why}"),
    }
    group.finish();
    if let Ok((fleet, _)) = setup {
        runtime.block_on(async {
            fleet.pool.close().await;
            if let Ok(admin_fleet) = Fleet::connect(&admin).await {
                let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
                    .execute(&admin_fleet.pool)
                    .await;
            }
        });
    }
}

criterion_group!(benches, checkpoints);
criterion_main!(benches);
