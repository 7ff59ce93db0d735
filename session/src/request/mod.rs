//! A run's request, for every front end: what was asked ([`RunRequest`]; for the runs
//! that follow a run, [`FollowUpRequest`] and [`RefreshRequest`]), merged with the
//! environment and the config file in one order — flag, else environment, else file,
//! else default — and validated once ([`validate`]: every error one line, exit 2), then
//! built into the run's record and created in the state dir ([`create`]). The command
//! line parses into these types (clap derives behind the `cli` feature), the MCP server
//! fills them from a tool call's JSON, and the fleet worker reads the record they
//! built from the queue: a run is the same run whichever front end asked for it.

mod config_file;
mod create;
mod follow_up;
mod refresh;
mod validate;

use std::path::PathBuf;

pub use crate::wiring::source_names;
pub use config_file::{config_path, load_config, ENV_VARS};
pub use create::{
    create_run, estimate, estimate_line, fleet_job, make_run_dir, prepare_fleet, prepare_local,
    session_options, Estimate, NewRun,
};
pub use follow_up::prepare_follow_up;
pub use refresh::{prepare_refresh, Refreshed};
pub use validate::{
    check_budget, check_concurrency, check_corpus, check_io_concurrency, check_topic, db_url,
    db_url_in, out_of, prepare_out, simulation_of, validate, ValidRun,
};

/// What every request shares, whichever command or tool made it: where runs live,
/// the config file, the fleet database, and who hears the sessions.
#[derive(Clone, Default)]
pub struct Globals {
    /// `--state-dir` (else `DEEPR_STATE_DIR`, else the XDG state dir).
    pub state_dir: Option<PathBuf>,
    /// `--quiet`: the command line's own lines say nothing but errors (the library
    /// only hands its sessions `events`).
    pub quiet: bool,
    /// Who hears the sessions' progress events (none: no one).
    pub events: Option<crate::options::EventSink>,
    /// `--config` (else the XDG config file, if it exists).
    pub config: Option<PathBuf>,
    /// `--db` as given (see [`db_url`] for the environment and config file).
    pub db: Option<String>,
}

/// Limits that stop a run early with an incomplete report (exit 4); resume to finish.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Budget {
    /// Stop starting model calls once the run has spent N tokens (prompt + completion).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_tokens: Option<u64>,
    /// Stop starting model calls once the run has spent USD dollars.
    #[cfg_attr(feature = "cli", arg(long, value_name = "USD"))]
    pub max_cost: Option<f64>,
    /// Stop starting model calls after this long in this session (e.g. 90m, 2h, 30s).
    #[cfg_attr(feature = "cli", arg(long, value_name = "DURATION"))]
    pub max_time: Option<String>,
}

/// Base URLs of the search providers (trusted endpoints: mirrors, self-hosted
/// instances, test stand-ins).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct SourceUrls {
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub wikipedia_url: Option<String>,
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub arxiv_url: Option<String>,
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub hn_url: Option<String>,
    /// Base URL of your SearXNG instance (needed for --sources searxng).
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub searxng_url: Option<String>,
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub brave_url: Option<String>,
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub tavily_url: Option<String>,
}

impl SourceUrls {
    /// (source name, configured base URL) for every web provider.
    pub fn pairs(&self) -> [(&'static str, &Option<String>); 6] {
        [
            ("wikipedia", &self.wikipedia_url),
            ("arxiv", &self.arxiv_url),
            ("hn", &self.hn_url),
            ("searxng", &self.searxng_url),
            ("brave", &self.brave_url),
            ("tavily", &self.tavily_url),
        ]
    }
}

/// Simulated latencies: settings for crash tests and orchestration benchmarks that
/// never change an answer. A latency is fixed (`400ms`), uniform (`300ms..900ms`) or
/// normal (`600ms~200ms`, mean ~ standard deviation); each call's draw depends on the
/// call itself and the seed, not on the order calls are made in.
#[derive(Debug, Default, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Latencies {
    /// Simulated offline-model latency per call: time to first token, optionally plus
    /// a generation speed (e.g. 200ms, 800ms+60tok/s).
    #[cfg_attr(feature = "cli", arg(long, value_name = "LATENCY"))]
    pub offline_latency: Option<String>,
    /// Simulated latency per search call (e.g. 400ms, 300ms..900ms).
    #[cfg_attr(feature = "cli", arg(long, value_name = "LATENCY"))]
    pub search_latency: Option<String>,
    /// Simulated latency per fetch call (e.g. 600ms, 200ms..1500ms).
    #[cfg_attr(feature = "cli", arg(long, value_name = "LATENCY"))]
    pub fetch_latency: Option<String>,
    /// Seed of the simulated latency draws (default 0).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub latency_seed: Option<u64>,
}

