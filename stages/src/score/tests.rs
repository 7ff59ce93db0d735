//! Tests of `score` (a child module, so they reach its private functions).

use std::collections::BTreeMap;

use async_trait::async_trait;
use deepr_orchestrator::{ArchivedText, DocMeta, EmbedError};

use super::*;

struct Archive(BTreeMap<String, ArchivedText>);

impl TextArchive for Archive {
    fn get(&self, content_sha256: &str) -> Option<ArchivedText> {
        self.0.get(content_sha256).cloned()
    }
}

/// "Means" the question when a text speaks of durability, whatever its words; the
/// question and the topic mean durability too.
struct Meaning {
    fail: bool,
    seen: std::sync::Mutex<Vec<String>>,
}

#[async_trait]
impl SentenceEmbedder for Meaning {
    fn model_id(&self) -> &str {
        "test/meaning"
    }
    fn display_name(&self) -> &str {
        "meaning-test"
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.seen.lock().unwrap().extend(texts.iter().cloned());
        if self.fail {
            return Err(EmbedError("weights damaged".into()));
        }
        Ok(texts
            .iter()
            .map(|t| {
                let t = t.to_lowercase();
                if t.contains("durab") || t.contains("power loss") || t.contains("survive") {
                    vec![1.0, 0.0]
                } else {
                    vec![0.0, 1.0]
                }
            })
            .collect())
    }
}

/// `run` with no search queries and nothing cited before.
async fn rank(
    fetched: &FetchOut,
    question: &str,
    topic: &str,
    archive: &dyn TextArchive,
    embedder: Option<&dyn SentenceEmbedder>,
    keep: usize,
    reader: Reader,
) -> ScoreOut {
    let none = BTreeSet::new();
    run(
        fetched,
        question,
        topic,
        &[],
        Earlier {
            cited: &none,
            scopes: &crate::triage::TriageOut::default(),
            document: None,
        },
        archive,
        embedder,
        keep,
        reader,
    )
    .await
}

/// `rank` of a question that is its own topic, read by the heuristic (its
/// [`MAX_CANDIDATES`]), without a meaning model.
async fn rank_offline(fetched: &FetchOut, question: &str, archive: &dyn TextArchive) -> ScoreOut {
    rank(
        fetched,
        question,
        question,
        archive,
        None,
        MAX_CANDIDATES,
        Reader::Heuristic,
    )
    .await
}

/// A document of `text` with a date and a status.
fn doc_of(text: &ArchivedText, key: &str, date: Option<&str>, status: Option<&str>) -> DocMeta {
    DocMeta {
        doc_key: key.into(),
        locator: key.into(),
        title: key.into(),
        content_sha256: text.content_sha256.clone(),
        date: date.map(str::to_string),
        authority: 0.5,
        outline: deepr_orchestrator::Outline {
            status: status.map(str::to_string),
            ..Default::default()
        },
    }
}

/// `text` as the one fetched document, titled `title`, and its archive.
fn one_document(text: &ArchivedText, title: &str) -> (FetchOut, Archive) {
    let doc = doc_of(text, title, None, None);
    let archive = Archive(BTreeMap::from([(
        text.content_sha256.clone(),
        text.clone(),
    )]));
    let fetched = FetchOut {
        docs: vec![(doc, 1.0)],
        failures: vec![],
    };
    (fetched, archive)
}

fn fixture() -> (FetchOut, Archive) {
    let text = ArchivedText::new(
        "The commit writes the journal before the database is changed. \
         A commit to the journal will survive a power loss in the middle of writing. \
         The journal name is the database name with a suffix appended to it.",
    );
    let doc = doc_of(&text, "Commit", None, None);
    let archive = Archive(BTreeMap::from([(text.content_sha256.clone(), text)]));
    (
        FetchOut {
            docs: vec![(doc, 1.0)],
            failures: vec![],
        },
        archive,
    )
}

const QUESTION: &str = "Is the commit journal durable?";
const TOPIC: &str = "Does the commit journal stay durable?";

