//! Against the real PostgreSQL (`DEEPR_TEST_PG`, default the local server's `postgres`
//! database; each test creates and drops its own database): claims, leases and fencing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)] // test code
use std::time::Duration;

use deepr_fleet::{Fleet, FleetError, PgStore};
use deepr_orchestrator::store::{CheckpointStore, NodeRecord, StoreError};
use sqlx::Connection;

fn admin_url() -> String {
    std::env::var("DEEPR_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A fresh database, dropped at the end. `None` (a skip) only outside CI.
async fn scratch(name: &str) -> Option<String> {
    let admin = admin_url();
    let mut connection = match sqlx::PgConnection::connect(&admin).await {
        Ok(connection) => connection,
        Err(error) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but PostgreSQL at {admin} does not answer: {error}"
            );
            eprintln!("skipped: PostgreSQL at {admin} does not answer: {error}");
            return None;
        }
    };
    let database = format!("deepr_test_{name}_{}", std::process::id());
    sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
        .execute(&mut connection)
        .await
        .expect("drop old");
    sqlx::query(&format!("CREATE DATABASE {database}"))
        .execute(&mut connection)
        .await
        .expect("create database");
    let (base, _) = admin.rsplit_once('/').expect("database in URL");
    Some(format!("{base}/{database}"))
}

async fn drop_database(url: &str) {
    let admin = admin_url();
    let database = url
        .rsplit_once('/')
        .map(|(_, d)| d.to_string())
        .unwrap_or_default();
    if let Ok(mut connection) = sqlx::PgConnection::connect(&admin).await {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
            .execute(&mut connection)
            .await;
    }
}

fn record(key: &str) -> NodeRecord {
    NodeRecord {
        key: key.into(),
        stage: "extract".into(),
        key_material: serde_json::Value::Null,
        deps: vec![],
        output: serde_json::json!({"claims": 1}),
        calls: vec![],
    }
}

#[tokio::test]
async fn a_worker_whose_lease_expired_cannot_write() {
    let Some(url) = scratch("lease").await else {
        return;
    };
    let fleet = Fleet::connect(&url).await.expect("connect");
    fleet.migrate().await.expect("migrate");
    fleet.migrate().await.expect("migrate is idempotent");
    fleet
        .submit("run-1", &serde_json::json!({"record": "r"}))
        .await
        .expect("submit");
    assert!(matches!(
        fleet.submit("run-1", &serde_json::json!({})).await,
        Err(FleetError::RunExists(_))
    ));

    // Worker A claims with a 1 s lease, checkpoints one node, then pauses.
    let a = fleet.claim("a", 1, 5).await.expect("claim").expect("a run");
    assert_eq!((a.run_id.as_str(), a.epoch), ("run-1", 1));
    let store_a = PgStore::open(&fleet.pool, "run-1", a.epoch)
        .await
        .expect("open");
    store_a
        .put_node("r0/scout", &record("k1"))
        .await
        .expect("a writes while it holds the lease");
    assert!(
        fleet.claim("b", 1, 5).await.expect("claim").is_none(),
        "the lease hides the run"
    );

    tokio::time::sleep(Duration::from_millis(1500)).await;
    // The lease ran out: worker B claims the run and sees A's checkpoint.
    let b = fleet
        .claim("b", 30, 5)
        .await
        .expect("claim")
        .expect("the run again");
    assert_eq!(b.epoch, 2);
    let store_b = PgStore::open(&fleet.pool, "run-1", b.epoch)
        .await
        .expect("open");
    assert_eq!(
        store_b.get_node("r0/scout").expect("get"),
        Some(record("k1"))
    );
    assert_eq!(
        store_b.finished_nodes().expect("list"),
        vec!["r0/scout".to_string()]
    );

    // A wakes up: its late writes, heartbeat and settlement are all refused.
    match store_a.put_node("r0/decompose", &record("late")).await {
        Err(StoreError::Locked(message)) => {
            assert!(message.contains("claimed by another worker"), "{message}")
        }
        other => panic!("a late write must be refused, got {other:?}"),
    }
    assert!(matches!(
        fleet.extend(&a, 30).await,
        Err(FleetError::LeaseLost(_))
    ));
    assert!(matches!(
        fleet
            .settle(&a, "finished", None, &serde_json::json!({}))
            .await,
        Err(FleetError::LeaseLost(_))
    ));
    let reopened = PgStore::open(&fleet.pool, "run-1", b.epoch)
        .await
        .expect("open");
    assert_eq!(
        reopened.get_node("r0/decompose").expect("get"),
        None,
        "nothing of A's late write landed"
    );

    // B holds the run and settles it; its message is gone.
    store_b
        .put_node("r0/decompose", &record("k2"))
        .await
        .expect("b writes");
    fleet.extend(&b, 30).await.expect("b extends");
    fleet
        .settle(&b, "finished", None, &serde_json::json!({"md": "# r"}))
        .await
        .expect("settle");
    let row = fleet.run("run-1").await.expect("row");
    assert_eq!(row.state, "finished");
    assert_eq!(row.reports, vec!["md".to_string()]);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(
        fleet.claim("c", 30, 5).await.expect("claim").is_none(),
        "a settled run is never claimed again"
    );
    fleet.pool.close().await;
    drop_database(&url).await;
}

