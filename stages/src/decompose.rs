//! decompose: topic → subquestions (strong model), grounded in a first "scout"
//! search whose document titles and headings are shown to the model.

use std::collections::BTreeSet;

use deepr_evidence::report::Coverage;
use deepr_orchestrator::terms::{content_terms, is_stop_word, words};
use deepr_orchestrator::{
    ArchivedText, Fetcher, LedgerEntry, LlmProvider, SearchProvider, TextArchive, Tier,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::llm::{call_task, TaskCall};
use crate::types::{DecomposeOut, ScoutOut, Subq};

pub const STAGE_VERSION: u32 = 1;
/// Documents the scout reads headings from.
pub const SCOUT_DOCS: usize = 6;
/// Headings shown to the planner.
pub const MAX_HEADINGS: usize = 40;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub subquestions: Vec<String>,
}

/// Search the topic itself and collect titles and headings of the top documents. The
/// documents are fetched at once (at most `io_concurrency`), read in rank order.
pub async fn scout(
    node_id: &str,
    topic: &str,
    search: &[std::sync::Arc<dyn SearchProvider>],
    fetcher: &dyn Fetcher,
    archive: &dyn TextArchive,
    io_concurrency: usize,
) -> (ScoutOut, Vec<LedgerEntry>) {
    let (retrieved, mut calls) = crate::retrieve::search_all(
        node_id,
        "scout",
        &[topic.to_string()],
        search,
        10,
        io_concurrency,
    )
    .await;
    let top = retrieved.hits.iter().take(SCOUT_DOCS);
    let fetches = top
        .map(|fused| async move {
            let started = tokio::time::Instant::now();
            let outcome = fetcher.fetch(&fused.hit).await;
            let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            (outcome, elapsed_ms)
        })
        .collect();
    let fetched = crate::concurrent::in_order(fetches, io_concurrency).await;
    let mut docs = Vec::new();
    let mut headings = Vec::new();
    let mut seen = BTreeSet::new();
    for (outcome, elapsed_ms) in fetched {
        calls.push(LedgerEntry::io_call(
            node_id,
            "scout",
            "fetch",
            "fetch".into(),
            elapsed_ms,
            outcome.status.as_str(),
        ));
        let Some(doc) = outcome.doc else { continue };
        if let Some(text) = archive.get(&doc.content_sha256) {
            for heading in std::iter::once(doc.title.clone()).chain(heading_lines(&text)) {
                let key = heading.to_lowercase();
                if !heading.is_empty() && seen.insert(key) && headings.len() < MAX_HEADINGS {
                    headings.push(heading);
                }
            }
        }
        docs.push(doc);
    }
    let coverage: Vec<Coverage> = retrieved.coverage;
    (
        ScoutOut {
            docs,
            headings,
            coverage,
        },
        calls,
    )
}

/// Heading-like lines of an archived text: short, no final punctuation, mostly
/// capitalised words, at least two content words.
pub fn heading_lines(text: &ArchivedText) -> Vec<String> {
    let mut out = Vec::new();
    for index in 0..text.sentences.len() {
        let Some(sentence) = text.sentence(u32::try_from(index).unwrap_or(u32::MAX)) else {
            continue;
        };
        let line = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
        let line = line
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
            .to_string();
        let word_count = line.split_whitespace().count();
        if !(2..=8).contains(&word_count) || line.ends_with(['.', ':', ';', ',', '?', '!', ')']) {
            continue;
        }
        let capitalised = line
            .split_whitespace()
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .count();
        if capitalised * 2 >= word_count
            && content_terms(&line).len() >= 2
            && line.chars().all(|c| !c.is_control())
        {
            out.push(line);
        }
    }
    out
}

