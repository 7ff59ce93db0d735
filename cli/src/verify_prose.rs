//! `deepr verify` on a markdown report with its sidecar: the report's prose must be
//! exactly the sidecar's article as the renderer writes it, so a paragraph edited by
//! hand in `report.md` cannot pass on the sidecar's checked sentences.

use deepr_evidence::report::Report;

/// The prose lines of a markdown report: the paragraphs between `## Summary` and
/// `## Where sources disagree`, headings left out, footnote references removed.
fn markdown_prose(markdown: &str) -> Vec<String> {
    let body = markdown
        .split_once("\n## Summary\n")
        .map(|(_, rest)| rest)
        .unwrap_or("");
    let body = body
        .split_once("\n## Where sources disagree")
        .map(|(body, _)| body)
        .unwrap_or(body);
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("## "))
        .map(|line| {
            // Footnote references are `[^N]`; prose text cannot form one (its brackets
            // are escaped).
            let mut out = String::with_capacity(line.len());
            let mut rest = line;
            while let Some(at) = rest.find("[^") {
                out.push_str(&rest[..at]);
                let after = &rest[at + 2..];
                let digits = after.chars().take_while(char::is_ascii_digit).count();
                if digits > 0 && after[digits..].starts_with(']') {
                    rest = &after[digits + 1..];
                } else {
                    out.push_str("[^");
                    rest = after;
                }
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// Where a markdown report's prose differs from its sidecar's article: the first line
/// that differs, and why.
pub fn prose_mismatch(markdown: &str, report: &Report) -> Option<(String, String)> {
    let article = &report.article;
    let mut expected: Vec<String> = Vec::new();
    if article.summary.is_empty() {
        expected.push("No supported claims were found in the searched sources.".into());
    }
    for paragraph in article
        .summary
        .iter()
        .chain(article.sections.iter().flat_map(|s| &s.paragraphs))
    {
        expected.push(
            paragraph
                .sentences
                .iter()
                .map(|s| deepr_stages::render::md_text(&s.text))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    let found = markdown_prose(markdown);
    for i in 0..found.len().max(expected.len()) {
        match (found.get(i), expected.get(i)) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(a), _) => {
                return Some((
                    a.clone(),
                    "this paragraph of report.md is not its sidecar's article (edited by hand?)"
                        .into(),
                ))
            }
            (None, Some(b)) => {
                return Some((
                    b.clone(),
                    "this paragraph of the sidecar's article is missing from report.md".into(),
                ))
            }
            (None, None) => break,
        }
    }
    None
}
