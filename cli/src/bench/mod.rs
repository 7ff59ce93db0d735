//! `deepr bench`: run every topic × strategy and compare what each costs and buys.
//!
//! Every cell is an ordinary run in the bench folder's own state dir, with a stable id
//! (`t01-linear`, …) and its own response-cache namespace (so no strategy is served
//! another's answers), so an interrupted bench continues where it stopped: finished
//! cells are read back, unfinished ones resume. Outputs in `--out DIR`: `bench.json`
//! (`deepr.bench.v1`), `bench.md` and `bench.svg`.

use deepr_session::ExitStatus;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use deepr_checkpoints::FileArchive;
use deepr_evidence::report::Report;
use deepr_stages::{Depth, Strategy};

use crate::record::{now_secs, read_run_file, run_dir, RunRecord, RunState, RECORD_SCHEMA};
use crate::session::{self, SessionOptions, Start};
use crate::{config, usage, BenchArgs, Failure, Globals};
use deepr_session::SessionEnd;

mod fleet;

pub use deepr_evaluation::qa::*;
use deepr_evaluation::qa_table::{qa_table, QaTable};
pub use deepr_evaluation::rows::*;
use deepr_evaluation::table::*;
use deepr_evaluation::{facts, quality};

/// Topics: one per line; `#` comments and blank lines ignored.
pub fn read_topics(path: &Path) -> Result<Vec<String>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("cannot read topics file {}: {e}", path.display())))?;
    let topics: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    if topics.is_empty() {
        return Err(usage(format!(
            "topics file {} has no topics (one per line; # starts a comment)",
            path.display()
        )));
    }
    if let Some(long) = topics.iter().find(|t| t.chars().count() > 2000) {
        return Err(usage(format!(
            "a topic in {} is over 2,000 characters: {}…",
            path.display(),
            long.chars().take(40).collect::<String>()
        )));
    }
    Ok(topics)
}

/// The topic set's name for bench.html: its file's name.
fn topic_set_name(args: &BenchArgs) -> String {
    [&args.facts, &args.qa, &args.topics]
        .into_iter()
        .flatten()
        .next()
        .and_then(|path| path.file_name())
        .map_or_else(
            || "topics".to_string(),
            |name| name.to_string_lossy().into_owned(),
        )
}

pub fn execute(globals: &Globals, args: &BenchArgs) -> Result<ExitStatus, Failure> {
    let qa = match &args.qa {
        Some(path) => Some(read_qa(path, args.qa_limit)?),
        None => None,
    };
    let fact_file = match &args.facts {
        Some(path) => Some(facts::read_facts(path)?),
        None => None,
    };
    let topics = match (&qa, &fact_file, &args.topics) {
        (Some(items), _, _) => items.iter().map(|i| i.question.clone()).collect(),
        (None, Some(file), _) => vec![file.brief.clone()],
        (None, None, Some(path)) => read_topics(path)?,
        (None, None, None) => return Err(usage("pass --topics FILE, --qa FILE or --facts FILE")),
    };
    let (strategies, corpus) = checked_args(args)?;
    let file = config::load(globals.config.as_deref())?;
    let llm = args
        .llm
        .clone()
        .or(file.llm.clone())
        .unwrap_or_else(|| "offline".into());
    let spec = deepr_providers::LlmSpec::parse(&llm).map_err(usage)?;
    let offline = matches!(spec, deepr_providers::LlmSpec::Offline);
    if crate::fleet::db_url_in(globals, &file).is_none() {
        // In fleet mode the workers' keys count (keys never travel).
        crate::wiring::check_credentials(&spec, args.llm_base_url.as_deref())?;
    }
    let simulation = deepr_session::request::simulation_of(&args.latencies, &file)?;
    let io_concurrency = deepr_session::request::check_io_concurrency(
        args.io_concurrency
            .or(file.io_concurrency)
            .unwrap_or(deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY),
    )?;
    let out_dir = std::path::absolute(&args.out).unwrap_or_else(|_| args.out.clone());
    let state_dir = out_dir.join("state");
    crate::state::prepare(&state_dir)?;
    std::fs::create_dir_all(out_dir.join("rows"))
        .map_err(|e| usage(format!("cannot create {}: {e}", out_dir.display())))?;
    let depth = args.depth.unwrap_or(Depth::Standard);

    let cells: Vec<(usize, String, Strategy)> = topics
        .iter()
        .enumerate()
        .flat_map(|(i, t)| strategies.iter().map(move |s| (i, t.clone(), *s)))
        .collect();
    let spec = CellSpec {
        depth,
        corpus: &corpus,
        llm: &llm,
        args,
        file: &file,
        simulation: &simulation,
        io_concurrency,
    };
    run_cells(globals, args, &cells, &spec, &state_dir, &out_dir)?;

    let texts = corpus_texts(&corpus, &state_dir)?;
    let stats = quality::CorpusStats::build(texts.iter().map(|(_, t)| &*t.text));
    let rows = measured_rows(&cells, &out_dir, &stats)?;
    let summary = summarise(&strategies, &rows);
    let qa_table = match &qa {
        Some(items) => Some(qa_table(items, &strategies, &out_dir, &state_dir, &texts)?),
        None => None,
    };
    if let Some(table) = &qa_table {
        write_qa_lines(table, &out_dir)?;
    }
    let qa_rows = qa_table.map(|t| t.rows);
    let fact_rows = match &fact_file {
        Some(file) => Some(fact_rows(file, &strategies, &out_dir, &state_dir, &texts)?),
        None => None,
    };
    let table = write_bench_files(
        &out_dir,
        BenchTables {
            title: &topic_set_name(args),
            summary: &summary,
            rows: &rows,
            qa: qa_rows.as_deref(),
            facts: fact_rows.as_ref(),
        },
        topics.len(),
        offline,
    )?;
    out!("{table}");
    Ok(ExitStatus::Success)
}

