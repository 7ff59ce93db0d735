//! decompose: topic → subquestions (strong model), grounded in a first "scout"
//! search whose document titles and headings are shown to the model.

use std::collections::BTreeSet;

use deepr_evidence::report::Coverage;
use deepr_evidence::terms::content_terms;
use deepr_orchestrator::clock::Clock;
use deepr_orchestrator::{ArchivedText, Fetcher, LedgerEntry, SearchProvider, TextArchive, Tier};
use deepr_tasks::decompose::{Decompose, Input};

use crate::model_call::{call_task, Models, TaskCall};
use crate::types::{DecomposeOut, ScoutOut, Subq};

/// 2: a document with an outline shows its reader's headings, not guessed lines (a
/// table row such as "Item: Par amount · Proposal: $148.5M" is no heading).
/// 3: with no usable plan the topic is researched as one question (it was no plan).
/// 4: an off-topic document's title and headings (triage) are not shown to the
/// planner; bylines are no headings.
/// 5: each subquestion carries the first queries the plan wrote for it; the planner
/// is shown the scout's document titles apart (no title is a subject of its own).
/// 6: the scout's title rule knows release notes and a file name's office event.
pub const STAGE_VERSION: u32 = 6;
/// Documents the scout reads headings from.
pub const SCOUT_DOCS: usize = 6;
/// Headings shown to the planner.
pub const MAX_HEADINGS: usize = 40;

/// Search the topic itself and collect titles and headings of the top documents. The
/// documents are fetched at once (at most `io_concurrency`), read in rank order.
pub async fn scout(
    node_id: &str,
    topic: &str,
    search: &[std::sync::Arc<dyn SearchProvider>],
    fetcher: &dyn Fetcher,
    archive: &dyn TextArchive,
    io_concurrency: usize,
    clock: &dyn Clock,
) -> (ScoutOut, Vec<LedgerEntry>) {
    let (retrieved, mut calls) = crate::retrieve::search_all(
        node_id,
        "scout",
        &[topic.to_string()],
        search,
        10,
        io_concurrency,
        clock,
    )
    .await;
    let top = retrieved.hits.iter().take(SCOUT_DOCS);
    let fetches = top
        .map(|fused| async move {
            let started = clock.now();
            let outcome = fetcher.fetch(&fused.hit).await;
            let elapsed_ms = clock.elapsed_ms(started);
            (outcome, elapsed_ms)
        })
        .collect();
    let fetched = crate::concurrent::in_order(fetches, io_concurrency).await;
    let brief = deepr_tasks::brief::parse_brief(topic);
    let mut docs = Vec::new();
    let mut headings = Vec::new();
    let mut seen = BTreeSet::new();
    for (outcome, elapsed_ms) in fetched {
        calls.push(LedgerEntry::io_call(
            node_id,
            "scout",
            "fetch",
            "fetch".into(),
            elapsed_ms,
            outcome.status.as_str(),
        ));
        let Some(doc) = outcome.doc else { continue };
        if let Some(text) = archive.get(&doc.content_sha256) {
            // The headings its reader found; a text without an outline (plain text, an
            // older index) is guessed from its short capitalised lines.
            let lines = if !doc.outline.headings.is_empty() {
                outline_headings(&doc.outline, &text.text)
            } else {
                heading_lines(&text)
            };
            // An off-topic document's title and headings are no subjects to plan.
            let off_topic =
                deepr_tasks::triage::off_topic_by_name(&doc.title, &doc.locator, &lines, &brief);
            let lines = if off_topic.is_some() {
                Vec::new()
            } else {
                std::iter::once(doc.title.clone()).chain(lines).collect()
            };
            for heading in lines {
                let key = heading.to_lowercase();
                if !heading.is_empty() && seen.insert(key) && headings.len() < MAX_HEADINGS {
                    headings.push(heading);
                }
            }
        }
        docs.push(doc);
    }
    let coverage: Vec<Coverage> = retrieved.coverage;
    (
        ScoutOut {
            docs,
            headings,
            coverage,
        },
        calls,
    )
}

