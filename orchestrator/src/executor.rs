//! The DAG executor.
//!
//! A phase of the research pipeline is a petgraph DAG of [`NodeSpec`]s. The executor
//! starts every node whose dependencies are done (up to a concurrency cap), and for
//! each node:
//! 1. computes its **key** — blake3 over the stage name, the node's own key material
//!    (stage version, prompt id + hash, model, config slice) and its dependencies'
//!    keys — so a change anywhere upstream changes every key downstream;
//! 2. if the checkpoint store holds a record for the node with that key, restores the
//!    output without running anything (its calls go to the ledger as cache hits);
//! 3. otherwise runs it, then stores output + done-marker atomically and flushes
//!    before any dependant starts.
//!
//! Outputs are collected in a `BTreeMap` by node ID, never in completion order, so the
//! result of a phase is independent of timing.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use petgraph::graph::NodeIndex;
use serde_json::Value;
use tokio::task::JoinSet;

use crate::budget::Budget;
use crate::ledger::Unfinished;
use crate::ledger::{LedgerEntry, UsageLedger};
use crate::schedule::Schedule;
use crate::store::{CheckpointStore, NodeRecord};

pub use crate::dag::{
    node_key, Dag, DoneNode, NodeContext, NodeFn, NodeFuture, NodeResult, NodeSpec,
};
pub use crate::error::{ExecutorError, StopReason};
pub use crate::preview::{explain_drift, PreviewAction, PreviewStep};

/// Observer of node progress (progress bars, logs). Must not influence results.
pub trait Progress: Send + Sync {
    fn planned(&self, _stage: &str, _nodes: usize) {}
    fn started(&self, _stage: &str, _node_id: &str) {}
    fn finished(&self, _stage: &str, _node_id: &str, _restored: bool, _tokens: u64) {}
    /// A node's output, as soon as it is checkpointed (or restored): lets a display
    /// show findings before the run ends. Called before [`Progress::finished`].
    fn output(&self, _stage: &str, _node_id: &str, _output: &Value) {}
}

/// A progress observer that ignores everything.
pub struct NoProgress;
impl Progress for NoProgress {}

/// Runs DAG phases against a checkpoint store.
pub struct Executor {
    pub store: Arc<dyn CheckpointStore>,
    pub ledger: Arc<UsageLedger>,
    pub progress: Arc<dyn Progress>,
    pub concurrency: usize,
    /// Set to stop starting new nodes (Ctrl-C, budgets); running nodes finish.
    pub stop: Arc<AtomicBool>,
    /// The run's limits. A node that met a refused call is not checkpointed and the
    /// executor stops starting nodes.
    pub budget: Arc<Budget>,
    /// Preview mode (`resume --dry-run`, and the preview every resume shows first):
    /// restore what matches, run nothing, and record what would happen to each node.
    pub preview: Option<Arc<std::sync::Mutex<Vec<PreviewStep>>>>,
    /// `resume --retry-degraded`: a checkpointed node whose model answer was unusable
    /// (its output says `degraded`) runs again, and so does every node after it.
    pub retry_degraded: bool,
}

tokio::task_local! {
    /// Set while a step that `--retry-degraded` recomputes runs: its model calls ask
    /// the model again instead of being served the unusable answers cached the first
    /// time (`LlmRequest::fresh`).
    static RETRYING: bool;
}

/// Is the current task a step recomputed by `--retry-degraded`?
pub fn retrying() -> bool {
    RETRYING.try_with(|r| *r).unwrap_or(false)
}

/// Did this node's output fall back to the heuristic (a `degraded` note)?
fn is_degraded(output: &Value) -> bool {
    output.get("degraded").is_some_and(|d| !d.is_null())
}

type Finished = (NodeIndex, String, String, Result<NodeResult, String>);

impl Executor {
    fn note(&self, node: &str, stage: &str, action: PreviewAction) {
        if let Some(preview) = &self.preview {
            if let Ok(mut steps) = preview.lock() {
                steps.push(PreviewStep {
                    node: node.to_string(),
                    stage: stage.to_string(),
                    action,
                });
            }
        }
    }

