//! Resume that pays for nothing twice: SIGKILL at many instants, Ctrl-C/SIGTERM,
//! budgets, drift, concurrent runs, a run held by another process, a damaged store.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{above_run_details, deepr, fixture_corpus, live_requests, spawn, stderr};

const TOPIC: &str = "How does the rollback journal protect a transaction, and what is the default journal page size? What do lighthouse keepers eat?";
const LATENCY: &str = "15ms";

/// The report of an uninterrupted run, its wall time and its number of steps.
struct Baseline {
    report: String,
    wall: Duration,
    steps: usize,
}

fn finished_steps(home: &Path, state: &Path, run_id: &str) -> usize {
    let output = deepr(
        home,
        &[
            "--state-dir",
            state.to_str().expect("utf-8"),
            "runs",
            "show",
            run_id,
        ],
    );
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("finished steps: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("runs show prints finished steps: {text}"))
}

fn run_args<'a>(state: &'a str, out: &'a str, run_id: &'a str) -> Vec<&'a str> {
    vec![
        "--quiet",
        "--state-dir",
        state,
        "run",
        TOPIC,
        "--corpus",
        corpus(),
        "--out",
        out,
        "--run-id",
        run_id,
        "--offline-latency",
        LATENCY,
        // Searches and fetches take time too, and run at once inside their steps, so
        // kills land with several of them in flight.
        "--search-latency",
        "2ms..12ms",
        "--fetch-latency",
        "2ms..15ms",
    ]
}

fn corpus() -> &'static str {
    static CORPUS: OnceLock<String> = OnceLock::new();
    CORPUS.get_or_init(|| fixture_corpus().to_string_lossy().into_owned())
}

fn baseline() -> &'static Baseline {
    static BASELINE: OnceLock<Baseline> = OnceLock::new();
    BASELINE.get_or_init(|| {
        let home = tempfile::tempdir().expect("tempdir");
        let state = home.path().join("state");
        let out = home.path().join("base.md");
        let (s, o) = (
            state.to_string_lossy().into_owned(),
            out.to_string_lossy().into_owned(),
        );
        let started = Instant::now();
        let output = deepr(home.path(), &run_args(&s, &o, "base"));
        let wall = started.elapsed();
        assert!(output.status.success(), "baseline run: {}", stderr(&output));
        let requests = live_requests(&state, "base");
        let unique: BTreeSet<&String> = requests.iter().map(|(r, _)| r).collect();
        assert_eq!(
            unique.len(),
            requests.len(),
            "an uninterrupted run makes no call twice"
        );
        Baseline {
            report: above_run_details(&out),
            wall,
            steps: finished_steps(home.path(), &state, "base"),
        }
    })
}

struct Trial {
    _home: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    out: PathBuf,
}

fn trial() -> Trial {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().to_path_buf();
    Trial {
        state: path.join("state"),
        out: path.join("report.md"),
        home: path,
        _home: home,
    }
}

impl Trial {
    fn s(&self) -> String {
        self.state.to_string_lossy().into_owned()
    }
    fn o(&self) -> String {
        self.out.to_string_lossy().into_owned()
    }
    fn resume(&self, run_id: &str, extra: &[&str]) -> std::process::Output {
        let s = self.s();
        let mut args = vec!["--quiet", "--state-dir", s.as_str(), "resume", run_id];
        args.extend_from_slice(extra);
        deepr(&self.home, &args)
    }
    /// The run finished with the baseline's report, every step once, no call paid twice.
    fn assert_matches_baseline(&self, run_id: &str, context: &str) {
        let base = baseline();
        assert_eq!(
            above_run_details(&self.out),
            base.report,
            "{context}: report identical above Run details"
        );
        let requests = live_requests(&self.state, run_id);
        let mut seen = BTreeSet::new();
        for (request, prompt) in &requests {
            assert!(
                seen.insert(request),
                "{context}: completed {prompt} call {request} was paid twice"
            );
        }
        assert_eq!(
            finished_steps(&self.home, &self.state, run_id),
            base.steps,
            "{context}: every step checkpointed once"
        );
    }
}

