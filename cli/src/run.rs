//! `deepr run`: validate every argument ([`crate::settings`]), create the run, and hand
//! it to a session.

use std::path::{Path, PathBuf};

use deepr_stages::{Depth, Strategy};

use crate::record::{self, now_secs, RunRecord};
use crate::session::{self, SessionOptions};
use crate::settings::{check_corpus, prepare_out, validate};
use crate::{state, usage, Failure, Globals, RunArgs};

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

pub fn execute(globals: &Globals, args: &RunArgs) -> Result<u8, Failure> {
    let settings = validate(globals, args)?;
    let (line, dollars) = estimate_of(&settings)?;
    if args.estimate {
        outln!("{line}");
        return Ok(0);
    }
    if let Some(corpus) = &settings.corpus {
        check_corpus(corpus)?;
    }
    if let (Some(_), true) = (&settings.db, args.plan_only) {
        return Err(usage(
            "--plan-only plans on this machine: drop --db (or unset DEEPR_DB), then queue the plan with --plan plan.toml --db …",
        ));
    }
    if let Some(url) = &settings.db {
        // Fleet mode: the run is recorded in the database and executed by a worker.
        if !args.detach {
            prepare_out(&settings.out)?;
        }
        let job = fleet_job(&settings, args)?;
        return crate::fleet::submit(url, job, args.detach, globals.quiet);
    }
    if args.detach {
        return Err(usage(
            "--detach queues a run in the fleet: pass --db postgres://… or set DEEPR_DB",
        ));
    }
    let new_run = create(globals, args, &settings, &line, dollars)?;
    let end = session::execute(
        &new_run.state_dir,
        session::Start::New(Box::new(new_run.record)),
        new_run.options,
    )?;
    Ok(exit_code(&end))
}

/// The exit code of a session's end, once what only the command line says about it
/// is said (where a plan was written).
pub fn exit_code(end: &deepr_session::SessionEnd) -> u8 {
    if let deepr_session::SessionEnd::PlanWritten(path) = end {
        outln!(
            "deepr: plan written to {0}; review or edit it, then: deepr run --plan {0} (with the same --corpus or --sources, and --out)",
            path.display()
        );
    }
    end.exit_code()
}

/// A run created in the local state dir, ready for its first session.
pub struct NewRun {
    pub state_dir: PathBuf,
    pub record: RunRecord,
    pub options: SessionOptions,
}

/// Validates `args` and creates the run in the local state dir without running it
/// (the MCP server's `research`): the same checks and record as `deepr run`.
pub fn prepare_local(globals: &Globals, args: &RunArgs) -> Result<NewRun, Failure> {
    let settings = validate(globals, args)?;
    let (line, dollars) = estimate_of(&settings)?;
    if let Some(corpus) = &settings.corpus {
        check_corpus(corpus)?;
    }
    create(globals, args, &settings, &line, dollars)
}

/// Validates `args` for the fleet (the MCP server's `research` with a database):
/// the job to queue and the database's URL. Without a database configured, `None`.
pub fn prepare_fleet(
    globals: &Globals,
    args: &RunArgs,
) -> Result<Option<(String, crate::fleet::FleetJob)>, Failure> {
    let settings = validate(globals, args)?;
    let Some(url) = settings.db.clone() else {
        return Ok(None);
    };
    if let Some(corpus) = &settings.corpus {
        check_corpus(corpus)?;
    }
    Ok(Some((url, fleet_job(&settings, args)?)))
}

/// The fleet job of a validated run: its record and budgets.
fn fleet_job(
    settings: &crate::settings::Settings,
    args: &RunArgs,
) -> Result<crate::fleet::FleetJob, Failure> {
    Ok(crate::fleet::FleetJob {
        record: new_record(settings, args)?,
        max_tokens: args.budget.max_tokens,
        max_cost: args.budget.max_cost,
        max_time_secs: settings.max_time.map(|t| t.as_secs_f64()),
    })
}

/// The run's estimate line and dollar range, priced by its settings.
pub fn estimate_of(
    settings: &crate::settings::Settings,
) -> Result<(String, Option<(f64, f64)>), Failure> {
    let prices = deepr_providers::PriceTable::with_overrides(&settings.prices).map_err(usage)?;
    Ok(estimate_line(
        settings.depth,
        settings.strategy,
        settings.model_reading(),
        &settings.llm_cheap,
        settings.price_as.as_deref(),
        &prices,
    ))
}

