//! What the MCP server asks of the front end that starts it (the `deepr` binary): to
//! run `deepr verify`'s gate, which lives with the command. Runs are created by the
//! session library's request ([`deepr_session::request`]), as the command creates them.

use std::path::Path;

use serde_json::Value;

/// The front end's half of the server. Errors are one line for the agent.
pub trait Host: Send + Sync + 'static {
    /// `deepr verify`'s gate on a report (.md/.json) or export bundle.
    fn verify(&self, path: &Path, state_dir: Option<&Path>) -> Result<Value, String>;
}
