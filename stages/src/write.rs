//! write: one article section per top-level subquestion (its follow-ups' claims join
//! it) — the section's usable claims and their verbatim quotes → a heading and
//! paragraphs (strong model), every sentence citing claim IDs. Sentences that do not
//! stand on the quotes they cite are dropped and listed
//! ([`deepr_tasks::write_section::ground`]); an unusable answer is repaired once and
//! then the fallback writes the section, which the report says.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use deepr_evidence::report::{DroppedSentence, Paragraph, ProseSentence, Verdict};
use deepr_orchestrator::{LedgerEntry, TextArchive, Tier};
use deepr_tasks::write_section::{self as task, shown_claims, Input, WriteSection};

use crate::model_call::{call_task, clean_model_text, Models, TaskCall};
use crate::types::{ClaimDraft, SectionOut, Subq};

mod earlier;
pub mod homes;
mod words;
pub use words::{body_words, evidence_words, section_shares, sections_capacity};

/// 2: a section's words are bounded by its evidence too ([`evidence_words`]), and the
/// summary's share is kept out of the sections'.
/// 3: a claim restating an earlier section's is not handed to a writer ([`at_home`]).
/// 4: ... unless it states a figure the earlier section's claims did not.
/// 5: the depth's words are shared by the claims each section may state.
/// 6: ... in steps of 25 words (`words::WORDS_STEP`).
/// 7: ... at one rate per claim over the claims the sections could hold.
/// 8: a document follow-up is written in the section its claims are about ([`homes`]).
/// 9: at least a short sentence per claim while the claims found fit the body.
/// 10: a claim's figures an earlier section states from the same documents are named
/// to its writer, not to be stated again ([`earlier`]).
/// 11: ... from the same sentences (another sentence of one document is another fact);
/// at least 20 words a claim (was 16).
/// 12: dates and counts with units are named too, and one event's date from any
/// document ([`earlier`]).
/// 13: ... said alike only (a word alike around it: two events may share a day).
pub const STAGE_VERSION: u32 = 13;
/// Longest sentence kept, in characters (a quote may span two sentences, and the
/// offline writer may write a quote as it is); a longer one is dropped, never cut.
pub const MAX_SENTENCE_CHARS: usize = 1500;

/// The article's sections: each top-level subquestion, in plan order, followed by the
/// follow-ups that deepen it (directly or through another follow-up).
pub fn sections(subquestions: &[Subq]) -> Vec<Vec<Subq>> {
    let by_id: BTreeMap<&str, &Subq> = subquestions.iter().map(|s| (s.id.as_str(), s)).collect();
    let root = |subq: &Subq| {
        let mut id = subq.id.as_str();
        let mut parent = subq.parent.as_deref();
        let mut hops = 0;
        while let Some(found) = parent.and_then(|p| by_id.get(p)) {
            id = found.id.as_str();
            parent = found.parent.as_deref();
            hops += 1;
            if hops > subquestions.len() {
                break; // a cycle in untrusted plan data: stop where we are
            }
        }
        id.to_string()
    };
    let mut out: Vec<Vec<Subq>> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for subq in subquestions {
        let key = root(subq);
        match index.get(&key) {
            Some(&i) => out[i].push(subq.clone()),
            None => {
                index.insert(key, out.len());
                out.push(vec![subq.clone()]);
            }
        }
    }
    out
}

