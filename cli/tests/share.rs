//! A fictional company's document share (test_data/share: 27 files across department
//! folders — PDF, DOCX, PPTX, XLSX, CSV, HTML and Markdown generated here from their
//! text sources — with distractors and stale archived vintages) read end to end, with
//! one file planted for each reason a file is not read. The fact bench runs on it
//! offline: every format is read and quoted verbatim, every unread file is listed with
//! its reason, and the fact coverage and stale values stated are the figures the
//! benches README records (floors here catch a regression).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::path::{Path, PathBuf};

use common::{deepr, root, stderr};
use deepr_documents::writers::{blocks, share_files, write_pdf, Meta};
use serde_json::Value;

/// The share's text sources, by path relative to `test_data/share/docs`.
fn sources(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("share sources")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, base, out);
        } else if path.extension().is_some_and(|e| e == "txt") {
            let rel = path
                .strip_prefix(base)
                .expect("under base")
                .to_str()
                .expect("utf-8")
                .to_string();
            out.push((rel, std::fs::read_to_string(&path).expect("source")));
        }
    }
}

/// The generated share under `dir`, plus one planted file per reason a file is not
/// read: returns (files generated, planted path → the reason's words).
fn make_share(dir: &Path, outside: &Path) -> (usize, Vec<(&'static str, &'static str)>) {
    let generated = generate("test_data/share/docs", dir);
    let write = |rel: &str, bytes: &[u8]| std::fs::write(dir.join(rel), bytes).expect("plant");
    // A password-protected Office file is an OLE container, not a zip.
    write(
        "finance/board-pack-protected.docx",
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\0\0protected",
    );
    let memo = std::fs::read(dir.join("finance/q1-2026-cfo-memo.docx")).expect("memo");
    write("finance/cfo-memo-copy.docx", &memo[..memo.len() / 2]);
    let scan = write_pdf(&Meta::default(), &[blocks("")]).expect("pdf");
    write("ops/site-survey-scan.pdf", &scan);
    write("marketing/logo.png", b"\x89PNG\r\n\x1a\n");
    std::fs::write(
        outside,
        "# Vault\n\nThe vault code is 4471 and must never be quoted.\n",
    )
    .expect("outside");
    std::os::unix::fs::symlink(outside, dir.join("it/vault-notes.md")).expect("symlink");
    let big = std::fs::File::create(dir.join("ops/lidar-scan-archive.pdf")).expect("big");
    big.set_len(21 * 1024 * 1024).expect("sparse file");
    let planted = vec![
        ("finance/board-pack-protected.docx", "encrypted"),
        ("finance/cfo-memo-copy.docx", "malformed docx"),
        ("ops/site-survey-scan.pdf", "no text layer"),
        ("marketing/logo.png", "unsupported file type"),
        ("it/vault-notes.md", "outside the corpus folder"),
        ("ops/lidar-scan-archive.pdf", "too large"),
    ];
    (generated, planted)
}

/// `deepr bench --facts FACTS` (relative to the repository) on `share`, offline, linear:
/// the bench's folder.
fn bench_facts(home: &Path, facts: &str, share: &Path) -> PathBuf {
    let out = home.join("bench");
    let facts = root().join(facts);
    let output = deepr(
        home,
        &[
            "--quiet",
            "bench",
            "--facts",
            facts.to_str().expect("utf-8"),
            "--corpus",
            share.to_str().expect("utf-8"),
            "--strategies",
            "linear",
            "--out",
            out.to_str().expect("utf-8"),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    out
}

/// The bench's fact figures: the linear strategy's summary and every checkpoint's row.
fn fact_figures(out: &Path) -> (Value, Vec<Value>) {
    let bench: Value =
        serde_json::from_slice(&std::fs::read(out.join("bench.json")).expect("bench.json"))
            .expect("json");
    let summary = bench["facts"]["strategies"][0].clone();
    let checkpoints = bench["facts"]["checkpoints"]
        .as_array()
        .expect("rows")
        .clone();
    (summary, checkpoints)
}

/// The bench's linear run's `report.json`.
fn linear_report(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("reports/t01-linear.json")).expect("report"))
        .expect("json")
}

