//! Which section a document follow-up is written in.
//!
//! Deepening follows up a document the round found and nobody quoted ("What does the
//! documentation say about “2026 Headcount Plan”, regarding the product line?") under
//! the subquestion whose search found it. But a search finds what shares its words, not
//! its subject: relay helpers were handed a "product line" section holding a pipeline
//! report's and a headcount plan's claims, and a "capital projects" section holding the
//! fare decision. Here a document follow-up's section is the top-level subquestion its
//! claims share the most distinctive words with — that subquestion's own words and its
//! own claims' — when that is another section than the one that found it (a tie stays).

use std::collections::BTreeSet;

use deepr_evidence::report::Verdict;

use crate::types::{ClaimDraft, Subq};

/// A word is distinctive when at most one in this many of the run's claims and
/// subquestions use it (the organisation's name, in all of them, names no subject).
const DISTINCTIVE_SHARE: usize = 8;

/// `sections` ([`super::sections`]) with each document follow-up moved to the section
/// its claims are about; sections keep their order, a moved follow-up goes last in its
/// new one.
pub fn by_subject(sections: Vec<Vec<Subq>>, claims: &[(ClaimDraft, Verdict)]) -> Vec<Vec<Subq>> {
    let document_followup =
        |s: &Subq| s.parent.is_some() && crate::deepen::unread::is_document_followup(&s.id);
    // Every text whose words count: each claim, and each section's top-level subquestion.
    let mut texts: Vec<&str> = claims.iter().map(|(c, _)| c.text.as_str()).collect();
    texts.extend(
        sections
            .iter()
            .filter_map(|s| s.first())
            .map(|s| s.text.as_str()),
    );
    let distinct = deepr_evidence::terms::distinctive_terms(&texts, DISTINCTIVE_SHARE, 2);
    let claim_terms = |subq: &str| -> BTreeSet<&str> {
        claims
            .iter()
            .zip(&distinct)
            .filter(|((c, _), _)| c.subquestion == subq)
            .flat_map(|(_, terms)| terms.iter().map(String::as_str))
            .collect()
    };
    // What each section is about: its top-level subquestion's words and the claims of
    // its subquestions that are not document follow-ups.
    let subjects: Vec<BTreeSet<&str>> = sections
        .iter()
        .enumerate()
        .map(|(i, section)| {
            let own = distinct[claims.len() + i].iter().map(String::as_str);
            let found = section
                .iter()
                .filter(|s| !document_followup(s))
                .flat_map(|s| claim_terms(&s.id));
            own.chain(found).collect()
        })
        .collect();
    let mut out: Vec<Vec<Subq>> = sections.iter().map(|_| Vec::new()).collect();
    let mut moved: Vec<(usize, Subq)> = Vec::new();
    for (i, section) in sections.iter().enumerate() {
        for subq in section {
            let home = match document_followup(subq) {
                true => home_of(&claim_terms(&subq.id), &subjects, i),
                false => i,
            };
            match home == i {
                true => out[i].push(subq.clone()),
                false => moved.push((home, subq.clone())),
            }
        }
    }
    for (home, subq) in moved {
        out[home].push(subq);
    }
    out
}

/// The section whose subject shares the most of `terms`; `found_in` keeps a tie.
fn home_of(terms: &BTreeSet<&str>, subjects: &[BTreeSet<&str>], found_in: usize) -> usize {
    let shared = |i: usize| subjects[i].intersection(terms).count();
    (0..subjects.len())
        .filter(|&i| shared(i) > shared(found_in))
        .max_by_key(|&i| (shared(i), std::cmp::Reverse(i)))
        .unwrap_or(found_in)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subq(id: &str, text: &str, parent: Option<&str>) -> Subq {
        Subq {
            id: id.into(),
            text: text.into(),
            round: u32::from(parent.is_some()),
            parent: parent.map(String::from),
            queries: Vec::new(),
        }
    }

    fn claim(subquestion: &str, text: &str) -> (ClaimDraft, Verdict) {
        let draft = ClaimDraft {
            id: format!("{subquestion}-c"),
            subquestion: subquestion.into(),
            text: text.into(),
            citations: Vec::new(),
        };
        (draft, Verdict::Supported)
    }

    #[test]
    fn a_document_followup_is_written_where_its_claims_belong() {
        let sections = vec![
            vec![
                subq("q1", "What is Kestrel's product line and pricing?", None),
                subq(
                    "q1.d0.r1",
                    "What does the documentation say about “Headcount Plan”?",
                    Some("q1"),
                ),
                subq("q1.r1", "Which Kestrel products launch next?", Some("q1")),
            ],
            vec![subq(
                "q2",
                "How many people does Kestrel employ, and hiring?",
                None,
            )],
        ];
        let mut claims = vec![
            claim(
                "q1",
                "Kestrel sells the S4 robot at a list price of $1,390 per month",
            ),
            claim(
                "q1",
                "Kestrel's S5 robot pricing starts at $1,690 per month",
            ),
            claim("q1.r1", "Kestrel launches the S5 robot in September"),
            claim(
                "q1.d0.r1",
                "Kestrel's headcount plan reaches 365 employees, hiring 47 engineers",
            ),
            claim(
                "q2",
                "Kestrel employed 318 people and hiring continues in engineering",
            ),
        ];
        let moved = by_subject(sections.clone(), &claims);
        let ids = |s: &[Subq]| s.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&moved[0]), ["q1", "q1.r1"], "a gap follow-up stays");
        assert_eq!(ids(&moved[1]), ["q2", "q1.d0.r1"]);
        // A document follow-up about its own section's subject stays.
        claims[3] = claim("q1.d0.r1", "Kestrel's S5 robot list price is $1,690");
        let kept = by_subject(sections, &claims);
        assert_eq!(ids(&kept[0]), ["q1", "q1.d0.r1", "q1.r1"]);
    }
}
