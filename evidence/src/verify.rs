//! The verification gate's core: is a cited quote really in its source?
//!
//! Pure functions over a citation and the source text it claims to come from; the
//! caller finds the text (archive, export bundle, live fetch). Text is compared only
//! through [`normalise`](crate::normalise), the function extraction uses. Three
//! outcomes are kept apart: a quote is *found*, *not found* (or its provenance does not
//! match), or *unchecked* because no text could be had — and an unchecked row never
//! counts as found.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::hash::{content_sha256, quote_sha256};
use crate::normalise::normalise;
use crate::report::Report;
use crate::sentences::split_sentences;

/// One citation to check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CitationCheck {
    /// 1-based row number, as printed.
    pub row: usize,
    pub claim: String,
    /// Source id (`S3`) or, for a markdown footnote, its locator.
    pub source: String,
    pub locator: String,
    pub quote: String,
    /// As written in the report (JSON only).
    pub quote_sha256: Option<String>,
    /// The source's content hash as written in the report.
    pub content_sha256: Option<String>,
    /// The cited sentence index (JSON only).
    pub sentence: Option<u32>,
    /// The quote's last sentence when it spans several (JSON only).
    pub sentence_end: Option<u32>,
}

/// A row's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowVerdict {
    Found(String),
    Failed(String),
    Unchecked(String),
}

impl RowVerdict {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Found(_) => "FOUND",
            Self::Failed(_) => "FAILED",
            Self::Unchecked(_) => "UNCHECKED",
        }
    }

    pub fn why(&self) -> &str {
        match self {
            Self::Found(w) | Self::Failed(w) | Self::Unchecked(w) => w,
        }
    }
}

/// Checks that need no source text: the quote hash matches the quote.
pub fn check_hashes(citation: &CitationCheck) -> Option<RowVerdict> {
    if citation.quote.trim().is_empty() {
        return Some(RowVerdict::Failed("the quote is empty".into()));
    }
    if let Some(written) = &citation.quote_sha256 {
        if *written != quote_sha256(&citation.quote) {
            return Some(RowVerdict::Failed(
                "quote_sha256 does not match the quote (the quote was edited)".into(),
            ));
        }
    }
    None
}

/// Check a citation against the archived text of its source (already known to hash
/// to `content_sha256`): the normalised quote must occur in the normalised text and,
/// when the citation names a sentence, be that sentence.
pub fn check_against_archive(citation: &CitationCheck, archived: &str) -> RowVerdict {
    if let Some(verdict) = check_hashes(citation) {
        return verdict;
    }
    if let Some(expected) = &citation.content_sha256 {
        if *expected != content_sha256(archived) {
            return RowVerdict::Failed(
                "the archived text does not hash to the source's content_sha256".into(),
            );
        }
    }
    let quote = normalise(&citation.quote);
    if !normalise(archived).contains(&quote) {
        return RowVerdict::Failed(format!(
            "quote not found in the archived text of {}",
            citation.locator
        ));
    }
    if let Some(index) = citation.sentence {
        let last = citation.sentence_end.unwrap_or(index);
        // A quote spans at most a sentence and the one before it.
        if last != index && Some(last) != index.checked_add(1) {
            return RowVerdict::Failed(format!(
                "the citation spans sentences {index}–{last}; a quote is one sentence or two adjacent ones"
            ));
        }
        let sentences = split_sentences(archived);
        let at_index = crate::sentences::span(archived, &sentences, index, last).map(normalise);
        let which = if last == index {
            format!("sentence {index}")
        } else {
            format!("sentences {index}–{last}")
        };
        if at_index.as_deref() != Some(quote.as_str()) {
            return RowVerdict::Failed(format!(
                "the quote is in {} but is not its {which} (provenance does not match)",
                citation.locator
            ));
        }
        return RowVerdict::Found(format!("archived text, {which}"));
    }
    RowVerdict::Found("archived text".into())
}

/// Check a citation against a freshly fetched page text (no provenance hash: the page
/// may have changed since it was read).
pub fn check_against_live(citation: &CitationCheck, page_text: &str) -> RowVerdict {
    if let Some(verdict) = check_hashes(citation) {
        return verdict;
    }
    if normalise(page_text).contains(&normalise(&citation.quote)) {
        RowVerdict::Found("live page".into())
    } else {
        RowVerdict::Failed(format!(
            "quote not found on the live page {}",
            citation.locator
        ))
    }
}

