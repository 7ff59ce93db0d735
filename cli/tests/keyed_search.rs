//! The keyed search APIs end to end — SearXNG, Brave and Tavily — against loopback
//! stand-ins that answer in each API's documented shape, and fail the ways they do: a
//! refused key, a rate limit with Retry-After, malformed JSON. Each ends in its own
//! coverage status, and the run goes on with the corpus.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use common::{command, fixture_corpus, serve, stderr, HttpResponse};

fn page(title: &str) -> String {
    // Each provider's page says something of its own, so the pages stay three sources.
    format!("<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{}</p><p>The rollback journal page {title} protects a transaction by keeping the original content of each changed page.</p></article></body></html>", "The rollback journal keeps the original content of every changed page until the transaction commits. ".repeat(3))
}

/// One port; the first path segment picks the behaviour (`ok`, `auth`, `limited`,
/// `malformed`), the rest is the API's own path.
fn stand_ins() -> u16 {
    serve(|request| {
        let base = format!("http://{}", request.host());
        let head = &request.head;
        let mut segments = request.path().trim_start_matches('/').splitn(2, '/');
        let scenario = segments.next().unwrap_or("").to_string();
        let rest = format!("/{}", segments.next().unwrap_or(""));
        let (status, extra, kind, text) = match (scenario.as_str(), rest.as_str()) {
            ("pages", p) => ("200 OK", "", "text/html; charset=utf-8", page(p)),
            ("auth", _) => (
                "401 Unauthorized",
                "",
                "application/json",
                r#"{"error": "invalid key"}"#.to_string(),
            ),
            ("limited", _) => (
                "429 Too Many Requests",
                "Retry-After: 30\r\n",
                "application/json",
                r#"{"error": "slow down"}"#.to_string(),
            ),
            ("malformed", _) => (
                "200 OK",
                "",
                "application/json",
                r#"{"results": [{"url": "#.to_string(),
            ),
            ("ok", "/search") if head.starts_with("POST") => (
                "200 OK",
                "",
                "application/json",
                format!(
                    r#"{{"query": "q", "results": [{{"url": "{base}/pages/tavily-journal", "title": "Tavily: the rollback journal", "content": "journal", "score": 0.9}}]}}"#
                ),
            ),
            ("ok", "/search") => (
                "200 OK",
                "",
                "application/json",
                format!(
                    r#"{{"query": "q", "results": [{{"url": "{base}/pages/searxng-journal", "title": "SearXNG: the rollback journal", "content": "journal", "engine": "x"}}]}}"#
                ),
            ),
            ("ok", "/res/v1/web/search") => (
                "200 OK",
                "",
                "application/json",
                format!(
                    r#"{{"type": "search", "web": {{"results": [{{"url": "{base}/pages/brave-journal", "title": "Brave: the rollback journal", "description": "journal"}}]}}}}"#
                ),
            ),
            _ => ("404 Not Found", "", "text/plain", String::new()),
        };
        HttpResponse {
            status: status.into(),
            headers: extra.into(),
            content_type: kind.into(),
            body: text,
        }
    })
}

#[test]
fn each_keyed_api_ends_in_its_own_coverage_status() {
    let port = stand_ins();
    for (scenario, want) in [
        ("ok", "ok"),
        ("auth", "auth-failed"),
        ("limited", "rate-limited"),
        ("malformed", "bad-response"),
    ] {
        let home = tempfile::tempdir().expect("tempdir");
        let h = home.path();
        let base = format!("http://127.0.0.1:{port}/{scenario}");
        let allow = format!("127.0.0.1:{port}");
        let out = h.join("report.md");
        let output = command(
            h,
            &[
                "--quiet",
                "--state-dir",
                h.join("state").to_str().expect("utf-8"),
                "run",
                "How does the rollback journal protect a transaction?",
                "--corpus",
                fixture_corpus().to_str().expect("utf-8"),
                "--sources",
                "corpus,searxng,brave,tavily",
                "--searxng-url",
                &base,
                "--brave-url",
                &base,
                "--tavily-url",
                &base,
                "--allow-host",
                &allow,
                "--depth",
                "quick",
                "--out",
                out.to_str().expect("utf-8"),
            ],
        )
        .env("BRAVE_API_KEY", "brave-test-key")
        .env("TAVILY_API_KEY", "tavily-test-key")
        .output()
        .expect("run");
        assert_eq!(
            output.status.code(),
            Some(0),
            "{scenario}: {}",
            stderr(&output)
        );
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.with_extension("json")).expect("json"))
                .expect("parse");
        let coverage = report["coverage"].as_array().expect("coverage");
        for provider in ["searxng", "brave", "tavily"] {
            let calls: Vec<&serde_json::Value> = coverage
                .iter()
                .filter(|c| c["provider"] == provider)
                .collect();
            assert!(!calls.is_empty(), "{scenario}: {provider} was asked");
            for call in &calls {
                assert_eq!(call["status"], want, "{scenario}: {provider}: {call}");
            }
            if scenario == "ok" {
                assert!(
                    calls.iter().all(|c| c["hits"].as_u64() == Some(1)),
                    "{calls:?}"
                );
                let locators = report["sources"].to_string();
                assert!(
                    locators.contains(&format!("/pages/{provider}-journal")),
                    "{provider}'s page was read: {locators}"
                );
            }
        }
        assert!(
            coverage
                .iter()
                .any(|c| c["provider"] == "corpus" && c["status"] == "ok"),
            "{scenario}: the corpus still answers"
        );
    }
}
