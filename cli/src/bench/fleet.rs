//! `deepr bench --db`: every topic × strategy cell queued in the fleet, executed by
//! `deepr worker`s, then measured here like a local cell.
//!
//! A cell's fleet run id is `bench-<hash of the bench folder>-<cell>`, so running the
//! same bench again continues it: cells already queued are not queued twice, finished
//! ones are read back. Each finished cell's report, sidecar and the archived texts it
//! cites (its export bundle) are fetched into the bench folder, and its row is measured
//! from them; its wall time is the last claim's, as the fleet recorded it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use deepr_checkpoints::FileArchive;
use deepr_evidence::report::Report;
use deepr_fleet::FleetError;

use super::measure;
use crate::fleet::{connect, failure, FleetJob};
use crate::record::RunRecord;
use crate::{Failure, Globals};

/// One cell: its local id (`t01-linear`) and its record.
pub struct Cell {
    pub run_id: String,
    pub record: RunRecord,
}

/// Queue every cell that has no row yet, wait until all are settled, and write the rows
/// of the finished ones. Cells that failed or were parked are listed in the error.
pub fn run_cells(
    url: &str,
    globals: &Globals,
    cells: Vec<Cell>,
    state_dir: &Path,
    out_dir: &Path,
) -> Result<(), Failure> {
    let prefix = format!(
        "bench-{}",
        &blake3::hash(out_dir.to_string_lossy().as_bytes()).to_hex()[..8]
    );
    crate::fleet::runtime()?.block_on(async {
        let fleet = connect(url).await?;
        let mut waiting: BTreeMap<String, String> = BTreeMap::new();
        for cell in cells {
            if out_dir.join("rows").join(format!("{}.json", cell.run_id)).exists() {
                continue;
            }
            let fleet_id = format!("{prefix}-{}", cell.run_id);
            let job = FleetJob {
                record: RunRecord {
                    run_id: fleet_id.clone(),
                    ..cell.record
                },
                max_tokens: None,
                max_cost: None,
                max_time_secs: None,
            };
            let value = serde_json::to_value(&job).map_err(|e| Failure::Run(e.into()))?;
            match fleet.submit(&fleet_id, &value).await {
                Ok(()) | Err(FleetError::RunExists(_)) => {}
                Err(error) => return Err(failure(error)),
            }
            waiting.insert(fleet_id, cell.run_id);
        }
        if !globals.quiet {
            errln!(
                "deepr bench: {} cell(s) queued in {} as {prefix}-…; start `deepr worker`s to run them",
                waiting.len(),
                fleet.shown
            );
        }
        let mut failures = Vec::new();
        let mut last_said = Instant::now();
        while !waiting.is_empty() {
            for row in fleet.runs().await.map_err(failure)? {
                let Some(run_id) = waiting.get(&row.run_id).cloned() else {
                    continue;
                };
                match row.state.as_str() {
                    "finished" => {
                        let reports = fleet.reports(&row.run_id).await.map_err(failure)?;
                        let wall_s = (row.updated - row.claimed.unwrap_or(row.updated)).max(0.0);
                        write_cell(&reports, state_dir, out_dir, &run_id, wall_s)?;
                        waiting.remove(&row.run_id);
                    }
                    "incomplete" | "failed" | "parked" => {
                        failures.push(format!("{run_id}: {}", row.describe()));
                        waiting.remove(&row.run_id);
                    }
                    _ => {}
                }
            }
            if !globals.quiet && last_said.elapsed() > Duration::from_secs(10) {
                errln!("deepr bench: {} cell(s) still queued or running", waiting.len());
                last_said = Instant::now();
            }
            if !waiting.is_empty() {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Failure::Run(anyhow::anyhow!(
                "{} bench run(s) did not finish: {}",
                failures.len(),
                failures.join("; ")
            )))
        }
    })
}

/// A finished cell's report and sidecar into `reports/`, its cited texts into the bench's
/// archive, and its row into `rows/`.
fn write_cell(
    reports: &serde_json::Value,
    state_dir: &Path,
    out_dir: &Path,
    run_id: &str,
    wall_s: f64,
) -> Result<(), Failure> {
    let report_path = out_dir.join("reports").join(format!("{run_id}.md"));
    deepr_session::reports::write_stored_reports(reports, &report_path)?;
    let archive = FileArchive::open(state_dir).map_err(|e| Failure::Run(e.into()))?;
    if let Some(bundle) = reports.get("bundle").and_then(|b| b.as_str()) {
        let bundle: serde_json::Value =
            serde_json::from_str(bundle).map_err(|e| Failure::Run(e.into()))?;
        if let Some(texts) = bundle.get("texts").and_then(|t| t.as_object()) {
            for text in texts.values().filter_map(|t| t.as_str()) {
                archive.put(text).map_err(|e| Failure::Run(e.into()))?;
            }
        }
    }
    let report: Report = serde_json::from_slice(
        &std::fs::read(report_path.with_extension("json")).map_err(|e| Failure::Run(e.into()))?,
    )
    .map_err(|e| Failure::Run(e.into()))?;
    let row = measure(&report, &archive, run_id, wall_s);
    crate::util::write_atomically(
        &out_dir.join("rows").join(format!("{run_id}.json")),
        &serde_json::to_vec_pretty(&row).map_err(|e| Failure::Run(e.into()))?,
    )?;
    Ok(())
}