/// A new research run, as asked: every value left out comes from the environment,
/// the config file or the default ([`validate`]).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct RunRequest {
    /// The research topic or question (with --plan: the plan's, unless given).
    #[cfg_attr(feature = "cli", arg(required_unless_present = "plan"))]
    pub topic: Option<String>,
    /// A folder of documents to research: Markdown, text, HTML, PDF, Word, PowerPoint,
    /// Excel, CSV, email and chat exports (docs/corpus.md lists them).
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub corpus: Option<PathBuf>,
    /// Search providers, comma-separated: corpus, wikipedia, arxiv, hn, searxng, brave
    /// (BRAVE_API_KEY), tavily (TAVILY_API_KEY). Default: the corpus when --corpus is
    /// given, else wikipedia,arxiv,hn.
    #[cfg_attr(feature = "cli", arg(long, value_name = "LIST"))]
    pub sources: Option<String>,
    #[cfg_attr(feature = "cli", command(flatten))]
    pub source_urls: SourceUrls,
    /// Let the fetcher reach HOST (or exactly HOST:PORT) even on a private or loopback
    /// address (repeatable). Nothing else on a private network is ever fetched.
    #[cfg_attr(feature = "cli", arg(long = "allow-host", value_name = "HOST[:PORT]"))]
    pub allow_hosts: Vec<String>,
    /// Read files in the corpus through symbolic links that lead outside its folder
    /// (by default such files are listed as not read).
    #[cfg_attr(feature = "cli", arg(long))]
    pub follow_links: bool,
    /// Candidate sentences a model extractor reads per subquestion (1–200; the offline
    /// heuristic reads its own smaller share).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = deepr_stages::extract::DEFAULT_MODEL_POOL))]
    pub model_pool: usize,
    /// Report path (default: a slug of the topic in the current folder); report.json is written beside it.
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub out: Option<PathBuf>,
    /// How wide and deep the run researches (default: standard).
    #[cfg_attr(feature = "cli", arg(long, value_enum))]
    pub depth: Option<deepr_settings::Depth>,
    /// How claims are judged (default: linear).
    #[cfg_attr(feature = "cli", arg(long, value_enum))]
    pub strategy: Option<deepr_settings::Strategy>,
    /// How a model extractor reads a subquestion's documents: ranked (default: the units
    /// ranked by the question's words, up to --model-pool) or documents (each found
    /// document under its headings, a short one whole, a long one by its best sections,
    /// within a token budget per call). The offline model always reads ranked.
    #[cfg_attr(feature = "cli", arg(long, value_name = "ranked|documents", value_parser = parse_reading))]
    pub reading: Option<deepr_settings::Reading>,
    /// The model for every task: `offline` (default: deterministic, no key, no network),
    /// `openai:MODEL` (key: OPENAI_API_KEY; base URL: --llm-base-url or OPENAI_BASE_URL),
    /// `ollama:MODEL` (local Ollama), `anthropic:MODEL` (key: ANTHROPIC_API_KEY).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODEL"))]
    pub llm: Option<String>,
    /// The strong model for decompose and synthesize (default: --llm).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODEL"))]
    pub llm_strong: Option<String>,
    /// The cheap model for the other tasks (default: --llm).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODEL"))]
    pub llm_cheap: Option<String>,
    /// Base URL of an OpenAI-compatible (or Anthropic) server, e.g. http://127.0.0.1:8080/v1.
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub llm_base_url: Option<String>,
    /// Price every call as if MODEL had answered (see providers/prices.toml), so token
    /// figures read in dollars — the offline model's included.
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODEL"))]
    pub price_as: Option<String>,
    /// Choose the run id (letters, digits, '-', '_', '.'; must not exist yet).
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID"))]
    pub run_id: Option<String>,
    /// Nodes run at once (1–64; default 8).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub concurrency: Option<usize>,
    /// Independent calls one step keeps in flight — searches, fetches, judge batches
    /// (1–64; default 8). 1 runs them one after another, for tightly rate-limited APIs.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub io_concurrency: Option<usize>,
    #[cfg_attr(feature = "cli", command(flatten))]
    pub budget: Budget,
    /// Plan only: write the research plan (its subquestions and first queries, the
    /// depth, the estimate) to plan.toml beside --out and exit, for you to review and
    /// edit before paying for the research.
    #[cfg_attr(feature = "cli", arg(long, conflicts_with_all = ["plan", "estimate", "detach"]))]
    pub plan_only: bool,
    /// Research exactly the plan in FILE (written by --plan-only, maybe edited): its
    /// subquestions, their queries, its depth and its topic.
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub plan: Option<PathBuf>,
    /// Extra output formats beside --out (repeatable). The markdown report and its JSON
    /// sidecar are always written.
    #[cfg_attr(
        feature = "cli",
        arg(long = "format", value_enum, value_name = "FORMAT")
    )]
    pub formats: Vec<deepr_settings::ReportFormat>,
    #[cfg_attr(feature = "cli", command(flatten))]
    pub latencies: Latencies,
    /// A folder of prompt templates (<id>.txt) that replace the built-in ones; edits
    /// there recompute exactly the dependent steps on resume.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub prompts: Option<PathBuf>,
}

