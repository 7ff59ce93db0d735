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
/// A list item's text without its number ("3. The PRAGMA …" → "The PRAGMA …"): out of
/// its list, the number says nothing and would stand bare in a paragraph.
pub fn without_list_number(text: &str) -> &str {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=3).contains(&digits) {
        if let Some(rest) = text[digits..]
            .strip_prefix(". ")
            .or_else(|| text[digits..].strip_prefix(") "))
        {
            if rest.starts_with(|c: char| c.is_uppercase()) {
                return rest;
            }
        }
    }
    text
}

pub fn with_final_stop(text: String) -> String {
    if text.ends_with(['.', '!', '?', '…', ':', ';', '。', '！', '？']) {
        text
    } else {
        format!("{text}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_number_is_left_out_of_prose() {
        assert_eq!(
            without_list_number("3. The PRAGMA journal_mode is not OFF."),
            "The PRAGMA journal_mode is not OFF."
        );
        assert_eq!(
            without_list_number("2) Write the journal."),
            "Write the journal."
        );
        assert_eq!(without_list_number("2026. was a year"), "2026. was a year");
        assert_eq!(without_list_number("4. 5 pages"), "4. 5 pages");
    }
}
