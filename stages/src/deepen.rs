//! deepen: decide whether to run another round, and for which gaps.
//!
//! The decision is deterministic code over node outputs only (never timings or token
//! totals): a gap is a subject the brief names that the first round's plan had no room
//! for ("labour relations" of a part listing five), a subquestion of this round with
//! fewer than [`MIN_SUPPORTED`] supported claims or one involved in a conflict, or a
//! current document the brief's searches found that no claim quotes ([`unread`]) — one
//! of each kind in turn, at most [`MAX_FOLLOWUPS`]. Rounds are bounded by depth (quick 0,
//! standard ≤ 1, deep ≤ 3). A brief's subject and an unread document are asked as the
//! plan asks its subjects; the model only words the other follow-up questions.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use deepr_evidence::report::{Conflict, Verdict};
use deepr_evidence::terms::content_terms;
use deepr_orchestrator::{LedgerEntry, Tier};
use deepr_tasks::brief::asked_subject;
use deepr_tasks::deepen::{Deepen, Gap, Input};

use crate::decompose::clean_question;
use crate::model_call::{call_task, Models, TaskCall};
use crate::types::{ClaimDraft, DeepenOut, ScoreOut, Subq};

pub(crate) mod unread;

/// 2: the brief's subjects the plan had no room for are followed up first.
/// 3: the current documents found that no claim quotes are followed up too (after a
/// model's plan as well); subjects, thin subquestions and documents take turns.
/// 4: a document triage judged background is never followed up.
/// 5: a brief part's subjects after a colon are its listed ones, each with the part's
/// head when it is a clause (`deepr_tasks::brief::part_subjects`).
/// 6: a brief that lists more subjects than the plan asked takes more follow-ups
/// ([`followup_limit`]).
pub const STAGE_VERSION: u32 = 6;
/// Most follow-ups of a round whose brief lists more subjects than its plan asked
/// ([`followup_limit`]).
pub const MAX_BRIEF_FOLLOWUPS: usize = 2 * MAX_FOLLOWUPS;

/// How many follow-ups a round takes, in turns, when the brief lists `unasked`
/// subjects no subquestion asked: [`MAX_FOLLOWUPS`] (where subjects take about half),
/// and one more for each unasked subject beyond those, at most [`MAX_BRIEF_FOLLOWUPS`].
/// A brief listing fifteen subjects over five parts had left its pay deal and court
/// cases unasked (offline, the third share: 82.5 → 90 % of key facts; taking the
/// subjects only after the turns: 87.5 %, the recall review no longer read).
pub fn followup_limit(unasked: usize) -> usize {
    (MAX_FOLLOWUPS + unasked.saturating_sub(MAX_FOLLOWUPS / 2)).min(MAX_BRIEF_FOLLOWUPS)
}

/// A subquestion with fewer supported claims than this is thin.
pub const MIN_SUPPORTED: usize = 2;
/// Most follow-ups per round.
pub const MAX_FOLLOWUPS: usize = 4;

/// The round's gaps: a subquestion its sources disagree on, or with fewer than
/// [`MIN_SUPPORTED`] supported claims, each with why.
fn gaps(
    subquestions: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    conflicts: &[Conflict],
) -> Vec<(Subq, String)> {
    let mut gaps = Vec::new();
    for subq in subquestions {
        let supported = claims
            .iter()
            .filter(|(c, v)| c.subquestion == subq.id && *v == Verdict::Supported)
            .count();
        if let Some(conflict) = conflicts.iter().find(|c| c.subquestion == subq.id) {
            gaps.push((
                subq.clone(),
                format!("sources disagree: {}", conflict.summary),
            ));
        } else if supported < MIN_SUPPORTED && !unread::is_document_followup(&subq.id) {
            // (A document read because nobody had quoted it may say little: it is
            // read once, not dug into.)
            gaps.push((
                subq.clone(),
                format!("only {supported} supported claim(s), fewer than {MIN_SUPPORTED}"),
            ));
        }
    }
    gaps
}

