//! `deepr bench` on the fixture corpus: every strategy runs, the table's claims hold
//! (linear ≤ 1/5 of per-claim's tokens, judge calls = ceil(claims/8) per round, a
//! measured verbatim rate), and a second invocation continues instead of re-running.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use common::{deepr, fixture_corpus, stderr};
use serde_json::Value;

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn bench_compares_strategies_and_resumes() {
    let home = tempfile::tempdir().expect("tempdir");
    let topics = home.path().join("topics.txt");
    std::fs::write(&topics, "# fixture topics\nHow does the rollback journal protect a transaction?\n\nWhat is the default journal page size?\n").expect("write");
    let out = home.path().join("bench");
    let corpus = fixture_corpus();
    let args = [
        "--quiet",
        "bench",
        "--topics",
        topics.to_str().expect("utf-8"),
        "--corpus",
        corpus.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "--jobs",
        "2",
        "--depth",
        "quick",
    ];
    let output = deepr(home.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let bench: Value =
        serde_json::from_slice(&std::fs::read(out.join("bench.json")).expect("bench.json"))
            .expect("parse");
    assert_eq!(bench["schema"], "deepr.bench.v1");
    let strategy = |name: &str| {
        bench["strategies"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["strategy"] == name))
            .cloned()
            .expect("strategy row")
    };
    let (linear, per_claim, free, none) = (
        strategy("linear"),
        strategy("per-claim"),
        strategy("free-quote"),
        strategy("no-judge"),
    );
    let tokens = |s: &Value| s["total_tokens"].as_u64().expect("tokens");
    // On this tiny corpus sources are short, so reading them whole costs little; the
    // one-fifth bar is checked on the bundled corpus below.
    assert!(
        tokens(&linear) < tokens(&per_claim),
        "linear {} vs per-claim {}",
        tokens(&linear),
        tokens(&per_claim)
    );
    assert_eq!(none["judge_tokens"], 0);
    for s in [&linear, &per_claim, &free, &none] {
        assert_eq!(s["runs"], 2);
        let rate = s["verbatim_rate"].as_f64().expect("rate");
        assert!((0.0..=1.0).contains(&rate));
        let relevant = s["relevant_share"].as_f64().expect("relevance");
        assert!((0.0..=1.0).contains(&relevant));
    }
    // Relevance is measured per run over its distinct quotes.
    for run in bench["runs"].as_array().expect("runs") {
        let (quoted, relevant) = (run["quoted"].as_u64(), run["relevant_quotes"].as_u64());
        assert!(quoted.is_some_and(|q| q > 0) && relevant <= quoted, "{run}");
    }
    // The offline model's by-construction columns are labelled as such.
    assert_eq!(bench["by_construction"]["columns"][1], "verbatim_rate");
    let md = std::fs::read_to_string(out.join("bench.md")).expect("bench.md");
    assert!(
        md.contains("supported†") && md.contains("By construction"),
        "{md}"
    );
    assert!(md.contains("quotes on topic"));
    // Linear judges in batches of one subquestion's claims, at most 8 each (the exact
    // count per subquestion is run.rs's): more than one claim a call, at least ceil(claims / 8).
    for run in bench["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["strategy"] == "linear")
    {
        let claims = run["claims"].as_u64().expect("claims");
        let calls = run["judge_calls"].as_u64().expect("judge calls");
        assert!(calls >= claims.div_ceil(8) && calls <= claims, "{run}");
    }
    // Per-claim: 3 votes per claim (a claim repeated verbatim under two subquestions is
    // asked once: its identical votes come from the response cache and cost nothing).
    for run in bench["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["strategy"] == "per-claim")
    {
        let calls = run["judge_calls"].as_u64().expect("calls");
        assert!(
            calls > 0
                && calls.is_multiple_of(3)
                && calls <= 3 * run["claims"].as_u64().expect("claims"),
            "{run}"
        );
    }
    assert!(std::fs::read_to_string(out.join("bench.svg"))
        .expect("svg")
        .starts_with("<svg"));
    assert!(std::fs::read_to_string(out.join("bench.md"))
        .expect("md")
        .contains("| per-claim |"));

    // A second invocation continues: nothing runs again, the same table comes out.
    let journal = |id: &str| {
        std::fs::read_to_string(out.join("state/runs").join(id).join("calls.jsonl"))
            .unwrap_or_default()
    };
    let before = journal("t01-linear");
    std::fs::remove_file(out.join("rows/t02-free-quote.json")).expect("forget one row");
    let again = deepr(home.path(), &args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        journal("t01-linear"),
        before,
        "finished cells are not re-run"
    );
    let second: Value =
        serde_json::from_slice(&std::fs::read(out.join("bench.json")).expect("bench.json"))
            .expect("parse");
    assert_eq!(
        second["strategies"][0]["total_tokens"],
        bench["strategies"][0]["total_tokens"]
    );

    // Bad input.
    std::fs::write(&topics, "# nothing\n\n").expect("write");
    assert_eq!(deepr(home.path(), &args).status.code(), Some(2));
    let bad = [
        "bench",
        "--topics",
        topics.to_str().expect("utf-8"),
        "--corpus",
        corpus.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "--strategies",
        "linear,magic",
    ];
    assert_eq!(deepr(home.path(), &bad).status.code(), Some(2));
}

#[test]
fn on_the_bundled_corpus_linear_costs_at_most_a_fifth_of_per_claim() {
    let home = tempfile::tempdir().expect("tempdir");
    let topics = home.path().join("topics.txt");
    std::fs::write(&topics, "How does SQLite guarantee atomic commits, and what changes in WAL mode?\nWhat limits does SQLite place on database size and string length?\n").expect("write");
    let out = home.path().join("bench");
    let corpus = common::root().join("examples/sqlite-docs");
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
            "--strategies",
            "linear,per-claim",
            "--jobs",
            "2",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let bench: Value =
        serde_json::from_slice(&std::fs::read(out.join("bench.json")).expect("bench.json"))
            .expect("parse");
    let total = |i: usize| {
        bench["strategies"][i]["total_tokens"]
            .as_u64()
            .expect("tokens")
    };
    assert_eq!(bench["strategies"][0]["strategy"], "linear");
    assert!(
        total(0) * 5 <= total(1),
        "linear {} must be at most a fifth of per-claim {}",
        total(0),
        total(1)
    );
}

#[test]
fn qa_mode_scores_reports_against_official_answers_and_a_bm25_baseline() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = home.path().join("qa");
    let corpus = common::root().join("examples/sqlite-docs");
    let faq = common::root().join("benches/data/sqlite_faq.json");
    let output = deepr(
        home.path(),
        &[
            "--quiet",
            "bench",
            "--qa",
            faq.to_str().expect("utf-8"),
            "--qa-limit",
            "3",
            "--corpus",
            corpus.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
            "--strategies",
            "linear",
            "--depth",
            "quick",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let bench: Value =
        serde_json::from_slice(&std::fs::read(out.join("bench.json")).expect("bench.json"))
            .expect("parse");
    let qa = bench["qa"].as_array().expect("qa rows");
    let methods: Vec<&str> = qa.iter().filter_map(|r| r["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "deepr linear",
            "deepr linear summary",
            "BM25 top sentences, same characters as deepr linear summary",
            "BM25 sentences, same characters as deepr linear",
            "BM25 sentences, same count as deepr linear",
            "BM25 sentences, top 5"
        ]
    );
    for row in qa {
        assert_eq!(row["questions"], 3);
        let recall = row["answer_recall"].as_f64().expect("recall");
        assert!((0.0..=1.0).contains(&recall));
    }
    // The same-characters baselines reach the characters of what they are compared
    // with (they stop at the first sentence that crosses them); the same-count one
    // quotes as many sentences.
    let (deepr, summary, summary_bm25, same_chars, same_count) = (0, 1, 2, 3, 4);
    let chars = |i: usize| qa[i]["characters"].as_f64().expect("characters");
    assert!(
        chars(same_chars) >= chars(deepr),
        "{} < {}",
        chars(same_chars),
        chars(deepr)
    );
    assert!(chars(summary_bm25) >= chars(summary));
    assert!(
        chars(summary) <= chars(deepr),
        "the summary quotes a part of the report"
    );
    assert_eq!(qa[deepr]["sentences"], qa[same_count]["sentences"]);
    let recall = |i: usize| qa[i]["answer_recall"].as_f64().expect("recall");
    for (ours, theirs) in [(deepr, same_chars), (summary, summary_bm25)] {
        let ratio = qa[ours]["vs_bm25_same_characters"]["all"]
            .as_f64()
            .expect("ratio");
        if recall(theirs) > 0.0 {
            assert!((ratio - recall(ours) / recall(theirs)).abs() < 1e-9);
        }
        // The bootstrap interval over the questions holds the ratio itself.
        let interval = &qa[ours]["vs_bm25_same_characters"]["all_interval"];
        let (low, high) = (
            interval[0].as_f64().expect("low"),
            interval[1].as_f64().expect("high"),
        );
        assert!(
            low <= ratio + 1e-9 && ratio <= high + 1e-9,
            "{low}–{high} vs {ratio}"
        );
    }
    // One line per question; the extractor's candidate pool holds every quote, so it
    // covers at least as much of the answer as the quotes do.
    let lines = std::fs::read_to_string(out.join("qa.jsonl")).expect("qa.jsonl");
    let rows: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(rows.len(), 3);
    for row in &rows {
        let pool = row["candidate_pool_recall"].as_f64().expect("pool recall");
        let deepr = row["deepr_recall"].as_f64().expect("deepr recall");
        assert!(pool >= deepr, "{row}");
        assert!(row["characters"].as_u64().expect("characters") > 0, "{row}");
    }
    assert!(qa[0]["candidate_pool_recall"].as_f64().is_some());
    assert!(std::fs::read_to_string(out.join("bench.md"))
        .expect("md")
        .contains("BM25 sentences, same characters as deepr linear"));
}

#[test]
fn orchestration_efficiency_is_wall_time_over_the_dag_lower_bound() {
    let home = tempfile::tempdir().expect("tempdir");
    let topics = home.path().join("topics.txt");
    std::fs::write(
        &topics,
        "How does the rollback journal protect a transaction?\n",
    )
    .expect("write");
    let out = home.path().join("eff");
    let corpus = fixture_corpus();
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
            "--strategies",
            "linear",
            "--offline-latency",
            "40ms",
            "--search-latency",
            "15ms",
            "--fetch-latency",
            "15ms",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let bench: Value =
        serde_json::from_slice(&std::fs::read(out.join("bench.json")).expect("bench.json"))
            .expect("parse");
    let run = &bench["runs"][0];
    let bound = run["lower_bound_s"].as_f64().expect("bound");
    let wall = run["pipeline_wall_s"].as_f64().expect("wall");
    assert!(
        bound > 0.2,
        "the simulated latencies give a real bound: {bound}"
    );
    // Simulated latencies are real sleeps: no schedule can beat the bound.
    assert!(wall >= bound * 0.98, "wall {wall} vs lower bound {bound}");
    assert!(bench["strategies"][0]["wall_over_lower_bound"]
        .as_f64()
        .is_some_and(|r| r >= 0.98));
}
