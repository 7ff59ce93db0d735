//! The report's "What the sources do not settle" section: what no document covers,
//! what deepening left open, claims the judge did not accept, and sentences the
//! grounding check dropped.

use std::fmt::Write as _;

use deepr_evidence::report::{Claim, Report, Verdict};

use super::{md_text, Footnotes};

/// "What the sources do not settle": subquestions without evidence, what deepening
/// found or left open, claims the judge did not accept, and sentences a writer wrote
/// that the grounding check dropped.
pub(super) fn unsettled(out: &mut String, report: &Report, notes: &mut Footnotes) {
    let _ = writeln!(out, "## What the sources do not settle\n");
    let mut any = false;
    for gap in &report.gaps {
        any = true;
        let _ = writeln!(out, "- {}", md_text(gap));
    }
    let failed: Vec<String> = report
        .coverage
        .iter()
        .filter(|c| {
            c.status != deepr_evidence::report::CallStatus::Ok
                && c.status != deepr_evidence::report::CallStatus::NoResults
        })
        .map(|c| format!("{} ({})", c.provider, c.status.as_str()))
        .collect();
    // A follow-up that found nothing new is deepening's business: Run details say so.
    for subq in report.subquestions.iter().filter(|s| s.round == 0) {
        if is_answered(report, &subq.id) {
            continue;
        }
        any = true;
        let why = if failed.is_empty() {
            "no evidence was found in the searched sources beyond what other sections quote"
                .to_string()
        } else {
            format!(
                "no evidence was found beyond what other sections quote; some searches failed: {}",
                failed.join(", ")
            )
        };
        let _ = writeln!(out, "- *{}* — {why}.", md_text(&subq.text));
    }
    let rejected: Vec<&Claim> = report
        .claims
        .iter()
        .filter(|c| c.verdict == Verdict::Unsupported)
        .collect();
    if !rejected.is_empty() {
        any = true;
        let _ = writeln!(
            out,
            "- Claims not supported by their own quotes (left out of the text, kept for transparency):"
        );
        for claim in rejected {
            let _ = writeln!(
                out,
                "  - ~~{}~~{}",
                md_text(&claim.text),
                notes.refs(std::iter::once(claim))
            );
        }
    }
    let dropped = &report.article.dropped;
    if !dropped.is_empty() {
        any = true;
        let _ = writeln!(
            out,
            "- {} sentence(s) a writer wrote were left out because they do not stand on the quotes they cite:",
            dropped.len()
        );
        for d in dropped {
            let _ = writeln!(
                out,
                "  - ({}) {} — {}",
                md_text(&d.section),
                md_text(&d.text),
                md_text(&d.reason)
            );
        }
    }
    if !any {
        let _ = writeln!(out, "Every subquestion found supported evidence.");
    }
    let _ = writeln!(out);
}

/// Whether a subquestion has a claim the judge did not reject.
pub(super) fn is_answered(report: &Report, subquestion: &str) -> bool {
    report
        .claims
        .iter()
        .any(|c| c.subquestion == subquestion && c.verdict != Verdict::Unsupported)
}
