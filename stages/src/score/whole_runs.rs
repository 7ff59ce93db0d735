//! What a model reads beside its ranked pool: when two units of a short list or table
//! (a run of items or rows), of a short section of a current document (the units
//! under one heading) or of a short current document made the pool, the other units
//! of that whole follow the pool.
//! A relayed model saw a pay agreement's ballot and its shift allowance under "Pay",
//! never the "Year one: 4.2%" item between them; and a one-page fleet plan's "fleet"
//! sentences, never its "$27.9M retrofit of Millrace Depot" (no word of the question).
//! They join after the pool's best units, so nothing the ranking chose is pushed out
//! (lifting rows into the pool had pushed a share's per-site volumes out, session 28).

use std::collections::{BTreeMap, BTreeSet};

use deepr_orchestrator::{ArchivedText, DocMeta};

/// The run each list item or table row stands in: (document, first sentence) → the
/// run's index in its document.
pub(crate) type Runs = BTreeMap<(String, u32), usize>;

/// The section each unit of a long current document stands in, when the section is
/// short: (document, first sentence) → the index of the heading above it.
pub(crate) type Sections = BTreeMap<(String, u32), usize>;

/// A candidate as score ranks it: weight, document, first sentence, last sentence.
pub(crate) type Ranked = (f64, String, u32, Option<u32>);

/// Most units a run may hold to be read whole: a longer table is read by its rows.
pub(super) const MAX_RUN_UNITS: usize = 8;

/// Most units a current document may hold to be read whole (about a page): a longer
/// one is read by its sections.
pub(super) const SHORT_DOCUMENT_UNITS: usize = 24;

/// Most units a section (the units under one heading) may hold to be read whole
/// (about half a page).
pub(super) const SHORT_SECTION_UNITS: usize = 12;

/// What a pool may be completed with: the run of each list item and table row, the
/// short sections of current documents (the units under one heading: (document, first
/// sentence) → the heading's index) and the short current documents (their content
/// hashes; archived, superseded and draft versions are read by their ranked units
/// only).
#[derive(Default)]
pub(crate) struct Wholes {
    pub(crate) runs: Runs,
    pub(crate) sections: Sections,
    pub(crate) short_documents: BTreeSet<String>,
}

/// A whole a unit stands in: its run, its section, or its document.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Whole {
    Run(String, usize),
    Section(String, usize),
    Document(String),
}

impl Wholes {
    /// Notes what of one document's scored `units` may be read whole: each list item's
    /// or table row's run (`unit_runs`, beside `units`) and, for a current document,
    /// its short sections and, when it is short, itself.
    pub(crate) fn add_document(
        &mut self,
        doc: &DocMeta,
        text: &ArchivedText,
        units: &[Ranked],
        unit_runs: Vec<Option<usize>>,
    ) {
        for (unit, run) in units.iter().zip(unit_runs) {
            if let Some(run) = run {
                self.runs.insert((unit.1.clone(), unit.2), run);
            }
        }
        let outline = &doc.outline;
        if outline.is_stale() || outline.is_draft() {
            return;
        }
        let hash = &doc.content_sha256;
        if units.len() <= SHORT_DOCUMENT_UNITS {
            self.short_documents.insert(hash.clone());
            return;
        }
        // A unit's section: the last heading (or fresh slide) starting at or before it.
        let section_of = |unit: &Ranked| {
            let start = text.sentences.get(unit.2 as usize)?.start;
            outline
                .headings
                .partition_point(|(at, _)| *at as usize <= start)
                .checked_sub(1)
        };
        let mut members: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
        for unit in units {
            if let Some(section) = section_of(unit) {
                members.entry(section).or_default().push(unit.2);
            }
        }
        for (section, sentences) in members {
            if sentences.len() <= SHORT_SECTION_UNITS {
                for sentence in sentences {
                    self.sections.insert((hash.clone(), sentence), section);
                }
            }
        }
    }

