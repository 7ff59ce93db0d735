//! What score's lexical pass works from and leaves: every fetched sentence's terms with
//! their document frequencies, and one candidate per sentence.

use std::collections::{BTreeMap, BTreeSet};

use deepr_orchestrator::ArchivedText;

use super::stems::score_terms;

/// Each sentence's terms (computed once: for the document frequencies and for scoring
/// the candidates), and each term's document frequency over the fetched sentences.
#[allow(clippy::type_complexity)]
pub(super) fn sentence_terms_of(
    texts: &BTreeMap<String, ArchivedText>,
) -> (
    BTreeMap<(&str, u32), BTreeSet<String>>,
    BTreeMap<String, usize>,
) {
    let sentence_terms: BTreeMap<(&str, u32), BTreeSet<String>> = texts
        .iter()
        .flat_map(|(sha, text)| {
            text.sentences.iter().filter_map(move |sentence| {
                let body = sentence.text(&text.text)?;
                Some((
                    (sha.as_str(), sentence.index),
                    score_terms(body).into_iter().collect(),
                ))
            })
        })
        .collect();
    let mut df: BTreeMap<String, usize> = BTreeMap::new();
    for terms in sentence_terms.values() {
        for term in terms {
            *df.entry(term.clone()).or_default() += 1;
        }
    }
    (sentence_terms, df)
}

/// Best first, a sentence quoted with its neighbour and the neighbour alone are one
/// candidate: every later candidate overlapping an earlier one's sentences goes.
pub(super) fn one_candidate_per_sentence(scored: &mut Vec<(f64, String, u32, Option<u32>)>) {
    let mut covered: BTreeSet<(String, u32)> = BTreeSet::new();
    scored.retain(|(_, sha, first, last)| {
        let sentences: Vec<u32> = (*first..=last.unwrap_or(*first)).collect();
        if sentences
            .iter()
            .any(|i| covered.contains(&(sha.clone(), *i)))
        {
            return false;
        }
        covered.extend(sentences.into_iter().map(|i| (sha.clone(), i)));
        true
    });
}
