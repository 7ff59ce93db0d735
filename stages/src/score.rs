//! score: documents × subquestion → source scores and candidate sentences.
//!
//! score = 0.6·relevance + 0.25·authority + 0.15·recency. Relevance mixes the fused
//! retrieval rank with the share of the ranking question's terms the document
//! contains; recency is relative to the newest dated document in the set (content
//! dates only — never the clock). Low-scoring sources are down-weighted, never
//! dropped: their sentences stay candidates with a smaller weight.
//!
//! Sentences are scored by the question's terms weighted by rarity; when a local
//! sentence-embedding model is wired, the best [`RERANK_POOL`] of them are re-ranked
//! by meaning (cosine similarity to the topic) mixed with that lexical weight, so an
//! answer worded unlike the question can still be shown.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::terms::content_terms;
use deepr_orchestrator::{ArchivedText, SentenceEmbedder, TextArchive};

use crate::rerank::round4;
use crate::types::{Candidate, FetchOut, ScoreOut, ScoredSource, SentenceRef};
use crate::units::{
    ends_like_sentence, is_fragment, is_summary_row, is_whole_block, pointer_penalty,
    states_a_figure,
};

/// 2: sentence relevance weighs question terms by their rarity among the fetched
/// sentences, and counts the topic's own terms at half weight.
/// 3: a sentence that leans on the one before it is a candidate spanning both.
/// 4: the figure bonus reads whole-number words only (as before the grounding rule
/// widened `numbers`).
/// 5: whole blocks (list items, table rows) are units without a final period;
/// heading terms count at half weight for list items and table rows; stale
/// documents' sentences and bylines weigh less; a topic's own terms together weigh at
/// most as much as the question's.
/// 6: a brief that asks for specifics triples the figure bonus.
/// 7: ... and, for the heuristic reader, reads list items and table rows that state a
/// figure without a question term; a draft's units weigh as little as a stale
/// document's; a table's total row weighs half again as much as its other rows.
pub const STAGE_VERSION: u32 = 7;
/// Bonus of a sentence that states a figure.
const FIGURE_BONUS: f64 = 0.1;
/// Weight of a question term found only in the headings above a sentence.
const HEADING_TERM_WEIGHT: f64 = 0.5;
/// Weight factor of a table's total row (its first cell "Total", "All …", "Overall").
const SUMMARY_ROW_WEIGHT: f64 = 1.5;
/// Weight factor of a sentence from an archived or superseded document.
const STALE_WEIGHT: f64 = 0.3;
/// Weight of a topic term that is not a term of the subquestion.
const TOPIC_TERM_WEIGHT: f64 = 0.5;
/// Candidate sentences the heuristic extractor reads per subquestion (a model reads
/// its own pool: `ResearchConfig::model_pool`).
pub const MAX_CANDIDATES: usize = 30;
pub use crate::rerank::{MEANING_WEIGHT, RERANK_POOL};
const MIN_SENTENCE_CHARS: usize = 30;
const MAX_SENTENCE_CHARS: usize = 600;

/// What a lexical pass hands the re-ranker: the scored sources and every candidate
/// (weight, document, first sentence, last sentence), best first.
type Lexical = (Vec<ScoredSource>, Vec<(f64, String, u32, Option<u32>)>);

/// Scores sources and candidate sentences; re-ranks the candidates by meaning when
/// `embedder` is given (an embedding failure is recorded and the lexical order kept);
/// the best `keep` candidates are kept.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    fetched: &FetchOut,
    ranking_question: &str,
    topic: &str,
    queries: &[String],
    exclude: &BTreeSet<SentenceRef>,
    archive: &dyn TextArchive,
    embedder: Option<&dyn SentenceEmbedder>,
    keep: usize,
    reader: Reader,
) -> ScoreOut {
    let (sources, scored) = lexical(
        fetched,
        ranking_question,
        topic,
        queries,
        exclude,
        archive,
        reader,
    );
    let (scored, rerank) = match embedder {
        None => (scored, None),
        Some(embedder) => crate::rerank::rerank(scored, topic, archive, embedder).await,
    };
    let candidates = scored
        .into_iter()
        .take(keep)
        .enumerate()
        .map(
            |(i, (weight, content_sha256, sentence, sentence_end))| Candidate {
                cid: format!("c{}", i + 1),
                content_sha256,
                sentence,
                sentence_end,
                weight,
            },
        )
        .collect();
    let degraded = rerank.as_ref().and_then(|r| r.failure.clone());
    ScoreOut {
        sources,
        candidates,
        rerank,
        degraded,
    }
}

