//! The command line's argument types (clap derives): each command's flags, the
//! budgets and simulated latencies runs share, and the parsers of values clap cannot
//! type itself. `main.rs` keeps the top-level `Cli` and its dispatch.

use std::path::PathBuf;

use clap::Subcommand;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Topics, one per line (`#` comments and blank lines ignored).
    #[arg(long, value_name = "FILE", required_unless_present_any = ["qa", "facts"])]
    pub topics: Option<PathBuf>,
    /// Questions with official answers (benches/data/sqlite_faq.json): research each
    /// question and score how much of its answer the report's quotes cover, beside a
    /// BM25 sentence-retrieval baseline.
    #[arg(long, value_name = "FILE", conflicts_with = "topics")]
    pub qa: Option<PathBuf>,
    /// Fact checkpoints (TOML: a brief, and per checkpoint the values its report must
    /// state and the stale values it must not): fact coverage per strategy.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["topics", "qa"])]
    pub facts: Option<PathBuf>,
    /// With --qa: only the first N questions.
    #[arg(long, value_name = "N")]
    pub qa_limit: Option<usize>,
    /// Comma-separated strategies.
    #[arg(long, default_value = "linear,per-claim,free-quote,no-judge")]
    pub strategies: String,
    /// How a model extractor reads (as `deepr run --reading`); the offline model
    /// always reads ranked.
    #[arg(long, value_name = "ranked|documents", value_parser = parse_reading)]
    pub reading: Option<deepr_settings::Reading>,
    /// The corpus every topic is researched on.
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// The model (as in `deepr run --llm`).
    #[arg(long, value_name = "MODEL")]
    pub llm: Option<String>,
    #[arg(long, value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// Price every call as if MODEL had answered.
    #[arg(long, value_name = "MODEL")]
    pub price_as: Option<String>,
    #[arg(long, value_enum)]
    pub depth: Option<deepr_settings::Depth>,
    /// Runs at once (1–8).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    #[command(flatten)]
    pub simulation: SimulationArgs,
    /// Independent calls one step keeps in flight (1–64; default 8; 1 = sequential).
    #[arg(long, value_name = "N")]
    pub io_concurrency: Option<usize>,
    /// Where the bench writes bench.json, bench.md, bench.svg, its runs and reports.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// A report (.md, checked through its footnotes), its .json sidecar, or an export
    /// bundle from `deepr runs export`.
    pub report: PathBuf,
    /// Also fetch URL sources live (a source whose archived text is missing is checked
    /// against the live page; a page that cannot answer leaves its rows unchecked).
    #[arg(long)]
    pub live: bool,
    /// At most N live fetches (default 20).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_live: Option<String>,
    /// Allow live fetches of private, loopback and link-local addresses.
    #[arg(long)]
    pub allow_private: bool,
}

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// Install pgmq's SQL and apply deepr's schema migrations to --db (idempotent).
    Migrate,
}

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Print the settings deepr would use: config file, environment (keys redacted), defaults.
    Show,
}

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// One line per run: id, state, tokens spent, age, topic.
    List,
    /// Find past runs by topic and content (research memory).
    Search {
        /// Words to look for.
        query: String,
    },
    /// A run's settings, per-stage progress and spending, and where its report is.
    Show {
        /// The run id.
        run_id: String,
    },
    /// Write one file (report, sidecar and the archived text of every cited source)
    /// that `deepr verify FILE` checks on another machine with no state dir.
    Export {
        /// The run id.
        run_id: String,
        /// The bundle to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Delete a run's checkpoints and log (not its report, not shared caches).
    Rm {
        /// The run id.
        run_id: String,
    },
    /// Fleet mode (--db): follow a queued or running run to its end.
    Follow {
        /// The run id.
        run_id: String,
    },
}

/// Limits that stop a run early with an incomplete report (exit 4); resume to finish.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BudgetArgs {
    /// Stop starting model calls once the run has spent N tokens (prompt + completion).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Stop starting model calls once the run has spent USD dollars.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Stop starting model calls after this long in this session (e.g. 90m, 2h, 30s).
    #[arg(long, value_name = "DURATION")]
    pub max_time: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct ResumeArgs {
    /// The id printed when the run started (see `deepr runs list`).
    pub run_id: String,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Nodes run at once (1–64; default: the run's setting).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Independent calls one step keeps in flight (1–64; default: the run's setting).
    #[arg(long, value_name = "N")]
    pub io_concurrency: Option<usize>,
    /// Recompute the steps whose model answer was unusable and fell back to the offline
    /// heuristic (the report lists them), and every step after them.
    #[arg(long)]
    pub retry_degraded: bool,
    /// Show what would be restored, recomputed (and why) or run, and stop.
    #[arg(long)]
    pub dry_run: bool,
}

