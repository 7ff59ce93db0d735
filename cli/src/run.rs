//! `deepr run`: validate input, record the run, index the corpus, run the pipeline,
//! write the report and its JSON sidecar atomically.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use deepr_checkpoints::{FileArchive, SledStore};
use deepr_orchestrator::{CheckpointStore, Executor, UsageLedger};
use deepr_providers::{CorpusFetcher, CorpusIndex, CorpusSearch};
use deepr_stages::render::{build_report, render_markdown, Completion, RunDetails};
use deepr_stages::{run_research, Depth, ResearchConfig, ResearchProviders, Strategy};

use crate::progress::Reporter;
use crate::{config, state, usage, DepthArg, Failure, Globals, RunArgs, StrategyArg};

const MAX_TOPIC_CHARS: usize = 2000;

/// `YYYYMMDD-HHMMSS` for a Unix time (UTC).
pub fn utc_compact(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// RFC 3339 UTC for a Unix time.
pub fn utc_rfc3339(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

fn civil(secs: u64) -> (i64, u32, u32, u64, u64, u64) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rem / 3600, (rem % 3600) / 60, rem % 60)
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

struct Settings {
    topic: String,
    depth: Depth,
    strategy: Strategy,
    concurrency: usize,
    corpus: PathBuf,
    out: PathBuf,
    run_id: String,
    state_dir: PathBuf,
}

fn validate(globals: &Globals, args: &RunArgs) -> Result<Settings, Failure> {
    let file = config::load(globals.config.as_deref())?;
    let topic = args.topic.trim().to_string();
    if topic.is_empty() {
        return Err(usage("the topic is empty; pass the question to research, e.g. deepr run \"How does WAL work?\" --corpus DIR"));
    }
    if topic.chars().count() > MAX_TOPIC_CHARS {
        return Err(usage(format!("the topic is {} characters; keep it under {MAX_TOPIC_CHARS} (put background in the corpus instead)", topic.chars().count())));
    }
    if topic.chars().any(|c| c.is_control() && !c.is_whitespace()) {
        return Err(usage(
            "the topic contains control characters; pass plain text",
        ));
    }
    let depth = match (args.depth, file.depth.as_deref()) {
        (Some(DepthArg::Quick), _) | (None, Some("quick")) => Depth::Quick,
        (Some(DepthArg::Deep), _) | (None, Some("deep")) => Depth::Deep,
        (Some(DepthArg::Standard), _) | (None, Some("standard") | None) => Depth::Standard,
        (None, Some(other)) => {
            return Err(usage(format!(
                "config depth {other:?} is unknown; use quick, standard or deep"
            )))
        }
    };
    let strategy = match (args.strategy, file.strategy.as_deref()) {
        (Some(StrategyArg::NoJudge), _) | (None, Some("no-judge")) => Strategy::NoJudge,
        (Some(StrategyArg::Linear), _) | (None, Some("linear") | None) => Strategy::Linear,
        (None, Some(other)) => {
            return Err(usage(format!(
                "config strategy {other:?} is unknown; use linear or no-judge"
            )))
        }
    };
    let llm = args
        .llm
        .clone()
        .or(file.llm)
        .unwrap_or_else(|| "offline".into());
    if llm != "offline" {
        return Err(usage(format!(
            "--llm {llm:?} is not available in this build; use --llm offline"
        )));
    }
    let concurrency = args.concurrency.or(file.concurrency).unwrap_or(5);
    if !(1..=64).contains(&concurrency) {
        return Err(usage(format!(
            "--concurrency {concurrency} is out of range; use 1 to 64"
        )));
    }
    let Some(corpus) = args.corpus.clone() else {
        return Err(usage("no sources: pass --corpus DIR (a folder of .md, .txt or .html files); web search is not available in this build"));
    };
    let out = match &args.out {
        Some(out) => out.clone(),
        None => PathBuf::from(format!("{}.md", state::slug(&topic))),
    };
    if out.file_name().is_none() || out.as_os_str().to_string_lossy().ends_with('/') {
        return Err(usage(format!(
            "--out {} is not a file path; pass e.g. --out report.md",
            out.display()
        )));
    }
    if out.is_dir() {
        return Err(usage(format!(
            "--out {} is a folder; pass a file path such as {}/report.md",
            out.display(),
            out.display()
        )));
    }
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    let run_id = match &args.run_id {
        Some(id) => {
            state::check_run_id(id)?;
            id.clone()
        }
        None => state::new_run_id(&topic),
    };
    Ok(Settings {
        topic,
        depth,
        strategy,
        concurrency,
        corpus,
        out,
        run_id,
        state_dir,
    })
}

fn check_corpus(corpus: &Path) -> Result<(), Failure> {
    match std::fs::metadata(corpus) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(usage(format!(
            "corpus folder {} does not exist; check the --corpus path",
            corpus.display()
        ))),
        Err(e) => Err(usage(format!(
            "cannot read corpus folder {}: {e}; check its permissions",
            corpus.display()
        ))),
        Ok(m) if !m.is_dir() => Err(usage(format!(
            "--corpus {} is not a folder; pass the folder that holds the documents",
            corpus.display()
        ))),
        Ok(_) => std::fs::read_dir(corpus).map(|_| ()).map_err(|e| {
            usage(format!(
                "cannot read corpus folder {}: {e}; check its permissions",
                corpus.display()
            ))
        }),
    }
}

