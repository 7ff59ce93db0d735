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

pub use crate::record::{Lineage, Relation};

/// Run `run_id`'s checkpoint store, opened on a thread of its own (callers may be
/// inside an async runtime — the MCP server — or not — the command line).
fn opened(state_dir: &Path, run_id: &str) -> Result<deepr_checkpoints::SledStore, Failure> {
    let dir = run_dir(state_dir, run_id);
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| Failure::Run(e.into()))?;
                runtime.block_on(open_store(&dir, run_id))
            })
            .join()
            .map_err(|_| {
                Failure::Run(anyhow::anyhow!(
                    "opening run {run_id}'s checkpoints failed unexpectedly"
                ))
            })?
    })
}

/// Every document run `parent` fetched (its scout's and every step's), once each by
/// locator, in the order its steps ran. A run another process executes is refused.
pub fn documents_read(state_dir: &Path, parent: &str) -> Result<Vec<DocMeta>, Failure> {
    let store = opened(state_dir, parent)?;
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

/// What a run's searches could find when its session started: the search fingerprint
/// and every corpus document's content hash by locator. Kept beside the run
/// (`sources.json`), so that a refresh can tell whether anything changed since
/// (`--if-changed`) and which documents did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourcesSeen {
    pub fingerprint: String,
    pub documents: std::collections::BTreeMap<String, String>,
}

/// The file [`SourcesSeen`] lives in, in the run's folder.
pub const SOURCES_SEEN: &str = "sources.json";

impl SourcesSeen {
    pub fn new(fingerprint: &str, documents: &[DocMeta]) -> Self {
        Self {
            fingerprint: fingerprint.to_string(),
            documents: documents
                .iter()
                .map(|d| (d.locator.clone(), d.content_sha256.clone()))
                .collect(),
        }
    }

    /// The run's, if it wrote one (runs from before it did: `None`).
    pub fn read(dir: &Path) -> Option<Self> {
        let bytes = std::fs::read(dir.join(SOURCES_SEEN)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Written atomically; a run that cannot write it loses only `--if-changed`'s
    /// shortcut, so a failure is said, not fatal.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let bytes = serde_json::to_vec(self).map_err(|e| e.to_string())?;
        crate::util::write_atomically(&dir.join(SOURCES_SEEN), &bytes).map_err(|e| format!("{e:#}"))
    }
}

/// A refresh's copy of its parent's report (`deepr refresh` writes it when the run
/// starts, so a parent re-rendered since cannot change the comparison).
pub const PARENT_REPORT: &str = "parent-report.json";
/// A refresh's copy of its parent's [`SourcesSeen`].
pub const PARENT_SOURCES: &str = "parent-sources.json";

/// What changed since the run a refresh refreshes: `None` for any other run, or when
/// the parent's report copy cannot be read (said, never guessed).
pub fn changes_since(
    dir: &Path,
    record: &crate::record::RunRecord,
    report: &deepr_evidence::report::Report,
    archive: &dyn deepr_orchestrator::TextArchive,
) -> Option<deepr_evidence::report::Changes> {
    let lineage = record
        .lineage
        .as_ref()
        .filter(|l| l.relation == Relation::Refresh)?;
    let parent: deepr_evidence::report::Report =
        serde_json::from_slice(&std::fs::read(dir.join(PARENT_REPORT)).ok()?).ok()?;
    let then_documents = std::fs::read(dir.join(PARENT_SOURCES))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<SourcesSeen>(&bytes).ok())
        .map(|seen| seen.documents)
        .unwrap_or_default();
    let now_documents = SourcesSeen::read(dir)
        .map(|seen| seen.documents)
        .unwrap_or_default();
    let since = crate::util::utc_rfc3339(lineage.parent_created);
    let then = deepr_stages::changes::Then {
        report: &parent,
        documents: &then_documents,
        since: since.get(..10).unwrap_or(&since).to_string(),
    };
    let text_now = |sha: &str| archive.get(sha).map(|t| t.text.to_string());
    Some(deepr_stages::changes::changes(
        &then,
        report,
        &now_documents,
        &text_now,
    ))
}

