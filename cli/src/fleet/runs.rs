//! `deepr runs list|show|rm|export|follow --db URL`: the fleet's runs.

use deepr_session::ExitStatus;
use std::path::Path;

use deepr_fleet::RunRow;

use super::{connect, failure, FleetJob};
use crate::{usage, Failure, RunsCommand};

fn topic(row: &RunRow) -> String {
    serde_json::from_value::<FleetJob>(row.record.clone())
        .map(|job| job.record.topic)
        .unwrap_or_else(|_| "(record unreadable)".into())
}

fn age(seconds: f64) -> String {
    crate::record::age(crate::record::now_secs().saturating_sub(seconds.max(0.0) as u64))
}

pub fn execute(url: &str, command: &RunsCommand, quiet: bool) -> Result<ExitStatus, Failure> {
    super::runtime()?.block_on(async {
        let fleet = connect(url).await?;
        match command {
            RunsCommand::List => {
                let tokens = fleet.tokens_by_run().await.map_err(failure)?;
                outln!(
                    "{:<28} {:<44} {:>9} {:>5}  TOPIC",
                    "RUN",
                    "STATE",
                    "TOKENS",
                    "AGE"
                );
                for row in fleet.runs().await.map_err(failure)? {
                    let topic: String = topic(&row).chars().take(60).collect();
                    outln!(
                        "{:<28} {:<44} {:>9} {:>5}  {topic}",
                        row.run_id,
                        row.describe(),
                        tokens.get(&row.run_id).copied().unwrap_or(0),
                        age(row.now - row.submitted)
                    );
                }
                Ok(ExitStatus::Success)
            }
            RunsCommand::Show { run_id } => {
                let row = fleet.run(run_id).await.map_err(failure)?;
                let steps = fleet.node_count(run_id).await.map_err(failure)?;
                let calls = deepr_fleet::answers::calls(&fleet.pool, run_id)
                    .await
                    .map_err(|e| failure(e.into()))?;
                let live = calls.iter().filter(|c| !c.cache_hit).count();
                let spent: u64 = calls
                    .iter()
                    .filter(|c| !c.cache_hit)
                    .map(|c| c.prompt_tokens + c.completion_tokens)
                    .sum();
                outln!("run:       {run_id}");
                outln!("topic:     {}", topic(&row));
                outln!("state:     {}", row.describe());
                outln!("claims:    {}", row.attempts);
                outln!("steps:     {steps} checkpointed");
                outln!(
                    "calls:     {live} paid ({spent} tokens), {} from the cache",
                    calls.len() - live
                );
                if let Ok(job) = serde_json::from_value::<FleetJob>(row.record.clone()) {
                    outln!(
                        "settings:  depth {}, strategy {}, models {} / {}",
                        job.record.depth.as_str(),
                        job.record.strategy.as_str(),
                        job.record.llm_strong,
                        job.record.llm_cheap
                    );
                    outln!("out:       {}", job.record.out.display());
                }
                outln!(
                    "reports:   {}",
                    if row.reports.is_empty() {
                        "none yet".to_string()
                    } else {
                        row.reports.join(", ")
                    }
                );
                Ok(ExitStatus::Success)
            }
            RunsCommand::Rm { run_id } => {
                fleet.remove(run_id).await.map_err(failure)?;
                if !quiet {
                    errln!("deepr: removed run {run_id} from the fleet database");
                }
                Ok(ExitStatus::Success)
            }
            RunsCommand::Export { run_id, out } => export(&fleet, run_id, out).await,
            RunsCommand::Follow { run_id } => super::follow(&fleet, run_id, None, quiet).await,
            RunsCommand::Search { query } => {
                let memories = fleet
                    .memories()
                    .await
                    .map_err(failure)?
                    .into_iter()
                    .filter_map(|m| serde_json::from_value(m).ok())
                    .collect();
                crate::console::print_found(&crate::memory::search_in(memories, query), query);
                Ok(ExitStatus::Success)
            }
        }
    })
}

/// `runs export RUN --db URL --out FILE`: the run's export bundle (report, sidecar and
/// the archived texts it cites), which `deepr verify FILE` checks anywhere.
async fn export(
    fleet: &deepr_fleet::Fleet,
    run_id: &str,
    out: &Path,
) -> Result<ExitStatus, Failure> {
    let reports = fleet.reports(run_id).await.map_err(failure)?;
    let bundle = reports
        .get("bundle")
        .and_then(|b| b.as_str())
        .ok_or_else(|| {
            usage(format!(
                "run {run_id} has no stored report yet; `deepr runs follow {run_id} --db URL` waits for it"
            ))
        })?;
    crate::export::write_bundle(out, bundle.as_bytes())?;
    errln!(
        "deepr: exported run {run_id} to {} ({} bytes)",
        out.display(),
        bundle.len()
    );
    Ok(ExitStatus::Success)
}