    /// Run every node of `dag`, adding finished nodes to `done`.
    pub async fn run(
        &self,
        mut dag: Dag,
        done: &mut BTreeMap<String, DoneNode>,
    ) -> Result<(), ExecutorError> {
        check(&dag, done)?;
        let mut planned: BTreeMap<String, usize> = BTreeMap::new();
        for spec in dag.graph.node_weights().flatten() {
            *planned.entry(spec.stage.clone()).or_default() += 1;
        }
        for (stage, count) in &planned {
            self.progress.planned(stage, *count);
        }
        let mut schedule = Schedule::new(&dag);
        let mut running: JoinSet<Finished> = JoinSet::new();
        // Which node each task runs, so a panic names its node.
        let mut tasks: BTreeMap<tokio::task::Id, String> = BTreeMap::new();
        let cap = self.concurrency.max(1);
        // The most important reason a node was left unfinished, if one was.
        let mut unfinished: Option<Unfinished> = None;
        loop {
            while running.len() < cap && !self.stop.load(Ordering::SeqCst) {
                let Some(index) = schedule.pop() else {
                    break;
                };
                let Some(spec) = dag.graph[index].take() else {
                    continue;
                };
                match self.start(spec, index, &mut dag, done)? {
                    Started::Settled => schedule.release(&dag, index),
                    Started::Spawned(task) => {
                        let (id, node) = (task.node.clone(), task.index);
                        let handle = running.spawn(RETRYING.scope(task.fresh, async move {
                            (node, task.node, task.stage, task.future.await)
                        }));
                        tasks.insert(handle.id(), id);
                    }
                }
            }
            let Some(joined) = running.join_next().await else {
                break;
            };
            let (index, id, stage, result) = joined.map_err(|e| ExecutorError::Node {
                node: tasks.get(&e.id()).cloned().unwrap_or_default(),
                message: format!("the step panicked or was cancelled: {e}"),
            })?;
            let result = result.map_err(|message| ExecutorError::Node {
                node: id.clone(),
                message,
            })?;
            let keys = dag.keys.remove(&index).unwrap_or_default();
            if let Some(why) = self.unfinished_call(&result) {
                if unfinished.as_ref().is_none_or(|u| why.rank() < u.rank()) {
                    unfinished = Some(why);
                }
                continue;
            }
            self.checkpoint(id, stage, keys, result, done).await?;
            schedule.release(&dag, index);
        }
        self.stopped(&dag, unfinished)
    }

    /// Starts a ready node: restores it when the store holds its key, notes it in preview
    /// mode, else hands back its future to spawn.
    fn start(
        &self,
        spec: NodeSpec,
        index: NodeIndex,
        dag: &mut Dag,
        done: &mut BTreeMap<String, DoneNode>,
    ) -> Result<Started, ExecutorError> {
        let dep_ids = dag.deps.get(&index).cloned().unwrap_or_default();
        let mut dep_keys = Vec::with_capacity(dep_ids.len());
        let mut inputs = BTreeMap::new();
        for dep in &dep_ids {
            let Some(node) = done.get(dep) else {
                return Err(ExecutorError::UnknownDependency {
                    node: spec.id,
                    dependency: dep.clone(),
                });
            };
            dep_keys.push((dep.as_str(), node.key.as_str()));
            inputs.insert(dep.clone(), Arc::clone(&node.output));
        }
        let key = node_key(&spec.stage, &spec.key_material, &dep_keys);
        self.progress.started(&spec.stage, &spec.id);
        // With --retry-degraded, a degraded node and everything after one that ran
        // again are recomputed even though their keys match.
        let retried_upstream = self.retry_degraded
            && dep_ids
                .iter()
                .any(|d| done.get(d).is_some_and(|n| n.pending || !n.restored));
        let stored = self.store.get_node(&spec.id)?;
        let retry = stored.as_ref().is_some_and(|record| {
            record.key == key
                && (retried_upstream || (self.retry_degraded && is_degraded(&record.output)))
        });
        // Only a step whose own answer degraded asks the model afresh; the steps after
        // it are recomputed from their new inputs (and the cache).
        let fresh = self.retry_degraded
            && stored
                .as_ref()
                .is_some_and(|r| r.key == key && is_degraded(&r.output));
        if let Some(record) = stored.filter(|r| !retry && r.key == key) {
            self.restore(&spec, key, record, done);
            return Ok(Started::Settled);
        }
        if self.preview.is_some() {
            self.preview_node(&spec, key, &dep_ids, retry, done)?;
            return Ok(Started::Settled);
        }
        let context = NodeContext {
            node_id: spec.id.clone(),
            key: key.clone(),
            inputs,
        };
        let future = (spec.run)(context);
        dag.keys.insert(index, (key, spec.key_material, dep_ids));
        Ok(Started::Spawned(Spawn {
            index,
            node: spec.id,
            stage: spec.stage,
            fresh,
            future,
        }))
    }

