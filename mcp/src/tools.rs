//! The MCP tools deepr serves: their names, descriptions (what each costs and how long
//! it takes) and JSON schemas, and the checked reading of a call's arguments — every
//! argument is untrusted: unknown keys, wrong types and out-of-range values are refused
//! with one line saying what to pass.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{json, Value};

/// The names of a value list (the settings' own: depth, strategy, report formats),
/// for schemas and errors.
pub fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().map(|v| name(*v)).collect()
}

/// The values `depth` takes.
pub fn depths() -> Vec<&'static str> {
    names(&deepr_stages::Depth::ALL, deepr_stages::Depth::as_str)
}

/// The values `strategy` takes.
pub fn strategies() -> Vec<&'static str> {
    names(&deepr_stages::Strategy::ALL, deepr_stages::Strategy::as_str)
}

/// The values `formats` takes.
pub fn formats() -> Vec<&'static str> {
    names(
        &deepr_stages::research::ReportFormat::ALL,
        deepr_stages::research::ReportFormat::as_str,
    )
}

/// A value list's names with what each means ("quick: 1–5 subquestions…; …"), from
/// the list's own help, as `--help` shows it.
fn described<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    help: fn(T) -> &'static str,
) -> String {
    let parts: Vec<String> = all
        .iter()
        .map(|v| format!("{}: {}", name(*v), help(*v)))
        .collect();
    parts.join("; ")
}

fn depth_description() -> String {
    use deepr_stages::Depth;
    described(&Depth::ALL, Depth::as_str, Depth::help)
}

/// The views `get_report` gives: the report formats it shows by their `--format`
/// names (`md`, `bullets`) and the JSON sidecar.
pub fn report_views() -> Vec<&'static str> {
    vec![
        deepr_stages::research::ReportFormat::Md.as_str(),
        "json",
        deepr_stages::research::ReportFormat::Bullets.as_str(),
    ]
}

/// The longest a call may wait for a run (`wait_s`).
pub const MAX_WAIT_S: f64 = 600.0;

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// A tool with its input schema (closed: no other keys) and an object output.
fn tool(
    name: &'static str,
    description: &'static str,
    properties: Value,
    required: &[&str],
) -> Tool {
    Tool::new(
        name,
        description,
        object(json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })),
    )
    .with_raw_output_schema(object(json!({"type": "object"})))
}

fn run_id_property() -> Value {
    json!({"type": "string", "pattern": "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$", "description": "The run's id, as research or list_runs gave it."})
}

fn budget_properties() -> Value {
    json!({
        "max_tokens": {"type": "integer", "minimum": 1, "description": "Stop the run (resumable, report marked incomplete) after this many tokens. At most the server's cap."},
        "max_cost": {"type": "number", "exclusiveMinimum": 0, "description": "Stop after this many dollars. At most the server's cap."},
        "max_time": {"type": "string", "description": "Stop after this long, e.g. \"90s\", \"20m\", \"2h\"."},
        "wait_s": {"type": "number", "minimum": 0, "maximum": MAX_WAIT_S, "description": "Wait up to this many seconds for the run to end (progress notifications meanwhile); 0 (default) returns at once."},
    })
}

