//! The honest lower bound on a session's wall time: given the latencies its calls
//! actually had, no schedule of its DAG could have finished faster. (Those measured
//! latencies include any waiting inside a provider — a fetch slot, a rate limiter, a
//! model's concurrency cap — so the bound is about scheduling, not about the providers.)
//! The bench reports wall ÷ this bound.
//!
//! ```text
//! step(calls of one kind in a node) = max( max latency, Σ latency ÷ io_concurrency )
//! node                              = Σ over the node's kinds (llm, search, fetch) of step(…)
//! critical path                     = the longest dependency chain, each node costing `node`
//! bound                             = max( critical path, Σ node ÷ node concurrency )
//! ```
//!
//! Calls that could run together count once: a node's searches (or fetches, or judge
//! batches) run at once, so they cost their slowest call, unless the per-step cap
//! (`io_concurrency`) makes them queue. Different kinds inside one node (a scout searches,
//! then fetches what it found) follow each other. A repair call follows the call it
//! repairs, but is counted as concurrent here: that keeps the bound a lower bound. The
//! second term holds because the executor runs at most `node concurrency` nodes at once.

use std::collections::BTreeMap;

/// One finished node: its id, its dependencies and its calls as (kind, seconds).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundNode {
    pub id: String,
    pub deps: Vec<String>,
    pub calls: Vec<(String, f64)>,
}

/// The bound and its two terms, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bound {
    pub critical_path_s: f64,
    pub work_over_concurrency_s: f64,
    pub lower_bound_s: f64,
}

/// The cost of calls that run at once, at most `io_concurrency` at a time.
pub fn step_cost(latencies: &[f64], io_concurrency: usize) -> f64 {
    let slowest = latencies.iter().copied().fold(0.0, f64::max);
    let spread = latencies.iter().sum::<f64>() / io_concurrency.max(1) as f64;
    slowest.max(spread)
}

/// The cost of one node: its kinds one after another, each kind's calls at once.
pub fn node_cost(calls: &[(String, f64)], io_concurrency: usize) -> f64 {
    let mut by_kind: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (kind, seconds) in calls {
        by_kind.entry(kind.as_str()).or_default().push(*seconds);
    }
    by_kind
        .values()
        .map(|latencies| step_cost(latencies, io_concurrency))
        .sum()
}

/// The lower bound of a finished DAG under a node concurrency cap and a per-step cap.
pub fn lower_bound(nodes: &[BoundNode], node_concurrency: usize, io_concurrency: usize) -> Bound {
    let costed: Vec<(String, Vec<String>, f64)> = nodes
        .iter()
        .map(|n| {
            (
                n.id.clone(),
                n.deps.clone(),
                node_cost(&n.calls, io_concurrency),
            )
        })
        .collect();
    let critical_path_s = critical_path(&costed);
    let work_over_concurrency_s =
        costed.iter().map(|n| n.2).sum::<f64>() / node_concurrency.max(1) as f64;
    Bound {
        critical_path_s,
        work_over_concurrency_s,
        lower_bound_s: critical_path_s.max(work_over_concurrency_s),
    }
}

