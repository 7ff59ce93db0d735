//! A session's progress as events, for whichever front end listens: every event goes
//! to the session's [`EventSink`] (the objects `--json` prints; the command line draws
//! bars or lines from them, the MCP server gathers them) and every message to the run's
//! log file. The session never writes to a terminal itself.
//!
//! First useful output comes early: as soon as a round's claims are judged, each of
//! its subquestions is a `section` event (the subquestion and its claims with their
//! verdicts) — long before the report is written.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use deepr_evidence::report::Verdict;
use deepr_orchestrator::Progress;
use deepr_stages::types::{DecomposeOut, DeepenOut, ExtractOut, JudgeOut, Subq};

use crate::options::EventSink;

/// How a stopped run can go on, for the front end to say in its own words (the
/// command line: `deepr resume RUN_ID …`; the MCP server: `resume_run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// As it was.
    AsItWas,
    /// With a larger budget.
    LargerBudget,
    /// Once the credentials in this environment variable are fixed.
    FixedKey(&'static str),
}

impl Resume {
    fn as_str(self) -> &'static str {
        match self {
            Self::AsItWas => "as-it-was",
            Self::LargerBudget => "larger-budget",
            Self::FixedKey(_) => "fixed-key",
        }
    }
}

/// Where a session's events go, and its log.
pub struct Reporter {
    sink: Option<EventSink>,
    log: Mutex<Option<std::fs::File>>,
    tokens: AtomicU64,
    started: Instant,
    findings: Mutex<Findings>,
}

/// What the finished nodes said so far, to show each section once its round is judged.
#[derive(Default)]
struct Findings {
    /// Subquestion id → text.
    subquestions: BTreeMap<String, String>,
    /// Claim id → (subquestion id, text), from extract outputs.
    claims: BTreeMap<String, (String, String)>,
}

/// One judged section: its subquestion and its claims with their verdicts.
#[derive(Debug, PartialEq)]
pub struct Section {
    pub subquestion: String,
    pub claims: Vec<(String, Verdict)>,
}

