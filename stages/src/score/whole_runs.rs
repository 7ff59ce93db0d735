//! What a model reads whole beside its ranked pool: when two units of a short list or
//! table (a run of items or rows), or of a short current document, made the pool, the
//! run's or document's other units follow the pool.
//! A relayed model saw a pay agreement's ballot and its shift allowance under "Pay",
//! never the "Year one: 4.2%" item between them; and a one-page fleet plan's "fleet"
//! sentences, never its "$27.9M retrofit of Millrace Depot" (no word of the question).
//! They join after the pool's best units, so nothing the ranking chose is pushed out
//! (lifting rows into the pool had pushed a share's per-site volumes out, session 28).

use std::collections::{BTreeMap, BTreeSet};

/// The run each list item or table row stands in: (document, first sentence) → the
/// run's index in its document.
pub(crate) type Runs = BTreeMap<(String, u32), usize>;

/// A candidate as score ranks it: weight, document, first sentence, last sentence.
pub(crate) type Ranked = (f64, String, u32, Option<u32>);

/// Most units a run may hold to be read whole: a longer table is read by its rows.
pub(super) const MAX_RUN_UNITS: usize = 8;

/// Most units a current document may hold to be read whole (about a page): a longer
/// one is read by its ranked units.
pub(super) const SHORT_DOCUMENT_UNITS: usize = 24;

/// What a pool may be completed with: the run of each list item and table row, and
/// the short current documents (their content hashes).
#[derive(Default)]
pub(crate) struct Wholes {
    pub(crate) runs: Runs,
    pub(crate) short_documents: BTreeSet<String>,
}

/// A whole a unit stands in: its run, or its document.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Whole {
    Run(String, usize),
    Document(String),
}

impl Wholes {
    /// The wholes `unit` stands in, its run before its document.
    fn of(&self, unit: &Ranked) -> Vec<Whole> {
        let run = self
            .runs
            .get(&(unit.1.clone(), unit.2))
            .map(|r| Whole::Run(unit.1.clone(), *r));
        let document = self
            .short_documents
            .contains(&unit.1)
            .then(|| Whole::Document(unit.1.clone()));
        run.into_iter().chain(document).collect()
    }
}

/// The units of `rest` (ranked below the pool, or sharing no word with the question)
/// that complete a run or short document two or more of `kept`'s units stand in (a run
/// holding at most [`MAX_RUN_UNITS`] units); wholes in the order of their best kept
/// unit, each in document order, at most `limit` units in all (a whole that does not
/// fit is left out whole).
pub(super) fn siblings(
    kept: &[Ranked],
    rest: &[Ranked],
    wholes: &Wholes,
    limit: usize,
) -> Vec<Ranked> {
    let mut order: Vec<Whole> = Vec::new();
    let mut in_pool: BTreeMap<Whole, usize> = BTreeMap::new();
    for whole in kept.iter().flat_map(|unit| wholes.of(unit)) {
        if !in_pool.contains_key(&whole) {
            order.push(whole.clone());
        }
        *in_pool.entry(whole).or_default() += 1;
    }
    let mut outside: BTreeMap<Whole, Vec<&Ranked>> = BTreeMap::new();
    for unit in rest {
        for whole in wholes.of(unit) {
            if in_pool.contains_key(&whole) {
                outside.entry(whole).or_default().push(unit);
            }
        }
    }
    let mut joined: Vec<Ranked> = Vec::new();
    let mut taken: BTreeSet<(String, u32)> = BTreeSet::new();
    for whole in order {
        let pooled = in_pool.get(&whole).copied().unwrap_or(0);
        let Some(others) = outside.remove(&whole) else {
            continue;
        };
        let mut others: Vec<&Ranked> = others
            .into_iter()
            .filter(|unit| !taken.contains(&(unit.1.clone(), unit.2)))
            .collect();
        let short = match whole {
            Whole::Run(..) => pooled + others.len() <= MAX_RUN_UNITS,
            Whole::Document(_) => true,
        };
        if pooled >= 2 && short && joined.len() + others.len() <= limit {
            others.sort_by_key(|unit| unit.2);
            taken.extend(others.iter().map(|unit| (unit.1.clone(), unit.2)));
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
        let wholes = Wholes {
            runs,
            ..Wholes::default()
        };
        let joined: Vec<(String, u32)> = siblings(&kept, &rest, &wholes, 20)
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

    #[test]
    fn a_short_document_with_two_units_in_the_pool_is_read_whole_once() {
        let mut wholes = Wholes::default();
        for sentence in 4..7 {
            wholes.runs.insert(("plan".into(), sentence), 0);
        }
        wholes.short_documents.insert("plan".into());
        wholes.short_documents.insert("memo".into());
        let kept = [
            unit("plan", 4, 2.0),
            unit("memo", 1, 1.8),
            unit("plan", 5, 1.0),
            unit("archived", 1, 0.9),
            unit("archived", 2, 0.8),
        ];
        // The plan's unmatched units (weight 0) and its run's last row; the memo has
        // one unit in the pool, the archived report is no short current document.
        let rest = [
            unit("plan", 6, 0.0),
            unit("plan", 9, 0.0),
            unit("plan", 1, 0.0),
            unit("memo", 2, 0.0),
            unit("archived", 3, 0.0),
        ];
        let joined: Vec<(String, u32)> = siblings(&kept, &rest, &wholes, 40)
            .into_iter()
            .map(|u| (u.1, u.2))
            .collect();
        // The run's row first (its whole comes first), then the rest of the plan in
        // document order, each unit once.
        assert_eq!(joined, [6, 1, 9].map(|s| ("plan".to_string(), s)).to_vec());
        // Past the limit the document is left out whole (the run still fits).
        let joined = siblings(&kept, &rest, &wholes, 2);
        assert_eq!(joined.len(), 1);
    }
}
