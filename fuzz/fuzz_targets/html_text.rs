//! HTML, Markdown and plain text → a document (deepr-documents) on any bytes: an
//! error or a document, never a panic, within small limits.
#![no_main]

use deepr_documents::{read, Format, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::tight();
    for format in [Format::Html, Format::Markdown, Format::Text, Format::Csv] {
        let _ = read(data, format, &limits);
    }
});
