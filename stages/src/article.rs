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
/// nor a fact: a section's sentence restating an earlier section's figures in most of
/// its words is left out too; a paragraph or section left empty is left out.
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
    // Every fact once: a section's sentence that restates figures an earlier section
    // stated, in the same words, is left out.
    let mut stated: Vec<Stated> = Vec::new();
    let mut sections: Vec<Section> = result
        .sections
        .iter()
        .map(|s| Section {
            subquestions: s.subquestions.clone(),
            heading: s.heading.clone(),
            paragraphs: not_restated(fresh(s.paragraphs.clone()), &mut stated),
            degraded: s.degraded.clone(),
        })
        .filter(|s| !s.paragraphs.is_empty())
        .collect();
    distinct_headings(&mut sections, result);
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

/// A sentence of an earlier section: its figures and its content words.
struct Stated {
    figures: BTreeSet<String>,
    terms: BTreeSet<String>,
}

/// Share of a sentence's content words an earlier sentence must hold for the sentence to
/// restate it (with each of its figures).
const RESTATED_SHARE: f64 = 0.6;

/// The paragraphs without the sentences that restate an earlier section's: each of
/// their figures (no years) stated by an earlier section's sentence that holds most of
/// their words. What is kept is remembered in `stated`.
fn not_restated(paragraphs: Vec<Paragraph>, stated: &mut Vec<Stated>) -> Vec<Paragraph> {
    let mut kept_here: Vec<Stated> = Vec::new();
    let paragraphs = paragraphs
        .into_iter()
        .map(|p| Paragraph {
            sentences: p
                .sentences
                .into_iter()
                .filter(|s| {
                    let this = stated_of(&s.text);
                    let restated = !this.figures.is_empty()
                        && this.figures.iter().all(|figure| {
                            stated.iter().any(|earlier| {
                                earlier.figures.contains(figure)
                                    && shared_share(&this.terms, &earlier.terms) >= RESTATED_SHARE
                            })
                        });
                    if !restated {
                        kept_here.push(this);
                    }
                    !restated
                })
                .collect(),
        })
        .filter(|p| !p.sentences.is_empty())
        .collect();
    stated.extend(kept_here);
    paragraphs
}

fn stated_of(text: &str) -> Stated {
    let is_year = |n: &str| n.len() == 4 && (n.starts_with("19") || n.starts_with("20"));
    Stated {
        figures: deepr_evidence::terms::numbers(text)
            .into_iter()
            .filter(|n| !is_year(n))
            .collect(),
        terms: deepr_evidence::terms::content_terms(text)
            .into_iter()
            .collect(),
    }
}

/// Share of `terms` that `earlier` holds.
fn shared_share(terms: &BTreeSet<String>, earlier: &BTreeSet<String>) -> f64 {
    if terms.is_empty() {
        return 0.0;
    }
    terms.intersection(earlier).count() as f64 / terms.len() as f64
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

/// Headings a reader can tell apart: a heading cut short of its subject (at its first
/// clause: "People side" for "People side, from headcount, hiring and attrition to …")
/// that another section's heading repeats gets its subject back, cut at the last whole
/// word that fits a heading.
fn distinct_headings(sections: &mut [Section], result: &ResearchResult) {
    let key = |heading: &str| heading.trim().to_lowercase();
    let subject = |section: &Section| -> Option<String> {
        let id = section.subquestions.first()?;
        let subq = result.subquestions.iter().find(|s| &s.id == id)?;
        deepr_tasks::brief::asked_subject(&subq.text).map(str::to_string)
    };
    for i in 0..sections.len() {
        let heading = key(&sections[i].heading);
        let repeated = sections
            .iter()
            .enumerate()
            .any(|(j, other)| j != i && key(&other.heading) == heading);
        let Some(subject) = subject(&sections[i]).filter(|s| repeated && key(s) != heading) else {
            continue;
        };
        sections[i].heading = whole_words(&subject, deepr_tasks::write_section::MAX_HEADING_CHARS);
    }
}

/// `text` cut at the last whole word within `max` characters.
fn whole_words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let mut words: Vec<&str> = cut
        .rsplit_once(' ')
        .map_or(cut.as_str(), |(head, _)| head)
        .split(' ')
        .collect();
    // A heading does not end on a word that leads to the one cut off ("… any dependence
    // on").
    while words.len() > 1
        && words
            .last()
            .is_some_and(|w| deepr_evidence::terms::is_stop_word(&w.to_lowercase()))
    {
        words.pop();
    }
    words
        .join(" ")
        .trim_end_matches([',', ';', ':'])
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Subq;

    fn section(id: &str, heading: &str) -> Section {
        Section {
            subquestions: vec![id.into()],
            heading: heading.into(),
            paragraphs: vec![],
            degraded: None,
        }
    }

    #[test]
    fn a_heading_cut_to_one_another_section_repeats_gets_its_subject_back() {
        let ask = |id: &str, subject: &str| Subq {
            id: id.into(),
            text: deepr_tasks::brief::subject_question(subject, Some("Quillfeather")),
            round: 0,
            parent: None,
            queries: Vec::new(),
        };
        let whole = "People side, from headcount, hiring and attrition to leadership changes \
                     and any dependence on particular individuals";
        let result = ResearchResult {
            subquestions: vec![
                ask("q1", whole),
                ask("q2", "People side"),
                ask("q3", "Churn"),
            ],
            ..ResearchResult::default()
        };
        let mut sections = [
            section("q1", "People side"),
            section("q2", "People side"),
            section("q3", "Churn"),
        ];
        distinct_headings(&mut sections, &result);
        let headings: Vec<&str> = sections.iter().map(|s| s.heading.as_str()).collect();
        assert_eq!(
            headings,
            [
                // Cut at a whole word, and not on one that leads to the word cut off.
                "People side, from headcount, hiring and attrition to leadership changes and \
                 any dependence",
                "People side",
                "Churn",
            ]
        );
        assert!(headings[0].chars().count() <= deepr_tasks::write_section::MAX_HEADING_CHARS);
    }

    #[test]
    fn a_figure_restated_in_a_later_section_is_stated_once() {
        let sentence = |text: &str| ProseSentence {
            text: text.into(),
            claims: vec![],
        };
        let paragraph = |texts: &[&str]| Paragraph {
            sentences: texts.iter().map(|t| sentence(t)).collect(),
        };
        let mut stated = Vec::new();
        let first = not_restated(
            vec![paragraph(&[
                "The API compatibility rate reached 97.4% in the 2026 audit.",
            ])],
            &mut stated,
        );
        assert_eq!(first.len(), 1);
        let later = not_restated(
            vec![paragraph(&[
                "In the 2026 audit the API compatibility rate reached 97.4%.",
                "Support tickets fell to 1,204 in the same audit.",
                "Churn stayed at 97.4% of the base plan for the renewal cohort.",
            ])],
            &mut stated,
        );
        let kept: Vec<&str> = later[0].sentences.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            kept,
            [
                "Support tickets fell to 1,204 in the same audit.",
                "Churn stayed at 97.4% of the base plan for the renewal cohort."
            ]
        );
    }
}
