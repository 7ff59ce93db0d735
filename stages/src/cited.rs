//! Where a unit stands: its document (title, date, status) and, for a list item or
//! table row, the headings above it — shown with each candidate to the extractor and
//! with each cited quote to the judge, so that the judge reads a row as the extractor
//! did; and a list item's lead-in, shown with it and cited with it.

use std::collections::BTreeMap;

use deepr_orchestrator::{ArchivedText, DocMeta, TextArchive};
use deepr_tasks::extract::SourceNote;
use deepr_tasks::judge::QuoteSource;

use crate::types::{ClaimDraft, ScoreOut, SentenceRef};

/// The documents a round's score steps ranked, by content hash.
pub(crate) fn documents(scores: &[ScoreOut]) -> BTreeMap<String, DocMeta> {
    scores
        .iter()
        .flat_map(|s| &s.sources)
        .map(|s| (s.doc.content_sha256.clone(), s.doc.clone()))
        .collect()
}

/// One source per quote of `claim`, in the order `judge::quotes` lists them; none at all
/// when any quote's place is unknown (a quote the model wrote, a document no score step
/// ranked), so that sources never pair with the wrong quote.
pub(crate) fn quote_sources(
    claim: &ClaimDraft,
    docs: &BTreeMap<String, DocMeta>,
    archive: &dyn TextArchive,
) -> Vec<QuoteSource> {
    let mut sources = Vec::new();
    for citation in &claim.citations {
        if citation.written_quote.is_some() {
            return Vec::new();
        }
        let Some(text) = archive.get(&citation.content_sha256) else {
            return Vec::new();
        };
        let Some(doc) = docs.get(&citation.content_sha256) else {
            return Vec::new();
        };
        if text
            .quote(citation.sentence, citation.sentence_end)
            .is_none()
        {
            return Vec::new();
        }
        sources.push(QuoteSource {
            title: doc.title.clone(),
            note: source_note(Some(doc), &text, citation.sentence, citation.sentence_end),
        });
    }
    sources
}

/// What a reader is told of where a unit stands: its document's date and status and,
/// for a list item or table row (one sentence, a whole block without a final stop or
/// opening with a list marker),
/// the headings above it — a sentence speaks for itself, and its headings would cost
/// tokens on every unit. The extractor's candidates and the judge's quotes share it.
pub(crate) fn source_note(
    doc: Option<&DocMeta>,
    text: &ArchivedText,
    sentence: u32,
    sentence_end: Option<u32>,
) -> SourceNote {
    let (start, end) = text
        .sentences
        .get(sentence as usize)
        .map_or((0, 0), |s| (s.start, s.end));
    // A numbered step ending in a full stop ("4. Read the journal file and roll back
    // the changes.") needs its headings as much as a row does.
    let fragment = sentence_end.is_none()
        && (crate::units::is_fragment_at(&text.text, start, end)
            || crate::units::is_list_item_at(&text.text, start, end));
    let lead_in = sentence_end
        .is_none()
        .then(|| crate::units::lead_in(text, doc.map(|d| &d.outline), sentence))
        .flatten()
        .and_then(|at| text.quote(at, None))
        .map(deepr_tasks::one_line);
    SourceNote {
        headings: doc
            .filter(|_| fragment)
            .map(|d| d.outline.heading_path(&text.text, start))
            .unwrap_or_default(),
        date: doc.and_then(|d| d.date.clone()),
        status: doc.and_then(|d| d.outline.status.clone()),
        lead_in,
    }
}