fn lexical(
    fetched: &FetchOut,
    ranking_question: &str,
    topic: &str,
    queries: &[String],
    exclude: &BTreeSet<SentenceRef>,
    archive: &dyn TextArchive,
    reader: Reader,
) -> Lexical {
    // Sentences are matched against the ranking question (what a relevant passage must
    // say); the search queries only widen document relevance.
    let question_terms: BTreeSet<String> = content_terms(ranking_question).into_iter().collect();
    let mut query_terms = question_terms.clone();
    for query in queries {
        query_terms.extend(content_terms(query));
    }
    let (sources, texts) = score_sources(fetched, &query_terms, archive);

    // The rarer a question term among the fetched sentences, the more it says about
    // relevance ("journal" more than "sqlite"): idf = ln(1 + N / df).
    // Each sentence's terms, computed once: for the document frequencies here and for
    // scoring the candidates below.
    let sentence_terms: BTreeMap<(&str, u32), BTreeSet<String>> = texts
        .iter()
        .flat_map(|(sha, text)| {
            text.sentences.iter().filter_map(move |sentence| {
                let body = sentence.text(&text.text)?;
                Some((
                    (sha.as_str(), sentence.index),
                    content_terms(body).into_iter().collect(),
                ))
            })
        })
        .collect();
    let sentence_count = sentence_terms.len();
    let mut df: BTreeMap<&str, usize> = BTreeMap::new();
    for terms in sentence_terms.values() {
        for term in terms {
            *df.entry(term.as_str()).or_default() += 1;
        }
    }
    let idf = |term: &str| -> f64 {
        let n = df.get(term).copied().unwrap_or(0).max(1) as f64;
        (1.0 + sentence_count.max(1) as f64 / n).ln()
    };
    let brief = deepr_tasks::brief::parse_brief(topic);
    let weighted = term_weights(&question_terms, brief.subject(topic), &idf);
    let total_weight: f64 = weighted.values().sum();

    // A brief that asks for specifics (numbers, dates, names) is answered by units that
    // state figures: their bonus triples.
    let specifics = brief.asks_for_specifics();
    let weights = Weights {
        terms: &weighted,
        total: total_weight,
        figure_bonus: if specifics {
            3.0 * FIGURE_BONUS
        } else {
            FIGURE_BONUS
        },
        rows_with_figures: specifics && reader == Reader::Heuristic,
    };
    let mut scored: Vec<(f64, String, u32, Option<u32>)> = Vec::new();
    for source in &sources {
        if let Some(text) = texts.get(&source.doc.content_sha256) {
            scored.extend(units_of(source, text, &sentence_terms, &weights, exclude));
        }
    }
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    // A sentence quoted with its neighbour and the neighbour alone are one candidate.
    let mut covered: BTreeSet<(String, u32)> = BTreeSet::new();
    scored.retain(|(_, sha, first, last)| {
        let sentences: Vec<u32> = (*first..=last.unwrap_or(*first)).collect();
        if sentences
            .iter()
            .any(|i| covered.contains(&(sha.clone(), *i)))
        {
            return false;
        }
        covered.extend(sentences.into_iter().map(|i| (sha.clone(), i)));
        true
    });
    (sources, scored)
}

/// Each question term weighted by its rarity (`idf`), and the topic's own terms at
/// [`TOPIC_TERM_WEIGHT`], scaled so that together they weigh at most as much as the
/// question's.
fn term_weights(
    question_terms: &BTreeSet<String>,
    subject: &str,
    idf: &dyn Fn(&str) -> f64,
) -> BTreeMap<String, f64> {
    let mut weighted: BTreeMap<String, f64> =
        question_terms.iter().map(|t| (t.clone(), idf(t))).collect();
    // A brief's writing instructions ("be specific about numbers, dates and names")
    // say nothing about relevance: only its subject counts.
    let question_weight: f64 = weighted.values().sum();
    let topic_only: BTreeMap<String, f64> = content_terms(subject)
        .into_iter()
        .filter(|t| !weighted.contains_key(t))
        .map(|t| {
            let w = TOPIC_TERM_WEIGHT * idf(&t);
            (t, w)
        })
        .collect();
    // A long topic (a brief's context) must not outweigh the subquestion: its own
    // terms together weigh at most as much as the question's.
    let topic_sum: f64 = topic_only.values().sum();
    let scale = if question_weight > 0.0 && topic_sum > question_weight {
        question_weight / topic_sum
    } else {
        1.0
    };
    for (term, w) in topic_only {
        weighted.insert(term, w * scale);
    }
    weighted
}