/// Base URLs of the search providers (trusted endpoints: mirrors, self-hosted
/// instances, test stand-ins).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SourceUrlArgs {
    #[arg(long, value_name = "URL")]
    pub wikipedia_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub arxiv_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub hn_url: Option<String>,
    /// Base URL of your SearXNG instance (needed for --sources searxng).
    #[arg(long, value_name = "URL")]
    pub searxng_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub brave_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub tavily_url: Option<String>,
}

impl SourceUrlArgs {
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

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The research topic or question (with --plan: the plan's, unless given).
    #[arg(required_unless_present = "plan")]
    pub topic: Option<String>,
    /// A folder of .md, .txt and .html documents to research.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Search providers, comma-separated: corpus, wikipedia, arxiv, hn, searxng, brave
    /// (BRAVE_API_KEY), tavily (TAVILY_API_KEY). Default: the corpus when --corpus is
    /// given, else wikipedia,arxiv,hn.
    #[arg(long, value_name = "LIST")]
    pub sources: Option<String>,
    #[command(flatten)]
    pub source_urls: SourceUrlArgs,
    /// Let the fetcher reach HOST (or exactly HOST:PORT) even on a private or loopback
    /// address (repeatable). Nothing else on a private network is ever fetched.
    #[arg(long = "allow-host", value_name = "HOST[:PORT]")]
    pub allow_hosts: Vec<String>,
    /// Read files in the corpus through symbolic links that lead outside its folder
    /// (by default such files are listed as not read).
    #[arg(long)]
    pub follow_links: bool,
    /// Candidate sentences a model extractor reads per subquestion (1–200; the offline
    /// heuristic reads its own smaller share).
    #[arg(long, value_name = "N", default_value_t = deepr_stages::extract::DEFAULT_MODEL_POOL, value_parser = parse_model_pool)]
    pub model_pool: usize,
    /// Report path (default: a slug of the topic in the current folder); report.json is written beside it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// quick (3–5 subquestions, no extra round), standard (5–10, ≤ 1 extra round), deep (10–20, ≤ 3).
    #[arg(long, value_enum)]
    pub depth: Option<deepr_settings::Depth>,
    /// linear (candidates by ID, one judge call per 8 claims; default), per-claim (3
    /// verifier votes per claim reading full sources), free-quote (the model copies its
    /// own quotes; kept as written), no-judge.
    #[arg(long, value_enum)]
    pub strategy: Option<deepr_settings::Strategy>,
    /// How a model extractor reads a subquestion's documents: ranked (default: the units
    /// ranked by the question's words, up to --model-pool) or documents (each found
    /// document under its headings, a short one whole, a long one by its best sections,
    /// within a token budget per call). The offline model always reads ranked.
    #[arg(long, value_name = "ranked|documents", value_parser = parse_reading)]
    pub reading: Option<deepr_settings::Reading>,
    /// The model for every task: `offline` (default: deterministic, no key, no network),
    /// `openai:MODEL` (key: OPENAI_API_KEY; base URL: --llm-base-url or OPENAI_BASE_URL),
    /// `ollama:MODEL` (local Ollama), `anthropic:MODEL` (key: ANTHROPIC_API_KEY).
    #[arg(long, value_name = "MODEL")]
    pub llm: Option<String>,
    /// The strong model for decompose and synthesize (default: --llm).
    #[arg(long, value_name = "MODEL")]
    pub llm_strong: Option<String>,
    /// The cheap model for the other tasks (default: --llm).
    #[arg(long, value_name = "MODEL")]
    pub llm_cheap: Option<String>,
    /// Base URL of an OpenAI-compatible (or Anthropic) server, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// Price every call as if MODEL had answered (see providers/prices.toml), so token
    /// figures read in dollars — the offline model's included.
    #[arg(long, value_name = "MODEL")]
    pub price_as: Option<String>,
    /// Choose the run id (letters, digits, '-', '_', '.'; must not exist yet).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Nodes run at once (1–64; default 8).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Independent calls one step keeps in flight — searches, fetches, judge batches
    /// (1–64; default 8). 1 runs them one after another, for tightly rate-limited APIs.
    #[arg(long, value_name = "N")]
    pub io_concurrency: Option<usize>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Fleet mode (--db): queue the run, print its id and return at once (without it,
    /// `run --db` follows the run and writes its report to --out when it ends).
    #[arg(long)]
    pub detach: bool,
    /// Print the expected number of LLM calls, tokens and cost for this depth,
    /// strategy and model, and exit without running.
    #[arg(long)]
    pub estimate: bool,
    /// Plan only: write the research plan (its subquestions and first queries, the
    /// depth, the estimate) to plan.toml beside --out and exit, for you to review and
    /// edit before paying for the research.
    #[arg(long, conflicts_with_all = ["plan", "estimate", "detach"])]
    pub plan_only: bool,
    /// Research exactly the plan in FILE (written by --plan-only, maybe edited): its
    /// subquestions, their queries, its depth and its topic.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Extra output formats beside --out (repeatable): html (report.html), bullets
    /// (report.bullets.md), cards (report.cards.tsv), pdf (report.pdf). The markdown report and its JSON
    /// sidecar are always written.
    #[arg(long = "format", value_enum, value_name = "FORMAT")]
    pub formats: Vec<deepr_settings::ReportFormat>,
    #[command(flatten)]
    pub simulation: SimulationArgs,
    /// A folder of prompt templates (<id>.txt) that replace the built-in ones; edits
    /// there recompute exactly the dependent steps on resume.
    #[arg(long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
}

/// Simulated latencies: settings for crash tests and orchestration benchmarks that
/// never change an answer. A latency is fixed (`400ms`), uniform (`300ms..900ms`) or
/// normal (`600ms~200ms`, mean ~ standard deviation); each call's draw depends on the
/// call itself and the seed, not on the order calls are made in.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct SimulationArgs {
    /// Simulated offline-model latency per call: time to first token, optionally plus
    /// a generation speed (e.g. 200ms, 800ms+60tok/s).
    #[arg(long, value_name = "LATENCY")]
    pub offline_latency: Option<String>,
    /// Simulated latency per search call (e.g. 400ms, 300ms..900ms).
    #[arg(long, value_name = "LATENCY")]
    pub search_latency: Option<String>,
    /// Simulated latency per fetch call (e.g. 600ms, 200ms..1500ms).
    #[arg(long, value_name = "LATENCY")]
    pub fetch_latency: Option<String>,
    /// Seed of the simulated latency draws (default 0).
    #[arg(long, value_name = "N")]
    pub latency_seed: Option<u64>,
}

/// `deepr mcp`'s flags: the transport, what agents may read, and the budget caps.
#[derive(clap::Args, Debug)]
pub struct McpArgs {
    /// Serve streamable HTTP on PORT or HOST:PORT (loopback) instead of stdio; clients
    /// must send `Authorization: Bearer $DEEPR_MCP_TOKEN`.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// With --http: listen on this IP address instead of loopback.
    #[arg(long, value_name = "IP", requires = "http")]
    pub bind: Option<String>,
    /// A folder corpora and report paths must lie under (repeatable; default: the
    /// working directory). Symlinks are resolved before the check.
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// The most tokens one run may spend; a call may ask for less, never more.
    #[arg(long, value_name = "N", default_value_t = 2_000_000)]
    pub max_tokens_per_run: u64,
    /// The most dollars one run may spend; a call may ask for less, never more.
    #[arg(long, value_name = "USD", default_value_t = 5.0)]
    pub max_cost_per_run: f64,
}

/// `--reading ranked|documents`, by the settings' own names.
fn parse_reading(value: &str) -> Result<deepr_settings::Reading, String> {
    deepr_settings::Reading::from_name(value).ok_or_else(|| {
        let names: Vec<&str> = deepr_settings::Reading::VALUES
            .iter()
            .map(|(name, _)| *name)
            .collect();
        format!("{value:?} is no reading; use {}", names.join(" or "))
    })
}

/// `--model-pool N`: a whole number from 1 to 200.
fn parse_model_pool(value: &str) -> Result<usize, String> {
    match value.trim().parse::<usize>() {
        Ok(n) if (1..=200).contains(&n) => Ok(n),
        _ => Err(format!("{value:?} is not a whole number from 1 to 200")),
    }
}
