//! The checkpoint-store trait. A run's store holds its run record and one record per
//! finished DAG node; writes of a node's output and its done-marker are atomic and
//! durable (flushed) before the call returns, so dependants never start on state a
//! `kill -9` could lose.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::ledger::LedgerEntry;

/// What a finished node leaves behind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// The node's input key (chains stage version, prompt hash, model, config, upstream keys).
    pub key: String,
    pub stage: String,
    /// The node's own key material, kept to explain drift ("prompt extract changed").
    #[serde(default)]
    pub key_material: Value,
    pub output: Value,
    /// The nodes it depended on (for critical-path analysis).
    #[serde(default)]
    pub deps: Vec<String>,
    /// The provider calls the node made when it ran.
    pub calls: Vec<LedgerEntry>,
}

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("checkpoint store is in use by another process: {0}")]
    Locked(String),
    #[error("checkpoint store is damaged: {0}")]
    Damaged(String),
    #[error(
        "checkpoint store schema {found} is not supported (expected {expected}); start a new run"
    )]
    Schema { found: String, expected: String },
    #[error("checkpoint store I/O failed: {0}")]
    Io(String),
}

#[async_trait]
pub trait CheckpointStore: Send + Sync {
    /// The record of `node_id`, if it finished.
    fn get_node(&self, node_id: &str) -> Result<Option<NodeRecord>, StoreError>;
    /// Store a node's output and done-marker atomically, then flush durably.
    async fn put_node(&self, node_id: &str, record: &NodeRecord) -> Result<(), StoreError>;
    /// Store a small named value (run record, settings) durably.
    async fn put_meta(&self, name: &str, value: &Value) -> Result<(), StoreError>;
    fn get_meta(&self, name: &str) -> Result<Option<Value>, StoreError>;
    /// IDs of all finished nodes, sorted.
    fn finished_nodes(&self) -> Result<Vec<String>, StoreError>;
}