/// Each fetched document's score (relevance, authority, recency), best first, and its
/// archived text.
fn score_sources(
    fetched: &FetchOut,
    query_terms: &BTreeSet<String>,
    archive: &dyn TextArchive,
) -> (Vec<ScoredSource>, BTreeMap<String, ArchivedText>) {
    let max_rrf = fetched
        .docs
        .iter()
        .map(|(_, rrf)| *rrf)
        .fold(0.0_f64, f64::max);
    let newest_year = fetched
        .docs
        .iter()
        .filter_map(|(d, _)| year(d.date.as_deref()))
        .max();

    let mut sources = Vec::new();
    let mut texts = BTreeMap::new();
    for (doc, rrf) in &fetched.docs {
        let Some(text) = archive.get(&doc.content_sha256) else {
            continue;
        };
        let doc_terms: BTreeSet<String> = content_terms(&doc.title)
            .into_iter()
            .chain(content_terms(&text.text))
            .collect();
        let matched = query_terms
            .iter()
            .filter(|t| doc_terms.contains(*t))
            .count();
        let term_share = if query_terms.is_empty() {
            0.0
        } else {
            matched as f64 / query_terms.len() as f64
        };
        let rank_share = if max_rrf > 0.0 { rrf / max_rrf } else { 0.0 };
        let relevance = 0.5 * rank_share + 0.5 * term_share;
        let recency = match (year(doc.date.as_deref()), newest_year) {
            _ if doc.outline.is_stale() => 0.0,
            (Some(y), Some(newest)) => (1.0 - f64::from(newest.saturating_sub(y)) / 10.0).max(0.0),
            _ => 0.5,
        };
        let authority = doc.authority.clamp(0.0, 1.0);
        let score = round4(0.6 * relevance + 0.25 * authority + 0.15 * recency);
        sources.push(ScoredSource {
            doc: doc.clone(),
            relevance: round4(relevance),
            authority,
            recency: round4(recency),
            score,
        });
        texts.insert(doc.content_sha256.clone(), text);
    }
    sources.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.doc.doc_key.cmp(&b.doc.doc_key))
    });
    (sources, texts)
}

/// Who reads the candidates: the offline heuristic (its 30, partitioned, above its
/// floor) or a model (its own larger pool, uncut). Only the heuristic, which cannot tell
/// what a row means, is handed figure rows that share no word with the question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    Heuristic,
    Model,
}

/// How much the question's terms weigh, and the bonus of a unit that states a figure.
struct Weights<'w> {
    terms: &'w BTreeMap<String, f64>,
    total: f64,
    figure_bonus: f64,
    /// Whether list items and table rows that state a figure are candidates without a
    /// question term (a brief that asks for specifics, read by the heuristic).
    rows_with_figures: bool,
}

/// The candidate units of one source's text with their weights: sentences and
/// fragments of a usable length that match the question, not cited before.
/// The question's term weights a unit matches: its own terms in full, terms found only
/// in the headings above it (`path`) at [`HEADING_TERM_WEIGHT`].
fn matched_weight(weights: &Weights<'_>, terms: &BTreeSet<String>, path: &[&str]) -> f64 {
    let path_terms: BTreeSet<String> = path.iter().flat_map(|h| content_terms(h)).collect();
    weights
        .terms
        .iter()
        .map(|(t, w)| {
            if terms.contains(t) {
                *w
            } else if path_terms.contains(t) {
                HEADING_TERM_WEIGHT * w
            } else {
                0.0
            }
        })
        .sum()
}

