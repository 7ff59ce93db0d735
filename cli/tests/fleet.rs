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

use std::process::Child;
use std::time::{Duration, Instant};

use common::fleet::{
    admin_url, cell_args, count, psql, same_as_local, signal, stop_all, submit, wait_all_finished,
    wait_for, worker, worker_command, Database,
};
use common::{above_run_details, deepr, fixture_corpus, stderr};

const TOPICS: [&str; 6] = [
    "What page size does the storage engine use?",
    "How does the journal make commits durable?",
    "What does the write-ahead log change?",
    "When is the rollback journal synced to disk?",
    "How large is a journal page by default?",
    "What happens to the journal after a commit?",
];

/// The fleet crash test's cells: every topic at quick depth with each strategy, and at
/// standard depth with the default one.
const VARIANTS: [(&str, &str); 5] = [
    ("quick", "linear"),
    ("quick", "per-claim"),
    ("quick", "free-quote"),
    ("quick", "no-judge"),
    ("standard", "linear"),
];

/// A small seeded generator for the kill schedule (xorshift64*).
struct Seeded(u64);

impl Seeded {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % below
    }
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn killed_workers_runs_finish_elsewhere_identical_to_local_runs() {
    let Some(db) = Database::create("crash") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    let corpus = corpus.to_str().expect("utf-8");
    let migrated = deepr(home.path(), &["--db", &db.url, "db", "migrate"]);
    assert!(migrated.status.success(), "{}", stderr(&migrated));

    // 30 runs, submitted detached, with simulated model, search and fetch latency.
    let mut cells = Vec::new();
    for (t, topic) in TOPICS.iter().enumerate() {
        for (v, variant) in VARIANTS.iter().enumerate() {
            cells.push((format!("run-{t}-{v}"), *topic, *variant));
        }
    }
    for (id, topic, variant) in &cells {
        let mut args = vec!["--db".to_string(), db.url.clone()];
        args.extend(cell_args(
            topic,
            corpus,
            *variant,
            &format!("fleet/{id}.md"),
            id,
        ));
        args.extend(
            [
                "--offline-latency",
                "100ms",
                "--search-latency",
                "50ms",
                "--detach",
            ]
            .map(String::from),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let submitted = deepr(home.path(), &args);
        assert!(submitted.status.success(), "{}", stderr(&submitted));
        assert_eq!(String::from_utf8_lossy(&submitted.stdout).trim(), id);
    }
    let listed = deepr(home.path(), &["--db", &db.url, "runs", "list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("queued, not claimed for"),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );

    // Three workers; at seeded instants one is SIGKILLed and restarted at once.
    let state = |w: usize| home.path().join(format!("w{w}"));
    let mut workers: Vec<Child> = (0..3)
        .map(|w| worker(home.path(), &state(w), &db.url, "5"))
        .collect();
    let mut seeded = Seeded(0x5EED_F1EE7);
    let kills = 5;
    for _ in 0..kills {
        std::thread::sleep(Duration::from_millis(1000 + seeded.next(2500)));
        let w = usize::try_from(seeded.next(3)).expect("index");
        workers[w].kill().expect("SIGKILL a worker");
        let _ = workers[w].wait();
        workers[w] = worker(home.path(), &state(w), &db.url, "5");
    }
    wait_all_finished(&db.url, 300);
    stop_all(&mut workers);

    // Killed workers' runs were claimed again and resumed from the shared checkpoints.
    assert!(
        count(
            &db.url,
            "SELECT count(*) FROM deepr_runs WHERE attempts > 1"
        ) >= 1,
        "no run was resumed by another claim"
    );
    // No completed call paid twice within a run: it is in the shared cache.
    let repaid = psql(
        &db.url,
        "SELECT run_id || ' ' || (entry->>'request') FROM deepr_calls \
         WHERE NOT (entry->>'cache_hit')::boolean GROUP BY run_id, entry->>'request' HAVING count(*) > 1",
    )
    .expect("journal");
    assert_eq!(repaid, "", "completed calls paid twice");

    // The same runs locally (one state dir, so they share one response cache too).
    let local_state = home.path().join("local-state");
    let mut verified = 0;
    for (id, topic, variant) in &cells {
        let out = format!("local/{id}.md");
        let stored = same_as_local(
            home.path(),
            &db.url,
            id,
            cell_args(topic, corpus, *variant, &out, id),
            &out,
        );
        let bundle = home.path().join(format!("{id}.bundle"));
        if stored["report"]["claims"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
        {
            let checked = deepr(home.path(), &["verify", bundle.to_str().expect("utf-8")]);
            let text = String::from_utf8_lossy(&checked.stdout).into_owned();
            assert!(text.contains("PASS"), "run {id}: {text}");
            verified += 1;
        }
    }
    assert!(
        verified >= 20,
        "only {verified} of 30 exported reports had quotes to verify"
    );

    // Distinct requests paid: the local runs' (which share one cache), plus at most what
    // was in flight at each kill (a worker holds 3 runs, each with at most 8 calls in
    // flight). Counted by request: runs of one topic running at the same moment on
    // different workers can each pay for the same request before either has cached it
    // (in-flight requests are not coalesced across runs; printed, not bounded here).
    let fleet_paid = count(
        &db.url,
        "SELECT count(*) FROM deepr_calls WHERE NOT (entry->>'cache_hit')::boolean",
    );
    let fleet_distinct = count(
        &db.url,
        "SELECT count(DISTINCT entry->>'request') FROM deepr_calls WHERE NOT (entry->>'cache_hit')::boolean",
    );
    let mut local_requests = std::collections::BTreeSet::new();
    let mut local_paid = 0u64;
    for (id, _, _) in &cells {
        for (request, _) in common::live_requests(&local_state, id) {
            local_paid += 1;
            local_requests.insert(request);
        }
    }
    let local_distinct = local_requests.len() as u64;
    assert!(local_distinct > 0, "the local runs journaled their calls");
    assert!(
        fleet_distinct <= local_distinct + kills * 3 * 8,
        "the fleet paid {fleet_distinct} distinct requests, the local runs {local_distinct}"
    );
    eprintln!("fleet crash test: {fleet_paid} calls ({fleet_distinct} distinct requests) paid by the fleet, {local_paid} ({local_distinct}) locally, {kills} kills");

    let shown = deepr(home.path(), &["--db", &db.url, "runs", "show", "run-0-0"]);
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
    // sslmode is honoured: verify-full checks the server's certificate against the name
    // in the URL (the local server's, if it has TLS at all, is not for 127.0.0.1).
    let verified = deepr(
        home.path(),
        &[
            "--db",
            &format!("{}?sslmode=verify-full", admin_url()),
            "runs",
            "list",
        ],
    );
    let err = stderr(&verified).to_lowercase();
    assert_eq!(verified.status.code(), Some(2), "{err}");
    assert!(
        ["certificate", "tls", "ssl"]
            .iter()
            .any(|w| err.contains(w)),
        "{err}"
    );
    // A database whose schema a newer deepr wrote.
    if let Some(newer) = Database::create("newer") {
        let migrated = deepr(home.path(), &["--db", &newer.url, "db", "migrate"]);
        assert!(migrated.status.success(), "{}", stderr(&migrated));
        psql(
            &newer.url,
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (99991231000000, 'from the future', true, '\\x00', 1)",
        )
        .expect("fake a newer migration");
        let refused = deepr(home.path(), &["--db", &newer.url, "runs", "list"]);
        let err = stderr(&refused);
        assert_eq!(refused.status.code(), Some(2), "{err}");
        assert!(
            err.contains("newer deepr") && err.contains("upgrade deepr"),
            "{err}"
        );
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
    stop_all(&mut workers);
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

#[test]
fn runs_complete_when_the_database_drops_the_workers_connections() {
    let Some(db) = Database::create("drop") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    let corpus = corpus.to_str().expect("utf-8");
    let cells: Vec<(String, &str)> = TOPICS
        .iter()
        .take(4)
        .enumerate()
        .map(|(i, topic)| (format!("drop-{i}"), *topic))
        .collect();
    for (id, topic) in &cells {
        submit(
            home.path(),
            &db.url,
            cell_args(
                topic,
                corpus,
                ("quick", "linear"),
                &format!("fleet/{id}.md"),
                id,
            ),
            &["--offline-latency", "150ms", "--detach"],
        );
    }
    let mut workers: Vec<Child> = (0..2)
        .map(|w| {
            worker_command(
                home.path(),
                &home.path().join(format!("w{w}")),
                &db.url,
                "5",
            )
            .args(["--max-attempts", "20"])
            .spawn()
            .expect("start a worker")
        })
        .collect();
    // Cut every worker connection, twice, while runs are under way.
    let terminate = format!(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE datname = '{}' AND application_name = 'deepr' AND pid <> pg_backend_pid()",
        db.name
    );
    let mut cut = 0u64;
    for pause in [1200, 1500] {
        std::thread::sleep(Duration::from_millis(pause));
        cut += count(&db.url, &terminate);
    }
    assert!(cut > 0, "no worker connection was cut");
    wait_all_finished(&db.url, 180);
    stop_all(&mut workers);
    for (id, topic) in &cells {
        let out = format!("local/{id}.md");
        same_as_local(
            home.path(),
            &db.url,
            id,
            cell_args(topic, corpus, ("quick", "linear"), &out, id),
            &out,
        );
    }
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn a_bench_runs_its_cells_on_the_fleet() {
    let Some(db) = Database::create("bench") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let topics = home.path().join("topics.txt");
    std::fs::write(&topics, format!("{}\n{}\n", TOPICS[0], TOPICS[1])).expect("topics");
    let corpus = fixture_corpus();
    let bench_args = |out: &str| -> Vec<String> {
        [
            "bench",
            "--topics",
            topics.to_str().expect("utf-8"),
            "--corpus",
            corpus.to_str().expect("utf-8"),
            "--strategies",
            "linear,no-judge",
            "--depth",
            "quick",
            "--out",
            out,
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut workers: Vec<Child> = (0..2)
        .map(|w| {
            worker(
                home.path(),
                &home.path().join(format!("w{w}")),
                &db.url,
                "5",
            )
        })
        .collect();
    let mut args = vec!["--db".to_string(), db.url.clone()];
    args.extend(bench_args("fleet-bench"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut bench = common::command(home.path(), &args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the bench");
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = bench.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "the fleet bench did not finish");
        std::thread::sleep(Duration::from_millis(200));
    };
    stop_all(&mut workers);
    assert!(status.success(), "the fleet bench failed");
    assert_eq!(
        count(
            &db.url,
            "SELECT count(*) FROM deepr_runs WHERE run_id LIKE 'bench-%' AND state = 'finished'"
        ),
        4,
        "every topic × strategy cell ran on the fleet"
    );
    let local_args = bench_args("local-bench");
    let local_args: Vec<&str> = local_args.iter().map(String::as_str).collect();
    let local = deepr(home.path(), &local_args);
    assert!(local.status.success(), "{}", stderr(&local));
    let runs = |dir: &str| -> Vec<serde_json::Value> {
        let bench: serde_json::Value = serde_json::from_slice(
            &std::fs::read(home.path().join(dir).join("bench.json")).expect("bench.json"),
        )
        .expect("json");
        bench["runs"].as_array().expect("runs").clone()
    };
    let (fleet_runs, local_runs) = (runs("fleet-bench"), runs("local-bench"));
    assert_eq!(fleet_runs.len(), 4);
    for (fleet_row, local_row) in fleet_runs.iter().zip(&local_runs) {
        for column in [
            "run_id",
            "claims",
            "supported",
            "citations",
            "verbatim",
            "quoted",
            "total_tokens",
            "calls",
        ] {
            assert_eq!(
                fleet_row[column], local_row[column],
                "column {column}: {fleet_row} vs {local_row}"
            );
        }
        let id = fleet_row["run_id"].as_str().expect("id");
        assert_eq!(
            above_run_details(
                &home
                    .path()
                    .join("fleet-bench/reports")
                    .join(format!("{id}.md"))
            ),
            above_run_details(
                &home
                    .path()
                    .join("local-bench/reports")
                    .join(format!("{id}.md"))
            ),
            "cell {id}"
        );
    }
}

#[test]
fn run_with_db_follows_the_run_and_writes_its_report() {
    let Some(db) = Database::create("follow") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    let corpus = corpus.to_str().expect("utf-8");
    let mut workers = vec![worker(home.path(), &home.path().join("w"), &db.url, "5")];
    let mut args = vec!["--db".to_string(), db.url.clone()];
    args.extend(cell_args(
        TOPICS[0],
        corpus,
        ("quick", "linear"),
        "followed/report.md",
        "followed",
    ));
    args.extend(["--format", "html"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let followed = deepr(home.path(), &args);
    stop_all(&mut workers);
    assert!(followed.status.success(), "{}", stderr(&followed));
    assert!(
        home.path().join("followed/report.html").is_file(),
        "other formats come too"
    );
    let local_state = home.path().join("local-state");
    let mut args = vec!["--state-dir".to_string(), local_state.display().to_string()];
    args.extend(cell_args(
        TOPICS[0],
        corpus,
        ("quick", "linear"),
        "local/report.md",
        "followed",
    ));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let local = deepr(home.path(), &args);
    assert!(local.status.success(), "{}", stderr(&local));
    assert_eq!(
        above_run_details(&home.path().join("followed/report.md")),
        above_run_details(&home.path().join("local/report.md"))
    );
    // The fleet's research memory knows the run.
    let found = deepr(
        home.path(),
        &[
            "--db",
            &db.url,
            "runs",
            "search",
            "page size storage engine",
        ],
    );
    let found = String::from_utf8_lossy(&found.stdout).into_owned();
    assert!(found.contains("followed"), "{found}");
    assert!(found.contains("report: "), "{found}");
    // `config show` names the database without its password.
    let shown = common::command(home.path(), &["config", "show"])
        .env(
            "DEEPR_DB",
            "postgres://deepr:hunter2-secret@db.example/fleet",
        )
        .output()
        .expect("config show");
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(
        text.contains("postgres://deepr:***@db.example/fleet"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
}

#[test]
fn a_run_no_worker_has_a_key_for_is_parked_with_that_reason() {
    let Some(db) = Database::create("nokey") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    let mut args = vec!["--db".to_string(), db.url.clone()];
    args.extend(cell_args(
        TOPICS[0],
        corpus.to_str().expect("utf-8"),
        ("quick", "linear"),
        "k.md",
        "needs-key",
    ));
    args.extend(["--llm", "openai:gpt-4.1-mini", "--detach"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // The submitter has a key; the key never enters the database.
    let submitted = common::command(home.path(), &args)
        .env("OPENAI_API_KEY", "sk-submitter-only-31337")
        .output()
        .expect("submit");
    assert!(submitted.status.success(), "{}", stderr(&submitted));
    let mut keyless = worker_command(home.path(), &home.path().join("w"), &db.url, "5")
        .args(["--max-attempts", "2"])
        .spawn()
        .expect("start a worker");
    let deadline = Instant::now() + Duration::from_secs(60);
    while psql(&db.url, "SELECT state FROM deepr_runs").expect("state") != "parked" {
        assert!(
            Instant::now() < deadline,
            "{}",
            psql(&db.url, "SELECT state, note FROM deepr_runs").unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let _ = keyless.kill();
    let _ = keyless.wait();
    let listed = deepr(home.path(), &["--db", &db.url, "runs", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(
        listed.contains("parked: parked after 2 attempts"),
        "{listed}"
    );
    assert!(
        listed.contains("OPENAI_API_KEY"),
        "the reason names the key: {listed}"
    );
    let dump = psql(
        &db.url,
        "SELECT string_agg(record::text || coalesce(note, ''), ' ') FROM deepr_runs",
    )
    .expect("dump");
    assert!(
        !dump.contains("sk-submitter-only"),
        "a key reached the database"
    );
}

#[test]
fn a_paused_worker_whose_lease_expired_writes_nothing_more() {
    let Some(db) = Database::create("paused") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    submit(
        home.path(),
        &db.url,
        cell_args(
            TOPICS[1],
            corpus.to_str().expect("utf-8"),
            ("quick", "linear"),
            "p.md",
            "paused",
        ),
        &["--offline-latency", "300ms", "--detach"],
    );

    // Worker A checkpoints a few steps, then is paused (SIGSTOP) past its lease.
    let mut first = worker_command(home.path(), &home.path().join("a"), &db.url, "5")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start worker A");
    wait_for("worker A's first checkpoints", 60, || {
        count(&db.url, "SELECT count(*) FROM deepr_nodes") >= 2
    });
    signal(first.id(), "STOP");
    let at_pause = count(&db.url, "SELECT count(*) FROM deepr_nodes");
    // Past its 5 s lease without a heartbeat, `runs list` shows the run's worker as gone.
    std::thread::sleep(Duration::from_millis(6500));
    let listed = deepr(home.path(), &["--db", &db.url, "runs", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(listed.contains("worker presumed dead"), "{listed}");
    // Worker B claims the run once A's lease runs out and finishes it.
    let mut second = worker(home.path(), &home.path().join("b"), &db.url, "5");
    wait_for("worker B to finish the run", 90, || {
        psql(&db.url, "SELECT state FROM deepr_runs").unwrap_or_default() == "finished"
    });
    let _ = second.kill();
    let _ = second.wait();
    assert_eq!(
        count(&db.url, "SELECT attempts FROM deepr_runs"),
        2,
        "B's claim is the second"
    );
    let finished_nodes = psql(
        &db.url,
        "SELECT string_agg(node_id || ' ' || node_key || ' ' || xmin::text, ',' ORDER BY node_id) FROM deepr_nodes",
    )
    .expect("nodes");
    let finished_report = psql(&db.url, "SELECT reports->>'md' FROM deepr_runs").expect("report");
    // A wakes up: whatever it was doing, it may not write a checkpoint or settle the run.
    signal(first.id(), "CONT");
    std::thread::sleep(Duration::from_secs(3));
    let _ = first.kill();
    let said = first.wait_with_output().expect("worker A");
    let said = stderr(&said);
    assert!(
        said.contains("the lease on run paused was lost"),
        "worker A must have tried, and been refused: {said}"
    );
    assert!(at_pause >= 2);
    assert_eq!(
        psql(
            &db.url,
            "SELECT string_agg(node_id || ' ' || node_key || ' ' || xmin::text, ',' ORDER BY node_id) FROM deepr_nodes"
        )
        .expect("nodes"),
        finished_nodes,
        "the paused worker wrote checkpoints (even identical ones: xmin) after losing its lease"
    );
    assert_eq!(
        psql(&db.url, "SELECT state FROM deepr_runs").expect("state"),
        "finished"
    );
    assert_eq!(
        psql(&db.url, "SELECT reports->>'md' FROM deepr_runs").expect("report"),
        finished_report
    );
    assert_eq!(count(&db.url, "SELECT attempts FROM deepr_runs"), 2);
}

#[test]
fn ctrl_c_detaches_a_follower_and_releases_a_workers_runs() {
    let Some(db) = Database::create("ctrlc") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    // No worker yet: `run --db` waits, says so, and Ctrl-C detaches.
    let mut args = vec!["--db".to_string(), db.url.clone()];
    args.extend(cell_args(
        TOPICS[0],
        corpus.to_str().expect("utf-8"),
        ("quick", "linear"),
        "c.md",
        "ctrl-c",
    ));
    args.retain(|a| a != "--quiet");
    args.extend(["--offline-latency", "300ms"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let follower = common::command(home.path(), &args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run --db");
    wait_for("the run to be queued", 30, || {
        psql(&db.url, "SELECT count(*) FROM deepr_runs").unwrap_or_default() == "1"
    });
    std::thread::sleep(Duration::from_millis(1500));
    signal(follower.id(), "INT");
    let followed = follower.wait_with_output().expect("wait");
    let err = stderr(&followed);
    assert_eq!(followed.status.code(), Some(130), "{err}");
    assert!(err.contains("queued, not claimed for"), "{err}");
    assert!(err.contains("deepr runs follow ctrl-c"), "{err}");
    assert_eq!(
        psql(&db.url, "SELECT state FROM deepr_runs").expect("state"),
        "queued"
    );

    // A worker's Ctrl-C: its run checkpoints and goes back to the queue at once.
    let mut first = worker(home.path(), &home.path().join("a"), &db.url, "30");
    wait_for("a checkpoint", 60, || {
        count(&db.url, "SELECT count(*) FROM deepr_nodes") >= 2
    });
    // A run a live worker holds cannot be removed.
    let refused = deepr(home.path(), &["--db", &db.url, "runs", "rm", "ctrl-c"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("is being executed by"),
        "{}",
        stderr(&refused)
    );
    signal(first.id(), "INT");
    let status = first.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    let (state, note) = psql(
        &db.url,
        "SELECT state || '|' || coalesce(note, '') FROM deepr_runs",
    )
    .expect("state")
    .split_once('|')
    .map(|(s, n)| (s.to_string(), n.to_string()))
    .expect("row");
    assert_eq!(state, "queued", "{note}");
    assert!(note.contains("stopped; checkpoints kept"), "{note}");
    // Released, not left to its 30 s lease: another worker takes it over at once.
    let mut second = worker(home.path(), &home.path().join("b"), &db.url, "30");
    wait_for("the second worker to finish", 20, || {
        psql(&db.url, "SELECT state FROM deepr_runs").unwrap_or_default() == "finished"
    });
    let _ = second.kill();
    let _ = second.wait();
    let followed = deepr(home.path(), &["--db", &db.url, "runs", "follow", "ctrl-c"]);
    assert!(followed.status.success(), "{}", stderr(&followed));
    // A settled run can be removed, with everything it left in the database.
    let removed = deepr(home.path(), &["--db", &db.url, "runs", "rm", "ctrl-c"]);
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert_eq!(
        psql(&db.url, "SELECT (SELECT count(*) FROM deepr_runs) + (SELECT count(*) FROM deepr_nodes) + (SELECT count(*) FROM deepr_calls)")
            .expect("count"),
        "0"
    );
}

#[test]
fn a_budget_holds_across_sessions_and_resume_db_finishes_the_run() {
    let Some(db) = Database::create("budget") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    let corpus = corpus.to_str().expect("utf-8");
    submit(
        home.path(),
        &db.url,
        cell_args(
            TOPICS[1],
            corpus,
            ("quick", "linear"),
            "budget/report.md",
            "budget",
        ),
        &["--max-tokens", "2000", "--detach"],
    );
    let mut workers = vec![worker(home.path(), &home.path().join("w"), &db.url, "5")];
    wait_for("the budget to stop the run", 60, || {
        psql(&db.url, "SELECT state FROM deepr_runs").unwrap_or_default() == "incomplete"
    });
    let spent_first = count(
        &db.url,
        "SELECT COALESCE(SUM((entry->>'prompt_tokens')::bigint + (entry->>'completion_tokens')::bigint), 0) FROM deepr_calls",
    );
    assert!(spent_first > 0, "the first session spent something");
    let stored = psql(&db.url, "SELECT reports->>'md' FROM deepr_runs").expect("report");
    assert!(
        stored.contains("incomplete") || stored.contains("Stopped early"),
        "{stored}"
    );

    // Resuming with a larger budget finishes it, paying for nothing twice.
    let resumed = deepr(
        home.path(),
        &[
            "--db",
            &db.url,
            "--quiet",
            "resume",
            "budget",
            "--max-tokens",
            "200000",
        ],
    );
    stop_all(&mut workers);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(
        psql(&db.url, "SELECT state FROM deepr_runs").expect("state"),
        "finished"
    );
    let repaid = psql(
        &db.url,
        "SELECT entry->>'request' FROM deepr_calls WHERE NOT (entry->>'cache_hit')::boolean \
         GROUP BY entry->>'request' HAVING count(*) > 1",
    )
    .expect("journal");
    assert_eq!(repaid, "", "a call was paid twice across sessions");
    let out = "local/budget.md";
    same_as_local(
        home.path(),
        &db.url,
        "budget",
        cell_args(TOPICS[1], corpus, ("quick", "linear"), out, "budget"),
        out,
    );
    assert_eq!(
        above_run_details(&home.path().join("budget/report.md")),
        above_run_details(&home.path().join(out)),
        "resume --db wrote the finished report to the run's --out"
    );
    // A run that is queued or running cannot be queued again; an unknown one is named.
    let unknown = deepr(home.path(), &["--db", &db.url, "resume", "no-such-run"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("no-such-run"));
}
