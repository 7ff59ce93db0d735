//! What a run keeps about itself besides its checkpoints.
//!
//! * The **run record** — topic and every setting needed to continue it (never an API
//!   key) — goes into the run's sled store (`meta/run`, flushed before any other work)
//!   and into `run.json` beside it, so `deepr runs list` can read runs that another
//!   process holds open.
//! * `run.json` also carries the run's state (`running`, `finished`, `incomplete`,
//!   `interrupted`, `failed`), updated at the end of every session.
//! * `owner.json` names the process executing the run, so a second process trying to
//!   resume it can say who holds it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use deepr_orchestrator::simulate::{Latency, ModelLatency};
use deepr_stages::{Depth, Strategy};
use serde::{Deserialize, Serialize};

use deepr_checkpoints::SledStore;
use deepr_orchestrator::{CheckpointStore, StoreError};

use crate::util::utc_rfc3339;
use crate::{usage, Failure};

pub const RECORD_SCHEMA: &str = "deepr.run.v1";

/// Which sentence-embedding model a run re-ranks with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum EmbedChoice {
    /// Words only: no model was found (or `DEEPR_EMBED_MODEL=off`).
    None,
    /// The model in `dir` (`name` to a reader), whose weights, tokenizer and recipe
    /// hash to `model_id`.
    Local {
        dir: PathBuf,
        name: String,
        model_id: String,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub schema: String,
    pub run_id: String,
    pub topic: String,
    pub depth: Depth,
    pub strategy: Strategy,
    /// Absolute path of the corpus folder, if the corpus is searched.
    pub corpus: Option<PathBuf>,
    /// Search providers: `corpus`, `wikipedia`, `arxiv`, `hn`, `searxng`, `brave`, `tavily`.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Base URLs configured for providers (trusted endpoints).
    #[serde(default)]
    pub source_urls: std::collections::BTreeMap<String, String>,
    /// `HOST[:PORT]` entries the web fetcher may reach even on private addresses.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Absolute path of the markdown report (report.json beside it).
    pub out: PathBuf,
    /// Model for decompose and synthesize (`offline`, `openai:MODEL`, …).
    pub llm_strong: String,
    /// Model for the other tasks.
    pub llm_cheap: String,
    /// Base URL of the model server, if not the provider's default.
    pub llm_base_url: Option<String>,
    /// Price calls as if this model had answered.
    pub price_as: Option<String>,
    /// Rate limits, retries and timeouts of remote models.
    pub limits: deepr_providers::llm::LlmLimits,
    /// Price overrides from the config the run started with.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, deepr_providers::prices::Price>,
    pub concurrency: usize,
    /// Simulated offline-model latency, milliseconds.
    pub offline_latency_ms: u64,
    /// Folder of prompt overrides, re-read on every resume.
    pub prompts: Option<PathBuf>,
    /// Unix seconds.
    pub created: u64,
    /// Separates this run's model answers in the shared response cache ("" = shared);
    /// `deepr bench` gives each topic × strategy run its own, so no strategy is served
    /// another's answers.
    #[serde(default)]
    pub cache_namespace: String,
    /// Simulated latency per search call, milliseconds (orchestration benchmarks).
    #[serde(default)]
    pub search_latency_ms: u64,
    /// Simulated latency per fetch call, milliseconds (orchestration benchmarks).
    #[serde(default)]
    pub fetch_latency_ms: u64,
    /// Extra output formats (`html`, `bullets`, `cards`).
    #[serde(default)]
    pub formats: Vec<String>,
    /// The sentence-embedding model the run re-ranks with, chosen when it started, so
    /// that a resume ranks as the run began (absent in records from before: the
    /// environment decides, as it did then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed: Option<EmbedChoice>,
    /// Simulated latencies as given (they win over the `*_latency_ms` fields, which
    /// older records carry alone).
    #[serde(default)]
    pub simulation: Simulation,
    /// Independent calls one step keeps in flight (1 = sequential).
    #[serde(default = "default_io_concurrency")]
    pub io_concurrency: usize,
    /// Read corpus files through links that leave the corpus folder (`--follow-links`).
    #[serde(default)]
    pub follow_links: bool,
    /// Candidates a model extractor reads per subquestion (`--model-pool`).
    #[serde(default = "default_model_pool")]
    pub model_pool: usize,
    /// How a model extractor reads (`--reading`); a record from before it was a
    /// setting read ranked, and keeps doing so on resume.
    #[serde(default = "reading_before_documents")]
    pub reading: deepr_stages::research::Reading,
    /// The topic read as a brief (parts, writing instructions, context, entities), kept
    /// when it is more than one question; informational — every stage parses the topic
    /// itself, so a resume never depends on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brief: Option<deepr_tasks::brief::Brief>,
    /// The subquestions of the plan the user reviewed (`--plan plan.toml`), researched
    /// as written; absent when the planner plans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_plan: Option<Vec<deepr_stages::research::PlannedQuestion>>,
    /// `--plan-only`: every session of this run runs only the plan phase and writes
    /// the research plan here, for the user to review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_only: Option<PlanOnly>,
    /// The run this one follows (`deepr ask`, `deepr refresh`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<Lineage>,
}