fn prepare_out(out: &Path) -> Result<(), Failure> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            usage(format!(
                "cannot create the folder of --out {}: {e}; pass a writable path",
                out.display()
            ))
        })?;
    }
    Ok(())
}

/// Write `bytes` to `path` through a temp file in the same folder and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

pub fn execute(globals: &Globals, args: &RunArgs) -> Result<u8, Failure> {
    let settings = validate(globals, args)?;
    check_corpus(&settings.corpus)?;
    prepare_out(&settings.out)?;
    state::prepare(&settings.state_dir)?;
    let run_dir = settings.state_dir.join("runs").join(&settings.run_id);
    if run_dir.exists() {
        return Err(usage(format!(
            "run id {:?} already exists in {}; choose another --run-id",
            settings.run_id,
            settings.state_dir.display()
        )));
    }
    std::fs::create_dir_all(&run_dir).map_err(|e| {
        usage(format!(
            "cannot create run folder {}: {e}; pass a writable --state-dir",
            run_dir.display()
        ))
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run_async(globals, settings, run_dir))
}

async fn run_async(globals: &Globals, settings: Settings, run_dir: PathBuf) -> Result<u8, Failure> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(run_dir.join("run.log"))
        .ok();
    let reporter = Arc::new(Reporter::new(globals.quiet, log));
    let store = SledStore::open(&run_dir.join("checkpoints.sled"))
        .await
        .context("cannot open the run's checkpoint store")?;
    let out_abs = std::path::absolute(&settings.out).unwrap_or_else(|_| settings.out.clone());
    let corpus_abs =
        std::path::absolute(&settings.corpus).unwrap_or_else(|_| settings.corpus.clone());
    // The run record goes first, flushed, before any other work (indexing included).
    let record = serde_json::json!({
        "run_id": settings.run_id, "topic": settings.topic, "depth": settings.depth.as_str(),
        "strategy": settings.strategy.as_str(), "corpus": corpus_abs, "out": out_abs,
        "llm": "offline", "concurrency": settings.concurrency, "created": utc_rfc3339(now_secs()),
    });
    store
        .put_meta("run", &record)
        .await
        .context("cannot record the run")?;
    reporter.log_line(&format!("run record: {record}"));

    let archive =
        Arc::new(FileArchive::open(&settings.state_dir).context("cannot open the text archive")?);
    let (index, report) = match CorpusIndex::open(&settings.corpus, &settings.state_dir, &archive) {
        Ok(opened) => opened,
        Err(error) => {
            // A corpus that cannot be used is bad input: the run never started, so its
            // just-created folder goes (no other run is touched).
            drop(store);
            let _ = std::fs::remove_dir_all(&run_dir);
            return Err(usage(error.to_string()));
        }
    };
    if !globals.quiet {
        eprintln!("deepr: run {} — {}", settings.run_id, settings.topic);
    }
    reporter.say(&format!(
        "deepr: corpus {}: {} documents ({} indexed now, {} reused), {} skipped",
        settings.corpus.display(),
        report.extracted.len() + report.reused.len(),
        report.extracted.len(),
        report.reused.len(),
        report.skipped.len()
    ));
    for (path, why) in &report.skipped {
        reporter.say(&format!("deepr: skipped {path}: {why}"));
    }
    let index = Arc::new(index);
    let mut fingerprint = blake3::Hasher::new();
    for doc in index.documents() {
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
    let offline: Arc<dyn deepr_orchestrator::LlmProvider> =
        Arc::new(deepr_stages::offline::OfflineModel);
    let providers = ResearchProviders {
        strong: Arc::clone(&offline),
        cheap: offline,
        search: vec![Arc::new(CorpusSearch(Arc::clone(&index)))],
        fetcher: Arc::new(CorpusFetcher(Arc::clone(&index))),
        archive: archive.clone(),
    };
    let config = ResearchConfig {
        topic: settings.topic.clone(),
        depth: settings.depth,
        strategy: settings.strategy,
        search_fingerprint: fingerprint.finalize().to_hex().to_string(),
    };
    let ledger = Arc::new(UsageLedger::default());
    let store: Arc<dyn CheckpointStore> = Arc::new(store);
    let executor = Executor {
        store: Arc::clone(&store),
        ledger: Arc::clone(&ledger),
        progress: reporter.clone(),
        concurrency: settings.concurrency,
        stop: Arc::new(AtomicBool::new(false)),
        budget: deepr_orchestrator::Budget::unlimited(),
        plan: None,
    };
    let started = std::time::Instant::now();
    let result = run_research(&config, &providers, &executor)
        .await
        .context("research run failed")?;
    reporter.finish();

    let report = build_report(
        &config,
        &result,
        archive.as_ref(),
        &settings.run_id,
        ledger.usage(),
        &Completion {
            complete: true,
            incomplete_reason: None,
        },
    );
    let details = RunDetails {
        run_id: settings.run_id.clone(),
        lines: vec![
            ("Generated".into(), utc_rfc3339(now_secs())),
            (
                "Wall time".into(),
                format!("{:.1} s", started.elapsed().as_secs_f64()),
            ),
            (
                "State dir".into(),
                format!("`{}`", settings.state_dir.display()),
            ),
            ("Report".into(), format!("`{}`", out_abs.display())),
            ("Corpus".into(), format!("`{}`", corpus_abs.display())),
            ("Model".into(), deepr_stages::offline::MODEL_ID.into()),
            (
                "Depth / strategy / concurrency".into(),
                format!(
                    "{} / {} / {}",
                    settings.depth.as_str(),
                    settings.strategy.as_str(),
                    settings.concurrency
                ),
            ),
        ],
    };
    let markdown = render_markdown(&report, &result, &details);
    let json_path = settings.out.with_extension("json");
    let json = serde_json::to_vec_pretty(&report).context("cannot serialise report.json")?;
    write_atomically(&json_path, &json)?;
    write_atomically(&settings.out, markdown.as_bytes())?;
    store
        .put_meta(
            "finished",
            &serde_json::json!({"report": out_abs, "at": utc_rfc3339(now_secs())}),
        )
        .await
        .context("cannot record completion")?;
    let supported = report
        .claims
        .iter()
        .filter(|c| c.verdict == deepr_evidence::report::Verdict::Supported)
        .count();
    reporter.say(&format!(
        "deepr: wrote {} and {} — {} claims ({} supported) from {} sources, {} LLM calls, {} tokens",
        settings.out.display(),
        json_path.display(),
        report.claims.len(),
        supported,
        report.sources.len(),
        report.usage.calls,
        report.usage.prompt_tokens + report.usage.completion_tokens
    ));
    Ok(0)
}
