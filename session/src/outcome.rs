//! Running a session's pipeline and settling how it ended: the executor under the
//! run's budget and Ctrl-C/SIGTERM (or the fleet worker's stop flag), the efficiency
//! record, the stop reason read into the run's state, and the [`SessionEnd`] once the
//! report is written.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use deepr_orchestrator::{Budget, Executor, StopReason, Unfinished, UsageLedger};
use deepr_stages::render::Completion;
use deepr_stages::{run_research, ResearchConfig, ResearchError};

use crate::opened::{set_state, set_state_labelled, OpenRun};
use crate::options::SessionOptions;
use crate::progress::Resume;
use crate::record::{now_secs, RunState};
use crate::util::{utc_rfc3339, write_atomically};
use crate::wiring::FleetLink;
use crate::{Failure, SessionEnd, Shortfall, Signal};

/// What running the pipeline left: its outcome, its spend, when it started and the
/// signal that stopped it.
pub(crate) struct Executed {
    pub(crate) outcome: Result<deepr_stages::ResearchResult, ResearchError>,
    pub(crate) ledger: Arc<UsageLedger>,
    pub(crate) started: Instant,
    pub(crate) signal: Option<Signal>,
    /// Wall time against the DAG's lower bound, when this session restored no node.
    pub(crate) efficiency: Option<crate::record::Efficiency>,
}

/// Runs the pipeline under the run's budget and the session's stop flag, and records
/// how close to its lower bound the wall time came.
pub(crate) async fn execute_pipeline(
    run: &OpenRun,
    config: &ResearchConfig,
    providers: &deepr_stages::ResearchProviders,
    budget: Arc<Budget>,
    options: &SessionOptions,
    fleet: Option<&FleetLink>,
) -> Executed {
    let (executor, signalled) = executor(run, budget, options, fleet);
    let ledger = Arc::clone(&executor.ledger);
    let started = Instant::now();
    let outcome = run_research(config, providers, &executor).await;
    let pipeline_wall = started.elapsed().as_secs_f64();
    let efficiency = write_efficiency(run, config, outcome.as_ref().ok(), pipeline_wall);
    let stopped_by = outcome.as_ref().err();
    let signal = signal_of(&signalled, stopped_by, options, fleet);
    Executed {
        outcome,
        ledger,
        started,
        signal,
        efficiency,
    }
}

/// The executor of a session's pipeline (or its plan phase): the run's store and
/// concurrency, the budget, and the stop flag — the fleet worker's, the front end's,
/// or Ctrl-C/SIGTERM's, whose signal number lands in the returned cell.
pub(crate) fn executor(
    run: &OpenRun,
    budget: Arc<Budget>,
    options: &SessionOptions,
    fleet: Option<&FleetLink>,
) -> (Executor, Arc<AtomicU8>) {
    let signalled = Arc::new(AtomicU8::new(0));
    let stop = match (fleet, &options.stop) {
        // The worker owns the signals (and stops every run it holds).
        (Some(link), _) => Arc::clone(&link.stop),
        // So does a front end that passed its own stop flag (the MCP server).
        (None, Some(flag)) => Arc::clone(flag),
        (None, None) => stop_on_signals(run, &signalled),
    };
    let executor = Executor {
        store: Arc::clone(&run.store),
        ledger: Arc::new(UsageLedger::default()),
        progress: run.reporter.clone(),
        concurrency: run.concurrency,
        stop,
        budget,
        preview: None,
        retry_degraded: options.retry_degraded,
    };
    (executor, signalled)
}

/// The signal that stopped the run, if one did; a stop by the worker's or front end's
/// flag reads as SIGINT.
pub(crate) fn signal_of(
    signalled: &AtomicU8,
    stopped_by: Option<&ResearchError>,
    options: &SessionOptions,
    fleet: Option<&FleetLink>,
) -> Option<Signal> {
    let signal = Signal::from_code(signalled.load(Ordering::SeqCst));
    let worker_stopped = fleet.is_some_and(|link| link.stop.load(Ordering::SeqCst))
        || options
            .stop
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::SeqCst));
    let interrupted = matches!(
        stopped_by,
        Some(ResearchError::Stopped {
            reason: StopReason::Interrupted,
            ..
        })
    );
    if signal.is_none() && worker_stopped && interrupted {
        Some(Signal::Interrupt)
    } else {
        signal
    }
}

/// First Ctrl-C / SIGTERM: stop starting work (running steps finish and are
/// checkpointed). Second: exit at once — the store stays consistent because every
/// checkpoint is one atomic batch. `signalled` keeps the exit code (130 or 143).
fn stop_on_signals(run: &OpenRun, signalled: &Arc<AtomicU8>) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, code) = (Arc::clone(&stop), Arc::clone(signalled));
    let (first, second) = (Arc::clone(&run.reporter), Arc::clone(&run.reporter));
    let run_id = run.record.run_id.clone();
    crate::signals::on_interrupt(
        move |signal| {
            code.store(signal.code(), Ordering::SeqCst);
            flag.store(true, Ordering::SeqCst);
            first.warn("deepr: stopping — letting running steps finish and checkpoint (press Ctrl-C again to quit at once)");
        },
        move |_| second.stopped(&run_id, "stopped at once.", Resume::AsItWas),
    );
    stop
}

