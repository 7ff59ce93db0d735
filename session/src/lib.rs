//! A research session as a library: what every front end of deepr (the command line,
//! the fleet worker, the bench, an MCP server) calls to run or resume a run.
//!
//! A session opens the run (its checkpoint store and record), reads the corpus, wires
//! the providers ([`wiring`]), says what a resume will restore ([`lifecycle`]), runs
//! the pipeline under the run's budgets and signals, and settles: it writes the
//! reports ([`reports`]), remembers the run ([`memory`]) and ends in a [`SessionEnd`]
//! that carries the [`Report`] it wrote. [`ExitStatus`] is the one map from how a
//! session ended to the command line's exit code.
//!
//! * [`record`]: the run record (every setting needed to continue a run), the fleet's
//!   job, and the run's state files.
//! * [`request`]: what a front end asks for a run, merged with the environment and the
//!   config file, validated once and built into the run's record.
//! * [`state`]: the state dir and run ids.
//! * [`progress`]: the session's events (what it reports to its front end) and its log.

pub mod credentials;
pub mod embedder;
pub mod exit;
pub mod lifecycle;
pub mod lineage;
pub mod memory;
mod opened;
pub mod options;
pub mod outcome;
pub mod paid;
pub mod plan_only;
pub mod progress;
pub mod record;
pub mod reports;
pub mod request;
pub mod signals;
pub mod state;
pub mod util;
pub mod wiring;

use deepr_evidence::report::Report;

pub use exit::{ExitStatus, Signal};
pub use lifecycle::{execute, session};
pub use options::{SessionOptions, Start};

/// A session that could not run: bad input (exit 2) or a failed run (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Bad input: exit 2. The message says what was wrong and what to do.
    #[error("{0}")]
    Usage(String),
    /// The run failed: exit 1.
    #[error(transparent)]
    Run(#[from] anyhow::Error),
}

/// A usage failure with its one-line message.
pub fn usage(message: impl Into<String>) -> Failure {
    Failure::Usage(message.into())
}

/// Why a run's report is incomplete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// A budget (tokens, cost, time) stopped it.
    Budget,
    /// A provider stayed unavailable.
    Unavailable,
}

/// How a session ended. Every ending but `Finished` resumes.
#[derive(Debug)]
pub enum SessionEnd {
    /// The run finished; its report is written. With it, this session's wall time
    /// against the DAG's lower bound (`None` when it restored nodes).
    Finished(Box<Report>, Option<record::Efficiency>),
    /// A budget or an unavailable provider stopped the run; the report written is
    /// marked incomplete with `reason`.
    Incomplete {
        shortfall: Shortfall,
        reason: String,
        report: Box<Report>,
    },
    /// A provider refused the credentials: no report; fix the key and resume.
    AuthRefused { provider: String, message: String },
    /// Interrupted by a signal (or the fleet worker stopping): checkpoints are saved.
    Interrupted(Signal),
    /// `--dry-run`: the resume's preview was reported (steps restored, steps to run)
    /// and nothing ran.
    Previewed,
    /// `--plan-only`: the research plan was written to this file for the user to
    /// review; nothing was researched.
    PlanWritten(std::path::PathBuf),
}

impl SessionEnd {
    /// The report the session wrote, if it wrote one.
    pub fn report(&self) -> Option<&Report> {
        match self {
            Self::Finished(report, _) | Self::Incomplete { report, .. } => Some(report),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ending_has_its_exit_code() {
        let code = |end: &SessionEnd| ExitStatus::from(end).code();
        assert_eq!(code(&SessionEnd::Previewed), 0);
        assert_eq!(code(&SessionEnd::Interrupted(Signal::Terminate)), 143);
        let refused = SessionEnd::AuthRefused {
            provider: "openai".into(),
            message: "401".into(),
        };
        assert_eq!(code(&refused), 6);
        assert!(refused.report().is_none());
    }
}
