//! One session of a run — the first (`deepr run`) or a later one (`deepr resume`).
//!
//! A session owns the run's lifecycle: it opens the run's checkpoint store (refusing,
//! with the holder's pid, a run another process is executing), indexes the corpus, has
//! [`crate::wiring`] build the providers, optionally prints the drift plan, runs the
//! pipeline with Ctrl-C/SIGTERM handling, and has [`crate::reports`] write the report:
//! complete (exit 0), incomplete because a budget stopped it (exit 4) or because a
//! provider stayed unavailable (exit 5), none because a provider refused the key
//! (exit 6) or because it was interrupted (exit 130/143). Every one of them resumes.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use deepr_checkpoints::FileArchive;
use deepr_orchestrator::executor::NoProgress;
use deepr_orchestrator::{
    Budget, CheckpointStore, Executor, PlanAction, StopReason, Unfinished, UsageLedger,
};
use deepr_providers::CorpusIndex;
use deepr_stages::render::Completion;
use deepr_stages::{run_research, ResearchConfig, ResearchError};

use crate::progress::Reporter;
use crate::record::{now_secs, run_dir, write_owner, write_run_file, RunFile, RunRecord, RunState};
use crate::util::{utc_rfc3339, write_atomically};
use crate::wiring::{BudgetLimits, FleetLink, Wiring};
use crate::{usage, Failure};

/// How this session runs (what may differ between sessions of one run).
pub struct SessionOptions {
    pub quiet: bool,
    /// `--json`: progress as one JSON object per line on stdout.
    pub json: bool,
    /// `None`: the run's own setting.
    pub concurrency: Option<usize>,
    /// Overrides the run's `io_concurrency` for this session.
    pub io_concurrency: Option<usize>,
    /// Recompute nodes whose model answer degraded to the heuristic (and what follows).
    pub retry_degraded: bool,
    pub max_tokens: Option<u64>,
    pub max_cost: Option<f64>,
    pub max_time: Option<Duration>,
    /// Resume only: print the plan and stop.
    pub dry_run: bool,
    /// Lines to show once the run has started (the estimate, budget warnings).
    pub notices: Vec<String>,
}

impl SessionOptions {
    /// A session no one watches (a bench cell, a fleet worker's run): quiet, the run's
    /// own settings, these budgets.
    pub fn unattended(
        max_tokens: Option<u64>,
        max_cost: Option<f64>,
        max_time: Option<Duration>,
    ) -> Self {
        Self {
            quiet: true,
            json: false,
            concurrency: None,
            io_concurrency: None,
            retry_degraded: false,
            max_tokens,
            max_cost,
            max_time,
            dry_run: false,
            notices: Vec::new(),
        }
    }
}

/// Which run a session works on.
pub enum Start {
    /// A new run: its record is written before anything else.
    New(Box<RunRecord>),
    /// An existing run: its record is read from its store.
    Resume(String),
}

pub fn execute(state_dir: &Path, start: Start, options: SessionOptions) -> Result<u8, Failure> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(session(state_dir, start, options, None))
}

fn set_state(dir: &Path, record: &RunRecord, state: RunState, note: Option<String>) {
    set_state_labelled(dir, record, state, note, None);
}

/// Like [`set_state`], with the short cause `runs list` shows beside the state
/// (`incomplete (provider unavailable)`, `failed (auth)`).
fn set_state_labelled(
    dir: &Path,
    record: &RunRecord,
    state: RunState,
    note: Option<String>,
    label: Option<&str>,
) {
    let file = RunFile {
        record: record.clone(),
        state,
        note,
        label: label.map(String::from),
        updated: now_secs(),
    };
    // run.json is a convenience copy for `runs list`; the store is authoritative.
    let _ = write_run_file(dir, &file);
}

