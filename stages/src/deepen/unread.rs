//! Documents a brief's searches found and no claim quotes: after the first round, each
//! current one is followed up by its own title, under the subquestion that ranked it
//! best, so that a share's budget workbook or headcount plan — worded unlike any part
//! ("Headcount" shares no word with "operational performance"), or left out of a
//! model's plan — is read before the report is written. A model reads that document
//! alone: its score node's candidates are its units (`score::asked`).

use std::collections::{BTreeMap, BTreeSet};

use deepr_tasks::brief::subject_question;

use crate::score::stems::score_terms;
use deepr_evidence::report::Verdict;

use crate::score::asked::title_of;
use crate::types::{ClaimDraft, ScoreOut, Subq};

/// A document found for the round: its title, how many of the brief's words its title
/// holds, its best score and the subquestion that gave it.
struct Found<'a> {
    title: String,
    brief_words: usize,
    score: f64,
    subquestion: &'a str,
}

/// The follow-ups (at most `limit`) for the current documents the round's subquestions
/// scored (`scored`: subquestion id → its score node's output) that no claim of
/// `claims` cites — those whose title holds more of the words of the brief's parts
/// first ("Member supply register" for "how many farms supply the co-op"), then the
/// best scored; a title the plan or an earlier document already asks about is asked
/// once; ids `{parent}.d{k}.r{round + 1}`. Only at the end of the first round, and only
/// for a brief with parts (a question's searches find what it asks).
pub(super) fn unread_documents(
    topic: &str,
    subquestions: &[Subq],
    scored: &BTreeMap<String, ScoreOut>,
    claims: &[(ClaimDraft, Verdict)],
    round: u32,
    limit: usize,
) -> Vec<Subq> {
    if !reads_unread(topic, round) || limit == 0 {
        return Vec::new();
    }
    let brief = deepr_tasks::brief::parse_brief(topic);
    // The words of the brief's parts, less its subject's name (every document names it).
    let subject_name: BTreeSet<String> = brief
        .entities
        .first()
        .map(|e| score_terms(e).into_iter().collect())
        .unwrap_or_default();
    let part_words: BTreeSet<String> = brief
        .parts
        .iter()
        .flat_map(|p| score_terms(p))
        .filter(|w| !subject_name.contains(w))
        .collect();
    let found = found_documents(subquestions, scored, claims, &part_words);
    let mut ranked: Vec<(&str, Found<'_>)> = found.into_iter().collect();
    // Titles the plan already asks about ("Budget" beside a workbook titled "Budget").
    let mut asked: Vec<String> = subquestions
        .iter()
        .filter_map(|s| deepr_tasks::brief::asked_subject(&s.text).map(str::to_string))
        .collect();
    ranked.sort_by(|(a_key, a), (b_key, b)| {
        b.brief_words
            .cmp(&a.brief_words)
            .then(b.score.total_cmp(&a.score))
            .then(a_key.cmp(b_key))
    });
    let entity = brief.entities.first().map(String::as_str);
    ranked.retain(|(_, doc)| {
        let new = !asked
            .iter()
            .any(|a| deepr_tasks::brief::same_subject(a, &doc.title));
        if new {
            asked.push(doc.title.clone());
        }
        new
    });
    ranked
        .into_iter()
        .take(limit)
        .enumerate()
        .map(|(k, (_, doc))| Subq {
            id: document_followup_id(doc.subquestion, k, round + 1),
            text: subject_question(&doc.title, entity),
            round: round + 1,
            parent: Some(doc.subquestion.to_string()),
            queries: Vec::new(),
        })
        .collect()
}

/// Whether unread documents are followed up after `round`: only the first round's, and
/// only for a brief with parts (a question's searches find what it asks).
pub(super) fn reads_unread(topic: &str, round: u32) -> bool {
    round == 0 && deepr_tasks::brief::parse_brief(topic).has_parts()
}

/// The current, in-scope documents the subquestions' score nodes saw that no claim cites, by
/// document key: each with its title, how many of `part_words` its title holds, its best
/// score and the subquestion that gave it.
fn found_documents<'a>(
    subquestions: &'a [Subq],
    scored: &'a BTreeMap<String, ScoreOut>,
    claims: &[(ClaimDraft, Verdict)],
    part_words: &BTreeSet<String>,
) -> BTreeMap<&'a str, Found<'a>> {
    let cited: BTreeSet<&str> = claims
        .iter()
        .flat_map(|(c, _)| c.citations.iter().map(|r| r.content_sha256.as_str()))
        .collect();
    let mut found: BTreeMap<&str, Found<'_>> = BTreeMap::new();
    for subq in subquestions {
        let Some(out) = scored.get(&subq.id) else {
            continue;
        };
        for source in &out.sources {
            let doc = &source.doc;
            // An off-topic or background document (triage) is never followed up: the
            // one shares the brief's words only, the other gives context, not facts.
            if cited.contains(doc.content_sha256.as_str())
                || source.off_topic.is_some()
                || source.background
                || doc.outline.is_stale()
                || doc.outline.is_draft()
            {
                continue;
            }
            let title = title_of(&doc.title, &doc.doc_key);
            if title.is_empty() {
                continue;
            }
            let brief_words = score_terms(&title)
                .into_iter()
                .collect::<BTreeSet<_>>()
                .intersection(part_words)
                .count();
            let entry = found.entry(doc.doc_key.as_str()).or_insert(Found {
                title,
                brief_words,
                score: source.score,
                subquestion: &subq.id,
            });
            if source.score > entry.score {
                entry.score = source.score;
                entry.subquestion = &subq.id;
            }
        }
    }
    found
}

