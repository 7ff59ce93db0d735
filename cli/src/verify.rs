//! `deepr verify REPORT`: re-check every citation — never a sample — against the text
//! it was cut from, through the evidence layer's normaliser.
//!
//! Inputs: report.json (provenance: quote hash, content hash, sentence index), the
//! markdown report alone (its `[^N]: "QUOTE" — LOCATOR` footnotes; with its sidecar
//! beside it, every footnote must also be one of the sidecar's citations), or an export
//! bundle (`deepr runs export`), which carries the archived texts so no state dir is
//! needed. Outcomes: PASS (exit 0), FAIL (1), UNVERIFIED (3: nothing could be checked —
//! that output never says PASS), bad usage (2).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use deepr_checkpoints::FileArchive;
use deepr_evidence::normalise;
use deepr_evidence::report::{Report, REPORT_SCHEMA};
use deepr_evidence::verify::{
    check_against_archive, check_against_live, check_hashes, check_prose, json_rows, markdown_rows,
    outcome, prose_rows, Bundle, GateOutcome, ProseCheck, RowVerdict, BUNDLE_SCHEMA,
};
use deepr_orchestrator::TextArchive;

use crate::{state, usage, Failure, Globals, VerifyArgs};

/// Where source texts come from.
enum Texts {
    Bundle(BTreeMap<String, String>),
    Archive(Option<FileArchive>),
}

impl Texts {
    fn get(&self, sha: &str) -> Option<String> {
        match self {
            Self::Bundle(texts) => texts.get(sha).cloned(),
            Self::Archive(Some(archive)) => archive.get(sha).map(|t| t.text.to_string()),
            Self::Archive(None) => None,
        }
    }
}

fn short(text: &str, max: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        one
    } else {
        format!("{}…", one.chars().take(max - 1).collect::<String>())
    }
}

fn parse_max_live(value: Option<&str>) -> Result<usize, Failure> {
    match value {
        None => Ok(20),
        Some(v) => v.trim().parse::<usize>().map_err(|_| {
            usage(format!(
                "--max-live {v:?} is not a number of fetches; pass 0 or more, e.g. --max-live 20"
            ))
        }),
    }
}

