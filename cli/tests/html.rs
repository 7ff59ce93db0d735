//! The HTML report in a real headless browser (Debian's chromium): it renders, every
//! in-page link resolves, and nothing in it can make a request. With CI=true a missing
//! browser fails the test instead of skipping it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{deepr, fixture_corpus, stderr};

fn browser() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            (!path.is_empty()).then(|| PathBuf::from(path))
        })
}

#[test]
fn html_report_renders_offline_in_a_real_browser() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = home.path().join("report.md");
    let state = home.path().join("state");
    let output = deepr(
        home.path(),
        &["--quiet", "--state-dir", state.to_str().expect("utf-8"), "run", "How does the rollback journal protect a transaction, and what is the default journal page size?", "--corpus", fixture_corpus().to_str().expect("utf-8"), "--out", out.to_str().expect("utf-8"), "--format", "html", "--format", "bullets", "--format", "cards"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let html_path = home.path().join("report.html");
    let html = std::fs::read_to_string(&html_path).expect("report.html");
    assert!(
        home.path().join("report.bullets.md").exists()
            && home.path().join("report.cards.tsv").exists()
    );

    // Nothing can leave the file: no external references, and a CSP that forbids any.
    for forbidden in [
        "src=", "http://", "https://", "url(", "@import", "<script", "<link",
    ] {
        assert!(
            !html.contains(forbidden),
            "the HTML must not contain {forbidden:?}"
        );
    }
    assert!(html.contains("default-src 'none'"));
    assert!(
        html.contains("id=\"disagree\" class=\"disagree\""),
        "the disagreement section stands out"
    );

    let Some(browser) = browser() else {
        assert!(
            std::env::var("CI").map(|v| v != "true").unwrap_or(true),
            "CI=true: chromium is missing (apt-get install chromium)"
        );
        eprintln!("skipped: no chromium");
        return;
    };
    let dom = dump_dom(&browser, home.path(), &html_path);
    assert!(
        dom.contains("<nav id=\"toc\""),
        "the rendered DOM has the table of contents"
    );
    assert!(dom.contains("class=\"footnotes\""), "and the footnotes");
    // Every in-page link resolves to an element of the rendered page.
    let mut links = 0;
    for chunk in dom.split("href=\"#").skip(1) {
        let target = chunk.split('"').next().unwrap_or_default();
        assert!(
            dom.contains(&format!("id=\"{target}\"")),
            "link #{target} resolves"
        );
        links += 1;
    }
    assert!(
        links >= 10,
        "the report links its sections and footnotes ({links})"
    );
}

/// The DOM headless chromium renders from `page` (a file), within 90 s.
fn dump_dom(browser: &std::path::Path, home: &std::path::Path, page: &std::path::Path) -> String {
    let profile = home.join("chromium-profile");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &format!("file://{}", page.display()),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut dom = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut dom)
        .expect("dom");
    assert!(status.success(), "chromium rendered the page");
    dom
}

#[test]
fn bench_html_charts_tokens_against_quality_in_a_real_browser() {
    let home = tempfile::tempdir().expect("tempdir");
    let topics = home.path().join("fixture-topics.txt");
    std::fs::write(
        &topics,
        "How does the rollback journal protect a transaction?\n",
    )
    .expect("write");
    let out = home.path().join("bench");
    let output = deepr(
        home.path(),
        &[
            "--quiet",
            "bench",
            "--topics",
            topics.to_str().expect("utf-8"),
            "--corpus",
            fixture_corpus().to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
            "--strategies",
            "linear,no-judge",
            "--depth",
            "quick",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let page = out.join("bench.html");
    let html = std::fs::read_to_string(&page).expect("bench.html beside bench.json");
    for forbidden in [
        "src=", "http://", "https://", "url(", "@import", "<script", "<link",
    ] {
        assert!(
            !html.contains(forbidden),
            "bench.html must not contain {forbidden:?}"
        );
    }
    assert!(html.contains("default-src 'none'") && html.contains("fixture-topics.txt"));
    let Some(browser) = browser() else {
        assert!(
            std::env::var("CI").map(|v| v != "true").unwrap_or(true),
            "CI=true: chromium is missing (apt-get install chromium)"
        );
        eprintln!("skipped: no chromium");
        return;
    };
    let dom = dump_dom(&browser, home.path(), &page);
    assert_eq!(
        dom.matches("class=\"point\"").count(),
        2,
        "one point per strategy"
    );
    for strategy in ["linear", "no-judge"] {
        assert!(
            dom.contains(&format!("<title>{strategy}: ")),
            "{strategy} is charted"
        );
    }
    assert!(
        dom.contains("Tokens against quotes on topic"),
        "the quality axis is named"
    );
}
