//! extract: candidate sentences (by ID) → claims citing sentence IDs.
//!
//! The model sees each candidate as `[cN] sentence` and answers with IDs only; the
//! quote text of every citation is looked up from the archive by (document, sentence
//! index), so a model cannot paraphrase a quote. Unknown IDs make the answer invalid.

use std::collections::{BTreeMap, BTreeSet};

use crate::model_call::{call_task, Models, TaskCall};
use crate::types::{ClaimDraft, ExtractOut, ScoreOut, SentenceRef, Subq};
use deepr_orchestrator::{LedgerEntry, TextArchive, Tier};
use deepr_tasks::extract::{Candidate, Extract, Input};

pub mod documents;
mod free_quote;

pub use free_quote::{best_sentence, run_free, FREE_QUOTE_DOCS, FREE_QUOTE_DOC_CHARS};

/// 2: candidates quoted with the sentence they lean on carry `sentence_end`.
/// 3: a round's candidates are partitioned across its subquestions ([`partition`]).
/// 4: the partition assigns greedily (only a sentence already given away blocks one).
/// 5: a model extractor reads its own pool (see [`candidates_for`]); candidates carry
/// their heading path and their source's date and status.
/// 6: the offline reader's pools hold an old version's units only when no current
/// document has one (`without_stale`, before the partition).
/// 7: a list item is shown after its list's lead-in, and a claim citing it cites the
/// lead-in too ([`crate::cited::with_lead_ins`]; free-quote reads whole pages, its quotes as written).
/// 8: the key names the subquestion; a refresh reads only new documents' candidates
/// beside its parent's standing claims ([`crate::earlier`]).
/// 9: a model also reads the short lists and tables score joined to its pool.
/// 10: ... and short documents (as many units again as its pool at most).
pub const STAGE_VERSION: u32 = 10;

/// Candidates a model extractor is shown per subquestion unless configured otherwise.
pub const DEFAULT_MODEL_POOL: usize = 40;

/// What subquestion `own`'s extractor reads. The offline heuristic gets its share of
/// the round's best [`crate::score::MAX_CANDIDATES`] per subquestion ([`partition`]):
/// its relevance sense is word overlap, so the partition keeps it from quoting one
/// sentence in two sections. A model reads up to `model_pool` of its own subquestion's
/// candidates in rank order, uncut, then the runs and short documents score joined (as
/// many again at most, [`crate::score`]): it
/// judges relevance itself; a filter tuned for the heuristic must not decide its reading.
pub fn candidates_for(
    round: &[ScoreOut],
    own: usize,
    model_reads: bool,
    model_pool: usize,
) -> ScoreOut {
    if model_reads {
        let mut mine = round.get(own).cloned().unwrap_or_default();
        mine.candidates.truncate(model_pool.max(1) * 2);
        return mine;
    }
    let heuristic: Vec<ScoreOut> = round
        .iter()
        .map(|scored| {
            let mut cut = without_stale(scored);
            cut.candidates.truncate(crate::score::MAX_CANDIDATES);
            cut
        })
        .collect();
    partition(&heuristic, own)
}

/// A subquestion's candidates without those of archived, superseded or draft documents
/// when a current document has one: the heuristic cannot tell which of a stale
/// document's figures a newer one replaces, so it reads old versions only when nothing
/// current answers. (Its extractor had the same rule, but applied after the partition a
/// later round's share could hold only stale units once the current ones were cited.)
fn without_stale(scored: &ScoreOut) -> ScoreOut {
    let stale: BTreeSet<&str> = scored
        .sources
        .iter()
        .filter(|s| s.doc.outline.is_stale() || s.doc.outline.is_draft())
        .map(|s| s.doc.content_sha256.as_str())
        .collect();
    let mut out = scored.clone();
    if scored
        .candidates
        .iter()
        .any(|c| !stale.contains(c.content_sha256.as_str()))
    {
        out.candidates
            .retain(|c| !stale.contains(c.content_sha256.as_str()));
    }
    out
}

