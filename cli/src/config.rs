//! Configuration: `deepr.toml` (the XDG config dir, or `--config PATH`), environment
//! variables and flags. Precedence: flags > environment > file > defaults. Unknown keys
//! are an error, so a typo never silently does nothing. API keys come only from the
//! environment and are never printed (`deepr config show` redacts them).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use deepr_providers::llm::LlmLimits;
use deepr_providers::prices::Price;
use serde::{Deserialize, Serialize};

use crate::{usage, Failure};

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub depth: Option<String>,
    pub strategy: Option<String>,
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
}

const KEYS: &str = "depth, strategy, concurrency, io_concurrency, llm, llm_strong, llm_cheap, llm_base_url, price_as, offline_latency, search_latency, fetch_latency, latency_seed, prompts, [limits], [prices.MODEL]";

/// The config file in use: `--config PATH`, else `$XDG_CONFIG_HOME/deepr/deepr.toml`
/// (or `~/.config/deepr/deepr.toml`) if it exists.
pub fn path(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_path_buf());
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    let default = base.join("deepr").join("deepr.toml");
    default.exists().then_some(default)
}

pub fn load(flag: Option<&Path>) -> Result<FileConfig, Failure> {
    let Some(path) = path(flag) else {
        return Ok(FileConfig::default());
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        usage(format!(
            "cannot read config file {}: {e}; check the --config path",
            path.display()
        ))
    })?;
    toml::from_str(&text).map_err(|e| {
        let first = e.to_string().lines().next().unwrap_or("").to_string();
        usage(format!(
            "config file {} is invalid: {first} (keys: {KEYS})",
            path.display()
        ))
    })
}

/// Environment variables deepr reads.
pub const ENV_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "DEEPR_STATE_DIR",
];

fn is_secret(name: &str) -> bool {
    name.ends_with("_KEY")
}

/// `deepr config show`: the resolved settings, secrets redacted.
pub fn show(flag: Option<&Path>, state_dir: Option<&Path>) -> Result<u8, Failure> {
    let file = load(flag)?;
    println!(
        "# config file: {}",
        path(flag)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "(none)".into())
    );
    println!(
        "# state dir: {}",
        crate::state::resolve(state_dir)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "(unresolved)".into())
    );
    for name in ENV_VARS {
        let value = match std::env::var(name) {
            Ok(v) if is_secret(name) && !v.is_empty() => "set (redacted)".to_string(),
            Ok(v) => v,
            Err(_) => "(not set)".to_string(),
        };
        println!("# env {name}: {value}");
    }
    let limits = file.limits.clone().unwrap_or_default();
    let resolved = FileConfig {
        depth: Some(file.depth.clone().unwrap_or_else(|| "standard".into())),
        strategy: Some(file.strategy.clone().unwrap_or_else(|| "linear".into())),
        concurrency: Some(file.concurrency.unwrap_or(5)),
        io_concurrency: Some(
            file.io_concurrency
                .unwrap_or(deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY),
        ),
        llm: file.llm.clone().or_else(|| Some("offline".into())),
        limits: Some(limits),
        ..file
    };
    let text = toml::to_string_pretty(&resolved).map_err(|e| Failure::Run(e.into()))?;
    print!("{text}");
    Ok(0)
}