/// The overall outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateOutcome {
    /// Every checked quote was found and at least one was checked (exit 0).
    Pass,
    /// Some quote was not found or its provenance did not match (exit 1).
    Fail,
    /// Nothing could be checked (exit 3). Never reported as a pass.
    Unverified,
}

impl GateOutcome {
    /// `PASS`, `FAIL` or `UNVERIFIED`, as `deepr verify` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Fail => "FAIL",
            Self::Unverified => "UNVERIFIED",
        }
    }
}

pub fn outcome(verdicts: &[RowVerdict]) -> GateOutcome {
    if verdicts.iter().any(|v| matches!(v, RowVerdict::Failed(_))) {
        GateOutcome::Fail
    } else if verdicts.iter().any(|v| matches!(v, RowVerdict::Found(_))) {
        GateOutcome::Pass
    } else {
        GateOutcome::Unverified
    }
}

// ---- prose: the article's sentences

/// One sentence of a report's article, to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProseCheck {
    /// 1-based, as printed (`P1`, `P2`, …).
    pub row: usize,
    /// `summary`, or the section's heading.
    pub section: String,
    pub text: String,
    pub claims: Vec<String>,
}

/// The article's sentences, summary first, in reading order.
pub fn prose_rows(report: &Report) -> Vec<ProseCheck> {
    let mut rows = Vec::new();
    let sections = std::iter::once(("summary", &report.article.summary)).chain(
        report
            .article
            .sections
            .iter()
            .map(|s| (s.heading.as_str(), &s.paragraphs)),
    );
    for (section, paragraphs) in sections {
        for sentence in paragraphs.iter().flat_map(|p| &p.sentences) {
            rows.push(ProseCheck {
                row: rows.len() + 1,
                section: section.to_string(),
                text: sentence.text.clone(),
                claims: sentence.claims.clone(),
            });
        }
    }
    rows
}

/// Check a prose sentence: every claim it cites is in the report, it stands on those
/// claims' quotes ([`crate::prose::check_sentence`]: numbers, quoted terms, shared
/// words; no unsupported claim), and every one of those quotes was itself verified.
/// `quote_verdict(locator, quote)` gives the citation check's verdict for a quote.
pub fn check_prose(
    sentence: &ProseCheck,
    report: &Report,
    quote_verdict: impl Fn(&str, &str) -> Option<RowVerdict>,
) -> RowVerdict {
    let locators: BTreeMap<&str, &str> = report
        .sources
        .iter()
        .map(|s| (s.id.as_str(), s.locator.as_str()))
        .collect();
    let claims: BTreeMap<&str, &crate::report::Claim> =
        report.claims.iter().map(|c| (c.id.as_str(), c)).collect();
    // A sentence may name the documents its claims cite: their titles and dates.
    let names: BTreeMap<&str, String> = report
        .sources
        .iter()
        .map(|s| {
            let name = crate::prose::source_name(&s.title, s.date.as_deref());
            (s.id.as_str(), name)
        })
        .collect();
    if let Err(why) = crate::prose::check_sentence(&sentence.text, &sentence.claims, |id| {
        claims.get(id).map(|c| crate::prose::CitedClaim {
            verdict: c.verdict,
            quotes: c.citations.iter().map(|q| q.quote.clone()).collect(),
            sources: c
                .citations
                .iter()
                .filter_map(|q| names.get(q.source.as_str()).cloned())
                .collect(),
        })
    }) {
        return RowVerdict::Failed(format!("sentence {:?} {why}", short(&sentence.text)));
    }
    let mut unchecked = None;
    for id in &sentence.claims {
        let Some(claim) = claims.get(id.as_str()) else {
            continue; // refused above
        };
        for citation in &claim.citations {
            let locator = locators
                .get(citation.source.as_str())
                .copied()
                .unwrap_or("");
            match quote_verdict(locator, &citation.quote) {
                Some(RowVerdict::Found(_)) => {}
                Some(RowVerdict::Failed(_)) => {
                    return RowVerdict::Failed(format!(
                        "sentence {:?} cites {id}, whose quote failed verification",
                        short(&sentence.text)
                    ))
                }
                Some(RowVerdict::Unchecked(_)) | None => {
                    unchecked = Some(format!("the quotes of {id} could not be checked"))
                }
            }
        }
    }
    match unchecked {
        Some(why) => RowVerdict::Unchecked(why),
        None => RowVerdict::Found(format!("grounded in {}", sentence.claims.join(", "))),
    }
}

fn short(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= 60 {
        one
    } else {
        format!("{}…", one.chars().take(59).collect::<String>())
    }
}

