//! What a reader gets, as figures that can fail: how many quoted sentences are on the
//! topic (or on their own subquestion), and how many quotes repeat across sections.
//!
//! A quoted sentence is **relevant** when it shares at least two *distinctive* content
//! words — each found in under 20 % of the corpus's documents — with the topic or with
//! the subquestion it answers. A **duplicate** is a citation whose quote (through the
//! normaliser) was already cited under another section.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::normalise;
use deepr_evidence::report::Report;

use crate::qa::terms;

/// Document frequencies of content words over a corpus.
#[derive(Debug, Default)]
pub struct CorpusStats {
    documents: usize,
    frequency: BTreeMap<String, usize>,
}

impl CorpusStats {
    pub fn build<'a>(documents: impl IntoIterator<Item = &'a str>) -> Self {
        let mut stats = Self::default();
        for text in documents {
            stats.documents += 1;
            for term in terms(text) {
                *stats.frequency.entry(term).or_default() += 1;
            }
        }
        stats
    }

    /// Found in under 20 % of the documents (and in the corpus at all).
    pub fn distinctive(&self, term: &str) -> bool {
        let found = self.frequency.get(term).copied().unwrap_or(0);
        found > 0 && found * 5 < self.documents
    }
}

/// Relevance and redundancy of one report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quality {
    /// Distinct (section, quote) citations.
    pub quoted: u64,
    pub relevant: u64,
    pub duplicates: u64,
}

pub fn quality(report: &Report, stats: &CorpusStats) -> Quality {
    let distinctive = |text: &str| -> BTreeSet<String> {
        terms(text)
            .into_iter()
            .filter(|t| stats.distinctive(t))
            .collect()
    };
    let topic = distinctive(&report.topic);
    let sections: BTreeMap<&str, BTreeSet<String>> = report
        .subquestions
        .iter()
        .map(|s| (s.id.as_str(), distinctive(&s.text)))
        .collect();
    let mut result = Quality::default();
    let mut seen_in: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    let mut counted: BTreeSet<(&str, String)> = BTreeSet::new();
    for claim in &report.claims {
        let section = claim.subquestion.as_str();
        for citation in &claim.citations {
            let quote = normalise(&citation.quote);
            if !counted.insert((section, quote.clone())) {
                continue; // the same quote twice in one section is one quote
            }
            result.quoted += 1;
            let quote_terms = distinctive(&citation.quote);
            let shares = |wanted: &BTreeSet<String>| quote_terms.intersection(wanted).count() >= 2;
            if shares(&topic) || sections.get(section).is_some_and(shares) {
                result.relevant += 1;
            }
            let sections_with = seen_in.entry(quote).or_default();
            if sections_with.iter().any(|s| *s != section) {
                result.duplicates += 1;
            }
            sections_with.insert(section);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use deepr_evidence::report::{Citation, Claim, Subquestion, Usage, Verdict};

    use super::*;

    fn claim(id: &str, section: &str, quote: &str) -> Claim {
        Claim {
            id: id.into(),
            subquestion: section.into(),
            text: "c".into(),
            verdict: Verdict::Supported,
            citations: vec![Citation {
                source: "s1".into(),
                sentence: 0,
                sentence_end: None,
                quote: quote.into(),
                quote_sha256: String::new(),
                place: None,
            }],
        }
    }

    #[test]
    fn relevance_needs_two_distinctive_shared_words_and_duplicates_are_across_sections() {
        // "sqlite" is in every document: never distinctive.
        let mut corpus: Vec<String> = (0..10).map(|i| format!("sqlite page {i}")).collect();
        corpus[0].push_str(" rollback journal deleted");
        corpus[1].push_str(" checkpoint wal frames");
        let stats = CorpusStats::build(corpus.iter().map(String::as_str));
        assert!(stats.distinctive("journal") && !stats.distinctive("sqlite"));
        let report = Report {
            schema: deepr_evidence::report::REPORT_SCHEMA.into(),
            run_id: "r".into(),
            topic: "When is the rollback journal deleted?".into(),
            depth: "quick".into(),
            strategy: "linear".into(),
            complete: true,
            incomplete_reason: None,
            subquestions: vec![
                Subquestion {
                    id: "q1".into(),
                    text: "rollback journal".into(),
                    round: 0,
                },
                Subquestion {
                    id: "q2".into(),
                    text: "WAL checkpoint frames".into(),
                    round: 0,
                },
            ],
            claims: vec![
                claim("a", "q1", "The rollback journal is deleted at commit."),
                claim("b", "q1", "SQLite is a library."),
                claim("c", "q2", "A checkpoint copies WAL frames."),
                claim("d", "q2", "The rollback journal is deleted at commit."),
                claim("e", "q2", "The rollback  journal is deleted at commit."),
            ],
            conflicts: vec![],
            sources: vec![],
            coverage: vec![],
            usage: Usage::default(),
            article: Default::default(),
            corpus_files: None,
            gaps: Vec::new(),
            changes: None,
        };
        let q = quality(&report, &stats);
        assert_eq!(q.quoted, 4, "e repeats d within its section");
        assert_eq!(q.relevant, 3, "only the library sentence is off topic");
        assert_eq!(q.duplicates, 1, "d repeats a in another section");
    }
}
