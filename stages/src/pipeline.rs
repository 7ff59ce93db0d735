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
//! ```
//! Each phase is one petgraph DAG run by the executor; fan-out sizes come from the
//! previous phase's outputs, so they are only known once it finished. Every node's key
//! chains its upstream keys across phases.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use deepr_evidence::report::Verdict;
use deepr_orchestrator::executor::{Dag, DoneNode, NodeResult};
use deepr_orchestrator::{Executor, ExecutorError, LedgerEntry, NodeContext, NodeSpec};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::collect::collect;
use crate::llm::prompt_key;
use crate::research::*;
use crate::types::*;

fn read<T: DeserializeOwned>(inputs: &BTreeMap<String, Arc<Value>>, id: &str) -> Result<T, String> {
    let value = inputs
        .get(id)
        .ok_or_else(|| format!("missing input {id}"))?;
    serde_json::from_value(Value::clone(value)).map_err(|e| format!("input {id} unreadable: {e}"))
}

fn done_output<T: DeserializeOwned>(
    done: &BTreeMap<String, DoneNode>,
    id: &str,
) -> Result<T, ResearchError> {
    let node = done
        .get(id)
        .ok_or_else(|| ResearchError::Output(format!("node {id} did not finish")))?;
    if node.pending {
        return Err(ResearchError::PlanEnds(id.to_string()));
    }
    serde_json::from_value(Value::clone(&node.output))
        .map_err(|e| ResearchError::Output(format!("{id}: {e}")))
}

fn finish<T: Serialize>(output: T, calls: Vec<LedgerEntry>) -> Result<NodeResult, String> {
    Ok(NodeResult {
        output: serde_json::to_value(output).map_err(|e| e.to_string())?,
        calls,
    })
}

fn spec<F, Fut>(id: String, stage: &str, key_material: Value, f: F) -> NodeSpec
where
    F: FnOnce(NodeContext) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<NodeResult, String>> + Send + 'static,
{
    NodeSpec {
        id,
        stage: stage.to_string(),
        key_material,
        run: Box::new(move |ctx| Box::pin(f(ctx))),
    }
}

