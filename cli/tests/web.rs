//! Web research against loopback stand-ins of the Wikipedia, arXiv and Hacker News APIs
//! (responses in each API's documented shape), with pages that fail in the ways the web
//! does — and a listener that proves a refused address is never connected to.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{deepr, stderr};

fn article(title: &str, body: &str) -> String {
    format!("<html><head><title>{title}</title></head><body><nav>Menu | Home</nav><article><h1>{title}</h1><p>{body}</p><p>{}</p></article></body></html>", "Write-ahead logging keeps the original database unchanged while changes are appended to a separate log file. ".repeat(3))
}

/// Serve the stand-ins on one port; `refused` is a port the pages point at.
fn web(refused: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                let n = stream.read(&mut buffer).unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..n]).into_owned();
                let target = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let path = target.split('?').next().unwrap_or("/").to_string();
                let base = format!("http://127.0.0.1:{port}");
                let (status, kind, body): (u16, &str, Vec<u8>) = match path.as_str() {
                    "/robots.txt" => (200, "text/plain", b"User-agent: *\nDisallow: /private\n".to_vec()),
                    "/w/api.php" => (200, "application/json", br#"{"batchcomplete":"","query":{"searchinfo":{"totalhits":3},"search":[{"ns":0,"title":"Write-ahead logging","pageid":1,"snippet":"<span class=\"searchmatch\">WAL</span>"},{"ns":0,"title":"Journal","pageid":2,"snippet":"x"},{"ns":0,"title":"Private notes","pageid":3,"snippet":"y"}]}}"#.to_vec()),
                    "/wiki/Write-ahead_logging" => (200, "text/html; charset=utf-8", article("Write-ahead logging", "In computer science, write-ahead logging is a family of techniques for providing atomicity and durability in database systems.").into_bytes()),
                    "/wiki/Journal" => (403, "text/html", b"forbidden".to_vec()),
                    "/api/query" => (200, "application/atom+xml", format!(r#"<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><id>{base}/abs/1</id><title>Logging for durability</title><summary>A study of logging.</summary></entry><entry><id>{base}/abs/redirect</id><title>Moved</title><summary>x</summary></entry></feed>"#).into_bytes()),
                    "/abs/1" => (200, "text/html", article("Logging for durability", "We show that write-ahead logging with group commit gives atomicity and durability at a lower cost than shadow paging.").into_bytes()),
                    "/abs/redirect" => (302, "text/html", Vec::new()),
                    "/api/v1/search" => (200, "application/json", format!(r#"{{"hits":[{{"title":"WAL story","url":"{base}/story?utm_source=hn","objectID":"1","points":50,"num_comments":3}},{{"title":"WAL story again","url":"{base}/story","objectID":"2"}},{{"title":"Elsewhere","url":"http://127.0.0.1:{refused}/x","objectID":"3"}},{{"title":"Binary","url":"{base}/file.bin","objectID":"4"}}]}}"#).into_bytes()),
                    "/story" => (200, "text/plain; charset=iso-8859-1", b"Write-ahead logging caf\xe9 story: the log is flushed before the commit is acknowledged, which gives durability.".to_vec()),
                    "/file.bin" => (200, "application/octet-stream", vec![0u8, 1, 2, 3]),
                    _ => (404, "text/plain", b"not found".to_vec()),
                };
                let location = if path == "/abs/redirect" {
                    format!("Location: http://127.0.0.1:{refused}/steal\r\n")
                } else {
                    String::new()
                };
                let _ = write!(stream, "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{location}Connection: close\r\n\r\n", body.len());
                let _ = stream.write_all(&body);
            });
        }
    });
    port
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn wikipedia_arxiv_and_hn_stand_ins_give_a_full_report_and_refused_addresses_stay_untouched() {
    let refused_listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let refused = refused_listener.local_addr().expect("addr").port();
    let connections = Arc::new(AtomicUsize::new(0));
    {
        let connections = Arc::clone(&connections);
        std::thread::spawn(move || {
            for stream in refused_listener.incoming() {
                connections.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
    }
    let port = web(refused);
    let base = format!("http://127.0.0.1:{port}");
    let home = tempfile::tempdir().expect("tempdir");
    let state = home.path().join("state");
    let out = home.path().join("web.md");
    let allow = format!("127.0.0.1:{port}");
    let output = deepr(
        home.path(),
        &[
            "--quiet",
            "--state-dir",
            state.to_str().expect("utf-8"),
            "run",
            "How does write-ahead logging give durability?",
            "--sources",
            "wikipedia,arxiv,hn",
            "--wikipedia-url",
            &base,
            "--arxiv-url",
            &base,
            "--hn-url",
            &base,
            "--allow-host",
            &allow,
            "--out",
            out.to_str().expect("utf-8"),
            "--depth",
            "quick",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.with_extension("json")).expect("json"))
            .expect("parse");
    let locators: Vec<&str> = report["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .filter_map(|s| s["locator"].as_str())
        .collect();
    assert!(
        locators.contains(&format!("{base}/wiki/Write-ahead_logging").as_str()),
        "{locators:?}"
    );
    assert!(
        locators.contains(&format!("{base}/abs/1").as_str()),
        "{locators:?}"
    );
    let stories = locators.iter().filter(|l| l.contains("/story")).count();
    assert_eq!(
        stories, 1,
        "the same story with and without tracking parameters is one source: {locators:?}"
    );
    let providers: Vec<&str> = report["coverage"]
        .as_array()
        .expect("coverage")
        .iter()
        .filter_map(|c| c["provider"].as_str())
        .collect();
    for name in ["wikipedia", "arxiv", "hn"] {
        assert!(providers.contains(&name), "{name} in coverage");
    }
    let markdown = std::fs::read_to_string(&out).expect("md");
    let unreadable = markdown
        .split("Sources that could not be read:")
        .nth(1)
        .expect("failed fetches are listed");
    assert!(
        unreadable.contains("/wiki/Journal`: auth-failed"),
        "{unreadable}"
    );
    assert!(unreadable.contains("/file.bin`: skipped"), "{unreadable}");
    // The hit aimed at the refused port and the redirect towards it were attempted —
    // and refused — so the zero below is not vacuous.
    assert!(
        unreadable.contains(&format!("127.0.0.1:{refused}/x`: skipped")),
        "the HN hit on the refused port was attempted and refused: {unreadable}"
    );
    assert!(
        unreadable.contains("/abs/redirect`:"),
        "the redirect towards the refused port was attempted and refused: {unreadable}"
    );
    assert!(
        !report["claims"].as_array().expect("claims").is_empty(),
        "a full report"
    );
    // The latin-1 page was decoded, not mangled — and it was quoted, so this is checked,
    // not assumed.
    let quotes: Vec<&str> = report["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .flat_map(|c| c["citations"].as_array().into_iter().flatten())
        .filter_map(|c| c["quote"].as_str())
        .collect();
    assert!(
        quotes.iter().any(|q| q.contains("café story")),
        "the latin-1 page is quoted, decoded: {quotes:?}"
    );
    assert!(!markdown.contains('\u{FFFD}'), "no replacement characters");
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "nothing ever connected to the refused port"
    );
    let verify = deepr(
        home.path(),
        &[
            "--state-dir",
            state.to_str().expect("utf-8"),
            "verify",
            out.with_extension("json").to_str().expect("utf-8"),
        ],
    );
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}
