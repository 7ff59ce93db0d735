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

use crate::model_call::{call_task, clean_model_text, Models, TaskCall};
use crate::types::{ClaimDraft, SectionOut, SummaryPoint, SynthesizeOut};
use crate::write::{DocumentNames, Judged, MAX_SENTENCE_CHARS};

/// 2: the summary is written over the sections' claims and grounded sentence by
/// sentence.
/// 3: the claims it reads keep a later section's claim that states a new figure off an
/// earlier section's sentence (`write::at_home`).
/// 4: a summary sentence may state the numbers of its claims' documents' titles and
/// dates, as a section's may.
pub const STAGE_VERSION: u32 = 4;
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
    /// Each document's title and date, by content hash.
    pub documents: &'a DocumentNames,
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
        documents,
    } = written;
    let groups = groups(sections, claims, documents, archive);
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
        instructions: deepr_tasks::brief::parse_brief(topic).instructions,
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
    let (summary, dropped) = grounded_summary(&input, result.value);
    (
        SynthesizeOut {
            summary,
            dropped,
            degraded: result.degraded,
        },
        result.calls,
    )
}

/// The sections as the summary writer sees them: each with the claims its sentences
/// cite (in order of first citation), with their verdicts and quotes; sections that
/// cite none are left out.
fn groups(
    sections: &[SectionOut],
    claims: &[(ClaimDraft, Verdict)],
    documents: &DocumentNames,
    archive: &dyn TextArchive,
) -> Vec<Group> {
    let by_id: BTreeMap<&str, &(ClaimDraft, Verdict)> =
        claims.iter().map(|c| (c.0.id.as_str(), c)).collect();
    sections
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
                        sources: source_names(claim, documents),
                    })
                    .collect(),
            }
        })
        .filter(|g| !g.claims.is_empty())
        .collect()
}

/// The names (title and date) of the documents `claim` cites, once each.
fn source_names(claim: &ClaimDraft, documents: &DocumentNames) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for citation in &claim.citations {
        if let Some((title, date)) = documents.get(&citation.content_sha256) {
            let name = deepr_evidence::prose::source_name(title, date.as_deref());
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// The summary's points that stand on their cited quotes (cleaned first, so the text
/// grounded is the text shown), and the sentences dropped, with why.
fn grounded_summary(
    input: &Input,
    mut answer: task::Answer,
) -> (Vec<SummaryPoint>, Vec<DroppedSentence>) {
    answer.summary.truncate(MAX_POINTS);
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
    let grounded = task::ground(input, &answer);
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
    (summary, dropped)
}

/// The summary, over the written `sections` (their node ids) and the run's claims and
/// conflicts: those already found, then those of the conflict nodes named (the last
/// round's, run beside the writers); `deps`: the deepen nodes that ran before.
pub fn node(
    cx: &crate::node::PipelineContext,
    (claims, names): (&std::sync::Arc<Judged>, &std::sync::Arc<DocumentNames>),
    (conflicts, conflict_nodes): (Vec<Conflict>, &[String]),
    sections: &[String],
    deps: &[String],
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    let (p, t, cl, ids) = (
        cx.providers.clone(),
        cx.config.topic.clone(),
        claims.clone(),
        sections.to_vec(),
    );
    let names = names.clone();
    let mut all = deps.to_vec();
    all.extend(sections.iter().cloned());
    all.extend(conflict_nodes.iter().cloned());
    let late = conflict_nodes.to_vec();
    let llm = crate::model_call::prompt_key(
        &cx.providers.prompts.synthesize,
        cx.providers.strong_models(),
    );
    let mut key = serde_json::json!({"v": STAGE_VERSION, "prose": deepr_evidence::prose::VERSION, "llm": llm});
    // A refresh keeps its parent's summary while everything it states still stands.
    let parent = cx
        .config
        .parent_reading
        .as_ref()
        .and_then(|p| p.summary_step(&key));
    if let Some(parent) = &parent {
        key["parent"] = serde_json::json!(parent.digest);
    }
    let node = spec(
        crate::research::node_id::SYNTHESIZE.into(),
        "synthesize",
        key,
        move |ctx| async move {
            let mut written_sections = Vec::new();
            for id in &ids {
                written_sections.push(read::<SectionOut>(&ctx.inputs, id)?);
            }
            let mut conflicts = conflicts;
            for id in &late {
                conflicts.extend(read::<crate::types::ConflictOut>(&ctx.inputs, id)?.conflicts);
            }
            if let Some(kept) = parent.as_ref().and_then(|parent| {
                let now: Vec<&ClaimDraft> = cl.iter().map(|(c, _)| c).collect();
                let verdicts: BTreeMap<&str, Verdict> =
                    cl.iter().map(|(c, v)| (c.id.as_str(), *v)).collect();
                let usable = |id: &str| verdicts.get(id).is_some_and(|v| crate::write::usable(*v));
                parent.still_stands(&now, &usable, &conflicts)
            }) {
                return finish(kept, Vec::new());
            }
            let written = Written {
                topic: &t,
                sections: &written_sections,
                claims: &cl,
                conflicts: &conflicts,
                documents: &names,
            };
            let (out, calls) = run(
                &ctx.node_id,
                &p.prompts.synthesize,
                written,
                p.archive.as_ref(),
                p.strong_models(),
            )
            .await;
            finish(out, calls)
        },
    );
    (node, all)
}
