//! Fleet helpers shared by the fleet and partition tests: a fresh PostgreSQL database
//! per test (`DEEPR_TEST_PG`, default the local server), `psql`, workers, submitted
//! cells, and a fleet run checked against the same run made locally.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::{above_run_details, deepr, stderr};

pub fn admin_url() -> String {
    std::env::var("DEEPR_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// `psql` against `url`, one value per line.
pub fn psql(url: &str, sql: &str) -> Result<String, String> {
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
pub struct Database {
    pub url: String,
    pub name: String,
}

impl Database {
    pub fn create(tag: &str) -> Option<Self> {
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

pub fn worker(home: &Path, state: &Path, url: &str, lease: &str) -> Child {
    worker_command(home, state, url, lease)
        .spawn()
        .expect("start a worker")
}

pub fn worker_command(home: &Path, state: &Path, url: &str, lease: &str) -> Command {
    let mut command = super::command(
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

pub fn cell_args(
    topic: &str,
    corpus: &str,
    variant: (&str, &str),
    out: &str,
    id: &str,
) -> Vec<String> {
    [
        "run",
        topic,
        "--corpus",
        corpus,
        "--depth",
        variant.0,
        "--strategy",
        variant.1,
        "--out",
        out,
        "--run-id",
        id,
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `deepr --db URL run …` with `extra` flags; it must succeed.
pub fn submit(home: &Path, url: &str, cell: Vec<String>, extra: &[&str]) {
    let mut args = vec!["--db".to_string(), url.to_string()];
    args.extend(cell);
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let submitted = deepr(home, &args);
    assert!(submitted.status.success(), "{}", stderr(&submitted));
}

pub fn count(url: &str, sql: &str) -> u64 {
    psql(url, sql).expect("query").parse().expect("a number")
}

/// Wait until every run in the database is finished, naming the others on timeout.
pub fn wait_all_finished(url: &str, seconds: u64) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while count(
        url,
        "SELECT count(*) FROM deepr_runs WHERE state <> 'finished'",
    ) > 0
    {
        assert!(
            Instant::now() < deadline,
            "runs did not finish: {}",
            psql(
                url,
                "SELECT run_id, state, note FROM deepr_runs WHERE state <> 'finished'"
            )
            .unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub fn stop_all(workers: &mut [Child]) {
    for worker in workers {
        let _ = worker.kill();
        let _ = worker.wait();
    }
}

/// Run `id` locally (in `home/local-state`, one response cache for all local runs) and
/// export the fleet's run `id`; check that both reports are the same above
/// `## Run details` and return the export bundle.
pub fn same_as_local(
    home: &Path,
    url: &str,
    id: &str,
    local_args: Vec<String>,
    out: &str,
) -> serde_json::Value {
    let mut args = vec![
        "--state-dir".to_string(),
        home.join("local-state").display().to_string(),
    ];
    args.extend(local_args);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let local = deepr(home, &args);
    assert!(local.status.success(), "{}", stderr(&local));
    let bundle = home.join(format!("{id}.bundle"));
    let exported = deepr(
        home,
        &[
            "--db",
            url,
            "runs",
            "export",
            id,
            "--out",
            bundle.to_str().expect("utf-8"),
        ],
    );
    assert!(exported.status.success(), "{}", stderr(&exported));
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&bundle).expect("bundle")).expect("json");
    assert_eq!(
        stored["markdown"]
            .as_str()
            .unwrap_or_default()
            .split("\n## Run details")
            .next()
            .unwrap_or_default(),
        above_run_details(&home.join(out)),
        "run {id}: the fleet's report differs from the local one"
    );
    stored
}

pub fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill -{name} {pid}");
}

pub fn wait_for(what: &str, seconds: u64, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
