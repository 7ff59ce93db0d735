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

mod heartbeat;
pub mod runs;
mod settled;
pub mod worker;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use deepr_fleet::{Fleet, FleetError};
use serde::{Deserialize, Serialize};

use crate::record::RunRecord;
use crate::{usage, Failure, Globals};

/// What the queue carries for a run: its record and the budgets that hold for the whole
/// run across all its sessions (`max_time` holds per session). Never a secret.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FleetJob {
    pub record: RunRecord,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub max_cost: Option<f64>,
    #[serde(default)]
    pub max_time_secs: Option<f64>,
}

/// The fleet database URL: `--db`, else `DEEPR_DB`, else `db` in the config file.
pub fn db_url(globals: &Globals) -> Result<Option<String>, Failure> {
    if let Some(url) = globals.db.as_ref().filter(|u| !u.is_empty()) {
        return Ok(Some(url.clone()));
    }
    if let Some(url) = std::env::var("DEEPR_DB").ok().filter(|u| !u.is_empty()) {
        return Ok(Some(url));
    }
    Ok(crate::config::load(globals.config.as_deref())?.db)
}

/// The URL, or a usage error naming how to give one.
pub fn require_db(globals: &Globals, command: &str) -> Result<String, Failure> {
    db_url(globals)?.ok_or_else(|| {
        usage(format!(
            "{command} needs the fleet database: pass --db postgres://… or set DEEPR_DB"
        ))
    })
}

/// A fleet error as the command line reports it: bad input exits 2.
pub fn failure(error: FleetError) -> Failure {
    match error {
        FleetError::LeaseLost(_) | FleetError::Db(_) => Failure::Run(anyhow::Error::new(error)),
        other => usage(other.to_string()),
    }
}

pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?)
}

/// Connect and make sure the schema is this deepr's (installing it on first use).
pub async fn connect(url: &str) -> Result<Fleet, Failure> {
    let fleet = Fleet::connect(url).await.map_err(failure)?;
    fleet.ready().await.map_err(failure)?;
    Ok(fleet)
}

/// `deepr db migrate`.
pub fn migrate(globals: &Globals) -> Result<u8, Failure> {
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
        Ok(0)
    })
}

/// `deepr run --db`: queue the run; with `detach`, print its id and return, else
/// follow it to its end and write its reports to its `--out`.
pub fn submit(url: &str, job: FleetJob, detach: bool, quiet: bool) -> Result<u8, Failure> {
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
            return Ok(0);
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
    budget: &crate::BudgetArgs,
    max_time: Option<Duration>,
    quiet: bool,
) -> Result<u8, Failure> {
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
) -> Result<u8, Failure> {
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
                    let written = write_reports(&reports, out)?;
                    if !quiet {
                        errln!("deepr: wrote {written}");
                    }
                }
                return Ok(if row.state == "finished" { 0 } else { 4 });
            }
            "failed" | "parked" => {
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
                return Ok(130);
            }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
    }
}

/// Write a run's stored reports (extension → text) beside `out`, the markdown report
/// at `out` itself; the export bundle is not written. Returns the paths, joined.
pub fn write_reports(reports: &serde_json::Value, out: &Path) -> Result<String, Failure> {
    let files = reports
        .as_object()
        .ok_or_else(|| Failure::Run(anyhow::anyhow!("the stored reports are malformed")))?;
    let folder = out.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(folder) = folder {
        std::fs::create_dir_all(folder)
            .map_err(|e| usage(format!("cannot create {}: {e}", folder.display())))?;
    }
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("report");
    let mut written = Vec::new();
    for (extension, text) in files {
        // Stored by extension ("md", "json", "html", "bullets.md", …); the export
        // bundle stays in the database (`deepr runs export`).
        let Some(text) = text.as_str() else { continue };
        if extension == "bundle" || extension.contains('/') || extension.contains("..") {
            continue;
        }
        let name = format!("{stem}.{extension}");
        let path = match folder {
            Some(folder) => folder.join(name),
            None => std::path::PathBuf::from(name),
        };
        crate::util::write_atomically(&path, text.as_bytes())?;
        written.push(path.display().to_string());
    }
    written.sort();
    Ok(written.join(", "))
}