/// Subquestion `own`'s share of its round's candidate sentences: every candidate of the
/// round, best place first (a tie goes to the earlier subquestion), goes to its
/// subquestion unless it overlaps one already given to another — so each sentence is
/// offered to one extractor only, a report never spends two sections' quotes on one
/// sentence, and every section reaches for its own. Sentences overlap when they share
/// a document and a sentence index (a quote that spans two sentences overlaps either
/// one alone).
pub fn partition(round: &[ScoreOut], own: usize) -> ScoreOut {
    let Some(mine) = round.get(own) else {
        return ScoreOut::default();
    };
    let overlaps = |a: &crate::types::Candidate, b: &crate::types::Candidate| {
        a.content_sha256 == b.content_sha256
            && a.sentence <= b.sentence_end.unwrap_or(b.sentence)
            && b.sentence <= a.sentence_end.unwrap_or(a.sentence)
    };
    let mut order: Vec<(usize, usize)> = round
        .iter()
        .enumerate()
        .flat_map(|(subq, scored)| (0..scored.candidates.len()).map(move |rank| (rank, subq)))
        .collect();
    order.sort_unstable();
    let mut given: Vec<(usize, &crate::types::Candidate)> = Vec::new();
    let mut kept = Vec::new();
    for (rank, subq) in order {
        let candidate = &round[subq].candidates[rank];
        if given
            .iter()
            .any(|(to, other)| *to != subq && overlaps(other, candidate))
        {
            continue;
        }
        given.push((subq, candidate));
        if subq == own {
            kept.push(candidate.clone());
        }
    }
    // Kept in the subquestion's own order (ranks ascend within it).
    let candidates = kept;
    ScoreOut {
        sources: mine.sources.clone(),
        candidates,
        rerank: mine.rerank.clone(),
        degraded: mine.degraded.clone(),
    }
}

/// The candidates as the extractor sees them: each unit on one line with its ID, its
/// source's title, date and status, and for a list item or table row its headings —
/// every unit its headings when `as_documents` (a document is read in its order, and a
/// paragraph under "Incidents" must not read as standing under none).
pub(crate) fn shown_candidates(
    scored: &ScoreOut,
    archive: &dyn TextArchive,
    as_documents: bool,
) -> Vec<Candidate> {
    let docs: BTreeMap<&str, &deepr_orchestrator::DocMeta> = scored
        .sources
        .iter()
        .map(|s| (s.doc.content_sha256.as_str(), &s.doc))
        .collect();
    let mut candidates = Vec::new();
    for candidate in &scored.candidates {
        let Some(text) = archive.get(&candidate.content_sha256) else {
            continue;
        };
        let Some(sentence) = text.quote(candidate.sentence, candidate.sentence_end) else {
            continue;
        };
        let doc = docs.get(candidate.content_sha256.as_str()).copied();
        let mut source =
            crate::cited::source_note(doc, &text, candidate.sentence, candidate.sentence_end);
        if as_documents && source.headings.is_empty() {
            if let (Some(doc), Some(unit)) = (doc, text.sentences.get(candidate.sentence as usize))
            {
                source.headings = doc.outline.heading_path(&text.text, unit.start);
            }
        }
        candidates.push(Candidate {
            id: candidate.cid.clone(),
            text: deepr_tasks::one_line(sentence),
            weight: candidate.weight,
            doc: candidate.content_sha256.clone(),
            title: doc.map(|d| d.title.clone()).unwrap_or_default(),
            source,
        });
    }
    candidates
}

/// The answer's claims (at most `max_claims`) with their candidate IDs turned into
/// sentence references; a claim that cites no shown candidate, or says nothing, is
/// left out.
fn claims_of(
    subq: &Subq,
    scored: &ScoreOut,
    answered: &[deepr_tasks::extract::AnswerClaim],
    max_claims: usize,
) -> Vec<ClaimDraft> {
    let by_cid: BTreeMap<&str, SentenceRef> = scored
        .candidates
        .iter()
        .map(|c| {
            (
                c.cid.as_str(),
                SentenceRef {
                    content_sha256: c.content_sha256.clone(),
                    sentence: c.sentence,
                    sentence_end: c.sentence_end,
                    written_quote: None,
                },
            )
        })
        .collect();
    let mut claims = Vec::new();
    for claim in answered.iter().take(max_claims) {
        let mut citations: Vec<SentenceRef> = Vec::new();
        for id in &claim.sentence_ids {
            if let Some(reference) = by_cid.get(id.as_str()) {
                if !citations.contains(reference) {
                    citations.push(reference.clone());
                }
            }
        }
        let text: String = crate::model_call::clean_model_text(&claim.text, 600);
        if citations.is_empty() || text.is_empty() {
            continue;
        }
        claims.push(ClaimDraft {
            id: format!("{}-c{}", subq.id, claims.len() + 1),
            subquestion: subq.id.clone(),
            text,
            citations,
        });
    }
    claims
}

