//! Decompose: a brief's parts first (`deepr_tasks::brief`: at least one subquestion per
//! part, named after the part's subject, the brief's subject added — never a copied
//! instruction), else the topic's own clauses; then headings of the documents the
//! scout found (most topic-related first), then generic probes of the topic's key
//! terms — so two topics over one corpus get different plans.

use std::collections::BTreeSet;

use deepr_evidence::terms::{content_terms, is_stop_word, words};
use deepr_tasks::decompose::{Answer, Decompose, Input};

use crate::Heuristic;

impl Heuristic for Decompose {
    /// 2: a heading becomes a subquestion only when it shares a topic term that is not
    /// in most headings (a corpus-wide word such as the product's name says nothing).
    /// 3: a brief's parts are planned first, one or more subquestions each.
    /// 4: a brief's probes name its context, never its instructions or opening verbs.
    const VERSION: u32 = 4;

    fn answer(input: &Input) -> Answer {
        let topic = input.topic.as_str();
        let (min, max) = (input.min, input.max);
        let target = input.target.clamp(min, max.max(min));
        let mut questions: Vec<String> = Vec::new();
        let mut seen_terms: Vec<BTreeSet<String>> = Vec::new();
        let mut push = |q: String, questions: &mut Vec<String>| {
            let terms: BTreeSet<String> = content_terms(&q).into_iter().collect();
            if terms.is_empty() || seen_terms.contains(&terms) || questions.len() >= max {
                return;
            }
            seen_terms.push(terms);
            questions.push(q);
        };

        let brief = deepr_tasks::brief::parse_brief(topic);
        let clauses = if brief.parts.len() >= 2 {
            for question in part_questions(&brief, target) {
                push(question, &mut questions);
            }
            brief.parts.clone()
        } else {
            let clauses = topic_clauses(topic);
            for clause in &clauses {
                push(as_question(clause), &mut questions);
            }
            clauses
        };
        let focus = clauses
            .first()
            .map(|c| strip_question_words(c))
            .unwrap_or_else(|| topic.to_string());
        let heading_terms: Vec<BTreeSet<String>> = input
            .headings
            .iter()
            .map(|h| content_terms(h).into_iter().collect())
            .collect();
        // Topic terms that tell headings apart: found in at most half of them.
        let topic_terms: BTreeSet<String> = content_terms(topic)
            .into_iter()
            .filter(|t| {
                heading_terms.iter().filter(|h| h.contains(t)).count() * 2
                    <= heading_terms.len().max(1)
            })
            .collect();

        let mut ranked: Vec<(usize, usize, &String)> = input
            .headings
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let overlap = heading_terms[i]
                    .iter()
                    .filter(|t| topic_terms.contains(*t))
                    .count();
                (overlap, i, h)
            })
            .filter(|(overlap, _, _)| *overlap > 0)
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, _, heading) in ranked {
            if questions.len() >= target {
                break;
            }
            push(
                format!("What does the documentation say about “{heading}”?"),
                &mut questions,
            );
        }
        let key_terms: Vec<String> = words(&probe_text(&brief, topic))
            .into_iter()
            .filter(|w| !is_stop_word(w) && w.len() > 2)
            .collect();
        let probes = [
            "What are the limits and failure cases of",
            "How is performance affected by",
            "What are the alternatives to",
            "How is it configured:",
        ];
        'outer: for probe in probes {
            for term in &key_terms {
                if questions.len() >= min {
                    break 'outer;
                }
                push(format!("{probe} {term}?"), &mut questions);
            }
        }
        let mut n = 1;
        while questions.len() < min {
            questions.push(format!("What else is known about {focus} (aspect {n})?"));
            n += 1;
        }
        Answer {
            subquestions: questions,
        }
    }
}

