//! `deepr refresh RUN_ID`: an earlier run's research again over its sources as they
//! are now, created by the session library ([`deepr_session::request::prepare_refresh`]);
//! with `--if-changed` and no source changed, it says so and exits 0.

use deepr_session::request::{prepare_refresh, RefreshRequest, Refreshed};
use deepr_session::ExitStatus;

use crate::{Failure, Globals};

pub fn execute(globals: &Globals, args: &RefreshRequest) -> Result<ExitStatus, Failure> {
    let new_run = match prepare_refresh(globals, args)? {
        Refreshed::Unchanged(why) => {
            if !globals.quiet {
                outln!("{why}");
            }
            return Ok(ExitStatus::Success);
        }
        Refreshed::Ready(new_run) => *new_run,
    };
    let end = crate::session::execute(
        &new_run.state_dir,
        crate::session::Start::New(Box::new(new_run.record)),
        new_run.options,
    )?;
    Ok(crate::run::exit_status(&end))
}