fn units_of(
    source: &ScoredSource,
    text: &ArchivedText,
    sentence_terms: &BTreeMap<(&str, u32), BTreeSet<String>>,
    weights: &Weights<'_>,
    exclude: &BTreeSet<SentenceRef>,
) -> Vec<(f64, String, u32, Option<u32>)> {
    let mut out = Vec::new();
    let headings = source.doc.outline.heading_index(&text.text);
    for sentence in text.sentences.iter() {
        let Some(body) = sentence.text(&text.text) else {
            continue;
        };
        let chars = body.chars().count();
        let outline = &source.doc.outline;
        // A list item or a table row is a unit of its own even without a final
        // period: a whole block that is not a heading.
        let block_unit = is_whole_block(&text.text, sentence.start, sentence.end)
            && !outline.is_heading_at(sentence.start);
        if !(MIN_SENTENCE_CHARS..=MAX_SENTENCE_CHARS).contains(&chars)
            || !(ends_like_sentence(body) || block_unit)
        {
            continue;
        }
        // A sentence that leans on the one before it is quoted with it.
        let (first, last) =
            deepr_evidence::context_span(&text.text, &text.sentences, sentence.index as usize);
        let sentence_end = (last != first).then_some(last);
        let reference = SentenceRef {
            content_sha256: source.doc.content_sha256.clone(),
            sentence: first,
            sentence_end,
            written_quote: None,
        };
        // Already cited in an earlier round, alone or inside a span: not again.
        let cited = |i: u32| {
            exclude.iter().any(|e| {
                e.content_sha256 == reference.content_sha256
                    && (e.sentence..=e.sentence_end.unwrap_or(e.sentence)).contains(&i)
            })
        };
        if (first..=last).any(cited) {
            continue;
        }
        let Some(terms) = sentence_terms.get(&(source.doc.content_sha256.as_str(), sentence.index))
        else {
            continue;
        };
        // The headings above a list item or table row say what it is about
        // ("Revenue" above "Quarterly revenue: $14.2M"): their terms count at half
        // weight. A prose sentence speaks for itself.
        let path = if block_unit && is_fragment(body) {
            headings.path_at(sentence.start)
        } else {
            &[]
        };
        let matched = matched_weight(weights, terms, path);
        // A brief that asks for specifics reads every list item and table row stating
        // a figure in a fetched document, worded like the question or not ("Gross
        // margin: 42.5%" answers "financial trajectory"); its bonus alone ranks it.
        let figure_row = weights.rows_with_figures && block_unit && states_a_figure(body);
        if matched <= 0.0 && !figure_row {
            continue;
        }
        let share = matched / weights.total.max(f64::MIN_POSITIVE);
        // A small bonus for stating a figure: a word that is a number ("4096",
        // "1,000", "3.5"), not the grounding rule's wider reading ("8KB", "v3").
        let informative = if states_a_figure(body) {
            weights.figure_bonus
        } else {
            0.0
        };
        // A document that says a newer one replaces it (archived, superseded), or a
        // draft whose figures may not be final, is still read, but its sentences come
        // after the current versions'.
        let stale = if outline.is_stale() || outline.is_draft() {
            STALE_WEIGHT
        } else {
            1.0
        };
        // A table's total row ("Division: Total · …") states what its other rows add up
        // to: it comes before them.
        let summary = if is_summary_row(body) {
            SUMMARY_ROW_WEIGHT
        } else {
            1.0
        };
        let weight = round4(
            (share + informative) * (0.5 + source.score) * pointer_penalty(body) * stale * summary,
        );
        out.push((
            weight,
            source.doc.content_sha256.clone(),
            first,
            sentence_end,
        ));
    }
    out
}

/// The score node's key: its version and limits, and the re-ranking model when there
/// is one (absent otherwise, so runs without a model keep their keys).
pub fn node_key(embedder: Option<&dyn SentenceEmbedder>, keep: usize) -> serde_json::Value {
    let mut key = serde_json::json!({"v": STAGE_VERSION, "max": keep});
    if let Some(embedder) = embedder {
        key["embed"] = serde_json::json!({
            "model": embedder.model_id(),
            "pool": RERANK_POOL,
            "meaning": MEANING_WEIGHT,
        });
    }
    key
}

fn year(date: Option<&str>) -> Option<u32> {
    date.and_then(|d| d.get(..4)).and_then(|y| y.parse().ok())
}