/// What generic probes name: a question's own words; for a brief with parts, its context
/// (never its writing instructions) without the verb each sentence opens with
/// ("Research the …", "Assess the …").
fn probe_text(brief: &deepr_tasks::brief::Brief, topic: &str) -> String {
    if brief.parts.len() < 2 {
        return topic.to_string();
    }
    deepr_evidence::split_sentences(&brief.context)
        .iter()
        .filter_map(|s| s.text(&brief.context))
        .map(|sentence| sentence.split_once(' ').map_or("", |(_, rest)| rest))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One subquestion per part of a brief, named after the part's subject with the
/// brief's subject added; when the plan has room (`target`), a part joining two
/// subjects ("funding history and financial trajectory") gets one for each.
fn part_questions(brief: &deepr_tasks::brief::Brief, target: usize) -> Vec<String> {
    let subjects: Vec<String> = brief.parts.iter().map(|p| subject_of(p)).collect();
    let pairs: Vec<Option<(String, String)>> = subjects.iter().map(|s| split_pair(s)).collect();
    let room = target.saturating_sub(subjects.len());
    let mut split_left = room;
    let entity = brief.entities.first();
    let ask = |subject: &str| match entity {
        Some(entity) => format!("What does the documentation say about “{subject}” for {entity}?"),
        None => format!("What does the documentation say about “{subject}”?"),
    };
    let mut out = Vec::new();
    for (subject, pair) in subjects.iter().zip(pairs) {
        match pair {
            Some((first, second)) if split_left > 0 => {
                split_left -= 1;
                out.push(ask(&first));
                out.push(ask(&second));
            }
            _ => out.push(ask(subject)),
        }
    }
    out
}

/// A part's subject: without the possessive that stands for the brief's subject
/// ("the company's", "its"), capitalised.
fn subject_of(part: &str) -> String {
    let mut text = part.trim().to_string();
    let lowered = text.to_lowercase();
    for prefix in [
        "the company's ",
        "the company’s ",
        "its ",
        "their ",
        "the ",
        "our ",
    ] {
        // The prefix's bytes are ASCII; cut the original only on one of its boundaries.
        if let Some(rest) = text
            .get(prefix.len()..)
            .filter(|_| lowered.starts_with(prefix))
        {
            text = rest.to_string();
            break;
        }
    }
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

/// "Funding history and current financial trajectory" → both subjects, when the part
/// joins exactly two (no commas, one "and", words on both sides).
fn split_pair(subject: &str) -> Option<(String, String)> {
    if subject.contains(',') || subject.matches(" and ").count() != 1 {
        return None;
    }
    let (first, second) = subject.split_once(" and ")?;
    if content_terms(first).is_empty() || content_terms(second).is_empty() {
        return None;
    }
    Some((subject_of(first), subject_of(second)))
}

/// Split a topic into clauses at question marks, semicolons and ", and" joins.
pub fn topic_clauses(topic: &str) -> Vec<String> {
    let mut clauses = Vec::new();
    for part in topic.split(['?', ';', '\n']) {
        for piece in part.split(", and ").flat_map(|p| {
            p.split(" and what ").enumerate().map(|(i, s)| {
                if i > 0 {
                    format!("what {s}")
                } else {
                    s.to_string()
                }
            })
        }) {
            let piece = piece.trim().trim_matches(',').trim();
            if !content_terms(piece).is_empty() {
                clauses.push(piece.to_string());
            }
        }
    }
    if clauses.is_empty() && !topic.trim().is_empty() {
        clauses.push(topic.trim().to_string());
    }
    clauses
}

fn as_question(clause: &str) -> String {
    let mut chars = clause.chars();
    let first: String = chars
        .next()
        .map(|c| c.to_uppercase().collect())
        .unwrap_or_default();
    let body = format!("{first}{}", chars.as_str());
    if body.ends_with('?') {
        body
    } else {
        format!("{body}?")
    }
}

fn strip_question_words(clause: &str) -> String {
    let lowered = clause.to_lowercase();
    for prefix in [
        "how does ",
        "how do ",
        "how is ",
        "how are ",
        "what is ",
        "what are ",
        "what does ",
        "why does ",
        "why is ",
        "when does ",
        "which ",
        "what ",
        "how ",
        "why ",
    ] {
        if lowered.starts_with(prefix) {
            // The prefix is ASCII, but lower-casing may have changed byte lengths
            // before it: cut only on a character boundary of the original.
            if let Some(rest) = clause.get(prefix.len()..) {
                return rest.trim().to_string();
            }
        }
    }
    clause.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(topic: &str, min: usize, max: usize, target: usize, headings: &[&str]) -> Vec<String> {
        Decompose::answer(&Input {
            topic: topic.into(),
            min,
            max,
            target,
            headings: headings.iter().map(|h| h.to_string()).collect(),
            parts: Vec::new(),
        })
        .subquestions
    }

    #[test]
    fn a_brief_is_planned_by_its_parts_in_order() {
        let brief = "You are preparing a due-diligence brief on Kestrelmoor Robotics, Inc., a Dayton-based robotics company. Write a brief covering: (1) the company's funding history and current financial trajectory, (2) its product line and roadmap including pricing, (3) operational performance and key risks, and (4) how it is positioned against Swiftlane Robotics, MediRover and Corvid Logistics. Be specific about numbers, dates and names, and cite your sources.";
        let headings = ["Kestrelmoor Brand Guidelines (excerpt)", "Annual leave"];
        let questions = plan(brief, 5, 10, 7, &headings);
        let subjects: Vec<&str> = questions
            .iter()
            .map(|q| {
                q.split('“')
                    .nth(1)
                    .and_then(|r| r.split('”').next())
                    .unwrap_or(q)
            })
            .collect();
        assert_eq!(
            subjects,
            [
                "Funding history",
                "Current financial trajectory",
                "Product line",
                "Roadmap including pricing",
                "Operational performance",
                "Key risks",
                "How it is positioned against Swiftlane Robotics, MediRover and Corvid Logistics",
            ]
        );
        assert!(
            questions
                .iter()
                .all(|q| q.contains("for Kestrelmoor Robotics?")),
            "{questions:?}"
        );
        assert!(!questions
            .iter()
            .any(|q| q.contains("Cite") || q.contains("Brand")));
        // A smaller plan keeps one subquestion per part.
        assert_eq!(plan(brief, 3, 5, 4, &headings).len(), 4);
    }

    #[test]
    fn clauses_split_compound_topics() {
        assert_eq!(
            topic_clauses(
                "How does SQLite guarantee atomic commits, and what changes in WAL mode?"
            ),
            [
                "How does SQLite guarantee atomic commits",
                "what changes in WAL mode"
            ]
        );
    }

    #[test]
    fn plan_size_follows_the_bounds() {
        for (min, max, target) in [(3, 5, 4), (5, 10, 6), (10, 20, 12)] {
            let n = plan("rollback journal durability", min, max, target, &[]).len();
            assert!((min..=max).contains(&n), "{min}..{max}: {n}");
        }
    }

    #[test]
    fn two_topics_over_one_corpus_get_different_plans() {
        let headings = [
            "Hot Rollback Journals",
            "Write-Ahead Log Checkpoints",
            "Page Cache Spill",
            "Locking States",
        ];
        let a = plan(
            "How are hot rollback journals replayed?",
            5,
            10,
            6,
            &headings,
        );
        let b = plan(
            "When does a write-ahead log checkpoint run?",
            5,
            10,
            6,
            &headings,
        );
        assert_ne!(a, b);
        // Headings related to the topic come first.
        assert!(a[1].contains("Hot Rollback Journals"), "{a:?}");
        assert!(b[1].contains("Write-Ahead Log Checkpoints"), "{b:?}");
    }

    #[test]
    fn bounds_out_of_order_do_not_panic() {
        // The input is data: min above max must not reach `clamp`'s assertion.
        let questions = plan("how does the journal work", 5, 3, 4, &[]);
        assert!(questions.len() >= 3);
    }
}
