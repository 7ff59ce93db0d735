//! `deepr bench`: run every topic × strategy and compare what each costs and buys.
//!
//! Every cell is an ordinary run in the bench folder's own state dir, with a stable id
//! (`t01-linear`, …) and its own response-cache namespace (so no strategy is served
//! another's answers), so an interrupted bench continues where it stopped: finished
//! cells are read back, unfinished ones resume. Outputs in `--out DIR`: `bench.json`
//! (`deepr.bench.v1`), `bench.md` and `bench.svg`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use deepr_checkpoints::FileArchive;
use deepr_evidence::normalise;
use deepr_evidence::report::{Report, Verdict};
use deepr_orchestrator::TextArchive;
use deepr_stages::{Depth, Strategy};
use serde::{Deserialize, Serialize};

use crate::record::{now_secs, read_run_file, run_dir, RunRecord, RunState, RECORD_SCHEMA};
use crate::session::{self, SessionOptions, Start};
use crate::{config, usage, BenchArgs, DepthArg, Failure, Globals};

pub const BENCH_SCHEMA: &str = "deepr.bench.v1";

/// One topic × strategy run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BenchRow {
    pub run_id: String,
    pub topic: String,
    pub strategy: String,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub total_tokens: u64,
    pub judge_tokens: u64,
    pub judge_calls: u64,
    pub cost_usd: f64,
    pub wall_s: f64,
    pub claims: u64,
    pub supported: u64,
    pub citations: u64,
    pub verbatim: u64,
    pub complete: bool,
    /// The pipeline's wall time in the session that ran it, seconds.
    #[serde(default)]
    pub pipeline_wall_s: f64,
    /// The DAG's lower bound under the simulated latencies, seconds (0 without them).
    #[serde(default)]
    pub lower_bound_s: f64,
}

/// Totals per strategy.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StrategyRow {
    pub strategy: String,
    pub runs: u64,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub total_tokens: u64,
    pub judge_tokens: u64,
    pub cost_usd: f64,
    pub wall_s: f64,
    pub claims: u64,
    /// Share of claims judged supported.
    pub supported_share: f64,
    /// Share of citations whose quote is found verbatim (through the normaliser) in the
    /// archived text of its source — the verify gate's check.
    pub verbatim_rate: f64,
    pub tokens_per_supported_claim: Option<f64>,
    /// Mean of pipeline wall time ÷ DAG lower bound (with simulated latencies), if measured.
    pub wall_over_lower_bound: Option<f64>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct BenchFile {
    pub schema: String,
    pub strategies: Vec<StrategyRow>,
    pub runs: Vec<BenchRow>,
    /// With `--qa`: quality against the official answers, beside BM25 baselines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qa: Option<Vec<QaRow>>,
}

fn parse_strategy(name: &str) -> Result<Strategy, Failure> {
    match name.trim() {
        "linear" => Ok(Strategy::Linear),
        "per-claim" => Ok(Strategy::PerClaim),
        "free-quote" => Ok(Strategy::FreeQuote),
        "no-judge" => Ok(Strategy::NoJudge),
        other => Err(usage(format!(
            "strategy {other:?} is unknown; use linear, per-claim, free-quote, no-judge"
        ))),
    }
}

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

