//! The tools that start, follow and stop runs: `research`, `resume_run`, `run_status`,
//! `cancel_run`. A run started here is an ordinary run in the state dir, created by
//! the session library's request as `deepr run` creates it (the call's arguments fill
//! a [`RunRequest`]), so it spends what the CLI spends and any front end can resume it.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use deepr_checkpoints::CallJournal;
use deepr_session::record::{process_alive, read_owner, read_run_file, run_dir, RunState};
use deepr_session::request::{Budget, NewRun, RunRequest};
use deepr_session::{SessionOptions, Start};
use rmcp::model::JsonObject;
use serde_json::{json, Value};

use crate::active::ActiveRun;
use crate::shared::Shared;
use crate::tools::{Arguments, MAX_WAIT_S};
use deepr_session::Failure;
use deepr_stages::research::ReportFormat;
use deepr_stages::{Depth, Strategy};

/// A run started or resumed, and how long the call may wait for it.
pub struct Started {
    pub run: Arc<ActiveRun>,
    pub wait_s: f64,
}

fn one_line(failure: Failure) -> String {
    match failure {
        Failure::Usage(message) => message,
        Failure::Run(error) => format!("{error:#}"),
    }
}

/// A library failure as one line for the agent, named by its tool.
pub(crate) fn tool_failure(tool: &str) -> impl Fn(Failure) -> String + '_ {
    move |failure| format!("{tool}: {}", one_line(failure))
}

/// The budgets of a call, capped by the server's policy.
pub(crate) fn budget_of(shared: &Shared, args: &Arguments<'_>) -> Result<Budget, String> {
    let (tokens, cost) = shared.policy.budgets(
        args.positive_integer("max_tokens")?,
        args.number("max_cost", 0.0, f64::MAX, true)?,
    )?;
    let max_time = args.string("max_time")?;
    if let Some(time) = max_time {
        deepr_session::record::parse_duration("max_time", time).map_err(one_line)?;
    }
    Ok(Budget {
        max_tokens: Some(tokens),
        max_cost: Some(cost),
        max_time: max_time.map(String::from),
    })
}

/// A `research` call read into the run's request.
pub struct ResearchCall {
    pub run_id: String,
    pub request: RunRequest,
    pub wait_s: f64,
}

/// Which tool a research call came from: `research`, or `plan_research` (a plan-only
/// run: the plan phase, its plan written for review).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    Research,
    Plan,
}

impl Asked {
    fn tool(self) -> &'static str {
        match self {
            Self::Research => "research",
            Self::Plan => "plan_research",
        }
    }

    /// The arguments the tool's schema names.
    fn known(self) -> &'static [&'static str] {
        match self {
            Self::Research => &[
                "topic",
                "corpus",
                "sources",
                "depth",
                "strategy",
                "formats",
                "run_id",
                "plan",
                "max_tokens",
                "max_cost",
                "max_time",
                "wait_s",
            ],
            Self::Plan => &[
                "topic",
                "corpus",
                "sources",
                "depth",
                "run_id",
                "max_tokens",
                "max_cost",
                "max_time",
            ],
        }
    }
}

/// Reads a `research` (or `plan_research`) call: its arguments checked (paths under
/// the roots, budgets under the caps) and filled into the run's request. A `plan` is
/// written beside the run's report and read from there as `deepr run --plan` reads
/// it; its topic stands when the call gives none.
pub fn research_call(
    shared: &Shared,
    map: &JsonObject,
    asked: Asked,
) -> Result<ResearchCall, String> {
    let tool = asked.tool();
    let args = Arguments::new(tool, map, asked.known())?;
    let plan = args.string("plan")?;
    let planned_topic = match plan {
        Some(text) => Some(
            deepr_stages::research::parse_plan(text)
                .map_err(|e| format!("{tool}: plan {e}"))?
                .topic,
        ),
        None => None,
    };
    let topic = match plan {
        Some(_) => args.string("topic")?.filter(|t| !t.trim().is_empty()),
        None => Some(args.required("topic")?),
    };
    let run_id = match args.string("run_id")? {
        Some(_) => args.run_id()?.to_string(),
        None => deepr_session::state::new_run_id(
            topic
                .or(planned_topic.as_deref())
                .unwrap_or("planned research"),
        ),
    };
    if plan.is_some() && run_dir(&shared.state_dir, &run_id).exists() {
        return Err(format!(
            "{tool}: run id {run_id:?} already exists; choose another run_id"
        ));
    }
    let out = report_path(shared, &run_id);
    let corpus = match args.string("corpus")? {
        Some(corpus) => Some(shared.policy.inside_roots("corpus", corpus)?),
        None => None,
    };
    let request = RunRequest {
        topic: topic.map(String::from),
        corpus,
        sources: args.string("sources")?.map(String::from),
        depth: args.choice("depth", &Depth::ALL, Depth::as_str)?,
        strategy: args.choice("strategy", &Strategy::ALL, Strategy::as_str)?,
        formats: args.choices("formats", &ReportFormat::ALL, ReportFormat::as_str)?,
        plan: match plan {
            Some(text) => Some(write_plan_argument(tool, text, &out)?),
            None => None,
        },
        run_id: Some(run_id.clone()),
        out: Some(out),
        budget: budget_of(shared, &args)?,
        plan_only: asked == Asked::Plan,
        ..RunRequest::default()
    };
    let wait_s = args
        .number("wait_s", 0.0, MAX_WAIT_S, false)?
        .unwrap_or(0.0);
    Ok(ResearchCall {
        run_id,
        request,
        wait_s,
    })
}

