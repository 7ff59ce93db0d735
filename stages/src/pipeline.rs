//! The research pipeline as DAG phases.
//!
//! ```text
//! phase "plan":    r0/scout → r0/decompose
//! phase round r:   per subquestion s: r{r}/{s}/subquery → retrieve → fetch → score → extract
//!                  then the joins: r{r}/judge (all claims of the round, ≤ 8 per call)
//!                                → r{r}/conflict → r{r}/deepen
//! (deepen's follow-ups become round r+1, bounded by depth)
//! phase "write":   per section (a top-level subquestion and its follow-ups):
//!                  write/{s} → synthesize (the summary, over the sections' claims)
//!                  and, beside the writers, the depth's last round's conflict → deepen
//!                  (that round deepens no further; the summary waits for its conflicts)
//! ```
//! Each phase is one petgraph DAG run by the executor; fan-out sizes come from the
//! previous phase's outputs, so they are only known once it finished. Every node's key
//! chains its upstream keys across phases. The nodes are declared by their stage
//! modules (`crate::judge::node`, …, with their key material beside their
//! `STAGE_VERSION`); this file keeps only the shape of the phases.

use std::collections::BTreeMap;
use std::sync::Arc;

use deepr_orchestrator::executor::{Dag, DoneNode};
use deepr_orchestrator::{Executor, ExecutorError};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::collect::collect;
use crate::node::{Node, PipelineContext};
use crate::research::*;
use crate::types::*;

fn done_output<T: DeserializeOwned>(
    done: &BTreeMap<String, DoneNode>,
    id: &str,
) -> Result<T, ResearchError> {
    let node = done
        .get(id)
        .ok_or_else(|| ResearchError::Output(format!("node {id} did not finish")))?;
    if node.pending {
        return Err(ResearchError::PreviewEnds(id.to_string()));
    }
    serde_json::from_value(Value::clone(&node.output))
        .map_err(|e| ResearchError::Output(format!("{id}: {e}")))
}

/// Adds a stage's node with its dependencies.
fn add(dag: &mut Dag, (node, deps): Node) -> Result<(), ResearchError> {
    dag.add(node, &deps)?;
    Ok(())
}

/// Only the plan phase (scout and decompose, checkpointed like every phase): the
/// subquestions a run would research, for the user to review (`--plan-only`).
pub async fn plan_research(
    config: &ResearchConfig,
    providers: &ResearchProviders,
    executor: &Executor,
) -> Result<DecomposeOut, ResearchError> {
    let cx = PipelineContext::new(config, providers);
    plan_phase(&cx, executor, &mut BTreeMap::new()).await
}

/// The phase "plan": the scout, then decompose (a reviewed plan needs no scout: the
/// scout only shows the planner what to plan).
async fn plan_phase(
    cx: &PipelineContext,
    executor: &Executor,
    done: &mut BTreeMap<String, DoneNode>,
) -> Result<DecomposeOut, ResearchError> {
    let mut plan = Dag::new();
    if cx.config.user_plan.is_none() {
        add(&mut plan, crate::decompose::scout_node(cx))?;
    }
    add(&mut plan, crate::decompose::node(cx))?;
    run_phase(executor, plan, done).await?;
    done_output(done, node_id::DECOMPOSE)
}

