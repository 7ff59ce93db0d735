//! What the report says of its sources beyond their scores: dates and document statuses beside
//! the sources of a disagreement (the newer marked), and the corpus files read and not
//! read, each with its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use deepr_evidence::report::{Claim, Report};

use crate::escape::md_text;

/// The newest date among the sources a conflict's claims cite, when they differ (an
/// old-versus-new disagreement).
pub(crate) fn newest_date(
    report: &Report,
    conflict: &deepr_evidence::report::Conflict,
    claims: &BTreeMap<&str, &Claim>,
) -> Option<String> {
    let dates: BTreeSet<&str> = conflict
        .claims
        .iter()
        .filter_map(|id| claims.get(id.as_str()))
        .flat_map(|claim| &claim.citations)
        .filter_map(|c| report.sources.iter().find(|s| s.id == c.source))
        .filter_map(|s| s.date.as_deref())
        .collect();
    (dates.len() > 1)
        .then(|| dates.last().map(|d| d.to_string()))
        .flatten()
}

/// `S2 (2026-04-14, newer)`: a source id with its date and document status, the newest of a
/// disagreement marked.
pub(crate) fn dated_source(report: &Report, id: &str, newest: Option<&str>) -> String {
    let Some(source) = report.sources.iter().find(|s| s.id == id) else {
        return id.to_string();
    };
    let mut notes: Vec<String> = source
        .date
        .iter()
        .chain(&source.doc_status)
        .map(|n| md_text(n))
        .collect();
    if newest.is_some() && source.date.as_deref() == newest {
        notes.push("newer".into());
    }
    if notes.is_empty() {
        id.to_string()
    } else {
        format!("{id} ({})", notes.join(", "))
    }
}

/// The corpus files line of References, and every file not read with its reason.
pub(crate) fn corpus_files(out: &mut String, files: Option<&deepr_evidence::report::CorpusFiles>) {
    let Some(files) = files else { return };
    let _ = writeln!(
        out,
        "\nCorpus: {} files read, {} not read.",
        files.read,
        files.skipped.len()
    );
    for file in &files.skipped {
        let _ = writeln!(
            out,
            "- not read: `{}` — {}",
            file.path.replace('`', "'"),
            md_text(&file.reason)
        );
    }
    for file in &files.partial {
        let _ = writeln!(
            out,
            "- read in part: `{}` — {}",
            file.path.replace('`', "'"),
            md_text(&file.reason)
        );
    }
}
