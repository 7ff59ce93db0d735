//! A short list or table read whole by a model: when two units of one run (a list's
//! items, a table's rows) made a ranked pool, the run's other units follow the pool.
//! A relayed model saw a pay agreement's ballot and its shift allowance under "Pay",
//! never the "Year one: 4.2%" item between them. They join after the pool's best
//! units, so nothing the ranking chose is pushed out (lifting rows into the pool had
//! pushed a share's per-site volumes out, session 28).

use std::collections::BTreeMap;

/// The run each list item or table row stands in: (document, first sentence) → the
/// run's index in its document.
pub(crate) type Runs = BTreeMap<(String, u32), usize>;

/// A candidate as score ranks it: weight, document, first sentence, last sentence.
pub(crate) type Ranked = (f64, String, u32, Option<u32>);

/// Most units a run may hold to be read whole: a longer table is read by its rows.
pub(super) const MAX_RUN_UNITS: usize = 8;

/// Most units joined to one pool (a model extractor reads them beyond its pool).
pub const MAX_JOINED: usize = 20;

/// The units of `rest` (ranked below the pool) that complete a run two or more of
/// `kept`'s units stand in, when the run holds at most [`MAX_RUN_UNITS`] scored units;
/// runs in the order of their best kept unit, each in document order, at most
/// [`MAX_JOINED`] in all (a run that does not fit is left out whole).
pub(super) fn siblings(kept: &[Ranked], rest: &[Ranked], runs: &Runs) -> Vec<Ranked> {
    let run_of = |unit: &Ranked| {
        runs.get(&(unit.1.clone(), unit.2))
            .map(|r| (unit.1.clone(), *r))
    };
    let mut order: Vec<(String, usize)> = Vec::new();
    let mut in_pool: BTreeMap<(String, usize), usize> = BTreeMap::new();
    for run in kept.iter().filter_map(run_of) {
        if !in_pool.contains_key(&run) {
            order.push(run.clone());
        }
        *in_pool.entry(run).or_default() += 1;
    }
    let mut outside: BTreeMap<(String, usize), Vec<&Ranked>> = BTreeMap::new();
    for unit in rest {
        if let Some(run) = run_of(unit).filter(|run| in_pool.contains_key(run)) {
            outside.entry(run).or_default().push(unit);
        }
    }
    let mut joined: Vec<Ranked> = Vec::new();
    for run in order {
        let pooled = in_pool.get(&run).copied().unwrap_or(0);
        let Some(mut others) = outside.remove(&run) else {
            continue;
        };
        let fits = pooled >= 2
            && pooled + others.len() <= MAX_RUN_UNITS
            && joined.len() + others.len() <= MAX_JOINED;
        if fits {
            others.sort_by_key(|unit| unit.2);
            joined.extend(others.into_iter().cloned());
        }
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(doc: &str, sentence: u32, weight: f64) -> Ranked {
        (weight, doc.to_string(), sentence, None)
    }

    #[test]
    fn a_run_with_two_units_in_the_pool_is_completed_and_a_long_or_lone_one_is_not() {
        let mut runs = Runs::new();
        for sentence in 10..15 {
            runs.insert(("people".into(), sentence), 0);
        }
        for sentence in 20..40 {
            runs.insert(("deals".into(), sentence), 1);
        }
        runs.insert(("memo".into(), 3), 0);
        runs.insert(("memo".into(), 4), 0);
        let kept = [
            unit("people", 10, 3.0),
            unit("people", 13, 2.0),
            unit("deals", 20, 1.5),
            unit("deals", 21, 1.4),
            unit("memo", 3, 1.0),
        ];
        let rest: Vec<Ranked> = [12, 11, 14]
            .iter()
            .map(|s| unit("people", *s, 0.1))
            .chain((22..40).map(|s| unit("deals", s, 0.1)))
            .chain([unit("memo", 4, 0.1), unit("other", 1, 0.5)])
            .collect();
        let joined: Vec<(String, u32)> = siblings(&kept, &rest, &runs)
            .into_iter()
            .map(|u| (u.1, u.2))
            .collect();
        // The pay list completed in its order; the 20-row table and the memo's run with
        // one unit in the pool are not.
        assert_eq!(
            joined,
            [11, 12, 14].map(|s| ("people".to_string(), s)).to_vec()
        );
    }
}