/// The bound covers the nodes this session ran; a session that restored some has no
/// meaningful one (their calls happened before it started), so it writes none.
/// Returns what it wrote, for the session's ending.
fn write_efficiency(
    run: &OpenRun,
    config: &ResearchConfig,
    result: Option<&deepr_stages::ResearchResult>,
    pipeline_wall: f64,
) -> Option<crate::record::Efficiency> {
    let path = run.dir.join("efficiency.json");
    let Some(result) = result.filter(|r| r.restored_nodes == 0) else {
        let _ = std::fs::remove_file(path);
        return None;
    };
    let efficiency = crate::reports::efficiency(
        run.store.as_ref(),
        run.concurrency,
        config.io_concurrency,
        pipeline_wall,
        result.restored_nodes,
    );
    if let Ok(bytes) = serde_json::to_vec_pretty(&efficiency) {
        let _ = write_atomically(&path, &bytes);
    }
    Some(efficiency)
}

/// What the pipeline's outcome leaves to do: write a report (complete, or incomplete
/// for a reason), or nothing more (interrupted, credentials refused).
pub(crate) enum Settled {
    Report(
        Box<deepr_stages::ResearchResult>,
        Completion,
        Option<Shortfall>,
    ),
    Ended(SessionEnd),
}

/// Settles the pipeline's outcome: the run's state, and what the session still writes.
pub(crate) fn settle(
    run: &OpenRun,
    outcome: Result<deepr_stages::ResearchResult, ResearchError>,
    signal: Option<Signal>,
) -> Result<Settled, Failure> {
    let record = &run.record;
    let (reason, partial) = match outcome {
        Ok(result) => {
            let complete = Completion {
                complete: true,
                incomplete_reason: None,
            };
            return Ok(Settled::Report(Box::new(result), complete, None));
        }
        Err(ResearchError::Stopped { reason, partial }) => (reason, partial),
        Err(error) => {
            set_state(&run.dir, record, RunState::Failed, Some(error.to_string()));
            return Err(Failure::Run(
                anyhow::Error::new(error).context("research run failed"),
            ));
        }
    };
    if let Some(signal) = signal {
        set_state(
            &run.dir,
            record,
            RunState::Interrupted,
            Some("interrupted".into()),
        );
        run.reporter.stopped(
            &record.run_id,
            "interrupted; checkpoints are saved.",
            Resume::AsItWas,
        );
        return Ok(Settled::Ended(SessionEnd::Interrupted(signal)));
    }
    let (why, shortfall) = match &reason {
        StopReason::Unfinished(Unfinished::AuthFailed { provider, message }) => {
            return Ok(Settled::Ended(refused(run, provider, message)));
        }
        StopReason::Unfinished(Unfinished::ProviderUnavailable { .. }) => (
            format!("Stopped early: {reason}. Finished steps are kept; resume the run when the provider answers again (deepr resume {}) to finish the report.", record.run_id),
            Shortfall::Unavailable,
        ),
        _ => (
            format!("Stopped early: {reason}. Resume the run with a larger budget to finish the report."),
            Shortfall::Budget,
        ),
    };
    let incomplete = Completion {
        complete: false,
        incomplete_reason: Some(why),
    };
    Ok(Settled::Report(partial, incomplete, Some(shortfall)))
}

/// A provider refused the credentials: nothing works until the key is fixed, so no
/// report is written and the finished steps are kept.
fn refused(run: &OpenRun, provider: &str, message: &str) -> SessionEnd {
    let var = crate::wiring::key_variable(provider);
    set_state_labelled(
        &run.dir,
        &run.record,
        RunState::Failed,
        Some(format!("{provider} refused the credentials: {message}")),
        Some("auth"),
    );
    run.reporter.stopped(
        &run.record.run_id,
        &format!(
            "{provider} refused the credentials in {var} ({message}); finished steps are kept."
        ),
        Resume::FixedKey(var),
    );
    SessionEnd::AuthRefused {
        provider: provider.to_string(),
        message: message.to_string(),
    }
}

/// The session's end once its report is written: a finished run is remembered.
pub(crate) fn close(
    state_dir: &Path,
    run: &OpenRun,
    report: deepr_evidence::report::Report,
    completion: Completion,
    shortfall: Option<Shortfall>,
    efficiency: Option<crate::record::Efficiency>,
) -> SessionEnd {
    let record = &run.record;
    if completion.complete {
        crate::memory::remember(state_dir, &report, &record.out, utc_rfc3339(now_secs()));
        set_state(&run.dir, record, RunState::Finished, None);
        return SessionEnd::Finished(Box::new(report), efficiency);
    }
    let reason = completion.incomplete_reason.unwrap_or_default();
    let shortfall = shortfall.unwrap_or(Shortfall::Budget);
    if shortfall == Shortfall::Unavailable {
        set_state_labelled(
            &run.dir,
            record,
            RunState::Incomplete,
            Some(reason.clone()),
            Some("provider unavailable"),
        );
        run.reporter
            .warn(&format!("deepr: {reason} The report is marked incomplete."));
    } else {
        set_state(&run.dir, record, RunState::Incomplete, Some(reason.clone()));
        run.reporter.stopped(
            &record.run_id,
            &format!("{reason} The report is marked incomplete."),
            Resume::LargerBudget,
        );
    }
    SessionEnd::Incomplete {
        shortfall,
        reason,
        report: Box::new(report),
    }
}