/// Where a run this server creates writes its report: under the state dir's
/// `reports/RUN_ID/`.
pub(crate) fn report_path(shared: &Shared, run_id: &str) -> PathBuf {
    shared
        .state_dir
        .join("reports")
        .join(run_id)
        .join("report.md")
}

/// A call's `plan` (TOML, as `plan_research` gave it, maybe edited; checked by the
/// caller) written beside the run's report for `--plan`: its path.
fn write_plan_argument(tool: &str, text: &str, out: &Path) -> Result<PathBuf, String> {
    let path = out.with_file_name("reviewed-plan.toml");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{tool}: cannot keep the plan in {} ({e})", dir.display()))?;
    }
    deepr_checkpoints::write_atomically(&path, text.as_bytes())
        .map_err(|e| format!("{tool}: cannot keep the plan at {} ({e})", path.display()))?;
    Ok(path)
}

/// `research`: the call's request, checked and created as `deepr run` creates it,
/// then run by a session of this server.
pub fn research(shared: &Shared, map: &JsonObject) -> Result<Started, String> {
    let ResearchCall {
        run_id,
        request,
        wait_s,
    } = research_call(shared, map, Asked::Research)?;
    let created = deepr_session::request::prepare_local(&shared.globals, &request)
        .map_err(tool_failure("research"))?;
    launch_new(shared, &run_id, created, wait_s)
}

/// A run created in the state dir, started by a session of this server.
pub(crate) fn launch_new(
    shared: &Shared,
    run_id: &str,
    created: NewRun,
    wait_s: f64,
) -> Result<Started, String> {
    let run = shared.runs.launch(
        run_id,
        shared.state_dir.clone(),
        Start::New(Box::new(created.record)),
        created.options,
    )?;
    Ok(Started { run, wait_s })
}

/// A `resume_run` call read: the run and the budgets (capped) of its next session.
pub struct ResumeCall {
    pub run_id: String,
    pub tokens: u64,
    pub cost: f64,
    pub max_time: Option<Duration>,
    pub wait_s: f64,
}

/// Reads a `resume_run` call's arguments.
pub fn resume_call(shared: &Shared, map: &JsonObject) -> Result<ResumeCall, String> {
    let args = Arguments::new(
        "resume_run",
        map,
        &["run_id", "max_tokens", "max_cost", "max_time", "wait_s"],
    )?;
    let run_id = args.run_id()?.to_string();
    let (tokens, cost) = shared.policy.budgets(
        args.positive_integer("max_tokens")?,
        args.number("max_cost", 0.0, f64::MAX, true)?,
    )?;
    let max_time = args
        .string("max_time")?
        .map(|t| deepr_session::record::parse_duration("max_time", t))
        .transpose()
        .map_err(one_line)?;
    let wait_s = args
        .number("wait_s", 0.0, MAX_WAIT_S, false)?
        .unwrap_or(0.0);
    Ok(ResumeCall {
        run_id,
        tokens,
        cost,
        max_time,
        wait_s,
    })
}

