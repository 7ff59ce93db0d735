//! `deepr run`: validate every argument, create the run, and hand it to a session.

use std::path::{Path, PathBuf};
use std::time::Duration;

use deepr_stages::{Depth, Strategy};

use crate::record::{self, now_secs, RunRecord};
use crate::session::{self, SessionOptions};
use crate::{config, state, usage, BudgetArgs, DepthArg, Failure, Globals, RunArgs, StrategyArg};

const MAX_TOPIC_CHARS: usize = 2000;

/// `--io-concurrency` (or `io_concurrency` in the config) must be 1 to 64.
pub fn check_io_concurrency(value: usize) -> Result<usize, Failure> {
    if (1..=deepr_stages::concurrent::MAX_IO_CONCURRENCY).contains(&value) {
        Ok(value)
    } else {
        Err(usage(format!(
            "--io-concurrency {value} is out of range; use 1 (one call at a time) to {}",
            deepr_stages::concurrent::MAX_IO_CONCURRENCY
        )))
    }
}

struct Settings {
    topic: String,
    depth: Depth,
    strategy: Strategy,
    concurrency: usize,
    io_concurrency: usize,
    corpus: Option<PathBuf>,
    sources: Vec<String>,
    source_urls: std::collections::BTreeMap<String, String>,
    out: PathBuf,
    run_id: String,
    state_dir: PathBuf,
    simulation: record::Simulation,
    prompts: Option<PathBuf>,
    max_time: Option<Duration>,
    llm_strong: String,
    llm_cheap: String,
    llm_base_url: Option<String>,
    price_as: Option<String>,
    limits: deepr_providers::llm::LlmLimits,
    prices: std::collections::BTreeMap<String, deepr_providers::prices::Price>,
}

