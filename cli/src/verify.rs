//! `deepr verify REPORT`: re-check every citation — never a sample — against the text
//! it was cut from, through the evidence layer's normaliser.
//!
//! Inputs: report.json (provenance: quote hash, content hash, sentence index), the
//! markdown report alone (its `[^N]: "QUOTE" — LOCATOR` footnotes; with its sidecar
//! beside it, every footnote must also be one of the sidecar's citations), or an export
//! bundle (`deepr runs export`), which carries the archived texts so no state dir is
//! needed. Outcomes: PASS (exit 0), FAIL (1), UNVERIFIED (3: nothing could be checked —
//! that output never says PASS), bad usage (2).

use deepr_session::ExitStatus;
use std::collections::BTreeMap;
use std::path::Path;

use deepr_checkpoints::FileArchive;
use deepr_evidence::normalise;
use deepr_evidence::report::{Report, REPORT_SCHEMA};
use deepr_evidence::verify::{
    check_prose, json_rows, markdown_rows, outcome, prose_rows, Bundle, CitationCheck, GateOutcome,
    ProseCheck, RowVerdict, BUNDLE_SCHEMA,
};

use crate::verify_quotes::{Checker, Live, Texts};
use crate::{state, usage, Failure, Globals, VerifyArgs};

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

pub fn execute(globals: &Globals, args: &VerifyArgs) -> Result<ExitStatus, Failure> {
    let max_live = parse_max_live(args.max_live.as_deref())?;
    let state_dir = state::resolve(globals.state_dir.as_deref()).ok();
    let live = match args.live {
        true => Some(Live::new(args.allow_private, max_live)?),
        false => None,
    };
    let checked = check(&args.report, state_dir.as_deref(), live)?;
    print_rows(
        &checked.rows,
        &checked.verdicts,
        &checked.prose,
        &checked.prose_verdicts,
    );
    for warning in &checked.warnings {
        outln!("warning: {warning}");
    }
    let gate = checked.gate();
    for line in &gate.lines {
        outln!("{line}");
    }
    Ok(gate.status())
}

/// A report checked: every citation row and prose sentence with its verdict.
pub struct Checked {
    pub rows: Vec<CitationCheck>,
    pub verdicts: Vec<RowVerdict>,
    pub prose: Vec<ProseCheck>,
    pub prose_verdicts: Vec<RowVerdict>,
    /// What could not be checked and why.
    pub warnings: Vec<String>,
}

/// Checks every citation and prose sentence of the report (or bundle) at `path`
/// against the texts they were cut from; `live`: re-fetch web sources.
pub fn check(
    path: &Path,
    state_dir: Option<&Path>,
    live: Option<Live>,
) -> Result<Checked, Failure> {
    let loaded = load(path, state_dir)?;
    let mut rows = loaded.rows;
    let preset = match &loaded.sidecar {
        Some(sidecar) => against_sidecar(&mut rows, sidecar),
        None => BTreeMap::new(),
    };
    let checker = Checker {
        texts: &loaded.texts,
        locators: std::cell::OnceCell::new(),
        state_dir,
        live,
        warnings: Vec::new(),
    };
    let (verdicts, warnings) = checker.check_all(&rows, preset);
    // The article whose prose is checked: the report itself, or the sidecar's.
    let article = loaded.article.as_ref().or(loaded.sidecar.as_ref());
    let (prose, prose_verdicts) = check_article(
        &rows,
        &verdicts,
        article,
        loaded.sidecar.is_some(),
        &loaded.text,
    );
    Ok(Checked {
        rows,
        verdicts,
        prose,
        prose_verdicts,
        warnings,
    })
}

impl Checked {
    /// The gate on these verdicts.
    pub fn gate(&self) -> Gate {
        gate(
            &self.rows,
            &self.verdicts,
            &self.prose,
            &self.prose_verdicts,
        )
    }
}

/// How a JSON report or bundle starts (written as an escape so brace-counting tools
/// read this file's functions right).
const JSON_OBJECT_OPEN: char = '\u{7b}';

/// A report as `deepr verify` reads it: its citation rows, where their source texts
/// come from, its sidecar (a markdown report's report.json) and the report whose
/// article is checked.
struct Loaded {
    text: String,
    rows: Vec<CitationCheck>,
    texts: Texts,
    sidecar: Option<Report>,
    article: Option<Report>,
}