/// Measure one finished run from its report and the archive.
fn measure(report: &Report, archive: &FileArchive, run_id: &str, wall_s: f64) -> BenchRow {
    let texts: BTreeMap<&str, Option<String>> = report
        .sources
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                archive.get(&s.content_sha256).map(|t| normalise(&t.text)),
            )
        })
        .collect();
    let mut citations = 0;
    let mut verbatim = 0;
    for claim in &report.claims {
        for citation in &claim.citations {
            citations += 1;
            if texts
                .get(citation.source.as_str())
                .and_then(|t| t.as_ref())
                .is_some_and(|t| t.contains(&normalise(&citation.quote)))
            {
                verbatim += 1;
            }
        }
    }
    let judge = report
        .usage
        .by_stage
        .get("judge")
        .cloned()
        .unwrap_or_default();
    BenchRow {
        run_id: run_id.to_string(),
        topic: report.topic.clone(),
        strategy: report.strategy.clone(),
        calls: report.usage.calls,
        prompt_tokens: report.usage.prompt_tokens,
        completion_tokens: report.usage.completion_tokens,
        cached_tokens: report.usage.cached_tokens,
        total_tokens: report.usage.prompt_tokens + report.usage.completion_tokens,
        judge_tokens: judge.prompt_tokens + judge.completion_tokens,
        judge_calls: judge.calls,
        cost_usd: report.usage.cost_usd,
        wall_s,
        claims: report.claims.len() as u64,
        supported: report
            .claims
            .iter()
            .filter(|c| c.verdict == Verdict::Supported)
            .count() as u64,
        citations,
        verbatim,
        complete: report.complete,
        pipeline_wall_s: 0.0,
        lower_bound_s: 0.0,
    }
}

fn summarise(strategies: &[Strategy], rows: &[BenchRow]) -> Vec<StrategyRow> {
    strategies
        .iter()
        .map(|strategy| {
            let mine: Vec<&BenchRow> = rows
                .iter()
                .filter(|r| r.strategy == strategy.as_str())
                .collect();
            let sum = |f: fn(&BenchRow) -> u64| mine.iter().map(|r| f(r)).sum::<u64>();
            let (claims, supported, citations, verbatim) = (
                sum(|r| r.claims),
                sum(|r| r.supported),
                sum(|r| r.citations),
                sum(|r| r.verbatim),
            );
            let total = sum(|r| r.total_tokens);
            StrategyRow {
                strategy: strategy.as_str().to_string(),
                runs: mine.len() as u64,
                calls: sum(|r| r.calls),
                prompt_tokens: sum(|r| r.prompt_tokens),
                completion_tokens: sum(|r| r.completion_tokens),
                cached_tokens: sum(|r| r.cached_tokens),
                total_tokens: total,
                judge_tokens: sum(|r| r.judge_tokens),
                cost_usd: mine.iter().map(|r| r.cost_usd).sum(),
                wall_s: mine.iter().map(|r| r.wall_s).sum(),
                claims,
                supported_share: if claims == 0 {
                    0.0
                } else {
                    supported as f64 / claims as f64
                },
                verbatim_rate: if citations == 0 {
                    0.0
                } else {
                    verbatim as f64 / citations as f64
                },
                tokens_per_supported_claim: (supported > 0)
                    .then(|| total as f64 / supported as f64),
                wall_over_lower_bound: {
                    let ratios: Vec<f64> = mine
                        .iter()
                        .filter(|r| r.lower_bound_s > 0.0)
                        .map(|r| r.pipeline_wall_s / r.lower_bound_s)
                        .collect();
                    (!ratios.is_empty()).then(|| ratios.iter().sum::<f64>() / ratios.len() as f64)
                },
            }
        })
        .collect()
}

