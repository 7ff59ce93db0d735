//! extract: candidate sentences (by ID) → claims citing sentence IDs.
//!
//! The model sees each candidate as `[cN] sentence` and answers with IDs only; the
//! quote text of every citation is looked up from the archive by (document, sentence
//! index), so a model cannot paraphrase a quote. Unknown IDs make the answer invalid.

use std::collections::{BTreeMap, BTreeSet};

use deepr_orchestrator::terms::content_terms;
use deepr_orchestrator::{LedgerEntry, LlmProvider, TextArchive, Tier};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::llm::{call_task, TaskCall};
use crate::types::{ClaimDraft, ExtractOut, ScoreOut, SentenceRef, Subq};

pub const STAGE_VERSION: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AnswerClaim {
    pub text: String,
    pub sentence_ids: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub claims: Vec<AnswerClaim>,
}

/// Claims per subquestion by depth.
pub fn max_claims(depth: &str) -> usize {
    match depth {
        "quick" => 4,
        "deep" => 6,
        _ => 5,
    }
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    subq: &Subq,
    scored: &ScoreOut,
    max_claims: usize,
    archive: &dyn TextArchive,
    llm: &dyn LlmProvider,
) -> (ExtractOut, Vec<LedgerEntry>) {
    let titles: BTreeMap<&str, &str> = scored
        .sources
        .iter()
        .map(|s| (s.doc.content_sha256.as_str(), s.doc.title.as_str()))
        .collect();
    let mut shown = Vec::new();
    let mut lines = Vec::new();
    for candidate in &scored.candidates {
        let Some(text) = archive.get(&candidate.content_sha256) else {
            continue;
        };
        let Some(sentence) = text.sentence(candidate.sentence) else {
            continue;
        };
        let one_line = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
        lines.push(format!(
            "{}: {}",
            candidate.cid,
            deepr_prompts::quoted(&one_line)
        ));
        shown.push(json!({
            "id": candidate.cid, "text": one_line, "weight": candidate.weight,
            "doc": candidate.content_sha256, "title": titles.get(candidate.content_sha256.as_str()).copied().unwrap_or(""),
        }));
    }
    if shown.is_empty() {
        return (
            ExtractOut {
                claims: Vec::new(),
                degraded: None,
            },
            Vec::new(),
        );
    }
    let known: BTreeSet<String> = scored.candidates.iter().map(|c| c.cid.clone()).collect();
    let result = call_task::<Answer, _>(
        llm,
        TaskCall {
            node_id,
            stage: "extract",
            prompt,
            tier: Tier::Cheap,
            values: vec![("subquestion", deepr_prompts::quoted(&subq.text)), ("candidates", lines.join("\n")), ("max_claims", max_claims.to_string())],
            task_input: json!({"subquestion": subq.text, "max_claims": max_claims, "candidates": shown}),
        },
        |answer: &Answer| validate(answer, &known, max_claims),
    )
    .await;
    let by_cid: BTreeMap<&str, SentenceRef> = scored
        .candidates
        .iter()
        .map(|c| {
            (
                c.cid.as_str(),
                SentenceRef {
                    content_sha256: c.content_sha256.clone(),
                    sentence: c.sentence,
                    written_quote: None,
                },
            )
        })
        .collect();
    let mut claims = Vec::new();
    for claim in result.value.claims.iter().take(max_claims) {
        let mut citations: Vec<SentenceRef> = Vec::new();
        for id in &claim.sentence_ids {
            if let Some(reference) = by_cid.get(id.as_str()) {
                if !citations.contains(reference) {
                    citations.push(reference.clone());
                }
            }
        }
        let text: String = crate::llm::clean_model_text(&claim.text, 600);
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
    (
        ExtractOut {
            claims,
            degraded: result.degraded,
        },
        result.calls,
    )
}

/// Meaning checks beyond the schema: every ID was shown, 1–3 IDs per claim, a claim
/// text, at most `max_claims` claims.
pub fn validate(
    answer: &Answer,
    known: &BTreeSet<String>,
    max_claims: usize,
) -> Result<(), String> {
    if answer.claims.len() > max_claims {
        return Err(format!(
            "at most {max_claims} claims allowed, got {}",
            answer.claims.len()
        ));
    }
    for (i, claim) in answer.claims.iter().enumerate() {
        if claim.text.trim().is_empty() {
            return Err(format!("claim {} has no text", i + 1));
        }
        if !(1..=3).contains(&claim.sentence_ids.len()) {
            return Err(format!("claim {} must cite 1 to 3 sentence IDs", i + 1));
        }
        if let Some(unknown) = claim.sentence_ids.iter().find(|id| !known.contains(*id)) {
            return Err(format!(
                "claim {} cites unknown sentence ID {unknown:?}",
                i + 1
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- offline heuristic

/// Offline extractor: maximal marginal relevance over the candidates — informative
/// (high weight, numbers), diverse (low overlap with claims already chosen, spread
/// across documents). The claim restates its sentence; a near-duplicate sentence from
/// another document is cited as corroboration.
pub fn offline_answer(input: &Value) -> Value {
    let max = input["max_claims"].as_u64().unwrap_or(5) as usize;
    let candidates: Vec<(String, String, f64, String, BTreeSet<String>)> = input["candidates"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    let text = c["text"].as_str().unwrap_or_default().to_string();
                    let terms = content_terms(&text).into_iter().collect();
                    (
                        c["id"].as_str().unwrap_or_default().to_string(),
                        text,
                        c["weight"].as_f64().unwrap_or(0.0),
                        c["doc"].as_str().unwrap_or_default().to_string(),
                        terms,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut chosen: Vec<usize> = Vec::new();
    let mut per_doc: BTreeMap<String, usize> = BTreeMap::new();
    while chosen.len() < max {
        let mut best: Option<(f64, usize)> = None;
        for (i, candidate) in candidates.iter().enumerate() {
            if chosen.contains(&i) {
                continue;
            }
            let redundancy = chosen
                .iter()
                .map(|&j| jaccard(&candidate.4, &candidates[j].4))
                .fold(0.0, f64::max);
            if redundancy > 0.6 {
                continue;
            }
            let same_doc = *per_doc.get(&candidate.3).unwrap_or(&0) as f64;
            let value = candidate.2 - 0.7 * redundancy - 0.15 * same_doc;
            if best.is_none_or(|(b, _)| value > b) {
                best = Some((value, i));
            }
        }
        let Some((_, i)) = best else { break };
        chosen.push(i);
        *per_doc.entry(candidates[i].3.clone()).or_default() += 1;
    }
    let claims: Vec<Value> = chosen
        .iter()
        .map(|&i| {
            let (id, text, _, doc, terms) = &candidates[i];
            let mut ids = vec![id.clone()];
            // Corroboration only from a sentence that states the same numbers: a
            // near-twin with other figures is a disagreement, not support.
            let own_numbers = deepr_orchestrator::terms::numbers(text);
            if let Some((other, ..)) = candidates.iter().find(|c| {
                &c.3 != doc
                    && jaccard(terms, &c.4) >= 0.5
                    && deepr_orchestrator::terms::numbers(&c.1) == own_numbers
            }) {
                ids.push(other.clone());
            }
            let claim = text.trim_start_matches(['-', '*', '•', ' ']).to_string();
            json!({"text": claim, "sentence_ids": ids})
        })
        .collect();
    json!({"claims": claims})
}

pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ids_are_invalid() {
        let known: BTreeSet<String> = ["c1".to_string()].into();
        let bad = Answer {
            claims: vec![AnswerClaim {
                text: "x".into(),
                sentence_ids: vec!["c9".into()],
            }],
        };
        assert!(validate(&bad, &known, 5)
            .unwrap_err()
            .contains("unknown sentence ID"));
        let empty = Answer {
            claims: vec![AnswerClaim {
                text: "x".into(),
                sentence_ids: vec![],
            }],
        };
        assert!(validate(&empty, &known, 5).is_err());
        let good = Answer {
            claims: vec![AnswerClaim {
                text: "x".into(),
                sentence_ids: vec!["c1".into()],
            }],
        };
        assert!(validate(&good, &known, 5).is_ok());
    }

    #[test]
    fn offline_prefers_diverse_sentences() {
        let input = json!({"max_claims": 2, "candidates": [
            {"id": "c1", "text": "The rollback journal stores original page content.", "weight": 1.0, "doc": "a"},
            {"id": "c2", "text": "The rollback journal stores original page content too.", "weight": 0.9, "doc": "a"},
            {"id": "c3", "text": "WAL mode appends changes to a separate log file.", "weight": 0.5, "doc": "b"}
        ]});
        let answer = offline_answer(&input);
        let ids: Vec<&str> = answer["claims"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c["sentence_ids"][0].as_str())
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(ids, ["c1", "c3"]);
    }
}

// ------------------------------------------------------ free-quote strategy

/// Characters of each document shown to the model under `free-quote`.
pub const FREE_QUOTE_DOC_CHARS: usize = 6000;
/// Documents shown under `free-quote` (the best-scored).
pub const FREE_QUOTE_DOCS: usize = 3;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct FreeClaim {
    pub text: String,
    pub quote: String,
    pub document: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct FreeAnswer {
    pub claims: Vec<FreeClaim>,
}

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
    llm: &dyn LlmProvider,
) -> (ExtractOut, Vec<LedgerEntry>) {
    let mut shown = Vec::new();
    let mut docs = BTreeMap::new();
    for source in scored.sources.iter().take(FREE_QUOTE_DOCS) {
        let Some(text) = archive.get(&source.doc.content_sha256) else {
            continue;
        };
        let id = format!("d{}", shown.len() + 1);
        shown.push(json!({"id": id, "title": source.doc.title, "text": capped(&text.text, FREE_QUOTE_DOC_CHARS)}));
        docs.insert(id, text);
    }
    if shown.is_empty() {
        return (
            ExtractOut {
                claims: Vec::new(),
                degraded: None,
            },
            Vec::new(),
        );
    }
    let listing = shown
        .iter()
        .map(|d| {
            format!(
                "{}: title {}\ntext {}",
                d["id"].as_str().unwrap_or(""),
                deepr_prompts::quoted(d["title"].as_str().unwrap_or("")),
                deepr_prompts::quoted(d["text"].as_str().unwrap_or(""))
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    let known: BTreeSet<String> = docs.keys().cloned().collect();
    let result = call_task::<FreeAnswer, _>(
        llm,
        TaskCall {
            node_id,
            stage: "extract",
            prompt,
            tier: Tier::Cheap,
            values: vec![("subquestion", deepr_prompts::quoted(&subq.text)), ("documents", listing), ("max_claims", max_claims.to_string())],
            task_input: json!({"subquestion": subq.text, "max_claims": max_claims, "documents": shown}),
        },
        |answer: &FreeAnswer| {
            if answer.claims.len() > max_claims {
                return Err(format!("at most {max_claims} claims allowed"));
            }
            for (i, claim) in answer.claims.iter().enumerate() {
                if claim.text.trim().is_empty() || claim.quote.trim().is_empty() {
                    return Err(format!("claim {} needs text and a quote", i + 1));
                }
                if !known.contains(&claim.document) {
                    return Err(format!("claim {} names unknown document {:?}", i + 1, claim.document));
                }
            }
            Ok(())
        },
    )
    .await;
    let mut claims = Vec::new();
    for claim in result.value.claims.iter().take(max_claims) {
        let Some(doc) = docs.get(&claim.document) else {
            continue;
        };
        let text = crate::llm::clean_model_text(&claim.text, 600);
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

/// Offline `free-quote`: informative sentences that share words with the subquestion,
/// copied exactly from the document text shown.
pub fn offline_free_answer(input: &Value) -> Value {
    let max = input["max_claims"].as_u64().unwrap_or(5) as usize;
    let question: BTreeSet<String> =
        content_terms(input["subquestion"].as_str().unwrap_or_default())
            .into_iter()
            .collect();
    let mut scored: Vec<(usize, usize, String, String)> = Vec::new();
    for (order, doc) in input["documents"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let id = doc["id"].as_str().unwrap_or_default().to_string();
        let text = doc["text"].as_str().unwrap_or_default();
        for sentence in deepr_evidence::split_sentences(text) {
            let Some(body) = sentence.text(text) else {
                continue;
            };
            if !(30..=400).contains(&body.chars().count()) || !body.ends_with(['.', '!', '?']) {
                continue;
            }
            let overlap = content_terms(body)
                .iter()
                .filter(|t| question.contains(*t))
                .count();
            if overlap > 0 {
                scored.push((overlap, order, id.clone(), body.to_string()));
            }
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut seen = BTreeSet::new();
    let claims: Vec<Value> = scored
        .into_iter()
        .filter(|(_, _, _, body)| seen.insert(body.clone()))
        .take(max)
        .map(|(_, _, id, body)| json!({"text": body.split_whitespace().collect::<Vec<_>>().join(" "), "quote": body, "document": id}))
        .collect();
    json!({"claims": claims})
}
