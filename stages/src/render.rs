//! Rendering: finished pipeline → `report.json` ([`Report`]) and the markdown report.
//!
//! Everything above `## Run details` is a pure function of node outputs and archived
//! texts: no run id, state dir, output path or clock. Sources are numbered S1, S2, …
//! by (score desc, locator); footnotes are numbered by first appearance, one per
//! distinct cited sentence. A footnote reads `[^N]: "QUOTE" — LOCATOR`, where QUOTE is
//! the archived sentence with whitespace runs folded to one space (so it fits on one
//! line); `normalise(QUOTE)` equals `normalise` of the exact slice, which is what
//! `deepr verify` compares. report.json carries the exact slice.

use std::collections::BTreeMap;

pub use crate::escape::md_text;
use crate::escape::one_line;
use std::fmt::Write as _;

use deepr_evidence::report::{
    Citation, Claim, Paragraph, Report, Source, Subquestion, Usage, REPORT_SCHEMA,
};
use deepr_orchestrator::TextArchive;

use crate::research::{ResearchConfig, ResearchResult};

mod changed;
mod unsettled;
use unsettled::unsettled;

/// What only `## Run details` may show.
#[derive(Clone, Debug, Default)]
pub struct RunDetails {
    pub run_id: String,
    /// Free-form lines (state dir, output path, time, models…).
    pub lines: Vec<(String, String)>,
}

/// Stop status of a run.
#[derive(Clone, Debug, Default)]
pub struct Completion {
    pub complete: bool,
    pub incomplete_reason: Option<String>,
}

/// Source ids by content hash: S1… by (score desc, locator).
fn source_ids(result: &ResearchResult) -> BTreeMap<String, String> {
    // Off-topic documents (triage) are numbered after every document in scope.
    let mut ordered: Vec<_> = result.sources.values().collect();
    ordered.sort_by(|a, b| {
        a.off_topic
            .is_some()
            .cmp(&b.off_topic.is_some())
            .then_with(|| b.score.total_cmp(&a.score))
            .then_with(|| a.doc.locator.cmp(&b.doc.locator))
    });
    ordered
        .iter()
        .enumerate()
        .map(|(i, s)| (s.doc.content_sha256.clone(), format!("S{}", i + 1)))
        .collect()
}

pub fn build_report(
    config: &ResearchConfig,
    result: &ResearchResult,
    archive: &dyn TextArchive,
    run_id: &str,
    usage: Usage,
    completion: &Completion,
) -> Report {
    let ids = source_ids(result);
    let claims = result
        .claims
        .iter()
        .map(|(claim, verdict)| Claim {
            id: claim.id.clone(),
            subquestion: claim.subquestion.clone(),
            text: claim.text.clone(),
            verdict: *verdict,
            citations: claim
                .citations
                .iter()
                .filter_map(|c| {
                    let quote = match &c.written_quote {
                        Some(written) => written.clone(),
                        None => archive
                            .get(&c.content_sha256)?
                            .quote(c.sentence, c.sentence_end)?
                            .to_string(),
                    };
                    Some(Citation {
                        source: ids.get(&c.content_sha256)?.clone(),
                        sentence: c.sentence,
                        sentence_end: c.sentence_end,
                        quote_sha256: deepr_evidence::quote_sha256(&quote),
                        quote,
                        place: crate::references::place_of(
                            result,
                            archive,
                            &c.content_sha256,
                            c.sentence,
                        ),
                    })
                })
                .collect(),
        })
        .collect();
    let mut sources: Vec<Source> = result
        .sources
        .values()
        .filter_map(|s| {
            Some(Source {
                id: ids.get(&s.doc.content_sha256)?.clone(),
                locator: s.doc.locator.clone(),
                title: s.doc.title.clone(),
                content_sha256: s.doc.content_sha256.clone(),
                score: s.score,
                status: "ok".into(),
                date: s.doc.date.clone(),
                doc_status: s.doc.outline.status.clone(),
                author: s.doc.outline.author.clone(),
                date_basis: s.doc.outline.date_basis.clone(),
                off_topic: s.off_topic.clone(),
            })
        })
        .collect();
    sources.sort_by_key(|s| {
        s.id.trim_start_matches('S')
            .parse::<u64>()
            .unwrap_or(u64::MAX)
    });
    let mut report = Report {
        schema: REPORT_SCHEMA.into(),
        run_id: run_id.into(),
        topic: config.topic.clone(),
        depth: config.depth.as_str().into(),
        strategy: config.strategy.as_str().into(),
        complete: completion.complete,
        incomplete_reason: completion.incomplete_reason.clone(),
        subquestions: result
            .subquestions
            .iter()
            .map(|s| Subquestion {
                id: s.id.clone(),
                text: s.text.clone(),
                round: s.round,
            })
            .collect(),
        claims,
        conflicts: result.conflicts.clone(),
        sources,
        coverage: result.coverage.clone(),
        usage,
        article: crate::article::build_article(result),
        corpus_files: config.corpus_files.clone(),
        gaps: Vec::new(),
        changes: None,
    };
    report.gaps = crate::gaps::reader_gaps(&report, result, archive);
    report
}