/// After the first round of a plan asked subject by subject, the subjects a brief's parts
/// name that no subquestion asks about, as follow-ups (at most `limit`, one per part in turn, in the brief's order),
/// each under the subquestion of its part so that its claims join that section. A
/// part's own subject is never one: the plan asks every part, whole or as its pair.
fn unplanned_subjects(topic: &str, subquestions: &[Subq], round: u32, limit: usize) -> Vec<Subq> {
    let brief = deepr_tasks::brief::parse_brief(topic);
    // A model words its own plan and must cover every part (`uncovered_parts`); only a
    // plan that asks subject by subject (the offline planner's) is cut by the depth's
    // maximum. (Matching a model's wording to the brief's subjects had followed up
    // fragments such as "People side", relayed runs showed.)
    let by_subject = subquestions
        .iter()
        .any(|s| asked_subject(&s.text).is_some());
    if round > 0 || !brief.has_parts() || !by_subject {
        return Vec::new();
    }
    let mut asked: Vec<String> = subquestions
        .iter()
        .filter_map(|s| asked_subject(&s.text).map(str::to_string))
        .collect();
    let entity = brief.entities.first().map(String::as_str);
    // Each part's parent subquestion and its open subjects, in the brief's order.
    let mut per_part: Vec<(String, VecDeque<OpenSubject>)> = Vec::new();
    for (i, (part, subjects)) in brief
        .parts
        .iter()
        .zip(deepr_tasks::brief::part_subjects(&brief))
        .enumerate()
    {
        let Some(parent) = part_subquestion(part, subquestions) else {
            continue;
        };
        let open = subjects
            .beyond_whole()
            .into_iter()
            .enumerate()
            .map(|(k, subject)| (i, k, subject))
            .collect();
        per_part.push((parent, open));
    }
    let mut followups = Vec::new();
    while followups.len() < limit && per_part.iter().any(|(_, open)| !open.is_empty()) {
        for (parent, open) in per_part.iter_mut() {
            // The next subject of this part no subquestion asks yet (two parts may list
            // the same one; it is asked once).
            let next = std::iter::from_fn(|| open.pop_front()).find(|(_, _, subject)| {
                !asked
                    .iter()
                    .any(|a| deepr_tasks::brief::same_subject(a, subject))
            });
            let Some((i, k, subject)) = next.filter(|_| followups.len() < limit) else {
                continue;
            };
            asked.push(subject.clone());
            // The part's index keeps ids apart when parts share a parent subquestion.
            followups.push(Subq {
                id: format!("{parent}.p{i}s{k}.r{}", round + 1),
                text: deepr_tasks::brief::subject_question(&subject, entity),
                round: round + 1,
                parent: Some(parent.clone()),
                queries: Vec::new(),
            });
        }
    }
    followups
}

/// A subject still to ask: its part's index, its index among the part's subjects, and
/// the subject.
type OpenSubject = (usize, usize, String);

/// The subquestion that asks about `part`: the one sharing the most of its terms
/// (the earlier on a tie), none when no subquestion shares any.
fn part_subquestion(part: &str, subquestions: &[Subq]) -> Option<String> {
    let terms: BTreeSet<String> = content_terms(part).into_iter().collect();
    let mut best: Option<(usize, &Subq)> = None;
    for subq in subquestions {
        let shared = content_terms(&subq.text)
            .into_iter()
            .filter(|t| terms.contains(t))
            .collect::<BTreeSet<_>>()
            .len();
        if shared > 0 && best.is_none_or(|(b, _)| shared > b) {
            best = Some((shared, subq));
        }
    }
    best.map(|(_, s)| s.id.clone())
}

/// The answer's follow-ups as the next round's subquestions: one per gap, cleaned,
/// in id order.
fn followups(answered: Vec<deepr_tasks::deepen::AnswerFollowup>, round: u32) -> Vec<Subq> {
    let mut followups: Vec<Subq> = Vec::new();
    for f in answered {
        let text = clean_question(&f.question);
        if text.is_empty()
            || followups
                .iter()
                .any(|s| s.parent.as_deref() == Some(f.gap_id.as_str()))
        {
            continue;
        }
        followups.push(Subq {
            id: format!("{}.r{}", f.gap_id, round + 1),
            text,
            round: round + 1,
            parent: Some(f.gap_id),
            queries: Vec::new(),
        });
    }
    followups.sort_by(|a, b| a.id.cmp(&b.id));
    followups
}

