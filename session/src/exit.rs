//! How a command ended, as its process's exit code says it: [`ExitStatus`], the one
//! map every front end uses — run, resume, ask, refresh, the fleet's follow and worker,
//! verify, and the MCP server's `run_status` — from a session's end, a failure, or a
//! gate's verdict to the code. `deepr --help` and the README list [`ExitStatus::ALL`].

use crate::{Failure, SessionEnd, Shortfall};

/// The signal that interrupted a run; the shell's `128 + signal` is its code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C): 130.
    Interrupt,
    /// SIGTERM: 143.
    Terminate,
}

impl Signal {
    /// The shell's code for it.
    pub const fn code(self) -> u8 {
        ExitStatus::Interrupted(self).code()
    }

    /// The signal a code stands for (0, or any other: none).
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            130 => Some(Self::Interrupt),
            143 => Some(Self::Terminate),
            _ => None,
        }
    }
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done (a run finished, a check passed).
    Success,
    /// 1: a run failed, or `deepr verify` found a quote or sentence that does not hold.
    Failed,
    /// 2: bad usage: an argument, config file or plan was wrong (the message says which).
    Usage,
    /// 3: `deepr verify` could check nothing.
    Unverified,
    /// 4: a budget stopped the run; its report is marked incomplete (resume to finish).
    Budget,
    /// 5: a provider stayed unavailable; the report is marked incomplete (resume).
    Unavailable,
    /// 6: a provider refused the credentials (fix the key, then resume).
    AuthRefused,
    /// 130 / 143: interrupted by Ctrl-C or SIGTERM; checkpoints are kept (resume).
    Interrupted(Signal),
}

impl ExitStatus {
    /// Every status, in the order `--help` lists them.
    pub const ALL: [Self; 9] = [
        Self::Success,
        Self::Failed,
        Self::Usage,
        Self::Unverified,
        Self::Budget,
        Self::Unavailable,
        Self::AuthRefused,
        Self::Interrupted(Signal::Interrupt),
        Self::Interrupted(Signal::Terminate),
    ];

    /// The process exit code.
    pub const fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::Failed => 1,
            Self::Usage => 2,
            Self::Unverified => 3,
            Self::Budget => 4,
            Self::Unavailable => 5,
            Self::AuthRefused => 6,
            Self::Interrupted(Signal::Interrupt) => 130,
            Self::Interrupted(Signal::Terminate) => 143,
        }
    }

    /// What the code means, in a few words.
    pub const fn meaning(self) -> &'static str {
        match self {
            Self::Success => "ok",
            Self::Failed => "run failed",
            Self::Usage => "usage error",
            Self::Unverified => "unverified",
            Self::Budget => "stopped by a budget (incomplete report)",
            Self::Unavailable => "a provider stayed unavailable (incomplete report)",
            Self::AuthRefused => "a provider refused the credentials",
            Self::Interrupted(Signal::Interrupt) => "interrupted (Ctrl-C)",
            Self::Interrupted(Signal::Terminate) => "interrupted (SIGTERM)",
        }
    }

    /// The list for `--help`: "Exit codes: 0 ok, 1 …".
    pub fn help() -> String {
        let codes: Vec<String> = Self::ALL
            .iter()
            .map(|s| format!("{} {}", s.code(), s.meaning()))
            .collect();
        format!("Exit codes: {}.", codes.join(", "))
    }
}

impl From<ExitStatus> for u8 {
    fn from(status: ExitStatus) -> u8 {
        status.code()
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(status: ExitStatus) -> Self {
        Self::from(status.code())
    }
}

impl From<&SessionEnd> for ExitStatus {
    fn from(end: &SessionEnd) -> Self {
        match end {
            SessionEnd::Finished(..) | SessionEnd::Previewed | SessionEnd::PlanWritten(_) => {
                Self::Success
            }
            SessionEnd::Incomplete {
                shortfall: Shortfall::Budget,
                ..
            } => Self::Budget,
            SessionEnd::Incomplete {
                shortfall: Shortfall::Unavailable,
                ..
            } => Self::Unavailable,
            SessionEnd::AuthRefused { .. } => Self::AuthRefused,
            SessionEnd::Interrupted(signal) => Self::Interrupted(*signal),
        }
    }
}

impl From<&Failure> for ExitStatus {
    fn from(failure: &Failure) -> Self {
        match failure {
            Failure::Usage(_) => Self::Usage,
            Failure::Run(_) => Self::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_its_own_code_and_help_lists_them_all() {
        let codes: std::collections::BTreeSet<u8> =
            ExitStatus::ALL.iter().map(|s| s.code()).collect();
        assert_eq!(codes.len(), ExitStatus::ALL.len());
        let help = ExitStatus::help();
        for code in [
            "0 ok",
            "2 usage",
            "5 a provider stayed unavailable",
            "6 a provider refused",
            "130",
            "143",
        ] {
            assert!(help.contains(code), "{help}");
        }
    }
}
