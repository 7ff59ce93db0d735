//! Every fact once, across writers that run side by side: a claim's values — figures,
//! dates, counts with units (`deepr_evidence::stated_values`) — that a supported claim
//! of an earlier section (plan order) already states — citing a sentence it cites too,
//! or from any document a figure of four digits or more or one event's date said
//! alike ("September 15, 2026", not a period's end: "March 31, 2026" dates many facts)
//! — are
//! named to its writer, which refers to them and does not state them again (relayed
//! models had written one competitor's list price in four sections). One document's
//! other sentences are other facts: a peer's "$4.38" is not the peer median's "$4.38",
//! nor a depot design's "90%" a punctuality target's (relayed writers had dropped both).
//! The earlier claim is only handed to its writer, not yet written: a writer that
//! leaves it out (its words ran short) leaves the figure unstated — hence supported
//! claims only, whose figures writers keep.

use std::collections::BTreeSet;

use deepr_evidence::report::Verdict;
use deepr_evidence::stated_values::{names_one_event, stated_values, StatedValue, ValueKind};
use deepr_evidence::terms::content_terms;

use crate::types::ClaimDraft;

/// The values of `claim` ("$1,590", "99.2%", "3,412", "September 15, 2026", "250 kg")
/// that a supported claim of a subquestion in `earlier` states too, citing a sentence
/// `claim` cites (any sentence of any document, for a value that
/// [identifies alone](identifies_alone)); as `claim` writes them, in its order. Years and
/// bare numbers are no such value: a section may always say "2026" or "three".
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
    let own = stated_values(&claim.text);
    let own_keys: BTreeSet<&str> = own.iter().map(|v| v.key.as_str()).collect();
    let mut stated: BTreeSet<String> = BTreeSet::new();
    let earlier_claims = claims.iter().filter(|(other, verdict)| {
        *verdict == Verdict::Supported && earlier.contains(&other.subquestion)
    });
    for (other, _) in earlier_claims {
        let same_sentence = other
            .citations
            .iter()
            .any(|c| sentences.contains(&(c.content_sha256.as_str(), c.sentence)));
        let values = stated_values(&other.text);
        // Two values stated together in both claims are one fact's, whatever documents
        // they cite ("a 250 kg payload … 14 hours a charge"); a period's end ("March
        // 31, 2026") dates many facts: it joins none.
        let shared = values
            .iter()
            .filter(|v| own_keys.contains(v.key.as_str()))
            .filter(|v| v.kind != ValueKind::Date || names_one_event(&v.key))
            .count();
        let together = same_sentence || shared >= TOGETHER;
        for value in values {
            // An amount in millions, or one event's date, said alike (two events may
            // fall on one day: a farm audit and a guilty plea on 3 March 2026).
            let said_alike = |mine: &StatedValue| {
                mine.key == value.key
                    && (in_millions(&mine.written)
                        || in_millions(&value.written)
                        || (value.kind == ValueKind::Date && names_one_event(&value.key)))
                    && words_alike(&claim.text, &mine.written, &other.text, &value.written)
                        >= ALIKE_WORDS
            };
            let same_fact = together || identifies_alone(&value) || own.iter().any(said_alike);
            if same_fact {
                stated.insert(value.key);
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for value in &own {
        if stated.contains(&value.key) && !out.contains(&value.written) {
            out.push(value.written.clone());
        }
    }
    out
}

/// Digits a figure needs to name one fact whatever document states it ("3,412",
/// "$1,890", "£148,000"): fewer ("93.1%", "$15") may be two facts' by chance.
const DIGITS_ALONE: usize = 4;

/// Values two claims of different documents must share to state one fact.
const TOGETHER: usize = 2;

/// Words either side of a value read as what it is said of.
const AROUND: usize = 5;

/// Content words alike around an amount written in millions or billions ("£41.7M"
/// beside "ARR" in both), or around one event's date: its digits are its significant
/// ones, so one word will do, and China's "£47.9m" of sales is still not the "£47.9m"
/// spent on a plant, nor a guilty plea an audit of the same day. Other figures of fewer
/// than [`DIGITS_ALONE`] digits are never matched by their words: a measure's words are
/// its peers' too (a rival's "86.9% bus on-time performance" is not the agency's,
/// relayed round f1).
const ALIKE_WORDS: usize = 1;

/// How alike one value is said in two texts: the content words it is said with
/// ([`around`], as each writes it) that both share.
fn words_alike(text: &str, written: &str, other: &str, other_written: &str) -> usize {
    around(text, written)
        .intersection(&around(other, other_written))
        .count()
}

/// The content words a value is said with: within [`AROUND`] words of it, and its
/// clause ("Revenue for the six months to 30 September 2026 was £20.9M").
fn around(text: &str, written: &str) -> BTreeSet<String> {
    let Some(at) = text.find(written) else {
        return BTreeSet::new();
    };
    let (head, tail) = (&text[..at], &text[at + written.len()..]);
    let before: Vec<&str> = head.split_whitespace().collect();
    let near: Vec<&str> = before[before.len().saturating_sub(AROUND)..]
        .iter()
        .copied()
        .chain(tail.split_whitespace().take(AROUND))
        .collect();
    let ends_clause = |c: char| matches!(c, ',' | ';' | ':' | '(' | ')' | '—');
    // After the mark that ends the clause before (an em dash is three bytes).
    let clause_start = head
        .char_indices()
        .rfind(|(_, c)| ends_clause(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let clause_end = tail.find(ends_clause).unwrap_or(tail.len());
    let clause = format!("{} {}", &head[clause_start..], &tail[..clause_end]);
    content_terms(&near.join(" "))
        .into_iter()
        .chain(content_terms(&clause))
        .collect()
}

/// Whether a figure is written in millions or billions ("$57.5M", "£1.2bn", "48.6
/// million" as its number: the word follows it).
fn in_millions(written: &str) -> bool {
    let suffix = written
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | ','));
    matches!(
        suffix.to_ascii_lowercase().as_str(),
        "m" | "mn" | "bn" | "b"
    )
}

/// Whether a value names one fact whatever document states it: a figure of
/// [`DIGITS_ALONE`] digits or more or a reference code ("PT-26-H03"). A date names
/// one event only said alike ([`names_one_event`]: and with a word alike around it),
/// and a count with a unit never does alone ("14 hours" of battery is not 14 hours to
/// resolve).
fn identifies_alone(value: &StatedValue) -> bool {
    match value.kind {
        ValueKind::Figure => value.key.chars().filter(char::is_ascii_digit).count() >= DIGITS_ALONE,
        ValueKind::Code => true,
        ValueKind::Date | ValueKind::Count => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Claims are a model's text: any two, however written, name only the later
        // one's own values and never panic.
        #[test]
        fn any_claims_name_only_their_own_values(
            first in "(\\PC|[0-9$£€%,.:;()—\\- ]|M|USD){0,60}",
            second in "(\\PC|[0-9$£€%,.:;()—\\- ]|M|USD){0,60}",
        ) {
            let claims = vec![claim("q1-c1", "q1", "a", &first), claim("q2-c1", "q2", "b", &second)];
            for written in stated_earlier(&claims[1].0, &claims, &["q1".to_string()]) {
                prop_assert!(second.contains(written.as_str()), "{written:?} in {second:?}");
            }
        }
    }
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
        // A year or a bare number is no value; a percentage is not the same amount; a
        // count with its unit from the same sentence is the same fact.
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
                "In 2026 the 15 depots cost $15 each, 15 in all.",
            ),
        ];
        assert_eq!(
            stated_earlier(&counts[1].0, &counts, &["q1".to_string()]),
            ["15 depots"]
        );
        // From another document, a figure of four digits is the same fact; one of
        // three may be another's.
        let across = vec![
            claim(
                "q1-c1",
                "q1",
                "ops",
                "The fleet was 3,412 robots with 99.2% uptime.",
            ),
            claim("q2-c1", "q2", "case", "It has 3,412 robots in service."),
            claim(
                "q3-c1",
                "q3",
                "billing",
                "99.2% of invoices were paid on time.",
            ),
        ];
        assert_eq!(
            stated_earlier(&across[1].0, &across, &["q1".to_string()]),
            ["3,412"]
        );
        assert!(stated_earlier(&across[2].0, &across, &["q1".to_string()]).is_empty());
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

    #[test]
    fn one_events_date_and_values_stated_together_name_one_fact_across_documents() {
        // From another document, one event's date said alike is the same fact; a
        // period's end dates other facts, and a count with a unit may be another's.
        let dated = vec![
            claim(
                "q1-c1",
                "q1",
                "plan",
                "Kestrel GA is September 15, 2026; cash was $71.3M at March 31, 2026.",
            ),
            claim(
                "q2-c1",
                "q2",
                "board",
                "From 15 September 2026 the Kestrel ships; at March 31, 2026 the fleet ran 14 hours.",
            ),
            claim(
                "q3-c1",
                "q3",
                "register",
                "The co-operative pleaded guilty at Leicester magistrates on 15 September 2026.",
            ),
        ];
        assert_eq!(
            stated_earlier(&dated[1].0, &dated, &["q1".to_string()]),
            ["15 September 2026"]
        );
        // Two events of one day: nothing alike around the date, another fact.
        assert!(stated_earlier(&dated[2].0, &dated, &["q1".to_string()]).is_empty());
        // A period's end said alike dates other facts still.
        let as_of = vec![
            claim(
                "q1-c1",
                "q1",
                "memo",
                "Kestrel's cash was $71.3M at March 31, 2026.",
            ),
            claim(
                "q2-c1",
                "q2",
                "plan",
                "Kestrel's fleet was 3,412 robots at March 31, 2026.",
            ),
        ];
        assert!(stated_earlier(&as_of[1].0, &as_of, &["q1".to_string()]).is_empty());
        // A reference code names one thing in any document.
        let coded = vec![
            claim(
                "q1-c1",
                "q1",
                "register",
                "Finding PT-26-H03 is rated Amber.",
            ),
            claim(
                "q2-c1",
                "q2",
                "roadmap",
                "The fix for PT-26-H03 ships in release 2026.11.",
            ),
        ];
        assert_eq!(
            stated_earlier(&coded[1].0, &coded, &["q1".to_string()]),
            ["PT-26-H03"]
        );
        // Two values stated together are one fact's from any document; an amount in
        // millions of three digits names one fact, one of two digits may not.
        let together = vec![
            claim(
                "q1-c1",
                "q1",
                "brief",
                "The S5 carries a 250 kg payload and runs 14 hours per charge; a $57.5M operating expense budget includes launch costs.",
            ),
            claim(
                "q2-c1",
                "q2",
                "landscape",
                "The S5's 250 kg payload beats Swiftlane (225 kg); its 14-hour battery covers two shifts.",
            ),
            claim(
                "q3-c1",
                "q3",
                "plan",
                "Launch costs sit inside the operating expense budget of $57.5M; 12 hours of testing cost $1.2M.",
            ),
            claim(
                "q4-c1",
                "q4",
                "targets",
                "Spending is 23% above the FY2025 total operating budget of $57.5M.",
            ),
        ];
        // Said of the same thing, the figure is one fact though the earlier claim wrote
        // it otherwise; said of another thing, it is another fact.
        let mut in_words = together.clone();
        in_words[0].0.text = "The FY2025 total operating budget is $57.5 million.".into();
        assert_eq!(
            stated_earlier(&in_words[3].0, &in_words, &["q1".to_string()]),
            ["$57.5M"]
        );
        assert_eq!(
            stated_earlier(&together[1].0, &together, &["q1".to_string()]),
            ["250 kg", "14-hour"]
        );
        assert_eq!(
            stated_earlier(&together[2].0, &together, &["q1".to_string()]),
            ["$57.5M"]
        );
    }
}