impl Default for RunRequest {
    /// Nothing asked: every value from the environment, the config file or its default.
    fn default() -> Self {
        Self {
            topic: None,
            corpus: None,
            sources: None,
            source_urls: SourceUrls::default(),
            allow_hosts: Vec::new(),
            follow_links: false,
            model_pool: deepr_stages::extract::DEFAULT_MODEL_POOL,
            out: None,
            depth: None,
            strategy: None,
            reading: None,
            llm: None,
            llm_strong: None,
            llm_cheap: None,
            llm_base_url: None,
            price_as: None,
            run_id: None,
            concurrency: None,
            io_concurrency: None,
            budget: Budget::default(),
            plan_only: false,
            plan: None,
            formats: Vec::new(),
            latencies: Latencies::default(),
            prompts: None,
        }
    }
}

/// A follow-up question on an earlier run (`deepr ask`, the MCP `ask_followup`).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct FollowUpRequest {
    /// The earlier run (see `deepr runs list`).
    pub parent: String,
    /// The follow-up question.
    pub question: String,
    /// Search the earlier run's sources again too (its corpus or web providers), not
    /// only the documents it read.
    #[cfg_attr(feature = "cli", arg(long))]
    pub search: bool,
    /// Report path (default: a slug of the question in the current folder).
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub out: Option<PathBuf>,
    /// Choose the follow-up's run id (letters, digits, '-', '_', '.'; must not exist yet).
    #[cfg_attr(feature = "cli", arg(long = "run-id", value_name = "ID"))]
    pub new_id: Option<String>,
    #[cfg_attr(feature = "cli", command(flatten))]
    pub budget: Budget,
    /// Extra output formats beside --out (repeatable), as for `deepr run`.
    #[cfg_attr(
        feature = "cli",
        arg(long = "format", value_enum, value_name = "FORMAT")
    )]
    pub formats: Vec<deepr_settings::ReportFormat>,
}

/// An earlier run's research again, over its sources as they are now (`deepr
/// refresh`, the MCP `refresh_run`).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct RefreshRequest {
    /// The earlier run (see `deepr runs list`).
    pub parent: String,
    /// Exit 0 without a new run or report when no source changed since the earlier
    /// run (a corpus compared file by file; web sources are always refreshed).
    #[cfg_attr(feature = "cli", arg(long))]
    pub if_changed: bool,
    /// Report path (default: beside the earlier report, named after the new run).
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub out: Option<PathBuf>,
    /// Choose the refresh's run id (letters, digits, '-', '_', '.'; must not exist yet).
    #[cfg_attr(feature = "cli", arg(long = "run-id", value_name = "ID"))]
    pub new_id: Option<String>,
    #[cfg_attr(feature = "cli", command(flatten))]
    pub budget: Budget,
}

/// The extra report files a request's formats ask for, sorted, each once.
pub(crate) fn extra_files(formats: &[deepr_settings::ReportFormat]) -> Vec<String> {
    let mut files: Vec<String> = formats
        .iter()
        .filter_map(|f| f.extra_file().map(String::from))
        .collect();
    files.sort();
    files.dedup();
    files
}

/// `--reading ranked|documents`, by the settings' own names.
#[cfg(feature = "cli")]
pub fn parse_reading(value: &str) -> Result<deepr_settings::Reading, String> {
    deepr_settings::Reading::from_name(value).ok_or_else(|| {
        let names: Vec<&str> = deepr_settings::Reading::VALUES
            .iter()
            .map(|(name, _)| *name)
            .collect();
        format!("{value:?} is no reading; use {}", names.join(" or "))
    })
}
