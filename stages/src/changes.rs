//! What changed between a run and its refresh (`deepr refresh`): which documents are
//! new, changed or removed since (by content hash), which claims new or changed
//! documents add, which earlier claims their document no longer states, and which
//! figures were restated in the same place with other values (old → new, both
//! quotes). Pure: the earlier report, the documents then and now, and the archived
//! texts in; [`Changes`] out.

use std::collections::{BTreeMap, BTreeSet};

use deepr_evidence::normalise::normalise;
use deepr_evidence::report::{Changes, Claim, PastClaim, Report, ValueChange, Verdict};
use deepr_evidence::terms::{content_terms, numbers};

/// Share of content words two claims of one document share to be one statement whose
/// figures changed.
const SAME_STATEMENT: f64 = 0.5;

/// The documents a run could read: content hash by locator.
pub type Documents = BTreeMap<String, String>;

/// The earlier run: its report, the documents its sources held then (empty when it
/// kept none: its cited sources stand in), and the date of its report.
pub struct Then<'a> {
    pub report: &'a Report,
    pub documents: &'a Documents,
    pub since: String,
}

/// A usable claim with the quote and document it stands on (its first citation).
struct Stated<'a> {
    claim: &'a Claim,
    quote: &'a str,
    locator: String,
    date: Option<String>,
}

fn stated(report: &Report) -> Vec<Stated<'_>> {
    let sources: BTreeMap<&str, _> = report.sources.iter().map(|s| (s.id.as_str(), s)).collect();
    report
        .claims
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Supported | Verdict::Partial))
        .filter_map(|claim| {
            let citation = claim.citations.first()?;
            let source = sources.get(citation.source.as_str())?;
            Some(Stated {
                claim,
                quote: &citation.quote,
                locator: source.locator.clone(),
                date: source.date.clone(),
            })
        })
        .collect()
}

/// The documents a report's sources were, when no fuller list was kept.
fn cited_documents(report: &Report) -> Documents {
    report
        .sources
        .iter()
        .map(|s| (s.locator.clone(), s.content_sha256.clone()))
        .collect()
}

/// What changed from `then` to `now`; `documents_now`: what the sources hold now
/// (empty: `now`'s cited sources); `text_now`: a document's archived text by hash.
pub fn changes(
    then: &Then<'_>,
    now: &Report,
    documents_now: &Documents,
    text_now: &dyn Fn(&str) -> Option<String>,
) -> Changes {
    let before = if then.documents.is_empty() {
        cited_documents(then.report)
    } else {
        then.documents.clone()
    };
    let mut after = if documents_now.is_empty() {
        cited_documents(now)
    } else {
        documents_now.clone()
    };
    // A source cited now is known now, whatever the list held.
    after.extend(cited_documents(now));
    let new: Vec<String> = after
        .keys()
        .filter(|l| !before.contains_key(*l))
        .cloned()
        .collect();
    let changed: Vec<String> = after
        .iter()
        .filter(|(l, sha)| before.get(*l).is_some_and(|old| old != *sha))
        .map(|(l, _)| l.clone())
        .collect();
    // Only a full list of what the sources hold can tell a document was removed.
    let removed: Vec<String> = if then.documents.is_empty() || documents_now.is_empty() {
        Vec::new()
    } else {
        before
            .keys()
            .filter(|l| !after.contains_key(*l))
            .cloned()
            .collect()
    };
    let fresh: BTreeSet<&str> = new.iter().chain(&changed).map(String::as_str).collect();
    let past = stated(then.report);
    let present = stated(now);
    let quoted_then: BTreeSet<String> = past.iter().map(|s| normalise(s.quote)).collect();
    let mut added: Vec<&Stated<'_>> = present
        .iter()
        .filter(|s| {
            fresh.contains(s.locator.as_str()) && !quoted_then.contains(&normalise(s.quote))
        })
        .collect();
    let mut gone: Vec<&Stated<'_>> = past
        .iter()
        .filter(|s| {
            if removed.contains(&s.locator) {
                return true;
            }
            if !changed.contains(&s.locator) {
                return false;
            }
            let text = after.get(&s.locator).and_then(|sha| text_now(sha));
            !text.is_some_and(|t| normalise(&t).contains(&normalise(s.quote)))
        })
        .collect();
    let values = pair_values(&mut gone, &mut added);
    Changes {
        parent_run: then.report.run_id.clone(),
        since: then.since.clone(),
        new_documents: new,
        changed_documents: changed,
        removed_documents: removed,
        added: added.iter().map(|s| s.claim.id.clone()).collect(),
        no_longer_supported: gone.iter().map(|s| past_claim(s)).collect(),
        values,
    }
}

fn past_claim(stated: &Stated<'_>) -> PastClaim {
    PastClaim {
        text: stated.claim.text.clone(),
        quote: stated.quote.to_string(),
        locator: stated.locator.clone(),
        date: stated.date.clone(),
    }
}

