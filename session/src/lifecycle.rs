//! One session of a run — the first (`deepr run`) or a later one (`deepr resume`).
//!
//! A session owns the run's lifecycle, one function per phase: open the run's
//! checkpoint store (refusing, with the holder's pid, a run another process is
//! executing) and record ([`crate::opened`]), [`read_corpus`], [`wire`] the providers
//! ([`crate::wiring`]), [`plan`] (a resume prints what it restores), run the pipeline
//! under Ctrl-C/SIGTERM and settle the outcome ([`crate::outcome`]), and have
//! [`crate::reports`] write the report. It ends in a [`SessionEnd`]: finished, incomplete because a budget stopped it or because a
//! provider stayed unavailable, no report because a provider refused the key or
//! because it was interrupted. Every one of them resumes.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use deepr_checkpoints::FileArchive;
use deepr_orchestrator::executor::NoProgress;
use deepr_orchestrator::{Budget, Executor, PreviewAction, UsageLedger};
use deepr_providers::CorpusIndex;
use deepr_stages::{run_research, ResearchConfig, ResearchError};

use crate::opened::{set_state, OpenRun};
use crate::options::{SessionOptions, Start};
use crate::record::RunState;
use crate::wiring::{BudgetLimits, FleetLink, Wiring};
use crate::{usage, Failure, SessionEnd};

pub fn execute(
    state_dir: &Path,
    start: Start,
    options: SessionOptions,
) -> Result<SessionEnd, Failure> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(session(state_dir, start, options, None))
}

/// One session of a run; `fleet`: on a worker, with the fleet's store and journal.
/// Open → read the corpus → wire → plan (a resume) → execute → settle.
pub async fn session(
    state_dir: &Path,
    start: Start,
    options: SessionOptions,
    fleet: Option<FleetLink>,
) -> Result<SessionEnd, Failure> {
    // The tokenizer loads while the store, the corpus and the scout do their work.
    let _warm = tokio::task::spawn_blocking(deepr_orchestrator::tokens::warm_up);
    let run = crate::opened::open(state_dir, start, &options, fleet.as_ref()).await?;
    let mut archive = FileArchive::open(state_dir).context("cannot open the text archive")?;
    if let Some(link) = &fleet {
        archive = archive.with_mirror(Arc::clone(&link.archive));
    }
    let archive = Arc::new(archive);
    let corpus = read_corpus(state_dir, &run, &archive)?;
    announce(state_dir, &run, &options);
    let corpus = corpus.map(|(index, report)| {
        say_corpus(&run, &report);
        (index, crate::reports::corpus_files(&report))
    });
    let (index, corpus_files) = corpus.unzip();
    let corpus_documents = index.as_ref().map(|i| i.documents()).unwrap_or_default();
    let Wiring {
        providers,
        budget,
        search_fingerprint,
    } = providers_for(state_dir, &run, &options, &archive, index, fleet.as_ref())?;
    keep_sources_seen(&run, &search_fingerprint, &corpus_documents);
    let mut config = research_config(&run, &options, search_fingerprint, corpus_files);
    config.parent_reading =
        crate::lineage::parent_reading(state_dir, &run.dir, &run.record, &corpus_documents)?
            .map(Arc::new);
    if !run.first && preview(&run, &config, &providers, &options).await {
        return Ok(SessionEnd::Previewed);
    }
    if let Some(target) = &run.record.plan_only {
        let end = crate::plan_only::write_plan(
            &run,
            &config,
            &providers,
            budget,
            &options,
            fleet.as_ref(),
            target,
        );
        return end.await;
    }
    let executed = crate::outcome::execute_pipeline(
        &run,
        &config,
        &providers,
        budget,
        &options,
        fleet.as_ref(),
    )
    .await;
    let settled = crate::outcome::settle(&run, executed.outcome, executed.signal)?;
    let (result, completion, shortfall) = match settled {
        crate::outcome::Settled::Ended(end) => return Ok(end),
        crate::outcome::Settled::Report(result, completion, shortfall) => {
            (result, completion, shortfall)
        }
    };
    let report = crate::reports::write_reports(
        state_dir,
        &run.record,
        &config,
        &result,
        &completion,
        &executed.ledger,
        archive.as_ref(),
        executed.started,
        &run.reporter,
    )?;
    Ok(crate::outcome::close(
        state_dir,
        &run,
        report,
        completion,
        shortfall,
        executed.efficiency,
    ))
}

/// What the pipeline is given: the run's record, this session's overrides, what the
/// search providers search and the corpus files read.
fn research_config(
    run: &OpenRun,
    options: &SessionOptions,
    search_fingerprint: String,
    corpus_files: Option<deepr_evidence::report::CorpusFiles>,
) -> ResearchConfig {
    ResearchConfig {
        topic: run.record.topic.clone(),
        depth: run.record.depth,
        strategy: run.record.strategy,
        search_fingerprint,
        io_concurrency: options.io_concurrency.unwrap_or(run.record.io_concurrency),
        model_pool: run.record.model_pool,
        reading: run.record.reading,
        corpus_files,
        user_plan: run.record.user_plan.clone(),
        shape: match &run.record.lineage {
            Some(lineage) if lineage.relation == crate::record::Relation::Ask => {
                deepr_stages::research::ReportShape::Answer
            }
            _ => deepr_stages::research::ReportShape::Article,
        },
        parent_reading: None,
    }
}

