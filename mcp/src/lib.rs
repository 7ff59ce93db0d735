//! `deepr mcp`, as a library: deep research as tools for agents over the Model Context Protocol —
//! on stdio (protocol on stdout only, logs on stderr) or streamable HTTP on loopback
//! with a bearer token ([`http`]).
//!
//! * [`host`]: what the front end provides (the verification gate).
//! * [`tools`]: the tool list and checked argument reading.
//! * [`actions`]: research, resume, status, cancel — runs executed by sessions of the
//!   session library, one thread each ([`active`]).
//! * [`views`]: reports, sources, verification, estimates, research memory, and the
//!   reports as resources.
//! * [`policy`]: allowed roots and budget caps an agent cannot widen.
//! * [`server`]: the rmcp handler.
//!
//! A run started here is an ordinary run of the state dir: if the server dies, a new
//! one (or `deepr resume`) continues it from its checkpoints.

mod actions;
mod active;
mod fleet;
pub mod host;
mod http;
mod later;
mod policy;
mod server;
mod shared;
mod tools;
mod views;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;

use deepr_session::{usage, Failure};

/// How long a stopping server waits for its runs to checkpoint.
const SHUTDOWN_PATIENCE: Duration = Duration::from_secs(30);

/// How the server runs: where, for whom, and within what limits.
pub struct ServeOptions {
    pub state_dir: PathBuf,
    /// Folders corpora and report paths must lie under (canonicalised here).
    pub roots: Vec<PathBuf>,
    pub max_tokens_per_run: u64,
    pub max_cost_per_run: f64,
    /// `--http`: PORT or HOST:PORT; `None`: stdio.
    pub http: Option<String>,
    /// `--bind`: listen beyond loopback.
    pub bind: Option<String>,
    /// The fleet database's URL: runs are queued for workers.
    pub fleet: Option<String>,
    /// The config file runs are created with (`--config`; none: the XDG one, if any).
    pub config: Option<PathBuf>,
    /// Where the server says what it does (the command line: stderr; stdout is the
    /// protocol's).
    pub say: deepr_session::options::Say,
}

/// Serves MCP until the client leaves (stdio) or a signal comes; then stops this
/// server's runs at a checkpoint.
pub fn serve(options: ServeOptions, host: Arc<dyn host::Host>) -> Result<(), Failure> {
    let policy = policy::Policy::new(
        &options.roots,
        options.max_tokens_per_run,
        options.max_cost_per_run,
    )
    .map_err(usage)?;
    let listen = options
        .http
        .as_deref()
        .map(|addr| http::listen_address(addr, options.bind.as_deref()))
        .transpose()
        .map_err(usage)?;
    let token = match listen {
        Some(_) => Some(http::token_from_env().map_err(usage)?),
        None => None,
    };
    deepr_session::state::prepare(&options.state_dir)?;
    let globals = deepr_session::request::Globals {
        state_dir: Some(options.state_dir.clone()),
        quiet: true,
        config: options.config,
        db: options.fleet.clone(),
        events: None,
    };
    let shared = Arc::new(shared::Shared {
        state_dir: options.state_dir,
        globals,
        say: options.say,
        policy,
        runs: active::ActiveRuns::default(),
        fleet: options.fleet,
        fleet_db: tokio::sync::OnceCell::new(),
        host,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot start the async runtime: {e}")))?;
    let served = runtime.block_on(async {
        let handler = server::DeeprServer {
            shared: Arc::clone(&shared),
        };
        match (listen, token) {
            (Some(addr), Some(token)) => http::serve(handler, addr, token).await,
            _ => serve_stdio(handler).await,
        }
    });
    // The client went away or a signal came: runs stop at a checkpoint, resumable.
    shared.runs.stop_all(SHUTDOWN_PATIENCE);
    runtime.shutdown_timeout(Duration::from_secs(1));
    served
}

/// Serves one client on stdin/stdout until it closes them or a signal comes.
async fn serve_stdio(handler: server::DeeprServer) -> Result<(), Failure> {
    let say = std::sync::Arc::clone(&handler.shared.say);
    say(&format!(
        "deepr: MCP server on stdio (state dir {})",
        handler.shared.state_dir.display()
    ));
    let running = handler
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Failure::Run(anyhow::anyhow!("the MCP client did not initialise: {e}")))?;
    tokio::select! {
        ended = running.waiting() => {
            if let Err(e) = ended {
                say(&format!("deepr: MCP session ended with an error: {e}"));
            }
        }
        () = deepr_session::signals::first_signal() => say("deepr: stopping the MCP server; running steps checkpoint"),
    }
    Ok(())
}
