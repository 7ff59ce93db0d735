//! Settings of a run: flags, environment and the config file merged into one validated
//! value ([`Settings`]), checked once before anything is created. Every check gives a
//! one-line usage error (exit 2) that says what was wrong and what to pass instead.

use std::path::{Path, PathBuf};
use std::time::Duration;

use deepr_stages::{Depth, Strategy};

use crate::record;
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

pub struct Settings {
    pub topic: String,
    pub depth: Depth,
    pub strategy: Strategy,
    pub concurrency: usize,
    pub io_concurrency: usize,
    pub corpus: Option<PathBuf>,
    pub sources: Vec<String>,
    pub source_urls: std::collections::BTreeMap<String, String>,
    pub out: PathBuf,
    pub run_id: String,
    pub state_dir: PathBuf,
    pub simulation: record::Simulation,
    pub prompts: Option<PathBuf>,
    pub max_time: Option<Duration>,
    pub llm_strong: String,
    pub llm_cheap: String,
    pub llm_base_url: Option<String>,
    pub price_as: Option<String>,
    pub limits: deepr_providers::llm::LlmLimits,
    pub prices: std::collections::BTreeMap<String, deepr_providers::prices::Price>,
}

pub fn validate(globals: &Globals, args: &RunArgs) -> Result<Settings, Failure> {
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
    // In fleet mode the workers' keys count, not the submitter's (keys never travel).
    let fleet = crate::fleet::db_url(globals)?.is_some();
    for spec in [&llm_strong, &llm_cheap] {
        let parsed = deepr_providers::LlmSpec::parse(spec).map_err(usage)?;
        if !fleet {
            crate::wiring::check_credentials(&parsed, llm_base_url.as_deref())?;
        }
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
    let max_time = check_budget_values(&args.budget)?;
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

pub fn check_corpus(corpus: &Path) -> Result<(), Failure> {
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

pub fn prepare_out(out: &Path) -> Result<(), Failure> {
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

/// Budget values must be positive numbers.
/// Checks the budget flags and returns `--max-time` parsed (run and resume alike).
pub fn check_budget_values(budget: &BudgetArgs) -> Result<Option<Duration>, Failure> {
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
    budget
        .max_time
        .as_deref()
        .map(|v| record::parse_duration("--max-time", v))
        .transpose()
}
