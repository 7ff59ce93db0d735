//! One session of a run — the first (`deepr run`) or a later one (`deepr resume`).
//!
//! A session opens the run's checkpoint store (refusing, with the holder's pid, a run
//! another process is executing), indexes the corpus, stacks the model providers
//! (offline model → budget → response cache + call journal), optionally prints the
//! drift plan, runs the pipeline with Ctrl-C/SIGTERM handling, and writes the report:
//! complete (exit 0), incomplete because a budget stopped it (exit 4) or because a
//! provider stayed unavailable (exit 5), none because a provider refused the key
//! (exit 6) or because it was interrupted (exit 130/143). Every one of them resumes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use deepr_checkpoints::{CachedLlm, CallJournal, FileArchive, ResponseCache, SledStore};
use deepr_orchestrator::executor::NoProgress;
use deepr_orchestrator::{
    Budget, BudgetedLlm, CheckpointStore, Executor, LlmProvider, PlanAction, PlanStep, StopReason,
    StoreError, Unfinished, UsageLedger,
};
use deepr_prompts::PromptSet;
use deepr_providers::llm::Api;
use deepr_providers::{CorpusFetcher, CorpusIndex, CorpusSearch, LlmSpec, RemoteLlm};
use deepr_stages::render::{build_report, render_markdown, Completion, RunDetails};
use deepr_stages::{
    run_research, ResearchConfig, ResearchError, ResearchProviders, ResearchResult,
};

use crate::progress::Reporter;
use crate::record::{
    now_secs, process_alive, read_owner, run_dir, write_owner, write_run_file, RunFile, RunRecord,
    RunState,
};
use crate::util::{utc_rfc3339, write_atomically};
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
    runtime.block_on(session(state_dir, start, options))
}

/// Open a run's store; a store held by a live process names it, a damaged one names
/// its file. sled can panic on garbage, so the open runs in its own task.
pub async fn open_store(dir: &Path, run_id: &str) -> Result<SledStore, Failure> {
    let path = dir.join("checkpoints.sled");
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = tokio::spawn({
        let path = path.clone();
        async move { SledStore::open(&path).await }
    })
    .await;
    std::panic::set_hook(previous_hook);
    match opened {
        Ok(Ok(store)) => Ok(store),
        Ok(Err(StoreError::Locked(_))) => {
            let holder = match read_owner(dir) {
                Some(owner) if process_alive(owner.pid) => format!("process {} (running since {})", owner.pid, utc_rfc3339(owner.started)),
                _ => "another process".to_string(),
            };
            Err(usage(format!("run {run_id} is being executed by {holder}; wait for it to finish or stop it, then resume")))
        }
        Ok(Err(error)) => Err(Failure::Run(anyhow::anyhow!(
            "checkpoint store {} is damaged ({error}); other runs are unaffected — start a new run, or remove this one with `deepr runs rm {run_id}`",
            path.display()
        ))),
        Err(_) => Err(Failure::Run(anyhow::anyhow!(
            "checkpoint store {} is damaged (it could not be read); other runs are unaffected — start a new run, or remove this one with `deepr runs rm {run_id}`",
            path.display()
        ))),
    }
}