/// Footnote numbering: one per distinct (source, sentence), by first appearance.
#[derive(Default)]
struct Footnotes {
    numbers: BTreeMap<(String, u32, String), usize>,
    order: Vec<(String, u32, String)>,
}

impl Footnotes {
    fn cite(&mut self, citation: &Citation) -> usize {
        let key = (
            citation.source.clone(),
            citation.sentence,
            citation.quote.clone(),
        );
        if let Some(n) = self.numbers.get(&key) {
            return *n;
        }
        self.order.push((
            citation.source.clone(),
            citation.sentence,
            citation.quote.clone(),
        ));
        let n = self.order.len();
        self.numbers.insert(key, n);
        n
    }

    /// The footnote numbers of a claim's citations.
    fn numbers(&mut self, claim: &Claim) -> Vec<usize> {
        claim.citations.iter().map(|c| self.cite(c)).collect()
    }

    /// The footnote marks of one sentence's claims: each footnote once, in order
    /// (two claims citing one quote give `[^2]`, never `[^2][^3][^2]`).
    fn refs<'c>(&mut self, claims: impl Iterator<Item = &'c Claim>) -> String {
        let mut seen: Vec<usize> = Vec::new();
        for claim in claims {
            for n in self.numbers(claim) {
                if !seen.contains(&n) {
                    seen.push(n);
                }
            }
        }
        seen.iter().map(|n| format!("[^{n}]")).collect()
    }
}

