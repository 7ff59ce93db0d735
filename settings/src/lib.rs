//! deepr's config file, `deepr.toml`: the typed settings and their parser.
//!
//! No I/O: the CLI reads the file and passes its text to [`parse`]. Unknown keys are an
//! error (a typo never silently does nothing), and so is any value of the wrong type.
//! The file is untrusted input: [`parse`] never panics on it (fuzzed in `fuzz/`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub mod plan;
mod run;
pub use plan::{parse_plan, render_plan, PlanError, PlannedQuestion, ResearchPlan};
pub use run::{Depth, DepthLimits, Reading, ReportFormat, Strategy};

/// Every key the file may hold, for error messages.
pub const KEYS: &str = "depth, strategy, reading, concurrency, io_concurrency, llm, llm_strong, llm_cheap, llm_base_url, price_as, offline_latency, search_latency, fetch_latency, latency_seed, prompts, db, [limits], [prices.MODEL]";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// `quick`, `standard` or `deep`.
    pub depth: Option<Depth>,
    /// `linear`, `per-claim`, `free-quote` or `no-judge`.
    pub strategy: Option<Strategy>,
    /// How a model extractor reads: `ranked` (default) or `documents`.
    pub reading: Option<Reading>,
    pub concurrency: Option<usize>,
    /// Independent calls one step keeps in flight (searches, fetches, judge batches);
    /// 1 = one after another, for tightly rate-limited APIs.
    pub io_concurrency: Option<usize>,
    /// Both tiers (`offline`, `openai:MODEL`, `ollama:MODEL`, `anthropic:MODEL`).
    pub llm: Option<String>,
    /// The model for decompose and synthesize.
    pub llm_strong: Option<String>,
    /// The model for every other task.
    pub llm_cheap: Option<String>,
    /// Base URL of an OpenAI-compatible or Anthropic server.
    pub llm_base_url: Option<String>,
    /// Price every call as if this model had answered.
    pub price_as: Option<String>,
    /// Simulated offline-model latency, e.g. "200ms" or "800ms+60tok/s".
    pub offline_latency: Option<String>,
    /// Simulated latency per search call, e.g. "400ms" or "300ms..900ms".
    pub search_latency: Option<String>,
    /// Simulated latency per fetch call, e.g. "600ms" or "200ms..1500ms".
    pub fetch_latency: Option<String>,
    /// Seed of the simulated latency draws.
    pub latency_seed: Option<u64>,
    /// Folder of prompt overrides.
    pub prompts: Option<String>,
    /// Rate limits, retries and timeouts of remote models.
    pub limits: Option<LlmLimits>,
    /// Extra or overriding prices, USD per million tokens.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// Fleet mode: the PostgreSQL URL of the shared queue and state (as `--db`).
    pub db: Option<String>,
}

/// Limits and timeouts of one provider. Defaults are polite; all are configurable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmLimits {
    pub requests_per_minute: u32,
    pub tokens_per_minute: u32,
    pub concurrency: usize,
    pub max_retries: usize,
    /// Total time per request, seconds.
    pub timeout_s: f64,
    /// Time to connect, seconds.
    pub connect_timeout_s: f64,
    /// Completion cap per call.
    pub max_tokens: u32,
    /// The window `requests_per_minute` and `tokens_per_minute` are counted over,
    /// seconds (`window_s`, default 60; 0.1–3600: a provider with per-second limits, or a
    /// test that must not wait a minute).
    #[serde(rename = "window_s", with = "window_seconds")]
    pub window: Duration,
}

/// `window_s` as seconds, refused outside 0.1–3600.
mod window_seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(window: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(window.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        let seconds = f64::deserialize(deserializer)?;
        if seconds.is_finite() && (0.1..=3600.0).contains(&seconds) {
            Ok(Duration::from_secs_f64(seconds))
        } else {
            Err(serde::de::Error::custom(format!(
                "window_s = {seconds} is out of range; use 0.1–3600 seconds"
            )))
        }
    }
}

impl Default for LlmLimits {
    fn default() -> Self {
        Self {
            requests_per_minute: 60,
            tokens_per_minute: 200_000,
            concurrency: 4,
            max_retries: 4,
            timeout_s: 120.0,
            connect_timeout_s: 10.0,
            max_tokens: 1024,
            window: Duration::from_secs(60),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cached: Option<f64>,
}

/// Parse a config file's text. The error is one line naming what was wrong and the
/// keys the file may hold.
pub fn parse(text: &str) -> Result<FileConfig, String> {
    toml::from_str(text).map_err(|e| {
        let first = e.to_string().lines().next().unwrap_or("").to_string();
        let why = e.message().lines().next().unwrap_or("").to_string();
        format!("{first}: {why} (keys: {KEYS})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_and_strategy_are_typed_by_their_names() {
        let config = parse("depth = \"deep\"\nstrategy = \"per-claim\"\n").unwrap_or_default();
        assert_eq!(config.depth, Some(Depth::Deep));
        assert_eq!(config.strategy, Some(Strategy::PerClaim));
        assert_eq!(config.reading, None);
        let ranked = parse("reading = \"ranked\"").unwrap_or_default();
        assert_eq!(ranked.reading, Some(Reading::Ranked));
        let refused = parse("reading = \"skim\"").err().unwrap_or_default();
        assert!(refused.contains("`ranked` or `documents`"), "{refused}");
        for (name, _) in Reading::VALUES {
            assert_eq!(Reading::from_name(name).map(Reading::as_str), Some(name));
        }
        assert_eq!(Depth::Deep.limits().extra_rounds, 3);
        assert!(Depth::Quick.limits().max_subquestions < Depth::Standard.limits().max_subquestions);
        let refused = parse("depth = \"fast\"").err().unwrap_or_default();
        assert!(refused.contains("`quick`, `standard`, `deep`"), "{refused}");
    }

    #[test]
    fn parses_the_documented_keys_and_refuses_others() {
        let config = parse(
            "llm = \"offline\"\nio_concurrency = 2\n[limits]\nmax_retries = 0\n[prices.\"m\"]\ninput = 1.0\noutput = 2.0\n",
        )
        .unwrap_or_default();
        assert_eq!(config.llm.as_deref(), Some("offline"));
        assert_eq!(config.io_concurrency, Some(2));
        let windowed =
            parse("db = \"postgres://h/d\"\n[limits]\nwindow_s = 5\n").unwrap_or_default();
        assert_eq!(windowed.db.as_deref(), Some("postgres://h/d"));
        assert_eq!(
            windowed.limits.map(|l| l.window),
            Some(Duration::from_secs(5))
        );
        let refused = parse("[limits]\nwindow_s = 0\n").err().unwrap_or_default();
        assert!(
            refused.contains("window_s = 0 is out of range"),
            "{refused}"
        );
        assert_eq!(config.limits.map(|l| l.max_retries), Some(0));
        assert_eq!(config.prices.get("m").map(|p| p.output), Some(2.0));
        for bad in [
            "lmm = 1",
            "concurrency = \"five\"",
            "[limits]\nretries = 1",
            "= =",
            "[prices.m]\ninput = 1",
            "depth = \"fast\"",
            "strategy = \"per_claim\"",
        ] {
            let error = parse(bad).err().unwrap_or_default();
            assert!(
                error.contains("keys:") && !error.contains('\n'),
                "{bad:?}: {error}"
            );
        }
    }
}
