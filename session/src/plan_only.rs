//! `--plan-only`: a session that runs only the plan phase (the scout and the planner,
//! checkpointed like any phase), writes the plan as the file the user reviews
//! (`plan.toml`, [`deepr_settings::render_plan`]) and stops. The run is left
//! `planned`. The run's record says where its plan goes, so a plan-only run killed
//! before its plan was written writes it when resumed; `deepr run --plan plan.toml`
//! researches the plan as the user edited it.

use std::sync::Arc;

use deepr_orchestrator::Budget;
use deepr_stages::research::PlannedQuestion;
use deepr_stages::{ResearchConfig, ResearchProviders};

use crate::opened::{set_state, OpenRun};
use crate::options::SessionOptions;
use crate::record::{PlanOnly, RunState};
use crate::wiring::FleetLink;
use crate::{Failure, SessionEnd};

/// Runs the plan phase and writes the plan; an interrupted, stopped or refused plan
/// phase ends as the whole pipeline would (resumable).
pub(crate) async fn write_plan(
    run: &OpenRun,
    config: &ResearchConfig,
    providers: &ResearchProviders,
    budget: Arc<Budget>,
    options: &SessionOptions,
    fleet: Option<&FleetLink>,
    target: &PlanOnly,
) -> Result<SessionEnd, Failure> {
    let (executor, signalled) = crate::outcome::executor(run, budget, options, fleet);
    let planned = deepr_stages::plan_research(config, providers, &executor).await;
    let decomposed = match planned {
        Ok(decomposed) => decomposed,
        Err(error) => {
            let signal = crate::outcome::signal_of(&signalled, Some(&error), options, fleet);
            return match crate::outcome::settle(run, Err(error), signal)? {
                crate::outcome::Settled::Ended(end) => Ok(end),
                // A budget or an outage stopped the plan phase: nothing to write yet.
                crate::outcome::Settled::Report(_, completion, _) => {
                    let why = completion.incomplete_reason.unwrap_or_default();
                    set_state(
                        &run.dir,
                        &run.record,
                        RunState::Incomplete,
                        Some(why.clone()),
                    );
                    Err(Failure::Run(anyhow::anyhow!(
                        "no plan written: {why} Or run --plan-only again with a larger budget."
                    )))
                }
            };
        }
    };
    let mut notes = target.notes.clone();
    notes.push(format!("planned by run {}", run.record.run_id));
    if let Some(why) = &decomposed.degraded {
        notes.push(format!("the planner's answer was not used: {why}"));
    }
    let plan = plan_of(config, decomposed.subquestions);
    let text = deepr_stages::research::render_plan(&plan, &notes);
    // A plan already there (a resume of a run whose plan was written; the command line
    // refuses a new plan-only run over an existing file) may hold the user's edits: it
    // is never overwritten, and the run ends planned as it did.
    if !target.path.exists() {
        crate::util::write_atomically(&target.path, text.as_bytes())?;
    }
    set_state(
        &run.dir,
        &run.record,
        RunState::Planned,
        Some(format!("plan written to {}", target.path.display())),
    );
    Ok(SessionEnd::PlanWritten(target.path.clone()))
}

/// The plan file's values: the run's topic and depth, each subquestion with the
/// queries the planner wrote for it.
fn plan_of(
    config: &ResearchConfig,
    subquestions: Vec<deepr_stages::types::Subq>,
) -> deepr_stages::research::ResearchPlan {
    deepr_stages::research::ResearchPlan {
        topic: config.topic.clone(),
        depth: config.depth,
        subquestions: subquestions
            .into_iter()
            .map(|s| PlannedQuestion {
                question: s.text,
                queries: s.queries,
            })
            .collect(),
    }
}
