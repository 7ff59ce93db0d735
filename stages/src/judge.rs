//! judge: claims + their quotes → a verdict per claim, one call per batch of at most
//! 8 claims, not votes per claim. A batch holds whole subquestions' claims (a
//! subquestion with more is cut into batches of its own), so a refresh whose new
//! document changed one subquestion's claims pays for that subquestion's batch, not
//! for every batch after it (the others' prompts are as they were, answered by the
//! response cache).
//!
//! A deterministic floor applies whatever the model says: a claim that shares no
//! content word with its quotes is never `supported`.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::report::Verdict;
use deepr_evidence::terms::content_terms;
use deepr_orchestrator::{LedgerEntry, TextArchive, Tier};
use deepr_tasks::judge::{self as task, Judge};
use deepr_tasks::judge_vote::{self as vote, JudgeVote};

use crate::concurrent::in_order;
use crate::model_call::{call_task, Models, TaskCall};
use crate::types::{ClaimDraft, JudgeOut};

/// 2: voters read the neighbourhood of each cited sentence (not a page prefix), and a
/// free-quote claim is judged on the quote the report shows.
/// 3: each quote is shown under its document and, for a row, its headings.
/// 4: a batch holds whole subquestions' claims ([`batches_of`]).
pub const STAGE_VERSION: u32 = 4;
/// Claims per judge call.
pub const BATCH: usize = 8;

/// The quotes of a claim as the report shows them: the cited sentence from the
/// archive, or, for a free-quote claim, the quote the model wrote (judging the sentence
/// it was mapped to instead would judge something the reader never sees).
pub fn quotes(claim: &ClaimDraft, archive: &dyn TextArchive) -> Vec<String> {
    claim
        .citations
        .iter()
        .filter_map(|c| match &c.written_quote {
            Some(written) => Some(written.clone()),
            None => archive
                .get(&c.content_sha256)
                .and_then(|t| t.quote(c.sentence, c.sentence_end).map(str::to_string)),
        })
        .collect()
}

