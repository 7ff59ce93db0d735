//! A fictional haulier's mail and chat (test_data/mailshare: Tidewater Cartage's new
//! depot) read end to end offline: `.eml` messages in quoted-printable and base64
//! with a PDF, a forwarded message and a CSV attached, an mbox thread with quoted
//! replies and signatures, a Slack and a Mattermost export, a plain-text mail dump, a
//! narrow-column PDF memo at 1.5 lines and a DOCX whose metadata date (2013, a
//! template's) its text contradicts, a cost tracker whose Q2 row an email contradicts —
//! plus hostile files planted here (a MIME nest, a
//! huge base64 part, a broken boundary, an Outlook `.msg`). Every file is read or
//! listed with its reason, every fact is quoted, no quote holds a header or encoded
//! text, attachments are sources of their own, mail sources show sender and date,
//! and the report verifies.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::path::{Path, PathBuf};

use common::{deepr, root, stderr};
use deepr_documents::writers::share_files;
use serde_json::Value;

/// The share's sources under `test_data/mailshare/docs`, written under `dir`: how many.
fn generate(dir: &Path) -> usize {
    let base = root().join("test_data/mailshare/docs");
    let mut found = Vec::new();
    let mut stack = vec![base.clone()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("sources").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "txt") {
                let rel = path
                    .strip_prefix(&base)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string();
                found.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    found.sort();
    let files = share_files(&found).expect("sources render");
    for (rel, bytes) in &files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
    }
    files.len()
}

/// Hostile mail planted beside the share: (path, what its listing must say, if it is
/// listed as not read).
fn plant_hostile(dir: &Path) -> Vec<(&'static str, Option<&'static str>)> {
    let write = |rel: &str, bytes: Vec<u8>| std::fs::write(dir.join(rel), bytes).unwrap();
    let mut nest = String::from("From: a@x.example\r\nSubject: Nest\r\n");
    for n in 0..3_000 {
        nest.push_str(&format!(
            "Content-Type: multipart/mixed; boundary=\"n{n}\"\r\n\r\n--n{n}\r\n"
        ));
    }
    nest.push_str("Content-Type: text/plain\r\n\r\nThe innermost part.\r\n");
    write("mail/mime-nest.eml", nest.into_bytes());
    let huge = format!(
        "From: a@x.example\r\nSubject: Scan\r\nContent-Type: multipart/mixed; boundary=\"g\"\r\n\r\n--g\r\nContent-Type: text/plain\r\n\r\nThe scan is attached.\r\n--g\r\nContent-Type: application/pdf; name=\"scan.pdf\"\r\nContent-Disposition: attachment; filename=\"scan.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n--g--\r\n",
        "QUFB\r\n".repeat(2_500_000)
    );
    write("mail/scan-base64.eml", huge.into_bytes());
    write(
        "mail/broken-boundary.eml",
        b"From: a@x.example\r\nSubject: Broken\r\nContent-Type: multipart/mixed; boundary=\"never\"\r\n\r\n--other\r\n\r\nA body under a boundary that never opens.\r\n".to_vec(),
    );
    write(
        "mail/old-thread.msg",
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 an Outlook message".to_vec(),
    );
    vec![
        ("mail/mime-nest.eml", None),
        ("mail/scan-base64.eml", None),
        ("mail/scan-base64.eml#scan.pdf", Some("malformed pdf")),
        ("mail/broken-boundary.eml", None),
        // The body under the boundary that never opens, a part of its own: plain text.
        ("mail/broken-boundary.eml#attachment-1", None),
        ("mail/old-thread.msg", Some("save it as .eml")),
    ]
}