/// The headings a document's reader found (its outline), as one line each; bylines
/// (who wrote, when) are no topics.
pub(crate) fn outline_headings(outline: &deepr_orchestrator::Outline, text: &str) -> Vec<String> {
    outline
        .headings
        .iter()
        .filter(|(at, level)| *level > 0 && !outline.bylines.contains(at))
        .filter_map(|(at, _)| text.get(*at as usize..))
        .map(|rest| rest.split("\n\n").next().unwrap_or(""))
        .map(|h| h.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|h| !h.is_empty())
        .collect()
}

/// Heading-like lines of an archived text: short, no final punctuation, mostly
/// capitalised words, at least two content words.
pub fn heading_lines(text: &ArchivedText) -> Vec<String> {
    let mut out = Vec::new();
    for index in 0..text.sentences.len() {
        let Some(sentence) = text.sentence(u32::try_from(index).unwrap_or(u32::MAX)) else {
            continue;
        };
        let line = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
        let line = line
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
            .to_string();
        let word_count = line.split_whitespace().count();
        if !(2..=8).contains(&word_count) || line.ends_with(['.', ':', ';', ',', '?', '!', ')']) {
            continue;
        }
        let capitalised = line
            .split_whitespace()
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .count();
        if capitalised * 2 >= word_count
            && content_terms(&line).len() >= 2
            && line.chars().all(|c| !c.is_control())
        {
            out.push(line);
        }
    }
    out
}

pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    depth: crate::Depth,
    scout: &ScoutOut,
    models: Models<'_>,
) -> (DecomposeOut, Vec<LedgerEntry>) {
    let limits = depth.limits();
    let max = limits.max_subquestions;
    let input = Input {
        topic: topic.to_string(),
        min: limits.min_subquestions,
        max,
        target: limits.target_subquestions,
        headings: scout.headings.clone(),
        titles: scout.docs.iter().map(|d| d.title.clone()).collect(),
        parts: deepr_tasks::brief::parse_brief(topic).parts,
    };
    let result = call_task(
        models,
        TaskCall::<Decompose> {
            node_id,
            stage: "decompose",
            prompt,
            tier: Tier::Strong,
            input: &input,
        },
    )
    .await;
    let mut seen = BTreeSet::new();
    // Each subquestion with the queries the plan wrote for it: none unless the plan
    // wrote one list per subquestion, and none from a fallback's plan (the model that
    // could not plan may still write better queries than the heuristic).
    let planned = &result.value.queries;
    let carried = result.degraded.is_none() && planned.len() == result.value.subquestions.len();
    let mut questions: Vec<(String, Vec<String>)> = result
        .value
        .subquestions
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let queries = match (carried, planned.get(i)) {
                (true, Some(queries)) => clean_queries(queries),
                _ => Vec::new(),
            };
            (clean_question(q), queries)
        })
        .filter(|(q, _)| !q.is_empty() && seen.insert(q.to_lowercase()))
        .take(max)
        .collect();
    let mut degraded = result.degraded;
    // No usable plan (the model's and the fallback's both invalid): the topic itself is
    // researched as one question, and the report says so — never an empty report.
    if questions.is_empty() {
        let topic_line = clean_question(topic);
        // A topic of digits and marks only ("2024") cleans to nothing: keep it as typed.
        let whole: String = topic.split_whitespace().collect::<Vec<_>>().join(" ");
        let question = if topic_line.is_empty() {
            whole.chars().take(300).collect()
        } else {
            topic_line
        };
        questions.push((question, Vec::new()));
        let why = degraded
            .take()
            .unwrap_or_else(|| "the plan was empty".into());
        degraded = Some(format!("{why}; researching the topic as one question"));
    }
    let subquestions = questions
        .into_iter()
        .enumerate()
        .map(|(i, (text, queries))| Subq {
            id: format!("q{}", i + 1),
            text,
            round: 0,
            parent: None,
            queries,
        })
        .collect();
    (
        DecomposeOut {
            subquestions,
            degraded,
        },
        result.calls,
    )
}

