//! The tools that read what runs left, spending nothing: `list_runs`, `get_report`,
//! `get_sources`, `verify_report`, `estimate_cost`, `search_past_research`, and the
//! run reports served as resources (`deepr://runs/{id}/report.md`, `…/report.json`).

use std::path::{Path, PathBuf};

use deepr_evidence::report::Report;
use deepr_session::record::{read_run_file, run_dir};
use rmcp::model::JsonObject;
use serde_json::{json, Value};

use crate::actions::{status_of, tool_failure};
use crate::shared::Shared;
use crate::tools::Arguments;
use deepr_session::request::{self, RunRequest};
use deepr_stages::research::ReportFormat;
use deepr_stages::{Depth, Strategy};

/// The reports a resource URI may name.
const RESOURCE_FILES: &[&str] = &["report.md", "report.json"];

/// Every run of the state dir, oldest first, with its state.
pub fn list_runs(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    Arguments::new("list_runs", map, &[])?;
    // A folder without run.json was stopped before it started: not a run to list.
    let mut runs: Vec<Value> = run_ids(&shared.state_dir)
        .into_iter()
        .map(|id| status_of(shared, &id))
        .filter(|status| status["created"].is_u64())
        .collect();
    runs.sort_by_key(|status| {
        (
            status["created"].as_u64(),
            status["run_id"].as_str().map(str::to_string),
        )
    });
    Ok(json!({"summary": format!("{} run(s)", runs.len()), "runs": runs}))
}

