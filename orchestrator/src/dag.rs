//! A phase of the research pipeline as data: node specs (id, stage, key material, the
//! function that runs it), the petgraph DAG that orders them, what a finished node
//! leaves, and the node key — blake3 over the stage name, the node's key material and
//! its dependencies' keys, so a change anywhere upstream changes every key downstream.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use petgraph::graph::{DiGraph, NodeIndex};
use serde_json::Value;

use crate::error::ExecutorError;
use crate::ledger::LedgerEntry;

/// What a node's function returns: its output and the provider calls it made.
pub struct NodeResult {
    pub output: Value,
    pub calls: Vec<LedgerEntry>,
}

pub type NodeFuture = Pin<Box<dyn Future<Output = Result<NodeResult, String>> + Send>>;
/// A node's work. It receives its dependencies' outputs and nothing else.
pub type NodeFn = Box<dyn FnOnce(NodeContext) -> NodeFuture + Send>;

/// Inputs handed to a running node.
pub struct NodeContext {
    pub node_id: String,
    /// The node's key (useful for cache keys of the calls it makes).
    pub key: String,
    /// Outputs of the node's dependencies, by node ID.
    pub inputs: BTreeMap<String, Arc<Value>>,
}

/// One node of a phase's DAG.
pub struct NodeSpec {
    /// Unique within a run, e.g. `r0/q3/extract`.
    pub id: String,
    /// Stage name (`decompose`, `extract`, …).
    pub stage: String,
    /// Everything besides upstream keys that the output depends on: stage version,
    /// prompt id and hash, model id, the config slice the stage reads.
    pub key_material: Value,
    pub run: NodeFn,
}

/// A node that has finished, in this phase or an earlier one.
#[derive(Clone, Debug)]
pub struct DoneNode {
    pub key: String,
    pub stage: String,
    pub output: Arc<Value>,
    pub restored: bool,
    /// Preview mode only: the node would run; its output is unknown (`null`).
    pub pending: bool,
}

/// A DAG under construction.
#[derive(Default)]
pub struct Dag {
    pub(crate) graph: DiGraph<Option<NodeSpec>, ()>,
    pub(crate) by_id: BTreeMap<String, NodeIndex>,
    /// Every node's dependency IDs (sorted, deduplicated): in this DAG or done earlier.
    pub(crate) deps: BTreeMap<NodeIndex, Vec<String>>,
    /// Keys, key material and dependencies of nodes currently running.
    pub(crate) keys: BTreeMap<NodeIndex, (String, Value, Vec<String>)>,
}

impl Dag {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a node depending on `deps`: IDs of nodes added earlier to this DAG or
    /// finished in an earlier phase (looked up in `done` when the phase runs).
    pub fn add(&mut self, spec: NodeSpec, deps: &[String]) -> Result<(), ExecutorError> {
        if self.by_id.contains_key(&spec.id) {
            return Err(ExecutorError::DuplicateNode(spec.id));
        }
        let id = spec.id.clone();
        let index = self.graph.add_node(Some(spec));
        let mut dep_ids: Vec<String> = deps.to_vec();
        dep_ids.sort();
        dep_ids.dedup();
        for dep in &dep_ids {
            if let Some(&dep_index) = self.by_id.get(dep) {
                self.graph.add_edge(dep_index, index, ());
            }
        }
        self.deps.insert(index, dep_ids);
        self.by_id.insert(id, index);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }
}

/// The key of a node: blake3 of its stage, key material and dependency keys.
pub fn node_key(stage: &str, key_material: &Value, dependency_keys: &[(&str, &str)]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"deepr.node.v1\0");
    hasher.update(stage.as_bytes());
    hasher.update(b"\0");
    hasher.update(key_material.to_string().as_bytes());
    for (id, key) in dependency_keys {
        hasher.update(b"\0");
        hasher.update(id.as_bytes());
        hasher.update(b"=");
        hasher.update(key.as_bytes());
    }
    hasher.finalize().to_hex().to_string()
}