/// Every cell run: queued into the fleet with `--db`, else here.
fn run_cells(
    globals: &Globals,
    args: &BenchArgs,
    cells: &[(usize, String, Strategy)],
    spec: &CellSpec<'_>,
    state_dir: &Path,
    out_dir: &Path,
) -> Result<(), Failure> {
    if let Some(url) = crate::fleet::db_url(globals)? {
        let fleet_cells = cells
            .iter()
            .map(|(topic_index, topic, strategy)| {
                let run_id = format!("t{:02}-{}", topic_index + 1, strategy.as_str());
                let report_path = out_dir.join("reports").join(format!("{run_id}.md"));
                let record = cell_record(spec, &run_id, topic, *strategy, &report_path);
                fleet::Cell { run_id, record }
            })
            .collect();
        fleet::run_cells(&url, globals, fleet_cells, state_dir, out_dir)?;
    } else {
        run_locally(globals, args, cells, spec, state_dir, out_dir)?;
    }
    Ok(())
}

/// qa.jsonl: one line per question and strategy, so a regression can be traced to
/// questions.
fn write_qa_lines(table: &QaTable, out_dir: &Path) -> Result<(), Failure> {
    let mut lines = String::new();
    for row in &table.questions {
        lines.push_str(&serde_json::to_string(row).map_err(|e| Failure::Run(e.into()))?);
        lines.push('\n');
    }
    crate::util::write_atomically(&out_dir.join("qa.jsonl"), lines.as_bytes())?;
    Ok(())
}

/// `--strategies` (each once, in order; never empty), `--jobs` in range, and the
/// corpus folder (absolute) that exists.
fn checked_args(args: &BenchArgs) -> Result<(Vec<Strategy>, PathBuf), Failure> {
    let mut strategies: Vec<Strategy> = Vec::new();
    for strategy in &args.strategies {
        if !strategies.contains(strategy) {
            strategies.push(*strategy);
        }
    }
    if strategies.is_empty() {
        return Err(usage(
            "--strategies is empty; e.g. --strategies linear,per-claim",
        ));
    }
    if !(1..=8).contains(&args.jobs) {
        return Err(usage(format!(
            "--jobs {} is out of range; use 1 to 8",
            args.jobs
        )));
    }
    let corpus = std::path::absolute(&args.corpus).unwrap_or_else(|_| args.corpus.clone());
    if !corpus.is_dir() {
        return Err(usage(format!(
            "--corpus {} is not a folder",
            args.corpus.display()
        )));
    }
    Ok((strategies, corpus))
}

