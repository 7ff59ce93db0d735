//! `deepr bench --facts FILE`: fact coverage, a figure users can compute for their own
//! document shares. FILE (TOML) holds a brief and its checkpoints: a statement, the key
//! values that must appear in the report's prose, and the stale values (from archived
//! or superseded documents) that must not. A checkpoint is **correct** when all its
//! values appear, **partial** when at least half do; coverage = (correct + ½ partial)
//! ÷ checkpoints. Stale values stated are counted apart, as are key values stated in
//! more than one body section (`crate::restated`). Values are matched in the
//! article's prose (summary and sections, not the quotes or the claim list), both sides
//! normalised by the one comparison function and case-folded.

use std::collections::BTreeSet;
use std::path::Path;

use deepr_evidence::report::Report;
use serde::{Deserialize, Serialize};

use deepr_stages::Strategy;

use deepr_session::{usage, Failure};

use crate::restated::{restated, section_prose};
use crate::trail::{Reach, Trail};
use crate::values::{folded, states};

/// The checkpoint file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactsFile {
    /// The brief (or question) every strategy researches.
    pub brief: String,
    #[serde(rename = "checkpoint")]
    pub checkpoints: Vec<Checkpoint>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub id: String,
    pub statement: String,
    /// Strings that must appear in the prose.
    pub values: Vec<String>,
    /// Outdated strings that must not.
    #[serde(default)]
    pub stale: Vec<String>,
    /// Where the fact is stated (for readers of the file and the rows).
    #[serde(default, rename = "where")]
    pub source: Option<String>,
}

/// What `bench.json` keeps of a facts bench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactsSummaryFile {
    pub strategies: Vec<FactsSummary>,
    pub checkpoints: Vec<FactRow>,
}

/// One checkpoint against one strategy's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactRow {
    pub strategy: String,
    pub id: String,
    pub statement: String,
    /// `correct`, `partial` or `missed`.
    pub outcome: String,
    pub found: Vec<String>,
    pub missing: Vec<String>,
    pub stale_stated: Vec<String>,
    /// Key values stated in more than one body section (`crate::restated`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restated: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Each missing value with the furthest stage of the run that held it
    /// (`crate::trail`); empty when the run's checkpoints could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<(String, Reach)>,
}

/// One strategy's fact coverage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactsSummary {
    pub strategy: String,
    pub checkpoints: usize,
    pub correct: usize,
    pub partial: usize,
    /// (correct + ½ partial) ÷ checkpoints.
    pub coverage: f64,
    /// Checkpoints whose stale values the prose states.
    pub stale_stated: usize,
    /// Checkpoints with a key value stated in more than one body section.
    #[serde(default)]
    pub restated: usize,
    /// Words of the article's prose.
    pub words: usize,
}

/// The checkpoint file, checked: parseable, at least one checkpoint, unique ids, every
/// checkpoint with a value, no blank strings.
pub fn read_facts(path: &Path) -> Result<FactsFile, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("cannot read --facts {}: {e}", path.display())))?;
    parse_facts(&text).map_err(|e| usage(format!("--facts {}: {e}", path.display())))
}

pub fn parse_facts(text: &str) -> Result<FactsFile, String> {
    let file: FactsFile = toml::from_str(text).map_err(|e| {
        let message = e.message().to_string();
        format!("not a facts file ({message}); see the README's `bench --facts` section")
    })?;
    if file.brief.trim().is_empty() {
        return Err("`brief` is empty".into());
    }
    if file.checkpoints.is_empty() {
        return Err("no [[checkpoint]] entries".into());
    }
    let mut ids = BTreeSet::new();
    for checkpoint in &file.checkpoints {
        if !ids.insert(checkpoint.id.as_str()) {
            return Err(format!("checkpoint id {:?} appears twice", checkpoint.id));
        }
        if checkpoint.values.is_empty() {
            return Err(format!("checkpoint {:?} has no values", checkpoint.id));
        }
        let blank = checkpoint
            .values
            .iter()
            .chain(&checkpoint.stale)
            .any(|v| v.trim().is_empty());
        if blank {
            return Err(format!("checkpoint {:?} has a blank value", checkpoint.id));
        }
    }
    Ok(file)
}

/// The article's prose: the summary and every section's sentences.
pub fn prose_of(report: &Report) -> String {
    let article = &report.article;
    let paragraphs = article
        .summary
        .iter()
        .chain(article.sections.iter().flat_map(|s| &s.paragraphs));
    let mut prose = String::new();
    for paragraph in paragraphs {
        for sentence in &paragraph.sentences {
            prose.push_str(&sentence.text);
            prose.push('\n');
        }
    }
    prose
}

