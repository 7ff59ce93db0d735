//! Every fact once, across writers that run side by side: a claim's figures that a
//! supported claim of an earlier section (plan order) already states — citing a
//! sentence it cites too, or a figure of four digits or more from any document — are
//! named to its writer, which refers to them and does not state them again (relayed
//! models had written one competitor's list price in four sections). One document's
//! other sentences are other facts: a peer's "$4.38" is not the peer median's "$4.38",
//! nor a depot design's "90%" a punctuality target's (relayed writers had dropped both).
//! The earlier claim is only handed to its writer, not yet written: a writer that
//! leaves it out (its words ran short) leaves the figure unstated — hence supported
//! claims only, whose figures writers keep.

use std::collections::BTreeSet;

use deepr_evidence::amounts::marked_figures;
use deepr_evidence::report::Verdict;

use crate::types::ClaimDraft;

/// The figures of `claim` ("$1,590", "99.2%", "3,412") that a supported claim of a
/// subquestion in `earlier` states too, citing a sentence `claim` cites (any sentence
/// of any document, for a figure of [`DIGITS_ALONE`] digits); as `claim` writes them,
/// in its order. Years and small counts are no such figure: a section may
/// always say "2026" or "three".
pub fn stated_earlier(
    claim: &ClaimDraft,
    claims: &[(ClaimDraft, Verdict)],
    earlier: &[String],
) -> Vec<String> {
    if earlier.is_empty() {
        return Vec::new();
    }
    let sentences: BTreeSet<(&str, u32)> = claim
        .citations
        .iter()
        .map(|c| (c.content_sha256.as_str(), c.sentence))
        .collect();
    let stated: BTreeSet<String> = claims
        .iter()
        .filter(|(other, verdict)| {
            *verdict == Verdict::Supported && earlier.contains(&other.subquestion)
        })
        .flat_map(|(other, _)| {
            let same_sentence = other
                .citations
                .iter()
                .any(|c| sentences.contains(&(c.content_sha256.as_str(), c.sentence)));
            marked_figures(&other.text)
                .into_iter()
                .filter(move |(_, value)| same_sentence || identifies_alone(value))
        })
        .map(|(_, value)| value)
        .collect();
    let mut out: Vec<String> = Vec::new();
    for (written, value) in marked_figures(&claim.text) {
        if stated.contains(&value) && !out.contains(&written) {
            out.push(written);
        }
    }
    out
}

/// Digits a figure needs to name one fact whatever document states it ("3,412",
/// "$1,890", "£148,000"): fewer ("93.1%", "$15") may be two facts' by chance.
const DIGITS_ALONE: usize = 4;

/// Whether a figure's key ([`marked_figures`]) has [`DIGITS_ALONE`] digits or more.
fn identifies_alone(value: &str) -> bool {
    value.chars().filter(char::is_ascii_digit).count() >= DIGITS_ALONE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::SentenceRef;

    fn claim(id: &str, subquestion: &str, doc: &str, text: &str) -> (ClaimDraft, Verdict) {
        claim_at(id, subquestion, doc, 0, text)
    }

    fn claim_at(
        id: &str,
        subquestion: &str,
        doc: &str,
        sentence: u32,
        text: &str,
    ) -> (ClaimDraft, Verdict) {
        (
            ClaimDraft {
                id: id.into(),
                subquestion: subquestion.into(),
                text: text.into(),
                citations: vec![SentenceRef {
                    content_sha256: doc.into(),
                    sentence,
                    sentence_end: None,
                    written_quote: None,
                }],
            },
            Verdict::Supported,
        )
    }

    #[test]
    fn an_earlier_sections_figures_from_the_same_document_are_named() {
        let claims = vec![
            claim("q1-c1", "q1", "landscape", "Swiftlane lists at $1,420 and Corvid at $1,250 a month."),
            claim("q2-c1", "q2", "pricing", "The S4 costs $1,590 a month from 2026."),
            claim("q3-c1", "q3", "landscape", "In 2026 Swiftlane ($1,420), MediRover ($1,480) and Corvid ($1,250) list below the S4."),
        ];
        let later = &claims[2].0;
        let earlier = ["q1".to_string(), "q2".to_string()];
        assert_eq!(
            stated_earlier(later, &claims, &earlier),
            ["($1,420)", "($1,250)"].map(|s| s.trim_matches(['(', ')']).to_string())
        );
        // Not from another document, not when nothing came before.
        assert_eq!(
            stated_earlier(&claims[1].0, &claims, &["q1".to_string()]),
            Vec::<String>::new()
        );
        assert!(stated_earlier(later, &claims, &[]).is_empty());
        // A year or a plain count is no figure; a percentage is not the same amount.
        let counts = vec![
            claim(
                "q1-c1",
                "q1",
                "landscape",
                "In 2026 it had 15 depots and 15% share.",
            ),
            claim(
                "q2-c1",
                "q2",
                "landscape",
                "In 2026 the 15 depots cost $15 each.",
            ),
        ];
        assert!(stated_earlier(&counts[1].0, &counts, &["q1".to_string()]).is_empty());
        // From another document, a figure of four digits is the same fact; one of
        // three may be another's.
        let across = vec![
            claim(
                "q1-c1",
                "q1",
                "ops",
                "The fleet was 3,412 robots with 99.2% uptime.",
            ),
            claim(
                "q2-c1",
                "q2",
                "case",
                "It has 3,412 robots in service and 99.2% uptime.",
            ),
        ];
        assert_eq!(
            stated_earlier(&across[1].0, &across, &["q1".to_string()]),
            ["3,412"]
        );
        // Another sentence of the same document states another fact: a peer's $4.38 is
        // not the peer median's.
        let rows = vec![
            claim_at(
                "q1-c1",
                "q1",
                "peers",
                4,
                "The peer median cost per boarding is $4.38.",
            ),
            claim_at(
                "q2-c1",
                "q2",
                "peers",
                7,
                "Hallam County Transit spends $4.38 per boarding.",
            ),
        ];
        assert!(stated_earlier(&rows[1].0, &rows, &["q1".to_string()]).is_empty());
        // An earlier claim judged only partly supported (its writer may leave it out)
        // states nothing.
        let mut unsupported = claims.clone();
        unsupported[0].1 = Verdict::Partial;
        assert!(stated_earlier(later, &unsupported, &earlier).is_empty());
    }
}
