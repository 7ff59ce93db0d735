//! A validated run created in the local state dir, ready for its first session
//! ([`NewRun`]), or queued for the fleet ([`fleet_job`]); and the estimate a run shows
//! before it starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use deepr_stages::{Depth, Strategy};

use super::{validate, Budget, Globals, RunRequest, ValidRun};
use crate::record::{FleetJob, PlanOnly, RunRecord};
use crate::{state, usage, Failure, SessionOptions};

/// A run created in the local state dir, ready for its first session.
pub struct NewRun {
    pub state_dir: PathBuf,
    pub record: RunRecord,
    pub options: SessionOptions,
}

/// Validates the request and creates the run in the local state dir without running
/// it (`deepr run`, the MCP server's `research` and `plan_research`).
pub fn prepare_local(globals: &Globals, request: &RunRequest) -> Result<NewRun, Failure> {
    let valid = validate(globals, request)?;
    if let Some(corpus) = &valid.record.corpus {
        super::check_corpus(corpus)?;
    }
    create_run(globals, request, valid)
}

/// Validates the request for the fleet: the database's URL and the job to queue.
/// Without a database configured, `None`.
pub fn prepare_fleet(
    globals: &Globals,
    request: &RunRequest,
) -> Result<Option<(String, FleetJob)>, Failure> {
    let valid = validate(globals, request)?;
    let Some(url) = valid.db.clone() else {
        return Ok(None);
    };
    if let Some(corpus) = &valid.record.corpus {
        super::check_corpus(corpus)?;
    }
    Ok(Some((url, fleet_job(valid, &request.budget))))
}

/// The fleet job of a validated run: its record and budgets.
pub fn fleet_job(valid: ValidRun, budget: &Budget) -> FleetJob {
    FleetJob {
        record: valid.record,
        max_tokens: budget.max_tokens,
        max_cost: budget.max_cost,
        max_time_secs: valid.max_time.map(|t| t.as_secs_f64()),
    }
}

/// How the run's model extractor reads; `None` for the offline model, which reads its
/// ranked share whatever `--reading` says (and triages without a call).
fn model_reading(record: &RunRecord) -> Option<deepr_settings::Reading> {
    match deepr_providers::llm_spec::LlmSpec::parse(&record.llm_cheap) {
        Ok(deepr_providers::llm_spec::LlmSpec::Offline) => None,
        _ => Some(record.reading),
    }
}

/// What a run is expected to cost before it starts.
#[derive(Clone, Debug)]
pub struct Estimate {
    /// The one line a front end shows.
    pub line: String,
    pub depth: Depth,
    pub strategy: Strategy,
    /// The model extractor's reading (`None`: the offline model reads ranked).
    pub reading: Option<deepr_settings::Reading>,
    pub model: String,
    pub calls: (u64, u64),
    pub tokens: (u64, u64),
    /// Low and high, when the model (or `--price-as`) is priced.
    pub dollars: Option<(f64, f64)>,
}

/// The estimate of a validated run: calls, tokens and (if the model is priced) dollars.
pub fn estimate(record: &RunRecord) -> Result<Estimate, Failure> {
    let prices = deepr_providers::PriceTable::with_overrides(&record.prices).map_err(usage)?;
    let reading = model_reading(record);
    let (line, dollars) = estimate_line(
        record.depth,
        record.strategy,
        reading,
        &record.llm_cheap,
        record.price_as.as_deref(),
        &prices,
    );
    let e = deepr_stages::estimate::estimate(record.depth, record.strategy, reading);
    Ok(Estimate {
        line,
        depth: record.depth,
        strategy: record.strategy,
        reading,
        model: record.llm_cheap.clone(),
        calls: (e.calls_low, e.calls_high),
        tokens: (e.tokens_low, e.tokens_high),
        dollars,
    })
}