/// Content-word document frequencies of the corpus (for relevance).
/// The corpus's documents (key and archived text), read once for the relevance figures
/// and the QA baselines.
fn corpus_texts(
    corpus: &Path,
    state_dir: &Path,
) -> Result<Vec<(String, deepr_orchestrator::ArchivedText)>, Failure> {
    use deepr_orchestrator::TextArchive;
    let archive = FileArchive::open(state_dir).map_err(|e| Failure::Run(e.into()))?;
    let (index, _) = deepr_providers::CorpusIndex::open(corpus, state_dir, &archive)
        .map_err(|e| usage(e.to_string()))?;
    Ok(index
        .documents()
        .into_iter()
        .filter_map(|d| archive.get(&d.content_sha256).map(|t| (d.doc_key, t)))
        .collect())
}

/// Each strategy's fact rows, every missing value traced through its run (a run whose
/// checkpoints cannot be read is reported and left untraced).
fn fact_rows(
    file: &facts::FactsFile,
    strategies: &[Strategy],
    out_dir: &Path,
    state_dir: &Path,
    texts: &[(String, deepr_orchestrator::ArchivedText)],
) -> Result<(Vec<facts::FactsSummary>, Vec<facts::FactRow>), Failure> {
    let corpus: Vec<&str> = texts.iter().map(|(_, t)| &*t.text).collect();
    let archive = FileArchive::open(state_dir).map_err(|e| Failure::Run(e.into()))?;
    let trail_of = |strategy: Strategy| {
        let run_id = format!("t01-{}", strategy.as_str());
        deepr_evaluation::trail::read_trail(state_dir, &run_id, &corpus, &archive)
            .map_err(|e| {
                errln!("bench: where {run_id}'s missing facts were lost is not traced: {e}")
            })
            .ok()
    };
    facts::facts_table(file, strategies, out_dir, &trail_of)
}

