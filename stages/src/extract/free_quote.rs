//! The `free-quote` strategy's extractor: the model reads the best-scored documents'
//! page text (capped) and writes claims with quotes of its own, each placed on the
//! sentence it best matches.

use std::collections::{BTreeMap, BTreeSet};

use crate::model_call::{call_task, Models, TaskCall};
use crate::types::{ClaimDraft, ExtractOut, ScoreOut, SentenceRef, Subq};
use deepr_evidence::terms::content_terms;
use deepr_orchestrator::{LedgerEntry, TextArchive, Tier};
use deepr_tasks::extract_free::{self as free, ExtractFree};

/// Characters of each document shown to the model under `free-quote`.
pub const FREE_QUOTE_DOC_CHARS: usize = 6000;
/// Documents shown under `free-quote` (the best-scored).
pub const FREE_QUOTE_DOCS: usize = 3;

fn capped(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// The sentence of `text` that best matches a written quote: equal after
/// normalisation, else containing or contained in it, else the most shared words.
pub fn best_sentence(archived: &deepr_orchestrator::ArchivedText, quote: &str) -> u32 {
    let wanted = deepr_evidence::normalise(quote);
    let wanted_terms: BTreeSet<String> = content_terms(quote).into_iter().collect();
    let mut best = (0usize, 0u32);
    for sentence in archived.sentences.iter() {
        let Some(text) = sentence.text(&archived.text) else {
            continue;
        };
        let normal = deepr_evidence::normalise(text);
        let score = if normal == wanted {
            usize::MAX
        } else if normal.contains(&wanted) || wanted.contains(&normal) {
            usize::MAX - 1
        } else {
            content_terms(text)
                .iter()
                .filter(|t| wanted_terms.contains(*t))
                .count()
        };
        if score > best.0 {
            best = (score, sentence.index);
        }
    }
    best.1
}

/// `free-quote`: the model reads page text and writes claims with their own quotes.
pub async fn run_free(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    subq: &Subq,
    scored: &ScoreOut,
    max_claims: usize,
    archive: &dyn TextArchive,
    models: Models<'_>,
) -> (ExtractOut, Vec<LedgerEntry>) {
    let mut documents = Vec::new();
    let mut docs = BTreeMap::new();
    for source in scored.sources.iter().take(FREE_QUOTE_DOCS) {
        let Some(text) = archive.get(&source.doc.content_sha256) else {
            continue;
        };
        let id = format!("d{}", documents.len() + 1);
        documents.push(free::Document {
            id: id.clone(),
            title: source.doc.title.clone(),
            text: capped(&text.text, FREE_QUOTE_DOC_CHARS).to_string(),
        });
        docs.insert(id, text);
    }
    if documents.is_empty() {
        return (
            ExtractOut {
                claims: Vec::new(),
                degraded: None,
            },
            Vec::new(),
        );
    }
    let input = free::Input {
        subquestion: subq.text.clone(),
        max_claims,
        documents,
    };
    let result = call_task(
        models,
        TaskCall::<ExtractFree> {
            node_id,
            stage: "extract",
            prompt,
            tier: Tier::Cheap,
            input: &input,
        },
    )
    .await;
    let mut claims = Vec::new();
    for claim in result.value.claims.iter().take(max_claims) {
        let Some(doc) = docs.get(&claim.document) else {
            continue;
        };
        let text = crate::model_call::clean_model_text(&claim.text, 600);
        // The quote is kept exactly as written (control characters aside): measuring
        // how often it stops being verbatim is the point of this strategy.
        let quote: String = claim
            .quote
            .chars()
            .filter(|c| !c.is_control() || c.is_whitespace())
            .take(2000)
            .collect();
        if text.is_empty() || quote.trim().is_empty() {
            continue;
        }
        let sentence = best_sentence(doc, &quote);
        claims.push(ClaimDraft {
            id: format!("{}-c{}", subq.id, claims.len() + 1),
            subquestion: subq.id.clone(),
            text,
            citations: vec![SentenceRef {
                content_sha256: doc.content_sha256.clone(),
                sentence,
                sentence_end: None,
                written_quote: Some(quote),
            }],
        });
    }
    (
        ExtractOut {
            claims,
            degraded: result.degraded,
        },
        result.calls,
    )
}
