//! score: documents × subquestion → source scores and candidate sentences.
//!
//! score = 0.6·relevance + 0.25·authority + 0.15·recency. Relevance mixes the fused
//! retrieval rank with the share of the ranking question's terms the document
//! contains; recency is relative to the newest dated document in the set (content
//! dates only — never the clock). Low-scoring sources are down-weighted, never
//! dropped: their sentences stay candidates with a smaller weight.
//!
//! Sentences are scored by the question's terms (matched by their stems) weighted by
//! rarity (for a list item or
//! table row, a term found only in its run of items or rows or the headings above it
//! at half weight); when a local sentence-embedding model is wired, the best [`RERANK_POOL`] of
//! them are re-ranked by meaning (cosine similarity to the topic) mixed with that
//! lexical weight, so an answer worded unlike the question can still be shown.

use std::collections::{BTreeMap, BTreeSet};

use self::stems::score_terms;
use deepr_orchestrator::{ArchivedText, SentenceEmbedder, TextArchive};

pub(crate) mod asked;
mod contexts;
mod lexical_pass;
mod node;
mod sources;
mod spans;
mod tables;
mod weights;
mod whole_runs;

pub use node::{node, node_key};
use spans::{cited_before, message_span, stands_alone};
use weights::{
    exact_bonus, matched_weight, term_weights, unit_weight, Weights, NO_TERM_ROW_WEIGHT,
};
pub(crate) mod stems;

use crate::types::{Candidate, FetchOut, ScoreOut, ScoredSource, SentenceRef};
use crate::units::{is_front_matter, is_whole_block, states_a_figure, title_block_end};

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
/// 8: a list item or table row is read in its run of items or rows (their words at
/// half weight, as its headings'); an amount with its magnitude ("$212.4M") states a
/// figure; a line ending in a colon is no candidate.
/// 9: words are matched by their stems ("operational" meets "operations"), as the
/// corpus index matches them; a sentence that speaks of its own document ("this
/// update covers…") weighs as little as a pointer; a unit's weight is read from all it
/// quotes (a sentence leaning on the one before it, with that one); a lower-case
/// snake_case name's parts are words ("active_member_farms").
/// 10: documents judged off-topic by triage give no candidate; a chat message is one
/// unit; quoted replies and signatures are none.
/// 11: the lines under a document's title that name it — organisation, date, place,
/// no amount, no final stop — are no unit ("… - Board meeting, 20 October 2026").
/// 12: a brief's context adds what it says of its subject, not of its reader
/// (`Brief::subject`); the embedding model compares a brief's candidates with their
/// subquestion; a source triage judged background is marked (deepening skips it).
/// 13: a paragraph under a document's "Summary" (or "Overview", "Highlights", …) is
/// read in the document's title ([`contexts::under_summary`]).
/// 14: for the heuristic reader, a table's row with the largest amount ranks first
/// among its rows ([`tables::largest_amount_first`]).
/// 15: a short list item naming a person in a role ("Gwen Pargeter (Chair)") is a unit.
/// 16: "above"/"below" points elsewhere only when it ends a clause or follows a pointing
/// word ("the table below"); "23% above the FY2025 total" is a comparison, not a pointer.
/// 17: a model reader is shown the figure rows of a brief that asks for specifics too,
/// those sharing no word with the question after those that do (a tenth of the weight).
/// 18: a document follow-up read by a model has its document's units as candidates
/// ([`Earlier::document`]); a model's pool is followed by the rest of a short list or
/// table two of whose units it holds ([`whole_runs`]).
/// 19: ... or of a short current document (about a page), its units that share no word
/// with the question too, or of a short section (the units under one heading) of a
/// long one; at most as many units again as the pool; an undated document's recency is
/// read from the year its title names ("kpi quarterly fy26").
pub const STAGE_VERSION: u32 = 19;
/// Bonus of a sentence that states a figure.
const FIGURE_BONUS: f64 = 0.1;
/// Weight of a topic term that is not a term of the subquestion.
const TOPIC_TERM_WEIGHT: f64 = 0.5;
/// Candidate sentences the heuristic extractor reads per subquestion (a model reads
/// its own pool: `ResearchConfig::model_pool`).
pub const MAX_CANDIDATES: usize = 30;
pub use crate::rerank::{MEANING_WEIGHT, RERANK_POOL};
/// Most units a model reading documents is handed per subquestion: every unit of the
/// found documents, bounded (extract shows those its token budget allows).
pub const MAX_DOCUMENT_UNITS: usize = 3_000;