/// Run the whole pipeline. Finished nodes are restored from the executor's store.
pub async fn run_research(
    config: &ResearchConfig,
    providers: &ResearchProviders,
    executor: &Executor,
) -> Result<ResearchResult, ResearchError> {
    let cx = PipelineContext::new(config, providers);
    let mut done: BTreeMap<String, DoneNode> = BTreeMap::new();
    let decomposed = plan_phase(&cx, executor, &mut done).await?;

    // ---- phase: one per round, until deepening asks for no follow-ups
    let mut round_subqs = decomposed.subquestions;
    let mut origin = node_id::DECOMPOSE.to_string();
    let mut earlier_extracts: Vec<String> = Vec::new();
    let mut round = 0u32;
    let mut last_round = None;
    while !round_subqs.is_empty() {
        // The depth's last round deepens no further: its joins (conflict, deepen) run
        // beside the writers, which need neither (only the summary reads conflicts).
        let last = round >= cx.config.depth.limits().extra_rounds;
        let dag = round_dag(&cx, round, &round_subqs, &origin, &earlier_extracts, !last)?;
        run_phase(executor, dag, &mut done).await?;
        if last {
            last_round = Some((round, round_subqs));
            break;
        }
        let deepen_id = node_id::join(round, "deepen");
        let deepened: DeepenOut = done_output(&done, &deepen_id)?;
        earlier_extracts.extend(
            round_subqs
                .iter()
                .map(|s| node_id::step(round, &s.id, "extract")),
        );
        round_subqs = deepened.followups;
        origin = deepen_id;
        round += 1;
    }

    // ---- phase: write (with the last round's joins beside the writers)
    let last_round = last_round.as_ref().map(|(r, subqs)| (*r, subqs.as_slice()));
    let write = write_dag(&cx, &done, last_round)?;
    run_phase(executor, write, &mut done).await?;
    Ok(collect(&done))
}

/// One round: per subquestion subquery → retrieve → fetch, the round's triage (a
/// model run), per subquestion score → extract, then the round's joins judge →
/// conflict → deepen (conflict and deepen only `with_joins`: the last round's run in
/// the write phase). `origin`: the node that wrote the round's subquestions;
/// `earlier_extracts`: the extract nodes of the rounds before.
fn round_dag(
    cx: &PipelineContext,
    round: u32,
    subquestions: &[Subq],
    origin: &str,
    earlier_extracts: &[String],
    with_joins: bool,
) -> Result<Dag, ResearchError> {
    let mut dag = Dag::new();
    let mut fetch_ids = Vec::new();
    for subq in subquestions {
        add(&mut dag, crate::subquery::node(cx, round, subq, origin))?;
        add(&mut dag, crate::retrieve::node(cx, round, &subq.id))?;
        add(&mut dag, crate::fetch::node(cx, round, &subq.id))?;
        fetch_ids.push(node_id::step(round, &subq.id, "fetch"));
    }
    // A model judges which of the round's documents are in scope; offline, score
    // applies the title rule itself.
    let triage = cx.model_extracts().then(|| node_id::join(round, "triage"));
    if triage.is_some() {
        add(&mut dag, crate::triage::node(cx, round, &fetch_ids))?;
    }
    let mut score_ids = Vec::new();
    for subq in subquestions {
        let asked_document = crate::deepen::unread::is_document_followup(&subq.id)
            .then(|| deepr_tasks::brief::asked_subject(&subq.text))
            .flatten();
        add(
            &mut dag,
            crate::score::node(
                cx,
                round,
                &subq.id,
                earlier_extracts,
                triage.as_deref(),
                asked_document,
            ),
        )?;
        score_ids.push(node_id::step(round, &subq.id, "score"));
    }
    let mut extract_ids = Vec::new();
    for (own, subq) in subquestions.iter().enumerate() {
        add(
            &mut dag,
            crate::extract::node(cx, round, own, subq, &score_ids),
        )?;
        extract_ids.push(node_id::step(round, &subq.id, "extract"));
    }
    add(
        &mut dag,
        crate::judge::node(cx, round, &extract_ids, &score_ids),
    )?;
    if with_joins {
        for join in round_joins(cx, round, subquestions) {
            add(&mut dag, join)?;
        }
    }
    Ok(dag)
}

/// A round's joins after its judge: conflict (its judged claims against each other),
/// then deepen (its follow-ups, which read the conflicts).
fn round_joins(cx: &PipelineContext, round: u32, subquestions: &[Subq]) -> [Node; 2] {
    let step = |name: &str| -> Vec<String> {
        subquestions
            .iter()
            .map(|s| node_id::step(round, &s.id, name))
            .collect()
    };
    let (extract_ids, score_ids) = (step("extract"), step("score"));
    [
        crate::conflict::node(cx, round, &extract_ids, &score_ids),
        crate::deepen::node(cx, round, &extract_ids, subquestions),
    ]
}

