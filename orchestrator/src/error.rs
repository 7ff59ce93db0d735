//! Why a phase did not finish: the executor's errors and its stop reasons.

use thiserror::Error;

use crate::ledger::Unfinished;
use crate::store::StoreError;

/// Why the executor stopped before every node finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The stop flag was set from outside (Ctrl-C, SIGTERM).
    Interrupted,
    /// A call could not be made or answered (budget, credentials, outage).
    Unfinished(Unfinished),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Interrupted => write!(f, "interrupted"),
            Self::Unfinished(why) => write!(f, "{why}"),
        }
    }
}

#[derive(Debug, Error)]
pub enum ExecutorError {
    #[error("node {node} depends on unknown node {dependency}")]
    UnknownDependency { node: String, dependency: String },
    #[error("duplicate node id {0}")]
    DuplicateNode(String),
    #[error("the graph has a cycle")]
    Cycle,
    #[error("node {node} failed: {message}")]
    Node { node: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("stopped before finishing: {0}")]
    Stopped(StopReason),
}
