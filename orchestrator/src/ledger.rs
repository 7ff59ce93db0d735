//! The usage ledger: one entry per provider call, summed into the report's `usage`.

use std::sync::Mutex;

use deepr_evidence::report::{Usage, UsageTotals};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub node: String,
    pub stage: String,
    /// `llm`, `search` or `fetch`.
    pub kind: String,
    pub provider: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    pub latency_ms: u64,
    /// True when the answer came from the response cache and cost nothing.
    pub cache_hit: bool,
    /// True when the call was made in an earlier session and its node was restored
    /// from a checkpoint (it counts in the run's usage, not in this session's spend).
    #[serde(default)]
    pub restored: bool,
    /// True when the tokens were counted locally because the server reported none.
    #[serde(default)]
    pub estimated: bool,
    /// `ok`, or why the call failed / degraded.
    pub status: String,
    /// Set when the call produced nothing the run can keep (a budget refusal, a
    /// provider that refused the key or stayed unreachable): the node that made it is
    /// not checkpointed, and the executor stops starting nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished: Option<Unfinished>,
}

/// Why a call left its node unfinished. The run stops, keeps its state, and a resume
/// makes the call again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Unfinished {
    /// The run's budget refused to start the call.
    Budget { reason: String },
    /// The provider refused the credentials (HTTP 401/403).
    AuthFailed { provider: String, message: String },
    /// The provider could not be reached, or kept failing past its retries (timeouts,
    /// 5xx, 429 past the wait, connection refused) — or, for search, every source of
    /// a step failed.
    ProviderUnavailable { provider: String, message: String },
}

impl Unfinished {
    /// Which of several stops a run reports: auth first (nothing works until the key
    /// is fixed), then an unavailable provider, then the budget.
    pub fn rank(&self) -> u8 {
        match self {
            Self::AuthFailed { .. } => 0,
            Self::ProviderUnavailable { .. } => 1,
            Self::Budget { .. } => 2,
        }
    }
}

impl std::fmt::Display for Unfinished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Budget { reason } => write!(f, "{reason}"),
            Self::AuthFailed { provider, message } => {
                write!(f, "{provider} refused the credentials: {message}")
            }
            Self::ProviderUnavailable { provider, message } => {
                write!(f, "{provider} is unavailable: {message}")
            }
        }
    }
}

impl LedgerEntry {
    /// An entry for a search or fetch call (no tokens, no cost).
    pub fn io_call(
        node: &str,
        stage: &str,
        kind: &str,
        provider: String,
        latency_ms: u64,
        status: &str,
    ) -> Self {
        Self {
            node: node.to_string(),
            stage: stage.to_string(),
            kind: kind.to_string(),
            provider,
            prompt_tokens: 0,
            completion_tokens: 0,
            cached_tokens: 0,
            cost_usd: 0.0,
            latency_ms,
            cache_hit: false,
            restored: false,
            estimated: false,
            status: status.to_string(),
            unfinished: None,
        }
    }
}

/// Thread-safe accumulator of ledger entries for one run.
#[derive(Default, Debug)]
pub struct UsageLedger {
    entries: Mutex<Vec<LedgerEntry>>,
}

impl UsageLedger {
    /// Calls served from the response cache.
    pub fn cache_hits(&self) -> usize {
        self.entries
            .lock()
            .map(|e| e.iter().filter(|e| e.cache_hit).count())
            .unwrap_or(0)
    }

    pub fn record(&self, entry: LedgerEntry) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.push(entry);
        }
    }

    /// All entries, sorted by (node, stage, kind) so output never depends on timing.
    pub fn entries(&self) -> Vec<LedgerEntry> {
        let mut entries = self.entries.lock().map(|e| e.clone()).unwrap_or_default();
        entries.sort_by(|a, b| (&a.node, &a.stage, &a.kind).cmp(&(&b.node, &b.stage, &b.kind)));
        entries
    }

    /// Tokens spent in this session (cache hits and restored nodes excluded).
    pub fn live_tokens(&self) -> u64 {
        self.entries
            .lock()
            .map(|e| {
                e.iter()
                    .filter(|e| !e.cache_hit && !e.restored)
                    .map(|e| e.prompt_tokens + e.completion_tokens)
                    .sum()
            })
            .unwrap_or(0)
    }

    /// LLM usage totals for the report: every model call the run's answer rests on,
    /// whether it ran in this session or was restored from a checkpoint. Cache hits cost
    /// nothing and are not counted.
    pub fn usage(&self) -> Usage {
        let calls = self
            .entries()
            .into_iter()
            .filter(|e| e.kind == "llm" && !e.cache_hit)
            .map(|entry| {
                let call = UsageTotals {
                    calls: 1,
                    prompt_tokens: entry.prompt_tokens,
                    completion_tokens: entry.completion_tokens,
                    cached_tokens: entry.cached_tokens,
                    cost_usd: entry.cost_usd,
                };
                (entry.stage, call)
            });
        Usage::of_calls(calls)
    }
}
