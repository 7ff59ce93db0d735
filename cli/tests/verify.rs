//! `deepr verify`: fixtures that a naive gate gets wrong. Each case builds an honest
//! report over source texts, applies one mutation, and checks the verdict, the exit
//! code and the named row.
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

use common::{deepr, stderr};
use deepr_evidence::{content_sha256, quote_sha256, split_sentences};
use serde_json::{json, Value};

/// Source pages: (locator, archived text). Page texts carry the traps: an HN-style
/// entity, a zero-width space before a heading, a soft hyphen.
fn sources() -> Vec<(&'static str, String)> {
    vec![
        ("https://news.example/item?id=1", "It&#x27;s the journal that makes commits atomic. Readers never see half a transaction.".into()),
        ("https://docs.example/wal", "\u{200B}Write-Ahead Logging\nIn WAL mode changes are appended to a separate log. A checkpoint copies them back.".into()),
        ("https://docs.example/sync", "The trans\u{00AD}action is durable after the sync. Power loss cannot undo it.".into()),
    ]
}

/// An honest report: one claim per sentence, each citing its sentence.
fn honest_report() -> (Value, Vec<(String, String)>) {
    let mut texts = Vec::new();
    let mut source_values = Vec::new();
    let mut claims = Vec::new();
    for (i, (locator, text)) in sources().into_iter().enumerate() {
        let id = format!("S{}", i + 1);
        let sha = content_sha256(&text);
        source_values.push(json!({"id": id, "locator": locator, "title": locator, "content_sha256": sha, "score": 0.5, "status": "ok"}));
        for sentence in split_sentences(&text) {
            let quote = sentence.text(&text).expect("slice").to_string();
            claims.push(json!({
                "id": format!("q1-c{}", claims.len() + 1),
                "subquestion": "q1",
                // A claim longer than its quote is normal: the claim is checked, the quote verified.
                "text": format!("As the source explains at some length, {quote}"),
                "verdict": "supported",
                "citations": [{"source": id, "sentence": sentence.index, "quote": quote, "quote_sha256": quote_sha256(&quote)}]
            }));
        }
        texts.push((sha, text));
    }
    let report = json!({
        "schema": "deepr.report.v1", "run_id": "fixture", "topic": "t", "depth": "standard", "strategy": "linear",
        "complete": true, "incomplete_reason": null, "subquestions": [{"id": "q1", "text": "t?", "round": 0}],
        "claims": claims, "conflicts": [], "sources": source_values, "coverage": [],
        "usage": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "cost_usd": 0.0, "by_stage": {}}
    });
    (report, texts)
}

fn bundle(report: &Value, texts: &[(String, String)]) -> Value {
    let texts: serde_json::Map<String, Value> = texts
        .iter()
        .map(|(sha, t)| (sha.clone(), json!(t)))
        .collect();
    json!({"schema": "deepr.bundle.v1", "report": report, "markdown": "", "texts": texts})
}

fn verify(home: &Path, file: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let state = home.join("empty-state");
    let mut args = vec![
        "--state-dir",
        state.to_str().expect("utf-8"),
        "verify",
        file.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let output = deepr(home, &args);
    (
        output.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            stderr(&output)
        ),
    )
}

fn citation_mut(report: &mut Value, n: usize) -> &mut Value {
    let mut seen = 0;
    for claim in report["claims"].as_array_mut().expect("claims") {
        for citation in claim["citations"].as_array_mut().expect("citations") {
            seen += 1;
            if seen == n {
                return citation;
            }
        }
    }
    panic!("no citation {n}")
}

#[test]
fn bundles_pass_and_each_mutation_fails_naming_its_row() {
    let home = tempfile::tempdir().expect("tempdir");
    type Mutation = fn(&mut Value);
    let cases: Vec<(&str, Mutation, i32, &str)> = vec![
        ("honest report over entity, zero-width and soft-hyphen pages, claims longer than quotes", |_| {}, 0, "PASS: 6 of 6"),
        ("fifth citation forged among honest ones", |r| {
            let forged = "A checkpoint deletes the database.";
            let c = citation_mut(r, 5);
            c["quote"] = json!(forged);
            c["quote_sha256"] = json!(quote_sha256(forged));
        }, 1, "(rows 5)"),
        ("one word changed, hash left as it was", |r| {
            let c = citation_mut(r, 3);
            c["quote"] = json!("In WAL mode changes are appended to a shared log.");
        }, 1, "(rows 3)"),
        ("one word changed, hash recomputed by the forger", |r| {
            let c = citation_mut(r, 3);
            let quote = "In WAL mode changes are appended to a shared log.";
            c["quote"] = json!(quote);
            c["quote_sha256"] = json!(quote_sha256(quote));
        }, 1, "(rows 3)"),
        ("citation swapped to another source", |r| {
            citation_mut(r, 1)["source"] = json!("S3");
        }, 1, "(rows 1)"),
        ("a source URL swapped with another source's", |r| {
            let sources = r["sources"].as_array_mut().expect("sources");
            let first = sources[0]["content_sha256"].clone();
            sources[0]["content_sha256"] = sources[1]["content_sha256"].clone();
            sources[1]["content_sha256"] = first;
        }, 1, "FAIL"),
        ("citation pointing at the wrong sentence", |r| {
            citation_mut(r, 2)["sentence"] = json!(0);
        }, 1, "(rows 2)"),
        ("citation naming an unlisted source", |r| {
            citation_mut(r, 6)["source"] = json!("S9");
        }, 1, "(rows 6)"),
    ];
    for (why, mutate, code, expect) in cases {
        let (mut report, texts) = honest_report();
        mutate(&mut report);
        let file = home.path().join("case.bundle");
        std::fs::write(
            &file,
            serde_json::to_vec(&bundle(&report, &texts)).expect("json"),
        )
        .expect("write");
        let (exit, out) = verify(home.path(), &file, &[]);
        assert_eq!(exit, Some(code), "{why}: {out}");
        assert!(out.contains(expect), "{why}: expected {expect:?} in {out}");
    }
}

