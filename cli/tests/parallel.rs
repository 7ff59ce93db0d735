//! Parallel I/O inside steps, through the binary: `--io-concurrency 1` (one call at a
//! time) and the default write the same report, tokens and calls under randomised
//! simulated latencies; the new settings reject bad values with a usage error.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::path::Path;

use common::{above_run_details, deepr, fixture_corpus, stderr};

const TOPIC: &str =
    "How does the rollback journal protect a transaction, and what is the default journal page size?";

fn run(home: &Path, run_id: &str, extra: &[&str]) -> std::process::Output {
    // Each run its own state dir: a shared response cache would serve the second.
    let state = home.join(format!("state-{run_id}"));
    let out = home.join(format!("{run_id}.md"));
    let corpus = fixture_corpus();
    let mut args = vec![
        "--quiet",
        "--state-dir",
        state.to_str().expect("utf-8"),
        "run",
        TOPIC,
        "--corpus",
        corpus.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "--run-id",
        run_id,
    ];
    args.extend_from_slice(extra);
    deepr(home, &args)
}

fn calls(home: &Path, run_id: &str) -> usize {
    let journal = home
        .join(format!("state-{run_id}/runs"))
        .join(run_id)
        .join("calls.jsonl");
    std::fs::read_to_string(journal)
        .expect("journal")
        .lines()
        .count()
}

#[test]
fn parallel_and_sequential_runs_write_the_same_report_tokens_and_calls() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let latency = [
        "--offline-latency",
        "2ms..20ms+5000tok/s",
        "--search-latency",
        "1ms..25ms",
        "--fetch-latency",
        "1ms~10ms",
        "--latency-seed",
        "11",
    ];
    let mut sequential_args = latency.to_vec();
    sequential_args.extend(["--io-concurrency", "1"]);
    let sequential = run(h, "sequential", &sequential_args);
    assert!(sequential.status.success(), "{}", stderr(&sequential));
    let mut parallel_args = latency.to_vec();
    parallel_args.extend(["--io-concurrency", "8"]);
    let parallel = run(h, "parallel", &parallel_args);
    assert!(parallel.status.success(), "{}", stderr(&parallel));

    let report = |id: &str| above_run_details(&h.join(format!("{id}.md")));
    assert_eq!(report("parallel"), report("sequential"));
    let usage = |id: &str| -> serde_json::Value {
        let json = std::fs::read(h.join(format!("{id}.json"))).expect("report.json");
        let report: serde_json::Value = serde_json::from_slice(&json).expect("json");
        report["usage"].clone()
    };
    assert_eq!(usage("parallel"), usage("sequential"));
    assert!(usage("parallel")["calls"].as_u64().unwrap_or(0) > 0);
    assert_eq!(calls(h, "parallel"), calls(h, "sequential"));

    // The settings are kept in the run record, so a resume uses them too.
    let record =
        std::fs::read_to_string(h.join("state-parallel/runs/parallel/run.json")).expect("run.json");
    assert!(record.contains("\"io_concurrency\": 8"), "{record}");
    assert!(record.contains("1ms..25ms"), "{record}");
    let sequential = std::fs::read_to_string(h.join("state-sequential/runs/sequential/run.json"))
        .expect("run.json");
    assert!(
        sequential.contains("\"io_concurrency\": 1"),
        "the flag was taken: {sequential}"
    );
}

#[test]
fn bad_concurrency_and_latency_values_are_usage_errors() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    for (args, expected) in [
        (
            vec!["--io-concurrency", "0"],
            "--io-concurrency 0 is out of range",
        ),
        (
            vec!["--io-concurrency", "65"],
            "--io-concurrency 65 is out of range",
        ),
        (
            vec!["--search-latency", "900ms..300ms"],
            "upper bound is below",
        ),
        (vec!["--fetch-latency", "fast"], "--fetch-latency"),
        (
            vec!["--offline-latency", "800ms+0tok/s"],
            "at least 1 tok/s",
        ),
        (vec!["--offline-latency", "800ms+60"], "like 60tok/s"),
        (vec!["--search-latency", "2h"], "over an hour"),
    ] {
        let output = run(h, "bad", &args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        assert!(message.contains(expected), "{args:?}: {message}");
        assert_eq!(message.trim().lines().count(), 1, "one line: {message}");
        assert!(
            !h.join("state-bad/runs/bad").exists(),
            "{args:?}: nothing written"
        );
    }
    let config = h.join("deepr.toml");
    std::fs::write(&config, "io_concurrency = 0\n").expect("config");
    let output = deepr(
        h,
        &[
            "--config",
            config.to_str().expect("utf-8"),
            "run",
            TOPIC,
            "--corpus",
            fixture_corpus().to_str().expect("utf-8"),
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--io-concurrency 0 is out of range"));
}
