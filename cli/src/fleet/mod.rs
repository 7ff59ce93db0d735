//! Fleet mode in the command line: one database URL (`--db`, `DEEPR_DB`, or `db` in
//! `deepr.toml`) sends runs to a PostgreSQL-backed queue that `deepr worker`s on any
//! number of machines execute (`deepr-fleet` holds the queue and the shared stores).
//!
//! * this file: the URL, connecting (migrating on first use), `deepr db migrate`,
//!   submitting a run (`deepr run --db`) and following it to its end;
//! * [`worker`]: `deepr worker` — claim, run with the shared checkpoints, keep the
//!   lease, settle;
//! * [`runs`]: `deepr runs list|show|rm|export|follow|search --db`;
//! * `heartbeat`: a claim's lease, kept while its run works; `settled`: what a finished
//!   run leaves (reports, bundle, memory, the copy at its `--out`).

pub mod runs;

use deepr_session::{ExitStatus, Signal};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use deepr_fleet::Fleet;

use crate::{usage, Failure, Globals};

pub use crate::record::FleetJob;

pub use deepr_session::request::{db_url, db_url_in};

/// The URL, or a usage error naming how to give one.
pub fn require_db(globals: &Globals, command: &str) -> Result<String, Failure> {
    db_url(globals)?.ok_or_else(|| {
        usage(format!(
            "{command} needs the fleet database: pass --db postgres://… or set DEEPR_DB"
        ))
    })
}

pub use deepr_worker::connection::{connect, failure, runtime};

/// `deepr worker`'s flags (see `deepr_worker::WorkerOptions`).
#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    /// Runs this worker executes at once (1–16).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub concurrency: usize,
    /// Seconds a claim holds a run without a heartbeat before another worker may take it
    /// over (5–3600).
    #[arg(long, default_value_t = deepr_worker::LEASE_SECS, value_name = "SECS")]
    pub lease: u64,
    /// Claims after which a run that never settles is parked with its last error.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub max_attempts: u32,
    /// Exit once the queue has nothing visible and no run is held (batch jobs, tests).
    #[arg(long)]
    pub exit_when_idle: bool,
}

/// `deepr worker --db URL`: serve the fleet (`deepr-worker`).
pub fn work(globals: &Globals, args: &WorkerArgs) -> Result<ExitStatus, Failure> {
    let url = require_db(globals, "deepr worker")?;
    let state_dir = crate::state::resolve(globals.state_dir.as_deref())?;
    let options = deepr_worker::WorkerOptions {
        concurrency: args.concurrency,
        lease: args.lease,
        max_attempts: args.max_attempts,
        exit_when_idle: args.exit_when_idle,
    };
    let voice = deepr_worker::Voice {
        quiet: globals.quiet,
        say: crate::console::say(),
    };
    deepr_worker::execute(&url, &state_dir, &options, voice)
}

/// `deepr db migrate`.
pub fn migrate(globals: &Globals) -> Result<ExitStatus, Failure> {
    let url = require_db(globals, "deepr db migrate")?;
    runtime()?.block_on(async {
        let fleet = Fleet::connect(&url).await.map_err(failure)?;
        fleet.migrate().await.map_err(failure)?;
        if !globals.quiet {
            errln!(
                "deepr: {} is ready (pgmq queue and deepr schema)",
                fleet.shown
            );
        }
        Ok(ExitStatus::Success)
    })
}

/// `deepr run --db`: queue the run; with `detach`, print its id and return, else
/// follow it to its end and write its reports to its `--out`.
pub fn submit(url: &str, job: FleetJob, detach: bool, quiet: bool) -> Result<ExitStatus, Failure> {
    runtime()?.block_on(async {
        let fleet = connect(url).await?;
        let run_id = job.record.run_id.clone();
        let value = serde_json::to_value(&job).context("cannot serialise the run record")?;
        fleet.submit(&run_id, &value).await.map_err(failure)?;
        if detach {
            outln!("{run_id}");
            if !quiet {
                errln!(
                    "deepr: queued run {run_id} in {}; follow it with: deepr runs follow {run_id} --db URL",
                    fleet.shown
                );
            }
            return Ok(ExitStatus::Success);
        }
        if !quiet {
            errln!("deepr: queued run {run_id} in {} — {}", fleet.shown, job.record.topic);
        }
        follow(&fleet, &run_id, Some(&job.record.out), quiet).await
    })
}

