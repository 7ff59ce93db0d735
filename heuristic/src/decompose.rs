//! Decompose: a brief's parts first (`deepr_tasks::brief`: at least one subquestion per
//! part — neighbouring parts share one when there are more parts than the plan allows —
//! named after the part's subject, the brief's subject added, never a copied
//! instruction), else the topic's own clauses; then headings of the documents the
//! scout found (most topic-related first), then, for a question, generic probes of its
//! key terms — so two topics over one corpus get different plans.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::terms::{content_terms, is_stop_word, words};
use deepr_tasks::brief::{part_subjects, subject_question, topic_clauses};
use deepr_tasks::decompose::{Answer, Decompose, Input};

use crate::Heuristic;

impl Heuristic for Decompose {
    /// 2: a heading becomes a subquestion only when it shares a topic term that is not
    /// in most headings (a corpus-wide word such as the product's name says nothing).
    /// 3: a brief's parts are planned first, one or more subquestions each.
    /// 4: a brief's probes name its context, never its instructions or opening verbs.
    /// 5: a brief is planned to the depth's maximum, a part's listed subjects get their
    /// own subquestions, and the brief's subject's name makes no heading a subquestion.
    /// 6: subjects from `deepr_tasks::brief::part_subjects` (clauses whole, colon lists);
    /// more parts than the plan allows share subquestions; no generic probes for a brief.
    /// 7: a question's context and persona lines ("Context: the report is for …")
    /// and its instructions are no clauses to plan: only the question is.
    /// 8: a document's title is no heading to plan; a heading is asked as an aspect of
    /// the clause (part) it shares most words with; each subquestion's first queries
    /// come with it (the query step's own answer).
    /// 9: a part that lists subjects after a colon is asked by them, not split into the
    /// two clauses framing them; a listed clause is asked with the part's head ("Two
    /// factories: how much each handled…").
    const VERSION: u32 = 9;

    fn answer(input: &Input) -> Answer {
        let brief = deepr_tasks::brief::parse_brief(&input.topic);
        // A question with instructions or a persona around it is planned from the
        // question alone.
        let topic = match brief.parts.as_slice() {
            [question] if !brief.instructions.is_empty() => question.as_str(),
            _ => input.topic.as_str(),
        };
        let (min, max) = (input.min, input.max);
        let target = plan_size(input, &brief);
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
        let subjects = clause_subjects(&brief, &clauses);
        let titled = document_titles(&input.headings, &input.titles);
        let ranked = related_headings(&input.headings, &input.titles, &brief, topic);
        for heading in ranked {
            if questions.len() >= target {
                break;
            }
            let title = titled.get(heading.as_str()).copied();
            push(heading_question(heading, title, &subjects), &mut questions);
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
        // Generic probes explore a question's terms; a brief's parts already say what to
        // ask about.
        let probes = if brief.has_parts() {
            &probes[..0]
        } else {
            &probes[..]
        };
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
        // The first searches come with the plan, written as the query step would:
        // round 0 then makes no query call per subquestion.
        let queries = questions
            .iter()
            .map(|q| {
                deepr_tasks::subquery::Subquery::answer(&deepr_tasks::subquery::Input {
                    topic: input.topic.clone(),
                    subquestion: q.clone(),
                })
                .queries
            })
            .collect();
        Answer {
            subquestions: questions,
            queries,
        }
    }
}

/// The headings that share a term with the topic that tells headings apart (found in
/// at most half of them, and not the brief's subject's name: every document of its share
/// names it, so a title such as "Kestrelmoor Robotics, Inc. - Product Management" is no
/// subject of its own), most shared terms first, then in the scout's order.
fn related_headings<'h>(
    headings: &'h [String],
    titles: &[String],
    brief: &deepr_tasks::brief::Brief,
    topic: &str,
) -> Vec<&'h String> {
    // A document's title names the whole document ("Atomic Commit In SQLite", "Acme
    // B.V. - Company Overview"): no subject of a section.
    let titles: BTreeSet<String> = titles.iter().map(|t| t.trim().to_lowercase()).collect();
    let headings: Vec<&'h String> = headings
        .iter()
        .filter(|h| !titles.contains(&h.trim().to_lowercase()))
        .collect();
    let heading_terms: Vec<BTreeSet<String>> = headings
        .iter()
        .map(|h| content_terms(h).into_iter().collect())
        .collect();
    let entity_terms: BTreeSet<String> = brief
        .entities
        .first()
        .map(|e| content_terms(e).into_iter().collect())
        .unwrap_or_default();
    let topic_terms: BTreeSet<String> = content_terms(&brief_subject(brief, topic))
        .into_iter()
        .filter(|t| !entity_terms.contains(t))
        .filter(|t| {
            heading_terms.iter().filter(|h| h.contains(t)).count() * 2 <= heading_terms.len().max(1)
        })
        .collect();
    let mut ranked: Vec<(usize, usize, &String)> = headings
        .iter()
        .copied()
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
    ranked.into_iter().map(|(_, _, h)| h).collect()
}

/// What each clause of a question (each part of a brief) is about, as a section names
/// it ("How SQLite guarantees atomic commits", "Funding history").
fn clause_subjects(brief: &deepr_tasks::brief::Brief, clauses: &[String]) -> Vec<String> {
    if brief.parts.len() >= 2 {
        part_subjects(brief).into_iter().map(|p| p.whole).collect()
    } else {
        clauses
            .iter()
            .map(|c| crate::write_section::heading_for(&as_question(c)))
            .collect()
    }
}

