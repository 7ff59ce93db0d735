//! A provider that fails is not a model that answered: a refused key stops the run at
//! its first call (exit 6, no report, resumable once the key is fixed); a server that
//! goes down mid-run leaves the run incomplete and resumable (exit 5), and the resume
//! pays only for the calls that never succeeded; when every search fails the run stops
//! the same way and resumes once the source answers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{
    above_run_details, chat_answer, command, deepr, fixture_corpus, live_requests, serve, stderr,
    HttpResponse,
};

const TOPIC: &str = "How does the rollback journal protect a transaction?";
const KEY: &str = "sk-outage-test-8c1f2e";

/// What the fake model server does with request number n (0-based).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Answer every request (schema-shaped, unusable: the steps degrade, deterministically).
    Healthy,
    /// 401 to everything.
    Unauthorized,
    /// Answer the first `n` requests, then 503 until switched back.
    DownAfter(usize),
}

struct Server {
    port: u16,
    mode: Arc<std::sync::Mutex<Mode>>,
    requests: Arc<AtomicUsize>,
}

impl Server {
    fn set(&self, mode: Mode) {
        if let Ok(mut m) = self.mode.lock() {
            *m = mode;
        }
    }
}

fn model_server() -> Server {
    let mode = Arc::new(std::sync::Mutex::new(Mode::Healthy));
    let requests = Arc::new(AtomicUsize::new(0));
    let (m, r) = (Arc::clone(&mode), Arc::clone(&requests));
    let port = serve(move |_| {
        let n = r.fetch_add(1, Ordering::SeqCst);
        match m.lock().map(|m| *m).unwrap_or(Mode::Healthy) {
            Mode::Unauthorized => HttpResponse::json(
                "401 Unauthorized",
                r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#,
            ),
            Mode::DownAfter(k) if n >= k => HttpResponse::json(
                "503 Service Unavailable",
                r#"{"error": {"message": "overloaded"}}"#,
            ),
            _ => {
                let content = r#"{"subquestions": ["Only one?"], "queries": [], "ranking_question": "", "claims": [{"text": "Invented.", "sentence_ids": ["c999"]}], "verdicts": [], "conflicts": [{"claim_ids": ["nope"], "summary": "x"}], "followups": [{"gap_id": "q99", "question": "?"}], "summary": [{"text": "x", "claim_ids": ["zz"]}]}"#;
                chat_answer(content, 100, 20)
            }
        }
    });
    Server {
        port,
        mode,
        requests,
    }
}

/// `deepr run` against the fake server, with no retries (an outage shows at once).
fn run_model(home: &Path, state: &Path, run_id: &str, port: u16) -> std::process::Output {
    let config = home.join("deepr.toml");
    std::fs::write(&config, "[limits]\nmax_retries = 0\n").expect("config");
    let base = format!("http://127.0.0.1:{port}/v1");
    command(
        home,
        &[
            "--quiet",
            "--config",
            config.to_str().expect("utf-8"),
            "--state-dir",
            state.to_str().expect("utf-8"),
            "run",
            TOPIC,
            "--corpus",
            fixture_corpus().to_str().expect("utf-8"),
            "--out",
            home.join(format!("{run_id}.md")).to_str().expect("utf-8"),
            "--depth",
            "quick",
            "--llm",
            "openai:mock-model",
            "--llm-base-url",
            &base,
            "--run-id",
            run_id,
        ],
    )
    .env("OPENAI_API_KEY", KEY)
    .output()
    .expect("run deepr")
}

fn resume(home: &Path, state: &Path, run_id: &str) -> std::process::Output {
    command(
        home,
        &[
            "--quiet",
            "--state-dir",
            state.to_str().expect("utf-8"),
            "resume",
            run_id,
        ],
    )
    .env("OPENAI_API_KEY", KEY)
    .output()
    .expect("resume deepr")
}