/// `citations` with each list item's lead-in cited before it (once per claim): the
/// quotes then say what the item is a condition or a step of, and prose that writes
/// "… the following requirements: the PRAGMA journal_mode is not OFF" stands on them.
pub(crate) fn with_lead_ins(
    citations: Vec<SentenceRef>,
    scored: &ScoreOut,
    archive: &dyn TextArchive,
) -> Vec<SentenceRef> {
    let mut texts: BTreeMap<String, Option<deepr_orchestrator::ArchivedText>> = BTreeMap::new();
    let mut out: Vec<SentenceRef> = Vec::new();
    for citation in citations {
        let text = texts
            .entry(citation.content_sha256.clone())
            .or_insert_with(|| archive.get(&citation.content_sha256));
        let outline = scored
            .sources
            .iter()
            .find(|s| s.doc.content_sha256 == citation.content_sha256)
            .map(|s| &s.doc.outline);
        let lead_in = match (
            text.as_ref(),
            citation.sentence_end,
            &citation.written_quote,
        ) {
            (Some(text), None, None) => crate::units::lead_in(text, outline, citation.sentence),
            _ => None,
        };
        if let Some(at) = lead_in {
            let reference = SentenceRef {
                sentence: at,
                sentence_end: None,
                written_quote: None,
                content_sha256: citation.content_sha256.clone(),
            };
            if !out.contains(&reference) {
                out.push(reference);
            }
        }
        if !out.contains(&citation) {
            out.push(citation);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use deepr_orchestrator::{ArchivedText, Outline};

    use super::*;
    use crate::types::SentenceRef;

    struct Archive(ArchivedText);

    impl TextArchive for Archive {
        fn get(&self, content_sha256: &str) -> Option<ArchivedText> {
            (content_sha256 == self.0.content_sha256).then(|| self.0.clone())
        }
    }

    #[test]
    fn a_row_is_shown_under_its_headings_and_a_written_quote_under_nothing() {
        let text = ArchivedText::new(
            "FY26 Budget\n\nSpending by function\n\nFunction: Total · FY26 Budget ($M): 212.4\n\n\
             The board adopted the budget in June.",
        );
        let sha = text.content_sha256.clone();
        let doc = DocMeta {
            doc_key: "budget.xlsx".into(),
            locator: "budget.xlsx".into(),
            title: "FY26 Budget".into(),
            content_sha256: sha.clone(),
            date: Some("2026-06-20".into()),
            authority: 0.5,
            outline: Outline {
                status: Some("draft".into()),
                headings: vec![(0, 1), (13, 2)],
                ..Default::default()
            },
        };
        let docs = BTreeMap::from([(sha.clone(), doc)]);
        let archive = Archive(text);
        let cite = |sentence: u32, written: Option<&str>| SentenceRef {
            content_sha256: sha.clone(),
            sentence,
            sentence_end: None,
            written_quote: written.map(str::to_string),
        };
        let claim = |citations: Vec<SentenceRef>| ClaimDraft {
            id: "q1-c1".into(),
            subquestion: "q1".into(),
            text: "The budget totals $212.4M.".into(),
            citations,
        };
        let sources = quote_sources(&claim(vec![cite(2, None), cite(3, None)]), &docs, &archive);
        assert_eq!(sources.len(), 2, "{sources:?}");
        assert_eq!(sources[0].title, "FY26 Budget");
        assert_eq!(
            sources[0].note.headings,
            ["FY26 Budget", "Spending by function"]
        );
        assert_eq!(sources[0].note.status.as_deref(), Some("draft"));
        // A sentence speaks for itself: no headings.
        assert!(sources[1].note.headings.is_empty());
        // A quote the model wrote, or a document no score step ranked: no sources at all.
        assert!(
            quote_sources(&claim(vec![cite(2, Some("Total 212.4"))]), &docs, &archive).is_empty()
        );
        assert!(quote_sources(&claim(vec![cite(2, None)]), &BTreeMap::new(), &archive).is_empty());
    }

    #[test]
    fn a_claim_citing_list_items_cites_their_lead_in_once_before_them() {
        let text = ArchivedText::new(
            "A journal is hot when all of the following hold:\n\n1. It exists\n\n\
             2. It is not empty\n\nThe reader rolls it back.",
        );
        let sha = text.content_sha256.clone();
        let archive = Archive(text);
        let cite = |sentence: u32| SentenceRef {
            content_sha256: sha.clone(),
            sentence,
            sentence_end: None,
            written_quote: None,
        };
        let cited = with_lead_ins(
            vec![cite(1), cite(2), cite(3)],
            &ScoreOut::default(),
            &archive,
        );
        assert_eq!(cited, [cite(0), cite(1), cite(2), cite(3)]);
        // A prose sentence has no lead-in.
        assert_eq!(
            with_lead_ins(vec![cite(3)], &ScoreOut::default(), &archive),
            [cite(3)]
        );
    }

    #[test]
    fn a_numbered_step_is_shown_under_its_headings_and_after_its_lead_in() {
        let text = ArchivedText::new(
            "Recovery\n\nA hot journal is rolled back as follows:\n\n1. Take a lock.\n\n\
             2. Read the journal file and roll back the changes.",
        );
        let doc = DocMeta {
            doc_key: "r.md".into(),
            locator: "r.md".into(),
            title: "Recovery".into(),
            content_sha256: text.content_sha256.clone(),
            date: None,
            authority: 0.5,
            outline: Outline {
                headings: vec![(0, 1)],
                ..Default::default()
            },
        };
        let note = source_note(Some(&doc), &text, 3, None);
        assert_eq!(note.headings, ["Recovery"]);
        assert_eq!(
            note.lead_in.as_deref(),
            Some("A hot journal is rolled back as follows:")
        );
    }
}
