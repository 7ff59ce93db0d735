//! `deepr bench --qa`: scoring reports against official answers, beside BM25
//! baselines at the same budget.

use std::path::Path;

use deepr_checkpoints::FileArchive;
use deepr_evidence::report::Report;
use deepr_orchestrator::TextArchive;
use deepr_stages::Strategy;
use serde::{Deserialize, Serialize};

use crate::{usage, Failure};

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

pub(super) fn read_qa(path: &Path, limit: Option<usize>) -> Result<Vec<QaItem>, Failure> {
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

pub(super) fn terms(text: &str) -> std::collections::BTreeSet<String> {
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

pub(super) fn qa_row(method: &str, scores: &[(f64, bool, usize)]) -> QaRow {
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
pub(super) fn qa_table(
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
