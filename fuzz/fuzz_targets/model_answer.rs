//! A model's answer is untrusted: finding its JSON, reading it as an extract or judge
//! answer and validating it never panics, and a valid extract answer only cites IDs
//! that were shown.
#![no_main]

use std::collections::BTreeSet;

use deepr_stages::llm::parse_json_object;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = parse_json_object(text) else {
        return;
    };
    let shown: BTreeSet<String> = ["c1", "c2", "c3"].iter().map(|s| s.to_string()).collect();
    if let Ok(answer) = serde_json::from_value::<deepr_stages::extract::Answer>(value.clone()) {
        if deepr_stages::extract::validate(&answer, &shown, 3).is_ok() {
            for claim in &answer.claims {
                assert!(claim.sentence_ids.iter().all(|id| shown.contains(id)));
            }
        }
    }
    if let Ok(answer) = serde_json::from_value::<deepr_stages::judge::Answer>(value) {
        let _ = deepr_stages::judge::validate(&answer, &shown);
    }
});