    /// The wholes `unit` stands in, narrowest first.
    fn of(&self, unit: &Ranked) -> Vec<Whole> {
        let key = (unit.1.clone(), unit.2);
        let run = self.runs.get(&key).map(|r| Whole::Run(unit.1.clone(), *r));
        let section = self
            .sections
            .get(&key)
            .map(|s| Whole::Section(unit.1.clone(), *s));
        let document = self
            .short_documents
            .contains(&unit.1)
            .then(|| Whole::Document(unit.1.clone()));
        run.into_iter().chain(section).chain(document).collect()
    }
}

/// The units of `rest` (ranked below the pool, or sharing no word with the question)
/// that complete a run, short section or short document two or more of `kept`'s units
/// stand in (a run holding at most [`MAX_RUN_UNITS`] units); wholes in the order of their best kept
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
        // Sections and documents were noted only when short.
        let short = match whole {
            Whole::Run(..) => pooled + others.len() <= MAX_RUN_UNITS,
            Whole::Section(..) | Whole::Document(_) => true,
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

    /// The (document, sentence) of each unit `siblings` joined.
    fn places(joined: Vec<Ranked>) -> Vec<(String, u32)> {
        joined.into_iter().map(|u| (u.1, u.2)).collect()
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
        let joined = places(siblings(&kept, &rest, &wholes, 20));
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
        let joined = places(siblings(&kept, &rest, &wholes, 40));
        // The run's row first (its whole comes first), then the rest of the plan in
        // document order, each unit once.
        assert_eq!(joined, [6, 1, 9].map(|s| ("plan".to_string(), s)).to_vec());
        // Past the limit the document is left out whole (the run still fits).
        let joined = siblings(&kept, &rest, &wholes, 2);
        assert_eq!(joined.len(), 1);
    }

    /// A long current report: its short sections are wholes; an archived copy's are not.
    #[test]
    fn a_long_reports_short_section_is_read_whole_when_two_of_its_units_are_pooled() {
        let mut text = String::from("Security report\n\n");
        for n in 0..30 {
            text.push_str(&format!(
                "Metric {n} of the quarter stayed within its target.\n\n"
            ));
        }
        let heading_at = text.len() as u32;
        text.push_str("Penetration test, July 2026\n\nSeverity: High · Open: 1\n\nSeverity: Medium · Open: 2\n\nThe code fix ships in release 2026.11, target date 15 November 2026.\n");
        let archived = ArchivedText::new(&text);
        let doc = |status: Option<&str>| DocMeta {
            doc_key: "security".into(),
            locator: "security.pdf".into(),
            title: "Security report".into(),
            content_sha256: archived.content_sha256.clone(),
            date: None,
            authority: 0.5,
            outline: deepr_orchestrator::Outline {
                headings: vec![(0, 1), (heading_at, 1)],
                status: status.map(String::from),
                ..Default::default()
            },
        };
        let hash = archived.content_sha256.clone();
        let units: Vec<Ranked> = (1..archived.sentences.len() as u32)
            .map(|s| (1.0, hash.clone(), s, None))
            .collect();
        let last = units.len() as u32;
        let mut wholes = Wholes::default();
        wholes.add_document(&doc(None), &archived, &units, vec![None; units.len()]);
        assert!(!wholes.short_documents.contains(&hash));
        let kept = [unit(&hash, last - 2, 2.0), unit(&hash, last - 1, 1.5)];
        let rest = [unit(&hash, last, 0.0), unit(&hash, 3, 0.0)];
        let joined: Vec<u32> = siblings(&kept, &rest, &wholes, 40)
            .into_iter()
            .map(|u| u.2)
            .collect();
        // The fix date joins its section's pooled rows; a metric of another section
        // does not.
        assert_eq!(joined, [last]);
        // Two pooled metrics of the 30-unit first section: too long to be read whole.
        let metrics = [unit(&hash, 2, 2.0), unit(&hash, 3, 1.5)];
        let other_metrics = [unit(&hash, 4, 0.0), unit(&hash, 5, 0.0)];
        assert!(siblings(&metrics, &other_metrics, &wholes, 40).is_empty());
        let mut archived_wholes = Wholes::default();
        archived_wholes.add_document(
            &doc(Some("archived")),
            &archived,
            &units,
            vec![None; units.len()],
        );
        assert!(siblings(&kept, &rest, &archived_wholes, 40).is_empty());
    }
}