fn research() -> Tool {
    let mut properties = json!({
        "topic": {"type": "string", "minLength": 1, "maxLength": 20000, "description": "The question, or a whole brief: numbered parts become sections, writing instructions reach the writer."},
        "corpus": {"type": "string", "description": "A folder of documents (md, txt, html, pdf, docx, pptx, xlsx, csv) under one of the server's allowed roots."},
        "sources": {"type": "string", "description": format!("Search providers, comma-separated: {}. Default: the corpus when one is given, else wikipedia,arxiv,hn.", deepr_session::request::source_names().join(", "))},
        "depth": {"type": "string", "enum": depths(), "description": format!("{}. estimate_cost gives the calls and tokens.", depth_description())},
        "strategy": {"type": "string", "enum": strategies(), "description": described(&deepr_stages::Strategy::ALL, deepr_stages::Strategy::as_str, deepr_stages::Strategy::help)},
        "formats": {"type": "array", "items": {"type": "string", "enum": formats()}, "description": format!("Extra report formats beside markdown and JSON: {}.", described(&deepr_stages::research::ReportFormat::ALL, deepr_stages::research::ReportFormat::as_str, deepr_stages::research::ReportFormat::help))},
        "run_id": run_id_property(),
        "plan": {"type": "string", "maxLength": deepr_stages::research::MAX_PLAN_BYTES, "description": "A reviewed plan: plan_research's plan (TOML: topic, depth, [[subquestion]] tables with question and queries), maybe edited. Researches exactly its subquestions, with no planning call; topic may then be left out."},
    });
    if let (Some(map), Value::Object(budgets)) = (properties.as_object_mut(), budget_properties()) {
        map.extend(budgets);
    }
    tool(
        "research",
        "Start a checkpointed deep-research run: plan, search, read, extract claims with verbatim quotes, judge them, write a verified report. Costs model tokens (see estimate_cost: a quick run on a corpus is tens of thousands of tokens) and takes minutes to hours; returns the run id at once (or after wait_s) — follow it with run_status, read it with get_report. A run survives a server restart: resume_run finishes it paying nothing twice.",
        properties,
        &[],
    )
}

/// `plan_research`: the plan phase only, for the agent (or its user) to review.
fn plan_research() -> Tool {
    let mut properties = json!({
        "topic": {"type": "string", "minLength": 1, "maxLength": 20000, "description": "The question or brief, as for research."},
        "corpus": {"type": "string", "description": "A folder of documents under one of the server's allowed roots, as for research."},
        "sources": {"type": "string", "description": "Search providers, comma-separated, as for research."},
        "depth": {"type": "string", "enum": depths(), "description": format!("The depth the plan is for (it bounds the number of subquestions): {}.", depth_description())},
        "run_id": run_id_property(),
    });
    if let (Some(map), Value::Object(mut budgets)) =
        (properties.as_object_mut(), budget_properties())
    {
        budgets.remove("wait_s");
        map.extend(budgets);
    }
    tool(
        "plan_research",
        "Plan a research run without running it: search the sources once, write the subquestions and their first search queries, and return the plan (TOML) with the estimate. Costs one planning call (a few thousand tokens) and seconds; waits for the plan. Edit it if needed and pass it to research as plan: the research then asks exactly those subquestions.",
        properties,
        &["topic"],
    )
}

fn resume_run() -> Tool {
    let mut properties = json!({"run_id": run_id_property()});
    if let (Some(map), Value::Object(budgets)) = (properties.as_object_mut(), budget_properties()) {
        map.extend(budgets);
    }
    tool(
        "resume_run",
        "Continue a stopped, cancelled, incomplete or killed run from its checkpoints: finished steps are restored, not paid again. Costs only the remaining steps' tokens.",
        properties,
        &["run_id"],
    )
}