/// Records a new run in the state dir: its embedder, its folder (a run id in use is
/// refused) and the session options its budgets and estimate give.
fn create(
    globals: &Globals,
    args: &RunArgs,
    settings: &crate::settings::Settings,
    estimate: &str,
    dollars: Option<(f64, f64)>,
) -> Result<NewRun, Failure> {
    // A named embedding model that cannot be used stops the run before it is recorded;
    // the one found is recorded, so a resume ranks as the run began.
    let embed = deepr_session::embedder::embed_choice()?;
    prepare_out(&settings.out)?;
    let plan_only = match args.plan_only {
        true => Some(deepr_session::record::PlanOnly {
            path: crate::settings::plan_path(&settings.out)?,
            notes: vec![estimate.to_string()],
        }),
        false => None,
    };
    let mut record = new_record(settings, args)?;
    record.embed = Some(embed);
    record.plan_only = plan_only;
    state::prepare(&settings.state_dir)?;
    make_run_dir(&settings.state_dir, &settings.run_id)?;
    let mut notices = vec![format!("deepr: {estimate}")];
    if let (Some(max), Some((low, high))) = (args.budget.max_cost, dollars) {
        if high > max {
            notices.push(format!(
                "deepr: the estimate (${low:.4}–${high:.4}) can exceed --max-cost ${max:.4}; if it does, the run stops early with an incomplete report (resume with a larger budget)"
            ));
        }
    }
    let options = new_session(globals, &args.budget, settings.max_time, notices);
    Ok(NewRun {
        state_dir: settings.state_dir.clone(),
        record,
        options,
    })
}

/// The options of a new run's first session: its budgets and what to say at start.
pub fn new_session(
    globals: &Globals,
    budget: &crate::BudgetArgs,
    max_time: Option<std::time::Duration>,
    notices: Vec<String>,
) -> SessionOptions {
    SessionOptions {
        quiet: globals.quiet,
        json: globals.json,
        concurrency: None,
        io_concurrency: None,
        retry_degraded: false,
        max_tokens: budget.max_tokens,
        max_cost: budget.max_cost,
        max_time,
        dry_run: false,
        notices,
        stop: None,
        events: None,
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

/// The run's record, from validated settings.
fn new_record(settings: &crate::settings::Settings, args: &RunArgs) -> Result<RunRecord, Failure> {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut record = RunRecord {
        schema: record::RECORD_SCHEMA.into(),
        run_id: settings.run_id.clone(),
        topic: settings.topic.clone(),
        brief: record::brief_of(&settings.topic),
        depth: settings.depth,
        strategy: settings.strategy,
        corpus: settings.corpus.as_deref().map(absolute),
        sources: settings.sources.clone(),
        source_urls: settings.source_urls.clone(),
        allow_hosts: args.allow_hosts.clone(),
        out: absolute(&settings.out),
        llm_strong: settings.llm_strong.clone(),
        llm_cheap: settings.llm_cheap.clone(),
        llm_base_url: settings.llm_base_url.clone(),
        price_as: settings.price_as.clone(),
        limits: settings.limits.clone(),
        prices: settings.prices.clone(),
        concurrency: settings.concurrency,
        offline_latency_ms: 0,
        prompts: settings.prompts.as_deref().map(absolute),
        created: now_secs(),
        cache_namespace: String::new(),
        search_latency_ms: 0,
        fetch_latency_ms: 0,
        simulation: settings.simulation.clone(),
        io_concurrency: settings.io_concurrency,
        follow_links: args.follow_links,
        model_pool: args.model_pool,
        reading: settings.reading,
        formats: {
            let mut formats: Vec<String> = args
                .formats
                .iter()
                .filter_map(|f| f.extra_file().map(String::from))
                .collect();
            formats.sort();
            formats.dedup();
            formats
        },
        embed: None,
        user_plan: settings.user_plan.clone(),
        plan_only: None,
        lineage: None,
    };
    // The means, for readers of older records; the distributions are in `simulation`.
    record.offline_latency_ms = record::mean_ms(&record.model_latency()?.first_token);
    record.search_latency_ms = record::mean_ms(&record.search_latency()?);
    record.fetch_latency_ms = record::mean_ms(&record.fetch_latency()?);
    Ok(record)
}
