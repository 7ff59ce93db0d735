//! Tests of `decompose` (a child module, so they reach its private functions).

use super::*;
use deepr_tasks::brief::listed_subjects;

fn plan(topic: &str, min: usize, max: usize, target: usize, headings: &[&str]) -> Vec<String> {
    Decompose::answer(&Input {
        topic: topic.into(),
        min,
        max,
        target,
        headings: headings.iter().map(|h| h.to_string()).collect(),
        titles: Vec::new(),
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
            // "Roadmap including pricing" once stood beside both: one of a pair that
            // lists is cut at "including", what it lists asked on its own.
            "Roadmap",
            "Pricing",
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
    // A smaller plan keeps one subquestion per part and stays within its maximum.
    assert_eq!(plan(brief, 3, 5, 4, &headings).len(), 5);
}

#[test]
fn a_part_that_lists_subjects_gets_one_subquestion_each() {
    assert_eq!(
        listed_subjects("Its cost base, including staffing, energy, insurance and leases"),
        ["Cost base", "Staffing", "Energy", "Insurance", "Leases"]
    );
    // What follows "with their" qualifies the subjects; it lists none.
    assert_eq!(
        listed_subjects("new plants and product lines, with their budgets, dates and suppliers"),
        ["New plants", "Product lines"]
    );
    // A list of names is one subject; so is a part that lists nothing.
    assert!(listed_subjects("how it compares with Acme Corp, Beta Labs and Gamma").is_empty());
    assert!(listed_subjects("the regulatory outlook").is_empty());
    // A question with one part is planned to the depth's target, a brief to its maximum.
    let question = plan("How are hot rollback journals replayed?", 5, 10, 6, &[]);
    assert!((5..=6).contains(&question.len()), "{question:?}");
    let brief = "Assess Orbel Foods. Cover: (1) its cost base, including staffing, energy, insurance and leases; (2) the regulatory outlook; and (3) new plants and product lines, with their budgets, dates and suppliers.";
    let subjects: Vec<String> = plan(brief, 5, 10, 6, &[])
        .iter()
        .filter_map(|q| q.split('“').nth(1)?.split('”').next().map(str::to_string))
        .collect();
    // Parts first in the brief's order, each part's listed subjects after it.
    assert_eq!(
        subjects[0],
        "Cost base, including staffing, energy, insurance and leases"
    );
    assert!(subjects.contains(&"Staffing".to_string()), "{subjects:?}");
    let outlook = subjects.iter().position(|s| s == "Regulatory outlook");
    let staffing = subjects.iter().position(|s| s == "Staffing");
    assert!(staffing < outlook, "{subjects:?}");
    assert!(subjects.len() <= 10);
}

#[test]
fn clauses_split_compound_topics() {
    assert_eq!(
        topic_clauses("How does SQLite guarantee atomic commits, and what changes in WAL mode?"),
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
        "Hot Journal Recovery",
        "Write-Ahead Log Checkpoint Starvation",
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
    assert!(a[1].contains("Hot Journal Recovery"), "{a:?}");
    assert!(
        b[1].contains("Write-Ahead Log Checkpoint Starvation"),
        "{b:?}"
    );
}

#[test]
fn bounds_out_of_order_do_not_panic() {
    // The input is data: min above max must not reach `clamp`'s assertion.
    let questions = plan("how does the journal work", 5, 3, 4, &[]);
    assert!(questions.len() >= 3);
}

#[test]
fn a_heading_is_an_aspect_of_its_clause_and_a_title_is_no_subject() {
    let input = under_atomic_commit(
        (5, 10, 6),
        &[
            "Atomic Commit In SQLite",
            "Single File Commit",
            "Commits In WAL Mode",
            "Hot Journals And Atomic Commits",
        ],
    );
    let questions = Decompose::answer(&input).subquestions;
    assert!(
        !questions
            .iter()
            .any(|q| q.contains("Atomic Commit In SQLite")),
        "a document's title is planned: {questions:?}"
    );
    // Each heading is asked as an aspect of the clause it shares most words with.
    assert!(questions.contains(
        &"What does the documentation say about “Hot Journals And Atomic Commits”, regarding how SQLite guarantees atomic commits?".to_string()
    ), "{questions:?}");
    assert!(questions.contains(
        &"What does the documentation say about “Commits In WAL Mode”, regarding changes in WAL mode?".to_string()
    ), "{questions:?}");
    // Its section is named after the subject and the aspect, not the heading alone.
    let headings: Vec<String> = questions
        .iter()
        .map(|q| crate::write_section::heading_for(q))
        .collect();
    assert!(
        headings.contains(
            &"How SQLite guarantees atomic commits: Hot Journals And Atomic Commits".to_string()
        ),
        "{headings:?}"
    );
    for heading in &headings {
        assert!(
            !input
                .headings
                .iter()
                .any(|h| h.eq_ignore_ascii_case(heading)),
            "a section named after a document's heading: {heading}"
        );
    }
}

#[test]
fn a_heading_is_read_with_its_document_title() {
    // "Changing" shares a word with "what changes in WAL mode"; its document is about
    // atomic commits.
    let input = under_atomic_commit(
        (3, 5, 3),
        &[
            "Atomic Commit In SQLite",
            "Changing Database Pages In User Space",
            "Hardware Assumptions",
            "Rollback",
        ],
    );
    let questions = Decompose::answer(&input).subquestions;
    assert_eq!(
        questions[2],
        "What does the documentation say about “Changing Database Pages In User Space”, regarding how SQLite guarantees atomic commits?"
    );
}

/// The README question over `headings` of the "Atomic Commit In SQLite" page (its
/// title first), within `(min, max, target)` subquestions.
fn under_atomic_commit((min, max, target): (usize, usize, usize), headings: &[&str]) -> Input {
    Input {
        topic: "How does SQLite guarantee atomic commits, and what changes in WAL mode?".into(),
        min,
        max,
        target,
        headings: headings.iter().map(|h| h.to_string()).collect(),
        titles: vec!["Atomic Commit In SQLite".into()],
        parts: Vec::new(),
    }
}