/// Run the whole pipeline. Finished nodes are restored from the executor's store.
pub async fn run_research(
    config: &ResearchConfig,
    providers: &ResearchProviders,
    executor: &Executor,
) -> Result<ResearchResult, ResearchError> {
    let mut done: BTreeMap<String, DoneNode> = BTreeMap::new();
    let topic = config.topic.clone();
    let depth = config.depth.as_str().to_string();
    let search_names: Vec<String> = providers.search.iter().map(|p| p.name()).collect();
    let io = config.io_concurrency;

    // ---- phase: plan
    let mut plan = Dag::new();
    {
        let p = providers.clone();
        let t = topic.clone();
        plan.add(
            spec(node_id::SCOUT.into(), "scout", json!({"v": crate::decompose::STAGE_VERSION, "topic": topic, "search": search_names, "fp": config.search_fingerprint}), move |ctx| async move {
                let (out, calls) = crate::decompose::scout(&ctx.node_id, &t, &p.search, p.fetcher.as_ref(), p.archive.as_ref(), io, p.clock.as_ref()).await;
                finish(out, calls)
            }),
            &[],
        )?;
        let p = providers.clone();
        let (t, d) = (topic.clone(), depth.clone());
        plan.add(
            spec(node_id::DECOMPOSE.into(), "decompose", json!({"v": crate::decompose::STAGE_VERSION, "depth": depth, "llm": prompt_key(&providers.prompts.decompose, providers.strong_models())}), move |ctx| async move {
                let scout: ScoutOut = read(&ctx.inputs, node_id::SCOUT)?;
                let (out, calls) = crate::decompose::run(&ctx.node_id, &p.prompts.decompose, &t, &d, &scout, p.strong_models()).await;
                finish(out, calls)
            }),
            &[node_id::SCOUT.to_string()],
        )?;
    }
    run_phase(executor, plan, &mut done).await?;
    let decomposed: DecomposeOut = done_output(&done, node_id::DECOMPOSE)?;
    let mut round_subqs = decomposed.subquestions;
    let mut origin = node_id::DECOMPOSE.to_string();
    let mut extract_ids_so_far: Vec<String> = Vec::new();
    let mut round = 0u32;

    while !round_subqs.is_empty() {
        let mut dag = Dag::new();
        let mut extract_ids = Vec::new();
        let mut score_ids = Vec::new();
        for subq in &round_subqs {
            let (sq_id, rt_id, ft_id, sc_id) = (
                node_id::step(round, &subq.id, "subquery"),
                node_id::step(round, &subq.id, "retrieve"),
                node_id::step(round, &subq.id, "fetch"),
                node_id::step(round, &subq.id, "score"),
            );
            let p = providers.clone();
            let (t, s) = (topic.clone(), subq.clone());
            dag.add(
                spec(sq_id.clone(), "subquery", json!({"v": crate::subquery::STAGE_VERSION, "subq": subq, "llm": prompt_key(&providers.prompts.subquery, providers.cheap_models())}), move |ctx| async move {
                    let (out, calls) = crate::subquery::run(&ctx.node_id, &p.prompts.subquery, &t, &s, p.cheap_models()).await;
                    finish(out, calls)
                }),
                std::slice::from_ref(&origin),
            )?;
            let p = providers.clone();
            let sq = sq_id.clone();
            let t = topic.clone();
            dag.add(
                spec(rt_id.clone(), "retrieve", json!({"v": crate::retrieve::STAGE_VERSION, "search": search_names, "fp": config.search_fingerprint, "k": crate::retrieve::RRF_K}), move |ctx| async move {
                    let plan: SubqueryOut = read(&ctx.inputs, &sq)?;
                    let queries = crate::retrieve::with_topic(&plan.queries, &t);
                    let (out, calls) = crate::retrieve::search_all(&ctx.node_id, "retrieve", &queries, &p.search, crate::retrieve::HITS_PER_QUERY, io, p.clock.as_ref()).await;
                    finish(out, calls)
                }),
                std::slice::from_ref(&sq_id),
            )?;
            let p = providers.clone();
            let rt = rt_id.clone();
            dag.add(
                spec(ft_id.clone(), "fetch", json!({"v": crate::fetch::STAGE_VERSION, "docs": crate::fetch::DOCS_PER_SUBQUESTION}), move |ctx| async move {
                    let retrieved: RetrieveOut = read(&ctx.inputs, &rt)?;
                    let (out, calls) = crate::fetch::run(&ctx.node_id, &retrieved, p.fetcher.as_ref(), io, p.clock.as_ref()).await;
                    finish(out, calls)
                }),
                std::slice::from_ref(&rt_id),
            )?;
            let p = providers.clone();
            let (ft, sq, t) = (ft_id.clone(), sq_id.clone(), topic.clone());
            let previous_extracts = extract_ids_so_far.clone();
            let keep = crate::score::MAX_CANDIDATES.max(config.model_pool);
            let mut score_deps = vec![ft_id.clone(), sq_id.clone()];
            score_deps.extend(previous_extracts.iter().cloned());
            dag.add(
                spec(
                    sc_id.clone(),
                    "score",
                    crate::score::node_key(providers.embedder.as_deref(), keep),
                    move |ctx| async move {
                        let fetched: FetchOut = read(&ctx.inputs, &ft)?;
                        let plan: SubqueryOut = read(&ctx.inputs, &sq)?;
                        let mut exclude = BTreeSet::new();
                        for id in &previous_extracts {
                            let extracted: ExtractOut = read(&ctx.inputs, id)?;
                            exclude.extend(extracted.claims.into_iter().flat_map(|c| c.citations));
                        }
                        let out = crate::score::run(
                            &fetched,
                            &plan.ranking_question,
                            &t,
                            &plan.queries,
                            &exclude,
                            p.archive.as_ref(),
                            p.embedder.as_deref(),
                            keep,
                        )
                        .await;
                        finish(out, vec![])
                    },
                ),
                &score_deps,
            )?;
            score_ids.push(sc_id);
        }

        for (own, subq) in round_subqs.iter().enumerate() {
            let ex_id = node_id::step(round, &subq.id, "extract");
            let p = providers.clone();
            let free = config.strategy == Strategy::FreeQuote;
            let sc_all = if free {
                vec![score_ids[own].clone()]
            } else {
                score_ids.clone()
            };
            let (s, d, deps) = (subq.clone(), depth.clone(), sc_all.clone());
            // Who reads the candidates decides how many: see `extract::candidates_for`.
            let model_reads = !providers
                .cheap
                .model_id_for("extract")
                .starts_with("offline:");
            let pool = config.model_pool;
            let extract_prompt = if free {
                &providers.prompts.extract_free
            } else {
                &providers.prompts.extract
            };
            dag.add(
                spec(ex_id.clone(), "extract", json!({"v": crate::extract::STAGE_VERSION, "max": crate::extract::max_claims(&depth), "free": free, "pool": if model_reads { pool } else { 0 }, "llm": prompt_key(extract_prompt, providers.cheap_models())}), move |ctx| async move {
                    // Each sentence goes to the one subquestion of the round that ranks it
                    // best (free-quote reads whole pages, not candidates: its own score only).
                    let mut round_scores = sc_all.iter().map(|id| read(&ctx.inputs, id)).collect::<Result<Vec<ScoreOut>, String>>()?;
                    let scored = if free { round_scores.swap_remove(0) } else { crate::extract::candidates_for(&round_scores, own, model_reads, pool) };
                    let max = crate::extract::max_claims(&d);
                    let (out, calls) = if free {
                        crate::extract::run_free(&ctx.node_id, &p.prompts.extract_free, &s, &scored, max, p.archive.as_ref(), p.cheap_models()).await
                    } else {
                        crate::extract::run(&ctx.node_id, &p.prompts.extract, &s, &scored, max, p.archive.as_ref(), p.cheap_models()).await
                    };
                    finish(out, calls)
                }),
                &deps,
            )?;
            extract_ids.push(ex_id);
        }

        let judge_id = node_id::join(round, "judge");
        let p = providers.clone();
        let strategy = config.strategy;
        let ex = extract_ids.clone();
        dag.add(
            spec(judge_id.clone(), "judge", json!({"v": crate::judge::STAGE_VERSION, "strategy": strategy, "batch": crate::judge::BATCH, "llm": prompt_key(if strategy == Strategy::PerClaim { &providers.prompts.judge_vote } else { &providers.prompts.judge }, providers.cheap_models())}), move |ctx| async move {
                let mut claims = Vec::new();
                for id in &ex {
                    let extracted: ExtractOut = read(&ctx.inputs, id)?;
                    claims.extend(extracted.claims);
                }
                if strategy == Strategy::NoJudge {
                    let verdicts = claims.iter().map(|c| (c.id.clone(), Verdict::Unjudged)).collect();
                    return finish(JudgeOut { verdicts, calls: 0, degraded: None }, vec![]);
                }
                let (out, calls) = if strategy == Strategy::PerClaim {
                    crate::judge::run_votes(&ctx.node_id, &p.prompts.judge_vote, &claims, p.archive.as_ref(), p.cheap_models(), io).await
                } else {
                    crate::judge::run(&ctx.node_id, &p.prompts.judge, &claims, p.archive.as_ref(), p.cheap_models(), io).await
                };
                finish(out, calls)
            }),
            &extract_ids,
        )?;

        let conflict_id = node_id::join(round, "conflict");
        let p = providers.clone();
        let (ex, sc, jd) = (extract_ids.clone(), score_ids.clone(), judge_id.clone());
        let mut deps = vec![judge_id.clone()];
        deps.extend(extract_ids.iter().cloned());
        deps.extend(score_ids.iter().cloned());
        dag.add(
            spec(conflict_id.clone(), "conflict", json!({"v": crate::conflict::STAGE_VERSION, "llm": prompt_key(&providers.prompts.conflict, providers.cheap_models())}), move |ctx| async move {
                let judged: JudgeOut = read(&ctx.inputs, &jd)?;
                let verdicts: BTreeMap<String, Verdict> = judged.verdicts.into_iter().collect();
                let mut titles = BTreeMap::new();
                for id in &sc {
                    let scored: ScoreOut = read(&ctx.inputs, id)?;
                    titles.extend(scored.sources.into_iter().map(|s| (s.doc.content_sha256, s.doc.title)));
                }
                let mut claims = Vec::new();
                for id in &ex {
                    let extracted: ExtractOut = read(&ctx.inputs, id)?;
                    for claim in extracted.claims {
                        let verdict = verdicts.get(&claim.id).copied().unwrap_or(Verdict::Unjudged);
                        let title = claim.citations.first().and_then(|c| titles.get(&c.content_sha256)).cloned().unwrap_or_default();
                        claims.push((claim, verdict, title));
                    }
                }
                let (out, calls) = crate::conflict::run(&ctx.node_id, &p.prompts.conflict, &claims, p.cheap_models()).await;
                finish(out, calls)
            }),
            &deps,
        )?;

        let deepen_id = node_id::join(round, "deepen");
        let p = providers.clone();
        let (ex, jd, cf, t, d, subqs) = (
            extract_ids.clone(),
            judge_id.clone(),
            conflict_id.clone(),
            topic.clone(),
            depth.clone(),
            round_subqs.clone(),
        );
        let mut deps = vec![judge_id.clone(), conflict_id.clone()];
        deps.extend(extract_ids.iter().cloned());
        dag.add(
            spec(deepen_id.clone(), "deepen", json!({"v": crate::deepen::STAGE_VERSION, "depth": depth, "round": round, "llm": prompt_key(&providers.prompts.deepen, providers.cheap_models())}), move |ctx| async move {
                let judged: JudgeOut = read(&ctx.inputs, &jd)?;
                let verdicts: BTreeMap<String, Verdict> = judged.verdicts.into_iter().collect();
                let conflicts: ConflictOut = read(&ctx.inputs, &cf)?;
                let mut claims = Vec::new();
                for id in &ex {
                    let extracted: ExtractOut = read(&ctx.inputs, id)?;
                    claims.extend(extracted.claims.into_iter().map(|c| {
                        let v = verdicts.get(&c.id).copied().unwrap_or(Verdict::Unjudged);
                        (c, v)
                    }));
                }
                let (out, calls) = crate::deepen::run(&ctx.node_id, &p.prompts.deepen, &t, &d, round, &subqs, &claims, &conflicts.conflicts, p.cheap_models()).await;
                finish(out, calls)
            }),
            &deps,
        )?;

        run_phase(executor, dag, &mut done).await?;
        let deepened: DeepenOut = done_output(&done, &deepen_id)?;
        extract_ids_so_far.extend(extract_ids);
        round_subqs = deepened.followups;
        origin = deepen_id;
        round += 1;
    }

    // ---- phase: write
    let gathered = collect(&done);
    let mut write = Dag::new();
    let deps: Vec<String> = done
        .keys()
        .filter(|id| id.ends_with("/deepen"))
        .cloned()
        .collect();
    let claims = Arc::new(gathered.claims);
    let mut section_ids = Vec::new();
    let sections: Vec<Vec<Subq>> = crate::write::sections(&gathered.subquestions)
        .into_iter()
        .filter(|section| {
            claims.iter().any(|(c, v)| {
                crate::write::usable(*v) && section.iter().any(|s| s.id == c.subquestion)
            })
        })
        .collect();
    let words = crate::write::section_words(config.depth, sections.len());
    for section in sections {
        let id = node_id::section(&section[0].id);
        section_ids.push(id.clone());
        let (p, t, cl) = (providers.clone(), topic.clone(), claims.clone());
        write.add(
            spec(id, "write", json!({"v": crate::write::STAGE_VERSION, "prose": deepr_evidence::prose::VERSION, "words": words, "llm": prompt_key(&providers.prompts.write_section, providers.strong_models())}), move |ctx| async move {
                let brief = crate::write::Brief { topic: &t, words };
                let (out, calls) = crate::write::run(&ctx.node_id, &p.prompts.write_section, brief, &section, &cl, p.archive.as_ref(), p.strong_models()).await;
                finish(out, calls)
            }),
            &deps,
        )?;
    }
    let (p, t, cl, conflicts, ids) = (
        providers.clone(),
        topic.clone(),
        claims.clone(),
        gathered.conflicts,
        section_ids.clone(),
    );
    let mut synth_deps = deps.clone();
    synth_deps.extend(section_ids);
    write.add(
        spec(node_id::SYNTHESIZE.into(), "synthesize", json!({"v": crate::synthesize::STAGE_VERSION, "prose": deepr_evidence::prose::VERSION, "llm": prompt_key(&providers.prompts.synthesize, providers.strong_models())}), move |ctx| async move {
            let mut sections = Vec::new();
            for id in &ids {
                sections.push(read::<SectionOut>(&ctx.inputs, id)?);
            }
            let written = crate::synthesize::Written { topic: &t, sections: &sections, claims: &cl, conflicts: &conflicts };
            let (out, calls) = crate::synthesize::run(&ctx.node_id, &p.prompts.synthesize, written, p.archive.as_ref(), p.strong_models()).await;
            finish(out, calls)
        }),
        &synth_deps,
    )?;
    run_phase(executor, write, &mut done).await?;
    Ok(collect(&done))
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