/// The title of the document each heading stands in: the scout lists a document's
/// title, then its headings.
fn document_titles<'h>(headings: &'h [String], titles: &[String]) -> BTreeMap<&'h str, &'h str> {
    let titles: BTreeSet<String> = titles.iter().map(|t| t.trim().to_lowercase()).collect();
    let mut title: Option<&str> = None;
    let mut of = BTreeMap::new();
    for heading in headings {
        if titles.contains(&heading.trim().to_lowercase()) {
            title = Some(heading.as_str());
        } else if let Some(title) = title {
            of.insert(heading.as_str(), title);
        }
    }
    of
}

/// Words that say what a clause asks ("what changes in WAL mode"), not what about: a
/// heading that shares only them ("Changing Database Pages") is not about the clause.
const ASK_WORDS: &str =
    "change changes changed differ differs difference differences compare compares";

/// A document heading asked about as an aspect of the clause whose subject shares most
/// of its words — then most of its document title's (the first clause on a tie):
/// "What does the documentation say about “Single File Commit”, regarding how SQLite
/// guarantees atomic commits?". Its section is named after that subject and the
/// aspect, never after the document's heading alone
/// ([`crate::write_section::heading_for`]); the subject's words also rank its evidence.
fn heading_question(heading: &str, title: Option<&str>, subjects: &[String]) -> String {
    let heading_terms: BTreeSet<String> = content_terms(heading).into_iter().collect();
    let title_terms: BTreeSet<String> = title
        .map(content_terms)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let subject = subjects
        .iter()
        .enumerate()
        .max_by_key(|(i, s)| {
            let asks: BTreeSet<String> = content_terms(ASK_WORDS).into_iter().collect();
            let terms: Vec<String> = content_terms(s)
                .into_iter()
                .filter(|t| !asks.contains(t))
                .collect();
            let shared = |of: &BTreeSet<String>| terms.iter().filter(|t| of.contains(*t)).count();
            (
                shared(&heading_terms),
                shared(&title_terms),
                std::cmp::Reverse(*i),
            )
        })
        .map(|(_, s)| s.as_str());
    match subject {
        Some(subject) => {
            let mut chars = subject.chars();
            let lowered: String = match (chars.next(), chars.clone().next()) {
                (Some(first), Some(second)) if !second.is_uppercase() => {
                    first.to_lowercase().chain(chars).collect()
                }
                _ => subject.to_string(),
            };
            format!("What does the documentation say about “{heading}”, regarding {lowered}?")
        }
        None => format!("What does the documentation say about “{heading}”?"),
    }
}

/// What a topic is about: a brief's parts and context, never its writing instructions
/// ("a due-diligence brief" names no subject of the documents); a question itself.
fn brief_subject(brief: &deepr_tasks::brief::Brief, topic: &str) -> String {
    if brief.parts.len() >= 2 {
        format!("{} {}", brief.context, brief.parts.join(" "))
    } else {
        topic.to_string()
    }
}

/// How many subquestions to plan: the depth's target for a question; its maximum for a
/// brief with several parts, which asks for more than one question does (each part
/// and the subjects it lists get their own).
fn plan_size(input: &Input, brief: &deepr_tasks::brief::Brief) -> usize {
    let (min, max) = (input.min, input.max.max(input.min));
    if brief.parts.len() >= 2 {
        max
    } else {
        input.target.clamp(min, max)
    }
}

/// One subquestion per part of a brief, named after the part's subject with the
/// brief's subject added; when the plan has room (`target`), a part joining two
/// subjects ("funding history and financial trajectory") gets one for each, and then a
/// part that lists several ("the budget, fare revenue, reserves and borrowing") gets
/// one more for each listed subject, round by round across the parts — all in the
/// brief's order.
fn part_questions(brief: &deepr_tasks::brief::Brief, target: usize) -> Vec<String> {
    let entity = brief.entities.first();
    let ask = |subject: &str| subject_question(subject, entity.map(String::as_str));
    let subjects = part_subjects(brief);
    if subjects.len() > target {
        return merged_parts(&subjects, target)
            .iter()
            .map(|s| ask(s))
            .collect();
    }
    let mut split_left = target.saturating_sub(subjects.len());
    let mut per_part: Vec<Vec<String>> = Vec::new();
    // What each part names beyond what it is first asked as, one per part per round.
    let mut more: Vec<std::collections::VecDeque<String>> = Vec::new();
    for part in &subjects {
        match &part.pair {
            Some((first, second)) if split_left > 0 => {
                split_left -= 1;
                per_part.push(vec![first.clone(), second.clone()]);
                more.push(part.listed.iter().cloned().collect());
            }
            _ => {
                per_part.push(vec![part.whole.clone()]);
                more.push(part.beyond_whole().into());
            }
        }
    }
    let mut planned: usize = per_part.iter().map(Vec::len).sum();
    while planned < target && more.iter().any(|l| !l.is_empty()) {
        for (part, items) in per_part.iter_mut().zip(more.iter_mut()) {
            if planned >= target {
                break;
            }
            if let Some(item) = items.pop_front() {
                part.push(item);
                planned += 1;
            }
        }
    }
    per_part.iter().flatten().map(|s| ask(s)).collect()
}

/// More parts than the plan may ask: neighbouring parts share a subquestion (the
/// first ones take the extra), so that every part is still asked about.
fn merged_parts(subjects: &[deepr_tasks::brief::PartSubjects], room: usize) -> Vec<String> {
    let room = room.max(1);
    let (per, extra) = (subjects.len() / room, subjects.len() % room);
    let mut merged = Vec::new();
    let mut rest = subjects;
    for group in 0..room {
        let take = per + usize::from(group < extra);
        let (these, after) = rest.split_at(take.min(rest.len()));
        rest = after;
        let wholes: Vec<&str> = these.iter().map(|p| p.whole.as_str()).collect();
        if !wholes.is_empty() {
            merged.push(wholes.join("; "));
        }
    }
    merged
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
mod tests;
