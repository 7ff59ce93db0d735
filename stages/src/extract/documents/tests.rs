//! Tests of reading documents: score hands every unit over, `pool` shows documents.

use std::collections::{BTreeMap, BTreeSet};

use deepr_orchestrator::{ArchivedText, DocMeta, Outline, TextArchive};

use super::*;
use crate::score::Reader;
use crate::types::FetchOut;

struct Archive(BTreeMap<String, ArchivedText>);

impl TextArchive for Archive {
    fn get(&self, content_sha256: &str) -> Option<ArchivedText> {
        self.0.get(content_sha256).cloned()
    }
}

/// A document of `blocks` (blank lines between them); a block starting `# ` is a
/// heading of level 1, `## ` of level 2 (the marks are dropped from the text).
fn document(title: &str, blocks: &[&str]) -> (DocMeta, ArchivedText) {
    let mut text = String::new();
    let mut headings = Vec::new();
    for block in blocks {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        let (level, body) = match block.strip_prefix("## ") {
            Some(body) => (2, body),
            None => match block.strip_prefix("# ") {
                Some(body) => (1, body),
                None => (0, *block),
            },
        };
        if level > 0 {
            headings.push((text.len() as u32, level));
        }
        text.push_str(body);
    }
    let archived = ArchivedText::new(&text);
    let doc = DocMeta {
        doc_key: title.into(),
        locator: title.into(),
        title: title.into(),
        content_sha256: archived.content_sha256.clone(),
        date: Some("2026-04-14".into()),
        authority: 0.5,
        outline: Outline {
            headings,
            ..Outline::default()
        },
    };
    (doc, archived)
}

const OPS_REPORT: &[&str] = &[
    "# Operations report, first quarter",
    "## Deployments",
    "Robots deployed across customer sites reached 1,240 at the end of March.",
    "Fleet uptime averaged 99.2 % over the quarter, up from 98.7 %.",
    "## Incidents",
    "Firmware 4.2.1 regressed lidar calibration at three sites; it took 18 hours to resolve.",
    "## Supply chain",
    "Motor controllers come from a single supplier with a 14-week lead time.",
];

async fn scored(docs: &[(DocMeta, ArchivedText)], question: &str, reader: Reader) -> ScoreOut {
    let archive = Archive(
        docs.iter()
            .map(|(_, t)| (t.content_sha256.clone(), t.clone()))
            .collect(),
    );
    let fetched = FetchOut {
        docs: docs.iter().map(|(d, _)| (d.clone(), 1.0)).collect(),
        failures: vec![],
    };
    let keep = match reader {
        Reader::Documents => crate::score::MAX_DOCUMENT_UNITS,
        _ => 40,
    };
    crate::score::run(
        &fetched,
        question,
        question,
        &[],
        crate::score::Earlier {
            cited: &BTreeSet::new(),
            scopes: &crate::triage::TriageOut::default(),
            document: None,
        },
        &archive,
        None,
        keep,
        reader,
    )
    .await
}

fn archive_of(docs: &[(DocMeta, ArchivedText)]) -> Archive {
    Archive(
        docs.iter()
            .map(|(_, t)| (t.content_sha256.clone(), t.clone()))
            .collect(),
    )
}

fn shown(out: &ScoreOut, archive: &Archive) -> Vec<String> {
    out.candidates
        .iter()
        .filter_map(|c| {
            let text = archive.get(&c.content_sha256)?;
            Some(format!(
                "{}: {}",
                c.cid,
                text.quote(c.sentence, c.sentence_end)?
            ))
        })
        .collect()
}

const QUESTION: &str = "How did deployments and fleet uptime develop?";

#[tokio::test]
async fn a_short_report_is_read_whole_where_the_ranking_sees_only_its_words() {
    let docs = [document("Operations report", OPS_REPORT)];
    let archive = archive_of(&docs);
    // Ranked: the incident shares no word with the question, so no ranking holds it;
    // two of this one-page report's units made the pool, so it follows them whole.
    let ranked = scored(&docs, QUESTION, Reader::Model).await;
    let ranked_text = shown(&ranked, &archive);
    assert!(
        ranked_text[..2].concat().contains("Robots deployed"),
        "{ranked_text:#?}"
    );
    let firmware = ranked_text.iter().position(|l| l.contains("Firmware"));
    assert!(firmware > Some(1), "{ranked_text:#?}");
    assert!(ranked.candidates.iter().any(|c| c.weight == 0.0));
    // Documents: every unit, in the document's order, renumbered from c1.
    let all = scored(&docs, QUESTION, Reader::Documents).await;
    let read = pool(&all, &archive, DOCUMENT_TOKENS);
    let lines = shown(&read, &archive);
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(lines[0].starts_with("c1: Robots deployed"), "{lines:#?}");
    assert!(lines[2].starts_with("c3: Firmware 4.2.1"), "{lines:#?}");
    assert!(lines[3].starts_with("c4: Motor controllers"), "{lines:#?}");
    // The headings travel with each unit to the prompt.
    let rendered = crate::extract::shown_candidates(&read, &archive, true);
    let prompt = deepr_tasks::extract::render_candidates(&rendered);
    assert!(prompt.contains("› Incidents\":\n  c3:"), "{prompt}");
    // A paragraph too is shown under its heading when documents are read.
    assert!(prompt.contains("› Deployments\":\n  c1:"), "{prompt}");
}

