//! The runs this MCP server is executing: each is an ordinary run in the state dir,
//! executed by a session on its own thread with its own stop flag (`cancel_run` sets
//! it: running steps finish and checkpoint, as on Ctrl-C) and its progress events
//! gathered for `run_status` and progress notifications.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use deepr_session::{ExitStatus, Failure, SessionEnd, SessionOptions, Start};
use serde_json::{json, Value};

/// How many runs one server executes at once; more are refused (resume them later).
pub const MAX_ACTIVE_RUNS: usize = 4;

/// What a run's progress events said so far.
#[derive(Default)]
pub struct Live {
    pub tokens_so_far: u64,
    /// Stage → (steps planned, steps finished).
    pub stages: BTreeMap<String, (u64, u64)>,
    /// Subquestions whose claims are judged.
    pub sections_judged: u64,
    pub last_message: Option<String>,
    /// The stage of the last step that finished.
    pub last_stage: Option<String>,
}

impl Live {
    fn take(&mut self, event: &Value) {
        let stage = || event["stage"].as_str().unwrap_or("?").to_string();
        match event["event"].as_str() {
            Some("planned") => {
                self.stages.entry(stage()).or_default().0 += event["nodes"].as_u64().unwrap_or(0);
            }
            Some("finished") => {
                self.stages.entry(stage()).or_default().1 += 1;
                self.last_stage = Some(stage());
                self.tokens_so_far = event["tokens_so_far"]
                    .as_u64()
                    .unwrap_or(self.tokens_so_far);
            }
            Some("section") => self.sections_judged += 1,
            Some("message" | "warning") => {
                self.last_message = event["text"].as_str().map(str::to_string)
            }
            _ => {}
        }
    }

    /// Steps finished and planned, over every stage.
    pub fn steps(&self) -> (u64, u64) {
        self.stages
            .values()
            .fold((0, 0), |(done, all), (planned, finished)| {
                (done + finished, all + planned)
            })
    }

    pub fn to_json(&self) -> Value {
        let (done, planned) = self.steps();
        json!({
            "tokens_so_far": self.tokens_so_far,
            "steps_finished": done,
            "steps_planned": planned,
            "sections_judged": self.sections_judged,
            "stages": self.stages.iter().map(|(stage, (planned, finished))| (stage.clone(), json!({"planned": planned, "finished": finished}))).collect::<serde_json::Map<_, _>>(),
            "last_message": self.last_message,
        })
    }
}

/// How a session of an active run ended.
#[derive(Clone, Debug)]
pub struct Ended {
    /// The command line's exit code for this ending (0 finished, 4 budget, …).
    pub exit_code: u8,
    /// `finished`, `incomplete`, `interrupted`, `auth-refused` or `failed`.
    pub state: &'static str,
    /// One line: what happened and what to do next.
    pub detail: String,
}

impl Ended {
    fn of(result: Result<SessionEnd, Failure>, run_id: &str) -> Self {
        let resume = format!("resume it with resume_run {{\"run_id\": \"{run_id}\"}}");
        match result {
            Ok(end) => {
                let exit_code = ExitStatus::from(&end).code();
                let (state, detail) = match end {
                    SessionEnd::Finished(..) => ("finished", "the report is written".to_string()),
                    SessionEnd::Incomplete { reason, .. } => {
                        ("incomplete", format!("{reason}; {resume}"))
                    }
                    SessionEnd::AuthRefused { provider, message } => (
                        "auth-refused",
                        format!("{provider} refused the credentials ({message}); fix the server's key, then {resume}"),
                    ),
                    SessionEnd::Interrupted(_) => (
                        "interrupted",
                        format!("stopped; finished steps are checkpointed; {resume}"),
                    ),
                    SessionEnd::Previewed => ("previewed", "a preview only; nothing ran".to_string()),
                    SessionEnd::PlanWritten(path) => (
                        "planned",
                        format!("the plan is written to {}; nothing was researched", path.display()),
                    ),
                };
                Self {
                    exit_code,
                    state,
                    detail,
                }
            }
            Err(failure) => Self {
                exit_code: ExitStatus::from(&failure).code(),
                state: "failed",
                detail: match failure {
                    Failure::Usage(message) => message,
                    Failure::Run(error) => format!("{error:#}"),
                },
            },
        }
    }
}