/// Subquestion `subq`'s claims from `candidates` (what [`shown_candidates`] made of
/// `scored`), at most `max_claims`.
pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    subq: &Subq,
    scored: &ScoreOut,
    max_claims: usize,
    candidates: Vec<Candidate>,
    models: Models<'_>,
) -> (ExtractOut, Vec<LedgerEntry>) {
    if candidates.is_empty() {
        return (
            ExtractOut {
                claims: Vec::new(),
                degraded: None,
            },
            Vec::new(),
        );
    }
    let input = Input {
        subquestion: subq.text.clone(),
        max_claims,
        candidates,
    };
    let result = call_task(
        models,
        TaskCall::<Extract> {
            node_id,
            stage: "extract",
            prompt,
            tier: Tier::Cheap,
            input: &input,
        },
    )
    .await;
    let claims = claims_of(subq, scored, &result.value.claims, max_claims);
    (
        ExtractOut {
            claims,
            degraded: result.degraded,
        },
        result.calls,
    )
}

/// Subquestion `own`'s claims, from its share of the round's candidates (`scores`:
/// the round's score nodes, in subquestion order).
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    own: usize,
    subq: &Subq,
    scores: &[String],
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    let p = cx.providers.clone();
    let free = cx.config.strategy == crate::research::Strategy::FreeQuote;
    // Free-quote reads whole pages, not candidates: its own score only.
    let deps = match (free, scores.get(own)) {
        (true, Some(mine)) => vec![mine.clone()],
        _ => scores.to_vec(),
    };
    // Who reads the candidates decides how many: see `candidates_for`.
    let model_reads = cx.model_extracts();
    let reads_documents = cx.model_reads_documents();
    let pool = cx.config.model_pool;
    let prompt = match free {
        true => &cx.providers.prompts.extract_free,
        false => &cx.providers.prompts.extract,
    };
    let max = cx.config.depth.claims_per_subquestion(cx.brief_with_parts);
    let llm = crate::model_call::prompt_key(prompt, cx.providers.cheap_models());
    let mut key = serde_json::json!({"v": STAGE_VERSION, "max": max, "free": free, "pool": if model_reads { pool } else { 0 }, "llm": llm, "subq": subq.text});
    if reads_documents && !free {
        key["reading"] = serde_json::json!({"documents": documents::DOCUMENT_TOKENS, "whole": documents::WHOLE_DOCUMENT_TOKENS, "share": documents::WHOLE_SHARE});
    }
    let id = crate::research::node_id::step(round, &subq.id, "extract");
    // A refresh starts from its parent's claims (free-quote reads pages again).
    let parent = match free {
        true => None,
        false => cx
            .config
            .parent_reading
            .as_ref()
            .and_then(|p| p.extract_step(&id, &key)),
    };
    if let Some(parent) = &parent {
        key["parent"] = serde_json::json!(parent.digest);
    }
    let (s, inputs) = (subq.clone(), deps.clone());
    let node = spec(id, "extract", key, move |ctx| async move {
        // Each sentence goes to the one subquestion of the round that ranks it best.
        let mut round_scores = inputs
            .iter()
            .map(|id| read(&ctx.inputs, id))
            .collect::<Result<Vec<ScoreOut>, String>>()?;
        let (out, calls) = if free {
            let scored = round_scores.swap_remove(0);
            run_free(
                &ctx.node_id,
                &p.prompts.extract_free,
                &s,
                &scored,
                max,
                p.archive.as_ref(),
                p.cheap_models(),
            )
            .await
        } else {
            let scored = match (reads_documents, round_scores.get(own)) {
                (true, Some(mine)) => {
                    documents::pool(mine, p.archive.as_ref(), documents::DOCUMENT_TOKENS)
                }
                _ => candidates_for(&round_scores, own, model_reads, pool),
            };
            let scored = match &parent {
                Some(parent) => parent.news(&scored),
                None => scored,
            };
            let (mut out, calls) = run(
                &ctx.node_id,
                &p.prompts.extract,
                &s,
                &scored,
                max,
                shown_candidates(&scored, p.archive.as_ref(), reads_documents),
                p.cheap_models(),
            )
            .await;
            for claim in &mut out.claims {
                let citations = std::mem::take(&mut claim.citations);
                claim.citations =
                    crate::cited::with_lead_ins(citations, &scored, p.archive.as_ref());
            }
            match &parent {
                Some(parent) => (parent.merged(out, &s.id, max), calls),
                None => (out, calls),
            }
        };
        finish(out, calls)
    });
    (node, deps)
}

#[cfg(test)]
mod tests;