/// Every checkpoint of `facts` against one report's prose; with the run's `trail`, each
/// missing value says where it was lost.
pub fn score(
    facts: &FactsFile,
    strategy: &str,
    prose: &str,
    trail: Option<&Trail>,
) -> Vec<FactRow> {
    let prose = folded(prose);
    facts
        .checkpoints
        .iter()
        .map(|checkpoint| {
            let (found, missing): (Vec<String>, Vec<String>) = checkpoint
                .values
                .iter()
                .cloned()
                .partition(|v| states(&prose, &folded(v)));
            let stale_stated = checkpoint
                .stale
                .iter()
                .filter(|v| states(&prose, &folded(v)))
                .cloned()
                .collect();
            let outcome = if missing.is_empty() {
                "correct"
            } else if found.len() * 2 >= checkpoint.values.len() {
                "partial"
            } else {
                "missed"
            };
            FactRow {
                strategy: strategy.to_string(),
                id: checkpoint.id.clone(),
                statement: checkpoint.statement.clone(),
                outcome: outcome.to_string(),
                lost: trail
                    .map(|t| missing.iter().map(|v| (v.clone(), t.reach(v))).collect())
                    .unwrap_or_default(),
                found,
                missing,
                stale_stated,
                restated: Vec::new(),
                source: checkpoint.source.clone(),
            }
        })
        .collect()
}

/// One strategy's coverage from its rows.
pub fn summarise(strategy: &str, rows: &[FactRow], words: usize) -> FactsSummary {
    let count = |outcome: &str| rows.iter().filter(|r| r.outcome == outcome).count();
    let (correct, partial) = (count("correct"), count("partial"));
    let coverage = if rows.is_empty() {
        0.0
    } else {
        (correct as f64 + 0.5 * partial as f64) / rows.len() as f64
    };
    FactsSummary {
        strategy: strategy.to_string(),
        checkpoints: rows.len(),
        correct,
        partial,
        coverage: (coverage * 1000.0).round() / 1000.0,
        stale_stated: rows.iter().filter(|r| !r.stale_stated.is_empty()).count(),
        restated: rows.iter().filter(|r| !r.restated.is_empty()).count(),
        words,
    }
}

/// Each strategy's report (`reports/t01-<strategy>.json` under `out_dir`) scored
/// against `facts`: the summaries and every checkpoint's row. `trail_of` reads a
/// strategy's run trail (`None`: where values were lost is not reported).
pub fn facts_table(
    facts: &FactsFile,
    strategies: &[Strategy],
    out_dir: &Path,
    trail_of: &dyn Fn(Strategy) -> Option<Trail>,
) -> Result<(Vec<FactsSummary>, Vec<FactRow>), Failure> {
    let mut summaries = Vec::new();
    let mut all_rows = Vec::new();
    for strategy in strategies {
        let path = out_dir
            .join("reports")
            .join(format!("t01-{}.json", strategy.as_str()));
        let bytes = std::fs::read(&path).map_err(|e| Failure::Run(e.into()))?;
        let report: Report = serde_json::from_slice(&bytes).map_err(|e| Failure::Run(e.into()))?;
        let prose = prose_of(&report);
        let trail = trail_of(*strategy);
        let mut rows = score(facts, strategy.as_str(), &prose, trail.as_ref());
        let sections = section_prose(&report);
        for (row, checkpoint) in rows.iter_mut().zip(&facts.checkpoints) {
            row.restated = restated(&checkpoint.values, &sections);
        }
        summaries.push(summarise(
            strategy.as_str(),
            &rows,
            prose.split_whitespace().count(),
        ));
        all_rows.extend(rows);
    }
    Ok((summaries, all_rows))
}

/// The facts section of `bench.md`.
pub fn facts_markdown(summaries: &[FactsSummary], rows: &[FactRow]) -> String {
    let mut out = String::from("\n## Fact coverage\n\n| strategy | checkpoints | correct | partial | coverage | stale values stated | stated in 2+ sections | prose words |\n|---|---|---|---|---|---|---|---|\n");
    for s in summaries {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} % | {} | {} | {} |\n",
            s.strategy,
            s.checkpoints,
            s.correct,
            s.partial,
            s.coverage * 100.0,
            s.stale_stated,
            s.restated,
            s.words
        ));
    }
    out.push_str(
        "\n| strategy | checkpoint | outcome | missing (where it was lost) | stale stated | in 2+ sections |\n|---|---|---|---|---|---|\n",
    );
    for row in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            row.strategy,
            row.id,
            row.outcome,
            missing_cell(row).replace('|', "/"),
            row.stale_stated.join(", ").replace('|', "/"),
            row.restated.join(", ").replace('|', "/")
        ));
    }
    out.push_str(&lost_summary(rows));
    out
}