/// The topic as a brief, when it is more than a one-line question.
pub fn brief_of(topic: &str) -> Option<deepr_tasks::brief::Brief> {
    let brief = deepr_tasks::brief::parse_brief(topic);
    (brief.parts.len() >= 2 || !brief.instructions.is_empty()).then_some(brief)
}

fn reading_before_documents() -> deepr_stages::research::Reading {
    deepr_stages::research::Reading::Ranked
}

fn default_model_pool() -> usize {
    deepr_stages::extract::DEFAULT_MODEL_POOL
}

fn default_io_concurrency() -> usize {
    deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY
}

/// Simulated latencies (`--offline-latency`, `--search-latency`, `--fetch-latency`,
/// `--latency-seed`): simulation settings that never change an answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Simulation {
    #[serde(default)]
    pub offline: Option<String>,
    #[serde(default)]
    pub search: Option<String>,
    #[serde(default)]
    pub fetch: Option<String>,
    #[serde(default)]
    pub seed: u64,
}

impl RunRecord {
    /// The offline model's simulated latency.
    pub fn model_latency(&self) -> Result<ModelLatency, Failure> {
        match &self.simulation.offline {
            Some(text) => ModelLatency::parse(text)
                .map_err(|e| usage(format!("the run record's offline latency: {e}"))),
            None => Ok(ModelLatency {
                first_token: Latency::Fixed(Duration::from_millis(self.offline_latency_ms)),
                tokens_per_s: None,
            }),
        }
    }

    /// Simulated search latency.
    pub fn search_latency(&self) -> Result<Latency, Failure> {
        latency_or(&self.simulation.search, self.search_latency_ms, "search")
    }

    /// Simulated fetch latency.
    pub fn fetch_latency(&self) -> Result<Latency, Failure> {
        latency_or(&self.simulation.fetch, self.fetch_latency_ms, "fetch")
    }
}

fn latency_or(text: &Option<String>, ms: u64, what: &str) -> Result<Latency, Failure> {
    match text {
        Some(text) => {
            Latency::parse(text).map_err(|e| usage(format!("the run record's {what} latency: {e}")))
        }
        None => Ok(Latency::Fixed(Duration::from_millis(ms))),
    }
}

/// Milliseconds of a latency's mean (kept in the record for older readers).
pub fn mean_ms(latency: &Latency) -> u64 {
    u64::try_from(latency.mean().as_millis()).unwrap_or(u64::MAX)
}

/// `efficiency.json`: a session's wall time against the lower bound of its DAG.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Efficiency {
    /// Wall time of the pipeline in this session, seconds.
    pub wall_s: f64,
    /// Longest dependency chain, each node costing its calls' measured latencies with
    /// calls that could run together counted once (`deepr_orchestrator::bound`).
    pub critical_path_s: f64,
    /// All nodes' costs divided by the node concurrency cap.
    pub work_over_concurrency_s: f64,
    /// max(critical path, work / concurrency): with these call latencies, no schedule
    /// could have been faster. Written only by a session that restored no node.
    pub lower_bound_s: f64,
    /// Nodes restored from checkpoints (the bound is meaningful only when this is 0).
    pub restored_nodes: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    Running,
    /// `--plan-only` wrote the plan and stopped; `deepr run --plan FILE` researches it
    /// (a resume only ends planned again, never over the plan).
    Planned,
    Finished,
    Incomplete,
    Interrupted,
    Failed,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Planned => "planned",
            Self::Finished => "finished",
            Self::Incomplete => "incomplete",
            Self::Interrupted => "interrupted",
            Self::Failed => "failed",
        }
    }
}

/// What the queue carries for a run: its record and the budgets that hold for the whole
/// run across all its sessions (`max_time` holds per session). Never a secret.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FleetJob {
    pub record: RunRecord,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub max_cost: Option<f64>,
    #[serde(default)]
    pub max_time_secs: Option<f64>,
}

/// `run.json`: the record plus the run's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    pub record: RunRecord,
    pub state: RunState,
    /// Why the run is not finished, if it is not.
    pub note: Option<String>,
    /// The short cause shown beside the state (`provider unavailable`, `auth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Unix seconds of the last state change.
    pub updated: u64,
}

pub fn run_dir(state_dir: &Path, run_id: &str) -> PathBuf {
    state_dir.join("runs").join(run_id)
}

pub fn read_run_file(dir: &Path) -> Option<RunFile> {
    serde_json::from_slice(&std::fs::read(dir.join("run.json")).ok()?).ok()
}

pub fn write_run_file(dir: &Path, file: &RunFile) -> anyhow::Result<()> {
    crate::util::write_atomically(&dir.join("run.json"), &serde_json::to_vec_pretty(file)?)
}

/// The process executing a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    pub started: u64,
}

pub fn write_owner(dir: &Path) -> anyhow::Result<()> {
    let owner = Owner {
        pid: std::process::id(),
        started: now_secs(),
    };
    crate::util::write_atomically(&dir.join("owner.json"), &serde_json::to_vec(&owner)?)
}

