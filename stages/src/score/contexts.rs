//! What a candidate unit is read in: a prose sentence in its paragraph, a list item or
//! table row in its run of items or rows — each with the headings above it.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::terms::content_terms;
use deepr_orchestrator::ArchivedText;

use crate::units::is_fragment_at;

/// What each unit is read in: a prose sentence in its paragraph, a list item or table
/// row in its run of items or rows with the paragraph that leads into it ("The
/// following conditions apply:") — each with the headings above it. The words of that
/// context say what a unit is about when its own do not. Returned: each context's
/// words, and the context of the unit starting at each byte offset.
pub(super) fn unit_contexts(
    sha: &str,
    text: &ArchivedText,
    outline: &deepr_orchestrator::Outline,
    headings: &deepr_orchestrator::HeadingIndex<'_>,
    sentence_terms: &BTreeMap<(&str, u32), BTreeSet<String>>,
) -> (Vec<BTreeSet<String>>, BTreeMap<usize, usize>) {
    let mut contexts: Vec<BTreeSet<String>> = Vec::new();
    let mut context_of: BTreeMap<usize, usize> = BTreeMap::new();
    // The context of the current paragraph (by its start) or run of fragments.
    let mut paragraph: Option<(usize, usize)> = None;
    let mut run: Option<usize> = None;
    for sentence in text.sentences.iter() {
        // A heading ends the paragraph and the run before it (its words are in the
        // path of what follows).
        if outline.is_heading_at(sentence.start) {
            (paragraph, run) = (None, None);
            continue;
        }
        let block = block_start(&text.text, sentence.start);
        let fragment = is_fragment_at(&text.text, sentence.start, sentence.end);
        let current = match (fragment, run, paragraph) {
            (true, Some(context), _) => context,
            (false, _, Some((start, context))) if start == block => context,
            _ => {
                let headings_terms = headings
                    .path_at(sentence.start)
                    .iter()
                    .flat_map(|h| content_terms(h))
                    .collect();
                contexts.push(headings_terms);
                let context = contexts.len() - 1;
                if fragment {
                    run = Some(context);
                } else {
                    paragraph = Some((block, context));
                }
                context
            }
        };
        if !fragment {
            run = None;
        }
        if let (Some(terms), Some(words)) = (
            sentence_terms.get(&(sha, sentence.index)),
            contexts.get_mut(current),
        ) {
            words.extend(terms.iter().cloned());
        }
        context_of.insert(sentence.start, current);
    }
    (contexts, context_of)
}

/// Where the block (paragraph, list item, row) holding byte `at` starts.
fn block_start(text: &str, at: usize) -> usize {
    text.get(..at)
        .and_then(|before| before.rfind("\n\n"))
        .map_or(0, |i| i + 2)
}
