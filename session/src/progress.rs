//! Live progress: indicatif bars per stage on a terminal, plain log lines otherwise,
//! nothing with `--quiet`; every event also goes to the run's log file.
//!
//! First useful output comes early: as soon as a round's claims are judged, each of
//! its subquestions is shown as a `section` event (`--json`: the subquestion and its
//! claims with their verdicts) or a line with its supported claims — long before the
//! report is written.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use deepr_evidence::report::Verdict;
use deepr_orchestrator::Progress;
use deepr_stages::types::{DecomposeOut, DeepenOut, ExtractOut, JudgeOut, Subq};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub enum Mode {
    /// One JSON object per line on stdout (`--json`), for scripts.
    Json,
    /// The `--json` events, handed to a front end (the MCP server) instead of stdout.
    Sink(crate::options::EventSink),
    Bars,
    Lines,
    Quiet,
}

pub struct Reporter {
    mode: Mode,
    multi: MultiProgress,
    bars: Mutex<BTreeMap<String, ProgressBar>>,
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
    pub fn new(quiet: bool, json: bool, log: Option<std::fs::File>) -> Self {
        let mode = if json {
            Mode::Json
        } else if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal()
            && std::env::var("TERM").map(|t| t != "dumb").unwrap_or(true)
        {
            Mode::Bars
        } else {
            Mode::Lines
        };
        let multi = MultiProgress::with_draw_target(match mode {
            Mode::Bars => ProgressDrawTarget::stderr(),
            _ => ProgressDrawTarget::hidden(),
        });
        Self::with_mode(mode, multi, log)
    }

    /// A reporter whose events go to `sink` and whose messages go nowhere else.
    pub fn to_sink(sink: crate::options::EventSink, log: Option<std::fs::File>) -> Self {
        Self::with_mode(
            Mode::Sink(sink),
            MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            log,
        )
    }

    fn with_mode(mode: Mode, multi: MultiProgress, log: Option<std::fs::File>) -> Self {
        Self {
            mode,
            multi,
            bars: Mutex::new(BTreeMap::new()),
            log: Mutex::new(log),
            tokens: AtomicU64::new(0),
            started: Instant::now(),
            findings: Mutex::new(Findings::default()),
        }
    }

    /// A message for the user (and the log).
    pub fn say(&self, message: &str) {
        self.log_line(message);
        match self.mode {
            Mode::Quiet => {}
            Mode::Bars => {
                let _ = self.multi.println(message);
            }
            Mode::Lines => errln!("{message}"),
            Mode::Json | Mode::Sink(_) => self.emit(
                &serde_json::json!({"event": "message", "text": message.trim_start_matches("deepr: ")}),
            ),
        }
    }

    /// A structured event (`--json` only).
    pub fn event(&self, value: serde_json::Value) {
        self.emit(&value);
    }

    /// An event to stdout (`--json`) or the sink; other modes show none.
    fn emit(&self, value: &serde_json::Value) {
        match &self.mode {
            Mode::Json => {
                use std::io::Write as _;
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{value}");
                let _ = stdout.flush();
            }
            Mode::Sink(sink) => sink(value),
            _ => {}
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

    pub fn finish(&self) {
        if let Ok(bars) = self.bars.lock() {
            for bar in bars.values() {
                bar.finish();
            }
        }
    }

    fn bar(&self, stage: &str) -> Option<ProgressBar> {
        let mut bars = self.bars.lock().ok()?;
        Some(
            bars.entry(stage.to_string())
                .or_insert_with(|| {
                    let bar = self.multi.add(ProgressBar::new(0));
                    let style = ProgressStyle::with_template(
                        "{prefix:>11} [{bar:24}] {pos}/{len} {elapsed:>4} {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
                    bar.set_style(style);
                    bar.set_prefix(stage.to_string());
                    bar
                })
                .clone(),
        )
    }
}

impl Reporter {
    fn show_section(&self, section: &Section) {
        let supported: Vec<&str> = section
            .claims
            .iter()
            .filter(|(_, v)| *v == Verdict::Supported)
            .map(|(text, _)| text.as_str())
            .collect();
        match self.mode {
            Mode::Json | Mode::Sink(_) => self.emit(&serde_json::json!({
                "event": "section",
                "subquestion": section.subquestion,
                "claims": section.claims.iter().map(|(text, verdict)| serde_json::json!({"text": text, "verdict": verdict})).collect::<Vec<_>>(),
            })),
            Mode::Quiet => {}
            _ => {
                let mut text = format!("deepr: judged — {}", section.subquestion);
                for claim in supported.iter().take(3) {
                    text.push_str(&format!("\n  · {claim}"));
                }
                self.say(&text);
            }
        }
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
        if let Some(bar) = self.bar(stage) {
            bar.inc_length(nodes as u64);
        }
    }

    fn started(&self, stage: &str, node_id: &str) {
        self.log_line(&format!("start {stage} {node_id}"));
    }

    fn finished(&self, stage: &str, node_id: &str, restored: bool, tokens: u64) {
        let total = self.tokens.fetch_add(tokens, Ordering::Relaxed) + tokens;
        let how = if restored { "restored" } else { "done" };
        let line = format!("{how} {stage} {node_id} ({tokens} tokens, {total} so far)");
        self.log_line(&line);
        match self.mode {
            Mode::Bars => {
                if let Some(bar) = self.bar(stage) {
                    bar.inc(1);
                    bar.set_message(format!("{total} tokens"));
                }
            }
            Mode::Lines => errln!("deepr: {line}"),
            Mode::Json | Mode::Sink(_) => self.emit(
                &serde_json::json!({"event": "finished", "stage": stage, "node": node_id, "restored": restored, "tokens": tokens, "tokens_so_far": total}),
            ),
            Mode::Quiet => {}
        }
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