fn markdown(summary: &[StrategyRow], rows: &[BenchRow], topics: usize) -> String {
    let mut out = format!("# deepr bench\n\n{topics} topic(s) × {} strateg(ies). Tokens are prompt + completion as counted by the model server (o200k for the offline model).\n\n", summary.len());
    out.push_str("| strategy | runs | LLM calls | prompt | completion | cached | total tokens | judge tokens | cost $ | wall s | claims | supported | verbatim | tokens / supported claim | wall ÷ lower bound |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for s in summary {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.4} | {:.1} | {} | {:.0}% | {:.1}% | {} | {} |\n",
            s.strategy,
            s.runs,
            s.calls,
            s.prompt_tokens,
            s.completion_tokens,
            s.cached_tokens,
            s.total_tokens,
            s.judge_tokens,
            s.cost_usd,
            s.wall_s,
            s.claims,
            s.supported_share * 100.0,
            s.verbatim_rate * 100.0,
            s.tokens_per_supported_claim.map(|t| format!("{t:.0}")).unwrap_or_else(|| "—".into()),
            s.wall_over_lower_bound.map(|r| format!("{r:.2}")).unwrap_or_else(|| "—".into())
        ));
    }
    out.push_str("\n## Runs\n\n| run | strategy | calls | total tokens | judge calls | claims | supported | verbatim | complete |\n|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {}/{} | {} |\n",
            r.run_id,
            r.strategy,
            r.calls,
            r.total_tokens,
            r.judge_calls,
            r.claims,
            r.supported,
            r.verbatim,
            r.citations,
            r.complete
        ));
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Two bar panels: total tokens per strategy, and verbatim rate per strategy.
fn svg(summary: &[StrategyRow]) -> String {
    let width = 720.0;
    let bar_area = 460.0;
    let row_h = 28.0;
    let top = 40.0;
    let panel = summary.len() as f64 * row_h + 50.0;
    let height = top + 2.0 * panel + 20.0;
    let max_tokens = summary
        .iter()
        .map(|s| s.total_tokens)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let mut out = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    out.push_str("<text x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\">deepr bench: tokens and verbatim rate per strategy</text>\n");
    for (panel_index, title) in [
        "Total tokens (prompt + completion)",
        "Verbatim rate (quotes found in their source)",
    ]
    .iter()
    .enumerate()
    {
        let y0 = top + panel_index as f64 * panel;
        out.push_str(&format!(
            "<text x=\"10\" y=\"{}\" font-weight=\"bold\">{title}</text>\n",
            y0 + 20.0
        ));
        for (i, s) in summary.iter().enumerate() {
            let y = y0 + 32.0 + i as f64 * row_h;
            let (fraction, label) = if panel_index == 0 {
                (
                    s.total_tokens as f64 / max_tokens,
                    format!("{}", s.total_tokens),
                )
            } else {
                (s.verbatim_rate, format!("{:.1}%", s.verbatim_rate * 100.0))
            };
            let w = (fraction * bar_area).max(1.0);
            let color = if panel_index == 0 {
                "#4a7bd0"
            } else {
                "#3a9a5b"
            };
            out.push_str(&format!(
                "<text x=\"10\" y=\"{}\">{}</text>\n",
                y + 15.0,
                escape(&s.strategy)
            ));
            out.push_str(&format!(
                "<rect x=\"120\" y=\"{y}\" width=\"{w:.1}\" height=\"20\" fill=\"{color}\"/>\n"
            ));
            out.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{}\">{label}</text>\n",
                126.0 + w,
                y + 15.0
            ));
        }
    }
    out.push_str("</svg>\n");
    out
}

/// One question with its official answer.
#[derive(Clone, Debug, Deserialize)]
pub struct QaItem {
    pub question: String,
    pub answer: String,
}

#[derive(Deserialize)]
struct QaFile {
    items: Vec<QaItem>,
}

fn read_qa(path: &Path, limit: Option<usize>) -> Result<Vec<QaItem>, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| usage(format!("cannot read QA file {}: {e}", path.display())))?;
    let file: QaFile = serde_json::from_slice(&bytes).map_err(|e| {
        usage(format!(
            "QA file {} is not {{\"items\": [{{\"question\", \"answer\"}}]}}: {e}",
            path.display()
        ))
    })?;
    let items: Vec<QaItem> = file
        .items
        .into_iter()
        .filter(|i| !i.question.trim().is_empty() && !i.answer.trim().is_empty())
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    if items.is_empty() {
        return Err(usage(format!(
            "QA file {} has no questions with answers",
            path.display()
        )));
    }
    Ok(items)
}

/// QA quality of one method over the questions.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct QaRow {
    pub method: String,
    pub questions: u64,
    /// Mean share of the answer's content words found in the quoted sentences.
    pub answer_recall: f64,
    /// Share of questions where some single quote shares ≥ 3 content words with the answer.
    pub with_evidence: f64,
    /// Mean number of sentences quoted per question.
    pub sentences: f64,
}