/// The built-in prompts with the run's overrides (`<id>.txt` in its prompts folder).
pub fn load_prompts(dir: Option<&Path>) -> Result<PromptSet, Failure> {
    let mut prompts = PromptSet::default();
    let Some(dir) = dir else { return Ok(prompts) };
    let entries = std::fs::read_dir(dir).map_err(|e| {
        usage(format!(
            "cannot read prompts folder {}: {e}; check the --prompts path",
            dir.display()
        ))
    })?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    for file in files {
        let id = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let text = std::fs::read_to_string(&file)
            .map_err(|e| usage(format!("cannot read prompt {}: {e}", file.display())))?;
        prompts
            .set_template(&id, text)
            .map_err(|e| usage(format!("{}: {e}", file.display())))?;
    }
    Ok(prompts)
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

fn print_plan(reporter: &Reporter, steps: &[PlanStep], ends: Option<&str>) {
    let restored = steps
        .iter()
        .filter(|s| s.action == PlanAction::Restore)
        .count();
    let fresh = steps.iter().filter(|s| s.action == PlanAction::Run).count();
    let mut recompute: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for step in steps {
        if let PlanAction::Recompute(reason) = &step.action {
            recompute
                .entry(reason.as_str())
                .or_default()
                .push(step.node.as_str());
        }
    }
    let recomputed: usize = recompute.values().map(Vec::len).sum();
    reporter.say(&format!("deepr: plan: {restored} step(s) restored from checkpoints, {recomputed} recomputed, {fresh} not finished yet"));
    for (reason, nodes) in &recompute {
        let shown: Vec<&str> = nodes.iter().take(6).copied().collect();
        let more = if nodes.len() > shown.len() {
            format!(" and {} more", nodes.len() - shown.len())
        } else {
            String::new()
        };
        reporter.say(&format!(
            "deepr:   recompute {} — {reason}: {}{more}",
            nodes.len(),
            shown.join(", ")
        ));
    }
    if let Some(node) = ends {
        reporter.say(&format!(
            "deepr:   then every step that depends on the new output of {node}"
        ));
    }
}

/// The run record from the store (authoritative; flushed before the run did any work).
fn stored_record(store: &SledStore, run_id: &str) -> Result<RunRecord, Failure> {
    let value = store
        .get_meta("run")
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot read run {run_id}'s record: {e}")))?
        .ok_or_else(|| {
            usage(format!(
                "run {run_id} has no record (it was stopped before it started); start a new run"
            ))
        })?;
    serde_json::from_value(value).map_err(|e| {
        Failure::Run(anyhow::anyhow!(
            "run {run_id}'s record is from another deepr version or damaged ({e}); start a new run"
        ))
    })
}

async fn session(state_dir: &Path, start: Start, options: SessionOptions) -> Result<u8, Failure> {
    let run_id = match &start {
        Start::New(record) => record.run_id.clone(),
        Start::Resume(run_id) => run_id.clone(),
    };
    // The tokenizer loads while the store, the corpus and the scout do their work.
    let _warm = tokio::task::spawn_blocking(deepr_orchestrator::tokens::warm_up);
    let dir = run_dir(state_dir, &run_id);
    let store = open_store(&dir, &run_id).await?;
    let (record, first) = match start {
        Start::New(record) => (*record, true),
        Start::Resume(_) => (stored_record(&store, &run_id)?, false),
    };
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

    let archive = Arc::new(FileArchive::open(state_dir).context("cannot open the text archive")?);
    let opened = match &record.corpus {
        Some(corpus) => match CorpusIndex::open(corpus, state_dir, &archive) {
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
        },
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
    let mut fingerprint = blake3::Hasher::new();
    let mut index = None;
    if let (Some((opened, report)), Some(corpus)) = (opened, &record.corpus) {
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
        for doc in opened.documents() {
            // Everything a stage reads of a document: a changed title or date recomputes too.
            for part in [
                doc.doc_key.as_str(),
                &doc.content_sha256,
                &doc.title,
                doc.date.as_deref().unwrap_or(""),
            ] {
                fingerprint.update(part.as_bytes());
                fingerprint.update(b"\0");
            }
        }
        index = Some(Arc::new(opened));
    }
    for source in &record.sources {
        fingerprint.update(
            format!(
                "source:{source}:{}\0",
                record
                    .source_urls
                    .get(source)
                    .map(String::as_str)
                    .unwrap_or("")
            )
            .as_bytes(),
        );
    }
    let prompts = Arc::new(load_prompts(record.prompts.as_deref())?);

    let journal_path = dir.join("calls.jsonl");
    let (spent_tokens, spent_usd) = CallJournal::spent(&journal_path);
    let budget = Budget::new(
        options.max_tokens,
        options.max_cost,
        options.max_time,
        spent_tokens,
        spent_usd,
    );
    let cache = Arc::new(ResponseCache::open(state_dir).context("cannot open the response cache")?);
    let journal =
        Arc::new(CallJournal::open(&journal_path).context("cannot open the call journal")?);
    let prices = Arc::new(
        deepr_providers::PriceTable::with_overrides(&record.prices)
            .map_err(|e| usage(format!("config prices: {e}")))?,
    );
    let mut models: BTreeMap<String, Arc<dyn LlmProvider>> = BTreeMap::new();
    for spec in [&record.llm_strong, &record.llm_cheap] {
        if models.contains_key(spec.as_str()) {
            continue; // one provider (one limiter) when both tiers use the same model
        }
        let model = model_stack(record, spec, &budget, &cache, &journal, &prices)?;
        models.insert(spec.clone(), model);
    }
    let strong = Arc::clone(&models[record.llm_strong.as_str()]);
    let cheap = Arc::clone(&models[record.llm_cheap.as_str()]);
    let timeout = Duration::from_secs(30);
    let web_cache = deepr_providers::WebCache {
        cache: Arc::clone(&cache),
        namespace: record.run_id.clone(),
    };
    let search_latency = record.search_latency()?;
    let mut searches: Vec<Arc<dyn deepr_orchestrator::SearchProvider>> = Vec::new();
    for source in &record.sources {
        let provider: Arc<dyn deepr_orchestrator::SearchProvider> = if source == "corpus" {
            let Some(index) = &index else {
                return Err(usage("--sources corpus needs --corpus DIR"));
            };
            Arc::new(CorpusSearch(Arc::clone(index)))
        } else {
            let api = deepr_providers::WebApi::parse(source)
                .ok_or_else(|| usage(format!("source {source:?} is unknown; use corpus, wikipedia, arxiv, hn, searxng, brave, tavily")))?;
            let key = api.key_var().and_then(|var| std::env::var(var).ok());
            Arc::new(
                deepr_providers::WebSearch::new(
                    api,
                    record.source_urls.get(source).map(String::as_str),
                    key,
                    timeout,
                )
                .map_err(usage)?
                .with_cache(web_cache.clone()),
            )
        };
        searches.push(if !search_latency.is_zero() {
            Arc::new(deepr_orchestrator::simulate::SlowSearch {
                inner: provider,
                latency: search_latency,
                seed: record.simulation.seed,
            })
        } else {
            provider
        });
    }
    let corpus_fetcher: Option<Arc<dyn deepr_orchestrator::Fetcher>> = index
        .as_ref()
        .map(|i| Arc::new(CorpusFetcher(Arc::clone(i))) as Arc<dyn deepr_orchestrator::Fetcher>);
    let web_fetcher: Option<Arc<dyn deepr_orchestrator::Fetcher>> =
        if record.sources.iter().any(|s| s != "corpus") {
            Some(Arc::new(
                deepr_providers::WebFetcher::new(
                    archive.clone(),
                    record.allow_hosts.clone(),
                    timeout,
                    20 << 20,
                    8,
                )
                .map_err(|e| Failure::Run(anyhow::anyhow!(e)))?
                .with_cache(web_cache.clone()),
            ))
        } else {
            None
        };
    let mut fetcher: Arc<dyn deepr_orchestrator::Fetcher> =
        Arc::new(deepr_providers::RoutingFetcher {
            corpus: corpus_fetcher,
            web: web_fetcher,
        });
    let fetch_latency = record.fetch_latency()?;
    if !fetch_latency.is_zero() {
        fetcher = Arc::new(deepr_orchestrator::simulate::SlowFetcher {
            inner: fetcher,
            latency: fetch_latency,
            seed: record.simulation.seed,
        });
    }
    let providers = ResearchProviders {
        strong,
        cheap,
        // An unusable answer is replaced by the heuristic's: local, free, instant.
        fallback: Arc::new(deepr_heuristic::HeuristicModel::default()),
        search: searches,
        fetcher,
        archive: archive.clone(),
        prompts,
    };
    let config = ResearchConfig {
        topic: record.topic.clone(),
        depth: record.depth,
        strategy: record.strategy,
        search_fingerprint: fingerprint.finalize().to_hex().to_string(),
        io_concurrency: options.io_concurrency.unwrap_or(record.io_concurrency),
    };
    let store: Arc<dyn CheckpointStore> = Arc::new(store);

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
        print_plan(&reporter, &steps, ends.as_deref());
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
    let stop = Arc::new(AtomicBool::new(false));
    let signalled = Arc::new(AtomicU8::new(0));
    watch_signals(
        Arc::clone(&stop),
        Arc::clone(&signalled),
        record.run_id.clone(),
    );
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
        let efficiency = efficiency(
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
            let code = signalled.load(Ordering::SeqCst);
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
                    let var = key_variable(provider);
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

    write_reports(
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

/// The environment variable holding the key of a model provider (`openai:…`).
fn key_variable(provider: &str) -> &'static str {
    match provider.split(':').next() {
        Some("anthropic") => "ANTHROPIC_API_KEY",
        Some("openai") => "OPENAI_API_KEY",
        _ => "the provider's key variable",
    }
}

/// The run's honest lower bound (`deepr_orchestrator::bound`): each node costs its
/// calls' measured latencies, calls of one kind in a node counting once when they could
/// run together; the bound is the larger of the critical path and the total work
/// spread over the node concurrency cap.
fn efficiency(
    store: &dyn CheckpointStore,
    concurrency: usize,
    io_concurrency: usize,
    wall_s: f64,
    restored_nodes: usize,
) -> crate::record::Efficiency {
    let nodes: Vec<deepr_orchestrator::bound::BoundNode> = store
        .finished_nodes()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|id| {
            let record = store.get_node(&id).ok().flatten()?;
            let calls = record
                .calls
                .iter()
                .filter(|c| !c.cache_hit)
                .map(|c| (c.kind.clone(), c.latency_ms as f64 / 1000.0))
                .collect();
            Some(deepr_orchestrator::bound::BoundNode {
                id,
                deps: record.deps,
                calls,
            })
        })
        .collect();
    let bound = deepr_orchestrator::bound::lower_bound(&nodes, concurrency, io_concurrency);
    crate::record::Efficiency {
        wall_s,
        critical_path_s: bound.critical_path_s,
        work_over_concurrency_s: bound.work_over_concurrency_s,
        lower_bound_s: bound.lower_bound_s,
        restored_nodes,
    }
}

/// Is a key available where the provider needs one? (Local servers need none.)
pub fn check_credentials(spec: &LlmSpec, base_url: Option<&str>) -> Result<(), Failure> {
    let LlmSpec::Remote { provider, api, .. } = spec else {
        return Ok(());
    };
    let local =
        base_url.is_some() || std::env::var_os("OPENAI_BASE_URL").is_some() || provider == "ollama";
    let (var, needed) = match api {
        Api::OpenAi => ("OPENAI_API_KEY", !local),
        Api::Anthropic => (
            "ANTHROPIC_API_KEY",
            base_url.is_none() && std::env::var_os("ANTHROPIC_BASE_URL").is_none(),
        ),
    };
    if needed
        && std::env::var(var)
            .map(|v| v.trim().is_empty())
            .unwrap_or(true)
    {
        return Err(usage(format!(
            "{} needs {var} in the environment (or --llm-base-url for a local server)",
            spec.as_string()
        )));
    }
    Ok(())
}

/// One tier's model: the model itself, priced, budgeted, cached and journaled.
fn model_stack(
    record: &RunRecord,
    spec_text: &str,
    budget: &Arc<Budget>,
    cache: &Arc<ResponseCache>,
    journal: &Arc<CallJournal>,
    prices: &Arc<deepr_providers::PriceTable>,
) -> Result<Arc<dyn LlmProvider>, Failure> {
    let spec = LlmSpec::parse(spec_text).map_err(usage)?;
    check_credentials(&spec, record.llm_base_url.as_deref())?;
    let model: Arc<dyn LlmProvider> = match &spec {
        LlmSpec::Offline => Arc::new(deepr_heuristic::HeuristicModel {
            latency: record.model_latency()?,
            latency_seed: record.simulation.seed,
        }),
        LlmSpec::Remote { api, provider, .. } => {
            let (key_var, base_var) = match api {
                Api::OpenAi => ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
                Api::Anthropic => ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
            };
            let env_base = if provider == "ollama" {
                None
            } else {
                std::env::var(base_var).ok().filter(|v| !v.is_empty())
            };
            let base = record.llm_base_url.clone().or(env_base);
            let key = if provider == "ollama" {
                None
            } else {
                std::env::var(key_var).ok()
            };
            Arc::new(
                RemoteLlm::new(&spec, base.as_deref(), key, record.limits.clone())
                    .map_err(usage)?,
            )
        }
    };
    let priced = Arc::new(deepr_providers::PricedLlm {
        inner: model,
        table: Arc::clone(prices),
        price_as: record.price_as.clone(),
    });
    let budgeted = Arc::new(BudgetedLlm {
        inner: priced,
        budget: Arc::clone(budget),
    });
    Ok(Arc::new(CachedLlm {
        inner: budgeted,
        cache: Arc::clone(cache),
        journal: Some(Arc::clone(journal)),
        namespace: record.cache_namespace.clone(),
    }))
}

#[allow(clippy::too_many_arguments)]
fn write_reports(
    state_dir: &Path,
    record: &RunRecord,
    config: &ResearchConfig,
    result: &ResearchResult,
    completion: &Completion,
    ledger: &UsageLedger,
    archive: &FileArchive,
    started: Instant,
    reporter: &Reporter,
) -> Result<(), Failure> {
    let report = build_report(
        config,
        result,
        archive,
        &record.run_id,
        ledger.usage(),
        completion,
    );
    let details = RunDetails {
        run_id: record.run_id.clone(),
        lines: vec![
            ("Generated".into(), utc_rfc3339(now_secs())),
            (
                "Wall time (this session)".into(),
                format!("{:.1} s", started.elapsed().as_secs_f64()),
            ),
            ("State dir".into(), format!("`{}`", state_dir.display())),
            ("Report".into(), format!("`{}`", record.out.display())),
            (
                "Sources".into(),
                format!(
                    "{}{}",
                    record.sources.join(", "),
                    record
                        .corpus
                        .as_ref()
                        .map(|c| format!(" (corpus `{}`)", c.display()))
                        .unwrap_or_default()
                ),
            ),
            (
                "Models".into(),
                format!(
                    "strong {}, cheap {}{}",
                    record.llm_strong,
                    record.llm_cheap,
                    record
                        .price_as
                        .as_deref()
                        .map(|m| format!(" (priced as {m})"))
                        .unwrap_or_default()
                ),
            ),
            (
                "Depth / strategy".into(),
                format!("{} / {}", record.depth.as_str(), record.strategy.as_str()),
            ),
            (
                "This session".into(),
                format!(
                    "{} tokens spent, {} model calls served from the response cache",
                    ledger.live_tokens(),
                    ledger.cache_hits()
                ),
            ),
            ("Estimated usage".into(), {
                let estimated = ledger.entries().iter().filter(|e| e.estimated).count();
                if estimated == 0 {
                    "none".to_string()
                } else {
                    format!("{estimated} call(s) reported no usage; their tokens were counted with the o200k tokenizer")
                }
            }),
        ],
    };
    let markdown = render_markdown(&report, result, &details);
    if let Some(parent) = record.out.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let json_path = record.out.with_extension("json");
    let json = serde_json::to_vec_pretty(&report).context("cannot serialise report.json")?;
    write_atomically(&json_path, &json)?;
    write_atomically(&record.out, markdown.as_bytes())?;
    let stem = record.out.with_extension("");
    let with_suffix = |suffix: &str| {
        let mut name = stem.clone().into_os_string();
        name.push(suffix);
        std::path::PathBuf::from(name)
    };
    for format in &record.formats {
        let (path, text) = match format.as_str() {
            "html" => (
                with_suffix(".html"),
                deepr_stages::formats::render_html(&report, result, &details),
            ),
            "bullets" => (
                with_suffix(".bullets.md"),
                deepr_stages::formats::render_bullets(&report),
            ),
            "cards" => (
                with_suffix(".cards.tsv"),
                deepr_stages::formats::render_cards(&report),
            ),
            _ => continue,
        };
        write_atomically(&path, text.as_bytes())?;
    }
    let supported = report
        .claims
        .iter()
        .filter(|c| c.verdict == deepr_evidence::report::Verdict::Supported)
        .count();
    reporter.event(serde_json::json!({"event": "report", "markdown": record.out, "json": json_path, "complete": completion.complete, "claims": report.claims.len(), "tokens": report.usage.prompt_tokens + report.usage.completion_tokens}));
    reporter.say(&format!(
        "deepr: wrote {} and {} — {} claims ({} supported) from {} sources, {} LLM calls, {} tokens",
        record.out.display(),
        json_path.display(),
        report.claims.len(),
        supported,
        report.sources.len(),
        report.usage.calls,
        report.usage.prompt_tokens + report.usage.completion_tokens
    ));
    Ok(())
}

/// First Ctrl-C / SIGTERM: stop starting work (running steps finish and are
/// checkpointed). Second: exit at once — the store stays consistent because every
/// checkpoint is one atomic batch.
fn watch_signals(stop: Arc<AtomicBool>, signalled: Arc<AtomicU8>, run_id: String) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    tokio::spawn(async move {
        loop {
            let code: u8 = tokio::select! {
                _ = interrupt.recv() => 130,
                _ = terminate.recv() => 143,
            };
            if signalled.swap(code, Ordering::SeqCst) != 0 {
                errln!("\ndeepr: stopped at once. resume with: deepr resume {run_id}");
                std::process::exit(i32::from(code));
            }
            stop.store(true, Ordering::SeqCst);
            errln!("\ndeepr: stopping — letting running steps finish and checkpoint (press Ctrl-C again to quit at once)");
        }
    });
}
