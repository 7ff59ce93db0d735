//! `deepr resume RUN_ID`: continue a run from its checkpoints with the settings stored
//! when it started; only budgets and concurrency may change. With `--db`, a settled
//! fleet run (stopped by its budget, failed, parked) is queued again for the workers.

use crate::record::run_dir;
use crate::session::{self, SessionOptions, Start};
use crate::{state, usage, Failure, Globals, ResumeArgs};
use deepr_session::ExitStatus;

pub fn execute(globals: &Globals, args: &ResumeArgs) -> Result<ExitStatus, Failure> {
    state::check_run_id(&args.run_id)?;
    let max_time = deepr_session::request::check_budget(&args.budget)?;
    if let Some(url) = crate::fleet::db_url(globals)? {
        return crate::fleet::resume(&url, &args.run_id, &args.budget, max_time, globals.quiet);
    }
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    let dir = run_dir(&state_dir, &args.run_id);
    if !dir.join("checkpoints.sled").exists() {
        return Err(usage(format!(
            "no run {:?} in {}; see `deepr runs list` for the runs there",
            args.run_id,
            state_dir.display()
        )));
    }
    let concurrency = args
        .concurrency
        .map(deepr_session::request::check_concurrency)
        .transpose()?;
    let options = SessionOptions {
        concurrency,
        retry_degraded: args.retry_degraded,
        io_concurrency: args
            .io_concurrency
            .map(deepr_session::request::check_io_concurrency)
            .transpose()?,
        max_tokens: args.budget.max_tokens,
        max_cost: args.budget.max_cost,
        max_time,
        dry_run: args.dry_run,
        notices: Vec::new(),
        stop: None,
        events: globals.events.clone(),
    };
    let end = session::execute(&state_dir, Start::Resume(args.run_id.clone()), options)?;
    Ok(crate::run::exit_status(&end))
}