/// Reads a report (.md or .json) or an export bundle.
fn load(path: &Path, state_dir: Option<&Path>) -> Result<Loaded, Failure> {
    let bytes = std::fs::read(path).map_err(|e| {
        usage(format!(
            "cannot read {}: {e}; pass a report (.md or .json) or an export bundle",
            path.display()
        ))
    })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        usage(format!(
            "{} is not UTF-8 text; pass a deepr report or export bundle",
            path.display()
        ))
    })?;
    let archive = || {
        Texts::Archive(
            state_dir
                .filter(|d| d.join("archive").is_dir())
                .and_then(|d| FileArchive::open(d).ok()),
        )
    };
    if !text.trim_start().starts_with(JSON_OBJECT_OPEN) {
        return Ok(Loaded {
            rows: markdown_rows(&text),
            texts: archive(),
            sidecar: read_sidecar(&path.with_extension("json"))?,
            article: None,
            text,
        });
    }
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "{} is not valid JSON ({e}); is it truncated?",
            path.display()
        ))
    })?;
    let (report, texts) = match value.get("schema").and_then(|s| s.as_str()) {
        Some(BUNDLE_SCHEMA) => {
            let bundle: Bundle = serde_json::from_value(value).map_err(|e| {
                usage(format!(
                    "{} is a malformed export bundle ({e})",
                    path.display()
                ))
            })?;
            (bundle.report, Texts::Bundle(bundle.texts))
        }
        Some(REPORT_SCHEMA) => {
            let report: Report = serde_json::from_value(value).map_err(|e| {
                usage(format!(
                    "{} is a malformed {REPORT_SCHEMA} report ({e})",
                    path.display()
                ))
            })?;
            (report, archive())
        }
        other => {
            return Err(usage(format!(
                "{} has schema {other:?}; expected {REPORT_SCHEMA} or {BUNDLE_SCHEMA}",
                path.display()
            )))
        }
    };
    Ok(Loaded {
        rows: json_rows(&report),
        texts,
        sidecar: None,
        article: Some(report),
        text,
    })
}

/// A markdown report's sidecar, if there is one beside it.
fn read_sidecar(path: &Path) -> Result<Option<Report>, Failure> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice::<Report>(&bytes)
            .map(Some)
            .map_err(|e| {
                usage(format!(
                    "the sidecar {} is malformed ({e}); fix or remove it",
                    path.display()
                ))
            }),
        Err(_) => Ok(None),
    }
}

/// Markdown rows take their content hash from the sidecar (by locator), and every
/// footnote must be one of the sidecar's citations: the rows that are not, failed.
fn against_sidecar(rows: &mut [CitationCheck], sidecar: &Report) -> BTreeMap<usize, RowVerdict> {
    let cited = json_rows(sidecar);
    let mut preset = BTreeMap::new();
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
                        "not a citation of the report's sidecar (edited or added by hand?)".into(),
                    ),
                );
            }
        }
    }
    preset
}

/// Prose: every sentence of the article stands on verified quotes, and a markdown
/// report's prose is exactly its sidecar's article, rendered.
fn check_article(
    rows: &[CitationCheck],
    verdicts: &[RowVerdict],
    article: Option<&Report>,
    has_sidecar: bool,
    text: &str,
) -> (Vec<ProseCheck>, Vec<RowVerdict>) {
    let Some(report) = article else {
        return (Vec::new(), Vec::new());
    };
    let quote_verdicts: BTreeMap<(String, String), RowVerdict> = rows
        .iter()
        .zip(verdicts)
        .map(|(r, v)| ((r.locator.clone(), normalise(&r.quote)), v.clone()))
        .collect();
    let mut prose = prose_rows(report);
    let mut prose_verdicts: Vec<RowVerdict> = prose
        .iter()
        .map(|sentence| {
            check_prose(sentence, report, |locator, quote| {
                quote_verdicts
                    .get(&(locator.to_string(), normalise(quote)))
                    .cloned()
            })
        })
        .collect();
    if has_sidecar {
        if let Some((line, why)) = crate::verify_prose::prose_mismatch(text, report) {
            prose.push(ProseCheck {
                row: prose.len() + 1,
                section: "report.md".into(),
                text: line,
                claims: vec![],
            });
            prose_verdicts.push(RowVerdict::Failed(why));
        }
    }
    (prose, prose_verdicts)
}