pub fn read_owner(dir: &Path) -> Option<Owner> {
    serde_json::from_slice(&std::fs::read(dir.join("owner.json")).ok()?).ok()
}

/// Whether a process with this pid is alive (Linux: /proc).
pub fn process_alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Parse a duration flag such as `90m`, `2h`, `200ms`, `1h 30m`.
pub fn parse_duration(flag: &str, value: &str) -> Result<Duration, Failure> {
    humantime::parse_duration(value.trim()).map_err(|e| {
        usage(format!(
            "{flag} {value:?} is not a duration ({e}); use e.g. 90m, 2h, 30s or 200ms"
        ))
    })
}

/// Age in a short human form ("5m", "3h", "2d").
pub fn age(created: u64) -> String {
    let secs = now_secs().saturating_sub(created);
    match secs {
        0..=119 => format!("{secs}s"),
        120..=7199 => format!("{}m", secs / 60),
        7200..=172_799 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// Open a run's store; a store held by a live process names it, a damaged one names
/// its file. sled can panic on garbage, so the open runs in its own task.
pub async fn open_store(dir: &Path, run_id: &str) -> Result<SledStore, Failure> {
    let path = dir.join("checkpoints.sled");
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = tokio::spawn({
        let path = path.clone();
        async move { SledStore::open(&path).await }
    })
    .await;
    std::panic::set_hook(previous_hook);
    match opened {
        Ok(Ok(store)) => Ok(store),
        Ok(Err(StoreError::Locked(_))) => {
            let holder = match read_owner(dir) {
                Some(owner) if process_alive(owner.pid) => format!("process {} (running since {})", owner.pid, utc_rfc3339(owner.started)),
                _ => "another process".to_string(),
            };
            Err(usage(format!("run {run_id} is being executed by {holder}; wait for it to finish or stop it, then resume")))
        }
        Ok(Err(error)) => Err(Failure::Run(anyhow::anyhow!(
            "checkpoint store {} is damaged ({error}); other runs are unaffected — start a new run, or remove this one with `deepr runs rm {run_id}`",
            path.display()
        ))),
        Err(_) => Err(Failure::Run(anyhow::anyhow!(
            "checkpoint store {} is damaged (it could not be read); other runs are unaffected — start a new run, or remove this one with `deepr runs rm {run_id}`",
            path.display()
        ))),
    }
}

/// The run record from the store (authoritative; flushed before the run did any work).
pub fn stored_record(store: &dyn CheckpointStore, run_id: &str) -> Result<RunRecord, Failure> {
    let value = store
        .get_meta("run")
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot read run {run_id}'s record: {e}")))?
        .ok_or_else(|| {
            usage(format!(
                "run {run_id} has no record (it was stopped before it started); start a new run"
            ))
        })?;
    serde_json::from_value(value).map_err(|e| {
        Failure::Run(anyhow::anyhow!(
            "run {run_id}'s record is from another deepr version or damaged ({e}); start a new run"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record written before simulated-latency distributions and `io_concurrency`
    /// existed still loads: fixed latencies from the `*_ms` fields, the default
    /// per-step concurrency.
    #[test]
    fn an_older_run_record_loads_with_defaults() {
        let old = serde_json::json!({
            "schema": RECORD_SCHEMA, "run_id": "old", "topic": "WAL", "depth": "standard",
            "strategy": "linear", "corpus": null, "out": "/tmp/old.md",
            "llm_strong": "offline", "llm_cheap": "offline", "llm_base_url": null,
            "price_as": null, "limits": deepr_providers::llm::LlmLimits::default(),
            "concurrency": 5, "offline_latency_ms": 15, "prompts": null, "created": 0,
            "search_latency_ms": 20, "fetch_latency_ms": 30
        });
        let record: RunRecord = serde_json::from_value(old).expect("an older record loads");
        assert_eq!(record.simulation, Simulation::default());
        assert_eq!(
            record.io_concurrency,
            deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY
        );
        let model = record.model_latency().map_err(|_| "model latency");
        assert_eq!(
            model.map(|m| m.first_token),
            Ok(Latency::Fixed(Duration::from_millis(15)))
        );
        assert!(
            matches!(record.search_latency(), Ok(Latency::Fixed(d)) if d == Duration::from_millis(20))
        );
        assert!(
            matches!(record.fetch_latency(), Ok(Latency::Fixed(d)) if d == Duration::from_millis(30))
        );
    }

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("--max-time", "90m").ok(),
            Some(Duration::from_secs(5400))
        );
        assert_eq!(
            parse_duration("--offline-latency", "200ms").ok(),
            Some(Duration::from_millis(200))
        );
        assert!(parse_duration("--max-time", "soon").is_err());
        assert!(parse_duration("--max-time", "-5m").is_err());
    }
}

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
    pub documents: Vec<deepr_orchestrator::DocMeta>,
    /// Told to the reader with the gaps: why more than the parent's documents were
    /// searched, when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where a plan-only session writes its plan, and the lines it writes above the plan
/// as comments (the estimate of the run it plans).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanOnly {
    pub path: std::path::PathBuf,
    pub notes: Vec<String>,
}
