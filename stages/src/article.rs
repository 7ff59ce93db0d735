//! The article: the written summary and sections (node outputs) → the prose the
//! report shows, with no sentence repeated anywhere in its body; and how long it is.

use std::collections::BTreeSet;

use deepr_evidence::report::{Article, Paragraph, ProseSentence, Section};

use crate::research::ResearchResult;

/// Most sentences in the summary's first (answer) paragraph; the rest follow in a
/// second one.
pub const ANSWER_SENTENCES: usize = 5;

/// The article from the written summary and sections. The body never repeats a
/// sentence: the summary comes first, and a later sentence whose text (normalised) is
/// already in the body is left out (its claim stays cited where it first appeared);
/// a paragraph or section left empty is left out.
pub fn build_article(result: &ResearchResult) -> Article {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut fresh = |paragraphs: Vec<Paragraph>| -> Vec<Paragraph> {
        paragraphs
            .into_iter()
            .map(|p| Paragraph {
                sentences: p
                    .sentences
                    .into_iter()
                    .filter(|s| seen.insert(deepr_evidence::normalise(&s.text)))
                    .collect(),
            })
            .filter(|p| !p.sentences.is_empty())
            .collect()
    };
    let summary_sentences: Vec<ProseSentence> = result
        .summary
        .iter()
        .map(|p| ProseSentence {
            text: p.text.clone(),
            claims: p.claim_ids.clone(),
        })
        .collect();
    let summary = fresh(
        summary_sentences
            .chunks(ANSWER_SENTENCES)
            .map(|chunk| Paragraph {
                sentences: chunk.to_vec(),
            })
            .collect(),
    );
    let sections = result
        .sections
        .iter()
        .map(|s| Section {
            subquestions: s.subquestions.clone(),
            heading: s.heading.clone(),
            paragraphs: fresh(s.paragraphs.clone()),
            degraded: s.degraded.clone(),
        })
        .filter(|s| !s.paragraphs.is_empty())
        .collect();
    let mut dropped = result.summary_dropped.clone();
    dropped.extend(
        result
            .sections
            .iter()
            .flat_map(|s| s.dropped.iter().cloned()),
    );
    Article {
        summary,
        sections,
        dropped,
    }
}

/// Words in the article's body (summary and sections; footnotes not counted).
pub fn body_words(article: &Article) -> usize {
    article
        .summary
        .iter()
        .chain(article.sections.iter().flat_map(|s| &s.paragraphs))
        .flat_map(|p| &p.sentences)
        .map(|s| s.text.split_whitespace().count())
        .sum()
}