fn runs_list(home: &Path, state: &Path) -> String {
    let output = deepr(
        home,
        &[
            "--state-dir",
            state.to_str().expect("utf-8"),
            "runs",
            "list",
        ],
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_refused_key_stops_the_run_at_its_first_call() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let state = h.join("state");
    let server = model_server();
    server.set(Mode::Unauthorized);
    let output = run_model(h, &state, "auth", server.port);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(6), "{message}");
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        1,
        "stopped at the first call"
    );
    assert!(
        message.contains("OPENAI_API_KEY"),
        "names the variable: {message}"
    );
    assert!(
        message.contains("openai:mock-model"),
        "names the provider: {message}"
    );
    assert!(
        message.contains("Incorrect API key"),
        "the server's message: {message}"
    );
    assert!(!message.contains(KEY), "the key is never printed");
    assert!(!h.join("auth.md").exists(), "no report claims anything");
    assert!(runs_list(h, &state).contains("failed (auth)"));

    // The key is fixed: the run resumes and finishes.
    server.set(Mode::Healthy);
    let resumed = resume(h, &state, "auth");
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let report = std::fs::read_to_string(h.join("auth.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&report).expect("json");
    assert_eq!(report["complete"], true);
    assert!(runs_list(h, &state).contains("finished"));
}

#[test]
fn an_outage_mid_run_is_resumed_paying_only_for_what_never_succeeded() {
    // The uninterrupted run against the healthy server.
    let base_home = tempfile::tempdir().expect("tempdir");
    let healthy = model_server();
    let base = run_model(
        base_home.path(),
        &base_home.path().join("state"),
        "base",
        healthy.port,
    );
    assert_eq!(base.status.code(), Some(0), "{}", stderr(&base));
    let total = healthy.requests.load(Ordering::SeqCst);
    assert!(total > 6, "{total} calls");

    // The same run, with the server going down after a third of its calls.
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let state = h.join("state");
    let server = model_server();
    server.set(Mode::DownAfter(total / 3));
    let output = run_model(h, &state, "outage", server.port);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{message}");
    assert!(message.contains("unavailable"), "{message}");
    let partial: serde_json::Value =
        serde_json::from_slice(&std::fs::read(h.join("outage.json")).expect("report.json"))
            .expect("json");
    assert_eq!(
        partial["complete"], false,
        "the report says it is incomplete"
    );
    assert!(runs_list(h, &state).contains("incomplete (provider unavailable)"));
    let answered_before = live_requests(&state, "outage").len();
    assert!(
        answered_before >= total / 3,
        "calls that succeeded are journaled"
    );

    // Up again: the resume finishes with the same report as the uninterrupted run.
    server.set(Mode::Healthy);
    let resumed = resume(h, &state, "outage");
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(
        above_run_details(&h.join("outage.md")),
        above_run_details(&base_home.path().join("base.md"))
    );
    let requests = live_requests(&state, "outage");
    let mut seen = std::collections::BTreeSet::new();
    for (request, prompt) in &requests {
        assert!(
            seen.insert(request),
            "completed {prompt} call {request} paid twice"
        );
    }
    assert_eq!(
        requests.len(),
        total,
        "every call paid exactly once over both sessions"
    );
    // The resumed report counts every call the run paid, in either session, as the
    // uninterrupted run's report does (calls answered before the outage inside an
    // unfinished step are served from the cache on resume, and were paid all the same).
    let usage = |path: &Path| -> serde_json::Value {
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).expect("report.json")).expect("json");
        report["usage"].clone()
    };
    let (resumed_usage, base_usage) = (
        usage(&h.join("outage.json")),
        usage(&base_home.path().join("base.json")),
    );
    assert_eq!(
        resumed_usage["calls"], base_usage["calls"],
        "{resumed_usage}"
    );
    assert_eq!(resumed_usage["prompt_tokens"], base_usage["prompt_tokens"]);
}

