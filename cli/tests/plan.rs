//! Plan review end to end: `deepr run --plan-only` writes `plan.toml` beside `--out`
//! and researches nothing; the user edits it; `deepr run --plan plan.toml` researches
//! exactly the edited subquestions with no planner call; a malformed plan is a
//! one-line usage error naming its line; a plan-only run killed with SIGKILL writes its
//! plan when resumed, without paying for the planner twice.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;
use common::{deepr, fixture_corpus, spawn, stderr};

const TOPIC: &str =
    "How does the rollback journal protect a transaction, and what is the default journal page size?";

struct Home {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().to_path_buf();
        Self { _dir: dir, path }
    }

    fn state(&self) -> String {
        self.path.join("state").display().to_string()
    }

    fn out(&self) -> PathBuf {
        self.path.join("reports/report.md")
    }

    fn plan(&self) -> PathBuf {
        self.path.join("reports/plan.toml")
    }

    /// `deepr run` on the fixture corpus with `extra` flags (and TOPIC unless
    /// `topic` is false).
    fn run(&self, topic: bool, extra: &[&str]) -> std::process::Output {
        let (state, out) = (self.state(), self.out().display().to_string());
        let corpus = fixture_corpus().display().to_string();
        let mut args = vec!["--state-dir", &state, "--quiet", "run"];
        if topic {
            args.push(TOPIC);
        }
        args.extend(["--corpus", &corpus, "--out", &out]);
        args.extend(extra);
        deepr(&self.path, &args)
    }

    fn calls(&self, run_id: &str, stage: &str) -> usize {
        let journal = self
            .path
            .join("state/runs")
            .join(run_id)
            .join("calls.jsonl");
        std::fs::read_to_string(journal)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains(&format!("\"stage\":\"{stage}\"")))
            .count()
    }
}

fn read_plan(path: &Path) -> deepr_settings::ResearchPlan {
    let text = std::fs::read_to_string(path).expect("plan.toml written");
    deepr_settings::parse_plan(&text).expect("deepr reads back the plan it wrote")
}

