//! The tools that start runs other than a fresh research: `plan_research` (the plan
//! phase alone, its plan returned for review), `ask_followup` (`deepr ask`) and
//! `refresh_run` (`deepr refresh`). Each is created by the front end as its command
//! creates it, and run by a session of this server.

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::actions::{budget_flags, launch_new, research_call, Asked, ResearchCall, Started};
use crate::shared::Shared;
use crate::tools::{Arguments, MAX_WAIT_S};

/// The flags every later run takes from a call: its id, its report path under the
/// state dir, its budgets (capped).
fn later_run_flags(
    shared: &Shared,
    args: &Arguments<'_>,
    run_id: &str,
) -> Result<Vec<String>, String> {
    let out = shared
        .state_dir
        .join("reports")
        .join(run_id)
        .join("report.md");
    let mut line = vec![
        "--run-id".to_string(),
        run_id.to_string(),
        "--out".to_string(),
        out.display().to_string(),
    ];
    line.extend(budget_flags(shared, args)?);
    Ok(line)
}

/// `ask_followup`: a follow-up question on an earlier run, as `deepr ask` creates it,
/// run by a session of this server.
pub fn ask_followup(shared: &Shared, map: &JsonObject) -> Result<Started, String> {
    let args = Arguments::new(
        "ask_followup",
        map,
        &[
            "run_id",
            "question",
            "search",
            "max_tokens",
            "max_cost",
            "max_time",
            "wait_s",
        ],
    )?;
    let parent = args.run_id()?.to_string();
    let question = args.required("question")?;
    let run_id = deepr_session::state::new_run_id(question);
    let mut line = vec![parent];
    line.extend(later_run_flags(shared, &args, &run_id)?);
    if switch(map, "ask_followup", "search")? {
        line.push("--search".to_string());
    }
    line.extend(["--".to_string(), question.to_string()]);
    let created = shared.host.create_follow_up(&line)?;
    launch_new(shared, &run_id, created, wait_s(&args)?)
}

/// `refresh_run`: an earlier run's research again, as `deepr refresh` creates it —
/// `Ok(None)` with why when `if_changed` found no source changed.
pub fn refresh_run(shared: &Shared, map: &JsonObject) -> Result<Result<Started, String>, String> {
    let args = Arguments::new(
        "refresh_run",
        map,
        &[
            "run_id",
            "if_changed",
            "max_tokens",
            "max_cost",
            "max_time",
            "wait_s",
        ],
    )?;
    let parent = args.run_id()?.to_string();
    let run_id = deepr_session::state::new_run_id(&format!("refresh {parent}"));
    let mut line = vec![parent];
    line.extend(later_run_flags(shared, &args, &run_id)?);
    if switch(map, "refresh_run", "if_changed")? {
        line.push("--if-changed".to_string());
    }
    let created = match shared.host.create_refresh(&line)? {
        crate::host::RefreshStart::Unchanged(why) => return Ok(Err(why)),
        crate::host::RefreshStart::Created(created) => *created,
    };
    launch_new(shared, &run_id, created, wait_s(&args)?).map(Ok)
}

/// A boolean argument (absent: false).
fn switch(map: &JsonObject, tool: &str, key: &str) -> Result<bool, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(on)) => Ok(*on),
        Some(other) => Err(format!("{tool}: {key} must be true or false, not {other}")),
    }
}

/// How long the call waits for its run (`wait_s`, 0 by default).
fn wait_s(args: &Arguments<'_>) -> Result<f64, String> {
    Ok(args
        .number("wait_s", 0.0, MAX_WAIT_S, false)?
        .unwrap_or(0.0))
}

/// `plan_research`: a plan-only run of this server; its plan is read with
/// [`written_plan`] once it ends.
pub fn plan_research(shared: &Shared, map: &JsonObject) -> Result<Started, String> {
    let ResearchCall { run_id, line, .. } = research_call(shared, map, Asked::Plan)?;
    let created = shared.host.create_run(&line)?;
    launch_new(shared, &run_id, created, MAX_WAIT_S)
}

/// The plan a plan-only run wrote (`plan.toml` beside its report), if it did.
pub fn written_plan(shared: &Shared, run_id: &str) -> Option<String> {
    let path = shared
        .state_dir
        .join("reports")
        .join(run_id)
        .join("plan.toml");
    std::fs::read_to_string(path).ok()
}