fn terms(text: &str) -> std::collections::BTreeSet<String> {
    deepr_orchestrator::terms::content_terms(text)
        .into_iter()
        .collect()
}

/// (recall, has evidence) of `quotes` against `answer`.
pub fn answer_coverage(answer: &str, quotes: &[String]) -> (f64, bool) {
    let wanted = terms(answer);
    if wanted.is_empty() {
        return (0.0, false);
    }
    let mut covered = std::collections::BTreeSet::new();
    let mut evidence = false;
    for quote in quotes {
        let found: Vec<String> = terms(quote)
            .into_iter()
            .filter(|t| wanted.contains(t))
            .collect();
        evidence |= found.len() >= wanted.len().min(3);
        covered.extend(found);
    }
    (covered.len() as f64 / wanted.len() as f64, evidence)
}

fn qa_row(method: &str, scores: &[(f64, bool, usize)]) -> QaRow {
    let n = scores.len().max(1) as f64;
    QaRow {
        method: method.to_string(),
        questions: scores.len() as u64,
        answer_recall: scores.iter().map(|s| s.0).sum::<f64>() / n,
        with_evidence: scores.iter().filter(|s| s.1).count() as f64 / n,
        sentences: scores.iter().map(|s| s.2 as f64).sum::<f64>() / n,
    }
}

/// Score every strategy's reports, and the BM25 baselines, against the answers.
fn qa_table(
    items: &[QaItem],
    strategies: &[Strategy],
    out_dir: &Path,
    state_dir: &Path,
    corpus: &Path,
) -> Result<Vec<QaRow>, Failure> {
    let archive = FileArchive::open(state_dir).map_err(|e| Failure::Run(e.into()))?;
    let (index, _) = deepr_providers::CorpusIndex::open(corpus, state_dir, &archive)
        .map_err(|e| usage(e.to_string()))?;
    let texts: Vec<(String, deepr_orchestrator::ArchivedText)> = index
        .documents()
        .into_iter()
        .filter_map(|d| archive.get(&d.content_sha256).map(|t| (d.doc_key, t)))
        .collect();
    let sentences: Vec<(&str, u32, &str)> = texts
        .iter()
        .flat_map(|(key, text)| {
            text.sentences
                .iter()
                .filter_map(move |s| s.text(&text.text).map(|body| (key.as_str(), s.index, body)))
        })
        .collect();
    let baseline = deepr_providers::SentenceIndex::build(sentences.iter().copied())
        .map_err(|e| Failure::Run(anyhow::anyhow!(e)))?;
    let sentence_text = |doc: &str, index: u32| {
        texts
            .iter()
            .find(|(k, _)| k == doc)
            .and_then(|(_, t)| t.sentence(index))
            .map(String::from)
    };
    let mut rows = Vec::new();
    let mut same_budget: Vec<(f64, bool, usize)> = Vec::new();
    let mut top5: Vec<(f64, bool, usize)> = Vec::new();
    for (s_index, strategy) in strategies.iter().enumerate() {
        let mut scores = Vec::new();
        for (q_index, item) in items.iter().enumerate() {
            let run_id = format!("t{:02}-{}", q_index + 1, strategy.as_str());
            let path = out_dir.join("reports").join(format!("{run_id}.json"));
            let report: Report =
                serde_json::from_slice(&std::fs::read(&path).map_err(|e| Failure::Run(e.into()))?)
                    .map_err(|e| Failure::Run(e.into()))?;
            let mut quotes: Vec<String> = report
                .claims
                .iter()
                .flat_map(|c| c.citations.iter().map(|q| q.quote.clone()))
                .collect();
            quotes.sort();
            quotes.dedup();
            let (recall, evidence) = answer_coverage(&item.answer, &quotes);
            scores.push((recall, evidence, quotes.len()));
            if s_index == 0 {
                // Baselines take the first strategy's budget: as many sentences as it quoted.
                for (k, bucket) in [(quotes.len(), &mut same_budget), (5, &mut top5)] {
                    let hits = baseline
                        .search(&item.question, k)
                        .map_err(|e| Failure::Run(anyhow::anyhow!(e)))?;
                    let found: Vec<String> = hits
                        .iter()
                        .filter_map(|(d, i)| sentence_text(d, *i))
                        .collect();
                    let (recall, evidence) = answer_coverage(&item.answer, &found);
                    bucket.push((recall, evidence, found.len()));
                }
            }
        }
        rows.push(qa_row(&format!("deepr {}", strategy.as_str()), &scores));
    }
    rows.push(qa_row("BM25 sentences, same budget", &same_budget));
    rows.push(qa_row("BM25 sentences, top 5", &top5));
    Ok(rows)
}