/// A row's missing values, each with where it was lost when that is known.
fn missing_cell(row: &FactRow) -> String {
    row.missing
        .iter()
        .map(|v| match row.lost.iter().find(|(l, _)| l == v) {
            Some((_, reach)) => format!("{v} ({})", reach.as_str()),
            None => v.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many missing values were lost at each stage, per strategy: which part of the
/// pipeline to improve for this share.
fn lost_summary(rows: &[FactRow]) -> String {
    let mut counts: std::collections::BTreeMap<(&str, Reach), usize> = Default::default();
    let mut unknown: std::collections::BTreeMap<&str, usize> = Default::default();
    for row in rows {
        for value in &row.missing {
            match row.lost.iter().find(|(l, _)| l == value) {
                Some((_, reach)) => {
                    *counts.entry((row.strategy.as_str(), *reach)).or_default() += 1
                }
                None => *unknown.entry(row.strategy.as_str()).or_default() += 1,
            }
        }
    }
    if counts.is_empty() && unknown.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nMissing values by the furthest stage that held them:\n\n");
    let strategies: BTreeSet<&str> = rows.iter().map(|r| r.strategy.as_str()).collect();
    for strategy in strategies {
        let mut parts: Vec<String> = counts
            .iter()
            .filter(|((s, _), _)| *s == strategy)
            .map(|((_, reach), n)| format!("{n} {}", reach.as_str()))
            .collect();
        if let Some(n) = unknown.get(strategy) {
            parts.push(format!(
                "{n} not traced (the run's checkpoints could not be read)"
            ));
        }
        if !parts.is_empty() {
            out.push_str(&format!("- {strategy}: {}\n", parts.join("; ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
brief = "Due diligence on Kestrelmoor"
[[checkpoint]]
id = "revenue"
statement = "Q1 revenue was $14.2M, up 38%."
values = ["$14.2M", "38%"]
stale = ["$13.6M"]
[[checkpoint]]
id = "fleet"
statement = "3,412 robots deployed."
values = ["3,412"]
[[checkpoint]]
id = "funding"
statement = "Series C of $48M led by Northgate."
values = ["$48M", "Northgate Capital", "October 2025"]
"#;

    #[test]
    fn coverage_counts_correct_partial_and_stale() {
        let facts = parse_facts(FILE).unwrap();
        let prose = "Revenue reached $14.2m in the quarter, after a flash of $13.6M.\nThe Series C raised $48M from NORTHGATE  capital.";
        let rows = score(&facts, "linear", prose, None);
        let outcomes: Vec<&str> = rows.iter().map(|r| r.outcome.as_str()).collect();
        assert_eq!(outcomes, ["partial", "missed", "partial"]);
        assert_eq!(rows[0].stale_stated, ["$13.6M"]);
        let summary = summarise("linear", &rows, 20);
        assert_eq!(
            (summary.correct, summary.partial, summary.stale_stated),
            (0, 2, 1)
        );
        assert!((summary.coverage - 0.333).abs() < 1e-9);
        let all = score(
            &facts,
            "linear",
            "$14.2M up 38%; 3,412 robots; $48M Northgate Capital October 2025",
            None,
        );
        assert_eq!(summarise("linear", &all, 9).coverage, 1.0);
    }

    #[test]
    fn bad_files_are_usage_errors() {
        for (text, says) in [
            ("brief = 1", "not a facts file"),
            ("brief = \"x\"", "not a facts file"),
            ("brief = \"x\"\ncheckpoint = []", "no [[checkpoint]]"),
            ("brief = \"x\"\n[[checkpoint]]\nid = \"a\"\nstatement = \"s\"\nvalues = []", "no values"),
            ("brief = \"x\"\n[[checkpoint]]\nid = \"a\"\nstatement = \"s\"\nvalues = [\"1\"]\n[[checkpoint]]\nid = \"a\"\nstatement = \"s\"\nvalues = [\"2\"]", "twice"),
            ("brief = \"x\"\n[[checkpoint]]\nid = \"a\"\nstatement = \"s\"\nvalues = [\" \"]", "blank"),
            ("brief = \"x\"\n[[checkpoint]]\nid = \"a\"\nstatement = \"s\"\nvalues = [\"1\"]\nextra = 2", "not a facts file"),
        ] {
            let error = parse_facts(text).err().unwrap_or_default();
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }
}