fn run_ids(state_dir: &Path) -> Vec<String> {
    std::fs::read_dir(state_dir.join("runs"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|id| deepr_session::state::check_run_id(id).is_ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The markdown report of a run, from its record's `out`.
fn report_path(shared: &Shared, tool: &str, run_id: &str) -> Result<PathBuf, String> {
    let file = read_run_file(&run_dir(&shared.state_dir, run_id)).ok_or_else(|| {
        format!(
            "{tool}: no run {run_id} in {}; list_runs shows the runs",
            shared.state_dir.display()
        )
    })?;
    let out = file.record.out;
    if out.exists() {
        Ok(out)
    } else {
        Err(format!(
            "{tool}: run {run_id} has no report yet (state {}); run_status shows how far it got",
            file.state.as_str()
        ))
    }
}

pub fn read_text(path: &Path, tool: &str) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map_err(|e| format!("{tool}: cannot read {}: {e}", path.display()))
}

/// `get_report`: markdown (or one section of it), the JSON sidecar, or bullets.
pub fn get_report(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    let args = Arguments::new("get_report", map, &["run_id", "format", "section"])?;
    let run_id = args.run_id()?;
    let path = report_path(shared, "get_report", run_id)?;
    let texts = ReportTexts {
        markdown: read_text(&path, "get_report")?,
        json: read_text(&path.with_extension("json"), "get_report")?,
    };
    let mut view = report_view(&args, run_id, &texts)?;
    view["path"] = json!(path.display().to_string());
    Ok(view)
}

/// A report's markdown and JSON sidecar.
pub struct ReportTexts {
    pub markdown: String,
    pub json: String,
}

impl ReportTexts {
    pub fn report(&self, tool: &str) -> Result<Report, String> {
        serde_json::from_str(&self.json).map_err(|e| {
            format!("{tool}: the report's JSON sidecar is damaged ({e}); resume the run to write it again")
        })
    }
}

/// What `get_report` returns for these texts and the call's `format` and `section`.
pub fn report_view(
    args: &Arguments<'_>,
    run_id: &str,
    texts: &ReportTexts,
) -> Result<Value, String> {
    let markdown = ReportFormat::Md.as_str();
    // "markdown", the name this tool once documented, still means `md`.
    let format = match args.string("format")? {
        Some("markdown") => markdown,
        _ => args
            .choice("format", &crate::tools::report_views(), |view| view)?
            .unwrap_or(markdown),
    };
    let text = match format {
        "json" => texts.json.clone(),
        "bullets" => deepr_stages::formats::render_bullets(&texts.report("get_report")?),
        _ => texts.markdown.clone(),
    };
    let text = match args.string("section")? {
        Some(heading) if format == markdown => section(&text, heading).ok_or_else(|| {
            format!(
                "get_report: run {run_id}'s report has no section {heading:?}; its headings: {}",
                headings(&text).join(" | ")
            )
        })?,
        Some(_) => return Err("get_report: section applies to the markdown format only".into()),
        None => text,
    };
    Ok(json!({"run_id": run_id, "format": format, "text": text}))
}

fn heading_of(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    (level > 0 && line[level..].starts_with(' ')).then(|| (level, line[level..].trim()))
}

fn headings(markdown: &str) -> Vec<&str> {
    markdown
        .lines()
        .filter_map(heading_of)
        .map(|(_, text)| text)
        .collect()
}

/// The section under `wanted` (case-insensitive), up to the next heading of its level
/// or above.
fn section(markdown: &str, wanted: &str) -> Option<String> {
    let wanted = wanted.trim().trim_start_matches('#').trim().to_lowercase();
    let mut lines = markdown.lines();
    let mut out = Vec::new();
    let level = loop {
        let line = lines.next()?;
        if let Some((level, text)) = heading_of(line).filter(|(_, t)| t.to_lowercase() == wanted) {
            out.push(line);
            let _ = text;
            break level;
        }
    };
    for line in lines {
        if heading_of(line).is_some_and(|(l, _)| l <= level) {
            break;
        }
        out.push(line);
    }
    Some(out.join("\n"))
}

/// `get_sources`: the cited sources with the quotes taken from each.
pub fn get_sources(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    let args = Arguments::new("get_sources", map, &["run_id"])?;
    let run_id = args.run_id()?;
    let path = report_path(shared, "get_sources", run_id)?;
    let texts = ReportTexts {
        markdown: String::new(),
        json: read_text(&path.with_extension("json"), "get_sources")?,
    };
    Ok(sources_view(run_id, &texts.report("get_sources")?))
}

/// The cited sources of a report, each with its quotes.
pub fn sources_view(run_id: &str, report: &Report) -> Value {
    let sources: Vec<Value> = report
        .sources
        .iter()
        .filter_map(|source| {
            let quotes: Vec<Value> = report
                .claims
                .iter()
                .flat_map(|claim| claim.citations.iter().map(move |c| (claim, c)))
                .filter(|(_, citation)| citation.source == source.id)
                .map(|(claim, citation)| json!({"claim": claim.id, "verdict": claim.verdict, "quote": citation.quote}))
                .collect();
            (!quotes.is_empty()).then(|| json!({
                "id": source.id, "locator": source.locator, "title": source.title,
                "date": source.date, "quotes": quotes,
            }))
        })
        .collect();
    json!({"summary": format!("{} cited source(s)", sources.len()), "run_id": run_id, "sources": sources})
}

/// `verify_report`: the gate of `deepr verify`, on a run's report or a file under the
/// roots (no live re-fetching).
pub fn verify_report(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    let args = Arguments::new("verify_report", map, &["run_id", "path"])?;
    let path = match (args.string("run_id")?, args.string("path")?) {
        (Some(_), None) => report_path(shared, "verify_report", args.run_id()?)?,
        (None, Some(path)) => shared.policy.inside_roots("path", path)?,
        _ => return Err("verify_report: pass run_id or path (one of them)".into()),
    };
    shared.host.verify(&path, Some(&shared.state_dir))
}

/// `estimate_cost`: `deepr run --estimate` with the server's models and prices: a
/// request for the depth and strategy asked, validated as a run's, and its estimate.
pub fn estimate_cost(shared: &Shared, map: &JsonObject) -> Result<Value, String> {
    let tool = "estimate_cost";
    let args = Arguments::new(tool, map, &["depth", "strategy"])?;
    let request = RunRequest {
        topic: Some("estimate".into()),
        depth: args.choice("depth", &Depth::ALL, Depth::as_str)?,
        strategy: args.choice("strategy", &Strategy::ALL, Strategy::as_str)?,
        ..RunRequest::default()
    };
    let valid = request::validate(&shared.globals, &request).map_err(tool_failure(tool))?;
    let e = request::estimate(&valid.record).map_err(tool_failure(tool))?;
    Ok(json!({
        "summary": e.line,
        "depth": e.depth.as_str(),
        "strategy": e.strategy.as_str(),
        "reading": e.reading.map_or("ranked", |r| r.as_str()),
        "model": e.model,
        "calls": [e.calls.0, e.calls.1],
        "tokens": [e.tokens.0, e.tokens.1],
        "dollars": e.dollars.map(|(low, high)| [low, high]),
    }))
}

/// `search_past_research`: research memory, best ten.
/// `fleet`: the fleet's memories, searched instead of the state dir's.
pub fn search_past_research(
    shared: &Shared,
    map: &JsonObject,
    fleet: Option<Vec<deepr_session::memory::Memory>>,
) -> Result<Value, String> {
    let args = Arguments::new("search_past_research", map, &["query"])?;
    let query = args.required("query")?;
    let found = match fleet {
        Some(memories) => deepr_session::memory::search_in(memories, query),
        None => deepr_session::memory::search(&shared.state_dir, query),
    };
    let found: Vec<Value> = found
        .into_iter()
        .take(10)
        .map(|(score, memory)| json!({
            "score": (score * 100.0).round() / 100.0, "run_id": memory.run_id, "topic": memory.topic,
            "date": deepr_session::memory::day(&memory.date), "report": memory.report,
            "example": memory.claims.first().map(|(claim, source)| json!({"claim": claim, "source": source})),
        }))
        .collect();
    Ok(json!({"summary": format!("{} past run(s) match", found.len()), "runs": found}))
}

/// The finished reports as resources: (uri, name, mime type).
pub fn resources(shared: &Shared) -> Vec<(String, String, &'static str)> {
    let mut ids = run_ids(&shared.state_dir);
    ids.sort();
    ids.into_iter()
        .filter_map(|id| {
            let out = read_run_file(&run_dir(&shared.state_dir, &id))?.record.out;
            out.exists().then_some(id)
        })
        .flat_map(report_resources)
        .collect()
}

/// A run's two report resources: (uri, name, mime type).
pub fn report_resources(run_id: String) -> [(String, String, &'static str); 2] {
    [
        ("report.md", "text/markdown"),
        ("report.json", "application/json"),
    ]
    .map(|(file, mime)| {
        (
            format!("deepr://runs/{run_id}/{file}"),
            format!("{run_id} {file}"),
            mime,
        )
    })
}

/// A resource's text, by URI.
pub fn read_resource(shared: &Shared, uri: &str) -> Result<(String, &'static str), String> {
    let (run_id, file) = resource_name(uri)?;
    let path = report_path(shared, "resources/read", run_id)?;
    match file {
        "report.json" => Ok((
            read_text(&path.with_extension("json"), "resources/read")?,
            "application/json",
        )),
        _ => Ok((read_text(&path, "resources/read")?, "text/markdown")),
    }
}

/// The run id and file a resource URI names (`deepr://runs/ID/report.md|json`).
pub fn resource_name(uri: &str) -> Result<(&str, &str), String> {
    let rest = uri
        .strip_prefix("deepr://runs/")
        .ok_or_else(|| format!("unknown resource {uri:?}; list resources to see the reports"))?;
    let (run_id, file) = rest
        .split_once('/')
        .ok_or_else(|| format!("unknown resource {uri:?}"))?;
    if deepr_session::state::check_run_id(run_id).is_err() || !RESOURCE_FILES.contains(&file) {
        return Err(format!(
            "unknown resource {uri:?}; reports are deepr://runs/ID/report.md and …/report.json"
        ));
    }
    Ok((run_id, file))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_section_runs_to_the_next_heading_of_its_level() {
        let md = "# T\n## Summary\nS.\n## 1. Funding\nA.\n### Detail\nB.\n## 2. Product\nC.\n";
        assert_eq!(
            super::section(md, "1. funding").as_deref(),
            Some("## 1. Funding\nA.\n### Detail\nB.")
        );
        assert_eq!(
            super::section(md, "## 2. Product").as_deref(),
            Some("## 2. Product\nC.")
        );
        assert_eq!(super::section(md, "Missing"), None);
    }
}
