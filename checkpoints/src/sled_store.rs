//! The sled implementation of [`CheckpointStore`]: one database per run.
//!
//! Keys: `meta/<name>` for run metadata, `node/<id>` for a node's record (JSON), and
//! `done/<id>` for its done-marker (the node key). A node's record and marker are
//! written in one `Batch` and then `flush_async` is awaited: sled without a flush
//! loses most writes on `kill -9`.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use backon::{ConstantBuilder, Retryable};
use deepr_orchestrator::store::{CheckpointStore, NodeRecord, StoreError};
use serde_json::Value;

/// The on-disk schema version, stored under `schema_version`.
pub const SCHEMA_VERSION: &str = "deepr.checkpoints.v1";

/// sled's page cache: small, since a run's checkpoints are a few MB.
const CACHE_BYTES: u64 = 16 * 1024 * 1024;
/// How long a lock is waited for: a store closed a moment ago in this process (a
/// session that just ended, before its resume) keeps its file lock until sled's
/// background flusher lets go, within one flush interval (500 ms). A lock held longer
/// belongs to a live run and is reported as [`StoreError::Locked`].
const LOCK_WAIT_TRIES: usize = 15;
const LOCK_WAIT_STEP: Duration = Duration::from_millis(100);

pub struct SledStore {
    db: sled::Db,
}

impl SledStore {
    /// Open or create the store at `path`, checking its schema version; a held lock is
    /// waited for up to 1.5 s before it is reported as [`StoreError::Locked`].
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let open = || async {
            sled::Config::new()
                .path(path)
                .cache_capacity(CACHE_BYTES)
                .mode(sled::Mode::LowSpace)
                .open()
                .map_err(|e| classify(&e))
        };
        let db = open
            .retry(
                ConstantBuilder::default()
                    .with_delay(LOCK_WAIT_STEP)
                    .with_max_times(LOCK_WAIT_TRIES),
            )
            .when(|e| matches!(e, StoreError::Locked(_)))
            .await?;
        match db.get("schema_version").map_err(|e| classify(&e))? {
            Some(found) if found.as_ref() != SCHEMA_VERSION.as_bytes() => {
                return Err(StoreError::Schema {
                    found: String::from_utf8_lossy(&found).into_owned(),
                    expected: SCHEMA_VERSION.into(),
                });
            }
            Some(_) => {}
            None => {
                db.insert("schema_version", SCHEMA_VERSION)
                    .map_err(|e| classify(&e))?;
                db.flush_async().await.map_err(|e| classify(&e))?;
            }
        }
        Ok(Self { db })
    }
}

fn classify(error: &sled::Error) -> StoreError {
    let text = error.to_string();
    match error {
        // sled reports a held file lock as an I/O error (WouldBlock, "could not acquire lock").
        sled::Error::Io(io)
            if io.kind() == std::io::ErrorKind::WouldBlock
                || text.to_ascii_lowercase().contains("lock") =>
        {
            StoreError::Locked(text)
        }
        sled::Error::Corruption { .. } | sled::Error::Unsupported(_) => StoreError::Damaged(text),
        _ => StoreError::Io(text),
    }
}

fn damaged(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Damaged(format!("{what}: {e}"))
}

#[async_trait]
impl CheckpointStore for SledStore {
    fn get_node(&self, node_id: &str) -> Result<Option<NodeRecord>, StoreError> {
        let done = self
            .db
            .get(format!("done/{node_id}"))
            .map_err(|e| classify(&e))?;
        let Some(done) = done else { return Ok(None) };
        let Some(bytes) = self
            .db
            .get(format!("node/{node_id}"))
            .map_err(|e| classify(&e))?
        else {
            return Err(damaged(node_id, "done-marker without record"));
        };
        let record: NodeRecord = serde_json::from_slice(&bytes).map_err(|e| damaged(node_id, e))?;
        if record.key.as_bytes() != done.as_ref() {
            return Err(damaged(node_id, "done-marker does not match record"));
        }
        Ok(Some(record))
    }

    async fn put_node(&self, node_id: &str, record: &NodeRecord) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(record).map_err(|e| StoreError::Io(e.to_string()))?;
        let mut batch = sled::Batch::default();
        batch.insert(format!("node/{node_id}").as_bytes(), bytes);
        batch.insert(format!("done/{node_id}").as_bytes(), record.key.as_bytes());
        self.db.apply_batch(batch).map_err(|e| classify(&e))?;
        self.db.flush_async().await.map_err(|e| classify(&e))?;
        Ok(())
    }

    async fn put_meta(&self, name: &str, value: &Value) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(value).map_err(|e| StoreError::Io(e.to_string()))?;
        self.db
            .insert(format!("meta/{name}"), bytes)
            .map_err(|e| classify(&e))?;
        self.db.flush_async().await.map_err(|e| classify(&e))?;
        Ok(())
    }

    fn get_meta(&self, name: &str) -> Result<Option<Value>, StoreError> {
        match self
            .db
            .get(format!("meta/{name}"))
            .map_err(|e| classify(&e))?
        {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| damaged(name, e)),
            None => Ok(None),
        }
    }

    fn finished_nodes(&self) -> Result<Vec<String>, StoreError> {
        let mut ids = Vec::new();
        for item in self.db.scan_prefix("done/") {
            let (key, _) = item.map_err(|e| classify(&e))?;
            ids.push(String::from_utf8_lossy(&key["done/".len()..]).into_owned());
        }
        ids.sort();
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &str) -> NodeRecord {
        NodeRecord {
            key: key.into(),
            stage: "extract".into(),
            key_material: serde_json::Value::Null,
            deps: vec![],
            output: serde_json::json!({"x": 1}),
            calls: vec![],
        }
    }

    #[tokio::test]
    async fn node_round_trip_survives_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db");
        {
            let store = SledStore::open(&path).await.expect("open");
            store
                .put_node("r0/q1/extract", &record("k1"))
                .await
                .expect("put");
            store
                .put_meta("run", &serde_json::json!({"topic": "t"}))
                .await
                .expect("meta");
        }
        let store = SledStore::open(&path).await.expect("reopen");
        assert_eq!(
            store.get_node("r0/q1/extract").expect("get"),
            Some(record("k1"))
        );
        assert_eq!(store.get_node("missing").expect("get"), None);
        assert_eq!(
            store.finished_nodes().expect("list"),
            vec!["r0/q1/extract".to_string()]
        );
        assert_eq!(
            store.get_meta("run").expect("meta"),
            Some(serde_json::json!({"topic": "t"}))
        );
    }

    #[tokio::test]
    async fn second_open_in_same_process_is_a_clear_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db");
        let _first = SledStore::open(&path).await.expect("open");
        // sled locks the database file; a second handle is refused with a clear error.
        match SledStore::open(&path).await {
            Err(StoreError::Locked(message)) => assert!(!message.is_empty()),
            Err(other) => panic!("expected Locked, got {other}"),
            Ok(_) => panic!("a second handle to a locked store must be refused"),
        }
    }
}