/// What earlier steps decided that score must respect: the sentences earlier rounds
/// cited (never offered again) and the documents' scope (an off-topic one gives no
/// candidate; one triage never judged is judged by the title rule).
#[derive(Clone, Copy)]
pub struct Earlier<'e> {
    pub cited: &'e BTreeSet<SentenceRef>,
    pub scopes: &'e crate::triage::TriageOut,
    /// The document a document follow-up read by a model asks about (deepening chose
    /// it; its content hash): only its units are candidates when it was fetched.
    pub document: Option<&'e str>,
}

/// What a lexical pass hands the re-ranker: the scored sources, every candidate
/// (weight, document, first sentence, last sentence) best first, and what a model may
/// read whole beside its pool ([`whole_runs::Wholes`]).
type Lexical = (
    Vec<ScoredSource>,
    Vec<(f64, String, u32, Option<u32>)>,
    whole_runs::Wholes,
);

/// Scores sources and candidate sentences; re-ranks the candidates by meaning when
/// `embedder` is given (an embedding failure is recorded and the lexical order kept);
/// the best `keep` candidates are kept.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    fetched: &FetchOut,
    ranking_question: &str,
    topic: &str,
    queries: &[String],
    earlier: Earlier<'_>,
    archive: &dyn TextArchive,
    embedder: Option<&dyn SentenceEmbedder>,
    keep: usize,
    reader: Reader,
) -> ScoreOut {
    let (sources, scored, wholes) = lexical(
        fetched,
        ranking_question,
        topic,
        queries,
        earlier,
        archive,
        reader,
    );
    // A model's pool is ranked from the units that share a word with the question; the
    // others (weight 0) may only complete a short section or document read whole.
    let (scored, unmatched): (Vec<_>, Vec<_>) = match reader {
        Reader::Model => scored.into_iter().partition(|unit| unit.0 > 0.0),
        _ => (scored, Vec::new()),
    };
    let (scored, rerank) = match embedder {
        None => (scored, None),
        Some(embedder) => {
            // A brief's subquestion asks about one of its parts: its candidates are
            // compared with what it asks, not with the whole brief (every subquestion's
            // pool was pulled towards the same brief-wide sentences). A question's
            // subquestions are compared with the question the user asked.
            let meaning = if deepr_tasks::brief::parse_brief(topic).has_parts() {
                ranking_question
            } else {
                topic
            };
            crate::rerank::rerank(scored, meaning, archive, embedder).await
        }
    };
    let mut kept: Vec<(f64, String, u32, Option<u32>)> =
        scored.iter().take(keep).cloned().collect();
    // A model reads a short list, table, section or document whole when two of its
    // units made the pool: at most as many units again as the pool.
    if reader == Reader::Model {
        let mut rest = scored.get(keep..).unwrap_or_default().to_vec();
        rest.extend(unmatched);
        let siblings = whole_runs::siblings(&kept, &rest, &wholes, keep);
        kept.extend(siblings);
    }
    let candidates = kept
        .into_iter()
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
    earlier: Earlier<'_>,
    archive: &dyn TextArchive,
    reader: Reader,
) -> Lexical {
    // Sentences are matched against the ranking question (what a relevant passage must
    // say); the search queries only widen document relevance.
    let question_terms: BTreeSet<String> = score_terms(ranking_question).into_iter().collect();
    let mut query_terms = question_terms.clone();
    for query in queries {
        query_terms.extend(score_terms(query));
    }
    let (sources, texts) = sources::score_sources(fetched, &query_terms, archive);

    let (sentence_terms, df) = lexical_pass::sentence_terms_of(&texts);
    let sentence_count = sentence_terms.len();
    // The rarer a question term among the fetched sentences, the more it says about
    // relevance ("journal" more than "sqlite"): idf = ln(1 + N / df).
    let idf = |term: &str| -> f64 {
        let n = df.get(term).copied().unwrap_or(0).max(1) as f64;
        (1.0 + sentence_count.max(1) as f64 / n).ln()
    };
    let brief = deepr_tasks::brief::parse_brief(topic);
    let weighted = term_weights(&question_terms, &brief.subject(topic), &idf);
    let total_weight: f64 = weighted.values().sum();

    // A brief that asks for specifics (numbers, dates, names) is answered by units that
    // state figures: their bonus triples.
    let specifics = brief.asks_for_specifics();
    // The exact terms are the asker's own (a planner may drop the "18" of "offset 18",
    // and quotes a page's title in its own questions): a question's, for every
    // subquestion; a brief's parts are ranked by their words.
    let exact = if brief.has_parts() {
        Vec::new()
    } else {
        deepr_evidence::terms::exact_terms(topic)
    };
    let weights = Weights {
        terms: &weighted,
        total: total_weight,
        figure_bonus: if specifics {
            3.0 * FIGURE_BONUS
        } else {
            FIGURE_BONUS
        },
        rows_with_figures: specifics && reader != Reader::Documents,
        figure_rows_last: reader == Reader::Model,
        exact: &exact,
        every_unit: reader != Reader::Heuristic,
        largest_row_first: reader == Reader::Heuristic,
    };
    let mut sources = sources;
    // A document follow-up reads its document: relayed models judged the other
    // documents' units in its pool off its question.
    let only = earlier
        .document
        .filter(|doc| sources.iter().any(|s| s.doc.content_sha256 == *doc));
    let mut scored: Vec<(f64, String, u32, Option<u32>)> = Vec::new();
    let mut wholes = whole_runs::Wholes::default();
    for source in &mut sources {
        let Some(text) = texts.get(&source.doc.content_sha256) else {
            continue;
        };
        // An off-topic document (the office's paperwork) gives no candidate.
        let headings = crate::decompose::outline_headings(&source.doc.outline, &text.text);
        source.off_topic = earlier.scopes.off_topic(&source.doc, &headings, &brief);
        source.background = earlier.scopes.is_background(&source.doc.content_sha256);
        let asked = only.is_none_or(|doc| doc == source.doc.content_sha256);
        if source.off_topic.is_none() && asked {
            let (units, unit_runs) =
                units_of(source, text, &sentence_terms, &weights, earlier.cited);
            // Only a model reading its ranked pool reads wholes beside it.
            if reader == Reader::Model {
                wholes.add_document(&source.doc, text, &units, unit_runs);
            }
            scored.extend(units);
        }
    }
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    lexical_pass::one_candidate_per_sentence(&mut scored);
    (sources, scored, wholes)
}