/// `resume_run`: a stopped, cancelled, incomplete or killed run, continued from its
/// checkpoints by a session of this server.
pub fn resume(shared: &Shared, map: &JsonObject) -> Result<Started, String> {
    let ResumeCall {
        run_id,
        tokens,
        cost,
        max_time,
        wait_s,
    } = resume_call(shared, map)?;
    let run_id = run_id.as_str();
    if shared.runs.executing(run_id) {
        return Err(format!(
            "resume_run: run {run_id} is executing in this server now; follow it with run_status"
        ));
    }
    let dir = run_dir(&shared.state_dir, run_id);
    let file = read_run_file(&dir).ok_or_else(|| {
        format!(
            "resume_run: no run {run_id} in {}; list_runs shows the runs",
            shared.state_dir.display()
        )
    })?;
    if file.state == RunState::Running {
        if let Some(owner) =
            read_owner(&dir).filter(|o| process_alive(o.pid) && o.pid != std::process::id())
        {
            return Err(format!(
                "resume_run: run {run_id} is executing in process {}; wait for it or stop that process",
                owner.pid
            ));
        }
    }
    let options = SessionOptions::unattended(Some(tokens), Some(cost), max_time);
    let run = shared.runs.launch(
        run_id,
        shared.state_dir.clone(),
        Start::Resume(run_id.to_string()),
        options,
    )?;
    Ok(Started { run, wait_s })
}

/// `cancel_run`: stop a run this server executes, as Ctrl-C does, and wait (60 s at
/// most) for its running steps to checkpoint.
pub async fn cancel(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    let args = Arguments::new("cancel_run", map, &["run_id"])?;
    let run_id = args.run_id()?;
    let run = shared
        .runs
        .get(run_id)
        .filter(|run| run.ended().is_none())
        .ok_or_else(|| {
            format!("cancel_run: run {run_id} is not executing in this server; run_status shows its state")
        })?;
    run.stop.store(true, Ordering::SeqCst);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while run.ended().is_none() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(status_of(shared, run_id))
}

/// `run_status`.
pub fn status(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    let args = Arguments::new("run_status", map, &["run_id"])?;
    let run_id = args.run_id()?;
    if shared.runs.get(run_id).is_none()
        && !run_dir(&shared.state_dir, run_id).join("run.json").exists()
    {
        return Err(format!(
            "run_status: no run {run_id} in {}; list_runs shows the runs",
            shared.state_dir.display()
        ));
    }
    Ok(status_of(shared, run_id))
}

/// A run's state: from this server's session if it has one, else from its run file.
pub fn status_of(shared: &Shared, run_id: &str) -> Value {
    let dir = run_dir(&shared.state_dir, run_id);
    let file = read_run_file(&dir);
    let (spent, _) = CallJournal::spent(&dir.join("calls.jsonl"));
    let report = file
        .as_ref()
        .map(|f| f.record.out.clone())
        .filter(|out| out.exists());
    let mut status = json!({
        "run_id": run_id,
        "topic": file.as_ref().map(|f| f.record.topic.clone()),
        "created": file.as_ref().map(|f| f.record.created),
        "tokens_spent": spent,
        "report": report.as_deref().map(Path::display).map(|p| p.to_string()),
    });
    let (state, detail) = match shared.runs.get(run_id) {
        Some(run) => match run.ended() {
            Some(ended) => {
                status["exit_code"] = json!(ended.exit_code);
                (ended.state.to_string(), ended.detail)
            }
            None => (
                "running".to_string(),
                "executing in this server; run_status again, or cancel_run".to_string(),
            ),
        },
        None => stored_state(&dir, file.as_ref(), run_id),
    };
    if let Some(run) = shared.runs.get(run_id) {
        status["progress"] = run.live_json();
    }
    status["state"] = json!(state);
    status["resumable"] = json!(!matches!(
        state.as_str(),
        "finished" | "running" | "failed" | "planned"
    ));
    status["detail"] = json!(detail);
    status
}

/// The state a run file records, with a `running` run whose process is gone shown as
/// killed.
fn stored_state(
    dir: &Path,
    file: Option<&deepr_session::record::RunFile>,
    run_id: &str,
) -> (String, String) {
    let resume = format!("resume it with resume_run {{\"run_id\": \"{run_id}\"}}");
    match file {
        None => (
            "unknown".into(),
            "no run.json: it was stopped before it started".into(),
        ),
        Some(file) => match file.state {
            RunState::Running => match read_owner(dir) {
                Some(owner) if process_alive(owner.pid) && owner.pid != std::process::id() => (
                    "running".into(),
                    format!("executing in process {}", owner.pid),
                ),
                _ => ("killed".into(), format!("its process is gone; {resume}")),
            },
            RunState::Finished => ("finished".into(), "the report is written".into()),
            RunState::Planned => (
                "planned".into(),
                "its plan is written (plan_research returned it); research it with research's plan argument".into(),
            ),
            other => (
                other.as_str().to_string(),
                format!("{}; {resume}", file.note.clone().unwrap_or_default()),
            ),
        },
    }
}