/// Run (or resume, or read back) one cell and store its row.
#[allow(clippy::too_many_arguments)]
fn run_cell(
    state_dir: &Path,
    out_dir: &Path,
    run_id: &str,
    topic: &str,
    strategy: Strategy,
    spec: &CellSpec,
) -> Result<(), String> {
    let simulation = spec.simulation;
    let row_path = out_dir.join("rows").join(format!("{run_id}.json"));
    if row_path.exists() {
        return Ok(()); // finished in an earlier invocation
    }
    let report_path: PathBuf = out_dir.join("reports").join(format!("{run_id}.md"));
    let dir = run_dir(state_dir, run_id);
    let start = match read_run_file(&dir) {
        Some(f) if f.state == RunState::Finished && report_path.with_extension("json").exists() => {
            None
        }
        Some(_) => Some(Start::Resume(run_id.to_string())),
        None => {
            if dir.exists() {
                let _ = std::fs::remove_dir_all(&dir); // killed before it started
            }
            Some(Start::New(Box::new(cell_record(
                spec,
                run_id,
                topic,
                strategy,
                &report_path,
            ))))
        }
    };
    let started = Instant::now();
    let mut written = None;
    let mut efficiency = None;
    if let Some(start) = start {
        if matches!(start, Start::New(_)) {
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        }
        let options = SessionOptions::unattended(None, None, None);
        match session::execute(state_dir, start, options) {
            Ok(SessionEnd::Finished(report, measured)) => {
                written = Some(*report);
                efficiency = measured;
            }
            Ok(end) => {
                let code = ExitStatus::from(&end).code();
                return Err(format!("stopped with exit code {code}"));
            }
            Err(Failure::Usage(m)) => return Err(m),
            Err(Failure::Run(e)) => return Err(format!("{e:#}")),
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    // A cell run now hands its report over; one finished by an earlier bench is read.
    let reused = written.is_none();
    let report: Report = match written {
        Some(report) => report,
        None => serde_json::from_slice(
            &std::fs::read(report_path.with_extension("json")).map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?,
    };
    let archive = FileArchive::open(state_dir).map_err(|e| e.to_string())?;
    let mut row = measure(&report, &archive, run_id, wall_s);
    // The session hands over its efficiency; a cell whose run an earlier bench finished
    // (killed before its row was written) has it on disk from that session.
    if reused {
        efficiency = std::fs::read(dir.join("efficiency.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<crate::record::Efficiency>(&b).ok());
    }
    if let Some(efficiency) = efficiency {
        // The ratio means something only when calls take simulated time: without it the
        // bound is a few milliseconds of measured noise.
        let simulated = simulation.offline.is_some()
            || simulation.search.is_some()
            || simulation.fetch.is_some();
        if efficiency.restored_nodes == 0 && simulated {
            row.pipeline_wall_s = efficiency.wall_s;
            row.lower_bound_s = efficiency.lower_bound_s;
        }
    }
    crate::util::write_atomically(
        &row_path,
        &serde_json::to_vec_pretty(&row).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())
}

/// What every cell of a bench shares.
pub struct CellSpec<'a> {
    pub depth: Depth,
    pub corpus: &'a Path,
    pub llm: &'a str,
    pub args: &'a BenchArgs,
    pub file: &'a config::FileConfig,
    pub simulation: &'a crate::record::Simulation,
    pub io_concurrency: usize,
}

/// The run record of one cell (its own response-cache namespace: no strategy is
/// served another's answers).
pub fn cell_record(
    spec: &CellSpec,
    run_id: &str,
    topic: &str,
    strategy: Strategy,
    report_path: &Path,
) -> RunRecord {
    let CellSpec {
        depth,
        corpus,
        llm,
        args,
        file,
        simulation,
        io_concurrency,
    } = *spec;
    let mut record = RunRecord {
        schema: RECORD_SCHEMA.into(),
        run_id: run_id.to_string(),
        topic: topic.to_string(),
        brief: crate::record::brief_of(topic),
        depth,
        strategy,
        corpus: Some(corpus.to_path_buf()),
        sources: vec!["corpus".to_string()],
        source_urls: Default::default(),
        allow_hosts: Vec::new(),
        out: report_path.to_path_buf(),
        llm_strong: llm.to_string(),
        llm_cheap: llm.to_string(),
        llm_base_url: args.llm_base_url.clone(),
        price_as: args.price_as.clone(),
        limits: file.limits.clone().unwrap_or_default(),
        prices: file.prices.clone(),
        concurrency: deepr_stages::concurrent::DEFAULT_CONCURRENCY,
        offline_latency_ms: 0,
        prompts: None,
        created: now_secs(),
        cache_namespace: run_id.to_string(),
        search_latency_ms: 0,
        fetch_latency_ms: 0,
        formats: Vec::new(),
        // Bench runs rank with whatever model the environment names, as before.
        embed: None,
        simulation: simulation.clone(),
        io_concurrency,
        follow_links: false,
        model_pool: deepr_stages::extract::DEFAULT_MODEL_POOL,
        reading: args.reading.or(file.reading).unwrap_or_default(),
        user_plan: None,
        plan_only: None,
        lineage: None,
    };
    // The means, for readers of older records (checked when the bench started).
    let mean = |latency: Result<deepr_orchestrator::simulate::Latency, Failure>| {
        latency.map(|l| crate::record::mean_ms(&l)).unwrap_or(0)
    };
    record.offline_latency_ms = mean(record.model_latency().map(|m| m.first_token));
    record.search_latency_ms = mean(record.search_latency());
    record.fetch_latency_ms = mean(record.fetch_latency());
    record
}

/// Every cell in this process, `--jobs` at a time.
fn run_locally(
    globals: &Globals,
    args: &BenchArgs,
    cells: &[(usize, String, Strategy)],
    spec: &CellSpec,
    state_dir: &Path,
    out_dir: &Path,
) -> Result<(), Failure> {
    let progress = indicatif::ProgressBar::new(cells.len() as u64);
    if globals.quiet {
        progress.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    progress.set_style(
        indicatif::ProgressStyle::with_template("bench [{bar:30}] {pos}/{len} {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..args.jobs {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::SeqCst);
                let Some((topic_index, topic, strategy)) = cells.get(index) else {
                    return;
                };
                let run_id = format!("t{:02}-{}", topic_index + 1, strategy.as_str());
                progress.set_message(run_id.clone());
                if let Err(why) = run_cell(state_dir, out_dir, &run_id, topic, *strategy, spec) {
                    if let Ok(mut failures) = failures.lock() {
                        failures.push(format!("{run_id}: {why}"));
                    }
                }
                progress.inc(1);
            });
        }
    });
    progress.finish_and_clear();
    let failures = failures.into_inner().unwrap_or_default();
    if !failures.is_empty() {
        return Err(Failure::Run(anyhow::anyhow!(
            "{} bench run(s) failed: {}; run the same command again to continue",
            failures.len(),
            failures.join("; ")
        )));
    }

    Ok(())
}