/// Who reads the candidates: the offline heuristic (its 30, partitioned, above its
/// floor) or a model (its own larger pool, uncut). For a brief that asks for specifics,
/// both are handed the list items and table rows stating a figure that share no word
/// with the question, after those that do: a model can tell what such a row means, but
/// only if it is shown (a workbook's per-site volumes, worded unlike "how much did each
/// factory handle", had been in no relayed model's pool).
/// A model reading documents ([`crate::research::Reading::Documents`]) is handed every
/// unit of a found document — those that share no word with the question too, at
/// weight 0, after the ranked ones — so that extract can show each document whole, in
/// its order, under its headings. A model reading its ranked pool is handed them too,
/// but only to complete a short section or document two of whose units it pooled
/// ([`whole_runs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    Heuristic,
    Model,
    Documents,
}

/// The candidate units of one source's text with their weights: sentences and
/// fragments of a usable length that match the question, not cited before.
fn units_of(
    source: &ScoredSource,
    text: &ArchivedText,
    sentence_terms: &BTreeMap<(&str, u32), BTreeSet<String>>,
    weights: &Weights<'_>,
    exclude: &BTreeSet<SentenceRef>,
) -> (Vec<whole_runs::Ranked>, Vec<Option<usize>>) {
    let mut out = Vec::new();
    let headings = source.doc.outline.heading_index(&text.text);
    let (context_words, context_of) = contexts::unit_contexts(
        &source.doc.content_sha256,
        text,
        &source.doc.outline,
        &headings,
        sentence_terms,
    );
    let outline = &source.doc.outline;
    let title_end = title_block_end(&text.text, outline);
    let summary_words = contexts::summary_context(&source.doc.title);
    // The run (and text) of each pushed list item or table row, to read tables whole.
    let mut runs_of_out: Vec<Option<(usize, &str)>> = Vec::new();
    for sentence in text.sentences.iter() {
        let Some(Unit {
            body,
            block_unit,
            first,
            last,
        }) = unit_at(text, outline, sentence, title_end)
        else {
            continue;
        };
        let sentence_end = (last != first).then_some(last);
        let reference = SentenceRef {
            content_sha256: source.doc.content_sha256.clone(),
            sentence: first,
            sentence_end,
            written_quote: None,
        };
        // Already cited in an earlier round, alone or inside a span: not again.
        if cited_before(exclude, &reference, first, last) {
            continue;
        }
        let Some(terms) = sentence_terms.get(&(source.doc.content_sha256.as_str(), sentence.index))
        else {
            continue;
        };
        // The run a list item or table row stands in, and the headings above it, say
        // what it is about ("Revenue" above "Quarterly revenue: $14.2M"; "Total
        // reserves" beside "Unrestricted: 47 days"): their words count at half weight.
        let run = context_of
            .get(&sentence.start)
            .and_then(|k| context_words.get(*k))
            .filter(|_| block_unit);
        // A list item or row is read in its run; a paragraph of a document's summary
        // in the document's title.
        let no_words = BTreeSet::new();
        let section = match run {
            Some(run) => run,
            None if contexts::under_summary(headings.path_at(sentence.start)) => &summary_words,
            None => &no_words,
        };
        let matched = matched_weight(weights, terms, section);
        // A brief that asks for specifics reads every list item and table row stating
        // a figure in a fetched document, worded like the question or not ("Gross
        // margin: 42.5%" answers "financial trajectory"); its bonus alone ranks it.
        let figure_row = weights.rows_with_figures && block_unit && states_a_figure(body);
        let run_index = context_of
            .get(&sentence.start)
            .copied()
            .filter(|_| block_unit);
        if matched <= 0.0 && !figure_row {
            if weights.every_unit {
                out.push((0.0, source.doc.content_sha256.clone(), first, sentence_end));
                runs_of_out.push(None);
            }
            continue;
        }
        // What is quoted is the whole span: a sentence leaning on one that speaks of its
        // document ("But there is no guarantee…") is weighed with it.
        let quoted = deepr_evidence::sentences::span(&text.text, &text.sentences, first, last)
            .unwrap_or(body);
        let mut weight =
            unit_weight(matched, quoted, source, weights) + exact_bonus(quoted, weights);
        if matched <= 0.0 && weights.figure_rows_last {
            weight = crate::rerank::round4(weight * NO_TERM_ROW_WEIGHT);
        }
        out.push((
            weight,
            source.doc.content_sha256.clone(),
            first,
            sentence_end,
        ));
        runs_of_out.push(run_index.map(|run| (run, body)));
    }
    if weights.largest_row_first {
        tables::largest_amount_first(&mut out, &runs_of_out);
    }
    let runs = runs_of_out.iter().map(|r| r.map(|(run, _)| run)).collect();
    (out, runs)
}

