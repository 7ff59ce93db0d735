//! [`PgStore`]: a run's checkpoints in PostgreSQL, behind the same
//! [`CheckpointStore`] trait as the sled store.
//!
//! A node's record and its done marker (the key it was computed under) are one row,
//! written in one transaction that first checks — under a share lock on the run's row,
//! which a new claim's update must wait for — that this store's claim still holds the
//! run. A worker whose lease ran out and was taken over cannot write a late checkpoint.
//! The commit returns only once PostgreSQL has it durably, before dependants start.
//!
//! Reads are served from the records loaded when the store was opened plus what this
//! store wrote since: only the lease holder writes a run's checkpoints.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;
use deepr_orchestrator::store::{CheckpointStore, NodeRecord, StoreError};
use serde_json::Value;
use sqlx::{PgPool, Row};

/// One run's checkpoints, written under one claim.
pub struct PgStore {
    pool: PgPool,
    run_id: String,
    epoch: i32,
    nodes: Mutex<BTreeMap<String, NodeRecord>>,
    meta: Mutex<BTreeMap<String, Value>>,
}

fn io(error: impl std::fmt::Display) -> StoreError {
    StoreError::Io(error.to_string())
}

impl PgStore {
    /// Load `run_id`'s checkpoints for a writer holding claim `epoch`.
    pub async fn open(pool: &PgPool, run_id: &str, epoch: i32) -> Result<Self, StoreError> {
        let mut nodes = BTreeMap::new();
        for row in
            sqlx::query("SELECT node_id, node_key, record FROM deepr_nodes WHERE run_id = $1")
                .bind(run_id)
                .fetch_all(pool)
                .await
                .map_err(io)?
        {
            let node_id: String = row.try_get("node_id").map_err(io)?;
            let node_key: String = row.try_get("node_key").map_err(io)?;
            let record: Value = row.try_get("record").map_err(io)?;
            let record: NodeRecord = serde_json::from_value(record)
                .map_err(|e| StoreError::Damaged(format!("{node_id}: {e}")))?;
            if record.key != node_key {
                return Err(StoreError::Damaged(format!(
                    "{node_id}: done-marker does not match record"
                )));
            }
            nodes.insert(node_id, record);
        }
        let mut meta = BTreeMap::new();
        for row in sqlx::query("SELECT name, value FROM deepr_meta WHERE run_id = $1")
            .bind(run_id)
            .fetch_all(pool)
            .await
            .map_err(io)?
        {
            meta.insert(
                row.try_get::<String, _>("name").map_err(io)?,
                row.try_get::<Value, _>("value").map_err(io)?,
            );
        }
        Ok(Self {
            pool: pool.clone(),
            run_id: run_id.to_string(),
            epoch,
            nodes: Mutex::new(nodes),
            meta: Mutex::new(meta),
        })
    }

    /// Begin a transaction that holds the run's row (shared) and proves this claim
    /// still owns it.
    async fn fenced(&self) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
        let mut tx = self.pool.begin().await.map_err(io)?;
        let epoch: Option<i32> =
            sqlx::query_scalar("SELECT lease_epoch FROM deepr_runs WHERE run_id = $1 FOR SHARE")
                .bind(&self.run_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(io)?;
        match epoch {
            Some(epoch) if epoch == self.epoch => Ok(tx),
            Some(_) => Err(StoreError::Locked(format!(
                "run {} was claimed by another worker after this one's lease ran out; this worker's write is refused",
                self.run_id
            ))),
            None => Err(StoreError::Locked(format!(
                "run {} was removed from the fleet database",
                self.run_id
            ))),
        }
    }
}

#[async_trait]
impl CheckpointStore for PgStore {
    fn get_node(&self, node_id: &str) -> Result<Option<NodeRecord>, StoreError> {
        let nodes = self.nodes.lock().map_err(io_poison)?;
        Ok(nodes.get(node_id).cloned())
    }

    async fn put_node(&self, node_id: &str, record: &NodeRecord) -> Result<(), StoreError> {
        let value = serde_json::to_value(record).map_err(io)?;
        let mut tx = self.fenced().await?;
        sqlx::query(
            "INSERT INTO deepr_nodes (run_id, node_id, node_key, record) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (run_id, node_id) DO UPDATE SET node_key = EXCLUDED.node_key, record = EXCLUDED.record",
        )
        .bind(&self.run_id)
        .bind(node_id)
        .bind(&record.key)
        .bind(&value)
        .execute(&mut *tx)
        .await
        .map_err(io)?;
        tx.commit().await.map_err(io)?;
        self.nodes
            .lock()
            .map_err(io_poison)?
            .insert(node_id.to_string(), record.clone());
        Ok(())
    }

    async fn put_meta(&self, name: &str, value: &Value) -> Result<(), StoreError> {
        let mut tx = self.fenced().await?;
        sqlx::query(
            "INSERT INTO deepr_meta (run_id, name, value) VALUES ($1, $2, $3) \
             ON CONFLICT (run_id, name) DO UPDATE SET value = EXCLUDED.value",
        )
        .bind(&self.run_id)
        .bind(name)
        .bind(value)
        .execute(&mut *tx)
        .await
        .map_err(io)?;
        tx.commit().await.map_err(io)?;
        self.meta
            .lock()
            .map_err(io_poison)?
            .insert(name.to_string(), value.clone());
        Ok(())
    }

    fn get_meta(&self, name: &str) -> Result<Option<Value>, StoreError> {
        Ok(self.meta.lock().map_err(io_poison)?.get(name).cloned())
    }

    fn finished_nodes(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .nodes
            .lock()
            .map_err(io_poison)?
            .keys()
            .cloned()
            .collect())
    }
}

fn io_poison<T>(_: std::sync::PoisonError<T>) -> StoreError {
    StoreError::Io("checkpoint cache lock poisoned".into())
}