/// One session of a run; `fleet`: on a worker, with the fleet's store and journal.
pub async fn session(
    state_dir: &Path,
    start: Start,
    options: SessionOptions,
    fleet: Option<FleetLink>,
) -> Result<u8, Failure> {
    let run_id = match &start {
        Start::New(record) => record.run_id.clone(),
        Start::Resume(run_id) => run_id.clone(),
    };
    // The tokenizer loads while the store, the corpus and the scout do their work.
    let _warm = tokio::task::spawn_blocking(deepr_orchestrator::tokens::warm_up);
    let dir = run_dir(state_dir, &run_id);
    if fleet.is_some() {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let store: Arc<dyn CheckpointStore> = match &fleet {
        Some(link) => Arc::clone(&link.store),
        None => Arc::new(crate::record::open_store(&dir, &run_id).await?),
    };
    let (mut record, first) = match start {
        Start::New(record) => (*record, true),
        Start::Resume(_) => (
            crate::record::stored_record(store.as_ref(), &run_id)?,
            false,
        ),
    };
    if let Some(link) = &fleet {
        record.out = link.out.clone();
    }
    let record = &record;
    let concurrency = options.concurrency.unwrap_or(record.concurrency);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("run.log"))
        .ok();
    let reporter = Arc::new(Reporter::new(options.quiet, options.json, log));
    if !options.dry_run {
        write_owner(&dir).context("cannot record the run's owner")?;
    }
    if first {
        // The run record goes first, flushed, before any other work (indexing included).
        set_state(&dir, record, RunState::Running, None);
        let value = serde_json::to_value(record).context("cannot serialise the run record")?;
        store
            .put_meta("run", &value)
            .await
            .context("cannot record the run")?;
        reporter.log_line(&format!("run record: {value}"));
    } else if !options.dry_run {
        set_state(&dir, record, RunState::Running, None);
        reporter.log_line("resume");
    }

    let mut archive = FileArchive::open(state_dir).context("cannot open the text archive")?;
    if let Some(link) = &fleet {
        archive = archive.with_mirror(Arc::clone(&link.archive));
    }
    let archive = Arc::new(archive);
    let opened = match &record.corpus {
        Some(corpus) => {
            match CorpusIndex::open_with(corpus, state_dir, &archive, record.follow_links) {
                Ok(opened) => Some(opened),
                Err(error) => {
                    if first {
                        // A corpus that cannot be used is bad input: the run never started, so
                        // its just-created folder goes (no other run is touched).
                        drop(store);
                        let _ = std::fs::remove_dir_all(&dir);
                    } else {
                        set_state(&dir, record, RunState::Failed, Some(error.to_string()));
                    }
                    return Err(usage(error.to_string()));
                }
            }
        }
        None => None,
    };
    for notice in &options.notices {
        reporter.say(notice);
    }
    if first {
        if let Some(past) =
            crate::memory::close_to(state_dir, &record.topic).filter(|m| m.run_id != record.run_id)
        {
            reporter.say(&format!(
                "deepr: a past run researched a close topic: {} ({}) — {}",
                past.run_id,
                crate::memory::day(&past.date),
                past.report
            ));
        }
    }
    if options.json {
        reporter.event(serde_json::json!({"event": "run", "run_id": record.run_id, "topic": record.topic, "resumed": !first}));
    } else if !options.quiet {
        errln!("deepr: run {} — {}", record.run_id, record.topic);
    }
    let mut index = None;
    let mut corpus_files = None;
    if let (Some((opened, report)), Some(corpus)) = (opened, &record.corpus) {
        corpus_files = Some(crate::reports::corpus_files(&report));
        for (path, what) in &report.partial {
            reporter.say(&format!("deepr: read in part {path}: {what}"));
        }
        reporter.say(&format!(
            "deepr: corpus {}: {} documents ({} indexed now, {} reused), {} skipped",
            corpus.display(),
            report.extracted.len() + report.reused.len(),
            report.extracted.len(),
            report.reused.len(),
            report.skipped.len()
        ));
        for (path, why) in &report.skipped {
            reporter.say(&format!("deepr: skipped {path}: {why}"));
        }
        index = Some(Arc::new(opened));
    }
    let wired = crate::wiring::wire(
        record,
        state_dir,
        &dir,
        &BudgetLimits {
            max_tokens: options.max_tokens,
            max_cost: options.max_cost,
            max_time: options.max_time,
        },
        &archive,
        index,
        fleet.as_ref().map(|link| crate::wiring::SharedCalls {
            answers: Arc::clone(&link.answers),
            calls: Arc::clone(&link.calls),
            spent: link.spent,
            rate: Arc::clone(&link.rate),
        }),
    );
    let Wiring {
        providers,
        budget,
        search_fingerprint,
    } = match wired {
        Ok(wiring) => wiring,
        Err(failure) => {
            // A resume that cannot be wired (its recorded model gone, say) is not left
            // "running" with no owner.
            if !first && !options.dry_run {
                let why = match &failure {
                    Failure::Usage(message) => message.clone(),
                    Failure::Run(error) => format!("{error:#}"),
                };
                set_state(&dir, record, RunState::Failed, Some(why));
            }
            return Err(failure);
        }
    };
    let config = ResearchConfig {
        topic: record.topic.clone(),
        depth: record.depth,
        strategy: record.strategy,
        search_fingerprint,
        io_concurrency: options.io_concurrency.unwrap_or(record.io_concurrency),
        model_pool: record.model_pool,
        corpus_files,
    };

    if !first {
        // Say what resuming will restore, recompute (and why) or run — before spending.
        let plan = Arc::new(Mutex::new(Vec::new()));
        let planner = Executor {
            store: Arc::clone(&store),
            ledger: Arc::new(UsageLedger::default()),
            progress: Arc::new(NoProgress),
            concurrency,
            stop: Arc::new(AtomicBool::new(false)),
            budget: Budget::unlimited(),
            plan: Some(Arc::clone(&plan)),
            retry_degraded: options.retry_degraded,
        };
        let ends = match run_research(&config, &providers, &planner).await {
            Err(ResearchError::PlanEnds(node)) => Some(node),
            _ => None,
        };
        let steps = plan.lock().map(|s| s.clone()).unwrap_or_default();
        crate::reports::print_plan(&reporter, &steps, ends.as_deref());
        if options.dry_run {
            if options.quiet {
                // --dry-run's plan is its output, even with --quiet.
                let restored = steps
                    .iter()
                    .filter(|s| s.action == PlanAction::Restore)
                    .count();
                outln!("{restored} restored, {} to run", steps.len() - restored);
            }
            return Ok(0);
        }
    }

    let ledger = Arc::new(UsageLedger::default());
    let signalled = Arc::new(AtomicU8::new(0));
    let stop = match &fleet {
        // The worker owns the signals (and stops every run it holds).
        Some(link) => Arc::clone(&link.stop),
        None => {
            // First Ctrl-C / SIGTERM: stop starting work (running steps finish and are
            // checkpointed). Second: exit at once — the store stays consistent because
            // every checkpoint is one atomic batch.
            let stop = Arc::new(AtomicBool::new(false));
            let (flag, code) = (Arc::clone(&stop), Arc::clone(&signalled));
            let run_id = record.run_id.clone();
            crate::signals::on_interrupt(
                move |signal| {
                    code.store(signal, Ordering::SeqCst);
                    flag.store(true, Ordering::SeqCst);
                    errln!("\ndeepr: stopping — letting running steps finish and checkpoint (press Ctrl-C again to quit at once)");
                },
                move |_| errln!("\ndeepr: stopped at once. resume with: deepr resume {run_id}"),
            );
            stop
        }
    };
    let fleet_stop = fleet.as_ref().map(|link| Arc::clone(&link.stop));
    let executor = Executor {
        store: Arc::clone(&store),
        ledger: Arc::clone(&ledger),
        progress: reporter.clone(),
        concurrency,
        stop,
        budget: Arc::clone(&budget),
        plan: None,
        retry_degraded: options.retry_degraded,
    };
    let started = Instant::now();
    let outcome = run_research(&config, &providers, &executor).await;
    let pipeline_wall = started.elapsed().as_secs_f64();
    reporter.finish();
    // The bound covers the nodes this session ran; a session that restored some has
    // no meaningful one (their calls happened before it started), so it writes none.
    if let Some(result) = outcome.as_ref().ok().filter(|r| r.restored_nodes == 0) {
        let efficiency = crate::reports::efficiency(
            store.as_ref(),
            concurrency,
            config.io_concurrency,
            pipeline_wall,
            result.restored_nodes,
        );
        if let Ok(bytes) = serde_json::to_vec_pretty(&efficiency) {
            let _ = write_atomically(&dir.join("efficiency.json"), &bytes);
        }
    } else {
        let _ = std::fs::remove_file(dir.join("efficiency.json"));
    }

    let (result, completion, stop) = match outcome {
        Ok(result) => (
            result,
            Completion {
                complete: true,
                incomplete_reason: None,
            },
            None,
        ),
        Err(ResearchError::Stopped { reason, partial }) => {
            let mut code = signalled.load(Ordering::SeqCst);
            if reason == StopReason::Interrupted
                && fleet_stop
                    .as_ref()
                    .is_some_and(|s| s.load(Ordering::SeqCst))
            {
                code = 130;
            }
            if code != 0 {
                set_state(
                    &dir,
                    record,
                    RunState::Interrupted,
                    Some("interrupted".into()),
                );
                errln!(
                    "deepr: interrupted; checkpoints are saved. resume with: deepr resume {}",
                    record.run_id
                );
                return Ok(code);
            }
            match &reason {
                StopReason::Unfinished(Unfinished::AuthFailed { provider, message }) => {
                    // Nothing works until the key is fixed: no report, state kept.
                    let var = crate::wiring::key_variable(provider);
                    set_state_labelled(
                        &dir,
                        record,
                        RunState::Failed,
                        Some(format!("{provider} refused the credentials: {message}")),
                        Some("auth"),
                    );
                    errln!(
                        "deepr: {provider} refused the credentials in {var} ({message}); finished steps are kept. Fix {var}, then: deepr resume {}",
                        record.run_id
                    );
                    return Ok(EXIT_AUTH);
                }
                StopReason::Unfinished(Unfinished::ProviderUnavailable { .. }) => {
                    let why = format!("Stopped early: {reason}. Finished steps are kept; resume the run when the provider answers again (deepr resume {}) to finish the report.", record.run_id);
                    (
                        *partial,
                        Completion {
                            complete: false,
                            incomplete_reason: Some(why),
                        },
                        Some(Stop::Unavailable),
                    )
                }
                _ => {
                    let why = format!("Stopped early: {reason}. Resume the run with a larger budget to finish the report.");
                    (
                        *partial,
                        Completion {
                            complete: false,
                            incomplete_reason: Some(why),
                        },
                        Some(Stop::Budget),
                    )
                }
            }
        }
        Err(error) => {
            set_state(&dir, record, RunState::Failed, Some(error.to_string()));
            return Err(Failure::Run(
                anyhow::Error::new(error).context("research run failed"),
            ));
        }
    };

    crate::reports::write_reports(
        state_dir,
        record,
        &config,
        &result,
        &completion,
        &ledger,
        archive.as_ref(),
        started,
        &reporter,
    )?;
    if completion.complete {
        if let Ok(bytes) = std::fs::read(record.out.with_extension("json")) {
            if let Ok(report) = serde_json::from_slice::<deepr_evidence::report::Report>(&bytes) {
                crate::memory::remember(state_dir, &report, &record.out, utc_rfc3339(now_secs()));
            }
        }
        set_state(&dir, record, RunState::Finished, None);
        Ok(0)
    } else {
        let reason = completion.incomplete_reason.unwrap_or_default();
        if stop == Some(Stop::Unavailable) {
            set_state_labelled(
                &dir,
                record,
                RunState::Incomplete,
                Some(reason.clone()),
                Some("provider unavailable"),
            );
            errln!("deepr: {reason} The report is marked incomplete.");
            return Ok(EXIT_UNAVAILABLE);
        }
        set_state(&dir, record, RunState::Incomplete, Some(reason.clone()));
        errln!("deepr: {reason} The report is marked incomplete. resume with: deepr resume {} --max-tokens N", record.run_id);
        Ok(4)
    }
}

/// Exit code of a run stopped because a provider stayed unavailable (resumable).
pub const EXIT_UNAVAILABLE: u8 = 5;
/// Exit code of a run stopped because a provider refused the credentials (resumable
/// once the key is fixed).
pub const EXIT_AUTH: u8 = 6;

/// How a run that did not finish stopped (beyond an interrupt).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Budget,
    Unavailable,
}
