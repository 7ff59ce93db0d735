//! What the MCP server asks of the front end that starts it (the `deepr` binary): to
//! read a `deepr run` command line exactly as the command would — the same parser,
//! validation, config file and run record — and to run `deepr verify`'s gate. Keeping
//! these behind a trait lets a run started through MCP be the run the CLI would start
//! (same record, same tokens) without this crate owning the command line.

use std::path::Path;

use deepr_session::record::{FleetJob, RunRecord};
use deepr_session::SessionOptions;
use serde_json::Value;

/// A run created in the local state dir, ready for its first session.
pub struct CreatedRun {
    pub record: RunRecord,
    pub options: SessionOptions,
}

/// What a refresh call comes to.
pub enum RefreshStart {
    Created(Box<CreatedRun>),
    /// Nothing changed since the earlier run (`if_changed`): why no run was created.
    Unchanged(String),
}

/// The front end's half of the server. Errors are one line for the agent.
pub trait Host: Send + Sync + 'static {
    /// Validates `deepr run ARGS…` (`line` without the program and command) and creates
    /// the run in the server's state dir.
    fn create_run(&self, line: &[String]) -> Result<CreatedRun, String>;

    /// Validates `deepr ask ARGS…` and creates the follow-up run in the state dir.
    fn create_follow_up(&self, line: &[String]) -> Result<CreatedRun, String>;

    /// Validates `deepr refresh ARGS…` and creates the refresh run — or, with
    /// `--if-changed` and no source changed, says so and creates nothing.
    fn create_refresh(&self, line: &[String]) -> Result<RefreshStart, String>;

    /// Validates `deepr run ARGS…` for the fleet: the queue's job (record and budgets).
    fn fleet_job(&self, line: &[String]) -> Result<FleetJob, String>;

    /// `deepr run --estimate ARGS…`: calls, tokens and dollars with the server's model.
    fn estimate(&self, line: &[String]) -> Result<Value, String>;

    /// `deepr verify`'s gate on a report (.md/.json) or export bundle.
    fn verify(&self, path: &Path, state_dir: Option<&Path>) -> Result<Value, String>;
}
