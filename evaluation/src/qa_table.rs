//! The QA table: every strategy's reports scored against the official answers, beside
//! BM25 sentence retrieval at the same budget (same characters, same count, top 5), and
//! the recall of the candidate pools the extractors were shown.

use std::path::Path;

use deepr_checkpoints::FileArchive;
use deepr_evidence::report::Report;
use deepr_orchestrator::TextArchive;
use deepr_session::Failure;
use deepr_stages::Strategy;

use crate::qa::{
    answer_coverage, qa_row, ratio_halves, take_until_characters, QaItem, QaQuestionRow, QaRow,
    Score,
};

/// The texts of the candidate sentences the extractor was shown in run `run_id`
/// (every `…/score` node of its checkpoint store); `None` when the store is gone.
fn candidate_pool(
    runtime: &tokio::runtime::Runtime,
    state_dir: &Path,
    run_id: &str,
    archive: &FileArchive,
) -> Option<Vec<String>> {
    use deepr_orchestrator::CheckpointStore;
    let path = deepr_session::record::run_dir(state_dir, run_id).join("checkpoints.sled");
    let store = runtime
        .block_on(deepr_checkpoints::SledStore::open(&path))
        .ok()?;
    let mut pool = Vec::new();
    for id in store.finished_nodes().ok()? {
        if !id.ends_with("/score") {
            continue;
        }
        let Some(record) = store.get_node(&id).ok().flatten() else {
            continue;
        };
        let Ok(scored) = serde_json::from_value::<deepr_stages::types::ScoreOut>(record.output)
        else {
            continue;
        };
        for candidate in scored.candidates {
            if let Some(text) = archive.get(&candidate.content_sha256).and_then(|t| {
                t.quote(candidate.sentence, candidate.sentence_end)
                    .map(String::from)
            }) {
                pool.push(text);
            }
        }
    }
    Some(pool)
}

/// What `qa_table` returns: the rows, and one row per question and strategy.
pub struct QaTable {
    pub rows: Vec<QaRow>,
    pub questions: Vec<QaQuestionRow>,
}

/// Score every strategy's reports, and the BM25 baselines, against the answers.
pub fn qa_table(
    items: &[QaItem],
    strategies: &[Strategy],
    out_dir: &Path,
    state_dir: &Path,
    texts: &[(String, deepr_orchestrator::ArchivedText)],
) -> Result<QaTable, Failure> {
    let archive = FileArchive::open(state_dir).map_err(|e| Failure::Run(e.into()))?;
    // One runtime for reading every run's checkpoint store.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(e.into()))?;
    let ranked = bm25_rankings(items, texts)?;
    let mut rows = Vec::new();
    let mut questions = Vec::new();
    let mut baselines = Baselines::default();
    let mut same_characters_rows = Vec::new();
    for (s_index, strategy) in strategies.iter().enumerate() {
        let mut scored = StrategyScores::default();
        for (q_index, item) in items.iter().enumerate() {
            let run_id = format!("t{:02}-{}", q_index + 1, strategy.as_str());
            let path = out_dir.join("reports").join(format!("{run_id}.json"));
            let report: Report =
                serde_json::from_slice(&std::fs::read(&path).map_err(|e| Failure::Run(e.into()))?)
                    .map_err(|e| Failure::Run(e.into()))?;
            let pool = candidate_pool(&runtime, state_dir, &run_id, &archive)
                .map(|pool| answer_coverage(&item.answer, &pool).0);
            let first = (s_index == 0).then_some(&mut baselines);
            let mut row = score_question(item, &report, &ranked[q_index], &mut scored, first);
            row.question_index = q_index + 1;
            row.strategy = strategy.as_str().to_string();
            row.candidate_pool_recall = pool;
            scored.pools.extend(pool);
            questions.push(row);
        }
        strategy_rows(
            *strategy,
            &scored,
            items.len(),
            &mut rows,
            &mut same_characters_rows,
        );
    }
    rows.extend(same_characters_rows);
    rows.push(qa_row(
        &format!(
            "BM25 sentences, same count as deepr {}",
            strategies.first().map(|s| s.as_str()).unwrap_or("")
        ),
        &baselines.same_sentences,
    ));
    rows.push(qa_row("BM25 sentences, top 5", &baselines.top5));
    Ok(QaTable { rows, questions })
}

/// BM25's ranking of every question over the corpus's sentences, deep enough for any
/// character budget.
fn bm25_rankings(
    items: &[QaItem],
    texts: &[(String, deepr_orchestrator::ArchivedText)],
) -> Result<Vec<Vec<String>>, Failure> {
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
    let mut ranked: Vec<Vec<String>> = Vec::new();
    for item in items {
        let hits = baseline
            .search(&item.question, 400)
            .map_err(|e| Failure::Run(anyhow::anyhow!(e)))?;
        ranked.push(
            hits.iter()
                .filter_map(|(d, i)| sentence_text(d, *i))
                .collect(),
        );
    }
    Ok(ranked)
}

/// The baselines that do not depend on a strategy (measured with the first).
#[derive(Default)]
struct Baselines {
    /// BM25's top sentences, as many as deepr quoted.
    same_sentences: Vec<Score>,
    top5: Vec<Score>,
}

/// One strategy's scores over every question, beside BM25's at the same budget.
#[derive(Default)]
struct StrategyScores {
    scores: Vec<Score>,
    same_characters: Vec<Score>,
    pools: Vec<f64>,
    summary_scores: Vec<Score>,
    summary_baseline: Vec<Score>,
}

