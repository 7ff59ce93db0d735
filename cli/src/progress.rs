//! Live progress: indicatif bars per stage on a terminal, plain log lines otherwise,
//! nothing with `--quiet`; every event also goes to the run's log file.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use deepr_orchestrator::Progress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub enum Mode {
    /// One JSON object per line on stdout (`--json`), for scripts.
    Json,
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
        Self {
            mode,
            multi,
            bars: Mutex::new(BTreeMap::new()),
            log: Mutex::new(log),
            tokens: AtomicU64::new(0),
            started: Instant::now(),
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
            Mode::Lines => eprintln!("{message}"),
            Mode::Json => emit(
                serde_json::json!({"event": "message", "text": message.trim_start_matches("deepr: ")}),
            ),
        }
    }

    /// A structured event (`--json` only).
    pub fn event(&self, value: serde_json::Value) {
        if matches!(self.mode, Mode::Json) {
            emit(value);
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

fn emit(value: serde_json::Value) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{value}");
    let _ = stdout.flush();
}

impl Progress for Reporter {
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
            Mode::Lines => eprintln!("deepr: {line}"),
            Mode::Json => emit(
                serde_json::json!({"event": "finished", "stage": stage, "node": node_id, "restored": restored, "tokens": tokens, "tokens_so_far": total}),
            ),
            Mode::Quiet => {}
        }
    }
}