#[allow(clippy::too_many_arguments)]
pub async fn run(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    depth: crate::Depth,
    round: u32,
    subquestions: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    conflicts: &[Conflict],
    scored: &BTreeMap<String, ScoreOut>,
    models: Models<'_>,
) -> (DeepenOut, Vec<LedgerEntry>) {
    let limit = depth.limits().extra_rounds;
    let taken = open_followups(
        topic,
        subquestions,
        claims,
        conflicts,
        scored,
        round,
        round < limit,
    );
    let gap_list = taken
        .iter()
        .map(|open| match open {
            Open::Asked(s, why) => format!("{}: {why}", s.text),
            Open::Thin(s, why) => format!("{}: {why}", s.id),
        })
        .collect::<Vec<_>>()
        .join("; ");
    let (mut fixed, mut gaps): (Vec<Subq>, Vec<(Subq, String)>) = (Vec::new(), Vec::new());
    for open in taken {
        match open {
            Open::Asked(s, _) => fixed.push(s),
            Open::Thin(s, why) => gaps.push((s, why)),
        }
    }
    let (followups, calls) = if gap_list.is_empty() {
        let documents = if round < limit && unread::reads_unread(topic, round) {
            ", and every current document found is quoted"
        } else {
            ""
        };
        let reason = format!("no gaps after round {round}: every subquestion has at least {MIN_SUPPORTED} supported claims and no disagreement{documents}");
        return (empty(reason), vec![]);
    } else if round >= limit {
        let reason = format!(
            "depth {} allows {limit} extra round(s); gaps left open: {gap_list}",
            depth.as_str()
        );
        return (empty(reason), vec![]);
    } else if gaps.is_empty() {
        fixed.sort_by(|a, b| a.id.cmp(&b.id));
        (fixed, vec![])
    } else {
        let (mut worded, calls) =
            worded_followups(node_id, prompt, topic, round, &gaps, models).await;
        worded.extend(fixed);
        worded.sort_by(|a, b| a.id.cmp(&b.id));
        (worded, calls)
    };
    let reason = format!("round {} follows up {}", round + 1, gap_list);
    (DeepenOut { followups, reason }, calls)
}

/// What the next round may follow up, at most [`MAX_FOLLOWUPS`]: the brief's unasked
/// subjects, the thin or disputed subquestions and the unread documents, one of each in
/// turn. Unread documents only when another round may run (`another_round`): they are
/// questions to read, not gaps a report must list.
#[allow(clippy::too_many_arguments)]
fn open_followups(
    topic: &str,
    subquestions: &[Subq],
    claims: &[(ClaimDraft, Verdict)],
    conflicts: &[Conflict],
    scored: &BTreeMap<String, ScoreOut>,
    round: u32,
    another_round: bool,
) -> Vec<Open> {
    let subjects = unplanned_subjects(topic, subquestions, round, MAX_BRIEF_FOLLOWUPS);
    let limit = followup_limit(subjects.len());
    let unread = if another_round {
        unread::unread_documents(topic, subquestions, scored, claims, round, MAX_FOLLOWUPS)
    } else {
        Vec::new()
    };
    taking_turns(
        vec![
            subjects
                .into_iter()
                .map(|s| Open::Asked(s, "the brief asks about it, no subquestion did"))
                .collect(),
            gaps(subquestions, claims, conflicts)
                .into_iter()
                .map(|(s, why)| Open::Thin(s, why))
                .collect(),
            unread
                .into_iter()
                .map(|s| Open::Asked(s, "found, not quoted in this round"))
                .collect(),
        ],
        limit,
    )
}