// ---- parsing what `deepr verify` reads (untrusted files; fuzzed in `fuzz/`)

/// Schema of an export bundle.
pub const BUNDLE_SCHEMA: &str = "deepr.bundle.v1";

/// One file that carries a report and the texts its quotes were cut from.
#[derive(Debug, Serialize, Deserialize)]
pub struct Bundle {
    pub schema: String,
    pub report: Report,
    pub markdown: String,
    /// Archived texts by content SHA-256.
    pub texts: BTreeMap<String, String>,
}

/// Citations of a report.json as rows.
pub fn json_rows(report: &Report) -> Vec<CitationCheck> {
    let sources: BTreeMap<&str, (&str, &str)> = report
        .sources
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                (s.locator.as_str(), s.content_sha256.as_str()),
            )
        })
        .collect();
    let mut rows = Vec::new();
    for claim in &report.claims {
        for citation in &claim.citations {
            let (locator, sha) = sources
                .get(citation.source.as_str())
                .copied()
                .unwrap_or(("", ""));
            rows.push(CitationCheck {
                row: rows.len() + 1,
                claim: claim.text.clone(),
                source: citation.source.clone(),
                locator: locator.to_string(),
                quote: citation.quote.clone(),
                quote_sha256: Some(citation.quote_sha256.clone()),
                content_sha256: (!sha.is_empty()).then(|| sha.to_string()),
                sentence: Some(citation.sentence),
                sentence_end: citation.sentence_end,
            });
        }
    }
    rows
}

/// Footnotes `[^N]: "QUOTE" — LOCATOR` of a markdown report, with the sentence that first
/// cites each as its claim.
pub fn markdown_rows(markdown: &str) -> Vec<CitationCheck> {
    let mut rows = Vec::new();
    for line in markdown.lines() {
        let Some(rest) = line.strip_prefix("[^") else {
            continue;
        };
        let Some((number, body)) = rest.split_once("]: ") else {
            continue;
        };
        let Some(body) = body.strip_prefix('"') else {
            continue;
        };
        let Some((quote, locator)) = body.rsplit_once("\" — ") else {
            continue;
        };
        let marker = format!("[^{number}]");
        let claim = markdown
            .lines()
            .find(|l| l.contains(&marker) && !l.starts_with("[^"))
            .map(|l| citing_sentence(l, &marker))
            .unwrap_or_default();
        rows.push(CitationCheck {
            row: rows.len() + 1,
            claim,
            source: format!("[^{number}]"),
            // A place fragment (`#page=3`) says where the quote stands; the source is
            // the locator before it.
            locator: crate::report::split_place(locator.trim()).0.to_string(),
            quote: quote.to_string(),
            ..Default::default()
        });
    }
    rows
}

/// The sentence of `line` that `marker` (`[^7]`) closes: the text after the markers
/// that close the sentence before it, up to this marker and those just before it
/// (`… commits.[^6][^7]`). A report's sentences end with their footnote markers.
fn citing_sentence(line: &str, marker: &str) -> String {
    let Some(at) = line.find(marker) else {
        return String::new();
    };
    let mut before = line[..at].trim_end();
    // The markers right before this one belong to the same sentence.
    while before.ends_with(']') {
        match before.rfind("[^") {
            Some(open) if is_marker(&before[open..]) => before = before[..open].trim_end(),
            _ => break,
        }
    }
    // The sentence starts after the last marker before it.
    let start = before.rfind("[^").map_or(0, |open| {
        before[open..]
            .find(']')
            .map_or(open, |close| open + close + 1)
    });
    before[start..]
        .trim_start_matches(['-', ' ', '*'])
        .trim()
        .to_string()
}