/// A paragraph of prose: each sentence followed by the footnotes of the claims it
/// cites.
fn prose(paragraph: &Paragraph, claims: &BTreeMap<&str, &Claim>, notes: &mut Footnotes) -> String {
    paragraph
        .sentences
        .iter()
        .map(|s| {
            let refs = notes.refs(
                s.claims
                    .iter()
                    .filter_map(|id| claims.get(id.as_str()).copied()),
            );
            format!("{}{refs}", md_text(&s.text))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn render_markdown(report: &Report, result: &ResearchResult, details: &RunDetails) -> String {
    let mut out = String::new();
    let mut notes = Footnotes::default();
    let claims: BTreeMap<&str, &Claim> = report.claims.iter().map(|c| (c.id.as_str(), c)).collect();

    let brief = deepr_tasks::brief::parse_brief(&report.topic);
    out.push_str(&crate::escape::title_block(&brief, &report.topic));
    if !report.complete {
        let _ = writeln!(
            out,
            "> **Incomplete report.** {}\n",
            md_text(
                report
                    .incomplete_reason
                    .as_deref()
                    .unwrap_or("The run stopped before finishing.")
            )
        );
    }
    let article = &report.article;
    let _ = writeln!(out, "## Summary\n");
    if article.summary.is_empty() {
        let _ = writeln!(
            out,
            "No supported claims were found in the searched sources.\n"
        );
    }
    for paragraph in &article.summary {
        let _ = writeln!(out, "{}\n", prose(paragraph, &claims, &mut notes));
    }
    for (n, section) in article.sections.iter().enumerate() {
        let _ = writeln!(out, "## {}. {}\n", n + 1, md_text(&section.heading));
        for paragraph in &section.paragraphs {
            let _ = writeln!(out, "{}\n", prose(paragraph, &claims, &mut notes));
        }
    }

    conflicts_section(&mut out, report, &claims, &mut notes);
    changed::changed(&mut out, report, &claims, &mut notes);
    unsettled(&mut out, report, &mut notes);

    crate::references::references_section(&mut out, report, result);
    quote_footnotes(&mut out, report, &notes);
    run_details(&mut out, report, result, details, &brief);
    out
}

/// `## Where sources disagree`: each conflict with its claims, their dated sources.
fn conflicts_section(
    out: &mut String,
    report: &Report,
    claims: &BTreeMap<&str, &Claim>,
    notes: &mut Footnotes,
) {
    let _ = writeln!(out, "## Where sources disagree\n");
    if report.conflicts.is_empty() {
        let _ = writeln!(
            out,
            "No disagreements were found among the extracted claims.\n"
        );
    }
    for conflict in &report.conflicts {
        let _ = writeln!(
            out,
            "- **{}** ({})",
            md_text(&conflict.summary),
            conflict.subquestion
        );
        let newest = crate::references::newest_date(report, conflict, claims);
        for id in &conflict.claims {
            if let Some(claim) = claims.get(id.as_str()) {
                // A claim citing two rows of one source names the source once.
                let mut sources: Vec<String> = Vec::new();
                for citation in &claim.citations {
                    let dated = crate::references::dated_source(
                        report,
                        &citation.source,
                        newest.as_deref(),
                    );
                    if !sources.contains(&dated) {
                        sources.push(dated);
                    }
                }
                let _ = writeln!(
                    out,
                    "  - {} — {}{}",
                    sources.join(", "),
                    md_text(&claim.text),
                    notes.refs(std::iter::once(*claim))
                );
            }
        }
    }
    if !report.conflicts.is_empty() {
        let _ = writeln!(out);
    }
}

/// `### Quotes`: one footnote per cited sentence, with its place in the document.
fn quote_footnotes(out: &mut String, report: &Report, notes: &Footnotes) {
    let locators: BTreeMap<&str, &Source> =
        report.sources.iter().map(|s| (s.id.as_str(), s)).collect();
    let _ = writeln!(out, "\n### Quotes\n");
    let places: BTreeMap<(&str, u32), &str> = report
        .claims
        .iter()
        .flat_map(|c| &c.citations)
        .filter_map(|c| Some(((c.source.as_str(), c.sentence), c.place.as_deref()?)))
        .collect();
    for (n, (source, sentence, quote)) in notes.order.iter().enumerate() {
        let locator = locators
            .get(source.as_str())
            .map(|s| s.locator.as_str())
            .unwrap_or(source);
        let place = places
            .get(&(source.as_str(), *sentence))
            .map(|p| format!("#{}", deepr_evidence::report::encode_place(p)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "[^{}]: \"{}\" — {locator}{place}",
            n + 1,
            one_line(quote)
        );
    }
}

/// `## Run details`: what only this run shows (ids, brief as parsed, usage by stage).
fn run_details(
    out: &mut String,
    report: &Report,
    result: &ResearchResult,
    details: &RunDetails,
    brief: &deepr_tasks::brief::Brief,
) {
    let _ = writeln!(out, "\n## Run details\n");
    let _ = writeln!(out, "- Run id: `{}`", details.run_id);
    for (key, value) in brief.details() {
        let _ = writeln!(out, "- {key}: {}", md_text(&value));
    }
    for (k, v) in &details.lines {
        let _ = writeln!(out, "- {k}: {v}");
    }
    let u = &report.usage;
    let _ = writeln!(
        out,
        "- LLM calls: {} ({} prompt + {} completion tokens, {} cached, ${:.4})",
        u.calls, u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.cost_usd
    );
    let _ = writeln!(out, "- Judge calls per round: {:?}", result.judge_calls);
    for reason in &result.deepen_reasons {
        let _ = writeln!(
            out,
            "- Deepening: {}.",
            md_text(reason.trim_end_matches('.'))
        );
    }
    let empty = empty_follow_ups(report);
    if !empty.is_empty() {
        let _ = writeln!(
            out,
            "- Follow-ups that found nothing beyond what the sections quote: {}",
            md_text(&empty.join(" · "))
        );
    }
    let _ = writeln!(
        out,
        "- Nodes run now: {}, restored from checkpoints: {}",
        result.executed_nodes, result.restored_nodes
    );
    let _ = writeln!(
        out,
        "\n| stage | calls | prompt tokens | completion tokens | cost |\n|---|---|---|---|---|"
    );
    for (stage, t) in &u.by_stage {
        let _ = writeln!(
            out,
            "| {stage} | {} | {} | {} | ${:.4} |",
            t.calls, t.prompt_tokens, t.completion_tokens, t.cost_usd
        );
    }
}

/// The follow-ups (deepening's subquestions) that found nothing new, for Run details.
fn empty_follow_ups(report: &Report) -> Vec<&str> {
    report
        .subquestions
        .iter()
        .filter(|s| s.round > 0 && !unsettled::is_answered(report, &s.id))
        .map(|s| s.text.as_str())
        .collect()
}

/// The part of a markdown report above `## Run details` (what must be identical
/// between an interrupted-and-resumed run and an uninterrupted one).
pub fn above_run_details(markdown: &str) -> &str {
    markdown
        .split("\n## Run details")
        .next()
        .unwrap_or(markdown)
}

#[cfg(test)]
mod tests {
    use deepr_evidence::report::{Citation, Claim, Report, Usage, Verdict};

    use super::*;
    use crate::types::{Subq, SummaryPoint};

    /// Page and model text cannot add headings, footnote definitions or HTML.
    #[test]
    fn untrusted_text_cannot_inject_markdown_structure() {
        let evil =
            "# Owned\n[^9]: \"forged quote\" — https://evil.example <script>alert(1)</script>";
        let quote = "A real sentence.";
        let mut report = Report {
            schema: REPORT_SCHEMA.into(),
            run_id: "r".into(),
            topic: evil.into(),
            depth: "standard".into(),
            strategy: "linear".into(),
            complete: true,
            incomplete_reason: None,
            subquestions: vec![deepr_evidence::report::Subquestion {
                id: "q1".into(),
                text: evil.into(),
                round: 0,
            }],
            claims: vec![Claim {
                id: "q1-c1".into(),
                subquestion: "q1".into(),
                text: evil.into(),
                verdict: Verdict::Supported,
                citations: vec![Citation {
                    source: "S1".into(),
                    sentence: 0,
                    sentence_end: None,
                    quote: quote.into(),
                    quote_sha256: deepr_evidence::quote_sha256(quote),
                    place: None,
                }],
            }],
            conflicts: vec![],
            sources: vec![],
            coverage: vec![],
            usage: Usage::default(),
            article: Default::default(),
            corpus_files: None,
            gaps: Vec::new(),
            changes: None,
        };
        let result = ResearchResult {
            subquestions: vec![Subq {
                id: "q1".into(),
                text: evil.into(),
                round: 0,
                parent: None,
                queries: Vec::new(),
            }],
            summary: vec![SummaryPoint {
                text: evil.into(),
                claim_ids: vec!["q1-c1".into()],
            }],
            ..Default::default()
        };
        report.article = crate::article::build_article(&result);
        assert_eq!(
            report.article.summary.len(),
            1,
            "the evil summary is rendered"
        );
        let markdown = render_markdown(&report, &result, &RunDetails::default());
        let footnotes: Vec<&str> = markdown.lines().filter(|l| l.starts_with("[^")).collect();
        assert_eq!(footnotes, ["[^1]: \"A real sentence.\" — S1"], "{markdown}");
        assert!(!markdown.lines().any(|l| l.starts_with("# Owned")));
        assert_eq!(
            markdown.lines().filter(|l| l.starts_with("# ")).count(),
            1,
            "one title only"
        );
        assert!(!markdown.contains("<script>"));
        // Code fences, links, images and link references cannot be formed either.
        for evil in [
            "```rust",
            "~~~ all that follows is code",
            "[x](javascript:alert(1)) ![img](https://evil.example/t.png)",
            "[ref]: https://evil.example",
        ] {
            let shown = md_text(evil);
            assert!(
                !shown.starts_with("```") && !shown.starts_with("~~~"),
                "{shown}"
            );
            // Every bracket is escaped.
            let bare = shown.replace("\\[", "").replace("\\]", "");
            assert!(!bare.contains('[') && !bare.contains(']'), "{shown}");
        }
    }

    /// Two claims of one sentence citing one quote: its footnote is marked once.
    #[test]
    fn a_sentence_marks_each_footnote_once() {
        let citation = |sentence: u32, quote: &str| Citation {
            source: "S1".into(),
            sentence,
            sentence_end: None,
            quote: quote.into(),
            quote_sha256: deepr_evidence::quote_sha256(quote),
            place: None,
        };
        let claim = |id: &str, citations: Vec<Citation>| Claim {
            id: id.into(),
            subquestion: "q1".into(),
            text: "A claim.".into(),
            verdict: Verdict::Supported,
            citations,
        };
        let first = claim("c1", vec![citation(0, "One."), citation(1, "Two.")]);
        let second = claim("c2", vec![citation(1, "Two."), citation(2, "Three.")]);
        let mut notes = Footnotes::default();
        assert_eq!(notes.refs([&first, &second].into_iter()), "[^1][^2][^3]");
        assert_eq!(notes.refs(std::iter::once(&second)), "[^2][^3]");
    }
}