/// `deepr resume RUN_ID --db`: queue a settled run again, with any budgets given
/// replacing its own, and follow it like `run --db`.
pub fn resume(
    url: &str,
    run_id: &str,
    budget: &crate::Budget,
    max_time: Option<Duration>,
    quiet: bool,
) -> Result<ExitStatus, Failure> {
    runtime()?.block_on(async {
        let fleet = connect(url).await?;
        let row = fleet.run(run_id).await.map_err(failure)?;
        let mut job: FleetJob = serde_json::from_value(row.record).map_err(|e| {
            Failure::Run(anyhow::anyhow!(
                "run {run_id}'s record is from another deepr version or damaged ({e})"
            ))
        })?;
        job.max_tokens = budget.max_tokens.or(job.max_tokens);
        job.max_cost = budget.max_cost.or(job.max_cost);
        job.max_time_secs = max_time.map(|t| t.as_secs_f64()).or(job.max_time_secs);
        let value = serde_json::to_value(&job).context("cannot serialise the run record")?;
        fleet.requeue(run_id, &value).await.map_err(failure)?;
        if !quiet {
            errln!(
                "deepr: queued run {run_id} again in {}; its checkpoints are kept",
                fleet.shown
            );
        }
        follow(&fleet, run_id, Some(&job.record.out), quiet).await
    })
}

/// Follow a fleet run until it settles, then write its reports beside `out` (when
/// given). Ctrl-C detaches: the run goes on in the fleet.
pub async fn follow(
    fleet: &Fleet,
    run_id: &str,
    out: Option<&Path>,
    quiet: bool,
) -> Result<ExitStatus, Failure> {
    let mut last_line = String::new();
    let mut last_shown = Instant::now();
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        let row = fleet.run(run_id).await.map_err(failure)?;
        let steps = fleet.node_count(run_id).await.map_err(failure)?;
        let line = format!("{} — {steps} steps done", row.describe());
        let changed = line.split(" for ").next() != last_line.split(" for ").next();
        if !quiet && (changed || last_shown.elapsed() > Duration::from_secs(10)) {
            errln!("deepr: run {run_id}: {line}");
            last_line = line;
            last_shown = Instant::now();
        }
        match row.state.as_str() {
            "finished" | "incomplete" => {
                if let Some(out) = out {
                    let reports = fleet.reports(run_id).await.map_err(failure)?;
                    let written = deepr_session::reports::write_stored_reports(&reports, out)?;
                    if !quiet {
                        errln!("deepr: wrote {written}");
                    }
                }
                return Ok(match row.state.as_str() {
                    "finished" => ExitStatus::Success,
                    // The fleet settles a run incomplete only by its budget (an outage
                    // is released to another attempt, and parks it in the end).
                    _ => ExitStatus::Budget,
                });
            }
            "failed" | "parked" => {
                let note = row.note.as_deref().unwrap_or_default();
                // Parked by an outage or refused credentials: the code a local run gives.
                if let Some(status) = deepr_worker::parked_status(note) {
                    errln!("deepr: run {run_id} {}", row.describe());
                    return Ok(status);
                }
                return Err(Failure::Run(anyhow::anyhow!(
                    "run {run_id} {}",
                    row.describe()
                )));
            }
            _ => {}
        }
        tokio::select! {
            _ = &mut interrupted => {
                errln!("\ndeepr: detached; run {run_id} goes on in the fleet. Follow it again with: deepr runs follow {run_id} --db URL");
                return Ok(ExitStatus::Interrupted(Signal::Interrupt));
            }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
    }
}
