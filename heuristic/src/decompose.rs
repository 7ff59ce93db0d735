//! Decompose: subquestions from the topic's own clauses, then from the headings of the
//! documents the scout found (most topic-related first), then generic probes of the
//! topic's key terms — so two topics over one corpus get different plans.

use std::collections::BTreeSet;

use deepr_orchestrator::terms::{content_terms, is_stop_word, words};
use deepr_tasks::decompose::{Answer, Decompose, Input};

use crate::Heuristic;

impl Heuristic for Decompose {
    /// 2: a heading becomes a subquestion only when it shares a topic term that is not
    /// in most headings (a corpus-wide word such as the product's name says nothing).
    const VERSION: u32 = 2;

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

        let clauses = topic_clauses(topic);
        for clause in &clauses {
            push(as_question(clause), &mut questions);
        }
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
        let key_terms: Vec<String> = words(topic)
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
        })
        .subquestions
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