/// Every fact once: a claim's home is the first section, in plan order, whose usable
/// claims cite its sentences. A later section's claim that cites only sentences an
/// earlier section's claims already cite, and states no figure those claims did not,
/// restates them, and is handed to neither that section's writer nor the summary's. A
/// claim that reads another figure off the same sentence (a competitor table's row
/// cited for funding first, then for fleet size and price) is a fact of its own and
/// stays. (The offline reader's partition never lets two sections quote one sentence;
/// a model reads each subquestion's own documents, so two sections may well extract
/// one fact.)
pub fn at_home(
    claims: Vec<(ClaimDraft, Verdict)>,
    sections: &[Vec<Subq>],
) -> Vec<(ClaimDraft, Verdict)> {
    let section_of: BTreeMap<&str, usize> = sections
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.iter().map(move |q| (q.id.as_str(), i)))
        .collect();
    let place = |c: &ClaimDraft| section_of.get(c.subquestion.as_str()).copied();
    let mut order: Vec<usize> = (0..claims.len()).collect();
    order.sort_by_key(|&i| (place(&claims[i].0).unwrap_or(usize::MAX), i));
    let overlaps = |a: &crate::types::SentenceRef, b: &crate::types::SentenceRef| {
        a.content_sha256 == b.content_sha256
            && a.sentence <= b.sentence_end.unwrap_or(b.sentence)
            && b.sentence <= a.sentence_end.unwrap_or(a.sentence)
    };
    // Each cited sentence with its section and the figures the claim citing it states.
    let mut cited: Vec<(usize, &crate::types::SentenceRef, BTreeSet<String>)> = Vec::new();
    let mut restated = vec![false; claims.len()];
    for i in order {
        let (claim, verdict) = &claims[i];
        let (Some(section), true) = (place(claim), usable(*verdict)) else {
            continue;
        };
        let figures: BTreeSet<String> = deepr_evidence::terms::numbers(&claim.text)
            .into_iter()
            .collect();
        let mut stated_there: BTreeSet<&String> = BTreeSet::new();
        let mut all_elsewhere = !claim.citations.is_empty();
        for r in &claim.citations {
            let earlier: Vec<&BTreeSet<String>> = cited
                .iter()
                .filter(|(home, other, _)| *home != section && overlaps(other, r))
                .map(|(_, _, stated)| stated)
                .collect();
            all_elsewhere &= !earlier.is_empty();
            stated_there.extend(earlier.into_iter().flatten());
        }
        if all_elsewhere && figures.iter().all(|f| stated_there.contains(f)) {
            restated[i] = true;
            continue;
        }
        cited.extend(
            claim
                .citations
                .iter()
                .map(|r| (section, r, figures.clone())),
        );
    }
    claims
        .into_iter()
        .zip(restated)
        .filter_map(|(claim, restated)| (!restated).then_some(claim))
        .collect()
}

/// Claims a section may be written from: supported, partial and not judged.
pub fn usable(verdict: Verdict) -> bool {
    matches!(
        verdict,
        Verdict::Supported | Verdict::Partial | Verdict::Unjudged
    )
}

/// Prose sentences as the report stores them (already cleaned and grounded).
pub fn to_paragraphs(paragraphs: Vec<Vec<task::AnswerSentence>>) -> Vec<Paragraph> {
    paragraphs
        .into_iter()
        .map(|sentences| Paragraph {
            sentences: sentences
                .into_iter()
                .map(|s| ProseSentence {
                    text: s.text,
                    claims: s.claim_ids,
                })
                .collect(),
        })
        .collect()
}

/// A writer's sentences as they will be stored — one line, no control characters — so
/// that the text grounded is the text shown; a sentence longer than
/// [`MAX_SENTENCE_CHARS`] comes back as `Err` (dropped, never cut).
pub fn clean_sentences(
    paragraphs: &[task::AnswerParagraph],
) -> (Vec<task::AnswerParagraph>, Vec<String>) {
    let mut too_long = Vec::new();
    let cleaned = paragraphs
        .iter()
        .map(|p| task::AnswerParagraph {
            sentences: p
                .sentences
                .iter()
                .filter_map(|s| {
                    let text = clean_model_text(&s.text, usize::MAX);
                    if text.chars().count() > MAX_SENTENCE_CHARS {
                        too_long.push(text);
                        None
                    } else {
                        Some(task::AnswerSentence {
                            text,
                            claim_ids: s.claim_ids.clone(),
                        })
                    }
                })
                .collect(),
        })
        .collect();
    (cleaned, too_long)
}

/// How a too-long sentence is listed.
pub fn too_long(section: &str, text: &str) -> DroppedSentence {
    DroppedSentence {
        section: section.to_string(),
        text: text.chars().take(300).collect::<String>() + "…",
        reason: format!("longer than {MAX_SENTENCE_CHARS} characters"),
    }
}

/// What a section is written for: the article's topic, its share of words, and the
/// title and date of each document the run read (by content hash), for the writer to
/// name the documents its quotes come from.
#[derive(Clone, Copy)]
pub struct Brief<'a> {
    pub topic: &'a str,
    pub words: usize,
    pub documents: &'a DocumentNames,
    /// The subquestions of the sections before this one (plan order): the figures
    /// their claims state from the same documents are named to this writer
    /// ([`earlier::stated_earlier`]).
    pub earlier: &'a [String],
}

/// Each document's title and date, by content hash.
pub type DocumentNames = BTreeMap<String, (String, Option<String>)>;

