//! A refresh's "What changed since …" section: figures restated with other values (old
//! quote → new claim), claims new or changed documents add, and earlier claims their
//! documents no longer state. New claims cite their footnotes; earlier quotes are shown
//! as they were, with their document and its date then.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use deepr_evidence::report::{Claim, PastClaim, Report};

use super::{md_text, Footnotes};

pub(super) fn changed(
    out: &mut String,
    report: &Report,
    claims: &BTreeMap<&str, &Claim>,
    notes: &mut Footnotes,
) {
    let Some(changes) = &report.changes else {
        return;
    };
    let _ = writeln!(out, "## What changed since {}\n", changes.since);
    let counted = |n: usize, what: &str| format!("{n} {what}");
    let _ = writeln!(
        out,
        "Compared with run `{}`: {}, {}, {}.\n",
        changes.parent_run,
        counted(changes.new_documents.len(), "new documents"),
        counted(changes.changed_documents.len(), "changed"),
        counted(changes.removed_documents.len(), "removed")
    );
    if changes.values.is_empty()
        && changes.added.is_empty()
        && changes.no_longer_supported.is_empty()
    {
        let _ = writeln!(out, "No claim changed.\n");
        return;
    }
    if !changes.values.is_empty() {
        let _ = writeln!(out, "**Values that changed**\n");
        for value in &changes.values {
            let Some(claim) = claims.get(value.now.as_str()) else {
                continue;
            };
            let _ = writeln!(
                out,
                "- {} → {}: {}{} (was: {})",
                value.old_values.join(", "),
                value.new_values.join(", "),
                md_text(&claim.text),
                notes.refs(std::iter::once(*claim)),
                then(&value.was)
            );
        }
        let _ = writeln!(out);
    }
    if !changes.added.is_empty() {
        let _ = writeln!(out, "**Added**\n");
        for id in &changes.added {
            if let Some(claim) = claims.get(id.as_str()) {
                let _ = writeln!(
                    out,
                    "- {}{}",
                    md_text(&claim.text),
                    notes.refs(std::iter::once(*claim))
                );
            }
        }
        let _ = writeln!(out);
    }
    if !changes.no_longer_supported.is_empty() {
        let _ = writeln!(out, "**No longer supported**\n");
        for past in &changes.no_longer_supported {
            let why = if changes.removed_documents.contains(&past.locator) {
                "its document was removed"
            } else {
                "its document no longer says so"
            };
            let _ = writeln!(
                out,
                "- {} ({why}; was: {})",
                md_text(&past.text),
                then(past)
            );
        }
        let _ = writeln!(out);
    }
}

/// An earlier quote as it was: “quote” — document, date.
fn then(past: &PastClaim) -> String {
    format!(
        "“{}” — `{}`{}",
        md_text(&past.quote),
        past.locator.replace('`', "'"),
        past.date
            .as_deref()
            .map(|d| format!(", {d}"))
            .unwrap_or_default()
    )
}
