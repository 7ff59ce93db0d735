//! Golden files that guard refactors: the bundled README run's report (above `## Run
//! details`) and the bench's calls and tokens per strategy on the bundled corpus. A
//! change that moves code must leave both byte-identical; a change that fixes a defect
//! updates the snapshot in the same commit and says why in the commit message. (The
//! fixture report is pinned by `run.rs`'s `fixture_report` snapshot.)
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use common::{above_run_details, deepr, root, stderr};
use serde_json::Value;

const README_TOPIC: &str =
    "How does SQLite guarantee atomic commits, and what changes in WAL mode?";

#[test]
fn readme_report_is_unchanged() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = home.path().join("report.md");
    let corpus = root().join("examples/sqlite-docs");
    let output = deepr(
        home.path(),
        &[
            "--quiet",
            "run",
            README_TOPIC,
            "--corpus",
            corpus.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let above = above_run_details(&out);
    assert!(above.contains("[^"), "the report cites quotes: {above}");
    insta::assert_snapshot!("readme_report", above);
}

#[test]
fn bench_calls_and_tokens_are_unchanged() {
    let home = tempfile::tempdir().expect("tempdir");
    let topics = home.path().join("topics.txt");
    // Two of the bench topics at quick depth: every strategy, every task kind.
    std::fs::write(
        &topics,
        format!(
            "{README_TOPIC}\nWhat limits does SQLite place on database size and string length?\n"
        ),
    )
    .expect("write topics");
    let out = home.path().join("bench");
    let corpus = root().join("examples/sqlite-docs");
    let output = deepr(
        home.path(),
        &[
            "--quiet",
            "bench",
            "--topics",
            topics.to_str().expect("utf-8"),
            "--corpus",
            corpus.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
            "--depth",
            "quick",
            "--jobs",
            "2",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let bench: Value =
        serde_json::from_slice(&std::fs::read(out.join("bench.json")).expect("bench.json"))
            .expect("parse bench.json");
    let mut rows: Vec<String> = bench["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| {
            format!(
                "{} | {} | claims {} | supported {} | calls {} | prompt {} | completion {} | judge tokens {}",
                run["strategy"].as_str().unwrap_or("?"),
                run["topic"].as_str().unwrap_or("?"),
                run["claims"],
                run["supported"],
                run["calls"],
                run["prompt_tokens"],
                run["completion_tokens"],
                run["judge_tokens"],
            )
        })
        .collect();
    rows.sort();
    assert_eq!(rows.len(), 8, "2 topics × 4 strategies: {rows:#?}");
    insta::assert_snapshot!("bench_calls_and_tokens", rows.join("\n"));
}
