//! Runs that follow an earlier run: a follow-up question (`deepr ask`: answered from
//! the documents the earlier run read, served from the archive, never fetched again)
//! and the same research again later (`deepr refresh`: reports what changed). The
//! record carries the [`Lineage`]; this module reads what a new run needs of its
//! parent.

use std::path::Path;

use deepr_orchestrator::{CheckpointStore, DocMeta};
use deepr_stages::types::{FetchOut, ScoutOut};
use serde::{Deserialize, Serialize};

use crate::record::{open_store, run_dir};
use crate::{usage, Failure};

/// How a run follows its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// A follow-up question on the parent's documents.
    Ask,
    /// The parent's research again, over its sources as they are now.
    Refresh,
}

impl Relation {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ask => "follow-up",
            Self::Refresh => "refresh",
        }
    }
}

/// The run a run follows, and what it takes from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lineage {
    pub parent: String,
    pub relation: Relation,
    /// When the parent run started (seconds since the epoch).
    pub parent_created: u64,
    /// `ask`: the documents the parent read, searched as `earlier` and served from the
    /// archive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<DocMeta>,
    /// Told to the reader with the gaps: why more than the parent's documents were
    /// searched, when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Every document run `parent` fetched (its scout's and every step's), once each by
/// locator, in the order its steps ran. A run another process executes is refused.
pub fn documents_read(state_dir: &Path, parent: &str) -> Result<Vec<DocMeta>, Failure> {
    let dir = run_dir(state_dir, parent);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(e.into()))?;
    let store = runtime.block_on(open_store(&dir, parent))?;
    let nodes = store
        .finished_nodes()
        .map_err(|e| Failure::Run(anyhow::anyhow!("run {parent}'s checkpoints: {e}")))?;
    let mut docs: Vec<DocMeta> = Vec::new();
    let mut add = |doc: DocMeta| {
        if !docs.iter().any(|d| d.locator == doc.locator) {
            docs.push(doc);
        }
    };
    for id in &nodes {
        let Some(output) = store
            .get_node(id)
            .map_err(|e| Failure::Run(anyhow::anyhow!("run {parent}'s step {id}: {e}")))?
            .map(|record| record.output)
        else {
            continue;
        };
        let unreadable = |e: serde_json::Error| {
            Failure::Run(anyhow::anyhow!(
                "run {parent}'s step {id} cannot be read ({e}); it was written by another version of deepr"
            ))
        };
        if id.ends_with("/fetch") {
            let out: FetchOut = serde_json::from_value(output).map_err(unreadable)?;
            out.docs.into_iter().for_each(|(doc, _)| add(doc));
        } else if id.ends_with("/scout") {
            let out: ScoutOut = serde_json::from_value(output).map_err(unreadable)?;
            out.docs.into_iter().for_each(&mut add);
        }
    }
    if docs.is_empty() {
        return Err(usage(format!(
            "run {parent} read no documents yet; resume it first (deepr resume {parent})"
        )));
    }
    Ok(docs)
}
