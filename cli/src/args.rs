//! The command line's argument types (clap derives): each command's flags. A run's
//! flags are the session library's request types (`deepr_session::request`: the run,
//! its budgets, latencies and source URLs, follow-ups and refreshes), flattened in;
//! `main.rs` keeps the top-level `Cli` and its dispatch.

use std::path::PathBuf;

use clap::Subcommand;
pub use deepr_session::request::{Budget, Latencies, RunRequest, SourceUrls};

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
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "linear,per-claim,free-quote,no-judge"
    )]
    pub strategies: Vec<deepr_settings::Strategy>,
    /// How a model extractor reads (as `deepr run --reading`); the offline model
    /// always reads ranked.
    #[arg(long, value_name = "ranked|documents", value_parser = deepr_session::request::parse_reading)]
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
    pub latencies: Latencies,
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

#[derive(clap::Args, Debug)]
pub struct ResumeArgs {
    /// The id printed when the run started (see `deepr runs list`).
    pub run_id: String,
    #[command(flatten)]
    pub budget: Budget,
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

/// `deepr run`: the run's request (the library's, every flag defined there once) and
/// the two flags only the command line has.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub request: RunRequest,
    /// Fleet mode (--db): queue the run, print its id and return at once (without it,
    /// `run --db` follows the run and writes its report to --out when it ends).
    #[arg(long)]
    pub detach: bool,
    /// Print the expected number of LLM calls, tokens and cost for this depth,
    /// strategy and model, and exit without running.
    #[arg(long)]
    pub estimate: bool,
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