#[test]
fn a_reviewed_plan_is_researched_exactly_as_edited() {
    let home = Home::new();
    let planned = home.run(true, &["--plan-only", "--run-id", "planning"]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    assert!(String::from_utf8_lossy(&planned.stdout).contains("plan written to"));
    assert!(!home.out().exists(), "--plan-only researched nothing");
    let plan = read_plan(&home.plan());
    assert_eq!(plan.topic, TOPIC);
    assert!(plan.subquestions.len() >= 2, "{plan:?}");
    assert_eq!(home.calls("planning", "decompose"), 1);
    assert_eq!(home.calls("planning", "extract"), 0, "nothing researched");
    let text = std::fs::read_to_string(home.plan()).unwrap();
    assert!(text.contains("# estimate for depth standard"), "{text}");
    let listed = deepr(&home.path, &["--state-dir", &home.state(), "runs", "list"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("planned"));

    // Edit: drop the first subquestion, add one of the user's own with a query.
    let mut edited = plan.clone();
    edited.subquestions.remove(0);
    edited.subquestions.push(deepr_settings::PlannedQuestion {
        question: "Which page size does the journal use by default?".into(),
        queries: vec!["default journal page size bytes".into()],
    });
    std::fs::write(home.plan(), deepr_settings::render_plan(&edited, &[])).unwrap();
    let plan_path = home.plan().display().to_string();
    let researched = home.run(false, &["--plan", &plan_path, "--run-id", "edited"]);
    assert!(researched.status.success(), "{}", stderr(&researched));
    assert_eq!(home.calls("edited", "decompose"), 0, "no planner call");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.out().with_extension("json")).unwrap()).unwrap();
    let asked: Vec<&str> = report["subquestions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["round"] == 0)
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    let wanted: Vec<&str> = edited
        .subquestions
        .iter()
        .map(|q| q.question.as_str())
        .collect();
    assert_eq!(asked, wanted);
    let markdown = std::fs::read_to_string(home.out()).unwrap();
    assert!(
        markdown.contains("as written beforehand (`--plan`"),
        "Run details say whose plan it was"
    );
    let out = home.out().display().to_string();
    let verified = deepr(&home.path, &["--state-dir", &home.state(), "verify", &out]);
    assert!(verified.status.success(), "{}", stderr(&verified));
}

#[test]
fn a_plan_that_cannot_be_used_is_a_usage_error_naming_its_line() {
    let home = Home::new();
    std::fs::create_dir_all(home.plan().parent().unwrap()).unwrap();
    let plan_path = home.plan().display().to_string();
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "topic = \"t\"\ndepth = \"quick\"\n[[subquestion]]\nquestoin = \"a\"\n",
            &[],
            "line 4",
        ),
        (
            "topic = \"t\"\ndepth = \"quick\"\n[[subquestion]]\nquestion = \"1?\"\n[[subquestion]]\nquestion = \"2?\"\n[[subquestion]]\nquestion = \"3?\"\n[[subquestion]]\nquestion = \"4?\"\n[[subquestion]]\nquestion = \"5?\"\n[[subquestion]]\nquestion = \"6?\"\n",
            &[],
            "line 13: 6 subquestions; depth quick researches at most 5",
        ),
        (
            "topic = \"t\"\ndepth = \"quick\"\n[[subquestion]]\nquestion = \"a\"\n",
            &["--depth", "deep"],
            "--depth deep differs",
        ),
        (
            "topic = \"t\"\ndepth = \"quick\"\n[[subquestion]]\nquestion = \"a\"\n",
            &["another topic"],
            "differs from the one in --plan",
        ),
    ];
    for (text, extra, says) in cases {
        std::fs::write(home.plan(), text).unwrap();
        let mut args = vec!["--plan", &plan_path];
        args.extend(extra.iter());
        let output = home.run(false, &args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{text}: {message}");
        assert!(message.contains(says), "{text}: {message}");
        assert_eq!(message.trim().lines().count(), 1, "{message}");
    }
    assert!(!home.path.join("state/runs").exists(), "no run was created");

    // An existing plan (maybe edited) is never overwritten by --plan-only.
    let before = std::fs::read(home.plan()).unwrap();
    let output = home.run(true, &["--plan-only"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("exists"));
    assert_eq!(std::fs::read(home.plan()).unwrap(), before);
}

#[test]
fn a_plan_only_run_killed_mid_plan_writes_its_plan_on_resume() {
    // The reference: a plan written in one go.
    let whole = Home::new();
    let output = whole.run(true, &["--plan-only", "--run-id", "whole"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let reference = read_plan(&whole.plan());

    let killed = Home::new();
    let (state, out) = (killed.state(), killed.out().display().to_string());
    let corpus = fixture_corpus().display().to_string();
    // Slow model calls, so the kill lands once the run exists and before its plan.
    let args = [
        "--state-dir",
        &state,
        "--quiet",
        "run",
        TOPIC,
        "--corpus",
        &corpus,
        "--out",
        &out,
        "--plan-only",
        "--run-id",
        "killed",
        "--offline-latency",
        "3s",
    ];
    let mut child = spawn(&killed.path, &args);
    let record = killed.path.join("state/runs/killed/run.json");
    let started = Instant::now();
    while !record.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The record reaches the checkpoint store just after run.json; the planner's call
    // takes 3 s.
    std::thread::sleep(Duration::from_millis(700));
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    assert!(
        !killed.plan().exists(),
        "killed before its plan was written"
    );
    let resumed = deepr(
        &killed.path,
        &["--state-dir", &state, "--quiet", "resume", "killed"],
    );
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(read_plan(&killed.plan()), reference);
    assert!(
        killed.calls("killed", "decompose") <= 1,
        "the planner is paid once"
    );
    assert!(!killed.out().exists(), "a plan-only run researches nothing");
}