/// The run's claims with their verdicts, as every writer reads them.
pub type Judged = Vec<(ClaimDraft, Verdict)>;

/// The section's usable claims as the writer sees them, each with its quotes (cut
/// from the archive, or as written by a free-quote extractor) and documents numbered
/// `d1`, `d2`, … in order of first citation; claims with no quote are left out.
fn shown_claims_of(
    ids: &[String],
    claims: &[(ClaimDraft, Verdict)],
    archive: &dyn TextArchive,
) -> Vec<task::Claim> {
    shown_with_documents(ids, claims, archive, &[]).0
}

/// [`shown_claims_of`], with the content hashes of `d1`, `d2`, … in order, and each
/// claim's figures an earlier section states (`earlier`: its subquestions).
fn shown_with_documents<'c>(
    ids: &[String],
    claims: &'c [(ClaimDraft, Verdict)],
    archive: &dyn TextArchive,
    earlier: &[String],
) -> (Vec<task::Claim>, Vec<&'c str>) {
    let mut documents: Vec<&str> = Vec::new();
    let mut shown = Vec::new();
    for (claim, verdict) in claims {
        if !ids.contains(&claim.subquestion) || !usable(*verdict) {
            continue;
        }
        let quotes: Vec<task::Quote> = claim
            .citations
            .iter()
            .filter_map(|c| {
                let text = match &c.written_quote {
                    Some(written) => written.clone(),
                    None => archive
                        .get(&c.content_sha256)?
                        .quote(c.sentence, c.sentence_end)?
                        .to_string(),
                };
                Some((c, text))
            })
            .map(|(c, text)| {
                let position = match documents.iter().position(|d| *d == c.content_sha256) {
                    Some(p) => p,
                    None => {
                        documents.push(&c.content_sha256);
                        documents.len() - 1
                    }
                };
                task::Quote {
                    document: format!("d{}", position + 1),
                    sentence: c.sentence,
                    text,
                }
            })
            .collect();
        if quotes.is_empty() {
            continue;
        }
        shown.push(task::Claim {
            id: claim.id.clone(),
            text: claim.text.clone(),
            verdict: *verdict,
            quotes,
            stated_earlier: earlier::stated_earlier(claim, claims, earlier),
        });
    }
    (shown, documents)
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    brief: Brief<'_>,
    section: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    archive: &dyn TextArchive,
    models: Models<'_>,
) -> (SectionOut, Vec<LedgerEntry>) {
    let ids: Vec<String> = section.iter().map(|s| s.id.clone()).collect();
    let mut out = SectionOut {
        section: ids.first().cloned().unwrap_or_default(),
        subquestions: ids.clone(),
        heading: String::new(),
        paragraphs: vec![],
        dropped: vec![],
        degraded: None,
    };
    let (shown, cited) = shown_with_documents(&ids, claims, archive, brief.earlier);
    if shown.is_empty() {
        return (out, vec![]);
    }
    let documents = cited
        .iter()
        .enumerate()
        .filter_map(|(i, sha)| {
            let (title, date) = brief.documents.get(*sha)?;
            Some(task::Document {
                id: format!("d{}", i + 1),
                title: title.clone(),
                date: date.clone(),
            })
        })
        .collect();
    let input = Input {
        topic: brief.topic.to_string(),
        subquestions: section.iter().map(|s| s.text.clone()).collect(),
        words: evidence_words(brief.words, shown.len()),
        claims: shown,
        instructions: deepr_tasks::brief::parse_brief(brief.topic).instructions,
        documents,
    };
    let result = call_task(
        models,
        TaskCall::<WriteSection> {
            node_id,
            stage: "write",
            prompt,
            tier: Tier::Strong,
            input: &input,
        },
    )
    .await;
    let (cleaned, long) = clean_sentences(&result.value.paragraphs);
    let grounded = task::ground(&shown_claims(&input.claims, &input.documents), &cleaned);
    out.heading = clean_model_text(&result.value.heading, task::MAX_HEADING_CHARS);
    out.paragraphs = to_paragraphs(grounded.paragraphs);
    out.dropped = long.iter().map(|t| too_long(&out.section, t)).collect();
    out.dropped.extend(
        grounded
            .dropped
            .into_iter()
            .map(|(text, why)| DroppedSentence {
                section: out.section.clone(),
                text,
                reason: why.to_string(),
            }),
    );
    out.degraded = result.degraded;
    (out, result.calls)
}