/// What a voter reads of one source: for each cited sentence, the sentence with its
/// neighbours, added alternately before and after while the window stays within
/// `max_chars` (shared equally by the source's cited sentences). Each window is one
/// exact slice of the archived text; windows are in text order, overlaps merged.
pub fn neighbourhood(
    text: &deepr_orchestrator::ArchivedText,
    cited: &[u32],
    max_chars: usize,
) -> String {
    let sentences = &text.sentences;
    let per_window = max_chars / cited.len().max(1);
    let chars = |from: usize, to: usize| -> usize {
        text.text
            .get(sentences[from].start..sentences[to].end)
            .map(|s| s.chars().count())
            .unwrap_or(usize::MAX)
    };
    let mut windows: Vec<(usize, usize)> = Vec::new();
    for &index in cited {
        let Some(at) = sentences.iter().position(|s| s.index == index) else {
            continue;
        };
        let (mut from, mut to) = (at, at);
        loop {
            let before = (from > 0 && chars(from - 1, to) <= per_window).then(|| from - 1);
            if let Some(b) = before {
                from = b;
            }
            let after =
                (to + 1 < sentences.len() && chars(from, to + 1) <= per_window).then(|| to + 1);
            if let Some(a) = after {
                to = a;
            }
            if before.is_none() && after.is_none() {
                break;
            }
        }
        windows.push((from, to));
    }
    windows.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (from, to) in windows {
        match merged.last_mut() {
            Some(last) if from <= last.1 + 1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    merged
        .iter()
        .filter_map(|&(from, to)| text.text.get(sentences[from].start..sentences[to].end))
        .collect::<Vec<_>>()
        .join("\n…\n")
}

/// `claims` (they come grouped by subquestion) in batches of at most [`BATCH`], in
/// order: a batch holds whole subquestions' claims, as many as fit; a subquestion with
/// more than a batch is cut into batches of its own.
pub fn batches_of<'a, T>(claims: &'a [(&'a ClaimDraft, T)]) -> Vec<&'a [(&'a ClaimDraft, T)]> {
    // The runs of one subquestion's claims, as (start, end).
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (i, (claim, _)) in claims.iter().enumerate() {
        match groups.last_mut() {
            Some((start, end)) if claims[*start].0.subquestion == claim.subquestion => *end = i + 1,
            _ => groups.push((i, i + 1)),
        }
    }
    let mut batches = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    for (start, end) in groups {
        if let Some((from, to)) = open {
            if to - from + end - start <= BATCH {
                open = Some((from, end));
                continue;
            }
            batches.push(&claims[from..to]);
            open = None;
        }
        if end - start > BATCH {
            batches.extend(claims[start..end].chunks(BATCH));
        } else {
            open = Some((start, end));
        }
    }
    batches.extend(open.map(|(from, to)| &claims[from..to]));
    batches
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    claims: &[ClaimDraft],
    docs: &BTreeMap<String, deepr_orchestrator::DocMeta>,
    archive: &dyn TextArchive,
    models: Models<'_>,
    io_concurrency: usize,
) -> (JudgeOut, Vec<LedgerEntry>) {
    let mut verdicts: BTreeMap<String, Verdict> = BTreeMap::new();
    let mut calls = Vec::new();
    let mut degraded = Vec::new();
    let mut batches = 0;
    // Each claim's quotes, looked up once: shown to the model and used by the floor.
    let claim_quotes: Vec<Vec<String>> = claims.iter().map(|c| quotes(c, archive)).collect();
    let judged: Vec<(&ClaimDraft, &Vec<String>)> = claims.iter().zip(&claim_quotes).collect();
    // The batches are independent calls: they run at once (at most `io_concurrency`,
    // and under the model provider's own limits), merged in batch order.
    let batch_calls = batches_of(&judged)
        .into_iter()
        .map(|batch| async move {
            let input = task::Input {
                claims: batch
                    .iter()
                    .map(|(c, quotes)| task::Claim {
                        id: c.id.clone(),
                        text: c.text.clone(),
                        quotes: quotes.to_vec(),
                        sources: crate::cited::quote_sources(c, docs, archive),
                    })
                    .collect(),
            };
            let ids: BTreeSet<String> = batch.iter().map(|(c, _)| c.id.clone()).collect();
            let result = call_task(
                models,
                TaskCall::<Judge> {
                    node_id,
                    stage: "judge",
                    prompt,
                    tier: Tier::Cheap,
                    input: &input,
                },
            )
            .await;
            (ids, result)
        })
        .collect();
    let answers = in_order(batch_calls, io_concurrency).await;
    for (ids, result) in answers {
        batches += 1;
        calls.extend(result.calls);
        if let Some(why) = result.degraded {
            degraded.push(why);
        }
        for v in result.value.verdicts {
            if ids.contains(&v.claim_id) {
                verdicts.insert(v.claim_id, parse_verdict(&v.verdict));
            }
        }
    }
    // Claims the model skipped stay unjudged; the floor applies to every verdict.
    let verdicts = judged
        .iter()
        .map(|(c, q)| {
            let verdict = verdicts.get(&c.id).copied().unwrap_or(Verdict::Unjudged);
            (c.id.clone(), apply_floor(verdict, &c.text, q))
        })
        .collect();
    let degraded = if degraded.is_empty() {
        None
    } else {
        Some(degraded.join("; "))
    };
    (
        JudgeOut {
            verdicts,
            calls: batches,
            degraded,
        },
        calls,
    )
}

fn parse_verdict(text: &str) -> Verdict {
    match text.trim().to_ascii_lowercase().as_str() {
        "supported" => Verdict::Supported,
        "partial" => Verdict::Partial,
        "unsupported" => Verdict::Unsupported,
        _ => Verdict::Unjudged,
    }
}

/// The deterministic floor: no shared content word → never supported.
pub fn apply_floor(verdict: Verdict, claim: &str, quotes: &[String]) -> Verdict {
    if verdict != Verdict::Supported {
        return verdict;
    }
    let claim_terms: BTreeSet<String> = content_terms(claim).into_iter().collect();
    let shares = quotes
        .iter()
        .any(|q| content_terms(q).iter().any(|t| claim_terms.contains(t)));
    if shares {
        verdict
    } else {
        Verdict::Unsupported
    }
}

// ------------------------------------------------------ per-claim strategy

/// Verifier votes per claim under `per-claim`.
pub const VOTES: usize = 3;
/// Characters of each cited source a verifier reads: the neighbourhood of its cited
/// sentences ([`neighbourhood`]).
pub const VOTE_SOURCE_CHARS: usize = 8000;

/// One verifier call: the claim, what its voters read of its sources, and the voter's
/// number.
type Ballot<'a> = (&'a ClaimDraft, &'a Vec<String>, usize);

/// What a claim's voters read: the neighbourhood of its cited sentences in each of its
/// sources, sources in the order the claim first cites them.
fn voters_read(claim: &ClaimDraft, archive: &dyn TextArchive) -> Vec<String> {
    let mut by_source: Vec<(&str, Vec<u32>)> = Vec::new();
    for citation in &claim.citations {
        // A quote spanning two sentences: the window grows around its last (the
        // sentence that leans on the one before, which the window reaches too).
        let sentence = citation.sentence_end.unwrap_or(citation.sentence);
        match by_source
            .iter_mut()
            .find(|(sha, _)| *sha == citation.content_sha256)
        {
            Some((_, cited)) => cited.push(sentence),
            None => by_source.push((&citation.content_sha256, vec![sentence])),
        }
    }
    by_source
        .iter()
        .filter_map(|(sha, cited)| {
            archive
                .get(sha)
                .map(|t| neighbourhood(&t, cited, VOTE_SOURCE_CHARS))
        })
        .collect()
}

/// Two claims with the same text and sources ask the same question: it is asked once
/// and its answer counts for both. (Asked twice at once, both would be paid; one after
/// the other, the second would be a cache hit — the answer must not depend on the
/// schedule.) The ballots asked (their indexes), and each ballot's answer slot.
fn asked_once(ballots: &[Ballot<'_>]) -> (Vec<usize>, Vec<usize>) {
    let mut unique: Vec<usize> = Vec::new();
    let mut slot_of: Vec<usize> = Vec::with_capacity(ballots.len());
    let mut seen: BTreeMap<(usize, &str, &[String]), usize> = BTreeMap::new();
    for (index, (claim, sources, voter)) in ballots.iter().enumerate() {
        let slot = *seen
            .entry((*voter, claim.text.as_str(), sources.as_slice()))
            .or_insert_with(|| {
                unique.push(index);
                unique.len() - 1
            });
        slot_of.push(slot);
    }
    (unique, slot_of)
}

/// The majority of a claim's votes; a tie is `partial`.
fn majority(votes: &[Verdict]) -> Verdict {
    let mut tally = BTreeMap::new();
    for verdict in votes {
        *tally.entry(*verdict).or_insert(0usize) += 1;
    }
    let top = tally.values().copied().max().unwrap_or(0);
    let winners: Vec<Verdict> = tally
        .iter()
        .filter(|(_, n)| **n == top)
        .map(|(v, _)| *v)
        .collect();
    if winners.len() == 1 {
        winners[0]
    } else {
        Verdict::Partial
    }
}

/// `per-claim`: three independent verifier calls per claim, each reading the
/// neighbourhood of every cited sentence in the claim's sources; the majority wins,
/// ties are `partial`.
pub async fn run_votes(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    claims: &[ClaimDraft],
    archive: &dyn TextArchive,
    models: Models<'_>,
    io_concurrency: usize,
) -> (JudgeOut, Vec<LedgerEntry>) {
    let mut verdicts = Vec::new();
    let mut calls = Vec::new();
    let mut degraded = Vec::new();
    let mut count = 0u32;
    // What each claim's voters read, built once per claim.
    let shown: Vec<Vec<String>> = claims
        .iter()
        .map(|claim| voters_read(claim, archive))
        .collect();
    // Every vote of every claim is an independent call: all run at once (at most
    // `io_concurrency`), tallied in (claim, voter) order.
    let ballots: Vec<Ballot<'_>> = claims
        .iter()
        .zip(&shown)
        .flat_map(|(claim, shown)| (1..=VOTES).map(move |voter| (claim, shown, voter)))
        .collect();
    let (unique, slot_of) = asked_once(&ballots);
    let vote_calls = unique
        .iter()
        .map(|&index| ballots[index])
        .map(|(claim, sources, voter)| async move {
            let input = vote::Input {
                voter,
                claim: claim.text.clone(),
                sources: sources.to_vec(),
            };
            call_task(
                models,
                TaskCall::<JudgeVote> {
                    node_id,
                    stage: "judge",
                    prompt,
                    tier: Tier::Cheap,
                    input: &input,
                },
            )
            .await
        })
        .collect();
    let answers = in_order(vote_calls, io_concurrency).await;
    for result in &answers {
        calls.extend(result.calls.iter().cloned());
        if let Some(why) = &result.degraded {
            degraded.push(why.clone());
        }
    }
    let mut slots = slot_of.into_iter();
    for claim in claims {
        let votes: Vec<Verdict> = slots
            .by_ref()
            .take(VOTES)
            .map(|slot| {
                answers
                    .get(slot)
                    .map(|result| parse_verdict(&result.value.verdict))
                    .unwrap_or(Verdict::Unjudged)
            })
            .collect();
        count += votes.len() as u32;
        verdicts.push((
            claim.id.clone(),
            apply_floor(majority(&votes), &claim.text, &quotes(claim, archive)),
        ));
    }
    let degraded = if degraded.is_empty() {
        None
    } else {
        Some(degraded.join("; "))
    };
    (
        JudgeOut {
            verdicts,
            calls: count,
            degraded,
        },
        calls,
    )
}

/// The round's verdicts: every claim of `extracts` (the round's extract nodes), by the
/// run's strategy.
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    extracts: &[String],
    scores: &[String],
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::Strategy;
    let (p, strategy, io) = (
        cx.providers.clone(),
        cx.config.strategy,
        cx.config.io_concurrency,
    );
    let prompt = match strategy {
        Strategy::PerClaim => &cx.providers.prompts.judge_vote,
        _ => &cx.providers.prompts.judge,
    };
    let llm = crate::model_call::prompt_key(prompt, cx.providers.cheap_models());
    let key =
        serde_json::json!({"v": STAGE_VERSION, "strategy": strategy, "batch": BATCH, "llm": llm});
    let ex = extracts.to_vec();
    let sc = scores.to_vec();
    let node = spec(
        crate::research::node_id::join(round, "judge"),
        "judge",
        key,
        move |ctx| async move {
            let mut claims = Vec::new();
            for id in &ex {
                let extracted: crate::types::ExtractOut = read(&ctx.inputs, id)?;
                claims.extend(extracted.claims);
            }
            let mut ranked = Vec::new();
            for id in &sc {
                ranked.push(read::<crate::types::ScoreOut>(&ctx.inputs, id)?);
            }
            let docs = crate::cited::documents(&ranked);
            if strategy == Strategy::NoJudge {
                let verdicts = claims
                    .iter()
                    .map(|c| (c.id.clone(), deepr_evidence::report::Verdict::Unjudged))
                    .collect();
                return finish(
                    JudgeOut {
                        verdicts,
                        calls: 0,
                        degraded: None,
                    },
                    vec![],
                );
            }
            let (out, calls) = if strategy == Strategy::PerClaim {
                run_votes(
                    &ctx.node_id,
                    &p.prompts.judge_vote,
                    &claims,
                    p.archive.as_ref(),
                    p.cheap_models(),
                    io,
                )
                .await
            } else {
                run(
                    &ctx.node_id,
                    &p.prompts.judge,
                    &claims,
                    &docs,
                    p.archive.as_ref(),
                    p.cheap_models(),
                    io,
                )
                .await
            };
            finish(out, calls)
        },
    );
    let mut deps = extracts.to_vec();
    deps.extend(scores.iter().cloned());
    (node, deps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_holds_whole_subquestions_and_at_most_a_batch_of_claims() {
        let claim = |subquestion: &str, n: usize| ClaimDraft {
            id: format!("{subquestion}-c{n}"),
            subquestion: subquestion.into(),
            text: String::new(),
            citations: Vec::new(),
        };
        let mut claims: Vec<ClaimDraft> = (1..=10).map(|n| claim("q1", n)).collect();
        claims.extend((1..=3).map(|n| claim("q2", n)));
        claims.push(claim("q3", 1));
        let judged: Vec<(&ClaimDraft, ())> = claims.iter().map(|c| (c, ())).collect();
        let sizes: Vec<(usize, &str)> = batches_of(&judged)
            .iter()
            .map(|b| (b.len(), b[0].0.subquestion.as_str()))
            .collect();
        // q1's ten are cut alone; q2 and q3 share one batch.
        assert_eq!(sizes, [(8, "q1"), (2, "q1"), (4, "q2")]);
        // One claim more in q2 moves no batch but its own.
        claims.insert(11, claim("q2", 4));
        let judged: Vec<(&ClaimDraft, ())> = claims.iter().map(|c| (c, ())).collect();
        let ids = |b: &[(&ClaimDraft, ())]| b.iter().map(|(c, _)| c.id.clone()).collect::<Vec<_>>();
        let batches = batches_of(&judged);
        assert_eq!(batches.len(), 3);
        assert_eq!(
            ids(batches[2]),
            ["q2-c1", "q2-c4", "q2-c2", "q2-c3", "q3-c1"]
        );
        assert!(batches_of::<()>(&[]).is_empty());
    }

    #[test]
    fn floor_overrides_a_supported_verdict_without_shared_words() {
        let quotes = vec!["WAL mode appends changes to a log.".to_string()];
        assert_eq!(
            apply_floor(Verdict::Supported, "Bananas are yellow.", &quotes),
            Verdict::Unsupported
        );
        assert_eq!(
            apply_floor(Verdict::Supported, "WAL appends changes.", &quotes),
            Verdict::Supported
        );
        assert_eq!(
            apply_floor(Verdict::Partial, "Bananas.", &quotes),
            Verdict::Partial
        );
    }

    #[test]
    fn voters_read_the_neighbourhood_of_the_cited_sentence_not_the_page_start() {
        let text: String = (0..400)
            .map(|i| format!("Sentence number {i} talks about topic {i}. "))
            .collect();
        let archived = deepr_orchestrator::ArchivedText::new(&text);
        let window = neighbourhood(&archived, &[300], 400);
        assert!(window.contains("Sentence number 300 talks"), "{window}");
        assert!(window.contains("number 299") && window.contains("number 301"));
        assert!(!window.contains("number 0 talks"), "not the page's start");
        assert!(window.chars().count() <= 400);
        assert!(
            text.contains(window.as_str()),
            "one exact slice of the text"
        );
        // Two cited sentences far apart: two windows, each half the budget.
        let two = neighbourhood(&archived, &[10, 300], 400);
        assert!(two.contains("number 10 talks") && two.contains("number 300 talks"));
        assert_eq!(two.matches('…').count(), 1);
        // The first sentence: the window grows forward only.
        assert!(neighbourhood(&archived, &[0], 200).starts_with("Sentence number 0 "));
    }
}