/// An earlier claim its document no longer states, and a new claim of the same
/// document that says the same in other figures: one value changed. Both leave
/// their lists.
fn pair_values(gone: &mut Vec<&Stated<'_>>, added: &mut Vec<&Stated<'_>>) -> Vec<ValueChange> {
    let mut values = Vec::new();
    let mut i = 0;
    while i < gone.len() {
        let was = gone[i];
        let was_words: BTreeSet<String> = content_terms(was.quote).into_iter().collect();
        let was_numbers: BTreeSet<String> = numbers(was.quote).into_iter().collect();
        let found = added.iter().position(|now| {
            let words: BTreeSet<String> = content_terms(now.quote).into_iter().collect();
            let shared = was_words.intersection(&words).count() as f64;
            let smaller = was_words.len().min(words.len()).max(1) as f64;
            let figures: BTreeSet<String> = numbers(now.quote).into_iter().collect();
            now.locator == was.locator
                && shared / smaller >= SAME_STATEMENT
                && figures != was_numbers
        });
        match found {
            Some(j) => {
                let now = added.remove(j);
                let figures: BTreeSet<String> = numbers(now.quote).into_iter().collect();
                values.push(ValueChange {
                    was: past_claim(was),
                    now: now.claim.id.clone(),
                    old_values: was_numbers.difference(&figures).cloned().collect(),
                    new_values: figures.difference(&was_numbers).cloned().collect(),
                });
                gone.remove(i);
            }
            None => i += 1,
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A report of `claims` — (id, source id, quote) — over `sources` — (id, locator,
    /// hash).
    fn report(
        run_id: &str,
        claims: &[(&str, &str, &str)],
        sources: &[(&str, &str, &str)],
    ) -> Report {
        serde_json::from_value(json!({
            "schema": "deepr.report.v1", "run_id": run_id, "topic": "t", "depth": "quick",
            "strategy": "linear", "complete": true, "incomplete_reason": null,
            "subquestions": [], "conflicts": [], "coverage": [],
            "usage": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "cost_usd": 0.0, "by_stage": {}},
            "claims": claims.iter().map(|(id, source, quote)| json!({
                "id": id, "subquestion": "q1", "text": quote, "verdict": "supported",
                "citations": [{"source": source, "sentence": 0, "quote": quote, "quote_sha256": ""}],
            })).collect::<Vec<_>>(),
            "sources": sources.iter().map(|(id, locator, sha)| json!({
                "id": id, "locator": locator, "title": locator, "content_sha256": sha,
                "score": 1.0, "status": "ok",
            })).collect::<Vec<_>>(),
        }))
        .expect("a report")
    }

    fn docs(pairs: &[(&str, &str)]) -> Documents {
        pairs
            .iter()
            .map(|(l, s)| (l.to_string(), s.to_string()))
            .collect()
    }

    #[test]
    fn a_changed_figure_an_added_document_and_a_removed_one_are_told_apart() {
        let then = report(
            "parent",
            &[
                ("c1", "S1", "Fleet uptime was 97.1% in the third quarter."),
                ("c2", "S2", "The Leeds depot opened in March."),
                ("c3", "S3", "The old plan had six routes."),
            ],
            &[
                ("S1", "ops.md", "a1"),
                ("S2", "depots.md", "b1"),
                ("S3", "plan.md", "p1"),
            ],
        );
        let now = report(
            "refresh",
            &[
                ("c1", "S1", "Fleet uptime was 98.4% in the third quarter."),
                ("c2", "S2", "The Leeds depot opened in March."),
                ("c3", "S3", "A second shift starts in June."),
            ],
            &[
                ("S1", "ops.md", "a2"),
                ("S2", "depots.md", "b1"),
                ("S3", "shifts.md", "s1"),
            ],
        );
        let before = docs(&[("ops.md", "a1"), ("depots.md", "b1"), ("plan.md", "p1")]);
        let after = docs(&[("ops.md", "a2"), ("depots.md", "b1"), ("shifts.md", "s1")]);
        let text = |sha: &str| {
            (sha == "a2").then(|| "Fleet uptime was 98.4% in the third quarter.".to_string())
        };
        let then = Then {
            report: &then,
            documents: &before,
            since: "2026-11-05".into(),
        };
        let changes = changes(&then, &now, &after, &text);
        assert_eq!(changes.new_documents, ["shifts.md"]);
        assert_eq!(changes.changed_documents, ["ops.md"]);
        assert_eq!(changes.removed_documents, ["plan.md"]);
        assert_eq!(changes.values.len(), 1);
        let value = &changes.values[0];
        assert_eq!(
            (value.now.as_str(), value.was.locator.as_str()),
            ("c1", "ops.md")
        );
        assert_eq!(value.old_values, ["97.1"]);
        assert_eq!(value.new_values, ["98.4"]);
        assert_eq!(
            changes.added,
            ["c3"],
            "the new document's claim, not the unchanged one's"
        );
        assert_eq!(changes.no_longer_supported.len(), 1);
        assert_eq!(changes.no_longer_supported[0].locator, "plan.md");
    }

    #[test]
    fn nothing_changed_is_an_empty_change() {
        let report = report(
            "r",
            &[("c1", "S1", "Uptime was 97.1%.")],
            &[("S1", "ops.md", "a1")],
        );
        let documents = docs(&[("ops.md", "a1")]);
        let then = Then {
            report: &report,
            documents: &documents,
            since: "2026-11-05".into(),
        };
        let changes = changes(&then, &report, &documents, &|_| None);
        assert!(changes.added.is_empty() && changes.values.is_empty());
        assert!(changes.no_longer_supported.is_empty());
        assert!(changes.new_documents.is_empty() && changes.changed_documents.is_empty());
    }
}