/// The subquestions run `run_id` planned first, each with the queries its plan wrote
/// (none: its query step wrote them, and asked again it answers the same from the
/// response cache), read from its checkpoints.
pub fn first_plan(state_dir: &Path, run_id: &str) -> Result<Vec<(String, Vec<String>)>, Failure> {
    let store = opened(state_dir, run_id)?;
    let id = deepr_stages::research::node_id::DECOMPOSE;
    let output = store
        .get_node(id)
        .map_err(|e| Failure::Run(anyhow::anyhow!("run {run_id}'s plan: {e}")))?
        .map(|record| record.output)
        .ok_or_else(|| {
            usage(format!(
                "run {run_id} has no plan yet; resume it first (deepr resume {run_id})"
            ))
        })?;
    let plan: deepr_stages::types::DecomposeOut = serde_json::from_value(output).map_err(|e| {
        Failure::Run(anyhow::anyhow!(
            "run {run_id}'s plan cannot be read ({e}); it was written by another version of deepr"
        ))
    })?;
    Ok(plan
        .subquestions
        .into_iter()
        .map(|s| (s.text, s.queries))
        .collect())
}

/// What the run a refresh refreshes read and extracted, for its extract steps to start
/// from ([`deepr_stages::earlier`]): `None` for any other run, for web sources
/// (a page's change is known only once it is fetched again) and when the earlier run
/// kept no list of its sources. `corpus_now`: the corpus's documents as indexed now.
pub fn parent_reading(
    state_dir: &Path,
    dir: &Path,
    record: &crate::record::RunRecord,
    corpus_now: &[DocMeta],
) -> Result<Option<deepr_stages::parent_reading::ParentReading>, Failure> {
    let Some(lineage) = record
        .lineage
        .as_ref()
        .filter(|l| l.relation == Relation::Refresh)
    else {
        return Ok(None);
    };
    if record.sources.iter().any(|s| s != "corpus") {
        return Ok(None);
    }
    let Some(then) = std::fs::read(dir.join(PARENT_SOURCES))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<SourcesSeen>(&bytes).ok())
    else {
        return Ok(None);
    };
    let documents: std::collections::BTreeSet<String> = then.documents.into_values().collect();
    let now: std::collections::BTreeSet<&str> = corpus_now
        .iter()
        .map(|d| d.content_sha256.as_str())
        .collect();
    let gone = documents
        .iter()
        .filter(|sha| !now.contains(sha.as_str()))
        .cloned()
        .collect();
    let store = opened(state_dir, &lineage.parent)?;
    let nodes = store
        .finished_nodes()
        .map_err(|e| Failure::Run(anyhow::anyhow!("run {}'s checkpoints: {e}", lineage.parent)))?;
    let mut reading = deepr_stages::parent_reading::ParentReading {
        documents,
        gone,
        ..Default::default()
    };
    for id in &nodes {
        if let Ok(Some(node)) = store.get_node(id) {
            keep_step(&mut reading, id, node);
        }
    }
    Ok(Some(reading))
}

/// A parent's step a refresh starts from, kept in `reading`: its extract, conflict,
/// summary and triage steps. A step written by another version of deepr is not kept: the refresh
/// does it again.
fn keep_step(
    reading: &mut deepr_stages::parent_reading::ParentReading,
    id: &str,
    node: deepr_orchestrator::NodeRecord,
) {
    let material = node.key_material;
    if id.ends_with("/extract") {
        if let Ok(out) = serde_json::from_value(node.output) {
            reading.extracted.insert(id.to_string(), (material, out));
        }
    } else if id.ends_with("/conflict") {
        if let Ok(out) = serde_json::from_value(node.output) {
            reading.conflicts.insert(id.to_string(), (material, out));
        }
    } else if id == deepr_stages::research::node_id::SYNTHESIZE {
        if let Ok(out) = serde_json::from_value(node.output) {
            reading.summary = Some((material, out));
        }
    } else if id.ends_with("/triage") {
        if let Ok(out) = serde_json::from_value(node.output) {
            reading.triage.insert(id.to_string(), (material, out));
        }
    }
}