/// Wikipedia's search API shape, on a port that refuses connections at first.
fn wikipedia(listener: TcpListener) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buffer = [0u8; 8192];
            let n = stream.read(&mut buffer).unwrap_or(0);
            let request = String::from_utf8_lossy(&buffer[..n]).into_owned();
            let path = request
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .split('?')
                .next()
                .unwrap_or("/")
                .to_string();
            let (kind, body) = match path.as_str() {
                "/w/api.php" => ("application/json", r#"{"query":{"search":[{"ns":0,"title":"Rollback journal","pageid":1,"snippet":"journal"}]}}"#.to_string()),
                "/wiki/Rollback_journal" => ("text/html; charset=utf-8", format!("<html><head><title>Rollback journal</title></head><body><article><h1>Rollback journal</h1><p>{}</p></article></body></html>", "The rollback journal keeps the original content of each changed page so that an interrupted transaction can be rolled back. ".repeat(3))),
                _ => ("text/plain", String::new()),
            };
            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        }
    });
}

#[test]
fn when_every_search_fails_the_run_stops_and_resumes_once_they_answer() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let state = h.join("state");
    // A port with nothing listening: every search is refused.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port");
    let url = format!("http://127.0.0.1:{port}");
    let allow = format!("127.0.0.1:{port}");
    let s = state.to_str().expect("utf-8");
    let out = h.join("web.md");
    let output = deepr(
        h,
        &[
            "--quiet",
            "--state-dir",
            s,
            "run",
            TOPIC,
            "--sources",
            "wikipedia",
            "--wikipedia-url",
            &url,
            "--allow-host",
            &allow,
            "--depth",
            "quick",
            "--out",
            out.to_str().expect("utf-8"),
            "--run-id",
            "web",
        ],
    );
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(5), "{message}");
    assert!(message.contains("wikipedia unreachable"), "{message}");
    assert!(message.contains("--corpus DIR"), "{message}");
    assert!(runs_list(h, &state).contains("incomplete (provider unavailable)"));

    // The source answers now: the resume searches again and finishes.
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("rebind the same port");
    wikipedia(listener);
    let resumed = deepr(h, &["--quiet", "--state-dir", s, "resume", "web"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(h.join("web.json")).expect("report.json"))
            .expect("json");
    assert_eq!(report["complete"], true);
    assert!(report["coverage"].as_array().is_some_and(|c| c
        .iter()
        .any(|c| c["provider"] == "wikipedia" && c["status"] == "ok")));
}

#[test]
fn retry_degraded_asks_the_model_again_for_the_steps_that_fell_back() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let state = h.join("state");
    // Every answer is unusable: steps degrade to the heuristic, and are checkpointed.
    let server = model_server();
    let first = run_model(h, &state, "degraded", server.port);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(h.join("degraded.json")).expect("report.json"))
            .expect("json");
    let markdown = std::fs::read_to_string(h.join("degraded.md")).expect("report");
    assert!(
        markdown.contains("degraded"),
        "the report lists the degraded steps"
    );
    let after_run = server.requests.load(Ordering::SeqCst);

    // A plain resume restores everything: no call.
    let plain = resume(h, &state, "degraded");
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    assert_eq!(server.requests.load(Ordering::SeqCst), after_run);

    // --retry-degraded asks the model again for exactly those steps (the cached
    // unusable answers are not served), then finishes.
    let retried = command(
        h,
        &[
            "--quiet",
            "--state-dir",
            state.to_str().expect("utf-8"),
            "resume",
            "degraded",
            "--retry-degraded",
        ],
    )
    .env("OPENAI_API_KEY", KEY)
    .output()
    .expect("resume");
    assert_eq!(retried.status.code(), Some(0), "{}", stderr(&retried));
    let asked = server.requests.load(Ordering::SeqCst) - after_run;
    assert!(
        asked >= 2,
        "the degraded steps asked the model again ({asked} calls)"
    );
    assert!(
        asked <= after_run,
        "no more calls than the first run ({asked} > {after_run})"
    );
    assert_eq!(report["complete"], true);
}