/// What the sources held when the run began, kept once: a resume, a dry run or a
/// re-render never rewrites it (a refresh compares against it).
fn keep_sources_seen(
    run: &OpenRun,
    search_fingerprint: &str,
    corpus_documents: &[deepr_orchestrator::DocMeta],
) {
    if !run.first {
        return;
    }
    let seen = crate::lineage::SourcesSeen::new(search_fingerprint, corpus_documents);
    if let Err(why) = seen.write(&run.dir) {
        run.reporter.say(&format!(
            "deepr: cannot keep what the sources held ({why}); a later refresh --if-changed will refresh anyway"
        ));
    }
}

/// The run's corpus, indexed (unchanged files reused). A corpus that cannot be used is
/// bad input: a new run's just-created folder goes (no other run is touched), a
/// resumed run is marked failed.
fn read_corpus(
    state_dir: &Path,
    run: &OpenRun,
    archive: &Arc<FileArchive>,
) -> Result<Option<(Arc<CorpusIndex>, deepr_providers::CorpusScan)>, Failure> {
    // A corpus no source searches (a follow-up reading its parent's documents) is not
    // read: it may have moved since, and nothing here needs it.
    let searched = run.record.sources.iter().any(|s| s == "corpus");
    let Some(corpus) = run.record.corpus.as_ref().filter(|_| searched) else {
        return Ok(None);
    };
    match CorpusIndex::open_with(corpus, state_dir, archive, run.record.follow_links) {
        Ok((index, report)) => Ok(Some((Arc::new(index), report))),
        Err(error) => {
            if run.first {
                let _ = std::fs::remove_dir_all(&run.dir);
            } else {
                set_state(
                    &run.dir,
                    &run.record,
                    RunState::Failed,
                    Some(error.to_string()),
                );
            }
            Err(usage(error.to_string()))
        }
    }
}

/// The session's opening lines: notices, a close past run (a new run only), the run.
fn announce(state_dir: &Path, run: &OpenRun, options: &SessionOptions) {
    let record = &run.record;
    for notice in &options.notices {
        run.reporter.say(notice);
    }
    if run.first {
        if let Some(past) =
            crate::memory::close_to(state_dir, &record.topic).filter(|m| m.run_id != record.run_id)
        {
            run.reporter.say(&format!(
                "deepr: a past run researched a close topic: {} ({}) — {}",
                past.run_id,
                crate::memory::day(&past.date),
                past.report
            ));
        }
    }
    run.reporter.event(serde_json::json!({"event": "run", "run_id": record.run_id, "topic": record.topic, "resumed": !run.first}));
}

/// What indexing the corpus read, read in part and skipped.
fn say_corpus(run: &OpenRun, report: &deepr_providers::CorpusScan) {
    let reporter = &run.reporter;
    for (path, what) in &report.partial {
        reporter.say(&format!("deepr: read in part {path}: {what}"));
    }
    let corpus = run.record.corpus.as_deref().unwrap_or(Path::new(""));
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
}

/// The providers for this session. A resume that cannot be wired (its recorded model
/// gone, say) is marked failed, not left "running" with no owner.
fn providers_for(
    state_dir: &Path,
    run: &OpenRun,
    options: &SessionOptions,
    archive: &Arc<FileArchive>,
    index: Option<Arc<CorpusIndex>>,
    fleet: Option<&FleetLink>,
) -> Result<Wiring, Failure> {
    let limits = BudgetLimits {
        max_tokens: options.max_tokens,
        max_cost: options.max_cost,
        max_time: options.max_time,
    };
    let shared = fleet.map(|link| crate::wiring::SharedCalls {
        answers: Arc::clone(&link.answers),
        calls: Arc::clone(&link.calls),
        spent: link.spent,
        rate: Arc::clone(&link.rate),
    });
    let wired = crate::wiring::wire(
        &run.record,
        state_dir,
        &run.dir,
        &limits,
        archive,
        index,
        shared,
    );
    if let Err(failure) = &wired {
        if !run.first && !options.dry_run {
            let why = match failure {
                Failure::Usage(message) => message.clone(),
                Failure::Run(error) => format!("{error:#}"),
            };
            set_state(&run.dir, &run.record, RunState::Failed, Some(why));
        }
    }
    wired
}

/// A resume says what it will restore, recompute (and why) or run — before spending.
/// True when that is all it does (`--dry-run`).
async fn preview(
    run: &OpenRun,
    config: &ResearchConfig,
    providers: &deepr_stages::ResearchProviders,
    options: &SessionOptions,
) -> bool {
    let preview = Arc::new(Mutex::new(Vec::new()));
    let previewer = Executor {
        store: Arc::clone(&run.store),
        ledger: Arc::new(UsageLedger::default()),
        progress: Arc::new(NoProgress),
        concurrency: run.concurrency,
        stop: Arc::new(AtomicBool::new(false)),
        budget: Budget::unlimited(),
        preview: Some(Arc::clone(&preview)),
        retry_degraded: options.retry_degraded,
    };
    let ends = match run_research(config, providers, &previewer).await {
        Err(ResearchError::PreviewEnds(node)) => Some(node),
        _ => None,
    };
    let steps = preview.lock().map(|s| s.clone()).unwrap_or_default();
    crate::reports::say_preview(&run.reporter, &steps, ends.as_deref());
    if options.dry_run {
        // --dry-run's preview is its output (a front end shows it even when quiet).
        let restored = steps
            .iter()
            .filter(|s| s.action == PreviewAction::Restore)
            .count();
        run.reporter.event(serde_json::json!({"event": "dry_run", "restored": restored, "to_run": steps.len() - restored}));
    }
    options.dry_run
}