/// A section with no call: its usable claims, each one sentence citing itself, kept
/// where the claim stands on its quotes as any written sentence must (an answer's
/// "Supporting claims": the summary above is the prose).
pub fn listed(
    section: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    archive: &dyn TextArchive,
) -> SectionOut {
    let ids: Vec<String> = section.iter().map(|s| s.id.clone()).collect();
    let shown = shown_claims_of(&ids, claims, archive);
    let listed = vec![task::AnswerParagraph {
        sentences: shown
            .iter()
            .map(|claim| task::AnswerSentence {
                text: claim.text.clone(),
                claim_ids: vec![claim.id.clone()],
            })
            .collect(),
    }];
    let (cleaned, long) = clean_sentences(&listed);
    let grounded = task::ground(&shown_claims(&shown, &[]), &cleaned);
    let section_id = ids.first().cloned().unwrap_or_default();
    let mut dropped: Vec<DroppedSentence> = long.iter().map(|t| too_long(&section_id, t)).collect();
    dropped.extend(
        grounded
            .dropped
            .into_iter()
            .map(|(text, why)| DroppedSentence {
                section: section_id.clone(),
                text,
                reason: why.to_string(),
            }),
    );
    // One claim a paragraph: a list of findings, not a paragraph of prose.
    let paragraphs = grounded
        .paragraphs
        .into_iter()
        .flatten()
        .map(|sentence| vec![sentence])
        .collect();
    SectionOut {
        section: section_id,
        subquestions: ids,
        heading: if shown.is_empty() {
            String::new()
        } else {
            "Supporting claims".to_string()
        },
        paragraphs: to_paragraphs(paragraphs),
        dropped,
        degraded: None,
    }
}

