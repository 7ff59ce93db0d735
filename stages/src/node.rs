//! What a stage's node builder needs: the run's settings and providers
//! ([`PipelineContext`]), and the helpers that turn a stage call into a DAG node
//! ([`spec`], [`read`], [`finish`]). Each stage module exports its own builders, its
//! key material beside its `STAGE_VERSION`; `pipeline.rs` keeps only the shape of
//! the phases.

use std::collections::BTreeMap;
use std::sync::Arc;

use deepr_orchestrator::executor::NodeResult;
use deepr_orchestrator::{LedgerEntry, NodeContext, NodeSpec};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::research::{Reading, ResearchConfig, ResearchProviders};

/// The run as every node builder sees it: its config (depth, strategy, reading … read
/// from there, never copied) and what is derived from it once.
#[derive(Clone)]
pub struct PipelineContext {
    pub config: Arc<ResearchConfig>,
    pub providers: ResearchProviders,
    /// The search providers' names (key material of the steps that search).
    pub search_names: Vec<String>,
    /// Whether the topic is a brief with several parts (parsed once): it reads wider
    /// and takes more claims per subquestion.
    pub brief_with_parts: bool,
}

impl PipelineContext {
    pub fn new(config: &ResearchConfig, providers: &ResearchProviders) -> Self {
        Self {
            config: Arc::new(config.clone()),
            providers: providers.clone(),
            search_names: providers.search.iter().map(|p| p.name()).collect(),
            brief_with_parts: deepr_tasks::brief::parse_brief(&config.topic).has_parts(),
        }
    }

    /// Whether a model (not the offline heuristic) extracts claims: it reads a larger
    /// pool of candidates, from more documents.
    pub fn model_extracts(&self) -> bool {
        !self
            .providers
            .cheap
            .model_id_for("extract")
            .starts_with("offline:")
    }

    /// Whether a model reads documents as documents ([`Reading::Documents`]): only a
    /// model does; the offline heuristic reads its ranked share.
    pub fn model_reads_documents(&self) -> bool {
        self.config.reading == Reading::Documents && self.model_extracts()
    }
}

/// A node and the nodes it depends on.
pub type Node = (NodeSpec, Vec<String>);

/// A dependency's output, typed.
pub fn read<T: DeserializeOwned>(
    inputs: &BTreeMap<String, Arc<Value>>,
    id: &str,
) -> Result<T, String> {
    let value = inputs
        .get(id)
        .ok_or_else(|| format!("missing input {id}"))?;
    serde_json::from_value(Value::clone(value)).map_err(|e| format!("input {id} unreadable: {e}"))
}

/// A stage's output and its model calls as a node result.
pub fn finish<T: Serialize>(output: T, calls: Vec<LedgerEntry>) -> Result<NodeResult, String> {
    Ok(NodeResult {
        output: serde_json::to_value(output).map_err(|e| e.to_string())?,
        calls,
    })
}

/// A node: its id, its stage, its key material and what it runs.
pub fn spec<F, Fut>(id: String, stage: &str, key_material: Value, f: F) -> NodeSpec
where
    F: FnOnce(NodeContext) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<NodeResult, String>> + Send + 'static,
{
    NodeSpec {
        id,
        stage: stage.to_string(),
        key_material,
        run: Box::new(move |ctx| Box::pin(f(ctx))),
    }
}
