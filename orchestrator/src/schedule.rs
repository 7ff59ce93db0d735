//! The executor's schedule: which ready node starts next. Nodes become ready when
//! their last dependency is done, and start longest-remaining-chain first, then by ID.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::graph::NodeIndex;
use petgraph::Direction;

use crate::dag::{Dag, NodeSpec};

/// Which nodes may start, in order. Ready nodes start longest-remaining-chain first
/// (the classic "highest level first" list schedule), then by ID: with more chains than
/// slots, a chain that has not started yet goes before the next step of one that has,
/// so no chain is left to run alone at the end. The order is deterministic, and
/// outputs are merged by ID whatever it is.
pub(crate) struct Schedule {
    levels: BTreeMap<NodeIndex, usize>,
    /// Each node's dependencies not yet done.
    waiting: BTreeMap<NodeIndex, usize>,
    ready: BTreeSet<Ready>,
}

impl Schedule {
    pub(crate) fn new(dag: &Dag) -> Self {
        let waiting: BTreeMap<NodeIndex, usize> = dag
            .graph
            .node_indices()
            .map(|i| {
                (
                    i,
                    dag.graph.neighbors_directed(i, Direction::Incoming).count(),
                )
            })
            .collect();
        let levels = levels(dag);
        let mut ready = BTreeSet::new();
        for (index, count) in &waiting {
            if *count == 0 {
                if let Some(spec) = &dag.graph[*index] {
                    ready.insert(ready_entry(&levels, spec, *index));
                }
            }
        }
        Self {
            levels,
            waiting,
            ready,
        }
    }

    pub(crate) fn pop(&mut self) -> Option<NodeIndex> {
        self.ready.pop_first().map(|(_, _, index)| index)
    }

    /// `index` is done: its dependants with nothing else to wait for become ready.
    pub(crate) fn release(&mut self, dag: &Dag, index: NodeIndex) {
        release(dag, &self.levels, index, &mut self.waiting, &mut self.ready);
    }
}

/// A ready node: (longest chain from it to the end, reversed so longest sorts first;
/// its ID; its index).
type Ready = (std::cmp::Reverse<usize>, String, NodeIndex);

fn ready_entry(levels: &BTreeMap<NodeIndex, usize>, spec: &NodeSpec, index: NodeIndex) -> Ready {
    (
        std::cmp::Reverse(levels.get(&index).copied().unwrap_or(0)),
        spec.id.clone(),
        index,
    )
}

/// Each node's level: the number of nodes on the longest path from it to a node with
/// no dependants (1 for those). The graph is acyclic (checked before this).
fn levels(dag: &Dag) -> BTreeMap<NodeIndex, usize> {
    let mut levels = BTreeMap::new();
    let order = petgraph::algo::toposort(&dag.graph, None).unwrap_or_default();
    for index in order.into_iter().rev() {
        let below = dag
            .graph
            .neighbors_directed(index, Direction::Outgoing)
            .filter_map(|next| levels.get(&next).copied())
            .max()
            .unwrap_or(0);
        levels.insert(index, below + 1);
    }
    levels
}

fn release(
    dag: &Dag,
    levels: &BTreeMap<NodeIndex, usize>,
    index: NodeIndex,
    waiting: &mut BTreeMap<NodeIndex, usize>,
    ready: &mut BTreeSet<Ready>,
) {
    for next in dag.graph.neighbors_directed(index, Direction::Outgoing) {
        if let Some(count) = waiting.get_mut(&next) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                if let Some(spec) = &dag.graph[next] {
                    ready.insert(ready_entry(levels, spec, next));
                }
            }
        }
    }
}