/// A plan's queries for one subquestion: each one line and bounded, no empty or repeated
/// one, at most three (what the query step would write).
fn clean_queries(queries: &[String]) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for query in queries {
        let query = crate::model_call::clean_model_text(query, 200);
        if !query.is_empty() && !kept.contains(&query) && kept.len() < 3 {
            kept.push(query);
        }
    }
    kept
}

/// One line, bounded length, no control characters: model text is data.
pub fn clean_question(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = line.trim_start_matches(|c: char| {
        c == '-' || c == '*' || c.is_ascii_digit() || c == '.' || c == ')' || c == ' '
    });
    line.chars()
        .filter(|c| !c.is_control())
        .take(300)
        .collect::<String>()
        .trim()
        .to_string()
}

/// The plan phase's first node: the topic searched once, for the headings a planner
/// may add.
pub fn scout_node(cx: &crate::node::PipelineContext) -> crate::node::Node {
    use crate::node::{finish, spec};
    let (p, t, io) = (
        cx.providers.clone(),
        cx.config.topic.clone(),
        cx.config.io_concurrency,
    );
    let key = serde_json::json!({"v": STAGE_VERSION, "topic": cx.config.topic, "search": cx.search_names, "fp": cx.config.search_fingerprint});
    let node = spec(
        crate::research::node_id::SCOUT.into(),
        "scout",
        key,
        move |ctx| async move {
            let (out, calls) = scout(
                &ctx.node_id,
                &t,
                &p.search,
                p.fetcher.as_ref(),
                p.archive.as_ref(),
                io,
                p.clock.as_ref(),
            )
            .await;
            finish(out, calls)
        },
    );
    (node, vec![])
}

/// The subquestions of a plan the user reviewed, as the planner would have written
/// them: numbered in order, each with the queries the user kept (none: the query step
/// writes them).
pub fn reviewed(plan: &[crate::research::PlannedQuestion]) -> DecomposeOut {
    let subquestions = plan
        .iter()
        .enumerate()
        .map(|(i, planned)| Subq {
            id: format!("q{}", i + 1),
            // Checked when the plan was read: only its spaces are tidied, never its
            // words ("2024 budget?" stays as asked).
            text: planned
                .question
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            round: 0,
            parent: None,
            queries: clean_queries(&planned.queries),
        })
        .collect();
    DecomposeOut {
        subquestions,
        degraded: None,
    }
}

