//! Mail and chat (deepr-documents) on any bytes: `.eml` and `.mbox` (mail-parser and
//! the mbox splitter), Slack exports (a zip), Mattermost exports (JSONL) and plain
//! text that carries mail or chat — every part an error or a document, never a panic,
//! within small limits.
#![no_main]

use deepr_documents::{read_parts, Format, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::tight();
    for format in [
        Format::Eml,
        Format::Mbox,
        Format::Slack,
        Format::Mattermost,
        Format::Text,
    ] {
        if let Ok(parts) = read_parts(data, format, &limits) {
            for part in parts.iter().filter_map(|p| p.read.as_ref().ok()) {
                assert!(part.marks.iter().all(|m| part.text.is_char_boundary(m.at)));
                assert!(part.quoted.iter().chain(&part.units).all(|(s, e)| s <= e && *e <= part.text.len()));
            }
        }
    }
});
