//! What every call of the MCP server shares: the state dir and config runs are created
//! with, the policy agents are held to, and the runs this server executes.

use std::path::PathBuf;

use std::sync::Arc;

use crate::active::ActiveRuns;
use crate::host::Host;
use crate::policy::Policy;

pub struct Shared {
    pub state_dir: PathBuf,
    /// What every run this server creates shares: its state dir, its config file, its
    /// fleet database, quiet (the server owns stdout).
    pub globals: deepr_session::request::Globals,
    /// Where the server says what it does.
    pub say: deepr_session::options::Say,
    pub policy: Policy,
    pub runs: ActiveRuns,
    /// The fleet database's URL: runs are queued for workers instead of run here.
    pub fleet: Option<String>,
    /// The connection to it, made on first use.
    pub fleet_db: tokio::sync::OnceCell<deepr_fleet::Fleet>,
    /// The front end: the verify gate.
    pub host: Arc<dyn Host>,
}
