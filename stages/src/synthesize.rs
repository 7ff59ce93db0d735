//! synthesize: the answer-first summary (strong model) over the claims the article's
//! sections rest on — the claims their kept sentences cite, grouped by section — and
//! the conflicts. Its sentences are grounded by the same rules as a section's
//! ([`deepr_tasks::synthesize::ground`]): a sentence that does not stand on its quotes
//! is dropped and listed. The rest of the report is assembled deterministically by
//! [`crate::render`].

use std::collections::BTreeMap;

use deepr_evidence::report::{Conflict, DroppedSentence, Verdict};
use deepr_orchestrator::{LedgerEntry, TextArchive, Tier};
use deepr_tasks::synthesize::{self as task, Group, Input, Synthesize};

use crate::llm::{call_task, clean_model_text, Models, TaskCall};
use crate::types::{ClaimDraft, SectionOut, SummaryPoint, SynthesizeOut};
use crate::write::MAX_SENTENCE_CHARS;

/// 2: the summary is written over the sections' claims and grounded sentence by
/// sentence.
pub const STAGE_VERSION: u32 = 2;
pub use deepr_tasks::synthesize::MAX_POINTS;

/// The id dropped summary sentences are listed under.
pub const SUMMARY_SECTION: &str = "summary";

/// What the summary is written from.
pub struct Written<'a> {
    pub topic: &'a str,
    /// The article's sections as written.
    pub sections: &'a [SectionOut],
    /// Every claim with its verdict (the sections cite some of them).
    pub claims: &'a [(ClaimDraft, Verdict)],
    pub conflicts: &'a [Conflict],
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    written: Written<'_>,
    archive: &dyn TextArchive,
    models: Models<'_>,
) -> (SynthesizeOut, Vec<LedgerEntry>) {
    let Written {
        topic,
        sections,
        claims,
        conflicts,
    } = written;
    let by_id: BTreeMap<&str, &(ClaimDraft, Verdict)> =
        claims.iter().map(|c| (c.0.id.as_str(), c)).collect();
    let groups: Vec<Group> = sections
        .iter()
        .map(|section| {
            let mut cited: Vec<&str> = Vec::new();
            for sentence in section.paragraphs.iter().flat_map(|p| &p.sentences) {
                for id in &sentence.claims {
                    if !cited.contains(&id.as_str()) {
                        cited.push(id);
                    }
                }
            }
            Group {
                id: section.section.clone(),
                text: section.heading.clone(),
                claims: cited
                    .into_iter()
                    .filter_map(|id| by_id.get(id))
                    .map(|(claim, verdict)| task::Claim {
                        id: claim.id.clone(),
                        text: claim.text.clone(),
                        verdict: *verdict,
                        quotes: crate::judge::quotes(claim, archive),
                    })
                    .collect(),
            }
        })
        .filter(|g| !g.claims.is_empty())
        .collect();
    if groups.is_empty() {
        return (
            SynthesizeOut {
                summary: vec![],
                dropped: vec![],
                degraded: None,
            },
            vec![],
        );
    }
    let input = Input {
        topic: topic.to_string(),
        subquestions: groups,
        conflicts: conflicts
            .iter()
            .map(|c| task::Conflict {
                subquestion: c.subquestion.clone(),
                summary: c.summary.clone(),
                claims: c.claims.clone(),
            })
            .collect(),
    };
    let result = call_task(
        models,
        TaskCall::<Synthesize> {
            node_id,
            stage: "synthesize",
            prompt,
            tier: Tier::Strong,
            input: &input,
        },
    )
    .await;
    let mut answer = result.value;
    answer.summary.truncate(MAX_POINTS);
    // Clean first, so that the text grounded is the text shown.
    let mut too_long = Vec::new();
    answer.summary.retain_mut(|point| {
        point.text = clean_model_text(&point.text, usize::MAX);
        if point.text.chars().count() > MAX_SENTENCE_CHARS {
            too_long.push(crate::write::too_long(SUMMARY_SECTION, &point.text));
            false
        } else {
            true
        }
    });
    let grounded = task::ground(&input, &answer);
    let summary = grounded
        .paragraphs
        .into_iter()
        .flatten()
        .map(|s| SummaryPoint {
            text: s.text,
            claim_ids: s.claim_ids,
        })
        .collect();
    let mut dropped = too_long;
    dropped.extend(
        grounded
            .dropped
            .into_iter()
            .map(|(text, why)| DroppedSentence {
                section: SUMMARY_SECTION.into(),
                text,
                reason: why.to_string(),
            }),
    );
    (
        SynthesizeOut {
            summary,
            dropped,
            degraded: result.degraded,
        },
        result.calls,
    )
}