/// Every tool, in the order `tools/list` shows them.
pub fn all() -> Vec<Tool> {
    let id_only = || json!({"run_id": run_id_property()});
    vec![
        research(),
        plan_research(),
        tool("run_status", "A run's state (running, finished, incomplete, interrupted, killed, failed), tokens spent so far, steps done and what to do next. Free and instant.", id_only(), &["run_id"]),
        tool("list_runs", "Every run in the server's state dir with its state, topic, tokens and whether it can be resumed. Free and instant.", json!({}), &[]),
        tool(
            "get_report",
            "A run's report: md (the markdown report, the default), json (its JSON sidecar) or bullets; optionally one section of the markdown by its heading. Free and instant.",
            json!({"run_id": run_id_property(), "format": {"type": "string", "enum": report_views()}, "section": {"type": "string", "description": "A heading of the markdown report (without the #s); only that section is returned."}}),
            &["run_id"],
        ),
        tool("get_sources", "The sources a run's report cites, each with its locator, title, date and the verbatim quotes taken from it. Free and instant.", id_only(), &["run_id"]),
        tool(
            "verify_report",
            "Re-check every quote of a report against the text it was cut from, and every prose sentence against its quotes: PASS, FAIL or UNVERIFIED. Give run_id, or path to a report (.md/.json) or export bundle under an allowed root. Free; seconds.",
            json!({"run_id": run_id_property(), "path": {"type": "string"}}),
            &[],
        ),
        tool(
            "estimate_cost",
            "The model calls, tokens and dollars a run of this depth and strategy takes with the server's models, before spending anything. Free and instant.",
            json!({"depth": {"type": "string", "enum": depths()}, "strategy": {"type": "string", "enum": strategies()}}),
            &[],
        ),
        tool(
            "search_past_research",
            "Past finished runs whose topic or findings match a query, best first, each with an example claim and its source. Free and instant.",
            json!({"query": {"type": "string", "minLength": 1, "maxLength": 2000}}),
            &["query"],
        ),
        resume_run(),
        tool(
            "ask_followup",
            "Ask a follow-up question of a finished run: answered from the documents that run read (no page fetched again; its sources searched again only with search=true or when its documents say nothing on the question), as a short report of its own — an answer-first summary and the claims behind it, every quote verified. A fraction of a fresh quick run's tokens; returns the new run id (or waits up to wait_s).",
            {
                let mut properties = json!({
                    "run_id": run_id_property(),
                    "question": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "The follow-up question."},
                    "search": {"type": "boolean", "description": "Search the earlier run's sources again too, not only the documents it read."},
                });
                if let (Some(map), Value::Object(budgets)) = (properties.as_object_mut(), budget_properties()) {
                    map.extend(budgets);
                }
                properties
            },
            &["run_id", "question"],
        ),
        tool(
            "refresh_run",
            "Research a finished run's topic again over its sources as they are now, as a new run whose report says what changed since (values old → new with both quotes, claims added, claims no longer supported). Unchanged steps are answered from the response cache, so the cost grows with the change. if_changed=true returns state \"unchanged\" without a run when no source changed.",
            {
                let mut properties = json!({
                    "run_id": run_id_property(),
                    "if_changed": {"type": "boolean", "description": "Do nothing (state \"unchanged\") when no source changed since the earlier run."},
                });
                if let (Some(map), Value::Object(budgets)) = (properties.as_object_mut(), budget_properties()) {
                    map.extend(budgets);
                }
                properties
            },
            &["run_id"],
        ),
        tool("cancel_run", "Stop a run this server is executing, as Ctrl-C does: running steps finish and are checkpointed; resume_run continues it. Waits up to 60 s for it to stop.", id_only(), &["run_id"]),
    ]
}

/// A call's arguments, read with checks. Errors are one line for the agent.
pub struct Arguments<'a> {
    tool: &'a str,
    map: &'a JsonObject,
}

