//! `bench.html`: the bench as one self-contained page — tokens against quality per
//! strategy as an SVG scatter chart, the summary table, and the per-strategy bars of
//! `bench.svg` — with no script, no external reference and a Content-Security-Policy
//! that forbids any request, like `report.html`. Quality is what the bench could
//! measure: fact coverage (`--facts`), answer recall against the official answers
//! (`--qa`), else the share of quotes on topic.

use std::fmt::Write as _;

use crate::facts::FactsSummary;
use crate::qa::QaRow;
use crate::rows::StrategyRow;

/// Text escaped for HTML and SVG (elements and quoted attributes).
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One strategy's point: its mean tokens per run and its quality in [0, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub strategy: String,
    pub tokens: f64,
    pub quality: f64,
}

/// A strategy's quality, when the bench measured one.
type Quality<'a> = Box<dyn Fn(&StrategyRow) -> Option<f64> + 'a>;

/// What the quality axis is, and each strategy's point on it.
pub fn points(
    summary: &[StrategyRow],
    qa: Option<&[QaRow]>,
    facts: Option<&[FactsSummary]>,
) -> (&'static str, Vec<Point>) {
    let (axis, quality): (&str, Quality<'_>) = match (facts, qa) {
        (Some(facts), _) => (
            "fact coverage",
            Box::new(move |row: &StrategyRow| {
                facts
                    .iter()
                    .find(|f| f.strategy == row.strategy)
                    .map(|f| f.coverage)
            }),
        ),
        (None, Some(qa)) => (
            "answer recall",
            Box::new(move |row: &StrategyRow| {
                qa.iter()
                    .find(|q| {
                        q.method == format!("deepr {}", row.strategy) || q.method == row.strategy
                    })
                    .map(|q| q.answer_recall)
            }),
        ),
        (None, None) => (
            "quotes on topic",
            Box::new(|row: &StrategyRow| Some(row.relevant_share)),
        ),
    };
    let points = summary
        .iter()
        .filter_map(|row| {
            Some(Point {
                strategy: row.strategy.clone(),
                tokens: row.total_tokens as f64 / row.runs.max(1) as f64,
                quality: quality(row).filter(|q| q.is_finite())?.clamp(0.0, 1.0),
            })
        })
        .collect();
    (axis, points)
}

/// The scatter chart, inline SVG for the page: tokens per run (x, from 0) against
/// quality (y, 0–100 %).
pub fn scatter(axis: &str, points: &[Point]) -> String {
    let (width, height, left, bottom, top, right) = (640.0, 360.0, 70.0, 50.0, 30.0, 30.0);
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let max_tokens = points.iter().map(|p| p.tokens).fold(1.0, f64::max) * 1.1;
    let x = |tokens: f64| left + tokens / max_tokens * plot_w;
    let y = |quality: f64| top + (1.0 - quality) * plot_h;
    let mut svg = format!("<svg role=\"img\" aria-label=\"tokens against {axis} per strategy\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    let _ = writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/><line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"#333\"/>",
        top + plot_h,
        left + plot_w,
        top + plot_h,
        top + plot_h
    );
    for step in 0..=4 {
        let quality = f64::from(step) / 4.0;
        let tokens = max_tokens * f64::from(step) / 4.0;
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.0}%</text><text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{:.0}</text>",
            left - 6.0,
            y(quality) + 4.0,
            quality * 100.0,
            x(tokens),
            top + plot_h + 18.0,
            tokens
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">tokens per run</text><text x=\"16\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {:.1})\">{}</text>",
        left + plot_w / 2.0,
        height - 8.0,
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        escape(axis)
    );
    for point in points {
        let (px, py) = (x(point.tokens), y(point.quality));
        let _ = writeln!(
            svg,
            "<circle class=\"point\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"5\" fill=\"#4a7bd0\"><title>{}: {:.0} tokens, {:.1}%</title></circle><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            escape(&point.strategy),
            point.tokens,
            point.quality * 100.0,
            px + 8.0,
            py - 6.0,
            escape(&point.strategy)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The whole page: `bars` is `bench.svg`'s content, `title` the topic set's name.
pub fn page(
    title: &str,
    summary: &[StrategyRow],
    axis: &str,
    points: &[Point],
    bars: &str,
) -> String {
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n<title>deepr bench: {0}</title>\n<style>body{{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}}td:first-child,th:first-child{{text-align:left}}</style>\n</head>\n<body>\n<h1>deepr bench: {0}</h1>\n<h2 id=\"quality\">Tokens against {1}</h2>\n",
        escape(title),
        escape(axis)
    );
    html.push_str(&scatter(axis, points));
    let _ = writeln!(
        html,
        "<h2 id=\"table\">Per strategy</h2>\n<table>\n<tr><th>strategy</th><th>runs</th><th>tokens per run</th><th>{}</th><th>words per report</th><th>wall s</th></tr>",
        escape(axis)
    );
    for row in summary {
        let quality = points
            .iter()
            .find(|p| p.strategy == row.strategy)
            .map_or("—".to_string(), |p| format!("{:.1}%", p.quality * 100.0));
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{:.0}</td><td>{quality}</td><td>{:.0}</td><td>{:.1}</td></tr>",
            escape(&row.strategy),
            row.runs,
            row.total_tokens as f64 / row.runs.max(1) as f64,
            row.words_per_report,
            row.wall_s
        );
    }
    html.push_str("</table>\n<h2 id=\"bars\">Tokens and verbatim rate</h2>\n");
    // Inline SVG needs no namespace: the page names no address at all.
    html.push_str(
        &bars
            .trim_start_matches(|c| c != '<')
            .replace(" xmlns=\"http://www.w3.org/2000/svg\"", ""),
    );
    html.push_str("</body>\n</html>\n");
    html
}
