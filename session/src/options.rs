//! What a session is asked to do: which run ([`Start`]) and how this session runs it
//! ([`SessionOptions`]: output, parallelism, budgets, dry run, who stops it and who
//! hears its progress).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::record::RunRecord;

/// How this session runs (what may differ between sessions of one run).
pub struct SessionOptions {
    /// `None`: the run's own setting.
    pub concurrency: Option<usize>,
    /// Overrides the run's `io_concurrency` for this session.
    pub io_concurrency: Option<usize>,
    /// Recompute nodes whose model answer degraded to the heuristic (and what follows).
    pub retry_degraded: bool,
    pub max_tokens: Option<u64>,
    pub max_cost: Option<f64>,
    pub max_time: Option<Duration>,
    /// Resume only: print the plan and stop.
    pub dry_run: bool,
    /// Lines to show once the run has started (the estimate, budget warnings).
    pub notices: Vec<String>,
    /// `None`: Ctrl-C/SIGTERM stop the run. `Some`: the front end owns the signals and
    /// stops the run by setting this flag (it then ends as interrupted, code 130).
    pub stop: Option<Arc<AtomicBool>>,
    /// Who hears the session's progress events (the objects `--json` prints); `None`:
    /// no one.
    pub events: Option<EventSink>,
}

/// A receiver of a session's progress events (the objects `--json` prints).
pub type EventSink = Arc<dyn Fn(&serde_json::Value) + Send + Sync>;

/// A line for the user, said where the front end says things (the command line:
/// stderr). For the library crates that run long (the worker, the MCP server).
pub type Say = Arc<dyn Fn(&str) + Send + Sync>;

impl SessionOptions {
    /// A session no one watches (a bench cell, a fleet worker's run): no events, the
    /// run's own settings, these budgets.
    pub fn unattended(
        max_tokens: Option<u64>,
        max_cost: Option<f64>,
        max_time: Option<Duration>,
    ) -> Self {
        Self {
            concurrency: None,
            io_concurrency: None,
            retry_degraded: false,
            max_tokens,
            max_cost,
            max_time,
            dry_run: false,
            notices: Vec::new(),
            stop: None,
            events: None,
        }
    }
}

/// Which run a session works on.
pub enum Start {
    /// A new run: its record is written before anything else.
    New(Box<RunRecord>),
    /// An existing run: its record is read from its store.
    Resume(String),
}