pub fn execute(globals: &Globals, args: &VerifyArgs) -> Result<u8, Failure> {
    let max_live = parse_max_live(args.max_live.as_deref())?;
    let bytes = std::fs::read(&args.report).map_err(|e| {
        usage(format!(
            "cannot read {}: {e}; pass a report (.md or .json) or an export bundle",
            args.report.display()
        ))
    })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        usage(format!(
            "{} is not UTF-8 text; pass a deepr report or export bundle",
            args.report.display()
        ))
    })?;

    let state_dir = state::resolve(globals.state_dir.as_deref()).ok();
    let archive = || {
        Texts::Archive(
            state_dir
                .as_deref()
                .filter(|d| d.join("archive").is_dir())
                .and_then(|d| FileArchive::open(d).ok()),
        )
    };
    let (mut rows, texts, sidecar, article_report) = if text.trim_start().starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            usage(format!(
                "{} is not valid JSON ({e}); is it truncated?",
                args.report.display()
            ))
        })?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(BUNDLE_SCHEMA) => {
                let bundle: Bundle = serde_json::from_value(value).map_err(|e| {
                    usage(format!(
                        "{} is a malformed export bundle ({e})",
                        args.report.display()
                    ))
                })?;
                let rows = json_rows(&bundle.report);
                (rows, Texts::Bundle(bundle.texts), None, Some(bundle.report))
            }
            Some(REPORT_SCHEMA) => {
                let report: Report = serde_json::from_value(value).map_err(|e| {
                    usage(format!(
                        "{} is a malformed {REPORT_SCHEMA} report ({e})",
                        args.report.display()
                    ))
                })?;
                (json_rows(&report), archive(), None, Some(report))
            }
            other => {
                return Err(usage(format!(
                    "{} has schema {other:?}; expected {REPORT_SCHEMA} or {BUNDLE_SCHEMA}",
                    args.report.display()
                )))
            }
        }
    } else {
        let sidecar_path = args.report.with_extension("json");
        let sidecar = match std::fs::read(&sidecar_path) {
            Ok(bytes) => Some(serde_json::from_slice::<Report>(&bytes).map_err(|e| {
                usage(format!(
                    "the sidecar {} is malformed ({e}); fix or remove it",
                    sidecar_path.display()
                ))
            })?),
            Err(_) => None,
        };
        (markdown_rows(&text), archive(), sidecar, None)
    };
    // The article whose prose is checked: the report itself, or the sidecar's.
    let article_report = article_report.or_else(|| sidecar.clone());

    // Markdown rows: the content hash comes from the sidecar (by locator), and every
    // footnote must be one of the sidecar's citations.
    let mut preset: BTreeMap<usize, RowVerdict> = BTreeMap::new();
    if let Some(report) = &sidecar {
        let cited = json_rows(report);
        for row in rows.iter_mut() {
            let quote = normalise(&row.quote);
            match cited
                .iter()
                .find(|c| c.locator == row.locator && normalise(&c.quote) == quote)
            {
                Some(c) => row.content_sha256 = c.content_sha256.clone(),
                None => {
                    preset.insert(
                        row.row,
                        RowVerdict::Failed(
                            "not a citation of the report's sidecar (edited or added by hand?)"
                                .into(),
                        ),
                    );
                }
            }
        }
    }

    let known = std::cell::OnceCell::new();
    let locators = || {
        known.get_or_init(|| {
            state_dir
                .as_deref()
                .map(deepr_providers::indexed_locators)
                .unwrap_or_default()
        })
    };
    let http = if args.live {
        Some(
            deepr_providers::HttpClient::new(args.allow_private, Duration::from_secs(20), 20 << 20)
                .map_err(|e| Failure::Run(anyhow::anyhow!(e)))?,
        )
    } else {
        None
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(e.into()))?;
    let mut live_used = 0usize;
    let mut live_pages: BTreeMap<String, Result<String, String>> = BTreeMap::new();
    let mut verdicts = Vec::with_capacity(rows.len());
    let mut warnings = Vec::new();
    for row in &rows {
        if let Some(verdict) = preset.remove(&row.row) {
            verdicts.push(verdict);
            continue;
        }
        if row.locator.is_empty() {
            verdicts.push(RowVerdict::Failed(format!(
                "citation names {}, which is not a listed source",
                row.source
            )));
            continue;
        }
        if let Some(verdict) = check_hashes(row) {
            verdicts.push(verdict);
            continue;
        }
        let archived = row.content_sha256.as_deref().and_then(|sha| texts.get(sha));
        let mut verdict = match (&archived, &row.content_sha256) {
            (Some(text), _) => check_against_archive(row, text),
            (None, None) => {
                // A markdown footnote without a sidecar names only its locator: try the
                // archived texts the state dir indexed under that locator.
                let candidates: Vec<String> = locators().get(&row.locator).into_iter().flatten().filter_map(|sha| texts.get(sha)).collect();
                if candidates.is_empty() {
                    RowVerdict::Unchecked("no archived text is known for this locator (no sidecar, not in the state dir's corpus indexes)".into())
                } else if let Some(found) = candidates.iter().map(|t| check_against_archive(row, t)).find(|v| matches!(v, RowVerdict::Found(_))) {
                    found
                } else {
                    RowVerdict::Failed(format!("quote not found in the archived text of {}", row.locator))
                }
            }
            (None, Some(_)) => RowVerdict::Unchecked("archived text not found (use --state-dir, an export bundle, or --live for URL sources)".into()),
        };
        let is_url = row.locator.starts_with("http://") || row.locator.starts_with("https://");
        if let (Some(http), true) = (&http, is_url) {
            let page = match live_pages.get(&row.locator) {
                Some(page) => Some(page.clone()),
                None if live_used < max_live => {
                    live_used += 1;
                    let fetched = runtime
                        .block_on(http.get(&row.locator))
                        .map_err(|e| e.to_string())
                        .and_then(|page| {
                            let (format, bytes) = deepr_providers::web::page_bytes(
                                &page.content_type,
                                &row.locator,
                                &page.body,
                            )
                            .ok_or_else(|| {
                                format!("{} is not a readable document type", page.content_type)
                            })?;
                            deepr_providers::reading::read_bounded(bytes, format)
                                .map(|e| e.text)
                                .map_err(|e| format!("page text unreadable: {e}"))
                        });
                    live_pages.insert(row.locator.clone(), fetched.clone());
                    Some(fetched)
                }
                None => None,
            };
            match (page, &verdict) {
                (Some(Ok(page)), RowVerdict::Unchecked(_)) => {
                    verdict = check_against_live(row, &page)
                }
                (Some(Ok(page)), RowVerdict::Found(_)) => {
                    if let RowVerdict::Failed(_) = check_against_live(row, &page) {
                        warnings.push(format!("row {}: the live page no longer contains the quote (it changed since it was read)", row.row));
                    }
                }
                (Some(Err(why)), RowVerdict::Unchecked(_)) => {
                    verdict = RowVerdict::Unchecked(format!("live fetch could not answer: {why}"))
                }
                (None, RowVerdict::Unchecked(_)) => {
                    verdict = RowVerdict::Unchecked(format!(
                        "live fetch limit (--max-live {max_live}) reached"
                    ))
                }
                _ => {}
            }
        }
        verdicts.push(verdict);
    }

    // Prose: every sentence of the article stands on verified quotes.
    let quote_verdicts: BTreeMap<(String, String), RowVerdict> = rows
        .iter()
        .zip(&verdicts)
        .map(|(r, v)| ((r.locator.clone(), normalise(&r.quote)), v.clone()))
        .collect();
    let mut prose = article_report.as_ref().map(prose_rows).unwrap_or_default();
    let mut prose_verdicts: Vec<RowVerdict> = match &article_report {
        Some(report) => prose
            .iter()
            .map(|sentence| {
                check_prose(sentence, report, |locator, quote| {
                    quote_verdicts
                        .get(&(locator.to_string(), normalise(quote)))
                        .cloned()
                })
            })
            .collect(),
        None => vec![],
    };
    // A markdown report's prose must be exactly its sidecar's article, rendered.
    if let (Some(report), Some(_)) = (&article_report, &sidecar) {
        if let Some((line, why)) = crate::verify_prose::prose_mismatch(&text, report) {
            prose.push(ProseCheck {
                row: prose.len() + 1,
                section: "report.md".into(),
                text: line,
                claims: vec![],
            });
            prose_verdicts.push(RowVerdict::Failed(why));
        }
    }

    outln!(
        "{:>4}  {:<9}  {:<8}  {:<48}  WHY",
        "ROW",
        "RESULT",
        "SOURCE",
        "CLAIM"
    );
    for (row, verdict) in rows.iter().zip(&verdicts) {
        outln!(
            "{:>4}  {:<9}  {:<8}  {:<48}  {} ({})",
            row.row,
            verdict.label(),
            short(&row.source, 8),
            short(&row.claim, 48),
            verdict.why(),
            short(&row.locator, 60)
        );
    }
    if !prose.is_empty() {
        outln!(
            "\n{:>4}  {:<9}  {:<24}  {:<48}  WHY",
            "PROSE",
            "RESULT",
            "SECTION",
            "SENTENCE"
        );
        for (row, verdict) in prose.iter().zip(&prose_verdicts) {
            outln!(
                "{:>4}  {:<9}  {:<24}  {:<48}  {}",
                format!("P{}", row.row),
                verdict.label(),
                short(&row.section, 24),
                short(&row.text, 48),
                verdict.why()
            );
        }
    }
    let prose_failed: Vec<String> = prose
        .iter()
        .zip(&prose_verdicts)
        .filter(|(_, v)| matches!(v, RowVerdict::Failed(_)))
        .map(|(r, _)| format!("P{}", r.row))
        .collect();
    let prose_found = prose_verdicts
        .iter()
        .filter(|v| matches!(v, RowVerdict::Found(_)))
        .count();
    let prose_note = if prose.is_empty() {
        String::new()
    } else {
        format!(
            "; {prose_found} of {} prose sentences stand on verified quotes",
            prose.len()
        )
    };
    let found = verdicts
        .iter()
        .filter(|v| matches!(v, RowVerdict::Found(_)))
        .count();
    let failed: Vec<String> = rows
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| matches!(v, RowVerdict::Failed(_)))
        .map(|(r, _)| r.row.to_string())
        .collect();
    let unchecked = verdicts
        .iter()
        .filter(|v| matches!(v, RowVerdict::Unchecked(_)))
        .count();
    for warning in &warnings {
        outln!("warning: {warning}");
    }
    if unchecked > 0 && found > 0 {
        outln!(
            "warning: {unchecked} citation(s) could not be checked; their sources could not answer"
        );
    }
    let total = rows.len();
    let mut all = verdicts.clone();
    all.extend(prose_verdicts.iter().cloned());
    // Prose alone is never a pass: with no quote checked, the report is unverified.
    // A failed prose sentence needs no source text to fail: FAIL whatever the quotes.
    let gate = if prose_verdicts
        .iter()
        .any(|v| matches!(v, RowVerdict::Failed(_)))
    {
        GateOutcome::Fail
    } else {
        match outcome(&verdicts) {
            GateOutcome::Unverified => GateOutcome::Unverified,
            _ => outcome(&all),
        }
    };
    Ok(match gate {
        GateOutcome::Pass => {
            outln!(
                "PASS: {found} of {total} quotes found in their sources{}{prose_note}",
                if unchecked > 0 {
                    format!(", {unchecked} unchecked")
                } else {
                    String::new()
                }
            );
            0
        }
        GateOutcome::Fail => {
            let mut rows_failed = failed.clone();
            rows_failed.extend(prose_failed.iter().cloned());
            outln!(
                "FAIL: {} of {total} citations and {} of {} prose sentences failed (rows {})",
                failed.len(),
                prose_failed.len(),
                prose.len(),
                rows_failed.join(", ")
            );
            1
        }
        GateOutcome::Unverified => {
            outln!("UNVERIFIED: none of {total} citations could be checked");
            3
        }
    })
}

/// `deepr runs export RUN_ID --out FILE`.
pub fn export(state_dir: &Path, run_dir: &Path, run_id: &str, out: &Path) -> Result<u8, Failure> {
    let file = crate::record::read_run_file(run_dir).ok_or_else(|| {
        usage(format!(
            "run {run_id} has no run.json; it was stopped before it started"
        ))
    })?;
    let archive = FileArchive::open(state_dir).map_err(|e| Failure::Run(e.into()))?;
    let (bytes, sources) = bundle(&archive, &file.record.out, run_id)?;
    write_bundle(out, &bytes)?;
    errln!(
        "deepr: exported run {run_id} to {} ({sources} sources, {} bytes)",
        out.display(),
        bytes.len()
    );
    Ok(0)
}

/// Write an export bundle, creating its folder.
pub fn write_bundle(out: &Path, bytes: &[u8]) -> Result<(), Failure> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| usage(format!("cannot create {}: {e}", parent.display())))?;
    }
    crate::util::write_atomically(out, bytes)?;
    Ok(())
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