/// A subquestion's sources and candidates; sentences cited by `earlier_extracts` (the
/// earlier rounds' extract nodes) are not offered again.
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    subquestion: &str,
    earlier_extracts: &[String],
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    let (p, t) = (cx.providers.clone(), cx.topic.clone());
    let (ft, sq) = (
        node_id::step(round, subquestion, "fetch"),
        node_id::step(round, subquestion, "subquery"),
    );
    let keep = MAX_CANDIDATES.max(cx.model_pool);
    let mut deps = vec![ft.clone(), sq.clone()];
    deps.extend(earlier_extracts.iter().cloned());
    let previous = earlier_extracts.to_vec();
    let reader = if cx.model_extracts() {
        Reader::Model
    } else {
        Reader::Heuristic
    };
    let mut key = node_key(cx.providers.embedder.as_deref(), keep);
    if reader == Reader::Model {
        key["reader"] = serde_json::json!("model");
    }
    let node = spec(
        node_id::step(round, subquestion, "score"),
        "score",
        key,
        move |ctx| async move {
            let fetched: FetchOut = read(&ctx.inputs, &ft)?;
            let plan: crate::types::SubqueryOut = read(&ctx.inputs, &sq)?;
            let mut exclude = BTreeSet::new();
            for id in &previous {
                let extracted: crate::types::ExtractOut = read(&ctx.inputs, id)?;
                exclude.extend(extracted.claims.into_iter().flat_map(|c| c.citations));
            }
            let out = run(
                &fetched,
                &plan.ranking_question,
                &t,
                &plan.queries,
                &exclude,
                p.archive.as_ref(),
                p.embedder.as_deref(),
                keep,
                reader,
            )
            .await;
            finish(out, vec![])
        },
    );
    (node, deps)
}

#[cfg(test)]
mod tests {
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

    fn fixture() -> (FetchOut, Archive) {
        let text = ArchivedText::new(
            "The commit writes the journal before the database is changed. \
             A commit to the journal will survive a power loss in the middle of writing. \
             The journal name is the database name with a suffix appended to it.",
        );
        let doc = DocMeta {
            doc_key: "a.html".into(),
            locator: "a.html".into(),
            title: "Commit".into(),
            content_sha256: text.content_sha256.clone(),
            date: None,
            authority: 0.5,
            outline: Default::default(),
        };
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
        let doc = DocMeta {
            doc_key: "memo.docx".into(),
            locator: "memo.docx".into(),
            title: "Memo".into(),
            content_sha256: text.content_sha256.clone(),
            date: None,
            authority: 0.5,
            outline: Default::default(),
        };
        let archive = Archive(BTreeMap::from([(text.content_sha256.clone(), text)]));
        let fetched = FetchOut {
            docs: vec![(doc, 1.0)],
            failures: vec![],
        };
        let question = "What is the financial trajectory?";
        let ranked = |topic: &'static str, reader: Reader| {
            let (fetched, archive) = (&fetched, &archive);
            async move {
                run(
                    fetched,
                    question,
                    topic,
                    &[],
                    &BTreeSet::new(),
                    archive,
                    None,
                    30,
                    reader,
                )
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
        let brief =
            "Review Orbel Foods. Cover: (1) the financial trajectory, and (2) the outlook. \
                     Be specific about numbers and dates.";
        assert_eq!(ranked(brief, Reader::Heuristic).await, [0, 1]);
        // A model judges what a row means itself: its pool is ranked by words alone.
        assert_eq!(ranked(brief, Reader::Model).await, [0]);
    }

    #[tokio::test]
    async fn a_draft_is_read_after_the_final_version() {
        let final_text = ArchivedText::new("Quarterly revenue was $14.2M in the first quarter.");
        let draft_text =
            ArchivedText::new("Preliminary quarterly revenue was $13.6M in the first quarter.");
        let doc = |text: &ArchivedText, key: &str, status: Option<&str>| DocMeta {
            doc_key: key.into(),
            locator: key.into(),
            title: key.into(),
            content_sha256: text.content_sha256.clone(),
            date: Some("2026-04-10".into()),
            authority: 0.5,
            outline: deepr_orchestrator::Outline {
                status: status.map(str::to_string),
                ..Default::default()
            },
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
        let out = run(
            &fetched,
            question,
            question,
            &[],
            &BTreeSet::new(),
            &archive,
            None,
            30,
            Reader::Heuristic,
        )
        .await;
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
        let lexical = run(
            &fetched,
            QUESTION,
            QUESTION,
            &[],
            &BTreeSet::new(),
            &archive,
            None,
            MAX_CANDIDATES,
            Reader::Heuristic,
        )
        .await;
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
        let reranked = run(
            &fetched,
            QUESTION,
            TOPIC,
            &[],
            &BTreeSet::new(),
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
        let lexical = run(
            &fetched,
            QUESTION,
            QUESTION,
            &[],
            &BTreeSet::new(),
            &archive,
            None,
            MAX_CANDIDATES,
            Reader::Heuristic,
        )
        .await;
        let meaning = Meaning {
            fail: true,
            seen: Default::default(),
        };
        let out = run(
            &fetched,
            QUESTION,
            QUESTION,
            &[],
            &BTreeSet::new(),
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
}