impl<'a> Arguments<'a> {
    /// Refuses keys the tool's schema does not name.
    pub fn new(tool: &'a str, map: &'a JsonObject, known: &[&str]) -> Result<Self, String> {
        if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(format!(
                "{tool}: unknown argument {key:?}; it takes {}",
                known.join(", ")
            ));
        }
        Ok(Self { tool, map })
    }

    pub fn string(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.as_str())),
            Some(other) => Err(format!(
                "{}: {key} must be a string, not {other}",
                self.tool
            )),
        }
    }

    pub fn required(&self, key: &str) -> Result<&'a str, String> {
        self.string(key)?
            .filter(|text| !text.trim().is_empty())
            .ok_or_else(|| format!("{}: {key} is required (a non-empty string)", self.tool))
    }

    /// One of a value list's values, by its name (`name`: the list's own `as_str`).
    pub fn choice<T: Copy>(
        &self,
        key: &str,
        all: &[T],
        name: fn(T) -> &'static str,
    ) -> Result<Option<T>, String> {
        match self.string(key)? {
            None => Ok(None),
            Some(value) => match all.iter().find(|v| name(**v) == value) {
                Some(found) => Ok(Some(*found)),
                None => Err(format!(
                    "{}: {key} {value:?} is not one of {}",
                    self.tool,
                    names(all, name).join(", ")
                )),
            },
        }
    }

    pub fn positive_integer(&self, key: &str) -> Result<Option<u64>, String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => match value.as_u64().filter(|n| *n > 0) {
                Some(n) => Ok(Some(n)),
                None => Err(format!(
                    "{}: {key} must be a whole number above 0, not {value}",
                    self.tool
                )),
            },
        }
    }

    /// A finite number in `low..=high` (`low` excluded when `open`).
    pub fn number(
        &self,
        key: &str,
        low: f64,
        high: f64,
        open: bool,
    ) -> Result<Option<f64>, String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => match value
                .as_f64()
                .filter(|n| n.is_finite() && *n <= high && if open { *n > low } else { *n >= low })
            {
                Some(n) => Ok(Some(n)),
                None => Err(format!(
                    "{}: {key} must be a number {} {low} and at most {high}, not {value}",
                    self.tool,
                    if open { "above" } else { "of at least" }
                )),
            },
        }
    }

    /// A list of a value list's values, by their names.
    pub fn choices<T: Copy>(
        &self,
        key: &str,
        all: &[T],
        name: fn(T) -> &'static str,
    ) -> Result<Vec<T>, String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    let found = item
                        .as_str()
                        .and_then(|text| all.iter().find(|v| name(**v) == text));
                    found.copied().ok_or_else(|| {
                        format!(
                            "{}: {key} holds {item}; each must be one of {}",
                            self.tool,
                            names(all, name).join(", ")
                        )
                    })
                })
                .collect(),
            Some(other) => Err(format!(
                "{}: {key} must be a list of strings, not {other}",
                self.tool
            )),
        }
    }

    /// A run id: 1–64 letters, digits, `-`, `_` or `.`, not starting with `.`.
    pub fn run_id(&self) -> Result<&'a str, String> {
        let id = self.required("run_id")?;
        deepr_session::state::check_run_id(id).map_err(|_| {
            format!(
                "{}: run_id {id:?} is not a run id (1–64 letters, digits, '-', '_' or '.'); list_runs shows the runs",
                self.tool
            )
        })?;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepr_stages::research::ReportFormat;
    use deepr_stages::Depth;

    fn map(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn arguments_refuse_unknown_keys_wrong_types_and_out_of_range_values() {
        let known = [
            "topic",
            "wait_s",
            "max_tokens",
            "depth",
            "run_id",
            "formats",
        ];
        let unknown = map(json!({"topic": "x", "llm_base_url": "http://evil"}));
        let refused = Arguments::new("research", &unknown, &known)
            .err()
            .unwrap_or_default();
        assert!(
            refused.contains("unknown argument \"llm_base_url\""),
            "{refused}"
        );
        let given = map(json!({
            "topic": 5, "wait_s": 601, "max_tokens": 0, "depth": "bottomless",
            "run_id": "../etc", "formats": ["md", "exe"],
        }));
        let args = Arguments::new("research", &given, &known).expect("known keys");
        assert!(args.required("topic").is_err());
        assert!(args.number("wait_s", 0.0, MAX_WAIT_S, false).is_err());
        assert!(args.positive_integer("max_tokens").is_err());
        assert!(args.choice("depth", &Depth::ALL, Depth::as_str).is_err());
        assert!(args.run_id().is_err());
        assert!(args
            .choices("formats", &ReportFormat::ALL, ReportFormat::as_str)
            .is_err());
        let fine = map(json!({"topic": "WAL", "wait_s": 2.5, "depth": "quick", "run_id": "a.b-1"}));
        let args = Arguments::new("research", &fine, &known).expect("known keys");
        assert_eq!(args.required("topic"), Ok("WAL"));
        assert_eq!(args.number("wait_s", 0.0, MAX_WAIT_S, false), Ok(Some(2.5)));
        assert_eq!(
            args.choice("depth", &Depth::ALL, Depth::as_str),
            Ok(Some(Depth::Quick))
        );
        assert_eq!(args.run_id(), Ok("a.b-1"));
        assert_eq!(args.positive_integer("max_tokens"), Ok(None));
    }

    #[test]
    fn every_tool_has_a_closed_object_schema_and_a_description() {
        for tool in all() {
            let schema = &tool.input_schema;
            assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
            assert_eq!(
                schema.get("additionalProperties"),
                Some(&json!(false)),
                "{}",
                tool.name
            );
            assert!(
                tool.description.as_deref().is_some_and(|d| d.len() > 40),
                "{}",
                tool.name
            );
        }
    }
}