/// The plan: subquestions from the topic (or brief) and the scout's headings — or,
/// when the user reviewed a plan (`--plan`), those subquestions, with no call and no
/// scout before it.
pub fn node(cx: &crate::node::PipelineContext) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    if let Some(plan) = &cx.config.user_plan {
        let out = reviewed(plan);
        let key = serde_json::json!({"v": STAGE_VERSION, "reviewed": out.subquestions});
        let node = spec(
            node_id::DECOMPOSE.into(),
            "decompose",
            key,
            move |_| async move { finish(out, Vec::new()) },
        );
        return (node, vec![]);
    }
    let (p, t, d) = (
        cx.providers.clone(),
        cx.config.topic.clone(),
        cx.config.depth,
    );
    let llm = crate::model_call::prompt_key(
        &cx.providers.prompts.decompose,
        cx.providers.strong_models(),
    );
    let key = serde_json::json!({"v": STAGE_VERSION, "depth": cx.config.depth, "llm": llm});
    let node = spec(
        node_id::DECOMPOSE.into(),
        "decompose",
        key,
        move |ctx| async move {
            let scout: ScoutOut = read(&ctx.inputs, node_id::SCOUT)?;
            let (out, calls) = run(
                &ctx.node_id,
                &p.prompts.decompose,
                &t,
                d,
                &scout,
                p.strong_models(),
            )
            .await;
            finish(out, calls)
        },
    );
    (node, vec![node_id::SCOUT.to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_documents_headings_are_its_outlines_not_its_short_lines() {
        let text = ArchivedText::new(
            "Bond Sale Memo\n\nFinancial Position\n\nItem: Par Amount · Proposal: $148.5M\n\n\
             Reserves stood at 47 days of operating expenses.",
        );
        let outline = deepr_orchestrator::Outline {
            headings: vec![(0, 1), (16, 2)],
            ..Default::default()
        };
        assert_eq!(
            outline_headings(&outline, &text.text),
            ["Bond Sale Memo", "Financial Position"]
        );
        // A byline (who wrote, when) is a heading of the text but no topic of it.
        let mail =
            ArchivedText::new("Yard lease\n\nDana Ruiz to Ops, 2026-03-04 09:12\n\nWe signed.");
        let outline = deepr_orchestrator::Outline {
            headings: vec![(0, 1), (12, 2)],
            bylines: vec![12],
            ..Default::default()
        };
        assert_eq!(outline_headings(&outline, &mail.text), ["Yard lease"]);
        // The guess, for a text without an outline, takes the table row for a heading.
        assert!(heading_lines(&text)
            .iter()
            .any(|h| h.starts_with("Item: Par Amount")));
    }

    #[tokio::test]
    async fn with_no_usable_plan_the_topic_is_researched_as_one_question() {
        // A model and a fallback whose every answer is an empty plan.
        let empty = "{\"subquestions\": []}";
        let topic = "How do the ferries cope with winter storms?";
        let out = planned(topic, vec![empty; 2], vec![empty]).await;
        let asked: Vec<&str> = out.subquestions.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(asked, [topic]);
        let why = out.degraded.unwrap_or_default();
        assert!(
            why.contains("researching the topic as one question"),
            "{why}"
        );
    }

    /// The plan of `topic` at quick depth, from a model answering `model` in turn (as
    /// JSON) and a fallback answering `fallback`.
    async fn planned(
        topic: &str,
        model: Vec<&'static str>,
        fallback: Vec<&'static str>,
    ) -> DecomposeOut {
        let clock = deepr_orchestrator::clock::TokioClock::new();
        let model = crate::model_call::tests::Scripted(std::sync::Mutex::new(model));
        let fallback = crate::model_call::tests::Scripted(std::sync::Mutex::new(fallback));
        let models = Models {
            llm: &model,
            fallback: &fallback,
            clock: &clock,
        };
        let scout = ScoutOut {
            docs: vec![],
            headings: vec![],
            coverage: vec![],
        };
        run(
            "decompose",
            &deepr_prompts::DECOMPOSE,
            topic,
            crate::Depth::Quick,
            &scout,
            models,
        )
        .await
        .0
    }

    #[tokio::test]
    async fn a_plan_carries_each_subquestions_first_queries() {
        const TOPIC: &str = "How does WAL mode cache pages?";
        let out = planned(
            TOPIC,
            vec![r#"{"subquestions": ["What is WAL?", "What is WAL?", "How are pages cached?"],
                "queries": [["wal mode"], ["repeated"], ["page cache", " ", "page cache", "cache spill", "spill", "more"]]}"#],
            vec![],
        )
        .await;
        let carried: Vec<(&str, Vec<&str>)> = out
            .subquestions
            .iter()
            .map(|s| {
                (
                    s.text.as_str(),
                    s.queries.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        // The repeated subquestion goes with its queries; blanks and repeats are dropped,
        // three at most are kept.
        assert_eq!(
            carried,
            [
                ("What is WAL?", vec!["wal mode"]),
                (
                    "How are pages cached?",
                    vec!["page cache", "cache spill", "spill"]
                ),
            ]
        );
        // Queries that do not pair one list with each subquestion are not carried: the
        // query step writes them.
        let out = planned(
            TOPIC,
            vec![r#"{"subquestions": ["What is WAL?", "How are pages cached?"], "queries": [["wal"]]}"#],
            vec![],
        )
        .await;
        assert!(out.subquestions.iter().all(|s| s.queries.is_empty()));
    }

    #[test]
    fn clean_question_strips_markup_and_controls() {
        assert_eq!(clean_question("1. What\tis\u{7} WAL?\n"), "What is WAL?");
    }
}
