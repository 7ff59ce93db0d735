//! `--format pdf` read back by a real PDF reader (poppler's `pdftotext` and `pdffonts`,
//! Debian's poppler-utils): every quote the report cites is in the PDF's text, its
//! headings and Run details are there, and every font is embedded. With CI=true a
//! missing poppler fails the test instead of skipping it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::process::Command;

use common::{deepr, fixture_corpus, stderr};

fn poppler(tool: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(tool).args(args).output().ok()?;
    assert!(
        output.status.success(),
        "{tool} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn one_spaced(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_pdf_report_holds_every_quote_as_text_in_embedded_fonts() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = home.path().join("report.md");
    let state = home.path().join("state");
    let output = deepr(
        home.path(),
        &["--quiet", "--state-dir", state.to_str().unwrap(), "run", "How does the rollback journal protect a transaction, and what is the default journal page size?", "--corpus", fixture_corpus().to_str().unwrap(), "--out", out.to_str().unwrap(), "--format", "pdf"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let pdf = home.path().join("report.pdf");
    let bytes = std::fs::read(&pdf).expect("report.pdf written");
    assert!(bytes.starts_with(b"%PDF-"), "a PDF");

    let pdf_arg = pdf.to_str().unwrap();
    let Some(text) = poppler("pdftotext", &[pdf_arg, "-"]) else {
        assert!(
            std::env::var("CI").map(|v| v != "true").unwrap_or(true),
            "CI=true: pdftotext is missing (apt-get install poppler-utils)"
        );
        eprintln!("skipped: no pdftotext");
        return;
    };
    let text = one_spaced(&text);
    let markdown = std::fs::read_to_string(&out).unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.with_extension("json")).unwrap()).unwrap();
    // Every quote the report shows (its footnotes), as text a reader can search.
    let mut shown = 0;
    for claim in report["claims"].as_array().unwrap() {
        for citation in claim["citations"].as_array().unwrap() {
            let quote = one_spaced(citation["quote"].as_str().unwrap());
            if !one_spaced(&markdown).contains(&quote) {
                continue;
            }
            shown += 1;
            assert!(text.contains(&quote), "the PDF lacks the quote {quote:?}");
        }
    }
    assert!(shown >= 3, "the report showed {shown} quotes");
    for heading in markdown.lines().filter_map(|l| l.strip_prefix("## ")) {
        assert!(
            text.contains(&one_spaced(heading)),
            "the PDF lacks the heading {heading:?}"
        );
    }
    assert!(text.contains("Run details") && text.contains("Run id:"));

    let fonts = poppler("pdffonts", &[pdf_arg]).expect("pdffonts beside pdftotext");
    let rows: Vec<&str> = fonts.lines().skip(2).collect();
    assert!(!rows.is_empty(), "{fonts}");
    for row in rows {
        let columns: Vec<&str> = row.split_whitespace().collect();
        // name type… encoding emb sub uni object ID: emb is the fifth from the end.
        assert_eq!(
            columns[columns.len() - 5],
            "yes",
            "a font not embedded: {row}"
        );
    }
}