/// Subquestion count bounds for a depth: quick 3–5, standard 5–10, deep 10–20.
pub fn bounds(depth: &str) -> (usize, usize, usize) {
    match depth {
        "quick" => (3, 5, 4),
        "deep" => (10, 20, 12),
        _ => (5, 10, 6),
    }
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    depth: &str,
    scout: &ScoutOut,
    llm: &dyn LlmProvider,
) -> (DecomposeOut, Vec<LedgerEntry>) {
    let (min, max, target) = bounds(depth);
    let headings = if scout.headings.is_empty() {
        "(the first search found no documents)".to_string()
    } else {
        scout
            .headings
            .iter()
            .map(|h| format!("- {}", deepr_prompts::quoted(h)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let task_input = json!({"topic": topic, "min": min, "max": max, "target": target, "headings": scout.headings});
    let result = call_task::<Answer, _>(
        llm,
        TaskCall {
            node_id,
            stage: "decompose",
            prompt,
            tier: Tier::Strong,
            values: vec![
                ("topic", topic.to_string()),
                ("min", min.to_string()),
                ("max", max.to_string()),
                ("headings", headings),
            ],
            task_input,
        },
        |answer: &Answer| {
            let usable = answer
                .subquestions
                .iter()
                .filter(|q| !q.trim().is_empty())
                .count();
            if usable < min || usable > max {
                Err(format!(
                    "expected {min} to {max} subquestions, got {usable}"
                ))
            } else {
                Ok(())
            }
        },
    )
    .await;
    let mut seen = BTreeSet::new();
    let subquestions = result
        .value
        .subquestions
        .iter()
        .map(|q| clean_question(q))
        .filter(|q| !q.is_empty() && seen.insert(q.to_lowercase()))
        .take(max)
        .enumerate()
        .map(|(i, text)| Subq {
            id: format!("q{}", i + 1),
            text,
            round: 0,
            parent: None,
        })
        .collect();
    (
        DecomposeOut {
            subquestions,
            degraded: result.degraded,
        },
        result.calls,
    )
}

/// One line, bounded length, no control characters: model text is data.
pub fn clean_question(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = line.trim_start_matches(|c: char| {
        c == '-' || c == '*' || c.is_ascii_digit() || c == '.' || c == ')' || c == ' '
    });
    line.chars()
        .filter(|c| !c.is_control())
        .take(300)
        .collect::<String>()
        .trim()
        .to_string()
}

// ---------------------------------------------------------------- offline heuristic

/// Offline planner: subquestions from the topic's own clauses, then from the headings
/// of the documents the scout found (most topic-related first), then generic probes of
/// the topic's key terms — so two topics over one corpus get different plans.
pub fn offline_answer(input: &Value) -> Value {
    let topic = input["topic"].as_str().unwrap_or_default();
    let min = input["min"].as_u64().unwrap_or(5) as usize;
    let max = input["max"].as_u64().unwrap_or(10) as usize;
    let target = (input["target"].as_u64().unwrap_or(min as u64) as usize).clamp(min, max);
    let headings: Vec<String> = input["headings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|h| h.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();

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
    let topic_terms: BTreeSet<String> = content_terms(topic).into_iter().collect();

    let mut ranked: Vec<(usize, usize, &String)> = headings
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let overlap = content_terms(h)
                .iter()
                .filter(|t| topic_terms.contains(*t))
                .count();
            (overlap, i, h)
        })
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
    json!({"subquestions": questions})
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
            return clause[prefix.len()..].trim().to_string();
        }
    }
    clause.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn plan_size_follows_depth() {
        for depth in ["quick", "standard", "deep"] {
            let (min, max, target) = bounds(depth);
            let answer = offline_answer(
                &json!({"topic": "rollback journal durability", "min": min, "max": max, "target": target, "headings": []}),
            );
            let n = answer["subquestions"].as_array().map(Vec::len).unwrap_or(0);
            assert!((min..=max).contains(&n), "{depth}: {n}");
        }
    }

    #[test]
    fn two_topics_over_one_corpus_get_different_plans() {
        let headings = json!([
            "Hot Rollback Journals",
            "Write-Ahead Log Checkpoints",
            "Page Cache Spill",
            "Locking States"
        ]);
        let plan = |topic: &str| {
            offline_answer(
                &json!({"topic": topic, "min": 5, "max": 10, "target": 6, "headings": headings}),
            )
        };
        let a = plan("How are hot rollback journals replayed?");
        let b = plan("When does a write-ahead log checkpoint run?");
        assert_ne!(a, b);
        // Headings related to the topic come first.
        assert!(
            a["subquestions"][1]
                .as_str()
                .is_some_and(|q| q.contains("Hot Rollback Journals")),
            "{a}"
        );
        assert!(
            b["subquestions"][1]
                .as_str()
                .is_some_and(|q| q.contains("Write-Ahead Log Checkpoints")),
            "{b}"
        );
    }

    #[test]
    fn clean_question_strips_markup_and_controls() {
        assert_eq!(clean_question("1. What\tis\u{7} WAL?\n"), "What is WAL?");
    }
}