    /// A checkpointed node whose key matches: its output and calls, run again by no one.
    fn restore(
        &self,
        spec: &NodeSpec,
        key: String,
        record: NodeRecord,
        done: &mut BTreeMap<String, DoneNode>,
    ) {
        let tokens = record
            .calls
            .iter()
            .map(|c| c.prompt_tokens + c.completion_tokens)
            .sum();
        for call in record.calls {
            self.ledger.record(LedgerEntry {
                restored: true,
                ..call
            });
        }
        self.progress.output(&spec.stage, &spec.id, &record.output);
        self.progress.finished(&spec.stage, &spec.id, true, tokens);
        done.insert(
            spec.id.clone(),
            DoneNode {
                key,
                stage: spec.stage.clone(),
                output: Arc::new(record.output),
                restored: true,
                pending: false,
            },
        );
        self.note(&spec.id, &spec.stage, PreviewAction::Restore);
    }

    /// Preview mode: what would happen to a node that is not restored, and why.
    fn preview_node(
        &self,
        spec: &NodeSpec,
        key: String,
        dep_ids: &[String],
        retry: bool,
        done: &mut BTreeMap<String, DoneNode>,
    ) -> Result<(), ExecutorError> {
        let changed: Vec<String> = dep_ids
            .iter()
            .filter(|d| done.get(*d).is_some_and(|n| n.pending || !n.restored))
            .cloned()
            .collect();
        let action = match self.store.get_node(&spec.id)? {
            Some(record) if retry && is_degraded(&record.output) => PreviewAction::Recompute(
                "its model answer was unusable; retried (--retry-degraded)".into(),
            ),
            Some(_) if retry => PreviewAction::Recompute(format!(
                "a step before it is retried: {}",
                changed.join(", ")
            )),
            Some(record) => PreviewAction::Recompute(explain_drift(
                &record.key_material,
                &spec.key_material,
                &changed,
            )),
            None => PreviewAction::Run,
        };
        self.note(&spec.id, &spec.stage, action);
        done.insert(
            spec.id.clone(),
            DoneNode {
                key,
                stage: spec.stage.clone(),
                output: Arc::new(Value::Null),
                restored: false,
                pending: true,
            },
        );
        Ok(())
    }

    /// Why a finished node's output must not be checkpointed: it rests on a call that
    /// was refused or never answered. It runs again when the run resumes; the executor
    /// stops starting nodes, and the calls that did complete stay in the ledger (and
    /// in the response cache).
    fn unfinished_call(&self, result: &NodeResult) -> Option<Unfinished> {
        let why = result
            .calls
            .iter()
            .filter_map(|c| c.unfinished.clone())
            .min_by_key(Unfinished::rank)?;
        self.stop.store(true, Ordering::SeqCst);
        for call in result.calls.iter().filter(|c| c.unfinished.is_none()) {
            self.ledger.record(call.clone());
        }
        Some(why)
    }

    /// Stores a finished node (output and done-marker in one flushed batch) before any
    /// dependant starts.
    async fn checkpoint(
        &self,
        id: String,
        stage: String,
        (key, key_material, deps): (String, Value, Vec<String>),
        result: NodeResult,
        done: &mut BTreeMap<String, DoneNode>,
    ) -> Result<(), ExecutorError> {
        let record = NodeRecord {
            key: key.clone(),
            stage: stage.clone(),
            key_material,
            deps,
            output: result.output,
            calls: result.calls,
        };
        self.store.put_node(&id, &record).await?;
        let tokens = record
            .calls
            .iter()
            .map(|c| c.prompt_tokens + c.completion_tokens)
            .sum();
        for call in &record.calls {
            self.ledger.record(call.clone());
        }
        self.progress.output(&stage, &id, &record.output);
        self.progress.finished(&stage, &id, false, tokens);
        done.insert(
            id,
            DoneNode {
                key,
                stage,
                output: Arc::new(record.output),
                restored: false,
                pending: false,
            },
        );
        Ok(())
    }