/// A small seeded generator, so the kill instants are reproducible.
struct XorShift(u64);
impl XorShift {
    fn next_unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn sigkill_at_any_instant_resumes_to_the_same_report_paying_nothing_twice() {
    let base = baseline();
    let instants: Vec<Duration> = {
        let mut rng = XorShift(0x5eed_dee9);
        let n = 50;
        let span = base.wall.as_secs_f64() * 1.05;
        let mut v: Vec<Duration> = vec![Duration::ZERO, Duration::from_millis(3)];
        v.extend(
            (0..n).map(|i| Duration::from_secs_f64(span * (i as f64 + rng.next_unit()) / n as f64)),
        );
        v
    };
    let mut before_record = 0;
    for (i, instant) in instants.iter().enumerate() {
        let t = trial();
        let (s, o) = (t.s(), t.o());
        let mut child = spawn(&t.home, &run_args(&s, &o, "crash"));
        std::thread::sleep(*instant);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let context = format!("kill #{i} at {instant:?}");
        let resumed = t.resume("crash", &[]);
        if resumed.status.code() == Some(2) {
            // Killed before the run record existed: there is nothing to resume, and
            // deepr says so (the user starts the run again).
            let message = stderr(&resumed);
            assert!(
                message.contains("no run") || message.contains("has no record"),
                "{context}: {message}"
            );
            before_record += 1;
            continue;
        }
        assert!(
            resumed.status.success(),
            "{context}: resume failed: {}",
            stderr(&resumed)
        );
        t.assert_matches_baseline("crash", &context);
    }
    // Process start-up (a debug binary, the runtime, the store) precedes the record; the
    // bulk of the instants must land in the run itself.
    assert!(
        before_record * 4 <= instants.len(),
        "too few kills landed inside the run ({before_record} of {})",
        instants.len()
    );
}

fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn ctrl_c_and_sigterm_stop_cleanly_and_resume() {
    baseline();
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        let t = trial();
        let (s, o) = (t.s(), t.o());
        // Slow calls (answers are the same at any latency), and the signal only once
        // the run is under way: it always lands before the run can finish.
        let args: Vec<&str> = run_args(&s, &o, "sig")
            .into_iter()
            .map(|a| if a == LATENCY { "300ms" } else { a })
            .collect();
        let child = spawn(&t.home, &args);
        let journal = t.state.join("runs/sig/calls.jsonl");
        let started = Instant::now();
        while std::fs::read_to_string(&journal)
            .map(|j| j.lines().count())
            .unwrap_or(0)
            < 2
        {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the run never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        signal(child.id(), name);
        let output = child.wait_with_output().expect("wait");
        let message = stderr(&output);
        assert!(
            !output.status.success(),
            "SIG{name} landed before the run finished: {message}"
        );
        assert_eq!(
            output.status.code(),
            Some(code),
            "SIG{name} exit code: {message}"
        );
        assert!(
            message.contains("resume with: deepr resume sig"),
            "SIG{name} says how to resume: {message}"
        );
        let listed = deepr(&t.home, &["--state-dir", &s, "runs", "list"]);
        assert!(String::from_utf8_lossy(&listed.stdout).contains("interrupted"));
        let resumed = t.resume("sig", &[]);
        assert!(resumed.status.success(), "{}", stderr(&resumed));
        t.assert_matches_baseline("sig", &format!("SIG{name}"));
    }
}

#[test]
fn a_budget_stops_with_an_incomplete_report_and_resume_finishes_it() {
    let t = trial();
    let (s, o) = (t.s(), t.o());
    let mut args = run_args(&s, &o, "budget");
    args.extend_from_slice(&["--max-tokens", "2500"]);
    let output = deepr(&t.home, &args);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.out.with_extension("json")).expect("json"))
            .expect("parse");
    assert_eq!(json["complete"], false);
    assert!(
        json["incomplete_reason"]
            .as_str()
            .is_some_and(|r| r.contains("token budget")),
        "{json}"
    );
    assert!(std::fs::read_to_string(&t.out)
        .expect("md")
        .contains("**Incomplete report.**"));
    let spent: u64 = {
        let text =
            std::fs::read_to_string(t.state.join("runs/budget/calls.jsonl")).expect("journal");
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(|v| {
                v["prompt_tokens"].as_u64().unwrap_or(0)
                    + v["completion_tokens"].as_u64().unwrap_or(0)
            })
            .sum()
    };
    assert!(
        spent >= 2500,
        "stopped only once the budget was reached ({spent})"
    );

    // A resume that is still over budget stops again at once and spends nothing.
    let again = t.resume("budget", &["--max-tokens", "2500"]);
    assert_eq!(again.status.code(), Some(4));
    let requests_before = live_requests(&t.state, "budget").len();
    let finished = t.resume("budget", &["--max-tokens", "1000000"]);
    assert!(finished.status.success(), "{}", stderr(&finished));
    assert!(live_requests(&t.state, "budget").len() > requests_before);
    t.assert_matches_baseline("budget", "budget then resume");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.out.with_extension("json")).expect("json"))
            .expect("parse");
    assert_eq!(json["complete"], true);
    assert_eq!(json["incomplete_reason"], serde_json::Value::Null);
}

