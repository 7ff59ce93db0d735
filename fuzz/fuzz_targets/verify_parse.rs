//! What `deepr verify` parses — markdown footnotes, report.json, export bundles — on
//! any text: rows or a parse error, never a panic.
#![no_main]

use deepr_evidence::report::Report;
use deepr_evidence::verify::{json_rows, markdown_rows, Bundle};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for row in markdown_rows(text) {
        assert!(row.source.starts_with("[^"));
    }
    if let Ok(bundle) = serde_json::from_str::<Bundle>(text) {
        let _ = json_rows(&bundle.report);
    }
    if let Ok(report) = serde_json::from_str::<Report>(text) {
        let _ = json_rows(&report);
    }
});
