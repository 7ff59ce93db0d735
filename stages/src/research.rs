//! What a research run is given and what it gives back: depth and strategy, the
//! configuration, the providers, the result gathered from finished nodes, the errors —
//! and the node ids, built in one place for the DAG builder and the collector alike.

use std::collections::BTreeMap;
use std::sync::Arc;

use deepr_evidence::report::{Conflict, Coverage, Verdict};
use deepr_orchestrator::clock::Clock;
use deepr_orchestrator::{
    ExecutorError, Fetcher, LlmProvider, SearchProvider, SentenceEmbedder, StopReason, TextArchive,
};
use thiserror::Error;

use crate::model_call::Models;
use crate::types::*;

/// Node ids: `r0/scout`, `r{round}/{subquestion}/{step}`, `r{round}/{join}`,
/// `write/{subquestion}`, `synthesize`.
pub mod node_id {
    pub const SCOUT: &str = "r0/scout";
    pub const DECOMPOSE: &str = "r0/decompose";
    pub const SYNTHESIZE: &str = "synthesize";

    /// A per-subquestion step (`subquery`, `retrieve`, `fetch`, `score`, `extract`).
    pub fn step(round: u32, subquestion: &str, step: &str) -> String {
        format!("r{round}/{subquestion}/{step}")
    }

    /// A round's join (`judge`, `conflict`, `deepen`).
    pub fn join(round: u32, join: &str) -> String {
        format!("r{round}/{join}")
    }

    /// An article section, by its first subquestion.
    pub fn section(subquestion: &str) -> String {
        format!("write/{subquestion}")
    }
}

// Depth, its limits and the strategy are settings a config file names: they live in
// `deepr-settings`, typed from the file to the stages.
pub use deepr_settings::plan::MAX_PLAN_BYTES;
pub use deepr_settings::{
    parse_plan, render_plan, Depth, DepthLimits, PlanError, PlannedQuestion, Reading, ReportFormat,
    ResearchPlan, Strategy,
};

#[derive(Clone, Debug)]
pub struct ResearchConfig {
    pub topic: String,
    pub depth: Depth,
    pub strategy: Strategy,
    /// Identifies what the search providers search (e.g. the corpus index's content
    /// hash), so a changed corpus changes retrieval keys.
    pub search_fingerprint: String,
    /// How many independent calls one step keeps in flight (searches, fetches, judge
    /// batches, votes); 1 runs them one after another. It changes timing only, never an
    /// output, so it is in no node key.
    pub io_concurrency: usize,
    /// Candidates a model extractor is shown per subquestion: ranked, but neither cut
    /// to the heuristic's `score::MAX_CANDIDATES` nor partitioned across the
    /// round's subquestions (that suits the offline extractor, not a reader that can
    /// judge relevance itself). `extract::DEFAULT_MODEL_POOL` by default.
    pub model_pool: usize,
    /// How a model extractor reads its documents ([`Reading`]); the offline heuristic
    /// reads its ranked share whatever this says.
    pub reading: Reading,
    /// The corpus files read and not read, for the report's References (`None`
    /// without a corpus).
    pub corpus_files: Option<deepr_evidence::report::CorpusFiles>,
    /// The subquestions of a plan the user reviewed (`--plan plan.toml`): researched as
    /// written, with no scout and no planner call. `None`: the planner plans.
    pub user_plan: Option<Vec<PlannedQuestion>>,
    /// What the report is: an article (sections written in prose) or an answer (the
    /// summary answers; each section lists its supporting claims, with no call).
    pub shape: ReportShape,
    /// A refresh's parent's reading: its extract steps start from the parent's claims
    /// and read only new documents ([`crate::earlier`]). `None` for any other run.
    pub parent_reading: Option<Arc<crate::parent_reading::ParentReading>>,
}

/// The report's shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReportShape {
    /// The summary and a written section per top-level subquestion.
    #[default]
    Article,
    /// A follow-up's answer: the summary answers; the claims behind it are listed.
    Answer,
}

#[derive(Clone)]
pub struct ResearchProviders {
    pub strong: Arc<dyn LlmProvider>,
    pub cheap: Arc<dyn LlmProvider>,
    /// Answers for either model when its answer is unusable (the caller wires the local
    /// heuristic model here).
    pub fallback: Arc<dyn LlmProvider>,
    /// Times every call of every step (real time in a run; virtual time in tests).
    pub clock: Arc<dyn Clock>,
    pub search: Vec<Arc<dyn SearchProvider>>,
    pub fetcher: Arc<dyn Fetcher>,
    pub archive: Arc<dyn TextArchive>,
    pub prompts: Arc<deepr_prompts::PromptSet>,
    /// The local sentence-embedding re-ranker, when a model was found.
    pub embedder: Option<Arc<dyn SentenceEmbedder>>,
}

impl ResearchProviders {
    /// The strong model and its fallback.
    pub fn strong_models(&self) -> Models<'_> {
        Models {
            llm: self.strong.as_ref(),
            fallback: self.fallback.as_ref(),
            clock: self.clock.as_ref(),
        }
    }

    /// The cheap model and its fallback.
    pub fn cheap_models(&self) -> Models<'_> {
        Models {
            llm: self.cheap.as_ref(),
            fallback: self.fallback.as_ref(),
            clock: self.clock.as_ref(),
        }
    }
}

#[derive(Debug, Error)]
pub enum ResearchError {
    #[error(transparent)]
    Executor(#[from] ExecutorError),
    #[error("node output could not be read back: {0}")]
    Output(String),
    /// Preview mode: the next phase's shape depends on a node that would run first.
    #[error("later steps depend on {0}, which would run first")]
    PreviewEnds(String),
    /// The run stopped early (budget, interrupt, credentials, outage); `partial` holds
    /// what finished.
    #[error("stopped: {reason}")]
    Stopped {
        reason: StopReason,
        partial: Box<ResearchResult>,
    },
}

/// Everything the renderer needs, gathered from finished nodes.
#[derive(Clone, Debug, Default)]
pub struct ResearchResult {
    pub subquestions: Vec<Subq>,
    pub claims: Vec<(ClaimDraft, Verdict)>,
    pub conflicts: Vec<Conflict>,
    /// Best score per document, by content hash.
    pub sources: BTreeMap<String, ScoredSource>,
    pub coverage: Vec<Coverage>,
    pub fetch_failures: Vec<FetchFailure>,
    pub summary: Vec<SummaryPoint>,
    /// Summary sentences dropped by the grounding check.
    pub summary_dropped: Vec<deepr_evidence::report::DroppedSentence>,
    /// The article's sections as written, in plan order.
    pub sections: Vec<SectionOut>,
    pub deepen_reasons: Vec<String>,
    pub rounds: u32,
    /// Judge calls per round.
    pub judge_calls: Vec<u32>,
    /// Nodes whose model answer was unusable and fell back to the offline heuristic.
    pub degraded: Vec<(String, String)>,
    pub restored_nodes: usize,
    pub executed_nodes: usize,
    /// Each score step's re-ranking (`None`: no embedding model was wired).
    pub reranks: Vec<Option<Rerank>>,
}