/// A tiny HTTP server on 127.0.0.1 answering from a table of paths.
fn serve(pages: Vec<(&'static str, u16, String)>, connections: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let Ok(mut stream) = stream else { continue };
            let mut buffer = [0u8; 4096];
            let n = stream.read(&mut buffer).unwrap_or(0);
            let request = String::from_utf8_lossy(&buffer[..n]).into_owned();
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (status, body) = pages
                .iter()
                .find(|(p, _, _)| *p == path)
                .map(|(_, s, b)| (*s, b.clone()))
                .unwrap_or((404, String::new()));
            let _ = write!(stream, "HTTP/1.1 {status} X\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        }
    });
    port
}

#[test]
fn live_checks_and_unreachable_sources() {
    let home = tempfile::tempdir().expect("tempdir");
    let (mut report, _) = honest_report();
    let page = |text: &str| {
        format!("<html><head><title>t</title></head><body><article><h1>Page</h1><p>{text}</p><p>{}</p></article></body></html>", "Filler sentence that pads the article so readability keeps it. ".repeat(8))
    };
    let port = serve(
        vec![
            ("/news", 200, page("It&#x27;s the journal that makes commits atomic. Readers never see half a transaction.")),
            ("/wal", 200, page("</p><h2>Write-Ahead Logging</h2><p>In WAL mode changes are appended to a separate log. A checkpoint copies them back.")),
            ("/sync", 403, String::new()),
        ],
        16,
    );
    let sources = report["sources"].as_array_mut().expect("sources");
    for (source, path) in sources.iter_mut().zip(["/news", "/wal", "/sync"]) {
        source["locator"] = json!(format!("http://127.0.0.1:{port}{path}"));
    }
    let file = home.path().join("report.json");
    std::fs::write(&file, serde_json::to_vec(&report).expect("json")).expect("write");

    // No archive and no --live: nothing can be checked.
    let (exit, out) = verify(home.path(), &file, &[]);
    assert_eq!(exit, Some(3), "{out}");
    assert!(
        out.contains("UNVERIFIED") && !out.to_uppercase().contains("PASS"),
        "{out}"
    );

    // Live, but private addresses are refused by default: still nothing checked.
    let (exit, out) = verify(home.path(), &file, &["--live"]);
    assert_eq!(exit, Some(3), "{out}");
    assert!(out.contains("private"), "{out}");

    // Allowed: two pages answer (found), the 403 cannot refute (unchecked, warned).
    let (exit, out) = verify(home.path(), &file, &["--live", "--allow-private"]);
    assert_eq!(exit, Some(0), "{out}");
    assert!(
        out.contains("PASS: 4 of 6") && out.contains("2 unchecked") && out.contains("warning"),
        "{out}"
    );

    // Every source unreachable (a closed port): UNVERIFIED, never PASS.
    let closed = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let mut dead = report.clone();
    for source in dead["sources"].as_array_mut().expect("sources") {
        source["locator"] = json!(format!("http://127.0.0.1:{closed}/gone"));
    }
    let file = home.path().join("dead.json");
    std::fs::write(&file, serde_json::to_vec(&dead).expect("json")).expect("write");
    let (exit, out) = verify(home.path(), &file, &["--live", "--allow-private"]);
    assert_eq!(exit, Some(3), "{out}");
    assert!(!out.to_uppercase().contains("PASS"), "{out}");
}

#[test]
fn bad_usage_is_exit_2() {
    let home = tempfile::tempdir().expect("tempdir");
    let (report, _) = honest_report();
    let file = home.path().join("r.json");
    let bytes = serde_json::to_vec(&report).expect("json");
    std::fs::write(&file, &bytes).expect("write");
    assert_eq!(verify(home.path(), &file, &["--max-live", "-1"]).0, Some(2));
    assert_eq!(
        verify(home.path(), &file, &["--max-live", "lots"]).0,
        Some(2)
    );
    let truncated = home.path().join("t.json");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).expect("write");
    let (exit, out) = verify(home.path(), &truncated, &[]);
    assert_eq!(exit, Some(2), "{out}");
    assert!(out.contains("truncated"), "{out}");
    assert_eq!(
        verify(home.path(), &home.path().join("missing.md"), &[]).0,
        Some(2)
    );
    let other = home.path().join("o.json");
    std::fs::write(&other, br#"{"schema": "something.else"}"#).expect("write");
    assert_eq!(verify(home.path(), &other, &[]).0, Some(2));
    // A markdown report with a truncated sidecar beside it.
    std::fs::write(
        home.path().join("t.md"),
        "# T\n\n- claim[^1]\n\n[^1]: \"x\" — a.md\n",
    )
    .expect("write");
    assert_eq!(
        verify(home.path(), &home.path().join("t.md"), &[]).0,
        Some(2)
    );
}
