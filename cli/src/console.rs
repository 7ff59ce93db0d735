//! What the command line shows of a session: it hears the session's events (the
//! library never writes to a terminal) and shows them as indicatif bars per stage on a
//! terminal, plain lines otherwise, one JSON object per line on stdout with `--json`,
//! or only what must be said with `--quiet` (a stopped run, a warning, a dry run's
//! count). The words that name commands (`deepr resume RUN_ID`) are chosen here; so are
//! the lines of `runs search`.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use deepr_session::options::{EventSink, Say};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;

enum Mode {
    Json,
    Bars,
    Lines,
    Quiet,
}

struct Console {
    mode: Mode,
    multi: MultiProgress,
    bars: Mutex<BTreeMap<String, ProgressBar>>,
}

/// The sink every session of this command reports to.
pub fn events(quiet: bool, json: bool) -> EventSink {
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
    let console = Console {
        mode,
        multi,
        bars: Mutex::new(BTreeMap::new()),
    };
    Arc::new(move |event: &Value| console.show(event))
}

/// Where the worker and the MCP server say what they do: stderr.
pub fn say() -> Say {
    Arc::new(|line: &str| errln!("{line}"))
}

/// How a stopped run goes on, in the command line's words.
fn resume_hint(event: &Value) -> String {
    let run_id = event["run_id"].as_str().unwrap_or_default();
    match event["resume"].as_str() {
        Some("larger-budget") => format!(" resume with: deepr resume {run_id} --max-tokens N"),
        Some("fixed-key") => format!(
            " Fix {}, then: deepr resume {run_id}",
            event["key"].as_str().unwrap_or("the key")
        ),
        _ => format!(" resume with: deepr resume {run_id}"),
    }
}

impl Console {
    fn show(&self, event: &Value) {
        let text = |key: &str| event[key].as_str().unwrap_or_default().to_string();
        let kind = event["event"].as_str().unwrap_or_default();
        if let Mode::Json = self.mode {
            outln!("{event}");
        }
        match kind {
            // Said whatever the mode: the run stopped, and how it goes on. The bars
            // are finished first, so that nothing drawn later wipes the line.
            "stopped" => {
                self.finish_bars();
                self.line(&format!("deepr: {}{}", text("text"), resume_hint(event)));
            }
            "warning" => self.line(&format!("deepr: {}", text("text"))),
            // --dry-run's count is its output, even with --quiet.
            "dry_run" if matches!(self.mode, Mode::Quiet) => {
                outln!("{} restored, {} to run", event["restored"], event["to_run"])
            }
            _ if !matches!(self.mode, Mode::Bars | Mode::Lines) => {}
            "message" => self.line(&format!("deepr: {}", text("text"))),
            "run" => self.line(&format!(
                "deepr: run {} — {}",
                text("run_id"),
                text("topic")
            )),
            "section" => self.line(&judged(event)),
            "planned" => {
                if let Some(bar) = self.bar(&text("stage")) {
                    bar.inc_length(event["nodes"].as_u64().unwrap_or(0));
                }
            }
            "finished" => self.finished(event),
            "report" => self.finish_bars(),
            _ => {}
        }
    }

    /// Every stage's bar left drawn as it ended; lines said after it stay below.
    fn finish_bars(&self) {
        if let Ok(bars) = self.bars.lock() {
            for bar in bars.values() {
                bar.finish();
            }
        }
    }

    fn line(&self, line: &str) {
        match self.mode {
            Mode::Bars => {
                let _ = self.multi.println(line);
            }
            _ => errln!("{line}"),
        }
    }

    fn finished(&self, event: &Value) {
        let total = event["tokens_so_far"].as_u64().unwrap_or(0);
        let stage = event["stage"].as_str().unwrap_or_default();
        match self.mode {
            Mode::Bars => {
                if let Some(bar) = self.bar(stage) {
                    bar.inc(1);
                    bar.set_message(format!("{total} tokens"));
                }
            }
            _ => {
                let how = match event["restored"].as_bool() {
                    Some(true) => "restored",
                    _ => "done",
                };
                errln!(
                    "deepr: {how} {stage} {} ({} tokens, {total} so far)",
                    event["node"].as_str().unwrap_or_default(),
                    event["tokens"]
                );
            }
        }
    }

    fn bar(&self, stage: &str) -> Option<ProgressBar> {
        let mut bars = self.bars.lock().ok()?;
        let bar = bars.entry(stage.to_string()).or_insert_with(|| {
            let bar = self.multi.add(ProgressBar::new(0));
            let style = ProgressStyle::with_template(
                "{prefix:>11} [{bar:24}] {pos}/{len} {elapsed:>4} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(stage.to_string());
            bar
        });
        Some(bar.clone())
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.finish_bars();
    }
}

/// A judged section as lines: its subquestion and up to three supported claims.
fn judged(event: &Value) -> String {
    let mut text = format!(
        "deepr: judged — {}",
        event["subquestion"].as_str().unwrap_or_default()
    );
    let claims = event["claims"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let supported = claims
        .iter()
        .filter(|claim| claim["verdict"] == "supported")
        .filter_map(|claim| claim["text"].as_str());
    for claim in supported.take(3) {
        text.push_str(&format!("\n  · {claim}"));
    }
    text
}

/// `runs search`'s lines: the best ten past runs, each with an example claim.
pub fn print_found(found: &[(f64, crate::memory::Memory)], query: &str) {
    if found.is_empty() {
        outln!("no past run matches {query:?}");
        return;
    }
    for (score, memory) in found.iter().take(10) {
        outln!(
            "{:.2}  {}  {}  {}",
            score,
            memory.run_id,
            crate::memory::day(&memory.date),
            memory.topic
        );
        outln!("      report: {}", memory.report);
        if let Some((claim, source)) = memory.claims.first() {
            outln!("      e.g. {claim} ({source})");
        }
    }
}
