//! HTML (and markdown, and plain text) → archived text on any bytes: an error or a
//! text, never a panic.
#![no_main]

use deepr_evidence::{extract_text, DocKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for kind in [DocKind::Html, DocKind::Markdown, DocKind::Text] {
        let _ = extract_text(data, kind);
    }
});