fn bench_facts(home: &Path, share: &Path) -> PathBuf {
    let out = home.join("bench");
    let facts = root().join("test_data/mailshare/facts.toml");
    let output = deepr(
        home,
        &[
            "--quiet",
            "bench",
            "--facts",
            facts.to_str().unwrap(),
            "--corpus",
            share.to_str().unwrap(),
            "--strategies",
            "linear",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    out
}

/// What a quote must never hold: header lines, MIME and transfer-encoding text.
const NOT_EVIDENCE: &[&str] = &[
    "From:",
    "Subject:",
    "Email ID",
    "Content-Type",
    "Content-Transfer-Encoding",
    "=E2",
    "=20",
    "boundary=",
    "wrote:",
    "Head of Operations",
];

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn mail_chat_and_attachments_are_read_and_quoted_whole() {
    let home = tempfile::tempdir().unwrap();
    let share = home.path().join("mailshare");
    let generated = generate(&share);
    assert_eq!(generated, 10);
    let hostile = plant_hostile(&share);

    // `doctor --corpus` lists the documents a file holds and every one not read.
    let state = home.path().join("doctor-state");
    let doctor = deepr(
        home.path(),
        &[
            "--state-dir",
            state.to_str().unwrap(),
            "doctor",
            "--corpus",
            share.to_str().unwrap(),
        ],
    );
    let listing = String::from_utf8_lossy(&doctor.stdout).to_string();
    assert!(
        listing.contains("read: mail/fit-out-budget.eml#fit-out-budget-note.pdf"),
        "{listing}"
    );
    assert!(listing.contains("read: chat/workspace.zip#depot-project/2026-03-10"));
    assert!(listing.contains("read: mail/depot-thread.mbox#message-3"));

    let out = bench_facts(home.path(), &share);
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("reports/t01-linear.json")).unwrap())
            .unwrap();

    // Every file read or listed with its reason; nothing skipped silently.
    let files = &report["corpus_files"];
    let skipped: Vec<(String, String)> = files["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().into(),
                s["reason"].as_str().unwrap().into(),
            )
        })
        .collect();
    for (path, reason) in &hostile {
        match reason {
            Some(reason) => {
                let (_, got) = skipped
                    .iter()
                    .find(|(p, _)| p == path)
                    .unwrap_or_else(|| panic!("{path} not listed: {skipped:?}"));
                assert!(got.contains(reason), "{path}: {got}");
            }
            None => assert!(
                !skipped.iter().any(|(p, _)| p == path),
                "{path} should be read: {skipped:?}"
            ),
        }
    }
    let listed = hostile.iter().filter(|(_, r)| r.is_some()).count();
    assert_eq!(skipped.len(), listed, "{skipped:?}");
    // The share's 10 files and the 3 hostile messages that still have a text.
    assert_eq!(files["read"].as_u64(), Some(13), "{files}");
    assert!(files["documents"].as_u64().unwrap() >= 19, "{files}");

    // Every fact quoted.
    let bench: Value =
        serde_json::from_slice(&std::fs::read(out.join("bench.json")).unwrap()).unwrap();
    let summary = &bench["facts"]["strategies"][0];
    eprintln!("mail share fact coverage: {summary}");
    assert_eq!(
        summary["coverage"].as_f64(),
        Some(1.0),
        "{:#}",
        bench["facts"]["checkpoints"]
    );

    // Quotes: no header or transfer-encoding text; the memo's wrapped sentence and the
    // two-sentence chat message whole.
    let quotes: Vec<String> = report["claims"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["citations"].as_array().cloned().unwrap_or_default())
        .filter_map(|q| q["quote"].as_str().map(str::to_string))
        .collect();
    assert!(!quotes.is_empty());
    for quote in &quotes {
        for bad in NOT_EVIDENCE {
            assert!(!quote.contains(bad), "{bad:?} in a quote: {quote}");
        }
    }
    let markdown = std::fs::read_to_string(out.join("reports/t01-linear.md")).unwrap();
    assert!(markdown.contains("\"The Harbor Street yard has space for 24 trailers, and its loading dock has six doors, two of which are refrigerated for the chilled-food customers.\""), "{markdown}");
    assert!(markdown.contains(
        "\"Great. Harbor Street gives us 24 trailer spots. Pier 9 only had 18, so that's 6 more.\""
    ));

    // Attachments are sources of their own; mail sources show sender and date; the
    // DOCX is dated by its text, with the reason recorded.
    let sources = report["sources"].as_array().unwrap();
    let source = |locator: &str| {
        sources
            .iter()
            .find(|s| s["locator"] == locator)
            .unwrap_or_else(|| panic!("no source {locator}: {sources:#?}"))
    };
    source("mail/fit-out-budget.eml#fit-out-budget-note.pdf");
    source("mail/fit-out-budget.eml#staffing-plan.eml#harbor-street-roster.csv");
    let decision = source("mail/yard-decision.eml");
    assert_eq!(
        decision["author"],
        "Dana Ruiz <dana.ruiz@tidewater-cartage.example>"
    );
    assert_eq!(decision["date"], "2026-03-04");
    assert!(markdown
        .contains("(from Dana Ruiz &lt;dana.ruiz@tidewater-cartage.example&gt;, 2026-03-04,"));
    let brief = source("ops/depot-operations-brief.docx");
    assert_eq!(brief["date"], "2026-03");
    assert!(
        brief["date_basis"]
            .as_str()
            .unwrap_or("")
            .contains("2013-12-23"),
        "{brief}"
    );

    // A tracker row and an email give one quarter's fit-out spend differently.
    let conflicts = report["conflicts"].as_array().unwrap();
    assert!(
        conflicts.iter().any(|c| {
            let summary = c["summary"].as_str().unwrap_or("");
            summary.contains("$181000") && summary.contains("$240,000")
        }),
        "{conflicts:#?}"
    );

    // The brief names a competitor no document mentions: the reader is told.
    let gaps: Vec<&str> = report["gaps"]
        .as_array()
        .map(|g| g.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        gaps.iter()
            .any(|g| g.starts_with("No document read mentions Keldermans Logistics")),
        "{gaps:?}"
    );
    assert!(markdown.contains("- No document read mentions Keldermans Logistics"));

    // `deepr verify` checks the quotes from mail, chat and attachments.
    let verified = deepr(
        home.path(),
        &[
            "verify",
            out.join("reports/t01-linear.md").to_str().unwrap(),
            "--state-dir",
            out.join("state").to_str().unwrap(),
        ],
    );
    let said = String::from_utf8_lossy(&verified.stdout);
    assert!(verified.status.success(), "{said}");
    assert!(said.contains("PASS"), "{said}");
}