/// What the next round may follow up: a question asked as the plan asks (a brief's
/// subject, an unread document), or a thin or disputed subquestion the model words a
/// follow-up for; each with why.
enum Open {
    Asked(Subq, &'static str),
    Thin(Subq, String),
}

/// One item of each queue in turn (the first queue's first), at most `limit`.
fn taking_turns<T>(queues: Vec<Vec<T>>, limit: usize) -> Vec<T> {
    let mut queues: Vec<std::vec::IntoIter<T>> = queues.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let before = out.len();
        for queue in queues.iter_mut() {
            if out.len() < limit {
                out.extend(queue.next());
            }
        }
        if out.len() == before || out.len() >= limit {
            return out;
        }
    }
}

fn empty(reason: String) -> DeepenOut {
    DeepenOut {
        followups: vec![],
        reason,
    }
}

/// Follow-ups for thin or disputed subquestions, worded by the model (or the heuristic).
async fn worded_followups(
    node_id: &str,
    prompt: &deepr_prompts::Prompt,
    topic: &str,
    round: u32,
    gaps: &[(Subq, String)],
    models: Models<'_>,
) -> (Vec<Subq>, Vec<LedgerEntry>) {
    let input = Input {
        topic: topic.to_string(),
        gaps: gaps
            .iter()
            .map(|(s, why)| Gap {
                id: s.id.clone(),
                text: s.text.clone(),
                why: why.clone(),
            })
            .collect(),
    };
    let result = call_task(
        models,
        TaskCall::<Deepen> {
            node_id,
            stage: "deepen",
            prompt,
            tier: Tier::Cheap,
            input: &input,
        },
    )
    .await;
    (followups(result.value.followups, round), result.calls)
}