#[test]
fn editing_a_prompt_recomputes_exactly_its_dependants() {
    let t = trial();
    let prompts = t.home.join("prompts");
    std::fs::create_dir_all(&prompts).expect("mkdir");
    let template = std::fs::read_to_string(common::root().join("prompts/templates/extract.txt"))
        .expect("template");
    std::fs::write(prompts.join("extract.txt"), &template).expect("write");
    let (s, o) = (t.s(), t.o());
    let mut args = run_args(&s, &o, "drift");
    let p = prompts.to_string_lossy().into_owned();
    args.extend_from_slice(&["--prompts", &p]);
    let output = deepr(&t.home, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let before = live_requests(&t.state, "drift").len();

    // Nothing changed: a dry run restores everything.
    let plan = deepr(
        &t.home,
        &["--state-dir", &s, "resume", "drift", "--dry-run"],
    );
    assert!(
        stderr(&plan).contains("0 recomputed, 0 not finished yet"),
        "{}",
        stderr(&plan)
    );

    std::fs::write(
        prompts.join("extract.txt"),
        format!("{template}\nPrefer claims with numbers.\n"),
    )
    .expect("edit");
    let plan = deepr(
        &t.home,
        &["--state-dir", &s, "resume", "drift", "--dry-run"],
    );
    let text = stderr(&plan);
    assert!(plan.status.success(), "{text}");
    assert!(
        text.contains("prompt extract changed: r0/q1/extract"),
        "the plan names the change: {text}"
    );
    assert!(
        text.contains("upstream"),
        "dependants are named as such: {text}"
    );
    assert!(
        !text.contains("/subquery") && !text.contains("/retrieve") && !text.contains("decompose"),
        "upstream steps are restored: {text}"
    );
    assert_eq!(
        live_requests(&t.state, "drift").len(),
        before,
        "a dry run spends nothing"
    );

    let resumed = t.resume("drift", &[]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let after = live_requests(&t.state, "drift");
    let new_prompts: BTreeSet<&str> = after[before..].iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(
        new_prompts,
        BTreeSet::from(["extract"]),
        "only the edited prompt's calls are paid again (the rest are cached)"
    );
    assert_eq!(above_run_details(&t.out), baseline().report);
}

#[test]
fn concurrent_runs_locks_damage_and_unknown_runs() {
    let t = trial();
    let s = t.s();
    // Two runs started at once on one state dir (the corpus index is built once).
    let outs: Vec<String> = (0..2)
        .map(|i| {
            t.home
                .join(format!("c{i}.md"))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let children: Vec<_> = (0..2)
        .map(|i| {
            let id = format!("c{i}");
            let topic = if i == 0 {
                "rollback journal"
            } else {
                "write-ahead logging checkpoint"
            };
            spawn(
                &t.home,
                &[
                    "--quiet",
                    "--state-dir",
                    &s,
                    "run",
                    topic,
                    "--corpus",
                    corpus(),
                    "--out",
                    &outs[i],
                    "--run-id",
                    &id,
                    "--depth",
                    "quick",
                ],
            )
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().expect("wait");
        assert!(
            output.status.success(),
            "concurrent run: {}",
            stderr(&output)
        );
    }

    // A run another live process executes cannot be resumed; the message names it.
    let o = t.o();
    let mut args = run_args(&s, &o, "held");
    let last = args.len() - 1;
    args[last] = "400ms";
    let mut holder = spawn(&t.home, &args);
    let owner = t.state.join("runs/held/owner.json");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !owner.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = t.resume("held", &[]);
    let message = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{message}");
    assert!(
        message.contains(&format!("process {}", holder.id())),
        "names the holder: {message}"
    );
    let _ = holder.kill();
    let _ = holder.wait();

    // A damaged store: a clear error naming the file; other runs untouched.
    let damaged = t.state.join("runs/c0/checkpoints.sled");
    for entry in std::fs::read_dir(&damaged).expect("store files").flatten() {
        if entry.path().is_file() {
            std::fs::write(entry.path(), b"\x00garbage\xffgarbage").expect("corrupt");
        }
    }
    let broken = t.resume("c0", &[]);
    let message = stderr(&broken);
    assert_eq!(broken.status.code(), Some(1), "{message}");
    assert!(
        message.contains("checkpoints.sled") && message.contains("damaged"),
        "{message}"
    );
    assert_eq!(message.trim().lines().count(), 1, "one line: {message}");
    let other = t.resume("c1", &[]);
    assert!(
        other.status.success(),
        "the other run still resumes: {}",
        stderr(&other)
    );

    // Unknown and unsafe ids are usage errors.
    assert_eq!(t.resume("nope", &[]).status.code(), Some(2));
    assert_eq!(t.resume("../c1", &[]).status.code(), Some(2));
}

#[test]
fn resuming_a_finished_run_re_renders_it_for_free() {
    let t = trial();
    let (s, o) = (t.s(), t.o());
    let output = deepr(&t.home, &run_args(&s, &o, "done"));
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::remove_file(&t.out).expect("remove report");
    let before = live_requests(&t.state, "done").len();
    let resumed = t.resume("done", &[]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(
        live_requests(&t.state, "done").len(),
        before,
        "nothing is paid again"
    );
    assert_eq!(above_run_details(&t.out), baseline().report);
    let markdown = std::fs::read_to_string(&t.out).expect("md");
    assert!(
        markdown.contains("Nodes run now: 0, restored from checkpoints:"),
        "{}",
        markdown.split("## Run details").nth(1).unwrap_or("")
    );
}