/// One article section (a top-level subquestion and its follow-ups), written in
/// `words` — or, for an answer ([`crate::research::ReportShape::Answer`]), its claims
/// listed with no call; `deps`: every round's deepen node.
pub fn node(
    cx: &crate::node::PipelineContext,
    section: Vec<Subq>,
    (claims, documents): (&Arc<Judged>, &Arc<DocumentNames>),
    (words, earlier): (usize, Vec<String>),
    deps: &[String],
) -> crate::node::Node {
    use crate::node::{finish, spec};
    let (p, t, cl) = (
        cx.providers.clone(),
        cx.config.topic.clone(),
        claims.clone(),
    );
    let names = documents.clone();
    let llm = crate::model_call::prompt_key(
        &cx.providers.prompts.write_section,
        cx.providers.strong_models(),
    );
    let mut key = serde_json::json!({"v": STAGE_VERSION, "prose": deepr_evidence::prose::VERSION, "words": words, "earlier": earlier, "llm": llm});
    let id = crate::research::node_id::section(
        &section.first().map(|s| s.id.clone()).unwrap_or_default(),
    );
    if cx.config.shape == crate::research::ReportShape::Answer {
        key["shape"] = serde_json::json!("answer");
        let node = spec(id, "write", key, move |_| async move {
            finish(listed(&section, &cl, p.archive.as_ref()), Vec::new())
        });
        return (node, deps.to_vec());
    }
    let node = spec(id, "write", key, move |ctx| async move {
        let brief = Brief {
            topic: &t,
            words,
            documents: &names,
            earlier: &earlier,
        };
        let (out, calls) = run(
            &ctx.node_id,
            &p.prompts.write_section,
            brief,
            &section,
            &cl,
            p.archive.as_ref(),
            p.strong_models(),
        )
        .await;
        finish(out, calls)
    });
    (node, deps.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subq(id: &str, parent: Option<&str>) -> Subq {
        Subq {
            id: id.into(),
            text: id.into(),
            round: u32::from(parent.is_some()),
            parent: parent.map(String::from),
            queries: Vec::new(),
        }
    }

    fn claim(id: &str, subquestion: &str, cites: &[(&str, u32)]) -> (ClaimDraft, Verdict) {
        let citations = cites
            .iter()
            .map(|(doc, sentence)| crate::types::SentenceRef {
                content_sha256: (*doc).into(),
                sentence: *sentence,
                sentence_end: None,
                written_quote: None,
            })
            .collect();
        let draft = ClaimDraft {
            id: id.into(),
            subquestion: subquestion.into(),
            text: id.into(),
            citations,
        };
        (draft, Verdict::Supported)
    }

    struct Archive(deepr_orchestrator::ArchivedText);

    impl TextArchive for Archive {
        fn get(&self, sha: &str) -> Option<deepr_orchestrator::ArchivedText> {
            (sha == self.0.content_sha256).then(|| self.0.clone())
        }
    }

    #[test]
    fn a_writer_is_told_the_figures_an_earlier_section_states() {
        let text = deepr_orchestrator::ArchivedText::new(
            "Company: Swiftlane · List price: $1,420\n\nCompany: Corvid · List price: $1,250",
        );
        let sha = text.content_sha256.clone();
        let archive = Archive(text);
        let stating = |id: &str, subquestion: &str, sentence: u32, text: &str| {
            let (mut draft, verdict) = claim(id, subquestion, &[(sha.as_str(), sentence)]);
            draft.text = text.into();
            (draft, verdict)
        };
        let claims = vec![
            stating("q1-c1", "q1", 0, "Swiftlane lists at $1,420."),
            stating(
                "q2-c1",
                "q2",
                1,
                "Corvid ($1,250) lists below Swiftlane ($1,420).",
            ),
        ];
        let ids = ["q2".to_string()];
        let (shown, _) = shown_with_documents(&ids, &claims, &archive, &["q1".to_string()]);
        assert_eq!(shown[0].stated_earlier, ["$1,420"]);
        // The first section's writer, or one told of no earlier section, is told nothing.
        let (first, _) = shown_with_documents(&["q1".to_string()], &claims, &archive, &[]);
        assert!(first[0].stated_earlier.is_empty());
        let (alone, _) = shown_with_documents(&ids, &claims, &archive, &[]);
        assert!(alone[0].stated_earlier.is_empty());
    }

    #[test]
    fn a_claim_restating_an_earlier_sections_sentences_stays_home() {
        let sections = vec![
            vec![subq("q1", None), subq("q3", Some("q1"))],
            vec![subq("q2", None)],
        ];
        let claims = vec![
            claim("q2-c1", "q2", &[("a", 4)]),
            claim("q1-c1", "q1", &[("a", 4), ("a", 5)]),
            claim("q2-c2", "q2", &[("a", 5), ("b", 1)]),
            claim("q3-c1", "q3", &[("a", 4)]),
            claim("q2-c3", "q2", &[("b", 2)]),
        ];
        let kept: Vec<String> = at_home(claims, &sections)
            .into_iter()
            .map(|(c, _)| c.id)
            .collect();
        // q2-c1 restates q1-c1 (section 1 comes first in plan order); q2-c2 adds b1;
        // a follow-up in q1's own section may cite it again.
        assert_eq!(kept, ["q1-c1", "q2-c2", "q3-c1", "q2-c3"]);
    }

    #[test]
    fn a_claim_reading_another_figure_off_an_earlier_sections_sentence_is_its_own_fact() {
        let sections = vec![vec![subq("q1", None)], vec![subq("q2", None)]];
        let stating = |id: &str, subquestion: &str, text: &str| {
            let (mut draft, verdict) = claim(id, subquestion, &[("row", 7)]);
            draft.text = text.into();
            (draft, verdict)
        };
        let claims = vec![
            stating("q1-c1", "q1", "Swiftlane has raised $140M."),
            stating(
                "q2-c1",
                "q2",
                "Swiftlane runs 5,200 robots at $1,480 a month.",
            ),
            stating("q2-c2", "q2", "Swiftlane raised $140M in all."),
        ];
        let kept: Vec<String> = at_home(claims, &sections)
            .into_iter()
            .map(|(c, _)| c.id)
            .collect();
        // The fleet and the price are new; the funding is stated already.
        assert_eq!(kept, ["q1-c1", "q2-c1"]);
    }

    #[test]
    fn follow_ups_join_the_section_of_what_they_deepen() {
        let plan = [
            subq("q1", None),
            subq("q2", None),
            subq("r1-q1", Some("q2")),
            subq("r2-q1", Some("r1-q1")),
            subq("r1-q2", Some("gone")),
        ];
        let ids: Vec<Vec<String>> = sections(&plan)
            .into_iter()
            .map(|s| s.into_iter().map(|q| q.id).collect())
            .collect();
        assert_eq!(
            ids,
            [vec!["q1"], vec!["q2", "r1-q1", "r2-q1"], vec!["r1-q2"]]
        );
    }
}
