//! Output of a session: the preview before a resume, the reports (markdown, JSON
//! sidecar, and the extra formats), the run's efficiency figures, the export bundle
//! (report plus the archived text of every cited source), and a fleet run's stored
//! reports written beside its `--out`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use deepr_checkpoints::FileArchive;
use deepr_orchestrator::{CheckpointStore, PreviewAction, PreviewStep, UsageLedger};
use deepr_stages::render::{build_report, render_markdown, Completion, RunDetails};
use deepr_stages::{ResearchConfig, ResearchResult};

use crate::progress::Reporter;
use crate::record::{now_secs, RunRecord};
use crate::util::{utc_rfc3339, write_atomically};
use deepr_evidence::report::Report;
use deepr_evidence::verify::{Bundle, BUNDLE_SCHEMA};
use deepr_orchestrator::TextArchive;

use crate::{usage, Failure};

pub fn say_preview(reporter: &Reporter, steps: &[PreviewStep], ends: Option<&str>) {
    let restored = steps
        .iter()
        .filter(|s| s.action == PreviewAction::Restore)
        .count();
    let fresh = steps
        .iter()
        .filter(|s| s.action == PreviewAction::Run)
        .count();
    let mut recompute: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for step in steps {
        if let PreviewAction::Recompute(reason) = &step.action {
            recompute
                .entry(reason.as_str())
                .or_default()
                .push(step.node.as_str());
        }
    }
    let recomputed: usize = recompute.values().map(Vec::len).sum();
    reporter.say(&format!("deepr: preview: {restored} step(s) restored from checkpoints, {recomputed} recomputed, {fresh} not finished yet"));
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

/// The run's honest lower bound (`deepr_orchestrator::bound`): each node costs its
/// calls' measured latencies, calls of one kind in a node counting once when they could
/// run together; the bound is the larger of the critical path and the total work
/// spread over the node concurrency cap.
pub fn efficiency(
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

#[allow(clippy::too_many_arguments)]
pub fn write_reports(
    state_dir: &Path,
    record: &RunRecord,
    config: &ResearchConfig,
    result: &ResearchResult,
    completion: &Completion,
    ledger: &UsageLedger,
    archive: &FileArchive,
    started: Instant,
    reporter: &Reporter,
) -> Result<deepr_evidence::report::Report, Failure> {
    let dir = crate::record::run_dir(state_dir, &record.run_id);
    let usage = crate::paid::paid_usage(&dir.join("calls.jsonl"), ledger);
    let mut report = build_report(config, result, archive, &record.run_id, usage, completion);
    // A follow-up that searched beyond its parent's documents says so with the gaps.
    if let Some(note) = record.lineage.as_ref().and_then(|l| l.note.clone()) {
        report.gaps.insert(0, note);
    }
    report.changes = crate::lineage::changes_since(&dir, record, &report, archive);
    let details = run_details(state_dir, record, ledger, started);
    let markdown = render_markdown(&report, result, &details);
    if let Some(parent) = record.out.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let json_path = record.out.with_extension("json");
    let json = serde_json::to_vec_pretty(&report).context("cannot serialise report.json")?;
    write_atomically(&json_path, &json)?;
    write_atomically(&record.out, markdown.as_bytes())?;
    for unwritten in write_formats(record, &report, result, &details, &markdown)? {
        reporter.say(&format!("deepr: {unwritten}"));
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
    Ok(report)
}

/// What only Run details may show: time, paths, sources, models, this session's spend.
fn run_details(
    state_dir: &Path,
    record: &RunRecord,
    ledger: &UsageLedger,
    started: Instant,
) -> RunDetails {
    let mut details = session_details(state_dir, record, ledger, started);
    // Where the run came from, when it is not a planner's plan of a new question.
    let mut origin = Vec::new();
    if let Some(lineage) = &record.lineage {
        origin.push((
            "Follows".to_string(),
            format!(
                "run `{}` ({}, started {})",
                lineage.parent,
                lineage.relation.as_str(),
                utc_rfc3339(lineage.parent_created)
            ),
        ));
    }
    if let Some(plan) = &record.user_plan {
        origin.push((
            "Plan".to_string(),
            format!(
                "{} subquestions as written beforehand (`--plan`, a follow-up's question or a refreshed run's plan); no planner call",
                plan.len()
            ),
        ));
    }
    let at = details.lines.len().min(7);
    details.lines.splice(at..at, origin);
    details
}

/// The lines every run's details hold.
fn session_details(
    state_dir: &Path,
    record: &RunRecord,
    ledger: &UsageLedger,
    started: Instant,
) -> RunDetails {
    RunDetails {
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
    }
}

/// The extra formats the run asked for (`html`, `bullets`, `cards`, `pdf`), beside the
/// report.
fn write_formats(
    record: &RunRecord,
    report: &deepr_evidence::report::Report,
    result: &ResearchResult,
    details: &RunDetails,
    markdown: &str,
) -> Result<Vec<String>, Failure> {
    let mut unwritten = Vec::new();
    let stem = record.out.with_extension("");
    let with_suffix = |suffix: &str| {
        let mut name = stem.clone().into_os_string();
        name.push(suffix);
        std::path::PathBuf::from(name)
    };
    for format in &record.formats {
        let (path, bytes) = match format.as_str() {
            "html" => (
                with_suffix(".html"),
                deepr_stages::formats::render_html(report, result, details).into_bytes(),
            ),
            "bullets" => (
                with_suffix(".bullets.md"),
                deepr_stages::formats::render_bullets(report).into_bytes(),
            ),
            "cards" => (
                with_suffix(".cards.tsv"),
                deepr_stages::formats::render_cards(report).into_bytes(),
            ),
            // A PDF that cannot be made leaves the run's other reports standing.
            "pdf" => match deepr_pdf::render_pdf(markdown, &report.topic) {
                Ok(bytes) => (with_suffix(".pdf"), bytes),
                Err(why) => {
                    unwritten.push(format!(
                        "no PDF report: {why} (the markdown report is written)"
                    ));
                    continue;
                }
            },
            _ => continue,
        };
        write_atomically(&path, &bytes)?;
    }
    Ok(unwritten)
}

/// What the report says of the corpus: how many files were read, and every file not
/// read or read in part, with its reason.
pub fn corpus_files(report: &deepr_providers::CorpusScan) -> deepr_evidence::report::CorpusFiles {
    let listed = |files: &[(String, String)]| {
        files
            .iter()
            .map(|(path, reason)| deepr_evidence::report::SkippedFile {
                path: path.clone(),
                reason: reason.clone(),
            })
            .collect()
    };
    let documents = report.extracted.len() + report.reused.len();
    deepr_evidence::report::CorpusFiles {
        read: report.files_read,
        documents: if documents > report.files_read {
            documents
        } else {
            0
        },
        skipped: listed(&report.skipped),
        partial: listed(&report.partial),
    }
}

/// The export bundle of the report at `markdown_path` (its sidecar beside it) with the
/// archived text of every cited source from `archive`, and how many sources it carries.
pub fn bundle(
    archive: &FileArchive,
    markdown_path: &Path,
    run_id: &str,
) -> Result<(Vec<u8>, usize), Failure> {
    let json_path = markdown_path.with_extension("json");
    let report: Report = serde_json::from_slice(&std::fs::read(&json_path).map_err(|e| {
        usage(format!(
            "run {run_id} has no report at {} ({e}); finish it with `deepr resume {run_id}`",
            json_path.display()
        ))
    })?)
    .map_err(|e| usage(format!("{} is malformed ({e})", json_path.display())))?;
    let markdown = std::fs::read_to_string(markdown_path)
        .map_err(|e| usage(format!("cannot read {} ({e})", markdown_path.display())))?;
    let mut texts = BTreeMap::new();
    for source in &report.sources {
        let text = archive.get(&source.content_sha256).ok_or_else(|| {
            Failure::Run(anyhow::anyhow!(
                "the archived text of {} ({}) is missing from the archive",
                source.id,
                source.locator
            ))
        })?;
        texts.insert(source.content_sha256.clone(), text.text.to_string());
    }
    let bundle = Bundle {
        schema: BUNDLE_SCHEMA.into(),
        report,
        markdown,
        texts,
    };
    let sources = bundle.texts.len();
    let bytes = serde_json::to_vec(&bundle).map_err(|e| Failure::Run(e.into()))?;
    Ok((bytes, sources))
}

/// Write a run's stored reports (extension → text) beside `out`, the markdown report
/// at `out` itself; the export bundle is not written. Returns the paths, joined.
pub fn write_stored_reports(reports: &serde_json::Value, out: &Path) -> Result<String, Failure> {
    let files = reports
        .as_object()
        .ok_or_else(|| Failure::Run(anyhow::anyhow!("the stored reports are malformed")))?;
    let folder = out.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(folder) = folder {
        std::fs::create_dir_all(folder)
            .map_err(|e| usage(format!("cannot create {}: {e}", folder.display())))?;
    }
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("report");
    let mut written = Vec::new();
    for (extension, text) in files {
        // Stored by extension ("md", "json", "html", "bullets.md", …); the export
        // bundle stays in the database (`deepr runs export`).
        let Some(text) = text.as_str() else { continue };
        if extension == "bundle" || extension.contains('/') || extension.contains("..") {
            continue;
        }
        let name = format!("{stem}.{extension}");
        let path = match folder {
            Some(folder) => folder.join(name),
            None => std::path::PathBuf::from(name),
        };
        write_atomically(&path, text.as_bytes())?;
        written.push(path.display().to_string());
    }
    written.sort();
    Ok(written.join(", "))
}