/// `deepr verify` passes the bench's linear report against its state dir.
fn assert_report_verifies(home: &Path, out: &Path) {
    let verified = deepr(
        home,
        &[
            "verify",
            out.join("reports/t01-linear.md").to_str().unwrap(),
            "--state-dir",
            out.join("state").to_str().unwrap(),
        ],
    );
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
}

/// The files of the share whose text sources are under `sources_dir` (relative to the
/// repository), written under `dir`: how many.
fn generate(sources_dir: &str, dir: &Path) -> usize {
    let base = root().join(sources_dir);
    let mut found = Vec::new();
    sources(&base, &base, &mut found);
    let files = share_files(&found).expect("sources render");
    for (rel, bytes) in &files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, bytes).expect("write");
    }
    files.len()
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn the_share_is_read_in_every_format_and_its_facts_are_benched() {
    let home = tempfile::tempdir().expect("tempdir");
    let share = home.path().join("share");
    let (generated, planted) = make_share(&share, &home.path().join("outside-secret.md"));
    assert!(generated >= 25, "{generated} files");
    let out = bench_facts(home.path(), "test_data/share/facts.toml", &share);

    // Every planted file is listed with its reason; every generated file was read.
    let report_json = linear_report(&out);
    let files = &report_json["corpus_files"];
    assert_eq!(files["read"].as_u64(), Some(generated as u64), "{files}");
    let skipped: Vec<(String, String)> = files["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(skipped.len(), planted.len(), "{skipped:?}");
    for (path, reason) in &planted {
        let (_, got) = skipped
            .iter()
            .find(|(p, _)| p == path)
            .unwrap_or_else(|| panic!("{path} not listed: {skipped:?}"));
        assert!(got.contains(reason), "{path}: {got}");
    }
    let markdown = std::fs::read_to_string(out.join("reports/t01-linear.md")).expect("report.md");
    assert!(markdown.contains(&format!(
        "Corpus: {generated} files read, {} not read.",
        planted.len()
    )));
    assert!(
        !markdown.contains("4471"),
        "a file outside the corpus was quoted"
    );

    // The brief: a short title, the brief quoted and parsed in Run details; every part
    // has a section whose heading names its subject; no heading is an instruction.
    let brief_text = report_json["topic"].as_str().expect("topic");
    let brief = deepr_tasks::brief::parse_brief(brief_text);
    assert_eq!(brief.parts.len(), 4, "{:?}", brief.parts);
    assert!(
        markdown.starts_with("# Research brief: Kestrelmoor Robotics\n"),
        "{}",
        &markdown[..200]
    );
    assert!(markdown.contains("- Brief parts: (1) the company's funding history"));
    assert!(markdown.contains("- Writing instructions: "));
    let headings: Vec<String> = report_json["article"]["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| s["heading"].as_str().unwrap_or("").to_string())
        .collect();
    let uncovered = deepr_tasks::decompose::uncovered_parts(&brief.parts, &headings);
    assert!(
        uncovered.is_empty(),
        "parts without a section: {uncovered:?} in {headings:?}"
    );
    for heading in &headings {
        assert!(
            !brief
                .instructions
                .iter()
                .any(|i| i.contains(heading.as_str())),
            "a heading copies an instruction: {heading}"
        );
        assert!(
            heading.chars().count() <= 100,
            "a brief fragment as heading: {heading}"
        );
    }

    // Quotes come from every binary format, and every one verifies.
    let sources: Vec<&str> = report_json["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .map(|s| s["locator"].as_str().unwrap())
        .collect();
    for ext in [".pdf", ".docx", ".pptx", ".xlsx"] {
        assert!(
            sources.iter().any(|s| s.ends_with(ext)),
            "no {ext} source: {sources:?}"
        );
    }
    assert_report_verifies(home.path(), &out);
    assert_triage(
        "share",
        &linear_report(&out),
        "test_data/share",
        TRIAGE_FLOORS[0],
    );

    // The fact figures: one row per checkpoint, coverage above the recorded floor,
    // no stale value stated.
    let (summary, checkpoints) = fact_figures(&out);
    let (summary, checkpoints) = (&summary, &checkpoints);
    assert_eq!(
        checkpoints.len() as u64,
        summary["checkpoints"].as_u64().unwrap()
    );
    eprintln!("fact coverage: {summary}");
    assert_eq!(summary["stale_stated"].as_u64(), Some(0), "{checkpoints:?}");
    // Every fact once: the key values stated in more than one body section.
    let restated = summary["restated"].as_u64().expect("restated");
    assert!(
        restated <= RESTATED_CEILING,
        "{restated} checkpoints' values are stated in 2+ sections: {checkpoints:#?}"
    );
    let coverage = summary["coverage"].as_f64().unwrap();
    assert!(
        coverage >= COVERAGE_FLOOR,
        "coverage {coverage} fell below {COVERAGE_FLOOR}: {checkpoints:#?}"
    );
    // Every missing value says where the run lost it, and the stages are the run's own:
    // the planted facts are all in the corpus's text, so none is "unread".
    let mut lost = 0;
    for row in checkpoints {
        let missing = row["missing"].as_array().expect("missing");
        let traced = row["lost"].as_array().map_or(0, Vec::len);
        assert_eq!(traced, missing.len(), "{row}");
        for entry in row["lost"].as_array().into_iter().flatten() {
            assert_ne!(entry[1], "unread", "{row}");
            lost += 1;
        }
    }
    // A run that found every fact traces nothing (the other shares' test exercises the
    // trail); one that missed some says where.
    assert_eq!(lost == 0, coverage >= 1.0, "{checkpoints:#?}");
    let markdown = std::fs::read_to_string(out.join("bench.md")).expect("bench.md");
    assert_eq!(
        markdown.contains("Missing values by the furthest stage that held them"),
        lost > 0,
        "{markdown}"
    );
}

/// The other shares (`test_data/share2`, `share3`, `share4`: a transit agency's, a dairy
/// co-operative's and a software company's, each written by someone who never saw
/// deepr's scoring, each with a brief in its own style): every file read, every fact
/// value in the corpus's text (the facts files spell them as the documents do), no
/// stale value stated, the report verifies, and coverage above the share's floor.
#[test]
fn the_other_shares_are_read_whole_and_their_facts_are_benched() {
    // Where the runs lost what they missed: the trail must be exercised.
    let (mut lost, mut traced_in_markdown) = (0, false);
    for (name, floor) in OTHER_SHARES {
        let home = tempfile::tempdir().expect("tempdir");
        let share = home.path().join(name);
        let generated = generate(&format!("test_data/{name}/docs"), &share);
        assert!(generated >= 25, "{name}: {generated} files");
        let out = bench_facts(home.path(), &format!("test_data/{name}/facts.toml"), &share);
        let report = linear_report(&out);
        let files = &report["corpus_files"];
        assert_eq!(
            files["read"].as_u64(),
            Some(generated as u64),
            "{name}: {files}"
        );
        assert_eq!(
            files["skipped"].as_array().map_or(0, Vec::len),
            0,
            "{name}: {files}"
        );
        assert_report_verifies(home.path(), &out);
        let floors = TRIAGE_FLOORS[OTHER_SHARES.iter().position(|(n, _)| n == &name).unwrap() + 1];
        assert_triage(name, &report, &format!("test_data/{name}"), floors);
        let (summary, checkpoints) = fact_figures(&out);
        eprintln!("{name}'s fact coverage: {summary}");
        assert_eq!(
            summary["stale_stated"].as_u64(),
            Some(0),
            "{name}: {checkpoints:?}"
        );
        for row in &checkpoints {
            for entry in row["lost"].as_array().into_iter().flatten() {
                assert_ne!(
                    entry[1], "unread",
                    "{name}: a value not in any document: {row}"
                );
                lost += 1;
            }
        }
        let markdown = std::fs::read_to_string(out.join("bench.md")).expect("bench.md");
        traced_in_markdown |=
            markdown.contains("Missing values by the furthest stage that held them");
        let coverage = summary["coverage"].as_f64().unwrap();
        assert!(
            coverage >= floor,
            "{name}: coverage {coverage} fell below {floor}: {checkpoints:#?}"
        );
    }
    assert!(
        lost > 0 && traced_in_markdown,
        "the offline runs miss some facts: the trail is exercised"
    );
}

/// The share's sources whose header says `vintage: distractor`, as corpus paths.
fn distractors(share_dir: &str) -> Vec<String> {
    let base = root().join(share_dir).join("docs");
    let mut found = Vec::new();
    sources(&base, &base, &mut found);
    found
        .into_iter()
        .filter(|(_, text)| text.contains("\nvintage: distractor"))
        .map(|(rel, _)| rel.trim_end_matches(".txt").to_string())
        .collect()
}

/// Triage on a share: no document a fact is stated in is judged off-topic (the error
/// that loses facts), the labelled distractors a run saw are judged off-topic at least
/// `floor.0` of the time, and at most `floor.1` body paragraphs cite a distractor.
fn assert_triage(name: &str, report: &Value, share_dir: &str, floor: (f64, usize)) {
    let facts: toml::Value = toml::from_str(
        &std::fs::read_to_string(root().join(share_dir).join("facts.toml")).unwrap(),
    )
    .unwrap();
    let fact_docs: Vec<&str> = facts["checkpoint"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.get("where")?.as_str())
        .collect();
    let distractors = distractors(share_dir);
    let sources = report["sources"].as_array().unwrap();
    let locator_of = |id: &str| {
        sources
            .iter()
            .find(|s| s["id"] == id)
            .and_then(|s| s["locator"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let off_topic: Vec<&str> = sources
        .iter()
        .filter(|s| s.get("off_topic").is_some())
        .filter_map(|s| s["locator"].as_str())
        .collect();
    let lost: Vec<&&str> = off_topic.iter().filter(|l| fact_docs.contains(l)).collect();
    assert!(
        lost.is_empty(),
        "{name}: fact documents judged off-topic: {lost:?}"
    );
    let seen: Vec<&str> = sources
        .iter()
        .filter_map(|s| s["locator"].as_str())
        .filter(|l| distractors.iter().any(|d| d == l))
        .collect();
    let caught = seen.iter().filter(|l| off_topic.contains(l)).count();
    let claims = report["claims"].as_array().unwrap();
    let paragraphs = report["article"]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["paragraphs"].as_array().cloned().unwrap_or_default())
        .filter(|p| {
            p["sentences"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|sentence| {
                    sentence["claims"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|id| {
                            claims.iter().filter(|c| c["id"] == *id).any(|c| {
                                c["citations"]
                                    .as_array()
                                    .into_iter()
                                    .flatten()
                                    .any(|citation| {
                                        let locator =
                                            locator_of(citation["source"].as_str().unwrap_or(""));
                                        distractors.contains(&locator)
                                    })
                            })
                        })
                })
        })
        .count();
    eprintln!(
        "{name} triage: {} of {} distractors seen judged off-topic; {} fact documents judged off-topic; {paragraphs} body paragraphs cite a distractor",
        caught,
        seen.len(),
        lost.len()
    );
    let rate = caught as f64 / seen.len().max(1) as f64;
    assert!(
        rate >= floor.0,
        "{name}: distractors caught {rate} < {}",
        floor.0
    );
    assert!(
        paragraphs <= floor.1,
        "{name}: {paragraphs} paragraphs cite a distractor (at most {})",
        floor.1
    );
}

/// Triage floors per share (share, share2, share3, share4): the share of distractors
/// seen that are judged off-topic, and the most body paragraphs citing one (measured
/// 2026-12-04, session 18: 3/3 · 5/5 · 5/5 · 6/9 caught; 0 · 0 · 0 · 5 paragraphs; before
/// triage 4 · 4 · 6 · 10 paragraphs).
const TRIAGE_FLOORS: [(f64, usize); 4] = [(1.0, 0), (0.8, 1), (0.8, 1), (0.6, 5)];

/// Each other share and its floor: the offline coverage at standard depth measured last
/// (2026-12-05, session 26: 88 %, 83 %, 95 %) less a margin of about eight points.
const OTHER_SHARES: [(&str, f64); 3] = [("share2", 0.8), ("share3", 0.75), ("share4", 0.85)];

/// The first share's floor at standard depth, offline, with no stale value (measured
/// last: 100 %, 2026-12-05, session 26; the target is 90 %). A change that reads
/// or plans worse fails here.
const COVERAGE_FLOOR: f64 = 0.9;

/// The first share's ceiling on checkpoints with a key value in two or more body
/// sections, offline (measured 2026-12-05, session 29: 4; the offline writer leaves out
/// a claim only when every figure it states an earlier section states).
const RESTATED_CEILING: u64 = 4;