pub fn execute(globals: &Globals, args: &BenchArgs) -> Result<u8, Failure> {
    let qa = match &args.qa {
        Some(path) => Some(read_qa(path, args.qa_limit)?),
        None => None,
    };
    let topics = match (&qa, &args.topics) {
        (Some(items), _) => items.iter().map(|i| i.question.clone()).collect(),
        (None, Some(path)) => read_topics(path)?,
        (None, None) => return Err(usage("pass --topics FILE or --qa FILE")),
    };
    let strategies: Vec<Strategy> = args
        .strategies
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(parse_strategy)
        .collect::<Result<_, _>>()?;
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
    let file = config::load(globals.config.as_deref())?;
    let llm = args
        .llm
        .clone()
        .or(file.llm.clone())
        .unwrap_or_else(|| "offline".into());
    let spec = deepr_providers::LlmSpec::parse(&llm).map_err(usage)?;
    crate::wiring::check_credentials(&spec, args.llm_base_url.as_deref())?;
    let simulation = crate::record::Simulation::from_settings(&args.simulation, &file)?;
    let io_concurrency = crate::run::check_io_concurrency(
        args.io_concurrency
            .or(file.io_concurrency)
            .unwrap_or(deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY),
    )?;
    let out_dir = std::path::absolute(&args.out).unwrap_or_else(|_| args.out.clone());
    let state_dir = out_dir.join("state");
    crate::state::prepare(&state_dir)?;
    std::fs::create_dir_all(out_dir.join("rows"))
        .map_err(|e| usage(format!("cannot create {}: {e}", out_dir.display())))?;
    let depth = match args.depth {
        Some(DepthArg::Quick) => Depth::Quick,
        Some(DepthArg::Deep) => Depth::Deep,
        _ => Depth::Standard,
    };

    let cells: Vec<(usize, String, Strategy)> = topics
        .iter()
        .enumerate()
        .flat_map(|(i, t)| strategies.iter().map(move |s| (i, t.clone(), *s)))
        .collect();
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
                if let Err(why) = run_cell(
                    &state_dir,
                    &out_dir,
                    &run_id,
                    topic,
                    *strategy,
                    depth,
                    &corpus,
                    &llm,
                    args,
                    &file,
                    &simulation,
                    io_concurrency,
                ) {
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

    let mut rows = Vec::new();
    for (topic_index, _, strategy) in &cells {
        let run_id = format!("t{:02}-{}", topic_index + 1, strategy.as_str());
        let bytes = std::fs::read(out_dir.join("rows").join(format!("{run_id}.json")))
            .map_err(|e| Failure::Run(e.into()))?;
        rows.push(serde_json::from_slice::<BenchRow>(&bytes).map_err(|e| Failure::Run(e.into()))?);
    }
    let summary = summarise(&strategies, &rows);
    let qa_rows = match &qa {
        Some(items) => Some(qa_table(items, &strategies, &out_dir, &state_dir, &corpus)?),
        None => None,
    };
    let bench = BenchFile {
        schema: BENCH_SCHEMA.into(),
        strategies: summary.clone(),
        runs: rows.clone(),
        qa: qa_rows.clone(),
    };
    crate::util::write_atomically(
        &out_dir.join("bench.json"),
        &serde_json::to_vec_pretty(&bench).map_err(|e| Failure::Run(e.into()))?,
    )?;
    let mut table = markdown(&summary, &rows, topics.len());
    if let Some(qa_rows) = &qa_rows {
        table.push_str("\n## Answers against the official QA (content-word recall of the answer by the quoted sentences)\n\n| method | questions | answer recall | questions with evidence | sentences per question |\n|---|---|---|---|---|\n");
        for row in qa_rows {
            table.push_str(&format!(
                "| {} | {} | {:.1}% | {:.0}% | {:.1} |\n",
                row.method,
                row.questions,
                row.answer_recall * 100.0,
                row.with_evidence * 100.0,
                row.sentences
            ));
        }
    }
    crate::util::write_atomically(&out_dir.join("bench.md"), table.as_bytes())?;
    crate::util::write_atomically(&out_dir.join("bench.svg"), svg(&summary).as_bytes())?;
    out!("{table}");
    Ok(0)
}

/// Run (or resume, or read back) one cell and store its row.
#[allow(clippy::too_many_arguments)]
fn run_cell(
    state_dir: &Path,
    out_dir: &Path,
    run_id: &str,
    topic: &str,
    strategy: Strategy,
    depth: Depth,
    corpus: &Path,
    llm: &str,
    args: &BenchArgs,
    file: &config::FileConfig,
    simulation: &crate::record::Simulation,
    io_concurrency: usize,
) -> Result<(), String> {
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
            let mut record = RunRecord {
                schema: RECORD_SCHEMA.into(),
                run_id: run_id.to_string(),
                topic: topic.to_string(),
                depth,
                strategy,
                corpus: Some(corpus.to_path_buf()),
                sources: vec!["corpus".to_string()],
                source_urls: Default::default(),
                allow_hosts: Vec::new(),
                out: report_path.clone(),
                llm_strong: llm.to_string(),
                llm_cheap: llm.to_string(),
                llm_base_url: args.llm_base_url.clone(),
                price_as: args.price_as.clone(),
                limits: file.limits.clone().unwrap_or_default(),
                prices: file.prices.clone(),
                concurrency: 5,
                offline_latency_ms: 0,
                prompts: None,
                created: now_secs(),
                cache_namespace: run_id.to_string(),
                search_latency_ms: 0,
                fetch_latency_ms: 0,
                formats: Vec::new(),
                simulation: simulation.clone(),
                io_concurrency,
            };
            // The means, for readers of older records (checked when the bench started).
            let mean = |latency: Result<deepr_orchestrator::simulate::Latency, Failure>| {
                latency.map(|l| crate::record::mean_ms(&l)).unwrap_or(0)
            };
            record.offline_latency_ms = mean(record.model_latency().map(|m| m.first_token));
            record.search_latency_ms = mean(record.search_latency());
            record.fetch_latency_ms = mean(record.fetch_latency());
            Some(Start::New(Box::new(record)))
        }
    };
    let started = Instant::now();
    if let Some(start) = start {
        if matches!(start, Start::New(_)) {
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        }
        let options = SessionOptions {
            quiet: true,
            json: false,
            concurrency: None,
            io_concurrency: None,
            retry_degraded: false,
            max_tokens: None,
            max_cost: None,
            max_time: None,
            dry_run: false,
            notices: Vec::new(),
        };
        match session::execute(state_dir, start, options) {
            Ok(0) => {}
            Ok(code) => return Err(format!("stopped with exit code {code}")),
            Err(Failure::Usage(m)) => return Err(m),
            Err(Failure::Run(e)) => return Err(format!("{e:#}")),
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    let report: Report = serde_json::from_slice(
        &std::fs::read(report_path.with_extension("json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let archive = FileArchive::open(state_dir).map_err(|e| e.to_string())?;
    let mut row = measure(&report, &archive, run_id, wall_s);
    if let Some(efficiency) = std::fs::read(dir.join("efficiency.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<crate::record::Efficiency>(&b).ok())
    {
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