    /// How the phase ended once nothing runs: a node left unfinished by a refused or
    /// unanswered call, nodes never started (a budget or an interrupt), or done.
    fn stopped(&self, dag: &Dag, unfinished: Option<Unfinished>) -> Result<(), ExecutorError> {
        if let Some(why) = unfinished {
            return Err(ExecutorError::Stopped(StopReason::Unfinished(why)));
        }
        if dag.graph.node_weights().any(Option::is_some) {
            let reason = match self.budget.exhausted() {
                Some(reason) => StopReason::Unfinished(Unfinished::Budget { reason }),
                None => StopReason::Interrupted,
            };
            return Err(ExecutorError::Stopped(reason));
        }
        Ok(())
    }
}

/// What starting a ready node led to.
enum Started {
    /// Restored from the store, or noted in preview mode: its dependants may start.
    Settled,
    /// It runs: spawn its future.
    Spawned(Spawn),
}

/// A node to spawn.
struct Spawn {
    index: NodeIndex,
    node: String,
    stage: String,
    /// Recomputed by `--retry-degraded`: its model calls ask afresh.
    fresh: bool,
    future: NodeFuture,
}

/// The DAG is acyclic and every dependency is a node of it or already done.
fn check(dag: &Dag, done: &BTreeMap<String, DoneNode>) -> Result<(), ExecutorError> {
    if petgraph::algo::is_cyclic_directed(&dag.graph) {
        return Err(ExecutorError::Cycle);
    }
    for (index, deps) in &dag.deps {
        for dep in deps {
            if !dag.by_id.contains_key(dep) && !done.contains_key(dep) {
                let node = dag.graph[*index]
                    .as_ref()
                    .map(|s| s.id.clone())
                    .unwrap_or_default();
                return Err(ExecutorError::UnknownDependency {
                    node,
                    dependency: dep.clone(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;

    use async_trait::async_trait;
    use serde_json::json;

    use super::*;
    use crate::store::StoreError;

    /// An in-memory checkpoint store for executor tests.
    #[derive(Default)]
    struct MemoryStore {
        nodes: Mutex<BTreeMap<String, NodeRecord>>,
    }

    #[async_trait]
    impl CheckpointStore for MemoryStore {
        fn get_node(&self, node_id: &str) -> Result<Option<NodeRecord>, StoreError> {
            Ok(self
                .nodes
                .lock()
                .map_err(|e| StoreError::Io(e.to_string()))?
                .get(node_id)
                .cloned())
        }
        async fn put_node(&self, node_id: &str, record: &NodeRecord) -> Result<(), StoreError> {
            self.nodes
                .lock()
                .map_err(|e| StoreError::Io(e.to_string()))?
                .insert(node_id.into(), record.clone());
            Ok(())
        }
        async fn put_meta(&self, _: &str, _: &Value) -> Result<(), StoreError> {
            Ok(())
        }
        fn get_meta(&self, _: &str) -> Result<Option<Value>, StoreError> {
            Ok(None)
        }
        fn finished_nodes(&self) -> Result<Vec<String>, StoreError> {
            Ok(self
                .nodes
                .lock()
                .map_err(|e| StoreError::Io(e.to_string()))?
                .keys()
                .cloned()
                .collect())
        }
    }

    fn executor(store: Arc<MemoryStore>) -> Executor {
        Executor {
            store,
            ledger: Arc::new(UsageLedger::default()),
            progress: Arc::new(NoProgress),
            concurrency: 3,
            stop: Arc::new(AtomicBool::new(false)),
            budget: Budget::unlimited(),
            preview: None,
            retry_degraded: false,
        }
    }

    /// a → (b, c) → d; each node's output is the sum of its inputs plus its own value,
    /// and every run is counted.
    fn diamond(material: Value, runs: &Arc<AtomicUsize>) -> Dag {
        let mut dag = Dag::new();
        let node = |id: &str, own: i64, deps: Vec<&'static str>| {
            let runs = Arc::clone(runs);
            NodeSpec {
                id: id.into(),
                stage: "test".into(),
                key_material: if id == "c" {
                    material.clone()
                } else {
                    json!(own)
                },
                run: Box::new(move |ctx: NodeContext| {
                    Box::pin(async move {
                        runs.fetch_add(1, Ordering::SeqCst);
                        let sum: i64 = deps
                            .iter()
                            .map(|d| ctx.inputs[*d].as_i64().unwrap_or(0))
                            .sum();
                        Ok(NodeResult {
                            output: json!(sum + own),
                            calls: vec![],
                        })
                    })
                }),
            }
        };
        for (id, own, deps) in [
            ("a", 1, vec![]),
            ("b", 10, vec!["a"]),
            ("c", 100, vec!["a"]),
            ("d", 1000, vec!["b", "c"]),
        ] {
            let dep_ids: Vec<String> = deps.iter().map(|d| d.to_string()).collect();
            dag.add(node(id, own, deps), &dep_ids).expect("add");
        }
        dag
    }

    #[tokio::test]
    async fn runs_in_dependency_order_and_restores_matching_keys() {
        let store = Arc::new(MemoryStore::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let mut done = BTreeMap::new();
        executor(Arc::clone(&store))
            .run(diamond(json!("v1"), &runs), &mut done)
            .await
            .expect("run");
        assert_eq!(*done["d"].output, json!(1 + 10 + 1 + 100 + 1000));
        assert_eq!(runs.load(Ordering::SeqCst), 4);
        assert_eq!(store.finished_nodes().expect("list"), ["a", "b", "c", "d"]);

        // Same inputs: every node restored, nothing runs again.
        let mut again = BTreeMap::new();
        executor(Arc::clone(&store))
            .run(diamond(json!("v1"), &runs), &mut again)
            .await
            .expect("rerun");
        assert_eq!(runs.load(Ordering::SeqCst), 4, "no node ran twice");
        assert!(again.values().all(|n| n.restored));
        assert_eq!(again["d"].output, done["d"].output);

        // Preview mode shows the drift before anything runs.
        let preview = Arc::new(Mutex::new(Vec::new()));
        let previewer = Executor {
            preview: Some(Arc::clone(&preview)),
            retry_degraded: false,
            ..executor(Arc::clone(&store))
        };
        previewer
            .run(diamond(json!("v2"), &runs), &mut BTreeMap::new())
            .await
            .expect("preview");
        assert_eq!(runs.load(Ordering::SeqCst), 4, "a preview runs nothing");
        let steps = preview.lock().expect("preview").clone();
        let actions: Vec<(&str, &PreviewAction)> =
            steps.iter().map(|s| (s.node.as_str(), &s.action)).collect();
        assert_eq!(
            actions,
            [
                ("a", &PreviewAction::Restore),
                ("b", &PreviewAction::Restore),
                ("c", &PreviewAction::Recompute("its inputs changed".into())),
                (
                    "d",
                    &PreviewAction::Recompute("upstream c recompute(s)".into())
                ),
            ]
        );

        // Change c's key material: exactly c and its dependant d recompute.
        let mut changed = BTreeMap::new();
        executor(Arc::clone(&store))
            .run(diamond(json!("v2"), &runs), &mut changed)
            .await
            .expect("drift");
        assert_eq!(runs.load(Ordering::SeqCst), 6);
        let recomputed: Vec<&str> = changed
            .iter()
            .filter(|(_, n)| !n.restored)
            .map(|(id, _)| id.as_str())
            .collect();
        assert_eq!(recomputed, ["c", "d"]);
    }

    #[test]
    fn drift_is_explained_by_what_changed() {
        let old =
            json!({"v": 1, "llm": {"prompt": "extract", "hash": "a", "model": "m"}, "max": 5});
        let prompt =
            json!({"v": 1, "llm": {"prompt": "extract", "hash": "b", "model": "m"}, "max": 5});
        assert_eq!(explain_drift(&old, &prompt, &[]), "prompt extract changed");
        let model =
            json!({"v": 1, "llm": {"prompt": "extract", "hash": "a", "model": "n"}, "max": 5});
        assert_eq!(
            explain_drift(&old, &model, &[]),
            "model changed (\"m\" → \"n\")"
        );
        let version =
            json!({"v": 2, "llm": {"prompt": "extract", "hash": "a", "model": "m"}, "max": 6});
        assert_eq!(
            explain_drift(&old, &version, &[]),
            "setting max changed; stage code version changed (1 → 2)"
        );
        assert_eq!(
            explain_drift(&old, &old, &["r0/q1/score".into()]),
            "upstream r0/q1/score recompute(s)"
        );
    }

    #[tokio::test]
    async fn unknown_dependencies_duplicates_and_stops_are_errors() {
        let store = Arc::new(MemoryStore::default());
        let ok = || NodeSpec {
            id: "x".into(),
            stage: "test".into(),
            key_material: json!(0),
            run: Box::new(|_| {
                Box::pin(async {
                    Ok(NodeResult {
                        output: json!(0),
                        calls: vec![],
                    })
                })
            }),
        };
        let mut dag = Dag::new();
        dag.add(ok(), &["missing".to_string()]).expect("add");
        let result = executor(Arc::clone(&store))
            .run(dag, &mut BTreeMap::new())
            .await;
        assert!(matches!(
            result,
            Err(ExecutorError::UnknownDependency { .. })
        ));

        let mut dag = Dag::new();
        dag.add(ok(), &[]).expect("add");
        assert!(matches!(
            dag.add(ok(), &[]),
            Err(ExecutorError::DuplicateNode(_))
        ));

        let stopped = executor(Arc::clone(&store));
        stopped.stop.store(true, Ordering::SeqCst);
        let result = stopped.run(dag, &mut BTreeMap::new()).await;
        assert!(matches!(result, Err(ExecutorError::Stopped(_))));
        assert!(
            store.finished_nodes().expect("list").is_empty(),
            "a stopped run starts nothing"
        );
    }

    #[tokio::test]
    async fn a_failing_node_is_named() {
        let mut dag = Dag::new();
        dag.add(
            NodeSpec {
                id: "bad".into(),
                stage: "test".into(),
                key_material: json!(0),
                run: Box::new(|_| Box::pin(async { Err("boom".to_string()) })),
            },
            &[],
        )
        .expect("add");
        let result = executor(Arc::new(MemoryStore::default()))
            .run(dag, &mut BTreeMap::new())
            .await;
        assert!(
            matches!(result, Err(ExecutorError::Node { ref node, .. }) if node == "bad"),
            "{result:?}"
        );
    }

    /// Three chains x1 → x2 and two slots: when a1 finishes, the chain that has not
    /// started (c1) goes before a1's next step (a2), though "a2" sorts first by ID.
    #[tokio::test(start_paused = true)]
    async fn chains_not_yet_started_go_first() {
        let started: Arc<Mutex<Vec<String>>> = Arc::default();
        let mut dag = Dag::new();
        for (id, ms, deps) in [
            ("a1", 10u64, vec![]),
            ("a2", 10, vec!["a1".to_string()]),
            ("b1", 20, vec![]),
            ("b2", 10, vec!["b1".to_string()]),
            ("c1", 10, vec![]),
            ("c2", 10, vec!["c1".to_string()]),
        ] {
            let started = Arc::clone(&started);
            let spec = NodeSpec {
                id: id.into(),
                stage: "test".into(),
                key_material: json!(id),
                run: Box::new(move |ctx: NodeContext| {
                    Box::pin(async move {
                        if let Ok(mut order) = started.lock() {
                            order.push(ctx.node_id.clone());
                        }
                        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                        Ok(NodeResult {
                            output: json!(null),
                            calls: vec![],
                        })
                    })
                }),
            };
            dag.add(spec, &deps).expect("add");
        }
        let mut two_slots = executor(Arc::new(MemoryStore::default()));
        two_slots.concurrency = 2;
        let mut done = BTreeMap::new();
        two_slots.run(dag, &mut done).await.expect("run");
        let order = started.lock().map(|o| o.clone()).unwrap_or_default();
        assert_eq!(order[..3], ["a1", "b1", "c1"], "{order:?}");
        assert_eq!(done.len(), 6);
    }

    #[tokio::test]
    async fn a_panicking_step_is_named_in_the_error() {
        let mut dag = Dag::new();
        let spec = NodeSpec {
            id: "r0/q1/extract".into(),
            stage: "extract".into(),
            key_material: json!(1),
            run: Box::new(|_ctx: NodeContext| {
                Box::pin(async move {
                    let empty: Vec<u8> = Vec::new();
                    // An out-of-bounds index: a panic inside the step's task.
                    let byte = empty[empty.len()];
                    Ok(NodeResult {
                        output: json!(byte),
                        calls: vec![],
                    })
                })
            }),
        };
        dag.add(spec, &[]).expect("add");
        let mut done = BTreeMap::new();
        let error = executor(Arc::new(MemoryStore::default()))
            .run(dag, &mut done)
            .await
            .expect_err("a panic is an error");
        match error {
            ExecutorError::Node { node, message } => {
                assert_eq!(node, "r0/q1/extract");
                assert!(message.contains("panicked"), "{message}");
            }
            other => panic!("unexpected {other}"),
        }
    }
}
