//! The orchestrator: the research DAG's executor and everything stages share, with
//! no I/O of its own.
//!
//! * [`provider`] — the narrow traits through which stages reach the world: LLM,
//!   search, fetch, the text archive, the clock. Tests swap them for fakes.
//! * [`store`] — the checkpoint-store trait (sled per run in `deepr-checkpoints`,
//!   PostgreSQL for the fleet in `deepr-fleet`).
//! * [`executor`] — runs a petgraph DAG of nodes concurrently, checkpointing each
//!   node's output under a key that chains its inputs, and merging results by node ID.
//! * [`budget`] — token, dollar and time limits, and the LLM wrapper that enforces them.
//! * [`ledger`] — one entry per provider call: stage, tokens, cost, latency, cache hit.
//! * [`tokens`] — the o200k tokenizer used to count tokens for every model, including
//!   the offline one, so token figures mean something without a key.
//! * [`simulate`] — simulated latencies (fixed, uniform or normal, drawn by call
//!   identity) for the offline model, search and fetch: orchestration benchmarks
//!   without a network.
//! * [`bound`] — the honest lower bound on a run's wall time (calls that can run
//!   together count once).
//! * [`rate`] — the trait of a rate limit shared by every worker of a fleet.

pub mod bound;
pub mod budget;
pub mod clock;
pub mod dag;
pub mod error;
pub mod executor;
pub mod ledger;
pub mod preview;
pub mod provider;
pub mod rate;
mod schedule;
pub mod simulate;
pub mod store;
pub mod tokens;

pub use budget::{Budget, BudgetedLlm};
pub use executor::{
    Executor, ExecutorError, NodeContext, NodeFn, NodeSpec, PreviewAction, PreviewStep, Progress,
    StopReason,
};
pub use ledger::{LedgerEntry, Unfinished, UsageLedger};
pub use provider::*;
pub use rate::SharedRateGate;
pub use store::{CheckpointStore, NodeRecord, StoreError};
