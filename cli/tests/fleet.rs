//! Fleet mode against the real PostgreSQL (`DEEPR_TEST_PG`, default the local server's
//! `postgres` database; each test creates and drops its own database): workers killed
//! mid-run, runs resumed by other workers from the shared checkpoints, reports identical
//! to local runs, no completed call paid twice; bad URLs and databases refused.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::{above_run_details, deepr, fixture_corpus, stderr};

fn admin_url() -> String {
    std::env::var("DEEPR_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// `psql` against `url`, one value per line.
fn psql(url: &str, sql: &str) -> Result<String, String> {
    let output = Command::new("psql")
        .args([url, "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .map_err(|e| format!("psql: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// A fresh database (dropped when the guard goes). `None` (a skip) only outside CI.
struct Database {
    url: String,
    name: String,
}

impl Database {
    fn create(tag: &str) -> Option<Self> {
        let admin = admin_url();
        let name = format!("deepr_cli_{tag}_{}", std::process::id());
        let created = psql(
            &admin,
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        )
        .and_then(|_| psql(&admin, &format!("CREATE DATABASE {name}")));
        if let Err(error) = created {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but PostgreSQL at {admin} cannot be used: {error}"
            );
            eprintln!("skipped: PostgreSQL at {admin} cannot be used: {error}");
            return None;
        }
        let (base, _) = admin.rsplit_once('/').expect("database in URL");
        Some(Self {
            url: format!("{base}/{name}"),
            name,
        })
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = psql(
            &admin_url(),
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

fn worker(home: &Path, state: &Path, url: &str, lease: &str) -> Child {
    worker_command(home, state, url, lease)
        .spawn()
        .expect("start a worker")
}

fn worker_command(home: &Path, state: &Path, url: &str, lease: &str) -> Command {
    let mut command = common::command(
        home,
        &[
            "--db",
            url,
            "--state-dir",
            state.to_str().expect("utf-8"),
            "--quiet",
            "worker",
            "--concurrency",
            "3",
            "--lease",
            lease,
        ],
    );
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    command
}

const TOPICS: [&str; 4] = [
    "What page size does the storage engine use?",
    "How does the journal make commits durable?",
    "What does the write-ahead log change?",
    "When is the rollback journal synced to disk?",
];

fn run_args<'a>(topic: &'a str, out: &'a str, run_id: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        topic,
        "--corpus",
        "CORPUS",
        "--depth",
        "quick",
        "--offline-latency",
        "150ms",
        "--out",
        out,
        "--run-id",
        run_id,
        "--quiet",
    ]
}

#[test]
fn killed_workers_runs_finish_elsewhere_identical_to_local_runs() {
    let Some(db) = Database::create("crash") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    let corpus = corpus.to_str().expect("utf-8");
    let migrated = deepr(home.path(), &["--db", &db.url, "db", "migrate"]);
    assert!(migrated.status.success(), "{}", stderr(&migrated));

    // Submit every run (detached), then the same runs locally for reference.
    for (i, topic) in TOPICS.iter().enumerate() {
        let out = format!("fleet/{i}.md");
        let id = format!("run-{i}");
        let mut args = run_args(topic, &out, &id);
        args[3] = corpus;
        let mut fleet_args = vec!["--db", db.url.as_str()];
        fleet_args.extend(args);
        fleet_args.push("--detach");
        let submitted = deepr(home.path(), &fleet_args);
        assert!(submitted.status.success(), "{}", stderr(&submitted));
        assert_eq!(String::from_utf8_lossy(&submitted.stdout).trim(), id);
    }
    let listed = deepr(home.path(), &["--db", &db.url, "runs", "list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("queued, not claimed for"),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );

    // Two workers; one is SIGKILLed mid-run and restarted; the other is killed later.
    let mut first = worker(home.path(), &home.path().join("w1"), &db.url, "5");
    let mut second = worker(home.path(), &home.path().join("w2"), &db.url, "5");
    let started = Instant::now();
    let checkpointed = || -> u32 {
        psql(&db.url, "SELECT count(*) FROM deepr_nodes")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    while checkpointed() < 3 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    first.kill().expect("SIGKILL the first worker");
    let _ = first.wait();
    std::thread::sleep(Duration::from_millis(700));
    second.kill().expect("SIGKILL the second worker");
    let _ = second.wait();
    let mut third = worker(home.path(), &home.path().join("w1"), &db.url, "5");
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let open = psql(
            &db.url,
            "SELECT count(*) FROM deepr_runs WHERE state <> 'finished'",
        )
        .expect("count");
        if open == "0" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "runs did not finish: {}",
            psql(&db.url, "SELECT run_id, state, note FROM deepr_runs").unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    third.kill().expect("stop the last worker");
    let _ = third.wait();

    // Killed workers' runs were claimed again and resumed.
    let reclaimed: u32 = psql(
        &db.url,
        "SELECT count(*) FROM deepr_runs WHERE attempts > 1",
    )
    .expect("attempts")
    .parse()
    .expect("number");
    assert!(reclaimed >= 1, "no run was resumed by another worker");
    // No request paid twice within a run (a completed call is in the shared cache).
    let repaid = psql(
        &db.url,
        "SELECT run_id || ' ' || (entry->>'request') FROM deepr_calls \
         WHERE NOT (entry->>'cache_hit')::boolean GROUP BY run_id, entry->>'request' HAVING count(*) > 1",
    )
    .expect("journal");
    assert_eq!(repaid, "", "completed calls paid twice");
    let paid: u32 = psql(
        &db.url,
        "SELECT count(*) FROM deepr_calls WHERE NOT (entry->>'cache_hit')::boolean",
    )
    .expect("journal")
    .parse()
    .expect("number");
    assert!(paid > 0, "the journal recorded the calls");

    for (i, topic) in TOPICS.iter().enumerate() {
        let id = format!("run-{i}");
        let bundle = home.path().join(format!("{id}.bundle"));
        let exported = deepr(
            home.path(),
            &[
                "--db",
                &db.url,
                "runs",
                "export",
                &id,
                "--out",
                bundle.to_str().expect("utf-8"),
            ],
        );
        assert!(exported.status.success(), "{}", stderr(&exported));
        let verified = deepr(home.path(), &["verify", bundle.to_str().expect("utf-8")]);
        assert!(
            String::from_utf8_lossy(&verified.stdout).contains("PASS"),
            "run {id}: {}\n{}",
            String::from_utf8_lossy(&verified.stdout),
            std::fs::read_to_string(&bundle)
                .unwrap_or_default()
                .chars()
                .take(1500)
                .collect::<String>()
        );
        let markdown: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&bundle).expect("bundle")).expect("json");
        let fleet_text = markdown["markdown"].as_str().expect("markdown").to_string();
        let fleet_text = fleet_text
            .split("\n## Run details")
            .next()
            .unwrap_or_default();

        let out = format!("local/{i}.md");
        let mut args = run_args(topic, &out, &id);
        args[3] = corpus;
        let local_state = home.path().join("local-state");
        let mut local_args = vec!["--state-dir", local_state.to_str().expect("utf-8")];
        local_args.extend(args);
        let local = deepr(home.path(), &local_args);
        assert!(local.status.success(), "{}", stderr(&local));
        assert_eq!(
            fleet_text,
            above_run_details(&home.path().join(&out)),
            "run {id}: the fleet's report differs from the local one"
        );
    }
    let shown = deepr(home.path(), &["--db", &db.url, "runs", "show", "run-0"]);
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(shown.contains("state:     finished"), "{shown}");
    assert!(shown.contains("reports:   bundle, json, md"), "{shown}");
}

#[test]
fn bad_databases_are_one_line_usage_errors() {
    let home = tempfile::tempdir().expect("tempdir");
    for (url, expect) in [
        ("mysql://root@127.0.0.1/x", "must start with postgres://"),
        (
            "postgres://u:s3cret@127.0.0.1:1/x",
            "cannot connect to postgres://u:***@127.0.0.1:1/x",
        ),
        ("postgres://127.0.0.1:5432/x?sslmode=bogus", "is not valid"),
    ] {
        let out = deepr(home.path(), &["--db", url, "runs", "list"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert!(err.contains(expect), "{url}: {err}");
        assert!(!err.contains("s3cret"), "the password leaked: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let detached = deepr(home.path(), &["run", "topic", "--detach"]);
    assert_eq!(detached.status.code(), Some(2), "{}", stderr(&detached));
    assert!(stderr(&detached).contains("--detach queues a run in the fleet"));
    assert!(!home.path().join("xdg-state").exists(), "nothing written");

    // A user without the right to create anything.
    let Some(db) = Database::create("noperm") else {
        return;
    };
    let admin = admin_url();
    let _ = psql(&admin, "CREATE ROLE deepr_test_noperm LOGIN");
    let url = db.url.replacen("postgres@", "deepr_test_noperm@", 1);
    let out = deepr(home.path(), &["--db", &url, "db", "migrate"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("refused deepr"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(
        psql(
            &db.url,
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'deepr_%'"
        )
        .expect("tables"),
        "0",
        "nothing written"
    );
}

#[test]
fn the_fleet_shares_one_rate_limit() {
    use std::sync::{Arc, Mutex};
    let Some(db) = Database::create("rate") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    // A model server that answers nothing usable (each run repairs, then falls back to
    // the heuristic) and notes when every request arrives.
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let seen = Arc::clone(&arrivals);
    let port = common::serve(move |request| {
        if request.path().ends_with("/chat/completions") {
            seen.lock().expect("lock").push(Instant::now());
        }
        common::chat_answer("no JSON here", 10, 5)
    });
    // R = 3 requests per T = 5 s; every process also has its own limiter with the same
    // burst, so three workers without a shared limit would send 9 at once.
    let config = home.path().join("deepr.toml");
    std::fs::write(
        &config,
        "[limits]\nrequests_per_minute = 3\nwindow_s = 5\ntokens_per_minute = 1000000\nmax_retries = 0\nconcurrency = 8\n",
    )
    .expect("config");
    let base = format!("http://127.0.0.1:{port}/v1");
    let corpus = fixture_corpus();
    for (i, topic) in TOPICS.iter().take(3).enumerate() {
        let id = format!("rate-{i}");
        let out = format!("rate/{i}.md");
        let submitted = common::command(
            home.path(),
            &[
                "--db",
                &db.url,
                "--config",
                config.to_str().expect("utf-8"),
                "run",
                topic,
                "--corpus",
                corpus.to_str().expect("utf-8"),
                "--depth",
                "quick",
                "--llm",
                "openai:stand-in",
                "--llm-base-url",
                &base,
                "--out",
                &out,
                "--run-id",
                &id,
                "--detach",
                "--quiet",
            ],
        )
        .env("OPENAI_API_KEY", "sk-test-key")
        .output()
        .expect("submit");
        assert!(submitted.status.success(), "{}", stderr(&submitted));
    }
    let mut workers: Vec<Child> = (0..3)
        .map(|w| {
            worker_command(
                home.path(),
                &home.path().join(format!("w{w}")),
                &db.url,
                "30",
            )
            .env("OPENAI_API_KEY", "sk-test-key")
            .spawn()
            .expect("start a worker")
        })
        .collect();
    std::thread::sleep(Duration::from_secs(12));
    for worker in &mut workers {
        let _ = worker.kill();
        let _ = worker.wait();
    }
    let times = arrivals.lock().expect("lock").clone();
    assert!(
        times.len() >= 7,
        "the workers sent only {} requests: the limit was never exercised past one burst",
        times.len()
    );
    let (burst, per_window, window) = (3, 3, Duration::from_secs(5));
    for (i, start) in times.iter().enumerate() {
        let within = times[i..]
            .iter()
            .filter(|t| t.duration_since(*start) < window)
            .count();
        assert!(
            within <= burst + per_window,
            "{within} requests within {window:?} of request {i} (limit {}): the workers did not share the limit",
            burst + per_window
        );
    }
    let calls = psql(&db.url, "SELECT count(DISTINCT worker) FROM deepr_calls").expect("journal");
    assert_ne!(calls, "0", "no worker journaled a call");
}
