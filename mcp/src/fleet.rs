//! `deepr mcp` on a fleet (`--db`, `DEEPR_DB` or `db` in the config file): `research`
//! queues the run for `deepr worker`s instead of running it here, and the run tools
//! read the fleet's run table and stored reports. `verify_report` checks the run's
//! stored export bundle, which carries the archived texts its quotes were cut from.

use std::time::Duration;

use deepr_fleet::Fleet;
use rmcp::model::JsonObject;
use serde_json::{json, Value};

use crate::actions::{research_call, ResearchCall};
use crate::actions::{resume_call, ResumeCall};
use crate::shared::Shared;
use crate::tools::Arguments;
use crate::views::{report_resources, report_view, sources_view, ReportTexts};

/// The states of a fleet run that will not change by themselves.
const SETTLED: &[&str] = &["finished", "incomplete", "failed", "parked"];

/// The server's connection to the fleet, made (and the schema checked) on first use
/// and shared by every call after.
async fn connect(shared: &Shared) -> Result<Fleet, String> {
    let url = shared
        .fleet
        .as_deref()
        .ok_or("this server has no fleet database")?;
    let fleet = shared
        .fleet_db
        .get_or_try_init(|| async {
            let fleet = Fleet::connect(url).await.map_err(|e| e.to_string())?;
            fleet.ready().await.map_err(|e| e.to_string())?;
            Ok::<_, String>(fleet)
        })
        .await?;
    Ok(fleet.clone())
}

/// `research` on a fleet: the run is validated like `deepr run --db … --detach` and
/// queued; returns its id and how long the call may wait.
pub async fn research(shared: &Shared, map: &JsonObject) -> Result<(String, f64), String> {
    let ResearchCall {
        run_id,
        request,
        wait_s,
    } = research_call(shared, map, crate::actions::Asked::Research)?;
    let job = match deepr_session::request::prepare_fleet(&shared.globals, &request)
        .map_err(crate::actions::tool_failure("research"))?
    {
        Some((_, job)) => job,
        None => {
            return Err(
                "research: no fleet database is configured any more; restart deepr mcp".into(),
            )
        }
    };
    let value =
        serde_json::to_value(&job).map_err(|e| format!("research: cannot queue the run ({e})"))?;
    let fleet = connect(shared).await?;
    fleet
        .submit(&run_id, &value)
        .await
        .map_err(|e| e.to_string())?;
    Ok((run_id, wait_s))
}

/// A fleet run's state as the run tools show it.
pub async fn status(shared: &Shared, run_id: &str) -> Result<Value, String> {
    let fleet = connect(shared).await?;
    let row = fleet
        .run(run_id)
        .await
        .map_err(|_| format!("no run {run_id} in the fleet; list_runs shows the runs"))?;
    let spent = fleet.tokens_by_run().await.unwrap_or_default();
    Ok(row_status(&fleet, &row, &spent).await)
}

/// What the run tools show of a run row; `spent`: tokens by run, read once per call.
async fn row_status(
    fleet: &Fleet,
    row: &deepr_fleet::RunRow,
    spent: &std::collections::BTreeMap<String, i64>,
) -> Value {
    let run_id = row.run_id.as_str();
    let steps = fleet.node_count(run_id).await.unwrap_or(0);
    let resumable = matches!(row.state.as_str(), "incomplete" | "failed" | "parked");
    json!({
        "run_id": run_id,
        "topic": row.record["record"]["topic"],
        "state": row.state,
        "detail": row.describe(),
        "resumable": resumable,
        "tokens_spent": spent.get(run_id).copied().unwrap_or(0),
        "progress": {"steps_finished": steps},
        "report": row.reports.iter().any(|r| r == "md").then(|| format!("deepr://runs/{run_id}/report.md")),
        "fleet": true,
    })
}

/// Whether a fleet run has settled, and its steps done.
pub async fn progress(shared: &Shared, run_id: &str) -> (bool, u64) {
    match status(shared, run_id).await {
        Ok(status) => (
            SETTLED.contains(&status["state"].as_str().unwrap_or("")),
            status["progress"]["steps_finished"].as_u64().unwrap_or(0),
        ),
        Err(_) => (true, 0),
    }
}

/// `list_runs` on a fleet.
pub async fn list_runs(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    Arguments::new("list_runs", map, &[])?;
    let fleet = connect(shared).await?;
    let rows = fleet.runs().await.map_err(|e| e.to_string())?;
    let spent = fleet.tokens_by_run().await.unwrap_or_default();
    let mut runs = Vec::new();
    for row in &rows {
        runs.push(row_status(&fleet, row, &spent).await);
    }
    Ok(json!({"summary": format!("{} run(s) in the fleet", runs.len()), "runs": runs}))
}

