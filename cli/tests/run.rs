//! End-to-end tests of `deepr run` on the fixture corpus (`test_data/contradiction`),
//! with HOME and XDG_* pointed at temp dirs so no user state leaks in.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::path::{Path, PathBuf};

use serde_json::Value;

const TOPIC: &str = "How does the rollback journal protect a transaction, and what is the default journal page size? What do lighthouse keepers eat?";

mod common;
use common::{deepr, fixture_corpus, root};

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read json")).expect("parse json")
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// An HTML-to-text path independent of dom_smoothie: drop script/style, replace tags
/// with spaces. Entities are decoded by the normaliser.
fn crude_html_text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

struct Run {
    _home: tempfile::TempDir,
    home: PathBuf,
    out: PathBuf,
    state: PathBuf,
    stderr: String,
}

fn run_fixture(extra: &[&str]) -> Run {
    let home = tempfile::tempdir().expect("tempdir");
    let home_path = home.path().to_path_buf();
    let out = home_path.join("reports/nested/report.md");
    let state = home_path.join("state");
    let corpus = fixture_corpus();
    let mut args = vec![
        "--state-dir",
        state.to_str().expect("utf-8"),
        "run",
        TOPIC,
        "--corpus",
        corpus.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let output = deepr(&home_path, &args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "deepr run failed: {stderr}");
    Run {
        _home: home,
        home: home_path,
        out,
        state,
        stderr,
    }
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn fixture_run_keeps_every_invariant() {
    let run = run_fixture(&["--run-id", "fixture-1", "--concurrency", "4"]);
    let report = read_json(&run.out.with_extension("json"));
    let markdown = std::fs::read_to_string(&run.out).expect("report.md");
    assert_eq!(report["schema"], "deepr.report.v1");
    assert!(run.stderr.contains("fixture-1"), "prints the run id");
    assert!(
        run.stderr.contains("skipped broken.txt"),
        "bad file reported: {}",
        run.stderr
    );

    // Verbatim: every quote is an exact slice of its archived text, hashed correctly,
    // and also present in the original file through an independent text path.
    let sources: Vec<Value> = report["sources"].as_array().expect("sources").clone();
    // No sentence is quoted under two subquestions: a round's candidates are partitioned
    // and later rounds exclude what earlier ones cited.
    let mut quoted_under: std::collections::BTreeMap<(String, String), String> =
        std::collections::BTreeMap::new();
    for claim in report["claims"].as_array().expect("claims") {
        let subquestion = claim["subquestion"]
            .as_str()
            .expect("subquestion")
            .to_string();
        for citation in claim["citations"].as_array().expect("citations") {
            let key = (
                citation["source"].to_string(),
                citation["quote"].to_string(),
            );
            let first = quoted_under
                .entry(key)
                .or_insert_with(|| subquestion.clone());
            assert_eq!(
                *first, subquestion,
                "{citation} is quoted under two subquestions"
            );
        }
    }
    assert!(quoted_under.len() >= 5, "the fixture quotes sentences");
    let mut checked = 0;
    for claim in report["claims"].as_array().expect("claims") {
        for citation in claim["citations"].as_array().expect("citations") {
            let source = sources
                .iter()
                .find(|s| s["id"] == citation["source"])
                .expect("citation names a listed source");
            let sha = source["content_sha256"].as_str().expect("sha");
            let archived = std::fs::read_to_string(
                run.state
                    .join("archive")
                    .join(&sha[..2])
                    .join(format!("{sha}.txt")),
            )
            .expect("archived text");
            assert_eq!(
                sha256_hex(archived.as_bytes()),
                sha,
                "content_sha256 matches the archive"
            );
            let quote = citation["quote"].as_str().expect("quote");
            assert!(
                archived.contains(quote),
                "quote {quote:?} is an exact slice of {}",
                source["locator"]
            );
            assert_eq!(
                citation["quote_sha256"],
                deepr_evidence::quote_sha256(quote)
            );
            let original = std::fs::read_to_string(
                fixture_corpus().join(source["locator"].as_str().expect("locator")),
            )
            .expect("original");
            let independent = if source["locator"]
                .as_str()
                .is_some_and(|l| l.ends_with(".html"))
            {
                crude_html_text(&original)
            } else {
                original
            };
            assert!(
                deepr_evidence::normalise(&independent).contains(&deepr_evidence::normalise(quote)),
                "quote {quote:?} is in the original file {}",
                source["locator"]
            );
            // The markdown footnote carries the same quote.
            assert!(markdown.contains(&format!(
                "\"{}\" — {}",
                quote.split_whitespace().collect::<Vec<_>>().join(" "),
                source["locator"].as_str().unwrap_or("")
            )));
            checked += 1;
        }
    }
    assert!(checked >= 3, "the fixture yields citations ({checked})");

    // The planted contradiction (4096 vs 1024 bytes) is found and reported.
    let conflicts = report["conflicts"].as_array().expect("conflicts");
    assert!(
        conflicts.iter().any(|c| c["summary"]
            .as_str()
            .is_some_and(|s| s.contains("4096") && s.contains("1024"))),
        "planted contradiction in conflicts[]: {conflicts:?}"
    );
    let disagree = markdown
        .split("## Where sources disagree")
        .nth(1)
        .expect("section")
        .split("## References")
        .next()
        .unwrap_or("");
    assert!(
        disagree.contains("4096") && disagree.contains("1024"),
        "planted contradiction in the markdown section"
    );

    // The thin subquestion (lighthouse keepers) triggers a deepen round at standard depth.
    let rounds: Vec<u64> = report["subquestions"]
        .as_array()
        .expect("subquestions")
        .iter()
        .filter_map(|s| s["round"].as_u64())
        .collect();
    assert!(
        rounds.contains(&0) && rounds.contains(&1),
        "round 1 exists: {rounds:?}"
    );
    assert!(
        rounds.iter().all(|r| *r <= 1),
        "standard depth allows at most one extra round"
    );

    // Judge calls: per round, batches of at most 8 claims holding whole subquestions'
    // claims (one with more is cut alone), over the claims in their order.
    let round_of = |subq: &str| {
        report["subquestions"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["id"] == subq))
            .and_then(|s| s["round"].as_u64())
            .expect("round")
    };
    let mut counts: Vec<(String, u64, u64)> = Vec::new();
    for claim in report["claims"].as_array().expect("claims") {
        let subq = claim["subquestion"].as_str().expect("subq").to_string();
        match counts.last_mut() {
            Some((last, _, n)) if *last == subq => *n += 1,
            _ => counts.push((subq.clone(), round_of(&subq), 1)),
        }
    }
    let (mut expected_judge_calls, mut open, mut open_round) = (0u64, 0u64, 0u64);
    for (_, round, n) in &counts {
        if open > 0 && open + n <= 8 && open_round == *round {
            open += n;
            continue;
        }
        expected_judge_calls += u64::from(open > 0);
        open = 0;
        if *n > 8 {
            expected_judge_calls += n.div_ceil(8);
        } else {
            open = *n;
            open_round = *round;
        }
    }
    expected_judge_calls += u64::from(open > 0);
    assert_eq!(
        report["usage"]["by_stage"]["judge"]["calls"].as_u64(),
        Some(expected_judge_calls)
    );

    // Sections in order, run-specific facts only under Run details.
    let order = [
        "# ",
        "## Summary",
        "## 1. ",
        "## Where sources disagree",
        "## What the sources do not settle",
        "## References",
        "## Run details",
    ];
    let mut at = 0;
    for heading in order {
        let found = markdown[at..]
            .find(heading)
            .unwrap_or_else(|| panic!("section {heading} in order"));
        at += found + heading.len();
    }
    let above = markdown.split("\n## Run details").next().expect("above");
    for private in ["fixture-1", run.home.to_str().expect("utf-8"), "report.md"] {
        assert!(
            !above.contains(private),
            "{private:?} must not appear above Run details"
        );
    }

    // Every node left a checkpoint, and the run log exists.
    assert!(run.state.join("runs/fixture-1/run.log").exists());
    let log = std::fs::read_to_string(run.state.join("runs/fixture-1/run.log")).expect("log");
    let finished = log.lines().filter(|l| l.contains("] done ")).count();
    let subqs = report["subquestions"].as_array().map(Vec::len).unwrap_or(0);
    // scout + decompose + 5 per subquestion + judge/conflict/deepen per round + one
    // writer per section with evidence (a top-level subquestion and its follow-ups)
    // + synthesize
    let written = log
        .lines()
        .filter(|l| l.contains("] done write write/"))
        .count();
    let sections = report["article"]["sections"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    assert!(
        sections > 0 && written >= sections,
        "{written} writers, {sections} sections"
    );
    assert_eq!(
        finished,
        2 + 5 * subqs + 3 * 2 + written + 1,
        "every node ran once"
    );

    article_reads_as_an_answer(&report, above);
    insta::assert_snapshot!("fixture_report", above);

    // The gate passes the report of a normal run, through either file.
    let s = run.state.to_str().expect("utf-8").to_string();
    for file in [run.out.clone(), run.out.with_extension("json")] {
        let output = deepr(
            &run.home,
            &["--state-dir", &s, "verify", file.to_str().expect("utf-8")],
        );
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        assert_eq!(
            output.status.code(),
            Some(0),
            "verify {}: {text}",
            file.display()
        );
        assert!(
            text.lines().last().is_some_and(|l| l.starts_with("PASS: ")),
            "{text}"
        );
    }
    // The markdown alone (no sidecar) is checked through its footnotes.
    let alone = run.home.join("alone/report.md");
    std::fs::create_dir_all(alone.parent().expect("parent")).expect("mkdir");
    std::fs::copy(&run.out, &alone).expect("copy");
    let output = deepr(
        &run.home,
        &["--state-dir", &s, "verify", alone.to_str().expect("utf-8")],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    // A hand-edited quote in the markdown fails and names its row.
    let edited: String = markdown
        .lines()
        .map(|l| {
            if l.starts_with("[^") {
                l.replacen("4096 bytes", "8192 bytes", 1)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(edited, markdown);
    std::fs::write(&run.out, &edited).expect("edit");
    let output = deepr(
        &run.home,
        &[
            "--state-dir",
            &s,
            "verify",
            run.out.to_str().expect("utf-8"),
        ],
    );
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL: 1 of"), "{text}");
    std::fs::write(&run.out, &markdown).expect("restore");
    // Reports travel: an export verifies with no state dir at all.
    let bundle = run.home.join("fixture.bundle");
    let output = deepr(
        &run.home,
        &[
            "--state-dir",
            &s,
            "runs",
            "export",
            "fixture-1",
            "--out",
            bundle.to_str().expect("utf-8"),
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let elsewhere = run.home.join("other-machine-state");
    let output = deepr(
        &run.home,
        &[
            "--state-dir",
            elsewhere.to_str().expect("utf-8"),
            "verify",
            bundle.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn bundled_corpus_meets_the_quality_bar() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = home.path().join("r.md");
    let state = home.path().join("s");
    let corpus = root().join("examples/sqlite-docs");
    let output = deepr(
        home.path(),
        &[
            "--quiet",
            "--state-dir",
            state.to_str().expect("utf-8"),
            "run",
            "How does SQLite guarantee atomic commits, and what changes in WAL mode?",
            "--corpus",
            corpus.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stderr.is_empty(), "--quiet prints nothing");
    let report = read_json(&out.with_extension("json"));
    let mut sentences = std::collections::BTreeSet::new();
    for claim in report["claims"].as_array().expect("claims") {
        for c in claim["citations"].as_array().expect("citations") {
            sentences.insert((c["source"].to_string(), c["sentence"].as_u64()));
        }
    }
    let docs: std::collections::BTreeSet<_> = sentences.iter().map(|(s, _)| s.clone()).collect();
    assert!(
        sentences.len() >= 15 && docs.len() >= 5,
        "{} sentences from {} documents",
        sentences.len(),
        docs.len()
    );
    let markdown = std::fs::read_to_string(&out).expect("md");
    assert!(
        markdown.contains("Deepening: "),
        "says whether and why it deepened"
    );
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn bad_input_is_a_usage_error_that_damages_nothing() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let state = h.join("state");
    let s = state.to_str().expect("utf-8").to_string();
    let corpus = fixture_corpus();
    let c = corpus.to_str().expect("utf-8").to_string();
    // A first good run whose state must survive every bad invocation.
    let good_out = h.join("good.md");
    let ok = deepr(
        h,
        &[
            "--quiet",
            "--state-dir",
            &s,
            "run",
            "rollback journal",
            "--corpus",
            &c,
            "--out",
            good_out.to_str().expect("utf-8"),
            "--run-id",
            "keep",
            "--depth",
            "quick",
        ],
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let before = std::fs::read(h.join("good.json")).expect("json");

    let empty_dir = h.join("empty");
    std::fs::create_dir_all(&empty_dir).expect("mkdir");
    let binary_dir = h.join("binary");
    std::fs::create_dir_all(&binary_dir).expect("mkdir");
    std::fs::write(binary_dir.join("a.txt"), b"\0\0\0\x01").expect("write");
    std::fs::write(h.join("a-file"), "x").expect("write");
    let long_topic = "x".repeat(2001);
    let blocked_out = h.join("a-file/sub/report.md");
    let unwritable_state = h.join("a-file/state");
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "empty topic",
            vec!["run".into(), "".into(), "--corpus".into(), c.clone()],
        ),
        (
            "whitespace topic",
            vec!["run".into(), "  \t ".into(), "--corpus".into(), c.clone()],
        ),
        (
            "topic too long",
            vec![
                "run".into(),
                long_topic.clone(),
                "--corpus".into(),
                c.clone(),
            ],
        ),
        (
            "unknown depth",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                c.clone(),
                "--depth".into(),
                "huge".into(),
            ],
        ),
        (
            "unknown flag",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                c.clone(),
                "--frobnicate".into(),
            ],
        ),
        (
            "missing corpus",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                h.join("nope").to_string_lossy().into(),
            ],
        ),
        (
            "corpus is a file",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                h.join("a-file").to_string_lossy().into(),
            ],
        ),
        (
            "empty corpus",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                empty_dir.to_string_lossy().into(),
            ],
        ),
        (
            "only binary files",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                binary_dir.to_string_lossy().into(),
            ],
        ),
        (
            "out folder cannot be created",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                c.clone(),
                "--out".into(),
                blocked_out.to_string_lossy().into(),
            ],
        ),
        (
            "unsafe run id",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                c.clone(),
                "--run-id".into(),
                "../evil".into(),
            ],
        ),
        (
            "existing run id",
            vec![
                "run".into(),
                "t".into(),
                "--corpus".into(),
                c.clone(),
                "--run-id".into(),
                "keep".into(),
            ],
        ),
        (
            "unknown source",
            vec![
                "run".into(),
                "t".into(),
                "--sources".into(),
                "gopher".into(),
            ],
        ),
        (
            "corpus source without a corpus",
            vec![
                "run".into(),
                "t".into(),
                "--sources".into(),
                "corpus".into(),
            ],
        ),
        (
            "keyed source without a key",
            vec!["run".into(), "t".into(), "--sources".into(), "brave".into()],
        ),
    ];
    for (why, args) in cases {
        let mut full = vec!["--state-dir".to_string(), s.clone()];
        full.extend(args);
        let refs: Vec<&str> = full.iter().map(String::as_str).collect();
        let output = deepr(h, &refs);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{why}: exit 2, got {:?}: {stderr}",
            output.status.code()
        );
        assert!(!stderr.contains("panicked"), "{why}: no panic: {stderr}");
        if why != "unknown flag" && why != "unknown depth" {
            assert_eq!(
                stderr.trim().lines().count(),
                1,
                "{why}: one-line error: {stderr}"
            );
        }
    }
    // Unwritable state dir.
    let output = deepr(
        h,
        &[
            "--state-dir",
            unwritable_state.to_str().expect("utf-8"),
            "run",
            "t",
            "--corpus",
            &c,
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(2),
        "unwritable state dir: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    assert_eq!(
        std::fs::read(h.join("good.json")).expect("json"),
        before,
        "the earlier run's report is untouched"
    );
    assert!(
        state.join("runs/keep/checkpoints.sled").exists(),
        "the earlier run's checkpoints are untouched"
    );
}

#[test]
fn default_out_is_a_slug_in_the_current_folder() {
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    let output = deepr(
        home.path(),
        &[
            "--quiet",
            "run",
            "Rollback journal basics?",
            "--depth",
            "quick",
            "--corpus",
            corpus.to_str().expect("utf-8"),
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(home.path().join("rollback-journal-basics.md").exists());
    assert!(home.path().join("rollback-journal-basics.json").exists());
    assert!(
        home.path().join("xdg-state/deepr/runs").exists(),
        "default state dir is the XDG state dir"
    );
}

/// The article reads as an answer: named headings (never the plan's question form), no
/// sentence twice in the body, every sentence citing claims that exist and were not
/// judged unsupported, and — the offline writer may not invent — a body holding at
/// least 90 % of the words of the distinct supported and partial claims.
fn article_reads_as_an_answer(report: &serde_json::Value, above: &str) {
    let article = &report["article"];
    let claims: std::collections::BTreeMap<&str, &serde_json::Value> = report["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .map(|c| (c["id"].as_str().expect("id"), c))
        .collect();
    let mut paragraphs: Vec<&serde_json::Value> = article["summary"]
        .as_array()
        .expect("summary")
        .iter()
        .collect();
    for section in article["sections"].as_array().expect("sections") {
        let heading = section["heading"].as_str().expect("heading");
        assert!(
            !heading
                .to_lowercase()
                .starts_with("what does the documentation say")
                && !heading.ends_with('?'),
            "{heading}"
        );
        assert!(
            above.contains(&format!(". {heading}\n")),
            "{heading} is shown"
        );
        paragraphs.extend(section["paragraphs"].as_array().expect("paragraphs"));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut body_words = 0;
    for sentence in paragraphs
        .iter()
        .flat_map(|p| p["sentences"].as_array().expect("sentences"))
    {
        let text = sentence["text"].as_str().expect("text");
        assert!(
            seen.insert(deepr_evidence::normalise(text)),
            "repeated: {text}"
        );
        body_words += text.split_whitespace().count();
        let cited = sentence["claims"].as_array().expect("claims");
        assert!(!cited.is_empty(), "{text} cites a claim");
        for id in cited {
            let claim = claims
                .get(id.as_str().expect("id"))
                .expect("a claim of the report");
            assert_ne!(claim["verdict"], "unsupported", "{text}");
        }
    }
    let mut distinct = std::collections::BTreeSet::new();
    let claim_words: usize = claims
        .values()
        .filter(|c| c["verdict"] == "supported" || c["verdict"] == "partial")
        .map(|c| c["text"].as_str().expect("text"))
        .filter(|t| distinct.insert(deepr_evidence::normalise(t)))
        .map(|t| t.split_whitespace().count())
        .sum();
    assert!(claim_words > 0);
    assert!(
        body_words * 10 >= claim_words * 9,
        "the body holds {body_words} of {claim_words} claim words"
    );
    assert!(!above
        .lines()
        .any(|l| l.starts_with('#') && l.contains("What does the documentation say")));
}