/// The round's follow-ups (the next round's subquestions): the brief's unasked
/// subjects, thin and disputed subquestions, unread documents ([`open_followups`]).
pub fn node(
    cx: &crate::node::PipelineContext,
    round: u32,
    extracts: &[String],
    subquestions: &[Subq],
) -> crate::node::Node {
    use crate::node::{finish, read, spec};
    use crate::research::node_id;
    let (p, t, d) = (
        cx.providers.clone(),
        cx.config.topic.clone(),
        cx.config.depth,
    );
    let (judge, conflict) = (
        node_id::join(round, "judge"),
        node_id::join(round, "conflict"),
    );
    let mut deps = vec![judge.clone(), conflict.clone()];
    deps.extend(extracts.iter().cloned());
    // Each subquestion's scored sources: what its search found, quoted or not.
    let scores: Vec<(String, String)> = subquestions
        .iter()
        .map(|s| (s.id.clone(), node_id::step(round, &s.id, "score")))
        .collect();
    deps.extend(scores.iter().map(|(_, id)| id.clone()));
    let llm =
        crate::model_call::prompt_key(&cx.providers.prompts.deepen, cx.providers.cheap_models());
    let key = serde_json::json!({"v": STAGE_VERSION, "depth": cx.config.depth, "round": round, "llm": llm});
    let (ex, subqs) = (extracts.to_vec(), subquestions.to_vec());
    let node = spec(
        node_id::join(round, "deepen"),
        "deepen",
        key,
        move |ctx| async move {
            let judged: crate::types::JudgeOut = read(&ctx.inputs, &judge)?;
            let verdicts: std::collections::BTreeMap<String, Verdict> =
                judged.verdicts.into_iter().collect();
            let conflicts: crate::types::ConflictOut = read(&ctx.inputs, &conflict)?;
            let mut claims = Vec::new();
            for id in &ex {
                let extracted: crate::types::ExtractOut = read(&ctx.inputs, id)?;
                claims.extend(extracted.claims.into_iter().map(|c| {
                    let v = verdicts.get(&c.id).copied().unwrap_or(Verdict::Unjudged);
                    (c, v)
                }));
            }
            let mut scored = std::collections::BTreeMap::new();
            for (subq, id) in &scores {
                scored.insert(subq.clone(), read::<ScoreOut>(&ctx.inputs, id)?);
            }
            let (out, calls) = run(
                &ctx.node_id,
                &p.prompts.deepen,
                &t,
                d,
                round,
                &subqs,
                &claims,
                &conflicts.conflicts,
                &scored,
                p.cheap_models(),
            )
            .await;
            finish(out, calls)
        },
    );
    (node, deps)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BRIEF: &str =
        "Prepare a briefing on the Harbour Ferry Company. Cover: (1) its finances, \
        including the budget, fare revenue, reserves and borrowing; (2) its fleet; (3) leadership, \
        the workforce, labour relations and litigation. Be specific about numbers.";

    fn subq(id: &str, subject: &str) -> Subq {
        Subq {
            id: id.into(),
            text: deepr_tasks::brief::subject_question(subject, Some("Harbour Ferry Company")),
            round: 0,
            parent: None,
            queries: Vec::new(),
        }
    }

    /// The ferry brief's plan: each part whole, and its first listed subject.
    fn ferry_plan() -> [Subq; 5] {
        [
            subq(
                "q1",
                "Finances, including the budget, fare revenue, reserves and borrowing",
            ),
            subq("q2", "Budget"),
            subq("q3", "Fleet"),
            subq(
                "q4",
                "Leadership, the workforce, labour relations and litigation",
            ),
            subq("q5", "Leadership"),
        ]
    }

    #[test]
    fn the_briefs_subjects_the_plan_had_no_room_for_are_followed_up_under_their_part() {
        let plan = ferry_plan();
        let followups = unplanned_subjects(BRIEF, &plan, 0, MAX_FOLLOWUPS);
        let asked: Vec<(&str, Option<&str>)> = followups
            .iter()
            .map(|f| (asked_subject(&f.text).unwrap_or(""), f.parent.as_deref()))
            .collect();
        // One per part in turn, in the brief's order; a planned subject ("Budget",
        // "Leadership") or a list's head ("Finances") is never asked again.
        assert_eq!(
            asked,
            [
                ("Fare revenue", Some("q1")),
                ("Workforce", Some("q4")),
                ("Reserves", Some("q1")),
                ("Labour relations", Some("q4")),
            ]
        );
        assert!(followups.iter().all(|f| f.round == 1));
        let ids: BTreeSet<&str> = followups.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids.len(), followups.len(), "ids are unique: {ids:?}");
        // Parts that share a subquestion (a plan smaller than its brief) still give
        // follow-ups of distinct ids.
        let merged = [subq(
            "q1",
            "Finances, including the budget, fare revenue, reserves and borrowing; Fleet; \
             Leadership, the workforce, labour relations and litigation",
        )];
        let followups = unplanned_subjects(BRIEF, &merged, 0, MAX_FOLLOWUPS);
        let ids: BTreeSet<&str> = followups.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids.len(), MAX_FOLLOWUPS, "{followups:?}");
        // Only after the first round, only for a brief with parts.
        assert!(unplanned_subjects(BRIEF, &plan, 1, MAX_FOLLOWUPS).is_empty());
        let question = "How does the ferry company fund its fleet renewal?";
        assert!(unplanned_subjects(question, &plan[..1], 0, MAX_FOLLOWUPS).is_empty());
    }

    #[test]
    fn a_brief_that_lists_many_unasked_subjects_takes_more_follow_ups() {
        // Subjects take about half the turns of MAX_FOLLOWUPS; each unasked subject
        // beyond those adds one, up to MAX_BRIEF_FOLLOWUPS.
        let limits: Vec<usize> = [0, 2, 3, 5, 6, 20].map(followup_limit).to_vec();
        assert_eq!(limits, [4, 4, 5, 7, 8, 8]);
        // The ferry brief's plan leaves six subjects unasked, and every subquestion is
        // thin (no claims): the round takes eight in turns, four of them subjects (a cap
        // of four had taken two).
        let plan = ferry_plan();
        let taken = open_followups(BRIEF, &plan, &[], &[], &BTreeMap::new(), 0, true);
        let asked: Vec<&str> = taken
            .iter()
            .filter_map(|open| match open {
                Open::Asked(s, _) => asked_subject(&s.text),
                Open::Thin(..) => None,
            })
            .collect();
        assert_eq!(
            asked,
            ["Fare revenue", "Workforce", "Reserves", "Labour relations"]
        );
        assert_eq!(taken.len(), MAX_BRIEF_FOLLOWUPS);
    }

    #[test]
    fn subjects_thin_subquestions_and_unread_documents_take_turns_up_to_the_limit() {
        assert_eq!(
            taking_turns(vec![vec![1, 2, 3], vec![], vec![10, 20]], 4),
            [1, 10, 2, 20]
        );
        assert_eq!(
            taking_turns(vec![vec![1], vec![5, 6], vec![10, 20, 30]], 5),
            [1, 5, 10, 6, 20]
        );
        assert_eq!(taking_turns(vec![vec![1, 2], Vec::new()], 4), [1, 2]);
        assert_eq!(taking_turns(vec![vec![1, 2], vec![10]], 1), [1]);
    }

    #[test]
    fn a_rounds_subjects_thin_subquestions_and_unread_documents_take_turns_with_distinct_ids() {
        let plan = [
            subq(
                "q1",
                "Finances, including the budget, fare revenue, reserves and borrowing",
            ),
            subq("q2", "Fleet"),
            subq(
                "q3",
                "Leadership, the workforce, labour relations and litigation",
            ),
        ];
        let document = deepr_orchestrator::DocMeta {
            doc_key: "ops/crew-roster.csv".into(),
            locator: "ops/crew-roster.csv".into(),
            title: "Crew roster".into(),
            content_sha256: "sha-roster".into(),
            date: None,
            authority: 0.8,
            outline: deepr_orchestrator::Outline::default(),
        };
        let scored: BTreeMap<String, ScoreOut> = [(
            "q2".to_string(),
            ScoreOut {
                sources: vec![crate::types::ScoredSource {
                    off_topic: None,
                    background: false,
                    doc: document,
                    relevance: 0.5,
                    authority: 0.8,
                    recency: 1.0,
                    score: 0.6,
                }],
                ..ScoreOut::default()
            },
        )]
        .into_iter()
        .collect();
        // No claims: every subquestion is thin, the roster unread.
        let taken = open_followups(BRIEF, &plan, &[], &[], &scored, 0, true);
        let ids: Vec<String> = taken
            .iter()
            .map(|open| match open {
                Open::Asked(s, why) => format!("{} ({why})", s.id),
                Open::Thin(s, _) => format!("{} (thin)", s.id),
            })
            .collect();
        assert_eq!(
            ids,
            [
                "q1.p0s0.r1 (the brief asks about it, no subquestion did)",
                "q1 (thin)",
                "q2.d0.r1 (found, not quoted in this round)",
                "q3.p2s0.r1 (the brief asks about it, no subquestion did)",
                // Six subjects unasked: the round goes on, up to MAX_BRIEF_FOLLOWUPS.
                "q2 (thin)",
                "q1.p0s1.r1 (the brief asks about it, no subquestion did)",
                "q3 (thin)",
                "q3.p2s1.r1 (the brief asks about it, no subquestion did)",
            ]
        );
        // With no round left, no document is asked about (nor listed as a gap).
        let last = open_followups(BRIEF, &plan, &[], &[], &scored, 0, false);
        assert!(last
            .iter()
            .all(|open| !matches!(open, Open::Asked(s, _) if unread::is_document_followup(&s.id))));
        assert!(unread::is_document_followup("q2.d0.r1"));
        assert!(
            !unread::is_document_followup("q1.p0s2.r1") && !unread::is_document_followup("q1.r1")
        );
    }

    #[test]
    fn a_model_plan_in_its_own_words_is_not_followed_up_by_subject() {
        let plan = [Subq {
            id: "q1".into(),
            // Worded its own way: it asks of the finances and the fleet, not of each
            // subject the parts list (the model's plan must cover every part, not each
            // of their subjects).
            text: "How sound are the company's finances, and how large is its fleet? Who \
                   leads it and what disputes does it face?"
                .into(),
            round: 0,
            parent: None,
            queries: Vec::new(),
        }];
        assert!(unplanned_subjects(BRIEF, &plan, 0, MAX_FOLLOWUPS).is_empty());
    }
}
