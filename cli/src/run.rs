//! `deepr run`: the request validated by the session library
//! ([`deepr_session::request`]), then an estimate printed, a run queued for the fleet,
//! or a run created and handed to a session.

use deepr_session::request::{self, create_run, validate};
use deepr_session::ExitStatus;

use crate::session::{self};
use crate::{usage, Failure, Globals, RunArgs};

pub fn execute(globals: &Globals, args: &RunArgs) -> Result<ExitStatus, Failure> {
    let request = &args.request;
    let valid = validate(globals, request)?;
    let estimate = request::estimate(&valid.record)?;
    if args.estimate {
        outln!("{}", estimate.line);
        return Ok(ExitStatus::Success);
    }
    if let Some(corpus) = &valid.record.corpus {
        request::check_corpus(corpus)?;
    }
    if let (Some(_), true) = (&valid.db, request.plan_only) {
        return Err(usage(
            "--plan-only plans on this machine: drop --db (or unset DEEPR_DB), then queue the plan with --plan plan.toml --db …",
        ));
    }
    if let Some(url) = valid.db.clone() {
        // Fleet mode: the run is recorded in the database and executed by a worker.
        if !args.detach {
            request::prepare_out(&valid.record.out)?;
        }
        let job = request::fleet_job(valid, &request.budget);
        return crate::fleet::submit(&url, job, args.detach, globals.quiet);
    }
    if args.detach {
        return Err(usage(
            "--detach queues a run in the fleet: pass --db postgres://… or set DEEPR_DB",
        ));
    }
    let new_run = create_run(globals, request, valid)?;
    let end = session::execute(
        &new_run.state_dir,
        session::Start::New(Box::new(new_run.record)),
        new_run.options,
    )?;
    Ok(exit_status(&end))
}

/// The exit status of a session's end, once what only the command line says about it
/// is said (where a plan was written).
pub fn exit_status(end: &deepr_session::SessionEnd) -> ExitStatus {
    if let deepr_session::SessionEnd::PlanWritten(path) = end {
        outln!(
            "deepr: plan written to {0}; review or edit it, then: deepr run --plan {0} (with the same --corpus or --sources, and --out)",
            path.display()
        );
    }
    ExitStatus::from(end)
}
