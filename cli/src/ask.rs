//! `deepr ask RUN_ID "QUESTION"`: a follow-up question on an earlier run, created by
//! the session library ([`deepr_session::request::prepare_follow_up`]) and run as a
//! run of its own.

use deepr_session::request::{prepare_follow_up, FollowUpRequest};
use deepr_session::ExitStatus;

use crate::{Failure, Globals};

pub fn execute(globals: &Globals, args: &FollowUpRequest) -> Result<ExitStatus, Failure> {
    let new_run = prepare_follow_up(globals, args)?;
    let end = crate::session::execute(
        &new_run.state_dir,
        crate::session::Start::New(Box::new(new_run.record)),
        new_run.options,
    )?;
    Ok(crate::run::exit_status(&end))
}
