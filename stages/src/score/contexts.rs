//! What a list item or table row is read in: its run of items or rows, with the
//! headings above it. A prose sentence speaks for itself.

use std::collections::{BTreeMap, BTreeSet};

use super::stems::score_terms;
use deepr_orchestrator::ArchivedText;

use crate::units::is_fragment_at;

/// Each run of list items or table rows (fragments one after another, no prose
/// sentence or heading between) with the headings above it: its words say what a row
/// is about when its own do not ("Unrestricted: 47 days" beside "Total reserves: 59
/// days"). Returned: each run's words, and the run of the fragment starting at each byte
/// offset (prose sentences have none).
pub(super) fn unit_contexts(
    sha: &str,
    text: &ArchivedText,
    outline: &deepr_orchestrator::Outline,
    headings: &deepr_orchestrator::HeadingIndex<'_>,
    sentence_terms: &BTreeMap<(&str, u32), BTreeSet<String>>,
) -> (Vec<BTreeSet<String>>, BTreeMap<usize, usize>) {
    let mut runs: Vec<BTreeSet<String>> = Vec::new();
    let mut run_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut current: Option<usize> = None;
    for sentence in text.sentences.iter() {
        // A heading or a prose sentence ends the run before it.
        if outline.is_heading_at(sentence.start)
            || !is_fragment_at(&text.text, sentence.start, sentence.end)
        {
            current = None;
            continue;
        }
        let run = *current.get_or_insert_with(|| {
            runs.push(
                headings
                    .path_at(sentence.start)
                    .iter()
                    .flat_map(|h| score_terms(h))
                    .collect(),
            );
            runs.len() - 1
        });
        if let (Some(terms), Some(words)) = (
            sentence_terms.get(&(sha, sentence.index)),
            runs.get_mut(run),
        ) {
            words.extend(terms.iter().cloned());
        }
        run_of.insert(sentence.start, run);
    }
    (runs, run_of)
}

/// Headings under which a document sums itself up.
const SUMMARY_HEADINGS: [&str; 9] = [
    "summary",
    "executive summary",
    "overview",
    "highlights",
    "key points",
    "key findings",
    "at a glance",
    "in brief",
    "headlines",
];

/// Whether the innermost heading over a unit names a summary ("Summary", "Executive
/// summary", "1. Overview", "Highlights of the quarter").
pub(super) fn under_summary(path: &[&str]) -> bool {
    let Some(heading) = path.last() else {
        return false;
    };
    let heading = heading
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
        .to_lowercase();
    SUMMARY_HEADINGS
        .iter()
        .any(|s| heading == *s || heading.starts_with(&format!("{s} ")))
}

/// What a document's summary is read in: the document's title (a summary speaks for
/// the whole document: "the Columbus depot cut repair turnaround" under the "Summary"
/// of the "Operations Review" answers a question on operational performance).
pub(super) fn summary_context(title: &str) -> BTreeSet<String> {
    score_terms(title).into_iter().collect()
}
