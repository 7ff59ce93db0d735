//! The article end to end with a scripted section writer on 127.0.0.1: a valid writer
//! answer is accepted (its heading and prose are the report's), its one ungrounded
//! sentence is dropped and listed, `deepr verify` checks every prose sentence and
//! PASSes — and a prose sentence edited afterwards to state a number its quotes lack
//! makes it FAIL, naming the sentence.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{chat_answer, deepr, fixture_corpus, serve, stderr};

/// The claims a write_section prompt shows: (claim id, first quote).
fn shown_claims(user: &str) -> Vec<(String, String)> {
    let mut claims: Vec<(String, String)> = Vec::new();
    let mut current: Option<String> = None;
    for line in user.lines() {
        if let Some((head, _)) = line.split_once("]: \"") {
            if let Some((id, _)) = head.split_once(" [") {
                if !id.starts_with(' ') {
                    current = Some(id.to_string());
                    continue;
                }
            }
        }
        if let (Some(id), Some((_, quote))) = (&current, line.trim_start().split_once(": \"")) {
            if line.starts_with("    d") {
                let quote: String = serde_json::from_str(&format!("\"{quote}")).expect("quoted");
                claims.push((id.clone(), quote));
                current = None;
            }
        }
    }
    claims
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn a_scripted_writer_is_accepted_grounded_and_verified() {
    let writer_calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&writer_calls);
    let port = serve(move |request| {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        if !system.contains("one section of a research article") {
            // Every other task answers unusably: the heuristic answers for it.
            return chat_answer("{}", 50, 5);
        }
        let n = seen.fetch_add(1, Ordering::SeqCst);
        let claims = shown_claims(&request.user_message());
        assert!(!claims.is_empty(), "the writer was shown claims");
        let mut sentences: Vec<serde_json::Value> = claims
            .iter()
            .map(|(id, quote)| serde_json::json!({"text": quote, "claim_ids": [id]}))
            .collect();
        sentences.push(serde_json::json!({
            "text": "The journal keeps 99999 copies of every page.",
            "claim_ids": [claims[0].0],
        }));
        let answer = serde_json::json!({
            "heading": format!("Scripted section {}", ["one", "two", "three", "four", "five", "six"][n % 6]),
            "paragraphs": [{"sentences": sentences}],
        });
        chat_answer(&answer.to_string(), 200, 80)
    });
    let home = tempfile::tempdir().expect("tempdir");
    let state = home.path().join("state");
    let out = home.path().join("article.md");
    let output = deepr(
        home.path(),
        &[
            "--quiet",
            "--state-dir",
            state.to_str().expect("utf-8"),
            "run",
            "How does the rollback journal protect a transaction?",
            "--corpus",
            fixture_corpus().to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
            "--depth",
            "standard", // at quick, a question this corpus answers with one fact is a summary alone
            "--llm",
            "openai:scripted",
            "--llm-base-url",
            &format!("http://127.0.0.1:{port}/v1"),
            "--run-id",
            "scripted",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        writer_calls.load(Ordering::SeqCst) >= 1,
        "the writer was asked"
    );
    let json_path = out.with_extension("json");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).expect("json")).expect("parse");
    let sections = report["article"]["sections"].as_array().expect("sections");
    assert!(!sections.is_empty());
    for section in sections {
        let heading = section["heading"].as_str().expect("heading");
        assert!(heading.starts_with("Scripted section"), "{heading}");
        assert!(
            section["degraded"].is_null(),
            "the model's section was used"
        );
    }
    let dropped = report["article"]["dropped"].as_array().expect("dropped");
    assert!(
        dropped
            .iter()
            .any(|d| d["text"].as_str().is_some_and(|t| t.contains("99999"))
                && d["reason"].as_str().is_some_and(|r| r.contains("99999"))),
        "{dropped:?}"
    );
    let markdown = std::fs::read_to_string(&out).expect("md");
    assert!(markdown.contains("do not stand on the quotes they cite"));
    assert!(!markdown
        .split("## What the sources do not settle")
        .next()
        .unwrap_or("")
        .contains("99999"));

    let verify = |path: &std::path::Path| {
        deepr(
            home.path(),
            &[
                "--state-dir",
                state.to_str().expect("utf-8"),
                "verify",
                path.to_str().expect("utf-8"),
            ],
        )
    };
    for path in [&out, &json_path] {
        let checked = verify(path);
        let text = String::from_utf8_lossy(&checked.stdout).into_owned();
        assert_eq!(checked.status.code(), Some(0), "{text}");
        assert!(
            text.contains("prose sentences stand on verified quotes"),
            "{text}"
        );
        assert!(text.contains("P1 "), "prose rows are listed: {text}");
    }

    // A paragraph of report.md edited by hand (its sidecar unchanged) fails the gate.
    let markdown_copy = home.path().join("copy.md");
    let json_copy = home.path().join("copy.json");
    std::fs::copy(&json_path, &json_copy).expect("copy json");
    let first_paragraph = markdown
        .split("## Summary\n\n")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .expect("a summary paragraph")
        .to_string();
    let tampered = markdown.replacen(
        &first_paragraph,
        &format!("Experts agree this is safe. {first_paragraph}"),
        1,
    );
    std::fs::write(&markdown_copy, tampered).expect("write md");
    let checked = verify(&markdown_copy);
    let text = String::from_utf8_lossy(&checked.stdout).into_owned();
    assert_eq!(checked.status.code(), Some(1), "{text}");
    assert!(text.contains("not its sidecar's article"), "{text}");

    // A prose sentence edited to state a number its quotes lack fails the gate, named.
    let mut edited = report.clone();
    let first = &mut edited["article"]["sections"][0]["paragraphs"][0]["sentences"][0]["text"];
    let text = first.as_str().expect("text").to_string();
    *first = serde_json::Value::String(format!("{} It holds 77777 pages.", text));
    let edited_path = home.path().join("edited.json");
    std::fs::write(&edited_path, edited.to_string()).expect("write");
    let checked = verify(&edited_path);
    let text = String::from_utf8_lossy(&checked.stdout).into_owned();
    assert_eq!(checked.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL") && text.contains("77777"), "{text}");
}
