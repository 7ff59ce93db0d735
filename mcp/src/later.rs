//! The tools that start runs other than a fresh research: `plan_research` (the plan
//! phase alone, its plan returned for review), `ask_followup` (`deepr ask`) and
//! `refresh_run` (`deepr refresh`). Each is created by the session library's request
//! as its command creates it, and run by a session of this server.

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::actions::{
    budget_of, launch_new, report_path, research_call, tool_failure, Asked, ResearchCall, Started,
};
use crate::shared::Shared;
use crate::tools::{Arguments, MAX_WAIT_S};
use deepr_session::request::{FollowUpRequest, RefreshRequest, Refreshed};

/// `ask_followup`: a follow-up question on an earlier run, created as `deepr ask`
/// creates it, run by a session of this server.
pub fn ask_followup(shared: &Shared, map: &JsonObject) -> Result<Started, String> {
    let tool = "ask_followup";
    let args = Arguments::new(
        tool,
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
    let question = args.required("question")?;
    let run_id = deepr_session::state::new_run_id(question);
    let request = FollowUpRequest {
        parent: args.run_id()?.to_string(),
        question: question.to_string(),
        search: switch(map, tool, "search")?,
        out: Some(report_path(shared, &run_id)),
        new_id: Some(run_id.clone()),
        budget: budget_of(shared, &args)?,
        formats: Vec::new(),
    };
    let created = deepr_session::request::prepare_follow_up(&shared.globals, &request)
        .map_err(tool_failure(tool))?;
    launch_new(shared, &run_id, created, wait_s(&args)?)
}

/// `refresh_run`: an earlier run's research again, created as `deepr refresh` creates
/// it — `Ok(Err(why))` when `if_changed` found no source changed.
pub fn refresh_run(shared: &Shared, map: &JsonObject) -> Result<Result<Started, String>, String> {
    let tool = "refresh_run";
    let args = Arguments::new(
        tool,
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
    let request = RefreshRequest {
        parent,
        if_changed: switch(map, tool, "if_changed")?,
        out: Some(report_path(shared, &run_id)),
        new_id: Some(run_id.clone()),
        budget: budget_of(shared, &args)?,
    };
    let created = match deepr_session::request::prepare_refresh(&shared.globals, &request)
        .map_err(tool_failure(tool))?
    {
        Refreshed::Unchanged(why) => return Ok(Err(why)),
        Refreshed::Ready(created) => *created,
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
    let ResearchCall {
        run_id, request, ..
    } = research_call(shared, map, Asked::Plan)?;
    let created = deepr_session::request::prepare_local(&shared.globals, &request)
        .map_err(tool_failure("plan_research"))?;
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