/// A sentence as a candidate unit: its text (a chat message's whole text), whether it
/// is a whole block, and the sentences it is quoted with.
struct Unit<'t> {
    body: &'t str,
    block_unit: bool,
    first: u32,
    last: u32,
}

/// The unit `sentence` of `text` stands for, or `None` when it is none: a quoted reply
/// or signature, a chat message's later sentence, too short or too long, a line that
/// introduces what follows, or a line of the title block that only names the document.
fn unit_at<'t>(
    text: &'t ArchivedText,
    outline: &deepr_orchestrator::Outline,
    sentence: &deepr_evidence::Sentence,
    title_end: usize,
) -> Option<Unit<'t>> {
    let body = sentence.text(&text.text)?;
    // What repeats an earlier message (a quoted reply, a signature) is no evidence.
    if outline.is_quoted_at(sentence.start) {
        return None;
    }
    // A chat message is one unit: its first sentence stands for all of it.
    let message = message_span(text, outline, sentence);
    if message == Some(None) {
        return None;
    }
    let body = match message.flatten() {
        Some((_, _, whole)) => whole,
        None => body,
    };
    // A list item or a table row is a unit of its own even without a final period: a
    // whole block that is not a heading.
    let block_unit = message.is_some()
        || is_whole_block(&text.text, sentence.start, sentence.end)
            && !outline.is_heading_at(sentence.start);
    if !stands_alone(body, block_unit, message.is_some()) {
        return None;
    }
    // The lines under a document's title that name it (organisation, date, place)
    // state nothing.
    if block_unit && message.is_none() && sentence.start < title_end && is_front_matter(body) {
        return None;
    }
    // A sentence that leans on the one before it is quoted with it.
    let (first, last) = match message.flatten() {
        Some((first, last, _)) => (first, last),
        None => deepr_evidence::context_span(&text.text, &text.sentences, sentence.index as usize),
    };
    Some(Unit {
        body,
        block_unit,
        first,
        last,
    })
}

#[cfg(test)]
mod tests;
