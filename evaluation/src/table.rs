//! `bench.md` and `bench.svg`: the strategy table, the per-run table and a bar chart.

use std::path::Path;

use deepr_session::Failure;

use crate::facts;
use crate::qa::QaRow;
use crate::rows::{BenchRow, StrategyRow};
use crate::{BenchFile, ByConstruction, BENCH_SCHEMA};

/// With the offline model, what its columns can and cannot measure.
pub const BY_CONSTRUCTION_NOTE: &str = "† By construction with the offline model: its claims restate the sentence they cite and its quotes are looked up by ID (free-quote: copied exactly), so `supported` (except per-claim's voters) and `verbatim` cannot fail here; they measure something only with a real model.";

pub fn markdown(
    summary: &[StrategyRow],
    rows: &[BenchRow],
    topics: usize,
    offline: bool,
) -> String {
    let mut out = format!("# deepr bench\n\n{topics} topic(s) × {} strateg(ies). Tokens are prompt + completion as counted by the model server (o200k for the offline model).\n\n", summary.len());
    let mark = if offline { "†" } else { "" };
    out.push_str(&format!("| strategy | runs | LLM calls | prompt | completion | cached | total tokens | judge tokens | cost $ | wall s | claims | supported{mark} | verbatim{mark} | tokens / supported claim | wall ÷ lower bound | quotes on topic | repeated quotes | words / report | sentences dropped | tokens / 1,000 words |\n"));
    out.push_str(
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in summary {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.4} | {:.1} | {} | {:.0}% | {:.1}% | {} | {} | {:.0}% | {} | {:.0} | {} | {} |\n",
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
            s.wall_over_lower_bound.map(|r| format!("{r:.2}")).unwrap_or_else(|| "—".into()),
            s.relevant_share * 100.0,
            s.duplicate_quotes,
            s.words_per_report,
            s.dropped_sentences,
            s.tokens_per_1000_words.map(|t| format!("{t:.0}")).unwrap_or_else(|| "—".into())
        ));
    }
    if offline {
        out.push_str(&format!("\n{BY_CONSTRUCTION_NOTE}\n"));
    }
    out.push_str("\nQuotes on topic: share of quoted sentences sharing at least two content words, each in under 20 % of the corpus's documents, with the topic or their subquestion. Repeated quotes: citations whose quote was already cited under another section. Words / report: words in the article's body (summary and sections, footnotes not counted); sentences dropped: sentences a writer wrote that did not stand on the quotes they cite (the grounding check); tokens / 1,000 words: total tokens per 1,000 body words.\n");
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

pub use crate::chart::escape;

/// Two bar panels: total tokens per strategy, and verbatim rate per strategy.
pub fn svg(summary: &[StrategyRow]) -> String {
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

/// The QA section of `bench.md`.
pub fn qa_markdown(rows: &[QaRow]) -> String {
    let mut out = String::from(
        "\n## Answers against the official QA (content-word recall of the answer by the quoted sentences)\n\n\
         Per question, the BM25 baseline takes the top sentences for the question itself (de-duplicated) until they reach deepr's quoted characters for that question; `vs BM25` is deepr's mean recall ÷ that baseline's, over all questions (with its 95 % bootstrap interval over the questions: a difference inside it is noise) and over each half (first half: for tuning; second: for checking). Candidate pool: the share of the answer in the sentences the extractor was shown. Per-question figures: `qa.jsonl`.\n\n\
         | method | questions | answer recall | questions with evidence | sentences per question | characters per question | vs BM25 same characters (all (95 % interval) · 1st half · 2nd half) | candidate pool recall |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let ratio = row
            .vs_bm25_same_characters
            .map(|h| {
                format!(
                    "{:.2}× ({:.2}–{:.2}) · {:.2}× · {:.2}×",
                    h.all, h.all_interval[0], h.all_interval[1], h.first_half, h.second_half
                )
            })
            .unwrap_or_else(|| "—".into());
        let pool = row
            .candidate_pool_recall
            .map(|p| format!("{:.1}%", p * 100.0))
            .unwrap_or_else(|| "—".into());
        out.push_str(&format!(
            "| {} | {} | {:.1}% | {:.0}% | {:.1} | {:.0} | {ratio} | {pool} |\n",
            row.method,
            row.questions,
            row.answer_recall * 100.0,
            row.with_evidence * 100.0,
            row.sentences,
            row.characters,
        ));
    }
    out
}

/// What bench.json and bench.md hold.
pub struct BenchTables<'a> {
    /// The topic set's name (its file), for bench.html's title.
    pub title: &'a str,
    pub summary: &'a [StrategyRow],
    pub rows: &'a [BenchRow],
    pub qa: Option<&'a [QaRow]>,
    pub facts: Option<&'a (Vec<facts::FactsSummary>, Vec<facts::FactRow>)>,
}

/// bench.json, bench.md, bench.svg and bench.html; returns the markdown table.
pub fn write_bench_files(
    out_dir: &Path,
    tables: BenchTables<'_>,
    topics: usize,
    offline: bool,
) -> Result<String, Failure> {
    let bench = BenchFile {
        schema: BENCH_SCHEMA.into(),
        strategies: tables.summary.to_vec(),
        runs: tables.rows.to_vec(),
        qa: tables.qa.map(<[_]>::to_vec),
        facts: tables
            .facts
            .map(|(strategies, checkpoints)| facts::FactsSummaryFile {
                strategies: strategies.clone(),
                checkpoints: checkpoints.clone(),
            }),
        by_construction: offline.then(|| ByConstruction {
            columns: vec!["supported_share".into(), "verbatim_rate".into()],
            why: BY_CONSTRUCTION_NOTE.into(),
        }),
    };
    deepr_session::util::write_atomically(
        &out_dir.join("bench.json"),
        &serde_json::to_vec_pretty(&bench).map_err(|e| Failure::Run(e.into()))?,
    )?;
    let mut table = markdown(tables.summary, tables.rows, topics, offline);
    if let Some(qa_rows) = tables.qa {
        table.push_str(&qa_markdown(qa_rows));
    }
    if let Some((summaries, rows)) = tables.facts {
        table.push_str(&facts::facts_markdown(summaries, rows));
    }
    deepr_session::util::write_atomically(&out_dir.join("bench.md"), table.as_bytes())?;
    let bars = svg(tables.summary);
    deepr_session::util::write_atomically(&out_dir.join("bench.svg"), bars.as_bytes())?;
    let (axis, points) = crate::chart::points(
        tables.summary,
        tables.qa,
        tables.facts.map(|(summaries, _)| summaries.as_slice()),
    );
    let page = crate::chart::page(tables.title, tables.summary, axis, &points, &bars);
    deepr_session::util::write_atomically(&out_dir.join("bench.html"), page.as_bytes())?;
    Ok(table)
}
