//! The normaliser and the sentence splitter on any text: no panic, sentences are exact
//! in-bounds slices on character boundaries, in order, and normalising is idempotent.
#![no_main]

use deepr_evidence::{normalise, split_sentences};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let once = normalise(text);
    assert_eq!(normalise(&once), once, "normalise is idempotent");
    let mut previous_end = 0;
    for (i, sentence) in split_sentences(text).iter().enumerate() {
        assert_eq!(sentence.index as usize, i);
        assert!(sentence.start >= previous_end && sentence.start <= sentence.end);
        assert!(
            sentence.text(text).is_some(),
            "a sentence is a slice of the text"
        );
        previous_end = sentence.end;
    }
});