/// Whether a subquestion id is a document follow-up's ([`document_followup_id`]).
pub(crate) fn is_document_followup(id: &str) -> bool {
    id.split('.').any(|part| {
        part.strip_prefix('d')
            .is_some_and(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_digit()))
    })
}

/// A document follow-up's id: `{subquestion}.d{k}.r{round}`.
fn document_followup_id(subquestion: &str, k: usize, round: u32) -> String {
    format!("{subquestion}.d{k}.r{round}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ScoredSource, SentenceRef};
    use deepr_orchestrator::{DocMeta, Outline};
    use deepr_tasks::brief::asked_subject;

    const BRIEF: &str = "Prepare a briefing on the Harbour Ferry Company. Cover: (1) its \
        finances and fare revenue; (2) its fleet and vessels. Be specific about numbers.";

    fn source(key: &str, title: &str, status: Option<&str>, score: f64) -> ScoredSource {
        ScoredSource {
            off_topic: None,
            background: false,
            doc: DocMeta {
                doc_key: key.into(),
                locator: key.into(),
                title: title.into(),
                content_sha256: format!("sha-{key}"),
                date: None,
                authority: 0.8,
                outline: Outline {
                    status: status.map(str::to_string),
                    ..Outline::default()
                },
            },
            relevance: score,
            authority: 0.8,
            recency: 1.0,
            score,
        }
    }

    fn subq(id: &str, subject: &str) -> Subq {
        Subq {
            id: id.into(),
            text: subject_question(subject, Some("Harbour Ferry Company")),
            round: 0,
            parent: None,
            queries: Vec::new(),
        }
    }

    fn claim(key: &str) -> (ClaimDraft, Verdict) {
        let draft = ClaimDraft {
            id: "q1-c1".into(),
            subquestion: "q1".into(),
            text: "A quoted claim".into(),
            citations: vec![SentenceRef {
                content_sha256: format!("sha-{key}"),
                sentence: 0,
                sentence_end: None,
                written_quote: None,
            }],
        };
        (draft, Verdict::Supported)
    }

    #[test]
    fn current_documents_no_claim_quotes_are_followed_up_under_the_subquestion_that_ranked_them_best(
    ) {
        let plan = [subq("q1", "Finances"), subq("q2", "Fleet")];
        let scored: BTreeMap<String, ScoreOut> = [
            (
                "q1",
                vec![
                    source("finance/memo.docx", "CFO memo", None, 0.9),
                    source("hr/crew-roster.csv", "", None, 0.4),
                    source(
                        "finance/archive/memo-2024.docx",
                        "Old memo",
                        Some("archived"),
                        0.8,
                    ),
                    source("finance/flash.docx", "Revenue flash", Some("draft"), 0.8),
                    source("it/password-policy.md", "Password policy", None, 0.7),
                ],
            ),
            (
                "q2",
                vec![
                    source("hr/crew-roster.csv", "", None, 0.6),
                    source("ops/fleet-register.xlsx", "Fleet register", None, 0.5),
                ],
            ),
        ]
        .into_iter()
        .map(|(id, sources)| {
            (
                id.to_string(),
                ScoreOut {
                    sources,
                    ..ScoreOut::default()
                },
            )
        })
        .collect();
        let claims = [claim("finance/memo.docx")];
        let followups = unread_documents(BRIEF, &plan, &scored, &claims, 0, 4);
        let asked: Vec<(&str, &str, &str)> = followups
            .iter()
            .map(|f| {
                (
                    f.id.as_str(),
                    asked_subject(&f.text).unwrap_or(""),
                    f.parent.as_deref().unwrap_or(""),
                )
            })
            .collect();
        // The quoted memo, the archived memo and the draft are not followed up; a title
        // holding the brief's words ("Fleet register") comes first, then by score; a
        // document without a title is asked by its file name, under the subquestion
        // that scored it best.
        assert_eq!(
            asked,
            [
                ("q2.d0.r1", "Fleet register", "q2"),
                ("q1.d1.r1", "Password policy", "q1"),
                ("q2.d2.r1", "crew-roster.csv", "q2"),
            ]
        );
        assert!(followups.iter().all(|f| f.round == 1));
        // At most `limit`; none after the first round or for a question; a plan a model
        // worded its own way is followed up too.
        assert_eq!(
            unread_documents(BRIEF, &plan, &scored, &claims, 0, 1).len(),
            1
        );
        assert!(unread_documents(BRIEF, &plan, &scored, &claims, 1, 4).is_empty());
        let question = "How does the ferry company fund its fleet?";
        assert!(unread_documents(question, &plan, &scored, &claims, 0, 4).is_empty());
        let worded = [Subq {
            text: "How sound are the company's finances?".into(),
            ..plan[0].clone()
        }];
        assert_eq!(
            unread_documents(BRIEF, &worded, &scored, &claims, 0, 4).len(),
            2
        );
    }

    #[test]
    fn documents_judged_off_topic_or_background_are_never_followed_up() {
        let plan = [subq("q1", "Finances"), subq("q2", "Fleet")];
        let mut template = source("legal/msa-template.docx", "Contract template", None, 0.9);
        template.background = true;
        let mut brand = source("marketing/brand.pdf", "Brand guidelines", None, 0.8);
        brand.off_topic = Some("the office's paperwork".into());
        let register = source("ops/fleet-register.xlsx", "Fleet register", None, 0.5);
        let scored: BTreeMap<String, ScoreOut> = BTreeMap::from([(
            "q1".to_string(),
            ScoreOut {
                sources: vec![template, brand, register],
                ..ScoreOut::default()
            },
        )]);
        let followups = unread_documents(BRIEF, &plan, &scored, &[], 0, 4);
        let asked: Vec<&str> = followups
            .iter()
            .filter_map(|f| asked_subject(&f.text))
            .collect();
        assert_eq!(asked, ["Fleet register"]);
    }
}