/// The estimate line: calls, tokens and (if the model is priced) dollars.
pub fn estimate_line(
    depth: Depth,
    strategy: Strategy,
    reading: Option<deepr_stages::research::Reading>,
    model: &str,
    price_as: Option<&str>,
    prices: &deepr_providers::PriceTable,
) -> (String, Option<(f64, f64)>) {
    let e = deepr_stages::estimate::estimate(depth, strategy, reading);
    // Measured split: about 85 % of a call's tokens are prompt, 15 % completion.
    let cost = |tokens: u64| {
        let prompt = tokens * 85 / 100;
        prices.cost(price_as.unwrap_or(model), prompt, tokens - prompt, 0)
    };
    let dollars = cost(e.tokens_low).zip(cost(e.tokens_high));
    let money = match dollars {
        Some((low, high)) => format!("${low:.4}–${high:.4}"),
        None => "unpriced (use --price-as MODEL to read it in dollars)".to_string(),
    };
    (
        format!(
            "estimate for depth {}, strategy {}, reading {}: {}–{} LLM calls, {}–{} tokens, {money}",
            depth.as_str(),
            strategy.as_str(),
            reading.map_or("ranked (offline)", |r| r.as_str()),
            e.calls_low,
            e.calls_high,
            e.tokens_low,
            e.tokens_high
        ),
        dollars,
    )
}

/// Records a validated run in the state dir: its embedder, its folder (a run id in use
/// is refused) and the session options its budgets and estimate give.
pub fn create_run(
    globals: &Globals,
    request: &RunRequest,
    valid: ValidRun,
) -> Result<NewRun, Failure> {
    let estimate = estimate(&valid.record)?;
    // A named embedding model that cannot be used stops the run before it is recorded;
    // the one found is recorded, so a resume ranks as the run began.
    let embed = crate::embedder::embed_choice()?;
    super::prepare_out(&valid.record.out)?;
    let ValidRun {
        mut record,
        state_dir,
        max_time,
        ..
    } = valid;
    record.embed = Some(embed);
    if request.plan_only {
        record.plan_only = Some(PlanOnly {
            path: plan_path(&record.out)?,
            notes: vec![estimate.line.clone()],
        });
    }
    state::prepare(&state_dir)?;
    make_run_dir(&state_dir, &record.run_id)?;
    let mut notices = vec![format!("deepr: {}", estimate.line)];
    if let (Some(max), Some((low, high))) = (request.budget.max_cost, estimate.dollars) {
        if high > max {
            notices.push(format!(
                "deepr: the estimate (${low:.4}–${high:.4}) can exceed --max-cost ${max:.4}; if it does, the run stops early with an incomplete report (resume with a larger budget)"
            ));
        }
    }
    let options = session_options(globals, &request.budget, max_time, notices);
    Ok(NewRun {
        state_dir,
        record,
        options,
    })
}

/// Where `--plan-only` writes the plan: `plan.toml` beside the report. An existing
/// one (maybe edited) is never overwritten.
fn plan_path(out: &Path) -> Result<PathBuf, Failure> {
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty());
    let path = dir.map_or_else(|| PathBuf::from("plan.toml"), |d| d.join("plan.toml"));
    if path.exists() {
        return Err(usage(format!(
            "{} exists (maybe an edited plan); run it with --plan {0}, move it, or pass another --out",
            path.display()
        )));
    }
    Ok(path)
}

/// The options of a new run's first session: its budgets and what to say at start.
pub fn session_options(
    globals: &Globals,
    budget: &Budget,
    max_time: Option<Duration>,
    notices: Vec<String>,
) -> SessionOptions {
    SessionOptions {
        concurrency: None,
        io_concurrency: None,
        retry_degraded: false,
        max_tokens: budget.max_tokens,
        max_cost: budget.max_cost,
        max_time,
        dry_run: false,
        notices,
        stop: None,
        events: globals.events.clone(),
    }
}

/// Creates the run's folder; a run id already in use is refused.
pub fn make_run_dir(state_dir: &Path, run_id: &str) -> Result<(), Failure> {
    let run_dir = state_dir.join("runs").join(run_id);
    if run_dir.exists() {
        let never_started = !run_dir.join("run.json").exists();
        let hint = if never_started {
            format!(" (it was stopped before it started; remove it with `deepr runs rm {run_id}`)")
        } else {
            String::new()
        };
        return Err(usage(format!(
            "run id {run_id:?} already exists in {}{hint}; choose another --run-id",
            state_dir.display()
        )));
    }
    std::fs::create_dir_all(&run_dir).map_err(|e| {
        usage(format!(
            "cannot create run folder {}: {e}; pass a writable --state-dir",
            run_dir.display()
        ))
    })
}