/// The table of citation rows, then of prose sentences.
fn print_rows(
    rows: &[CitationCheck],
    verdicts: &[RowVerdict],
    prose: &[ProseCheck],
    prose_verdicts: &[RowVerdict],
) {
    outln!(
        "{:>4}  {:<9}  {:<8}  {:<48}  WHY",
        "ROW",
        "RESULT",
        "SOURCE",
        "CLAIM"
    );
    for (row, verdict) in rows.iter().zip(verdicts) {
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
    if prose.is_empty() {
        return;
    }
    outln!(
        "\n{:>4}  {:<9}  {:<24}  {:<48}  WHY",
        "PROSE",
        "RESULT",
        "SECTION",
        "SENTENCE"
    );
    for (row, verdict) in prose.iter().zip(prose_verdicts) {
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

/// The gate's verdict: its exit code, outcome and the lines that say it.
pub struct Gate {
    pub outcome: GateOutcome,
    pub lines: Vec<String>,
}

impl Gate {
    /// The command's exit status for the gate's outcome.
    pub fn status(&self) -> ExitStatus {
        match self.outcome {
            GateOutcome::Pass => ExitStatus::Success,
            GateOutcome::Fail => ExitStatus::Failed,
            GateOutcome::Unverified => ExitStatus::Unverified,
        }
    }
}

/// The gate: PASS (0), FAIL (1) or UNVERIFIED (3), said in one line. Prose alone is
/// never a pass (with no quote checked the report is unverified); a failed prose
/// sentence needs no source text to fail.
fn gate(
    rows: &[CitationCheck],
    verdicts: &[RowVerdict],
    prose: &[ProseCheck],
    prose_verdicts: &[RowVerdict],
) -> Gate {
    let failed: Vec<String> = rows
        .iter()
        .zip(verdicts)
        .filter(|(_, v)| matches!(v, RowVerdict::Failed(_)))
        .map(|(r, _)| r.row.to_string())
        .collect();
    let prose_failed: Vec<String> = prose
        .iter()
        .zip(prose_verdicts)
        .filter(|(_, v)| matches!(v, RowVerdict::Failed(_)))
        .map(|(r, _)| format!("P{}", r.row))
        .collect();
    let count = |of: &[RowVerdict], found: bool| {
        of.iter()
            .filter(|v| match found {
                true => matches!(v, RowVerdict::Found(_)),
                false => matches!(v, RowVerdict::Unchecked(_)),
            })
            .count()
    };
    let (found, unchecked) = (count(verdicts, true), count(verdicts, false));
    let mut lines = Vec::new();
    if unchecked > 0 && found > 0 {
        lines.push(format!(
            "warning: {unchecked} citation(s) could not be checked; their sources could not answer"
        ));
    }
    let total = rows.len();
    let outcome_now = if !prose_failed.is_empty() {
        GateOutcome::Fail
    } else {
        let mut all = verdicts.to_vec();
        all.extend(prose_verdicts.iter().cloned());
        match outcome(verdicts) {
            GateOutcome::Unverified => GateOutcome::Unverified,
            _ => outcome(&all),
        }
    };
    match outcome_now {
        GateOutcome::Pass => {
            let unchecked_note = match unchecked {
                0 => String::new(),
                n => format!(", {n} unchecked"),
            };
            let prose_note = match prose.len() {
                0 => String::new(),
                n => format!(
                    "; {} of {n} prose sentences stand on verified quotes",
                    count(prose_verdicts, true)
                ),
            };
            lines.push(format!("PASS: {found} of {total} quotes found in their sources{unchecked_note}{prose_note}"));
            Gate {
                outcome: GateOutcome::Pass,
                lines,
            }
        }
        GateOutcome::Fail => {
            lines.push(format!(
                "FAIL: {} of {total} citations and {} of {} prose sentences failed (rows {})",
                failed.len(),
                prose_failed.len(),
                prose.len(),
                [failed, prose_failed].concat().join(", ")
            ));
            Gate {
                outcome: GateOutcome::Fail,
                lines,
            }
        }
        GateOutcome::Unverified => {
            lines.push(format!(
                "UNVERIFIED: none of {total} citations could be checked"
            ));
            Gate {
                outcome: GateOutcome::Unverified,
                lines,
            }
        }
    }
}