/// A settled fleet run's stored reports (extension → text).
async fn reports(
    shared: &Shared,
    tool: &str,
    run_id: &str,
) -> Result<serde_json::Map<String, Value>, String> {
    let fleet = connect(shared).await?;
    let row = fleet
        .run(run_id)
        .await
        .map_err(|_| format!("{tool}: no run {run_id} in the fleet; list_runs shows the runs"))?;
    let stored = fleet.reports(run_id).await.map_err(|e| e.to_string())?;
    match stored {
        Value::Object(files) if files.contains_key("md") => Ok(files),
        _ => Err(format!(
            "{tool}: run {run_id} has no report yet ({}); run_status shows how far it got",
            row.describe()
        )),
    }
}

fn texts(files: &serde_json::Map<String, Value>) -> ReportTexts {
    let text = |ext: &str| {
        files
            .get(ext)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    ReportTexts {
        markdown: text("md"),
        json: text("json"),
    }
}

/// `get_report` of a fleet run.
pub async fn get_report(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    let args = Arguments::new("get_report", map, &["run_id", "format", "section"])?;
    let run_id = args.run_id()?;
    let files = reports(shared, "get_report", run_id).await?;
    report_view(&args, run_id, &texts(&files))
}

/// `get_sources` of a fleet run.
pub async fn get_sources(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    let args = Arguments::new("get_sources", map, &["run_id"])?;
    let run_id = args.run_id()?;
    let files = reports(shared, "get_sources", run_id).await?;
    Ok(sources_view(run_id, &texts(&files).report("get_sources")?))
}

/// `verify_report` of a fleet run: its export bundle, written to a temporary file and
/// checked with no state dir (the bundle carries the archived texts).
pub async fn verify_run(shared: &Shared, run_id: &str) -> Result<Value, String> {
    let files = reports(shared, "verify_report", run_id).await?;
    let bundle = files
        .get("bundle")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            format!(
                "verify_report: run {run_id} has no stored export bundle; resume it to write one"
            )
        })?
        .to_string();
    let host = std::sync::Arc::clone(&shared.host);
    tokio::task::spawn_blocking(move || {
        let file = tempfile::Builder::new()
            .suffix(".json")
            .tempfile()
            .map_err(|e| format!("verify_report: cannot write a temporary file ({e})"))?;
        std::fs::write(file.path(), bundle)
            .map_err(|e| format!("verify_report: cannot write a temporary file ({e})"))?;
        host.verify(file.path(), None)
    })
    .await
    .unwrap_or_else(|_| Err("verify_report: the check failed unexpectedly; try again".into()))
}

/// `resume_run` on a fleet: the run is queued again with the call's budgets (capped).
pub async fn resume(shared: &Shared, map: &JsonObject) -> Result<(String, f64), String> {
    let ResumeCall {
        run_id,
        tokens,
        cost,
        max_time,
        wait_s,
    } = resume_call(shared, map)?;
    let fleet = connect(shared).await?;
    let row = fleet.run(&run_id).await.map_err(|_| {
        format!("resume_run: no run {run_id} in the fleet; list_runs shows the runs")
    })?;
    if matches!(row.state.as_str(), "queued" | "running") {
        return Err(format!(
            "resume_run: run {run_id} is {} in the fleet; follow it with run_status",
            row.state
        ));
    }
    let mut job: deepr_session::record::FleetJob =
        serde_json::from_value(row.record).map_err(|e| {
            format!(
                "resume_run: run {run_id}'s record is from another deepr version or damaged ({e})"
            )
        })?;
    job.max_tokens = Some(tokens);
    job.max_cost = Some(cost);
    job.max_time_secs = max_time.map(|t| t.as_secs_f64()).or(job.max_time_secs);
    let value = serde_json::to_value(&job)
        .map_err(|e| format!("resume_run: cannot queue the run ({e})"))?;
    fleet
        .requeue(&run_id, &value)
        .await
        .map_err(|e| e.to_string())?;
    Ok((run_id, wait_s))
}

/// Past fleet runs matching a query.
pub async fn memories(shared: &Shared) -> Result<Vec<deepr_session::memory::Memory>, String> {
    let fleet = connect(shared).await?;
    Ok(fleet
        .memories()
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter_map(|m| serde_json::from_value(m).ok())
        .collect())
}

/// The fleet runs with reports, as resources.
pub async fn resources(shared: &Shared) -> Vec<(String, String, &'static str)> {
    let Ok(fleet) = connect(shared).await else {
        return Vec::new();
    };
    let rows = fleet.runs().await.unwrap_or_default();
    rows.into_iter()
        .filter(|row| row.reports.iter().any(|r| r == "md"))
        .flat_map(|row| report_resources(row.run_id))
        .collect()
}

/// A fleet resource's text.
pub async fn read_resource(
    shared: &Shared,
    run_id: &str,
    file: &str,
) -> Result<(String, &'static str), String> {
    let files = reports(shared, "resources/read", run_id).await?;
    let texts = texts(&files);
    Ok(match file {
        "report.json" => (texts.json, "application/json"),
        _ => (texts.markdown, "text/markdown"),
    })
}

/// How often a waiting call looks at a fleet run.
pub const POLL: Duration = Duration::from_millis(500);
