//! `deepr ask`: a follow-up question answered from the documents its parent read.
//! Against a loopback stand-in of Wikipedia that counts every request: the follow-up
//! fetches no page the parent read and searches nothing (unless `--search`); its
//! report verifies; it costs well under a fresh quick run; it is listed with its
//! parent; a question the parent's documents say nothing on searches the sources again
//! and says so; a follow-up killed with SIGKILL resumes to the report an uninterrupted
//! one writes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::{above_run_details, deepr, fixture_corpus, spawn, stderr};

type Requests = Arc<Mutex<BTreeMap<String, usize>>>;

fn page(title: &str, body: &str) -> String {
    format!("<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{body}</p></article></body></html>")
}

/// A Wikipedia stand-in on a loopback port; every request is counted by path.
fn wikipedia() -> (u16, Requests) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests: Requests = Arc::default();
    let counted = Arc::clone(&requests);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                let n = stream.read(&mut buffer).unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..n]).into_owned();
                let target = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let path = target.split('?').next().unwrap_or("/").to_string();
                *counted.lock().unwrap().entry(path.clone()).or_default() += 1;
                let (status, kind, body) = match path.as_str() {
                    "/robots.txt" => (200, "text/plain", "User-agent: *\n".to_string()),
                    "/w/api.php" => (200, "application/json", r#"{"query":{"search":[{"ns":0,"title":"Write-ahead logging","pageid":1,"snippet":"WAL"},{"ns":0,"title":"Checkpoint","pageid":2,"snippet":"checkpoint"}]}}"#.to_string()),
                    "/wiki/Write-ahead_logging" => (200, "text/html; charset=utf-8", page("Write-ahead logging", "Write-ahead logging appends every change to a log file before the database file is changed. The log is flushed to stable storage before a commit is acknowledged, which gives durability. A crash leaves the database file as it was, and the log is replayed on the next open.")),
                    "/wiki/Checkpoint" => (200, "text/html; charset=utf-8", page("Checkpoint", "A checkpoint copies the changed pages from the write-ahead log back into the database file. After a checkpoint the log can be reset and reused from its beginning. Checkpoints run automatically when the log grows past one thousand pages.")),
                    _ => (404, "text/plain", "not found".to_string()),
                };
                let _ = write!(stream, "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            });
        }
    });
    (port, requests)
}

fn count(requests: &Requests, path: &str) -> usize {
    requests.lock().unwrap().get(path).copied().unwrap_or(0)
}

fn tokens(report_md: &Path) -> u64 {
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report_md.with_extension("json")).unwrap()).unwrap();
    report["usage"]["prompt_tokens"].as_u64().unwrap()
        + report["usage"]["completion_tokens"].as_u64().unwrap()
}

struct Home {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        Self { _dir: dir, path }
    }
    fn state(&self) -> String {
        self.path.join("state").display().to_string()
    }
    fn out(&self, name: &str) -> PathBuf {
        self.path.join(format!("{name}.md"))
    }
    fn deepr(&self, args: &[&str]) -> std::process::Output {
        let state = self.state();
        let mut all = vec!["--quiet", "--state-dir", &state];
        all.extend(args);
        deepr(&self.path, &all)
    }
}

const QUESTION: &str = "What does a checkpoint copy back into the database file?";

