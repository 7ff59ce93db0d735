//! What the reader must be told the sources lack ("What the sources do not settle"):
//! the names the brief or question gives — competitors, products, places — that no
//! document the run read mentions; the words a part of the brief or a clause of the
//! question asks about that no document read uses (half a question the sources cannot
//! answer); the sections whose supported claims rest on one source only; and the
//! sections that rest only on archived or superseded documents.
//! A pure function of the report, the run's sources and their archived texts.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::report::{Claim, Report, Verdict};
use deepr_evidence::terms::{is_stop_word, words};
use deepr_orchestrator::TextArchive;

use crate::research::ResearchResult;

/// The gaps of a report, one sentence each, in this order: names no document
/// mentions, asked words no document uses, sections on one source, sections on stale
/// documents only.
pub fn reader_gaps(
    report: &Report,
    result: &ResearchResult,
    archive: &dyn TextArchive,
) -> Vec<String> {
    let mut gaps = Vec::new();
    let brief = deepr_tasks::brief::parse_brief(&report.topic);
    let texts: Vec<BTreeSet<String>> = result
        .sources
        .keys()
        .filter_map(|sha| archive.get(sha))
        .map(|text| words(&text.text).into_iter().collect())
        .collect();
    let unmentioned: Vec<&String> = brief
        .entities
        .iter()
        .filter(|name| is_checkable_name(name))
        .filter(|name| !texts.iter().any(|t| mentions(t, name)))
        .collect();
    if !unmentioned.is_empty() && !texts.is_empty() {
        let names: Vec<&str> = unmentioned.iter().map(|n| n.as_str()).collect();
        gaps.push(format!(
            "No document read mentions {}: what the brief asks of {} is not settled by these sources (other sources may be searched with `--sources`).",
            join_names(&names),
            if names.len() == 1 { "it" } else { "them" }
        ));
    }
    if !texts.is_empty() {
        gaps.extend(unanswered_asks(&brief, &report.topic, &unmentioned, &texts));
    }
    gaps.extend(section_gaps(report));
    gaps
}

/// At most this many unused words are named per part.
const MAX_WORDS_NAMED: usize = 3;

/// Per clause of a question: the words it asks about that no document read uses, by
/// their stems ("truncated" is met by a text that says "truncates"). A brief's parts are
/// left to the sections' own gaps: written in a reader's words ("what scares you",
/// "is it loyal"), their words are no sign of what the documents lack. Names already
/// reported as unmentioned, numbers and short words are left to the other checks.
fn unanswered_asks(
    brief: &deepr_tasks::brief::Brief,
    topic: &str,
    unmentioned: &[&String],
    texts: &[BTreeSet<String>],
) -> Vec<String> {
    if brief.has_parts() {
        return Vec::new();
    }
    let used: BTreeSet<String> = texts
        .iter()
        .flatten()
        .map(|w| deepr_evidence::terms::stem(w))
        .collect();
    let named: BTreeSet<String> = unmentioned
        .iter()
        .flat_map(|n| deepr_evidence::terms::content_terms(n))
        .collect();
    let question = brief.parts.first().map(String::as_str).unwrap_or(topic);
    deepr_tasks::brief::topic_clauses(question)
        .iter()
        .filter_map(|clause| {
            let mut missing: Vec<String> = Vec::new();
            for word in words(clause) {
                // Adverbs and -ing forms say how the asker speaks ("accidentally",
                // "getting"), seldom what is asked.
                let asked = !is_stop_word(&word)
                    && word.chars().count() >= 4
                    && word.chars().all(char::is_alphabetic)
                    && !word.ends_with("ly")
                    && !word.ends_with("ing");
                let stem = deepr_evidence::terms::stem(&word);
                if asked && !used.contains(&stem) && !named.contains(&stem) && !missing.contains(&word)
                {
                    missing.push(word);
                }
            }
            if missing.is_empty() {
                return None;
            }
            missing.truncate(MAX_WORDS_NAMED);
            let quoted: Vec<String> = missing.iter().map(|w| format!("“{w}”")).collect();
            let quoted: Vec<&str> = quoted.iter().map(String::as_str).collect();
            Some(format!(
                "“{}” asks about {}, {} no document read uses: that part of the question may go unanswered here.",
                clause.trim().trim_end_matches('?'),
                join_names(&quoted),
                if quoted.len() == 1 { "a word" } else { "words" }
            ))
        })
        .collect()
}

/// A name worth checking: not a stop word alone ("Please", "Write" at a sentence's
/// start), with a word of four letters or more.
fn is_checkable_name(name: &str) -> bool {
    let name_words = words(name);
    let long = name_words.iter().any(|w| w.chars().count() >= 4);
    let only_stop = name_words.iter().all(|w| is_stop_word(w));
    long && !only_stop && !matches!(name_words.as_slice(), [w] if PLAIN_WORDS.contains(&w.as_str()))
}