/// A run this server is executing (or executed since it started).
pub struct ActiveRun {
    pub run_id: String,
    pub stop: Arc<AtomicBool>,
    pub live: Mutex<Live>,
    pub ended: Mutex<Option<Ended>>,
}

impl ActiveRun {
    pub fn ended(&self) -> Option<Ended> {
        self.ended.lock().ok().and_then(|e| e.clone())
    }

    pub fn live_json(&self) -> Value {
        self.live
            .lock()
            .map(|live| live.to_json())
            .unwrap_or(Value::Null)
    }
}

/// The server's runs, by id.
#[derive(Default)]
pub struct ActiveRuns {
    runs: Mutex<BTreeMap<String, Arc<ActiveRun>>>,
}

impl ActiveRuns {
    pub fn get(&self, run_id: &str) -> Option<Arc<ActiveRun>> {
        self.runs.lock().ok()?.get(run_id).cloned()
    }

    /// Whether this server is executing `run_id` now.
    pub fn executing(&self, run_id: &str) -> bool {
        self.get(run_id).is_some_and(|run| run.ended().is_none())
    }

    /// Starts a session of `run_id` on its own thread: it says nothing, stopped by its own flag,
    /// its events gathered. Refused when [`MAX_ACTIVE_RUNS`] are executing.
    pub fn launch(
        &self,
        run_id: &str,
        state_dir: PathBuf,
        start: Start,
        mut options: SessionOptions,
    ) -> Result<Arc<ActiveRun>, String> {
        let mut runs = self
            .runs
            .lock()
            .map_err(|_| "the server's run table is unusable; restart deepr mcp".to_string())?;
        let executing = runs.values().filter(|r| r.ended().is_none()).count();
        if executing >= MAX_ACTIVE_RUNS {
            return Err(format!("this server already executes {executing} runs (at most {MAX_ACTIVE_RUNS}); wait for one to end or cancel one"));
        }
        let run = Arc::new(ActiveRun {
            run_id: run_id.to_string(),
            stop: Arc::new(AtomicBool::new(false)),
            live: Mutex::new(Live::default()),
            ended: Mutex::new(None),
        });
        let listener = Arc::clone(&run);
        options.stop = Some(Arc::clone(&run.stop));
        options.events = Some(Arc::new(move |event: &Value| {
            if let Ok(mut live) = listener.live.lock() {
                live.take(event);
            }
        }));
        let finisher = Arc::clone(&run);
        let id = run_id.to_string();
        std::thread::Builder::new()
            .name(format!("run {run_id}"))
            .spawn(move || {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    deepr_session::execute(&state_dir, start, options)
                }));
                let ended = match result {
                    Ok(result) => Ended::of(result, &id),
                    Err(_) => Ended {
                        exit_code: ExitStatus::Failed.code(),
                        state: "failed",
                        detail: format!("the session of run {id} panicked; its checkpoints are kept: resume it with resume_run"),
                    },
                };
                if let Ok(mut slot) = finisher.ended.lock() {
                    *slot = Some(ended);
                }
            })
            .map_err(|e| format!("cannot start a thread for run {run_id}: {e}"))?;
        runs.insert(run_id.to_string(), Arc::clone(&run));
        Ok(run)
    }

    /// Asks every executing run to stop (the server is shutting down) and waits for
    /// them to checkpoint, at most `patience`.
    pub fn stop_all(&self, patience: std::time::Duration) {
        let runs: Vec<Arc<ActiveRun>> = match self.runs.lock() {
            Ok(runs) => runs.values().cloned().collect(),
            Err(_) => return,
        };
        for run in &runs {
            run.stop.store(true, Ordering::SeqCst);
        }
        let deadline = std::time::Instant::now() + patience;
        while runs.iter().any(|r| r.ended().is_none()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}