/// The article: one section per top-level subquestion with usable claims, each in its
/// share of the depth's words, then the summary over them. `last_round`: the round
/// (and its subquestions) whose joins run here, beside the writers; the summary reads
/// its conflicts after the earlier rounds'.
fn write_dag(
    cx: &PipelineContext,
    done: &BTreeMap<String, DoneNode>,
    last_round: Option<(u32, &[Subq])>,
) -> Result<Dag, ResearchError> {
    let gathered = collect(done);
    // What the writers read was gathered from every round: their keys chain each
    // round's deepen node, and the last round's judge when its deepen runs beside them
    // (else a changed last round would restore stale sections).
    let mut deps: Vec<String> = done
        .keys()
        .filter(|id| id.ends_with("/deepen"))
        .cloned()
        .collect();
    if let Some((round, _)) = last_round {
        deps.push(node_id::join(round, "judge"));
    }
    let planned = crate::write::homes::by_subject(
        crate::write::sections(&gathered.subquestions),
        &gathered.claims,
    );
    let claims = Arc::new(crate::write::at_home(gathered.claims, &planned));
    // Each section with the claims it may state; one with none is not written.
    let (sections, stated): (Vec<Vec<Subq>>, Vec<usize>) = planned
        .into_iter()
        .map(|section| {
            let usable = claims
                .iter()
                .filter(|(c, v)| {
                    crate::write::usable(*v) && section.iter().any(|s| s.id == c.subquestion)
                })
                .count();
            (section, usable)
        })
        .filter(|(_, usable)| *usable > 0)
        .unzip();
    let capacity =
        crate::write::sections_capacity(cx.config.depth, stated.len(), cx.brief_with_parts);
    let shares = crate::write::section_shares(cx.config.depth, &stated, capacity);
    let documents: Arc<crate::write::DocumentNames> = Arc::new(
        gathered
            .sources
            .values()
            .map(|s| {
                let doc = &s.doc;
                (
                    doc.content_sha256.clone(),
                    (doc.title.clone(), doc.date.clone()),
                )
            })
            .collect(),
    );
    let mut dag = Dag::new();
    let mut late_conflicts = Vec::new();
    if let Some((round, subquestions)) = last_round {
        for join in round_joins(cx, round, subquestions) {
            add(&mut dag, join)?;
        }
        late_conflicts.push(node_id::join(round, "conflict"));
    }
    let mut section_ids = Vec::new();
    // The subquestions of the sections written before each one, in plan order.
    let mut earlier: Vec<String> = Vec::new();
    for (section, words) in sections.into_iter().zip(shares) {
        section_ids.push(node_id::section(&section[0].id));
        let these: Vec<String> = section.iter().map(|s| s.id.clone()).collect();
        add(
            &mut dag,
            crate::write::node(
                cx,
                section,
                (&claims, &documents),
                (words, earlier.clone()),
                &deps,
            ),
        )?;
        earlier.extend(these);
    }
    let summary = crate::synthesize::node(
        cx,
        (&claims, &documents),
        (gathered.conflicts, &late_conflicts),
        &section_ids,
        &deps,
    );
    add(&mut dag, summary)?;
    Ok(dag)
}

/// Run one phase; a stop (budget, interrupt) becomes [`ResearchError::Stopped`]
/// carrying everything finished so far.
async fn run_phase(
    executor: &Executor,
    dag: Dag,
    done: &mut BTreeMap<String, DoneNode>,
) -> Result<(), ResearchError> {
    match executor.run(dag, done).await {
        Ok(()) => Ok(()),
        Err(ExecutorError::Stopped(reason)) => Err(ResearchError::Stopped {
            reason,
            partial: Box::new(collect(done)),
        }),
        Err(other) => Err(other.into()),
    }
}