/// Words a sentence may start with in capitals that name nothing.
const PLAIN_WORDS: &[&str] = &[
    "please",
    "write",
    "include",
    "context",
    "background",
    "note",
    "compare",
    "assess",
    "describe",
    "explain",
    "summarise",
    "summarize",
    "list",
    "give",
];

/// Whether a text's words hold every word of `name` that is no stop word.
fn mentions(text_words: &BTreeSet<String>, name: &str) -> bool {
    words(name)
        .iter()
        .filter(|w| {
            !is_stop_word(w) && !matches!(w.as_str(), "inc" | "ltd" | "llc" | "gmbh" | "co")
        })
        .all(|w| text_words.contains(w))
}

/// "A", "A and B", "A, B and C".
fn join_names(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Sections whose supported claims cite one source only, or only stale documents.
fn section_gaps(report: &Report) -> Vec<String> {
    let claims: BTreeMap<&str, &Claim> = report.claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let stale: BTreeSet<&str> = report
        .sources
        .iter()
        .filter(|s| matches!(s.doc_status.as_deref(), Some("archived" | "superseded")))
        .map(|s| s.id.as_str())
        .collect();
    let mut single = Vec::new();
    let mut only_stale = Vec::new();
    for section in &report.article.sections {
        let sources: BTreeSet<&str> = section
            .paragraphs
            .iter()
            .flat_map(|p| &p.sentences)
            .flat_map(|s| &s.claims)
            .filter_map(|id| claims.get(id.as_str()))
            .filter(|c| c.verdict == Verdict::Supported)
            .flat_map(|c| c.citations.iter().map(|x| x.source.as_str()))
            .collect();
        if sources.is_empty() {
            continue;
        }
        if sources.iter().all(|s| stale.contains(s)) {
            only_stale.push(section.heading.as_str());
        } else if sources.len() == 1 {
            let source = sources.iter().next().copied().unwrap_or("");
            single.push(format!("{} ({source})", section.heading));
        }
    }
    let mut gaps = Vec::new();
    if !single.is_empty() {
        let sections: Vec<&str> = single.iter().map(String::as_str).collect();
        gaps.push(format!(
            "Resting on one source only: {}; no second document confirms {}.",
            join_names(&sections),
            if sections.len() == 1 { "it" } else { "them" }
        ));
    }
    if !only_stale.is_empty() {
        gaps.push(format!(
            "Resting only on archived or superseded documents: {}; a current document may state otherwise.",
            join_names(&only_stale)
        ));
    }
    gaps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_by_their_words_and_plain_words_are_no_names() {
        let text: BTreeSet<String> = words("Swiftlane Robotics, Inc. sells to hospitals.")
            .into_iter()
            .collect();
        assert!(mentions(&text, "Swiftlane Robotics, Inc."));
        assert!(!mentions(&text, "MediRover"));
        assert!(!is_checkable_name("Please"));
        assert!(is_checkable_name("Series D"));
        assert!(is_checkable_name("Corvid Logistics"));
        assert_eq!(join_names(&["A", "B", "C"]), "A, B and C");
    }

    fn used(text: &str) -> Vec<BTreeSet<String>> {
        vec![words(text).into_iter().collect()]
    }

    #[test]
    fn a_clause_asking_about_words_no_document_uses_is_a_gap() {
        let topic = "When is the rollback journal deleted, and when is it truncated?";
        let brief = deepr_tasks::brief::parse_brief(topic);
        let read = used("The rollback journal is deleted when the transaction commits.");
        let gaps = unanswered_asks(&brief, topic, &[], &read);
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert!(gaps[0].contains("“truncated”"), "{gaps:?}");
        assert!(gaps[0].contains("when is it truncated"), "{gaps:?}");
        // Stems meet: a text that truncates answers "truncated".
        let read = used("The rollback journal is deleted, or in TRUNCATE mode it truncates.");
        assert!(unanswered_asks(&brief, topic, &[], &read).is_empty());
        // How the asker speaks is not what is asked.
        let topic = "I accidentally deleted a row. Why am I getting this error?";
        let brief = deepr_tasks::brief::parse_brief(topic);
        let read = used("A deleted row is gone; the error means a row was deleted.");
        assert!(unanswered_asks(&brief, topic, &[], &read).is_empty());
    }

    #[test]
    fn a_brief_is_judged_by_its_sections_not_its_words() {
        let topic = "Write a brief on Acme Robotics covering: (1) its funding history, \
                     (2) its product roadmap, and (3) how it compares with Globex.";
        let brief = deepr_tasks::brief::parse_brief(topic);
        assert!(brief.has_parts(), "{brief:?}");
        let read = used("Acme Robotics raised funding in 2024.");
        assert!(unanswered_asks(&brief, topic, &[], &read).is_empty());
    }
}
