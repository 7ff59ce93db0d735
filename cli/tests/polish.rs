//! Shell polish: completions, --json progress events, --estimate, research memory,
//! exit codes in --help.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use common::{deepr, fixture_corpus, stderr};

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn completions_json_events_estimates_and_memory() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let state = h.join("state");
    let s = state.to_str().expect("utf-8").to_string();
    let corpus = fixture_corpus();
    let c = corpus.to_str().expect("utf-8").to_string();

    let bash = deepr(h, &["completions", "bash"]);
    assert!(bash.status.success() && String::from_utf8_lossy(&bash.stdout).contains("_deepr"));
    assert_eq!(deepr(h, &["completions", "tcsh"]).status.code(), Some(2));
    let help = deepr(h, &["--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains(
        "Exit codes: 0 ok, 1 run failed, 2 usage error, 3 unverified, 4 stopped by a budget"
    ));

    // --estimate prints a range and runs nothing.
    let estimate = deepr(
        h,
        &[
            "--state-dir",
            &s,
            "run",
            "rollback journal",
            "--corpus",
            &c,
            "--estimate",
            "--price-as",
            "gpt-4.1-mini",
        ],
    );
    let text = String::from_utf8_lossy(&estimate.stdout).into_owned();
    assert!(
        estimate.status.success() && text.contains("LLM calls") && text.contains('$'),
        "{text}"
    );
    assert!(
        !state.join("runs").exists()
            || std::fs::read_dir(state.join("runs"))
                .map(|d| d.count())
                .unwrap_or(0)
                == 0,
        "no run was created"
    );

    // --json: every stdout line is one JSON event; the run, its steps and the report.
    let out = h.join("a.md");
    let run = deepr(
        h,
        &[
            "--json",
            "--state-dir",
            &s,
            "run",
            "How does the rollback journal protect a transaction?",
            "--corpus",
            &c,
            "--out",
            out.to_str().expect("utf-8"),
            "--depth",
            "quick",
        ],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    for kind in ["run", "planned", "finished", "section", "report"] {
        assert!(kinds.contains(&kind), "{kind} event in {kinds:?}");
    }
    // First useful output: each judged section comes before the synthesis and the report.
    let first_section = kinds.iter().position(|k| *k == "section");
    let synthesized = events
        .iter()
        .position(|e| e["event"] == "finished" && e["stage"] == "synthesize");
    assert!(
        first_section < synthesized,
        "sections come before the summary"
    );
    let section = events
        .iter()
        .find(|e| e["event"] == "section")
        .expect("a section event");
    assert!(section["subquestion"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    assert!(section["claims"][0]["verdict"].is_string(), "{section}");

    // Research memory: a close topic mentions the past run; search finds it.
    let second = deepr(
        h,
        &[
            "--state-dir",
            &s,
            "run",
            "How does the rollback journal protect transactions?",
            "--corpus",
            &c,
            "--out",
            h.join("b.md").to_str().expect("utf-8"),
            "--depth",
            "quick",
        ],
    );
    assert!(
        stderr(&second).contains("a past run researched a close topic"),
        "{}",
        stderr(&second)
    );
    let search = deepr(
        h,
        &["--state-dir", &s, "runs", "search", "rollback journal"],
    );
    let found = String::from_utf8_lossy(&search.stdout).into_owned();
    assert!(found.contains("a.md") && found.contains("b.md"), "{found}");
    let none = deepr(h, &["--state-dir", &s, "runs", "search", "zebra migration"]);
    assert!(String::from_utf8_lossy(&none.stdout).contains("no past run"));
}