#[test]
fn a_follow_up_reads_what_its_parent_read_and_fetches_nothing_again() {
    let (port, requests) = wikipedia();
    let base = format!("http://127.0.0.1:{port}");
    let allow = format!("127.0.0.1:{port}");
    let home = Home::new();
    let parent = home.out("parent");
    let web = [
        "--sources",
        "wikipedia",
        "--wikipedia-url",
        &base,
        "--allow-host",
        &allow,
    ];
    let mut args = vec![
        "run",
        "How does write-ahead logging give durability, and what is a checkpoint?",
        "--depth",
        "quick",
        "--run-id",
        "parent",
        "--out",
        parent.to_str().unwrap(),
    ];
    args.extend(web);
    let output = home.deepr(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let page_fetches =
        count(&requests, "/wiki/Checkpoint") + count(&requests, "/wiki/Write-ahead_logging");
    assert!(
        page_fetches >= 2,
        "the parent read both pages: {requests:?}"
    );
    let searches = count(&requests, "/w/api.php");

    let ask = home.out("ask");
    let output = home.deepr(&[
        "ask",
        "parent",
        QUESTION,
        "--run-id",
        "ask",
        "--out",
        ask.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let after =
        count(&requests, "/wiki/Checkpoint") + count(&requests, "/wiki/Write-ahead_logging");
    assert_eq!(
        after, page_fetches,
        "the follow-up fetched no page again: {requests:?}"
    );
    assert_eq!(
        count(&requests, "/w/api.php"),
        searches,
        "and searched nothing"
    );
    let markdown = std::fs::read_to_string(&ask).unwrap();
    assert!(markdown.contains("copies the changed pages"), "{markdown}");
    assert!(
        markdown.contains("Follows: run `parent` (follow-up"),
        "{markdown}"
    );
    let verified = home.deepr(&["verify", ask.to_str().unwrap()]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let listed = home.deepr(&["runs", "list"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("[follow-up of parent]"));

    // With --search the sources are searched again, and a page read before is still
    // served from the archive.
    let searched = home.out("searched");
    let output = home.deepr(&[
        "ask",
        "parent",
        QUESTION,
        "--search",
        "--run-id",
        "searched",
        "--out",
        searched.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        count(&requests, "/w/api.php") > searches,
        "--search searched again"
    );
    let again =
        count(&requests, "/wiki/Checkpoint") + count(&requests, "/wiki/Write-ahead_logging");
    assert_eq!(
        again, page_fetches,
        "no page the parent read was fetched: {requests:?}"
    );
}

#[test]
fn a_follow_up_costs_a_fraction_of_a_fresh_quick_run() {
    // The README's run, then a follow-up on it, beside a fresh quick run of the same
    // question over the same documents.
    let corpus = common::root()
        .join("examples/sqlite-docs")
        .display()
        .to_string();
    let home = Home::new();
    let parent = home.out("parent");
    let output = home.deepr(&[
        "run",
        "How does SQLite guarantee atomic commits, and what changes in WAL mode?",
        "--corpus",
        &corpus,
        "--run-id",
        "parent",
        "--out",
        parent.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let question = "What does a checkpoint copy back into the database?";
    let ask = home.out("ask");
    let output = home.deepr(&[
        "ask",
        "parent",
        question,
        "--run-id",
        "ask",
        "--out",
        ask.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let verified = home.deepr(&["verify", ask.to_str().unwrap()]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    // In its own state dir: no answer cached by the runs above.
    let fresh_home = Home::new();
    let fresh = fresh_home.out("fresh");
    let output = fresh_home.deepr(&[
        "run",
        question,
        "--corpus",
        &corpus,
        "--depth",
        "quick",
        "--out",
        fresh.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let (asked, fresh) = (tokens(&ask), tokens(&fresh));
    println!("figures: follow-up {asked} tokens, fresh quick run {fresh} tokens");
    assert!(
        asked > 0 && asked * 10 <= fresh * 4,
        "the follow-up spent {asked} tokens, a fresh quick run {fresh}"
    );

    // Nothing on the question in the parent's documents: its sources are searched again,
    // and the report says so.
    let elsewhere = home.out("elsewhere");
    let output = home.deepr(&[
        "ask",
        "parent",
        "What do lighthouse keepers eat for breakfast?",
        "--run-id",
        "elsewhere",
        "--out",
        elsewhere.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let markdown = std::fs::read_to_string(&elsewhere).unwrap();
    assert!(
        markdown
            .contains("hold nothing on this question; deepr searched its sources (corpus) again"),
        "{markdown}"
    );
}

#[test]
fn a_follow_up_killed_mid_run_resumes_to_the_same_report() {
    let corpus = fixture_corpus().display().to_string();
    let home = Home::new();
    let parent = home.out("parent");
    // The parent's slow model calls are its follow-ups' too (a recorded setting).
    let output = home.deepr(&[
        "run",
        "How does the rollback journal protect a transaction?",
        "--corpus",
        &corpus,
        "--depth",
        "quick",
        "--run-id",
        "parent",
        "--out",
        parent.to_str().unwrap(),
        "--offline-latency",
        "300ms",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let question = "When is the rollback journal deleted?";
    let whole = home.out("whole");
    let output = home.deepr(&[
        "ask",
        "parent",
        question,
        "--run-id",
        "whole",
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));

    let other = Home::new();
    std::fs::create_dir_all(&other.path).unwrap();
    let output = other.deepr(&[
        "run",
        "How does the rollback journal protect a transaction?",
        "--corpus",
        &corpus,
        "--depth",
        "quick",
        "--run-id",
        "parent",
        "--out",
        other.out("parent").to_str().unwrap(),
        "--offline-latency",
        "300ms",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let killed = other.out("killed");
    let state = other.state();
    let mut child = spawn(
        &other.path,
        &[
            "--quiet",
            "--state-dir",
            &state,
            "ask",
            "parent",
            question,
            "--run-id",
            "killed",
            "--out",
            killed.to_str().unwrap(),
        ],
    );
    let state_path = other.path.join("state");
    common::kill_when(&mut child, "the follow-up's first model call", || {
        common::journaled_calls(&state_path, "killed") >= 1
    });
    assert!(!killed.exists(), "killed before its report");
    let resumed = other.deepr(&["resume", "killed"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(above_run_details(&killed), above_run_details(&whole));
}
