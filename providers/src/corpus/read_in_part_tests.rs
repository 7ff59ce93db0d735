//! Files past the limits, through a whole corpus open: a 60 MB log read in part (its
//! first 16 MB from disk), a CSV of more rows than the row limit keeping its first rows;
//! each listed with what was read, archived as read, and reused as read.

use deepr_checkpoints::FileArchive;
use deepr_orchestrator::TextArchive;

use super::*;

/// The archived text of document `key`.
fn archived(index: &CorpusIndex, archive: &FileArchive, key: &str) -> String {
    let meta = index.doc(key).expect("indexed");
    archive
        .get(&meta.content_sha256)
        .expect("archived")
        .text
        .to_string()
}

#[test]
fn a_log_past_the_size_limit_is_read_in_part_and_a_csv_past_the_row_limit_keeps_its_first_rows() {
    let corpus = tempfile::tempdir().expect("tempdir");
    let state = tempfile::tempdir().expect("tempdir");
    let first = "2026-03-04 06:00:00 yard: the Harbor Street yard opened with 24 trailer bays\n";
    let mut log = String::with_capacity(61 << 20);
    log.push_str(first);
    let mut n = 0u64;
    while log.len() < 60 << 20 {
        n += 1;
        log.push_str(&format!(
            "2026-03-04 06:{:02}:{:02} gate: trailer {n} checked in at bay {}\n",
            n / 60 % 60,
            n % 60,
            n % 24 + 1
        ));
    }
    std::fs::write(corpus.path().join("yard.log"), &log).expect("log");
    let mut csv = String::from("Bay,Trailer,Length\n");
    for n in 1..400_000 {
        csv.push_str(&format!("{},Reefer {n},53 ft\n", n % 24 + 1));
    }
    std::fs::write(corpus.path().join("bays.csv"), &csv).expect("csv");
    let archive = FileArchive::open(state.path()).expect("archive");
    let (index, report) = CorpusIndex::open(corpus.path(), state.path(), &archive).expect("open");
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(
        report.partial,
        [
            (
                "bays.csv".to_string(),
                "first 200,000 of 400,000 rows".to_string()
            ),
            ("yard.log".to_string(), "first 16 MB of 60 MB".to_string()),
        ]
    );
    let text = archived(&index, &archive, "yard.log");
    assert!(text.starts_with(first.trim()), "{}", &text[..200]);
    // A log's lines with no blank line between them are one paragraph: its lines joined.
    assert!(text.len() <= 16 << 20);
    assert_eq!(text[..1000], log[..1000].replace('\n', " "));
    let rows = archived(&index, &archive, "bays.csv");
    assert!(rows.contains("Trailer: Reefer 199999 ·") && !rows.contains("Reefer 200000 "));
    let hits = index.search("Harbor Street yard bays", 5).expect("search");
    assert_eq!(hits.first().map(|h| h.doc_key.as_str()), Some("yard.log"));
    // Reopened unchanged: reused, listed again, the same text.
    drop(index);
    let (again, report) = CorpusIndex::open(corpus.path(), state.path(), &archive).expect("reopen");
    assert_eq!(report.reused, ["bays.csv", "yard.log"]);
    assert_eq!(report.partial.len(), 2, "{:?}", report.partial);
    assert_eq!(archived(&again, &archive, "yard.log"), text);
}
