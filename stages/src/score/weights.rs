//! How a unit is weighed: the question's term weights it matches (its own terms in
//! full, its run's and headings' at half), an exact term's bonus, a figure's bonus, and
//! the factors of its source (score, stale or draft, a table's total row, a pointer).

use std::collections::{BTreeMap, BTreeSet};

use crate::rerank::round4;
use crate::types::ScoredSource;
use crate::units::{is_summary_row, pointer_penalty, states_a_figure};

/// Weight of a question term found only in the run of items or rows a unit stands in
/// or the headings above it.
pub(super) const SECTION_TERM_WEIGHT: f64 = 0.5;
/// Weight factor of a table's total row (its first cell "Total", "All …", "Overall").
pub(super) const SUMMARY_ROW_WEIGHT: f64 = 1.5;
/// Weight factor of a sentence from an archived or superseded document.
pub(super) const STALE_WEIGHT: f64 = 0.3;
/// A figure row sharing no word with the question, in a model's pool: its weight is
/// scaled by this, so that it follows the units that do share one.
pub(super) const NO_TERM_ROW_WEIGHT: f64 = 0.1;

/// How much the question's terms weigh, and the bonus of a unit that states a figure.
pub(super) struct Weights<'w> {
    pub(super) terms: &'w BTreeMap<String, f64>,
    pub(super) total: f64,
    pub(super) figure_bonus: f64,
    /// Whether list items and table rows that state a figure are candidates without a
    /// question term (a brief that asks for specifics, read by the heuristic or a model
    /// from a ranked pool).
    pub(super) rows_with_figures: bool,
    /// Whether such a row comes after the units that share a word with the question
    /// (a model's pool, which they would crowd: a risk question's pool had led with a
    /// revenue row), rather than being ranked by its figure bonus (the heuristic's).
    pub(super) figure_rows_last: bool,
    /// The question's exact terms ([`deepr_evidence::terms::exact_terms`]): a unit
    /// holding one ranks first.
    pub(super) exact: &'w [Vec<String>],
    /// Whether a unit sharing no word with the question is a candidate all the same,
    /// at weight 0 (a model's: [`Reader::Documents`] reads documents, [`Reader::Model`]
    /// may read a short one whole).
    pub(super) every_unit: bool,
    /// Whether a table's row with the largest amount ranks first among its rows
    /// ([`super::tables::largest_amount_first`]; the heuristic reader, which cannot
    /// tell which row matters).
    pub(super) largest_row_first: bool,
}

/// Weight a unit gains for holding one of the question's exact terms: more than any
/// share of the question's words gives, so it ranks first.
pub(super) const EXACT_BONUS: f64 = 1.0;

/// The question's term weights a unit matches: its own terms in full, terms found only
/// in its context (`section_terms`: its run and headings) at [`SECTION_TERM_WEIGHT`].
pub(super) fn matched_weight(
    weights: &Weights<'_>,
    terms: &BTreeSet<String>,
    section_terms: &BTreeSet<String>,
) -> f64 {
    weights
        .terms
        .iter()
        .map(|(t, w)| {
            if terms.contains(t) {
                *w
            } else if section_terms.contains(t) {
                SECTION_TERM_WEIGHT * w
            } else {
                0.0
            }
        })
        .sum()
}

/// [`EXACT_BONUS`] when `quoted` holds one of the question's exact terms.
pub(super) fn exact_bonus(quoted: &str, weights: &Weights<'_>) -> f64 {
    if deepr_evidence::terms::holds_exact(quoted, weights.exact) {
        EXACT_BONUS
    } else {
        0.0
    }
}

/// A unit's weight: the share of the question it matches plus its figure bonus, times
/// its source's score, less for a pointer or byline, an old version's or a draft's
/// unit, more for a table's total row. `quoted` is all the candidate quotes: a sentence
/// leaning on the one before it is weighed with it (it states that one's figure, and
/// is a pointer when that one speaks of its document).
pub(super) fn unit_weight(
    matched: f64,
    quoted: &str,
    source: &ScoredSource,
    weights: &Weights<'_>,
) -> f64 {
    let outline = &source.doc.outline;
    let share = matched / weights.total.max(f64::MIN_POSITIVE);
    // A small bonus for stating a figure: a word that is a number ("4096", "1,000",
    // "3.5", "$212.4M"), not the grounding rule's wider reading ("8KB", "v3").
    let informative = if states_a_figure(quoted) {
        weights.figure_bonus
    } else {
        0.0
    };
    // A document that says a newer one replaces it (archived, superseded), or a draft
    // whose figures may not be final, is still read, but its sentences come after the
    // current versions'.
    let stale = if outline.is_stale() || outline.is_draft() {
        STALE_WEIGHT
    } else {
        1.0
    };
    // A table's total row ("Division: Total · …") states what its other rows add up to:
    // it comes before them.
    let summary = if is_summary_row(quoted) {
        SUMMARY_ROW_WEIGHT
    } else {
        1.0
    };
    round4((share + informative) * (0.5 + source.score) * pointer_penalty(quoted) * stale * summary)
}

/// Each question term weighted by its rarity (`idf`), and the topic's own terms at
/// [`super::TOPIC_TERM_WEIGHT`], scaled so that together they weigh at most as much as the
/// question's.
pub(super) fn term_weights(
    question_terms: &BTreeSet<String>,
    subject: &str,
    idf: &dyn Fn(&str) -> f64,
) -> BTreeMap<String, f64> {
    let mut weighted: BTreeMap<String, f64> =
        question_terms.iter().map(|t| (t.clone(), idf(t))).collect();
    // A brief's writing instructions ("be specific about numbers, dates and names")
    // say nothing about relevance: only its subject counts.
    let question_weight: f64 = weighted.values().sum();
    let topic_only: BTreeMap<String, f64> = super::score_terms(subject)
        .into_iter()
        .filter(|t| !weighted.contains_key(t))
        .map(|t| {
            let w = super::TOPIC_TERM_WEIGHT * idf(&t);
            (t, w)
        })
        .collect();
    // A long topic (a brief's context) must not outweigh the subquestion: its own
    // terms together weigh at most as much as the question's.
    let topic_sum: f64 = topic_only.values().sum();
    let scale = if question_weight > 0.0 && topic_sum > question_weight {
        question_weight / topic_sum
    } else {
        1.0
    };
    for (term, w) in topic_only {
        weighted.insert(term, w * scale);
    }
    weighted
}