/// The longest path through a DAG of `(node, dependencies, duration)`: no schedule can
/// finish faster. Unknown dependencies count as already done.
pub fn critical_path(nodes: &[(String, Vec<String>, f64)]) -> f64 {
    let by_id: BTreeMap<&str, (&Vec<String>, f64)> = nodes
        .iter()
        .map(|(id, deps, d)| (id.as_str(), (deps, *d)))
        .collect();
    let mut finish: BTreeMap<&str, f64> = BTreeMap::new();
    fn visit<'a>(
        id: &'a str,
        by_id: &BTreeMap<&'a str, (&'a Vec<String>, f64)>,
        finish: &mut BTreeMap<&'a str, f64>,
        depth: usize,
    ) -> f64 {
        if let Some(done) = finish.get(id) {
            return *done;
        }
        let Some((deps, duration)) = by_id.get(id) else {
            return 0.0;
        };
        let start = if depth > 10_000 {
            0.0
        } else {
            deps.iter()
                .map(|d| visit(d.as_str(), by_id, finish, depth + 1))
                .fold(0.0, f64::max)
        };
        let end = start + duration;
        finish.insert(id, end);
        end
    }
    nodes
        .iter()
        .map(|(id, _, _)| visit(id, &by_id, &mut finish, 0))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, deps: &[&str], calls: &[(&str, f64)]) -> BoundNode {
        BoundNode {
            id: id.into(),
            deps: deps.iter().map(|d| d.to_string()).collect(),
            calls: calls.iter().map(|(k, s)| (k.to_string(), *s)).collect(),
        }
    }

    #[test]
    fn critical_path_is_the_longest_chain() {
        let nodes = vec![
            ("a".to_string(), vec![], 1.0),
            ("b".to_string(), vec!["a".to_string()], 2.0),
            ("c".to_string(), vec!["a".to_string()], 5.0),
            ("d".to_string(), vec!["b".to_string(), "c".to_string()], 1.0),
        ];
        assert_eq!(critical_path(&nodes), 7.0);
        assert_eq!(critical_path(&[]), 0.0);
    }

    #[test]
    fn concurrent_calls_cost_their_slowest_unless_the_cap_queues_them() {
        assert_eq!(step_cost(&[0.4, 0.6, 0.5], 8), 0.6);
        // Eight 0.6 s fetches two at a time: at least 2.4 s.
        assert!((step_cost(&[0.6; 8], 2) - 2.4).abs() < 1e-9);
        // Sequential (cap 1) is the sum.
        assert!((step_cost(&[0.4, 0.6, 0.5], 1) - 1.5).abs() < 1e-9);
        assert_eq!(step_cost(&[], 8), 0.0);
        // A scout searches, then fetches: the kinds add up.
        let scout = [
            ("search".to_string(), 0.4),
            ("fetch".to_string(), 0.6),
            ("fetch".to_string(), 0.7),
        ];
        assert!((node_cost(&scout, 8) - 1.1).abs() < 1e-9);
    }

    #[test]
    fn the_bound_of_a_hand_built_research_dag() {
        // decompose (1 s) → two chains: subquery (1 s) → retrieve (3 searches of
        // 0.4 s) → fetch (8 fetches of 0.6 s) → extract (1 s); then a judge of three
        // 1 s batches.
        let mut nodes = vec![node("decompose", &[], &[("llm", 1.0)])];
        for s in ["s1", "s2"] {
            nodes.push(node(
                &format!("{s}/subquery"),
                &["decompose"],
                &[("llm", 1.0)],
            ));
            nodes.push(node(
                &format!("{s}/retrieve"),
                &[&format!("{s}/subquery")],
                &[("search", 0.4), ("search", 0.4), ("search", 0.4)],
            ));
            nodes.push(node(
                &format!("{s}/fetch"),
                &[&format!("{s}/retrieve")],
                &[("fetch", 0.6); 8],
            ));
            nodes.push(node(
                &format!("{s}/extract"),
                &[&format!("{s}/fetch")],
                &[("llm", 1.0)],
            ));
        }
        nodes.push(node(
            "judge",
            &["s1/extract", "s2/extract"],
            &[("llm", 1.0), ("llm", 1.0), ("llm", 1.0)],
        ));
        let bound = lower_bound(&nodes, 5, 8);
        // 1 + 1 + 0.4 + 0.6 + 1 + 1 = 5.0: each step counts its slowest call once.
        assert!((bound.critical_path_s - 5.0).abs() < 1e-9, "{bound:?}");
        assert!((bound.lower_bound_s - 5.0).abs() < 1e-9);
        // One call at a time: retrieve 1.2 s, fetch 4.8 s, judge 3 s.
        let sequential = lower_bound(&nodes, 5, 1);
        assert!(
            (sequential.critical_path_s - 12.0).abs() < 1e-9,
            "{sequential:?}"
        );
        // One node at a time: the work term wins.
        let one_node = lower_bound(&nodes, 1, 8);
        assert!(
            (one_node.work_over_concurrency_s - 8.0).abs() < 1e-9,
            "{one_node:?}"
        );
        assert_eq!(one_node.lower_bound_s, one_node.work_over_concurrency_s);
    }
}