/// Whether `text` is one footnote marker, `[^` digits `]`.
fn is_marker(text: &str) -> bool {
    text.strip_prefix("[^")
        .and_then(|t| t.strip_suffix(']'))
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_footnote_shows_the_sentence_it_closes() {
        let line = "- A one.[^1] B two.[^2][^3] C three, with [brackets].[^4]";
        assert_eq!(citing_sentence(line, "[^1]"), "A one.");
        assert_eq!(citing_sentence(line, "[^2]"), "B two.");
        assert_eq!(citing_sentence(line, "[^3]"), "B two.");
        assert_eq!(citing_sentence(line, "[^4]"), "C three, with [brackets].");
        assert_eq!(citing_sentence(line, "[^9]"), "");
        let markdown =
            "Intro.[^1] Second claim.[^2]\n\n[^1]: \"Intro\" — a.md\n[^2]: \"Second\" — b.md\n";
        let claims: Vec<String> = markdown_rows(markdown)
            .into_iter()
            .map(|r| r.claim)
            .collect();
        assert_eq!(claims, ["Intro.", "Second claim."]);
    }

    fn citation(quote: &str) -> CitationCheck {
        CitationCheck {
            row: 1,
            quote: quote.into(),
            locator: "page".into(),
            ..Default::default()
        }
    }

    /// Data-driven: (archived text, quote as cited, expected label).
    #[test]
    fn archive_checks() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "HN apostrophe entity in the page",
                "It&#x27;s fast. Really.",
                "It's fast.",
                "FOUND",
            ),
            (
                "zero-width space before a heading",
                "\u{200B}Atomic Commit\nDone.",
                "Atomic Commit",
                "FOUND",
            ),
            (
                "soft hyphen in the page",
                "The trans\u{00AD}action commits.",
                "The transaction commits.",
                "FOUND",
            ),
            (
                "NBSP and line breaks",
                "rollback\u{00A0}journal\n  is deleted.",
                "rollback journal is deleted.",
                "FOUND",
            ),
            (
                "one word changed",
                "The journal is deleted at commit.",
                "The journal is removed at commit.",
                "FAILED",
            ),
            (
                "case is not folded",
                "The journal is deleted.",
                "the journal is deleted.",
                "FAILED",
            ),
            ("empty quote", "Anything.", "  ", "FAILED"),
        ];
        for (why, archived, quote, want) in cases {
            assert_eq!(
                check_against_archive(&citation(quote), archived).label(),
                *want,
                "{why}"
            );
        }
    }

    #[test]
    fn provenance_is_checked() {
        let archived = "First sentence here. Second sentence here.";
        let mut c = citation("Second sentence here.");
        c.quote_sha256 = Some(quote_sha256(&c.quote));
        c.content_sha256 = Some(content_sha256(archived));
        c.sentence = Some(1);
        assert_eq!(check_against_archive(&c, archived).label(), "FOUND");
        let wrong_index = CitationCheck {
            sentence: Some(0),
            ..c.clone()
        };
        assert!(check_against_archive(&wrong_index, archived)
            .why()
            .contains("provenance"));
        let edited = CitationCheck {
            quote: "Second sentence there.".into(),
            ..c.clone()
        };
        assert!(check_against_archive(&edited, archived)
            .why()
            .contains("edited"));
        let swapped = CitationCheck {
            content_sha256: Some(content_sha256("other page")),
            ..c.clone()
        };
        assert_eq!(check_against_archive(&swapped, archived).label(), "FAILED");
        // A quote spanning two sentences is checked as the whole slice.
        let both = "First sentence here. Second sentence here.";
        let span = CitationCheck {
            quote: both.into(),
            quote_sha256: Some(quote_sha256(both)),
            sentence: Some(0),
            sentence_end: Some(1),
            ..c.clone()
        };
        assert_eq!(check_against_archive(&span, archived).label(), "FOUND");
        let short_span = CitationCheck {
            sentence_end: Some(0),
            ..span.clone()
        };
        assert!(check_against_archive(&short_span, archived)
            .why()
            .contains("provenance"));
        let past_the_end = CitationCheck {
            sentence_end: Some(7),
            ..span.clone()
        };
        assert_eq!(
            check_against_archive(&past_the_end, archived).label(),
            "FAILED"
        );
        let archived3 = "One here. Two here. Three here.";
        let whole = CitationCheck {
            quote: archived3.into(),
            quote_sha256: Some(quote_sha256(archived3)),
            content_sha256: Some(content_sha256(archived3)),
            sentence: Some(0),
            sentence_end: Some(2),
            ..span
        };
        assert!(check_against_archive(&whole, archived3)
            .why()
            .contains("adjacent"));
    }

    #[test]
    fn outcomes_are_never_collapsed() {
        let found = RowVerdict::Found(String::new());
        let failed = RowVerdict::Failed(String::new());
        let unchecked = RowVerdict::Unchecked(String::new());
        assert_eq!(
            outcome(&[found.clone(), unchecked.clone()]),
            GateOutcome::Pass
        );
        assert_eq!(
            outcome(&[found, failed, unchecked.clone()]),
            GateOutcome::Fail
        );
        assert_eq!(
            outcome(&[unchecked.clone(), unchecked]),
            GateOutcome::Unverified
        );
        assert_eq!(outcome(&[]), GateOutcome::Unverified);
    }
}