#[tokio::test]
async fn a_brief_asking_for_specifics_reads_rows_that_state_figures() {
    let text = ArchivedText::new(
        "The financial trajectory improved through the year.\n\n\
         - Gross margin: 42.5% for the first quarter\n\n\
         - Office plants are watered on Mondays by facilities",
    );
    let doc = doc_of(&text, "Memo", None, None);
    let archive = Archive(BTreeMap::from([(text.content_sha256.clone(), text)]));
    let fetched = FetchOut {
        docs: vec![(doc, 1.0)],
        failures: vec![],
    };
    let question = "What is the financial trajectory?";
    let ranked = |topic: &'static str, reader: Reader| {
        let (fetched, archive) = (&fetched, &archive);
        async move {
            rank(fetched, question, topic, archive, None, 30, reader)
                .await
                .candidates
                .iter()
                .map(|c| c.sentence)
                .collect::<Vec<u32>>()
        }
    };
    // A question alone: only the unit that shares its words.
    assert_eq!(ranked(question, Reader::Heuristic).await, [0]);
    // A brief that asks for figures: the row stating one too, after the matching
    // unit; the row without a figure or a question term never.
    let brief = "Review Orbel Foods. Cover: (1) the financial trajectory, and (2) the outlook. \
                 Be specific about numbers and dates.";
    assert_eq!(ranked(brief, Reader::Heuristic).await, [0, 1]);
    // A model is shown the row too, after the units that share the question's words:
    // it judges what the row means (a relayed model had never seen a workbook's
    // per-site volumes, worded unlike its question).
    // With two of its three units in the pool, the short memo is read whole: its
    // office-plants line follows (a question alone pools one unit: no more).
    assert_eq!(ranked(brief, Reader::Model).await, [0, 1, 2]);
    assert_eq!(ranked(question, Reader::Model).await, [0]);
    let weights = |reader: Reader| {
        let (fetched, archive) = (&fetched, &archive);
        async move {
            let out = rank(fetched, question, brief, archive, None, 30, reader).await;
            out.candidates
                .iter()
                .map(|c| c.weight)
                .collect::<Vec<f64>>()
        }
    };
    // In a model's pool the row weighs a tenth of what the heuristic gives it, so it
    // follows the units that share a word (it had led a risk question's pool).
    let (heuristic, model) = (
        weights(Reader::Heuristic).await,
        weights(Reader::Model).await,
    );
    assert!(
        model[1] < heuristic[1] / 5.0 && model[1] < model[0],
        "{heuristic:?} {model:?}"
    );
}

#[tokio::test]
async fn a_draft_is_read_after_the_final_version() {
    let final_text = ArchivedText::new("Quarterly revenue was $14.2M in the first quarter.");
    let draft_text =
        ArchivedText::new("Preliminary quarterly revenue was $13.6M in the first quarter.");
    let doc = |text: &ArchivedText, key: &str, status: Option<&str>| {
        doc_of(text, key, Some("2026-04-10"), status)
    };
    let fetched = FetchOut {
        // The draft ranks first in retrieval.
        docs: vec![
            (doc(&draft_text, "flash-draft.docx", Some("draft")), 1.0),
            (doc(&final_text, "board-update.pdf", None), 0.9),
        ],
        failures: vec![],
    };
    let archive = Archive(BTreeMap::from([
        (draft_text.content_sha256.clone(), draft_text.clone()),
        (final_text.content_sha256.clone(), final_text.clone()),
    ]));
    let question = "What was the quarterly revenue?";
    let out = rank_offline(&fetched, question, &archive).await;
    assert_eq!(out.candidates.len(), 2, "{out:?}");
    assert_eq!(out.candidates[0].content_sha256, final_text.content_sha256);
    assert!(
        out.candidates[1].weight < 0.5 * out.candidates[0].weight,
        "{out:?}"
    );
}

#[tokio::test]
async fn meaning_lifts_a_sentence_worded_unlike_the_question() {
    let (fetched, archive) = fixture();
    let lexical = rank_offline(&fetched, QUESTION, &archive).await;
    assert_eq!(lexical.rerank, None);
    assert_eq!(lexical.candidates[0].sentence, 0, "{lexical:?}");
    let survive = lexical
        .candidates
        .iter()
        .position(|c| c.sentence == 1)
        .expect("the power-loss sentence is a candidate");
    assert!(survive > 0);

    let meaning = Meaning {
        fail: false,
        seen: Default::default(),
    };
    let reranked = rank(
        &fetched,
        QUESTION,
        TOPIC,
        &archive,
        Some(&meaning),
        MAX_CANDIDATES,
        Reader::Heuristic,
    )
    .await;
    assert_eq!(reranked.candidates[0].sentence, 1, "{reranked:?}");
    let rerank = reranked.rerank.clone().expect("recorded");
    assert_eq!(rerank.model, "meaning-test");
    assert_eq!(rerank.model_id, "test/meaning");
    assert_eq!(rerank.sentences as usize, lexical.candidates.len());
    assert_eq!(rerank.failure, None);
    // The model saw the question, the topic and each candidate's exact quote.
    let seen = meaning.seen.lock().unwrap().clone();
    // Meaning is measured against the topic, not the subquestion.
    assert_eq!(seen[0], TOPIC);
    assert!(!seen.iter().any(|t| t == QUESTION), "{seen:?}");
    assert!(seen
        .iter()
        .any(|t| t.starts_with("A commit to the journal will")));
    // Same candidates, another order: re-ranking never adds or drops one.
    let ids = |s: &ScoreOut| {
        let mut v: Vec<u32> = s.candidates.iter().map(|c| c.sentence).collect();
        v.sort();
        v
    };
    assert_eq!(ids(&lexical), ids(&reranked));
}

