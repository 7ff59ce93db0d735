//! The report's other formats: one self-contained HTML file, a bullet summary, and
//! question/answer flashcards (TSV that Anki imports). Like the markdown report, each is
//! a pure function of the report and run details; every piece of page or model text is
//! escaped, so it can never add markup, scripts or requests.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use deepr_evidence::report::{Citation, Claim, Paragraph, Report, Verdict};

use crate::render::RunDetails;
use crate::research::ResearchResult;

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// HTML-escape text (element content and attribute values).
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
:root{--ink:#1d2330;--muted:#5b6474;--line:#d9dee7;--accent:#2f5fb3;--warn:#8a4b00;--warnbg:#fff4e0}
*{box-sizing:border-box}
body{margin:0;font:17px/1.6 Georgia,'Iowan Old Style','Times New Roman',serif;color:var(--ink);background:#fbfbf8}
main{max-width:46rem;margin:0 auto;padding:2.5rem 1.25rem 5rem}
h1{font-size:2rem;line-height:1.25;margin:0 0 1.5rem}
h2{font-size:1.35rem;margin:2.5rem 0 .75rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
h3{font-size:1.05rem;margin:1.5rem 0 .5rem}
nav#toc{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.75rem 1.25rem;font-family:system-ui,sans-serif;font-size:.9rem}
nav#toc h2{font-size:1rem;border:0;margin:.25rem 0}
nav#toc ol{list-style:none;padding-left:.25rem;margin:.25rem 0}
a{color:var(--accent)}
.cite{position:relative;text-decoration:none;font-family:system-ui,sans-serif;font-size:.75em;vertical-align:super;padding:0 .1em}
.cite .quote{display:none;position:absolute;left:0;top:1.6em;z-index:10;width:22rem;max-width:80vw;background:#fff;border:1px solid var(--line);border-radius:6px;box-shadow:0 4px 14px rgba(0,0,0,.12);padding:.6rem .8rem;font:14px/1.45 system-ui,sans-serif;color:var(--ink)}
.cite:hover .quote,.cite:focus .quote{display:block}
.verdict{font-family:system-ui,sans-serif;font-size:.75rem;border:1px solid var(--line);border-radius:999px;padding:0 .45rem;margin-left:.35rem;color:var(--muted)}
.rejected{color:var(--muted);text-decoration:line-through}
section.disagree{background:var(--warnbg);border-left:4px solid var(--warn);padding:.25rem 1rem 1rem;border-radius:4px}
section.disagree h2{color:var(--warn);border:0}
.incomplete{background:var(--warnbg);border:1px solid var(--warn);padding:.75rem 1rem;border-radius:6px}
table{border-collapse:collapse;width:100%;font:14px/1.4 system-ui,sans-serif}
th,td{border-bottom:1px solid var(--line);text-align:left;padding:.35rem .4rem;vertical-align:top}
ol.footnotes{font-size:.9rem}
ol.footnotes li{margin:.35rem 0}
.details{font:13px/1.5 system-ui,sans-serif;color:var(--muted)}
@media print{.cite .quote{display:none!important}nav#toc{display:none}}
";

/// Footnote numbering by first appearance, one per distinct (source, sentence, quote).
#[derive(Default)]
struct Notes {
    numbers: BTreeMap<(String, u32, String), usize>,
    order: Vec<(String, String)>,
}

impl Notes {
    fn refs(&mut self, claim: &Claim, locators: &BTreeMap<&str, &str>) -> String {
        self.cite_all(claim.citations.iter(), locators)
    }

    /// The marks of one sentence's claims: each quote once, in order.
    fn sentence_refs<'c>(
        &mut self,
        claims: impl Iterator<Item = &'c Claim>,
        locators: &BTreeMap<&str, &str>,
    ) -> String {
        let mut seen: Vec<&Citation> = Vec::new();
        for citation in claims.flat_map(|c| c.citations.iter()) {
            let same = |s: &&Citation| {
                s.source == citation.source
                    && s.sentence == citation.sentence
                    && s.quote == citation.quote
            };
            if !seen.iter().any(same) {
                seen.push(citation);
            }
        }
        self.cite_all(seen.into_iter(), locators)
    }

    fn cite_all<'c>(
        &mut self,
        citations: impl Iterator<Item = &'c Citation>,
        locators: &BTreeMap<&str, &str>,
    ) -> String {
        let mut out = String::new();
        for c in citations {
            let key = (c.source.clone(), c.sentence, c.quote.clone());
            let locator = locators
                .get(c.source.as_str())
                .copied()
                .unwrap_or(c.source.as_str());
            let (n, first) = match self.numbers.get(&key) {
                Some(n) => (*n, false),
                None => {
                    self.order.push((c.quote.clone(), locator.to_string()));
                    let n = self.order.len();
                    self.numbers.insert(key, n);
                    (n, true)
                }
            };
            let id = if first {
                format!(" id=\"ref-{n}\"")
            } else {
                String::new()
            };
            let _ = write!(
                out,
                "<a class=\"cite\"{id} href=\"#fn-{n}\">[{n}]<span class=\"quote\" role=\"tooltip\">“{}” — {}</span></a>",
                esc(&c.quote),
                esc(locator)
            );
        }
        out
    }
}

/// One self-contained HTML file: no external scripts, fonts, styles or images (a
/// Content-Security-Policy forbids any request), a table of contents, citations as
/// footnotes whose quote shows on hover or keyboard focus.
pub fn render_html(report: &Report, result: &ResearchResult, details: &RunDetails) -> String {
    let mut out = String::new();
    let locators: BTreeMap<&str, &str> = report
        .sources
        .iter()
        .map(|s| (s.id.as_str(), s.locator.as_str()))
        .collect();
    let claims: BTreeMap<&str, &Claim> = report.claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut notes = Notes::default();
    let title = deepr_tasks::brief::parse_brief(&report.topic).title(&report.topic);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    if title != one_line(&report.topic) {
        let _ = writeln!(
            out,
            "<p class=\"brief\"><strong>Brief.</strong> {}</p>",
            esc(&report.topic)
        );
    }
    if !report.complete {
        let _ = writeln!(
            out,
            "<p class=\"incomplete\"><strong>Incomplete report.</strong> {}</p>",
            esc(report
                .incomplete_reason
                .as_deref()
                .unwrap_or("The run stopped before finishing."))
        );
    }
    let article = &report.article;
    out.push_str("<nav id=\"toc\" aria-label=\"Contents\"><h2>Contents</h2><ol>\n<li><a href=\"#summary\">Summary</a></li>\n");
    for (n, section) in article.sections.iter().enumerate() {
        let _ = writeln!(
            out,
            "<li><a href=\"#sec-{}\">{}. {}</a></li>",
            n + 1,
            n + 1,
            esc(&section.heading)
        );
    }
    out.push_str("<li><a href=\"#disagree\">Where sources disagree</a></li>\n<li><a href=\"#unsettled\">What the sources do not settle</a></li>\n<li><a href=\"#references\">References</a></li>\n<li><a href=\"#run-details\">Run details</a></li>\n</ol></nav>\n");

    let paragraph = |out: &mut String, p: &Paragraph, notes: &mut Notes| {
        let sentences: Vec<String> = p
            .sentences
            .iter()
            .map(|s| {
                let refs = notes.sentence_refs(
                    s.claims
                        .iter()
                        .filter_map(|id| claims.get(id.as_str()).copied()),
                    &locators,
                );
                format!("{}{refs}", esc(&s.text))
            })
            .collect();
        let _ = writeln!(out, "<p>{}</p>", sentences.join(" "));
    };
    out.push_str("<section id=\"summary\"><h2>Summary</h2>\n");
    if article.summary.is_empty() {
        out.push_str("<p>No supported claims were found in the searched sources.</p>\n");
    }
    for p in &article.summary {
        paragraph(&mut out, p, &mut notes);
    }
    out.push_str("</section>\n");
    for (n, section) in article.sections.iter().enumerate() {
        let _ = writeln!(
            out,
            "<section id=\"sec-{}\"><h2>{}. {}</h2>",
            n + 1,
            n + 1,
            esc(&section.heading)
        );
        for p in &section.paragraphs {
            paragraph(&mut out, p, &mut notes);
        }
        out.push_str("</section>\n");
    }

    html_conflicts(&mut out, report, &claims, &locators, &mut notes);
    html_unsettled(&mut out, report, &locators, &mut notes);
    html_references(&mut out, report, &notes);
    html_run_details(&mut out, report, details, &result.deepen_reasons);
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// Where sources disagree: each conflict with its claims.
fn html_conflicts(
    out: &mut String,
    report: &Report,
    claims: &BTreeMap<&str, &Claim>,
    locators: &BTreeMap<&str, &str>,
    notes: &mut Notes,
) {
    out.push_str("<section id=\"disagree\" class=\"disagree\"><h2>Where sources disagree</h2>\n");
    if report.conflicts.is_empty() {
        out.push_str("<p>No disagreements were found among the extracted claims.</p>\n");
    } else {
        out.push_str("<ul>\n");
        for conflict in &report.conflicts {
            let _ = write!(out, "<li><strong>{}</strong><ul>", esc(&conflict.summary));
            for id in &conflict.claims {
                if let Some(claim) = claims.get(id.as_str()) {
                    let sources: Vec<&str> =
                        claim.citations.iter().map(|c| c.source.as_str()).collect();
                    let refs = notes.refs(claim, locators);
                    let _ = write!(
                        out,
                        "<li>{} — {}{refs}</li>",
                        esc(&sources.join(", ")),
                        esc(&claim.text)
                    );
                }
            }
            out.push_str("</ul></li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// What the sources do not settle: unanswered subquestions, deepening reasons, rejected
/// claims and sentences left out.
fn html_unsettled(
    out: &mut String,
    report: &Report,
    locators: &BTreeMap<&str, &str>,
    notes: &mut Notes,
) {
    let article = &report.article;
    out.push_str("<section id=\"unsettled\"><h2>What the sources do not settle</h2>\n<ul>\n");
    for subq in report.subquestions.iter().filter(|s| s.round == 0) {
        let answered = report
            .claims
            .iter()
            .any(|c| c.subquestion == subq.id && c.verdict != Verdict::Unsupported);
        if !answered {
            let _ = writeln!(
                out,
                "<li><em>{}</em> — no evidence was found in the searched sources beyond what other sections quote.</li>",
                esc(&subq.text)
            );
        }
    }
    for gap in &report.gaps {
        let _ = writeln!(out, "<li>{}</li>", esc(gap));
    }
    for claim in report
        .claims
        .iter()
        .filter(|c| c.verdict == Verdict::Unsupported)
    {
        let refs = notes.refs(claim, locators);
        let _ = writeln!(
            out,
            "<li><span class=\"rejected\">{}</span>{refs}<span class=\"verdict\">not supported by its quotes</span></li>",
            esc(&claim.text)
        );
    }
    for d in &article.dropped {
        let _ = writeln!(
            out,
            "<li><span class=\"rejected\">{}</span><span class=\"verdict\">left out: {}</span></li>",
            esc(&d.text),
            esc(&d.reason)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

/// References: sources, search coverage and the quote footnotes.
fn html_references(out: &mut String, report: &Report, notes: &Notes) {
    out.push_str("<section id=\"references\"><h2>References</h2>\n<table><thead><tr><th>id</th><th>source</th><th>locator</th><th>score</th><th>status</th></tr></thead><tbody>\n");
    for s in &report.sources {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{:.2}</td><td>{}</td></tr>",
            esc(&s.id),
            esc(&s.title),
            esc(&s.locator),
            s.score,
            esc(&s.status)
        );
    }
    out.push_str("</tbody></table>\n<h3>Search coverage</h3>\n<table><thead><tr><th>provider</th><th>query</th><th>status</th><th>hits</th></tr></thead><tbody>\n");
    for c in &report.coverage {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.provider),
            esc(&c.query),
            c.status.as_str(),
            c.hits
        );
    }
    out.push_str("</tbody></table>\n<h3>Quotes</h3>\n<ol class=\"footnotes\">\n");
    for (n, (quote, locator)) in notes.order.iter().enumerate() {
        let n = n + 1;
        let _ = writeln!(out, "<li id=\"fn-{n}\">“{}” — {} <a href=\"#ref-{n}\" aria-label=\"back to the text\">↩</a></li>", esc(quote), esc(locator));
    }
    out.push_str("</ol>\n</section>\n");
}

/// Run details: the run id, free-form lines, what deepening followed up and usage.
fn html_run_details(out: &mut String, report: &Report, details: &RunDetails, deepening: &[String]) {
    let _ = writeln!(out, "<section id=\"run-details\" class=\"details\"><h2>Run details</h2>\n<ul>\n<li>Run id: <code>{}</code></li>", esc(&details.run_id));
    for (k, v) in &details.lines {
        let _ = writeln!(out, "<li>{}: {}</li>", esc(k), esc(&v.replace('`', "")));
    }
    for reason in deepening {
        let _ = writeln!(out, "<li>Deepening: {}</li>", esc(reason));
    }
    let u = &report.usage;
    let _ = writeln!(
        out,
        "<li>LLM calls: {} ({} prompt + {} completion tokens, ${:.4})</li>\n</ul>\n</section>",
        u.calls, u.prompt_tokens, u.completion_tokens, u.cost_usd
    );
}

/// A bullet summary: one line per supported claim with its citation.
pub fn render_bullets(report: &Report) -> String {
    let locators: BTreeMap<&str, &str> = report
        .sources
        .iter()
        .map(|s| (s.id.as_str(), s.locator.as_str()))
        .collect();
    let title = deepr_tasks::brief::parse_brief(&report.topic).title(&report.topic);
    let mut out = format!("# {}\n\n", one_line(&title));
    for claim in report
        .claims
        .iter()
        .filter(|c| c.verdict == Verdict::Supported || c.verdict == Verdict::Unjudged)
    {
        let cites: Vec<String> = claim
            .citations
            .iter()
            .map(|c| {
                format!(
                    "“{}” ({})",
                    one_line(&c.quote),
                    locators
                        .get(c.source.as_str())
                        .copied()
                        .unwrap_or(c.source.as_str())
                )
            })
            .collect();
        let _ = writeln!(out, "- {} — {}", one_line(&claim.text), cites.join("; "));
    }
    out
}

/// Flashcards: `front<TAB>back` lines (Anki's TSV import), one per supported claim:
/// the subquestion on the front, the claim and its source on the back.
pub fn render_cards(report: &Report) -> String {
    let clean = |t: &str| one_line(t).replace('\t', " ");
    let questions: BTreeMap<&str, &str> = report
        .subquestions
        .iter()
        .map(|s| (s.id.as_str(), s.text.as_str()))
        .collect();
    let locators: BTreeMap<&str, &str> = report
        .sources
        .iter()
        .map(|s| (s.id.as_str(), s.locator.as_str()))
        .collect();
    let mut out = String::new();
    for claim in report
        .claims
        .iter()
        .filter(|c| c.verdict == Verdict::Supported)
    {
        let question = questions
            .get(claim.subquestion.as_str())
            .copied()
            .unwrap_or(&report.topic);
        let sources: Vec<&str> = claim
            .citations
            .iter()
            .map(|c| {
                locators
                    .get(c.source.as_str())
                    .copied()
                    .unwrap_or(c.source.as_str())
            })
            .collect();
        let _ = writeln!(
            out,
            "{}\t{} (source: {})",
            clean(question),
            clean(&claim.text),
            clean(&sources.join(", "))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepr_evidence::report::{Citation, Subquestion, Usage, REPORT_SCHEMA};

    fn report(text: &str) -> Report {
        Report {
            schema: REPORT_SCHEMA.into(),
            run_id: "r".into(),
            topic: text.into(),
            depth: "quick".into(),
            strategy: "linear".into(),
            complete: true,
            incomplete_reason: None,
            subquestions: vec![Subquestion {
                id: "q1".into(),
                text: text.into(),
                round: 0,
            }],
            claims: vec![Claim {
                id: "q1-c1".into(),
                subquestion: "q1".into(),
                text: text.into(),
                verdict: Verdict::Supported,
                citations: vec![Citation {
                    source: "S1".into(),
                    sentence: 0,
                    sentence_end: None,
                    quote: text.into(),
                    quote_sha256: String::new(),
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
        }
    }

    #[test]
    fn untrusted_text_cannot_inject_markup_or_requests() {
        let evil = "<script src=\"https://evil.example/x.js\"></script><img src=x onerror=alert(1)>\t\"q\"";
        let html = render_html(
            &report(evil),
            &ResearchResult::default(),
            &RunDetails::default(),
        );
        assert!(
            !html.contains("<script") && !html.contains("<img"),
            "{html}"
        );
        assert!(html.contains("default-src 'none'"));
        let cards = render_cards(&report(evil));
        assert_eq!(cards.lines().count(), 1);
        assert_eq!(
            cards.trim_end().split('\t').count(),
            2,
            "one tab per card: {cards}"
        );
    }
}
