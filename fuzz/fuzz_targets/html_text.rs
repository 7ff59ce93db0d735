//! HTML, Markdown and plain text → a document (deepr-documents) on any bytes: an
//! error or a document, never a panic, within small limits.
#![no_main]

use deepr_documents::{read, Format, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_text_bytes: 1 << 20,
        max_blocks: 10_000,
        max_part_bytes: 1 << 22,
        max_unpacked_bytes: 1 << 23,
        max_nesting: 256,
    };
    for format in [Format::Html, Format::Markdown, Format::Text, Format::Csv] {
        let _ = read(data, format, &limits);
    }
});