#[tokio::test]
async fn a_failing_model_keeps_the_word_order_and_says_why() {
    let (fetched, archive) = fixture();
    let lexical = rank_offline(&fetched, QUESTION, &archive).await;
    let meaning = Meaning {
        fail: true,
        seen: Default::default(),
    };
    let out = rank(
        &fetched,
        QUESTION,
        QUESTION,
        &archive,
        Some(&meaning),
        MAX_CANDIDATES,
        Reader::Heuristic,
    )
    .await;
    assert!(
        !meaning.seen.lock().unwrap().is_empty(),
        "the model was asked"
    );
    assert_eq!(out.candidates, lexical.candidates);
    let failure = out
        .rerank
        .and_then(|r| r.failure)
        .expect("failure recorded");
    assert!(failure.contains("weights damaged"), "{failure}");
}

#[tokio::test]
async fn a_row_is_read_in_its_run_of_rows_and_a_sentence_by_its_own_words() {
    let text = ArchivedText::new(
        "Operating reserves are reported to the board every month.\n\n\
         - Unrestricted: 47 days of spend\n\n\
         - Restricted: 12 days of spend\n\n\
         - Total reserves: 59 days of spend\n\n\
         The ferries ran late in March after the storm.\n\n\
         - Fuel in the tanks: 3 days of sailings\n\n\
         Reserves fell over the year to the end of June. Staff costs rose by a tenth in the year.",
    );
    let (fetched, archive) = one_document(&text, "Treasury note");
    let question = "What are the operating reserves?";
    let ranked = rank_offline(&fetched, question, &archive).await;
    let quoted: Vec<String> = ranked
        .candidates
        .iter()
        .filter_map(|c| text.quote(c.sentence, c.sentence_end).map(str::to_string))
        .collect();
    let has = |start: &str| quoted.iter().any(|q| q.starts_with(start));
    // The rows of the run that names reserves are candidates, though two of them do not
    // say the word ("Unrestricted: 47 days"); the row of another run is not.
    for row in ["- Unrestricted", "- Restricted", "- Total reserves"] {
        assert!(has(row), "{row} in {quoted:?}");
    }
    assert!(!has("- Fuel"), "{quoted:?}");
    // A prose sentence speaks for itself: its paragraph's words lend it nothing.
    assert!(has("Reserves fell"), "{quoted:?}");
    assert!(!has("Staff costs"), "{quoted:?}");
}

#[test]
fn a_questions_exact_terms_are_found_in_rows_and_prose() {
    let exact = deepr_evidence::terms::exact_terms(
        "What does the byte at offset 18 of the header record, and when is SQLITE_BUSY returned by \"hot journal\" checks?",
    );
    assert!(
        exact.contains(&vec!["offset".to_string(), "18".to_string()]),
        "{exact:?}"
    );
    assert!(
        exact.contains(&vec!["sqlite_busy".to_string()]),
        "{exact:?}"
    );
    assert!(
        exact.contains(&vec!["hot".to_string(), "journal".to_string()]),
        "{exact:?}"
    );
    assert!(deepr_evidence::terms::holds_exact(
        "Offset: 18 · Size: 1 · Description: File format write version.",
        &exact
    ));
    assert!(!deepr_evidence::terms::holds_exact(
        "The header is 100 bytes at offset 0.",
        &exact
    ));
    assert!(
        deepr_evidence::terms::exact_terms("How does SQLite guarantee atomic commits?").is_empty()
    );
}

#[tokio::test]
async fn a_documents_summary_is_read_in_its_title() {
    // The same sentence under "Summary" and under "Notes" of a report titled for
    // operations; it shares no word with the question.
    let body = "Repair turnaround fell from 4.1 days to 2.6 days after the depot opened.";
    let ranked = |heading: &'static str| async move {
        let text = ArchivedText::new(&format!("Q1 Operations Review\n\n{heading}\n\n{body}"));
        let heading_at = text.text.find(heading).unwrap() as u32;
        let mut doc = doc_of(&text, "Q1 Operations Review", None, None);
        doc.outline.headings = vec![(0, 1), (heading_at, 2)];
        let archive = Archive(BTreeMap::from([(text.content_sha256.clone(), text)]));
        let fetched = FetchOut {
            docs: vec![(doc, 1.0)],
            failures: vec![],
        };
        let question = "How has operational performance developed?";
        rank_offline(&fetched, question, &archive)
            .await
            .candidates
            .len()
    };
    assert_eq!(
        ranked("Summary").await,
        1,
        "a summary speaks for its document"
    );
    assert_eq!(ranked("Executive summary").await, 1);
    assert_eq!(
        ranked("Notes").await,
        0,
        "another section's sentence does not"
    );
}

/// What a model is handed: a document follow-up's document, a short list whole.
mod pools;