fn validate(globals: &Globals, args: &RunArgs) -> Result<Settings, Failure> {
    let file = config::load(globals.config.as_deref())?;
    let topic = args.topic.trim().to_string();
    if topic.is_empty() {
        return Err(usage("the topic is empty; pass the question to research, e.g. deepr run \"How does WAL work?\" --corpus DIR"));
    }
    if topic.chars().count() > MAX_TOPIC_CHARS {
        return Err(usage(format!("the topic is {} characters; keep it under {MAX_TOPIC_CHARS} (put background in the corpus instead)", topic.chars().count())));
    }
    if topic.chars().any(|c| c.is_control() && !c.is_whitespace()) {
        return Err(usage(
            "the topic contains control characters; pass plain text",
        ));
    }
    let depth = match (args.depth, file.depth.as_deref()) {
        (Some(DepthArg::Quick), _) | (None, Some("quick")) => Depth::Quick,
        (Some(DepthArg::Deep), _) | (None, Some("deep")) => Depth::Deep,
        (Some(DepthArg::Standard), _) | (None, Some("standard") | None) => Depth::Standard,
        (None, Some(other)) => {
            return Err(usage(format!(
                "config depth {other:?} is unknown; use quick, standard or deep"
            )))
        }
    };
    let strategy = match (args.strategy, file.strategy.as_deref()) {
        (Some(StrategyArg::NoJudge), _) | (None, Some("no-judge")) => Strategy::NoJudge,
        (Some(StrategyArg::PerClaim), _) | (None, Some("per-claim")) => Strategy::PerClaim,
        (Some(StrategyArg::FreeQuote), _) | (None, Some("free-quote")) => Strategy::FreeQuote,
        (Some(StrategyArg::Linear), _) | (None, Some("linear") | None) => Strategy::Linear,
        (None, Some(other)) => {
            return Err(usage(format!(
            "config strategy {other:?} is unknown; use linear, per-claim, free-quote or no-judge"
        )))
        }
    };
    let llm = args
        .llm
        .clone()
        .or(file.llm.clone())
        .unwrap_or_else(|| "offline".into());
    let llm_strong = args
        .llm_strong
        .clone()
        .or(args.llm.clone())
        .or(file.llm_strong.clone())
        .unwrap_or_else(|| llm.clone());
    let llm_cheap = args
        .llm_cheap
        .clone()
        .or(args.llm.clone())
        .or(file.llm_cheap.clone())
        .unwrap_or_else(|| llm.clone());
    let llm_base_url = args.llm_base_url.clone().or(file.llm_base_url.clone());
    for spec in [&llm_strong, &llm_cheap] {
        let parsed = deepr_providers::LlmSpec::parse(spec).map_err(usage)?;
        crate::wiring::check_credentials(&parsed, llm_base_url.as_deref())?;
    }
    if let Some(base) = &llm_base_url {
        let ok = url::Url::parse(base)
            .map(|u| matches!(u.scheme(), "http" | "https"))
            .unwrap_or(false);
        if !ok {
            return Err(usage(format!(
                "--llm-base-url {base:?} is not an http(s) URL; e.g. http://127.0.0.1:8080/v1"
            )));
        }
    }
    let price_as = args.price_as.clone().or(file.price_as.clone());
    let prices = deepr_providers::PriceTable::with_overrides(&file.prices)
        .map_err(|e| usage(format!("config prices: {e}")))?;
    if let Some(model) = &price_as {
        if prices.price(model).is_none() {
            let known: Vec<&String> = prices.models.keys().collect();
            return Err(usage(format!("--price-as {model:?} has no price; known: {known:?} (add it under [prices] in deepr.toml)")));
        }
    }
    let limits = file.limits.clone().unwrap_or_default();
    let concurrency = args.concurrency.or(file.concurrency).unwrap_or(5);
    if !(1..=64).contains(&concurrency) {
        return Err(usage(format!(
            "--concurrency {concurrency} is out of range; use 1 to 64"
        )));
    }
    let io_concurrency = check_io_concurrency(
        args.io_concurrency
            .or(file.io_concurrency)
            .unwrap_or(deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY),
    )?;
    let corpus = args.corpus.clone();
    let sources: Vec<String> = match &args.sources {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None if corpus.is_some() => vec!["corpus".to_string()],
        None => vec!["wikipedia".into(), "arxiv".into(), "hn".into()],
    };
    if sources.is_empty() {
        return Err(usage(
            "--sources is empty; e.g. --sources wikipedia,arxiv,hn or --sources corpus",
        ));
    }
    let mut source_urls = std::collections::BTreeMap::new();
    for (name, flag) in args.source_urls.pairs() {
        if let Some(url) = flag {
            let ok = url::Url::parse(url)
                .map(|u| matches!(u.scheme(), "http" | "https"))
                .unwrap_or(false);
            if !ok {
                return Err(usage(format!("--{name}-url {url:?} is not an http(s) URL")));
            }
            source_urls.insert(name.to_string(), url.clone());
        }
    }
    for source in &sources {
        if source == "corpus" {
            if corpus.is_none() {
                return Err(usage("--sources corpus needs --corpus DIR"));
            }
            continue;
        }
        let api = deepr_providers::WebApi::parse(source)
            .ok_or_else(|| usage(format!("source {source:?} is unknown; use corpus, wikipedia, arxiv, hn, searxng, brave, tavily")))?;
        if api.default_base().is_none() && !source_urls.contains_key(source) {
            return Err(usage(format!(
                "{source} needs --{source}-url (your instance's base URL)"
            )));
        }
        if let Some(var) = api.key_var() {
            if std::env::var(var)
                .map(|v| v.trim().is_empty())
                .unwrap_or(true)
            {
                return Err(usage(format!("{source} needs {var} in the environment")));
            }
        }
    }
    for host in &args.allow_hosts {
        if host.is_empty() || host.contains('/') || host.chars().any(char::is_whitespace) {
            return Err(usage(format!(
                "--allow-host {host:?} is not HOST or HOST:PORT"
            )));
        }
    }
    let out = match &args.out {
        Some(out) => out.clone(),
        None => PathBuf::from(format!("{}.md", state::slug(&topic))),
    };
    if out.file_name().is_none() || out.as_os_str().to_string_lossy().ends_with('/') {
        return Err(usage(format!(
            "--out {} is not a file path; pass e.g. --out report.md",
            out.display()
        )));
    }
    if out.is_dir() {
        return Err(usage(format!(
            "--out {} is a folder; pass a file path such as {}/report.md",
            out.display(),
            out.display()
        )));
    }
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    let run_id = match &args.run_id {
        Some(id) => {
            state::check_run_id(id)?;
            id.clone()
        }
        None => state::new_run_id(&topic),
    };
    let simulation = record::Simulation::from_settings(&args.simulation, &file)?;
    let max_time = args
        .budget
        .max_time
        .as_deref()
        .map(|v| record::parse_duration("--max-time", v))
        .transpose()?;
    check_budget_values(&args.budget)?;
    let prompts = args.prompts.clone().or(file.prompts.map(PathBuf::from));
    if let Some(dir) = &prompts {
        crate::wiring::load_prompts(Some(dir))?;
    }
    Ok(Settings {
        topic,
        depth,
        strategy,
        concurrency,
        io_concurrency,
        corpus,
        sources,
        source_urls,
        out,
        run_id,
        state_dir,
        simulation,
        prompts,
        max_time,
        llm_strong,
        llm_cheap,
        llm_base_url,
        price_as,
        limits,
        prices: file.prices.clone(),
    })
}