#[tokio::test]
async fn a_long_document_shows_the_sections_its_best_units_stand_in_within_the_budget() {
    // A long reference of 40 sections, one of them on uptime.
    let filler: Vec<String> = (1..=40)
        .flat_map(|n| {
            [
                format!("## Procedure {n}"),
                format!("Step {n} of the warehouse procedure asks staff to label every shelf and pallet carefully before the shift ends."),
                format!("Records of procedure {n} are kept by the facilities desk for two years after the audit."),
            ]
        })
        .collect();
    let mut blocks: Vec<&str> = vec!["# Fleet site reference"];
    blocks.extend(filler.iter().map(String::as_str).take(60));
    blocks.extend([
        "## Fleet uptime",
        "Fleet uptime is measured per site and averaged over the month.",
        "A site below 97 % uptime for two months gets a recovery plan.",
    ]);
    blocks.extend(filler.iter().map(String::as_str).skip(60));
    let docs = [
        document("Fleet site reference", &blocks),
        document("Operations report", OPS_REPORT),
    ];
    let archive = archive_of(&docs);
    let all = scored(&docs, QUESTION, Reader::Documents).await;
    let read = pool(&all, &archive, DOCUMENT_TOKENS);
    let text = shown(&read, &archive).join("\n");
    // The uptime section whole (its second unit shares no word with the question
    // beyond "uptime"), the short report whole, and not the whole handbook.
    assert!(text.contains("gets a recovery plan"), "{text}");
    assert!(text.contains("Firmware 4.2.1"), "{text}");
    let handbook_units = all
        .candidates
        .iter()
        .filter(|c| c.content_sha256 == docs[0].1.content_sha256)
        .count();
    let handbook_shown = read
        .candidates
        .iter()
        .filter(|c| c.content_sha256 == docs[0].1.content_sha256)
        .count();
    assert!(handbook_units >= 80, "{handbook_units}");
    assert!(
        handbook_shown < handbook_units / 2,
        "{handbook_shown} of {handbook_units}"
    );
    // A small budget holds: the units shown cost no more than it allows.
    let small = pool(&all, &archive, 300);
    let cost: usize = shown(&small, &archive)
        .iter()
        .map(|l| deepr_orchestrator::tokens::count_tokens(l) as usize + LINE_TOKENS)
        .sum();
    assert!(!small.candidates.is_empty());
    assert!(cost <= 300 + 8 * small.candidates.len(), "{cost}");
}

#[tokio::test]
async fn a_document_that_matches_nothing_is_read_whole_after_those_that_do_or_not_at_all() {
    let unrelated = document(
        "Warehouse note",
        &[
            "# Warehouse note",
            "Lentil-green paint was chosen for the loading dock, repainted in February.",
        ],
    );
    let docs = [document("Operations report", OPS_REPORT), unrelated];
    let archive = archive_of(&docs);
    let all = scored(&docs, QUESTION, Reader::Documents).await;
    let read = pool(&all, &archive, DOCUMENT_TOKENS);
    let lines = shown(&read, &archive);
    assert!(
        lines.last().is_some_and(|l| l.contains("Lentil-green")),
        "{lines:#?}"
    );
    // With no room left after the report, it is not shown at all.
    let report_cost: usize = shown(&read, &archive)[..4]
        .iter()
        .map(|l| deepr_orchestrator::tokens::count_tokens(l) as usize + LINE_TOKENS)
        .sum();
    let tight = pool(&all, &archive, report_cost);
    assert!(
        shown(&tight, &archive)
            .iter()
            .all(|l| !l.contains("Lentil")),
        "{:#?}",
        shown(&tight, &archive)
    );
}

#[test]
fn the_best_units_of_documents_not_read_whole_are_shown_too() {
    // Four documents of twelve units each, about 280 tokens a document; the best unit
    // of each ranks ahead of every other unit.
    let docs: Vec<(DocMeta, ArchivedText)> = ["A", "B", "C", "D"]
        .iter()
        .map(|name| {
            let blocks: Vec<String> = (1..=12)
                .map(|n| format!("Fleet note {n} of document {name} says the depot count stayed level through the quarter."))
                .collect();
            let blocks: Vec<&str> = blocks.iter().map(String::as_str).collect();
            document(name, &blocks)
        })
        .collect();
    let archive = archive_of(&docs);
    let candidate = |doc: usize, sentence: u32| crate::types::Candidate {
        cid: String::new(),
        content_sha256: docs[doc].1.content_sha256.clone(),
        sentence,
        sentence_end: None,
        weight: 1.0,
    };
    let mut candidates: Vec<_> = (0..4).map(|d| candidate(d, 0)).collect();
    for d in 0..4 {
        candidates.extend((1..12).map(|s| candidate(d, s)));
    }
    let scored = ScoreOut {
        sources: docs
            .iter()
            .map(|(doc, _)| crate::types::ScoredSource {
                doc: doc.clone(),
                relevance: 1.0,
                authority: 0.5,
                recency: 1.0,
                score: 1.0,
                off_topic: None,
                background: false,
            })
            .collect(),
        candidates,
        ..ScoreOut::default()
    };
    let read = pool(&scored, &archive, 500);
    let lines = shown(&read, &archive);
    // A is read whole; D's best unit is shown though D comes fourth.
    assert!(
        lines.iter().filter(|l| l.contains("document A")).count() == 12,
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Fleet note 1 of document D")),
        "{lines:#?}"
    );
    // Each document's units stand together, in document order.
    let order: Vec<char> = lines
        .iter()
        .filter_map(|l| l.split("document ").nth(1)?.chars().next())
        .collect();
    let mut grouped = order.clone();
    grouped.dedup();
    assert_eq!(grouped, ['A', 'B', 'C', 'D'], "{lines:#?}");
}
