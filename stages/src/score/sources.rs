//! How each fetched document scores for a subquestion: relevance (its retrieval rank and
//! the share of the question's terms it holds), authority and recency.

use std::collections::{BTreeMap, BTreeSet};

use super::stems::score_terms;
use deepr_orchestrator::{ArchivedText, TextArchive};

use crate::rerank::round4;
use crate::types::{FetchOut, ScoredSource};

/// Each fetched document's score (relevance, authority, recency), best first, and its
/// archived text.
pub(super) fn score_sources(
    fetched: &FetchOut,
    query_terms: &BTreeSet<String>,
    archive: &dyn TextArchive,
) -> (Vec<ScoredSource>, BTreeMap<String, ArchivedText>) {
    let max_rrf = fetched
        .docs
        .iter()
        .map(|(_, rrf)| *rrf)
        .fold(0.0_f64, f64::max);
    // The newest year is a date's: a title may name a target ("Vision 2030").
    let newest_year = fetched.docs.iter().filter_map(|(d, _)| dated_year(d)).max();

    let mut sources = Vec::new();
    let mut texts = BTreeMap::new();
    for (doc, rrf) in &fetched.docs {
        let Some(text) = archive.get(&doc.content_sha256) else {
            continue;
        };
        let doc_terms: BTreeSet<String> = score_terms(&doc.title)
            .into_iter()
            .chain(score_terms(&text.text))
            .collect();
        let matched = query_terms
            .iter()
            .filter(|t| doc_terms.contains(*t))
            .count();
        let term_share = if query_terms.is_empty() {
            0.0
        } else {
            matched as f64 / query_terms.len() as f64
        };
        let rank_share = if max_rrf > 0.0 { rrf / max_rrf } else { 0.0 };
        let relevance = 0.5 * rank_share + 0.5 * term_share;
        let recency = match (year_of(doc), newest_year) {
            _ if doc.outline.is_stale() => 0.0,
            (Some(y), Some(newest)) => (1.0 - f64::from(newest.saturating_sub(y)) / 10.0).max(0.0),
            _ => 0.5,
        };
        let authority = doc.authority.clamp(0.0, 1.0);
        let score = round4(0.6 * relevance + 0.25 * authority + 0.15 * recency);
        sources.push(ScoredSource {
            off_topic: None,
            background: false,
            doc: doc.clone(),
            relevance: round4(relevance),
            authority,
            recency: round4(recency),
            score,
        });
        texts.insert(doc.content_sha256.clone(), text);
    }
    sources.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.doc.doc_key.cmp(&b.doc.doc_key))
    });
    (sources, texts)
}

/// The year a document speaks of: its date's, else the latest its title names (a
/// system export states no date, but "kpi quarterly fy26", "vacancy extract 2026 04"
/// name their period; an undated document counts as half recent).
fn year_of(doc: &deepr_orchestrator::DocMeta) -> Option<u32> {
    dated_year(doc).or_else(|| title_year(&doc.title))
}

/// The year of a document's date.
fn dated_year(doc: &deepr_orchestrator::DocMeta) -> Option<u32> {
    doc.date
        .as_deref()
        .and_then(|d| d.get(..4))
        .and_then(|y| y.parse().ok())
}

/// The latest year a title names: four digits (1900–2199) or a fiscal year ("FY26",
/// "FY2026") standing as a word.
fn title_year(title: &str) -> Option<u32> {
    title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|word| {
            let digits = match word.get(..2) {
                Some(fy) if fy.eq_ignore_ascii_case("fy") => &word[2..],
                _ => word,
            };
            let number: u32 = digits
                .chars()
                .all(|c| c.is_ascii_digit())
                .then(|| digits.parse().ok())
                .flatten()?;
            match (digits.len(), word.len() > digits.len()) {
                (4, _) if (1900..2200).contains(&number) => Some(number),
                (2, true) if number < 50 => Some(2000 + number),
                (2, true) => Some(1900 + number),
                _ => None,
            }
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::title_year;

    proptest::proptest! {
        // Any title: a year in range or none, never a panic.
        #[test]
        fn any_title_names_a_year_in_range_or_none(title in "(\\PC|FY|fy|20[0-9]{2}|[0-9]{2}| ){0,40}") {
            if let Some(year) = title_year(&title) {
                proptest::prop_assert!((1900..2200).contains(&year), "{year} from {title:?}");
            }
        }
    }

    #[test]
    fn a_title_names_its_year_or_fiscal_year() {
        assert_eq!(title_year("kpi quarterly fy26"), Some(2026));
        assert_eq!(title_year("vacancy extract 2026 04"), Some(2026));
        assert_eq!(
            title_year("Annual report FY2024 and 2025 outlook"),
            Some(2025)
        );
        assert_eq!(title_year("Top 20 accounts"), None);
        assert_eq!(title_year("FY99 results"), Some(1999));
        assert_eq!(title_year("Route 12 timetable, 45 stops"), None);
    }
}