#[tokio::test]
async fn a_run_that_never_settles_is_parked() {
    let Some(url) = scratch("park").await else {
        return;
    };
    let fleet = Fleet::connect(&url).await.expect("connect");
    fleet.migrate().await.expect("migrate");
    fleet
        .submit("poison", &serde_json::json!({}))
        .await
        .expect("submit");
    // A worker stopping cleanly is not a failed attempt.
    let stopped = fleet.claim("w", 30, 2).await.expect("claim").expect("run");
    fleet
        .release(&stopped, 0, "worker stopped", true)
        .await
        .expect("release");
    for epoch in 2..=3 {
        let claim = fleet.claim("w", 30, 2).await.expect("claim").expect("run");
        assert_eq!(claim.epoch, epoch);
        fleet
            .release(&claim, 0, "it failed again", false)
            .await
            .expect("release");
    }
    assert!(
        fleet.claim("w", 30, 2).await.expect("claim").is_none(),
        "two failures (and one clean stop) park it"
    );
    let row = fleet.run("poison").await.expect("row");
    assert_eq!(row.state, "parked");
    assert!(
        row.note
            .as_deref()
            .unwrap_or_default()
            .contains("it failed again"),
        "{:?}",
        row.note
    );
    fleet.pool.close().await;
    drop_database(&url).await;
}

#[tokio::test]
async fn a_transaction_left_open_by_a_gone_worker_stops_blocking_the_others() {
    let Some(url) = scratch("idle").await else {
        return;
    };
    let fleet = Fleet::connect(&url).await.expect("connect");
    let shown: String = sqlx::query_scalar("SHOW idle_in_transaction_session_timeout")
        .fetch_one(&fleet.pool)
        .await
        .expect("show");
    assert_eq!(shown, deepr_fleet::IDLE_IN_TRANSACTION_TIMEOUT);
    // A worker opens a transaction, locks a row and goes silent (a cut link).
    sqlx::query("CREATE TABLE held (id int PRIMARY KEY)")
        .execute(&fleet.pool)
        .await
        .expect("table");
    sqlx::query("INSERT INTO held VALUES (1)")
        .execute(&fleet.pool)
        .await
        .expect("row");
    let mut gone = fleet.pool.begin().await.expect("begin");
    sqlx::query("SELECT id FROM held WHERE id = 1 FOR SHARE")
        .execute(&mut *gone)
        .await
        .expect("lock");
    // Another worker's update waits only until the server ends the silent transaction.
    let started = std::time::Instant::now();
    let other = Fleet::connect(&url).await.expect("connect");
    let mut update = other.pool.begin().await.expect("begin");
    // (Without the server's timeout this would wait for ever: give up after 30 s.)
    sqlx::query("SET LOCAL lock_timeout = '30s'")
        .execute(&mut *update)
        .await
        .expect("lock timeout");
    sqlx::query("UPDATE held SET id = 2 WHERE id = 1")
        .execute(&mut *update)
        .await
        .expect("the update goes through once the silent transaction is ended");
    update.commit().await.expect("commit");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "waited {:?}",
        started.elapsed()
    );
    drop(gone);
    fleet.pool.close().await;
    other.pool.close().await;
    drop_database(&url).await;
}

#[tokio::test]
async fn a_schema_from_a_newer_deepr_is_refused() {
    let Some(url) = scratch("newer").await else {
        return;
    };
    let fleet = Fleet::connect(&url).await.expect("connect");
    fleet.migrate().await.expect("migrate");
    sqlx::query("INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES (99991231000000, 'from the future', true, '\\x00', 1)")
        .execute(&fleet.pool)
        .await
        .expect("fake a newer migration");
    match fleet.ready().await {
        Err(FleetError::NewerSchema(_, version)) => assert_eq!(version, 99991231000000),
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    match fleet.migrate().await {
        Err(error @ FleetError::NewerSchema(..)) => {
            assert!(error.to_string().contains("upgrade deepr"))
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    fleet.pool.close().await;
    drop_database(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_archived_on_one_worker_is_read_on_another() {
    use deepr_checkpoints::FileArchive;
    use deepr_fleet::PgArchive;
    use deepr_orchestrator::TextArchive;
    use std::sync::Arc;

    let Some(url) = scratch("archive").await else {
        return;
    };
    let fleet = Fleet::connect(&url).await.expect("connect");
    fleet.migrate().await.expect("migrate");
    let mirror = || Arc::new(PgArchive::start(fleet.options.clone()).expect("mirror"));
    let first = tempfile::tempdir().expect("tempdir");
    let second = tempfile::tempdir().expect("tempdir");
    let a = FileArchive::open(first.path())
        .expect("open")
        .with_mirror(mirror());
    let b = FileArchive::open(second.path())
        .expect("open")
        .with_mirror(mirror());
    let sha = a
        .put("Fetched on the first machine. Quoted on the second one.")
        .expect("put");
    assert!(!b.contains(&sha), "machine B has no local copy yet");
    let text = b.get(&sha).expect("B reads A's text through the database");
    assert_eq!(text.sentence(1), Some("Quoted on the second one."));
    assert!(b.contains(&sha), "and keeps a local copy");

    // A text altered in the database is refused like a damaged file.
    let altered = FileArchive::open(tempfile::tempdir().expect("tempdir").path())
        .expect("open")
        .with_mirror(mirror());
    sqlx::query("UPDATE deepr_archive SET text = 'tampered' WHERE content_sha256 = $1")
        .bind(&sha)
        .execute(&fleet.pool)
        .await
        .expect("tamper");
    assert!(
        altered.get(&sha).is_none(),
        "a text that does not hash to its name is refused"
    );
    // Without a mirror nothing is found elsewhere.
    let alone = tempfile::tempdir().expect("tempdir");
    assert!(FileArchive::open(alone.path())
        .expect("open")
        .get(&sha)
        .is_none());
    fleet.pool.close().await;
    drop_database(&url).await;
}