fn check_corpus(corpus: &Path) -> Result<(), Failure> {
    match std::fs::metadata(corpus) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(usage(format!(
            "corpus folder {} does not exist; check the --corpus path",
            corpus.display()
        ))),
        Err(e) => Err(usage(format!(
            "cannot read corpus folder {}: {e}; check its permissions",
            corpus.display()
        ))),
        Ok(m) if !m.is_dir() => Err(usage(format!(
            "--corpus {} is not a folder; pass the folder that holds the documents",
            corpus.display()
        ))),
        Ok(_) => std::fs::read_dir(corpus).map(|_| ()).map_err(|e| {
            usage(format!(
                "cannot read corpus folder {}: {e}; check its permissions",
                corpus.display()
            ))
        }),
    }
}

fn prepare_out(out: &Path) -> Result<(), Failure> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            usage(format!(
                "cannot create the folder of --out {}: {e}; pass a writable path",
                out.display()
            ))
        })?;
    }
    Ok(())
}

/// The estimate line: calls, tokens and (if the model is priced) dollars.
pub fn estimate_line(
    depth: Depth,
    strategy: Strategy,
    model: &str,
    price_as: Option<&str>,
    prices: &deepr_providers::PriceTable,
) -> (String, Option<(f64, f64)>) {
    let e = deepr_stages::estimate::estimate(depth, strategy);
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
            "estimate for depth {}, strategy {}: {}–{} LLM calls, {}–{} tokens, {money}",
            depth.as_str(),
            strategy.as_str(),
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
    let prices = deepr_providers::PriceTable::with_overrides(&settings.prices).map_err(usage)?;
    let (line, dollars) = estimate_line(
        settings.depth,
        settings.strategy,
        &settings.llm_cheap,
        settings.price_as.as_deref(),
        &prices,
    );
    if args.estimate {
        outln!("{line}");
        return Ok(0);
    }
    if let Some(corpus) = &settings.corpus {
        check_corpus(corpus)?;
    }
    prepare_out(&settings.out)?;
    state::prepare(&settings.state_dir)?;
    let run_dir = settings.state_dir.join("runs").join(&settings.run_id);
    if run_dir.exists() {
        let never_started = !run_dir.join("run.json").exists();
        let hint = if never_started {
            format!(
                " (it was stopped before it started; remove it with `deepr runs rm {}`)",
                settings.run_id
            )
        } else {
            String::new()
        };
        return Err(usage(format!(
            "run id {:?} already exists in {}{hint}; choose another --run-id",
            settings.run_id,
            settings.state_dir.display()
        )));
    }
    std::fs::create_dir_all(&run_dir).map_err(|e| {
        usage(format!(
            "cannot create run folder {}: {e}; pass a writable --state-dir",
            run_dir.display()
        ))
    })?;
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut record = RunRecord {
        schema: record::RECORD_SCHEMA.into(),
        run_id: settings.run_id.clone(),
        topic: settings.topic.clone(),
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
        formats: {
            let mut formats: Vec<String> = args
                .formats
                .iter()
                .filter_map(|f| match f {
                    crate::FormatArg::Md => None,
                    crate::FormatArg::Html => Some("html".to_string()),
                    crate::FormatArg::Bullets => Some("bullets".to_string()),
                    crate::FormatArg::Cards => Some("cards".to_string()),
                })
                .collect();
            formats.sort();
            formats.dedup();
            formats
        },
    };
    // The means, for readers of older records; the distributions are in `simulation`.
    record.offline_latency_ms = record::mean_ms(&record.model_latency()?.first_token);
    record.search_latency_ms = record::mean_ms(&record.search_latency()?);
    record.fetch_latency_ms = record::mean_ms(&record.fetch_latency()?);
    let mut notices = vec![format!("deepr: {line}")];
    if let (Some(max), Some((low, high))) = (args.budget.max_cost, dollars) {
        if high > max {
            notices.push(format!(
                "deepr: the estimate (${low:.4}–${high:.4}) can exceed --max-cost ${max:.4}; if it does, the run stops early with an incomplete report (resume with a larger budget)"
            ));
        }
    }
    let options = SessionOptions {
        quiet: globals.quiet,
        json: globals.json,
        concurrency: None,
        io_concurrency: None,
        retry_degraded: false,
        max_tokens: args.budget.max_tokens,
        max_cost: args.budget.max_cost,
        max_time: settings.max_time,
        dry_run: false,
        notices,
    };
    session::execute(
        &settings.state_dir,
        session::Start::New(Box::new(record)),
        options,
    )
}

/// Budget values must be positive numbers.
pub fn check_budget_values(budget: &BudgetArgs) -> Result<(), Failure> {
    if budget.max_tokens == Some(0) {
        return Err(usage(
            "--max-tokens 0 allows nothing; pass a positive number of tokens",
        ));
    }
    if let Some(cost) = budget.max_cost {
        if !cost.is_finite() || cost <= 0.0 {
            return Err(usage(format!(
                "--max-cost {cost} is not a positive amount of dollars; pass e.g. --max-cost 0.50"
            )));
        }
    }
    Ok(())
}
