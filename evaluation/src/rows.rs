//! One row per topic × strategy run (measured from its report) and the totals per
//! strategy.

use std::collections::BTreeMap;
use std::path::Path;

use deepr_checkpoints::FileArchive;
use deepr_evidence::normalise;
use deepr_evidence::report::{Report, Verdict};
use deepr_orchestrator::TextArchive;
use deepr_stages::Strategy;
use serde::{Deserialize, Serialize};

use crate::quality;
use deepr_session::Failure;

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
    /// Distinct quotes per section, those on the topic or their subquestion, and those
    /// repeated from another section (`quality.rs`).
    #[serde(default)]
    pub quoted: u64,
    #[serde(default)]
    pub relevant_quotes: u64,
    #[serde(default)]
    pub duplicate_quotes: u64,
    /// Words in the article's body (summary and sections, footnotes not counted).
    #[serde(default)]
    pub words: u64,
    /// Sentences a writer wrote that the grounding check dropped.
    #[serde(default)]
    pub dropped_sentences: u64,
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
    /// Share of quoted sentences on the topic or their subquestion.
    #[serde(default)]
    pub relevant_share: f64,
    /// Quotes repeated across sections, in all runs.
    #[serde(default)]
    pub duplicate_quotes: u64,
    /// Mean words per report body.
    #[serde(default)]
    pub words_per_report: f64,
    /// Sentences dropped by the grounding check, in all runs.
    #[serde(default)]
    pub dropped_sentences: u64,
    /// Total tokens per 1,000 body words.
    #[serde(default)]
    pub tokens_per_1000_words: Option<f64>,
}

/// Measure one finished run from its report and the archive.
pub fn measure(report: &Report, archive: &FileArchive, run_id: &str, wall_s: f64) -> BenchRow {
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
        quoted: 0,
        relevant_quotes: 0,
        duplicate_quotes: 0,
        words: deepr_stages::article::body_words(&report.article) as u64,
        dropped_sentences: report.article.dropped.len() as u64,
    }
}

pub fn summarise(strategies: &[Strategy], rows: &[BenchRow]) -> Vec<StrategyRow> {
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
                relevant_share: {
                    let quoted = sum(|r| r.quoted);
                    if quoted == 0 {
                        0.0
                    } else {
                        sum(|r| r.relevant_quotes) as f64 / quoted as f64
                    }
                },
                duplicate_quotes: sum(|r| r.duplicate_quotes),
                words_per_report: if mine.is_empty() {
                    0.0
                } else {
                    sum(|r| r.words) as f64 / mine.len() as f64
                },
                dropped_sentences: sum(|r| r.dropped_sentences),
                tokens_per_1000_words: {
                    let words = sum(|r| r.words);
                    (words > 0).then(|| total as f64 * 1000.0 / words as f64)
                },
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

/// Each cell's row as its run wrote it, with the report's quote-quality figures added.
pub fn measured_rows(
    cells: &[(usize, String, Strategy)],
    out_dir: &Path,
    stats: &quality::CorpusStats,
) -> Result<Vec<BenchRow>, Failure> {
    let mut rows = Vec::new();
    for (topic_index, _, strategy) in cells {
        let run_id = format!("t{:02}-{}", topic_index + 1, strategy.as_str());
        let bytes = std::fs::read(out_dir.join("rows").join(format!("{run_id}.json")))
            .map_err(|e| Failure::Run(e.into()))?;
        let mut row =
            serde_json::from_slice::<BenchRow>(&bytes).map_err(|e| Failure::Run(e.into()))?;
        let report_path = out_dir.join("reports").join(format!("{run_id}.json"));
        let report: deepr_evidence::report::Report = serde_json::from_slice(
            &std::fs::read(&report_path).map_err(|e| Failure::Run(e.into()))?,
        )
        .map_err(|e| Failure::Run(e.into()))?;
        let found = quality::quality(&report, stats);
        (row.quoted, row.relevant_quotes, row.duplicate_quotes) =
            (found.quoted, found.relevant, found.duplicates);
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use deepr_evidence::report::{Citation, Claim, Source, Subquestion, Usage};

    use super::*;

    fn report(quotes: &[&str], sha: &str) -> Report {
        Report {
            schema: deepr_evidence::report::REPORT_SCHEMA.into(),
            run_id: "r".into(),
            topic: "t".into(),
            depth: "quick".into(),
            strategy: "free-quote".into(),
            complete: true,
            incomplete_reason: None,
            subquestions: vec![Subquestion {
                id: "q1".into(),
                text: "q".into(),
                round: 0,
            }],
            claims: quotes
                .iter()
                .enumerate()
                .map(|(i, quote)| Claim {
                    id: format!("q1-c{i}"),
                    subquestion: "q1".into(),
                    text: "claim".into(),
                    verdict: Verdict::Supported,
                    citations: vec![Citation {
                        source: "s1".into(),
                        sentence: 0,
                        sentence_end: None,
                        quote: quote.to_string(),
                        quote_sha256: String::new(),
                        place: None,
                    }],
                })
                .collect(),
            conflicts: vec![],
            sources: vec![Source {
                id: "s1".into(),
                locator: "a.md".into(),
                title: "A".into(),
                content_sha256: sha.into(),
                score: 1.0,
                status: "ok".into(),
                date: None,
                doc_status: None,
                author: None,
                date_basis: None,
                off_topic: None,
            }],
            coverage: vec![],
            usage: Usage::default(),
            article: Default::default(),
            corpus_files: None,
            gaps: Vec::new(),
            changes: None,
        }
    }

    /// The verbatim column is a measurement: a quote the source does not contain (a
    /// paraphrase, a changed number) is counted as not verbatim; whitespace is not a
    /// change (the normaliser folds it).
    #[test]
    fn a_quote_that_is_not_in_its_source_is_not_verbatim() {
        let dir = tempfile::tempdir().expect("tempdir");
        let archive = FileArchive::open(dir.path()).expect("archive");
        let sha = archive
            .put("The journal is deleted when the transaction commits. WAL appends frames.")
            .expect("put");
        let row = measure(
            &report(
                &[
                    "The journal is  deleted when the transaction commits.",
                    "The journal is removed when the transaction commits.",
                    "WAL appends 2 frames.",
                ],
                &sha,
            ),
            &archive,
            "r",
            0.0,
        );
        assert_eq!((row.verbatim, row.citations), (1, 3));
    }
}
