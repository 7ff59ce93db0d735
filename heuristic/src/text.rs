//! Word-set helpers the heuristics share.

use std::collections::BTreeSet;

use deepr_evidence::terms::{content_terms, numbers};

/// Jaccard similarity of two term sets (0 when both are empty).
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

/// A verdict from word overlap: `supported` when at least 60 % of the claim's content
/// words and every number it states are in the evidence, `partial` from 30 %, else
/// `unsupported`.
pub fn overlap_verdict(claim: &str, evidence: &str) -> &'static str {
    let evidence_terms: BTreeSet<String> = content_terms(evidence).into_iter().collect();
    let claim_terms: BTreeSet<String> = content_terms(claim).into_iter().collect();
    let share = if claim_terms.is_empty() {
        0.0
    } else {
        claim_terms
            .iter()
            .filter(|t| evidence_terms.contains(*t))
            .count() as f64
            / claim_terms.len() as f64
    };
    let evidence_numbers = numbers(evidence);
    let numbers_ok = numbers(claim).iter().all(|n| evidence_numbers.contains(n));
    if share >= 0.6 && numbers_ok {
        "supported"
    } else if share >= 0.3 {
        "partial"
    } else {
        "unsupported"
    }
}

/// The sentence with a full stop when it ends in none (a list item, a table row).
pub fn with_final_stop(text: String) -> String {
    if text.ends_with(['.', '!', '?', '…', ':', ';', '。', '！', '？']) {
        text
    } else {
        format!("{text}.")
    }
}