fn characters_of(quotes: &[String]) -> usize {
    quotes.iter().map(|q| q.chars().count()).sum()
}

/// A report's quotes (all of them, and the summary's) against the answer, and BM25's
/// top sentences at the same characters, count and top 5.
fn score_question(
    item: &QaItem,
    report: &Report,
    ranked: &[String],
    scored: &mut StrategyScores,
    baselines: Option<&mut Baselines>,
) -> QaQuestionRow {
    let mut quotes: Vec<String> = report
        .claims
        .iter()
        .flat_map(|c| c.citations.iter().map(|q| q.quote.clone()))
        .collect();
    quotes.sort();
    quotes.dedup();
    let characters = characters_of(&quotes);
    let (recall, evidence) = answer_coverage(&item.answer, &quotes);
    scored
        .scores
        .push((recall, evidence, quotes.len(), characters));
    let found = take_until_characters(ranked.iter().cloned(), characters);
    let (bm25_recall, bm25_evidence) = answer_coverage(&item.answer, &found);
    scored.same_characters.push((
        bm25_recall,
        bm25_evidence,
        found.len(),
        characters_of(&found),
    ));
    score_summary(item, report, ranked, scored);
    let by_count: Vec<String> = ranked.iter().take(quotes.len()).cloned().collect();
    let top: Vec<String> = ranked.iter().take(5).cloned().collect();
    let (count_recall, count_evidence) = answer_coverage(&item.answer, &by_count);
    let (top_recall, top_evidence) = answer_coverage(&item.answer, &top);
    if let Some(baselines) = baselines {
        baselines.same_sentences.push((
            count_recall,
            count_evidence,
            by_count.len(),
            characters_of(&by_count),
        ));
        baselines
            .top5
            .push((top_recall, top_evidence, top.len(), characters_of(&top)));
    }
    QaQuestionRow {
        question_index: 0,
        question: item.question.clone(),
        strategy: String::new(),
        deepr_recall: recall,
        bm25_same_characters_recall: bm25_recall,
        bm25_same_sentences_recall: count_recall,
        bm25_top5_recall: top_recall,
        candidate_pool_recall: None,
        quotes: quotes.len(),
        characters,
    }
}

/// The article's summary: the quotes of the claims its sentences cite, against BM25's
/// top sentences at the same characters.
fn score_summary(item: &QaItem, report: &Report, ranked: &[String], scored: &mut StrategyScores) {
    let mut summary_quotes: Vec<String> = report
        .article
        .summary
        .iter()
        .flat_map(|p| &p.sentences)
        .flat_map(|s| &s.claims)
        .filter_map(|id| report.claims.iter().find(|c| &c.id == id))
        .flat_map(|c| c.citations.iter().map(|q| q.quote.clone()))
        .collect();
    summary_quotes.sort();
    summary_quotes.dedup();
    let summary_characters = characters_of(&summary_quotes);
    let (summary_recall, summary_evidence) = answer_coverage(&item.answer, &summary_quotes);
    scored.summary_scores.push((
        summary_recall,
        summary_evidence,
        summary_quotes.len(),
        summary_characters,
    ));
    let top_summary = take_until_characters(ranked.iter().cloned(), summary_characters);
    let (top_summary_recall, top_summary_evidence) = answer_coverage(&item.answer, &top_summary);
    scored.summary_baseline.push((
        top_summary_recall,
        top_summary_evidence,
        top_summary.len(),
        characters_of(&top_summary),
    ));
}

/// A strategy's rows (its quotes and its summary, each against BM25 at the same
/// characters) and the BM25 rows at its budgets, which go after every strategy's.
fn strategy_rows(
    strategy: Strategy,
    scored: &StrategyScores,
    questions: usize,
    rows: &mut Vec<QaRow>,
    same_characters_rows: &mut Vec<QaRow>,
) {
    let mut row = qa_row(&format!("deepr {}", strategy.as_str()), &scored.scores);
    let ours: Vec<f64> = scored.scores.iter().map(|s| s.0).collect();
    let theirs: Vec<f64> = scored.same_characters.iter().map(|s| s.0).collect();
    row.vs_bm25_same_characters = Some(ratio_halves(&ours, &theirs));
    row.candidate_pool_recall = (scored.pools.len() == questions)
        .then(|| scored.pools.iter().sum::<f64>() / scored.pools.len().max(1) as f64);
    rows.push(row);
    let mut summary_row = qa_row(
        &format!("deepr {} summary", strategy.as_str()),
        &scored.summary_scores,
    );
    summary_row.vs_bm25_same_characters = Some(ratio_halves(
        &scored
            .summary_scores
            .iter()
            .map(|s| s.0)
            .collect::<Vec<_>>(),
        &scored
            .summary_baseline
            .iter()
            .map(|s| s.0)
            .collect::<Vec<_>>(),
    ));
    rows.push(summary_row);
    same_characters_rows.push(qa_row(
        &format!(
            "BM25 top sentences, same characters as deepr {} summary",
            strategy.as_str()
        ),
        &scored.summary_baseline,
    ));
    same_characters_rows.push(qa_row(
        &format!(
            "BM25 sentences, same characters as deepr {}",
            strategy.as_str()
        ),
        &scored.same_characters,
    ));
}