impl Findings {
    /// Take in a node's output; a judge output yields its round's sections.
    fn take(&mut self, stage: &str, output: &serde_json::Value) -> Vec<Section> {
        match stage {
            "decompose" => {
                if let Ok(out) = serde_json::from_value::<DecomposeOut>(output.clone()) {
                    self.add_subquestions(out.subquestions);
                }
            }
            "deepen" => {
                if let Ok(out) = serde_json::from_value::<DeepenOut>(output.clone()) {
                    self.add_subquestions(out.followups);
                }
            }
            "extract" => {
                if let Ok(out) = serde_json::from_value::<ExtractOut>(output.clone()) {
                    for claim in out.claims {
                        self.claims
                            .insert(claim.id, (claim.subquestion, claim.text));
                    }
                }
            }
            "judge" => {
                if let Ok(out) = serde_json::from_value::<JudgeOut>(output.clone()) {
                    let mut sections: BTreeMap<String, Vec<(String, Verdict)>> = BTreeMap::new();
                    for (id, verdict) in out.verdicts {
                        if let Some((subq, text)) = self.claims.get(&id) {
                            sections
                                .entry(subq.clone())
                                .or_default()
                                .push((text.clone(), verdict));
                        }
                    }
                    return sections
                        .into_iter()
                        .map(|(subq, claims)| Section {
                            subquestion: self.subquestions.get(&subq).cloned().unwrap_or(subq),
                            claims,
                        })
                        .collect();
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn add_subquestions(&mut self, subquestions: Vec<Subq>) {
        for subq in subquestions {
            self.subquestions.insert(subq.id, subq.text);
        }
    }
}

impl Reporter {
    /// A reporter whose events go to `sink` (none: heard by no one) and whose
    /// messages go to `log` too.
    pub fn new(sink: Option<EventSink>, log: Option<std::fs::File>) -> Self {
        Self {
            sink,
            log: Mutex::new(log),
            tokens: AtomicU64::new(0),
            started: Instant::now(),
            findings: Mutex::new(Findings::default()),
        }
    }

    /// A message for the user (and the log): a `message` event.
    pub fn say(&self, message: &str) {
        self.log_line(message);
        self.emit(
            &serde_json::json!({"event": "message", "text": message.trim_start_matches("deepr: ")}),
        );
    }

    /// The run stopped and resumes: a `stopped` event with what happened and how it
    /// goes on (the front end names the command).
    pub fn stopped(&self, run_id: &str, what: &str, resume: Resume) {
        self.log_line(what);
        let key = match resume {
            Resume::FixedKey(var) => Some(var),
            _ => None,
        };
        self.emit(&serde_json::json!({"event": "stopped", "run_id": run_id, "text": what, "resume": resume.as_str(), "key": key}));
    }

    /// What the user must hear even when nothing else is shown (a run stopping, a
    /// report left incomplete): a `warning` event, and the log.
    pub fn warn(&self, message: &str) {
        self.log_line(message);
        self.emit(
            &serde_json::json!({"event": "warning", "text": message.trim_start_matches("deepr: ")}),
        );
    }

    /// A structured event.
    pub fn event(&self, value: serde_json::Value) {
        self.emit(&value);
    }

    fn emit(&self, value: &serde_json::Value) {
        if let Some(sink) = &self.sink {
            sink(value);
        }
    }

    pub fn log_line(&self, message: &str) {
        if let Ok(mut log) = self.log.lock() {
            if let Some(file) = log.as_mut() {
                let _ = writeln!(
                    file,
                    "[{:>8.2}s] {message}",
                    self.started.elapsed().as_secs_f64()
                );
            }
        }
    }

    fn show_section(&self, section: &Section) {
        self.emit(&serde_json::json!({
            "event": "section",
            "subquestion": section.subquestion,
            "claims": section.claims.iter().map(|(text, verdict)| serde_json::json!({"text": text, "verdict": verdict})).collect::<Vec<_>>(),
        }));
    }
}

impl Progress for Reporter {
    fn output(&self, stage: &str, _node_id: &str, output: &serde_json::Value) {
        let sections = match self.findings.lock() {
            Ok(mut findings) => findings.take(stage, output),
            Err(_) => return,
        };
        for section in &sections {
            self.show_section(section);
        }
    }

    fn planned(&self, stage: &str, nodes: usize) {
        self.event(serde_json::json!({"event": "planned", "stage": stage, "nodes": nodes}));
    }

    fn started(&self, stage: &str, node_id: &str) {
        self.log_line(&format!("start {stage} {node_id}"));
    }

    fn finished(&self, stage: &str, node_id: &str, restored: bool, tokens: u64) {
        let total = self.tokens.fetch_add(tokens, Ordering::Relaxed) + tokens;
        let how = if restored { "restored" } else { "done" };
        self.log_line(&format!(
            "{how} {stage} {node_id} ({tokens} tokens, {total} so far)"
        ));
        self.emit(&serde_json::json!({"event": "finished", "stage": stage, "node": node_id, "restored": restored, "tokens": tokens, "tokens_so_far": total}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_judged_round_yields_its_sections_with_verdicts() {
        let mut findings = Findings::default();
        let none = findings.take(
            "decompose",
            &json!({"subquestions": [{"id": "s1", "text": "What is WAL?", "round": 0, "parent": null}], "degraded": null}),
        );
        assert!(none.is_empty());
        findings.take(
            "extract",
            &json!({"claims": [{"id": "s1c1", "subquestion": "s1", "text": "WAL appends changes.", "citations": []}], "degraded": null}),
        );
        let sections = findings.take(
            "judge",
            &json!({"verdicts": [["s1c1", "supported"], ["unknown", "partial"]], "calls": 1, "degraded": null}),
        );
        assert_eq!(
            sections,
            [Section {
                subquestion: "What is WAL?".into(),
                claims: vec![("WAL appends changes.".into(), Verdict::Supported)],
            }]
        );
    }
}
