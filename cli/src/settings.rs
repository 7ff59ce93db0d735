//! Settings of a run: flags, environment and the config file merged into one validated
//! value ([`Settings`]), checked once before anything is created. Every check gives a
//! one-line usage error (exit 2) that says what was wrong and what to pass instead.

use std::path::{Path, PathBuf};
use std::time::Duration;

use deepr_stages::{Depth, Strategy};

use crate::record::{self, Simulation};
use crate::{config, state, usage, BudgetArgs, Failure, Globals, RunArgs};
use deepr_orchestrator::simulate::{Latency, ModelLatency};

const MAX_TOPIC_CHARS: usize = 2000;

/// `--io-concurrency` (or `io_concurrency` in the config) must be 1 to 64.
/// `--concurrency`: parallel steps, 1 to 64 (checked here only).
pub fn check_concurrency(value: usize) -> Result<usize, Failure> {
    if (1..=64).contains(&value) {
        Ok(value)
    } else {
        Err(usage(format!(
            "--concurrency {value} is out of range; use 1 to 64"
        )))
    }
}

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
    /// Fleet mode: the database the run is queued in (`--db`, `DEEPR_DB` or the
    /// config file's `db`), read with the rest of the settings.
    pub db: Option<String>,
    pub depth: Depth,
    pub strategy: Strategy,
    /// How a model extractor reads (`--reading`, else the config file's, else ranked).
    pub reading: deepr_settings::Reading,
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
    /// `--plan FILE`'s subquestions, researched as written.
    pub user_plan: Option<Vec<deepr_settings::PlannedQuestion>>,
}

impl Settings {
    /// How the run's model extractor reads; `None` for the offline model, which reads
    /// its ranked share whatever `--reading` says (and triages without a call).
    pub fn model_reading(&self) -> Option<deepr_settings::Reading> {
        match deepr_providers::llm_spec::LlmSpec::parse(&self.llm_cheap) {
            Ok(deepr_providers::llm_spec::LlmSpec::Offline) => None,
            _ => Some(self.reading),
        }
    }
}

pub fn validate(globals: &Globals, args: &RunArgs) -> Result<Settings, Failure> {
    let file = config::load(globals.config.as_deref())?;
    let (topic, depth, user_plan) = match &args.plan {
        Some(path) => planned(path, args)?,
        None => (
            check_topic(args.topic.as_deref().unwrap_or_default())?,
            depth_of(args.depth, file.depth),
            None,
        ),
    };
    let strategy = strategy_of(args.strategy, file.strategy);
    let db = crate::fleet::db_url_in(globals, &file);
    let models = models_of(args, &file, db.is_some())?;
    let prices = deepr_providers::PriceTable::with_overrides(&file.prices)
        .map_err(|e| usage(format!("config prices: {e}")))?;
    let price_as = args.price_as.clone().or(file.price_as.clone());
    if let Some(model) = &price_as {
        if prices.price(model).is_none() {
            let known: Vec<&String> = prices.models.keys().collect();
            return Err(usage(format!("--price-as {model:?} has no price; known: {known:?} (add it under [prices] in deepr.toml)")));
        }
    }
    let concurrency = check_concurrency(
        args.concurrency
            .or(file.concurrency)
            .unwrap_or(deepr_stages::concurrent::DEFAULT_CONCURRENCY),
    )?;
    let io_concurrency = check_io_concurrency(
        args.io_concurrency
            .or(file.io_concurrency)
            .unwrap_or(deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY),
    )?;
    let (sources, source_urls) = sources_of(args)?;
    check_allow_hosts(&args.allow_hosts)?;
    let out = out_of(args.out.as_deref(), &topic)?;
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    let run_id = state::chosen_run_id(args.run_id.as_deref(), &topic)?;
    let simulation = crate::settings::simulation(&args.simulation, &file)?;
    let max_time = check_budget_values(&args.budget)?;
    let prompts = args
        .prompts
        .clone()
        .or(file.prompts.clone().map(PathBuf::from));
    if let Some(dir) = &prompts {
        crate::wiring::load_prompts(Some(dir))?;
    }
    Ok(Settings {
        topic,
        db,
        depth,
        strategy,
        reading: args.reading.or(file.reading).unwrap_or_default(),
        concurrency,
        io_concurrency,
        corpus: args.corpus.clone(),
        sources,
        source_urls,
        out,
        run_id,
        state_dir,
        simulation,
        prompts,
        max_time,
        llm_strong: models.strong,
        llm_cheap: models.cheap,
        llm_base_url: models.base_url,
        price_as,
        limits: file.limits.clone().unwrap_or_default(),
        prices: file.prices.clone(),
        user_plan,
    })
}

/// `--plan FILE`: the plan's topic, depth and subquestions. A topic or `--depth` also
/// given must agree with the plan (which one would win is not for deepr to guess).
fn planned(
    path: &Path,
    args: &RunArgs,
) -> Result<(String, Depth, Option<Vec<deepr_settings::PlannedQuestion>>), Failure> {
    let shown = path.display();
    let text = read_plan_file(path)?;
    let plan =
        deepr_settings::parse_plan(&text).map_err(|e| usage(format!("--plan {shown}: {e}")))?;
    let topic = check_topic(&plan.topic).map_err(|e| usage(format!("--plan {shown}: {e}")))?;
    if let Some(given) = &args.topic {
        let same = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        if same(given) != same(&topic) {
            return Err(usage(format!("the topic given differs from the one in --plan {shown}; drop it (the plan's is researched) or edit the plan's topic")));
        }
    }
    if let Some(flag) = args.depth {
        let given = flag;
        if given != plan.depth {
            return Err(usage(format!(
                "--depth {} differs from depth = \"{}\" in --plan {shown}; drop --depth or edit the plan",
                given.as_str(),
                plan.depth.as_str()
            )));
        }
    }
    Ok((topic, plan.depth, Some(plan.subquestions)))
}

/// A plan file's text, read only when it is small enough to be a plan.
fn read_plan_file(path: &Path) -> Result<String, Failure> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| {
        usage(format!(
            "cannot read --plan {shown}: {e}; pass the plan.toml --plan-only wrote"
        ))
    })?;
    let mut bytes = Vec::new();
    let limit = deepr_settings::plan::MAX_PLAN_BYTES;
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| usage(format!("cannot read --plan {shown}: {e}")))?;
    if bytes.len() > limit {
        return Err(usage(format!(
            "--plan {shown} is over {limit} bytes; a plan is a page (write it again with --plan-only)"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| usage(format!("--plan {shown} is not UTF-8 text; a plan is TOML")))
}

/// Where `--plan-only` writes the plan: `plan.toml` beside the report. An existing
/// one (maybe edited) is never overwritten.
pub fn plan_path(out: &Path) -> Result<PathBuf, Failure> {
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

/// The topic, trimmed: not empty, not too long, no control characters.
pub fn check_topic(topic: &str) -> Result<String, Failure> {
    let topic = topic.trim().to_string();
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
    Ok(topic)
}

/// `--depth`, else the config file's `depth` (typed when the file was read), else
/// standard.
fn depth_of(flag: Option<Depth>, file: Option<Depth>) -> Depth {
    flag.or(file).unwrap_or(Depth::Standard)
}

/// `--strategy`, else the config file's `strategy`, else linear.
fn strategy_of(flag: Option<Strategy>, file: Option<Strategy>) -> Strategy {
    flag.or(file).unwrap_or(Strategy::Linear)
}

/// The run's models and the base URL of an OpenAI-compatible server.
struct Models {
    strong: String,
    cheap: String,
    base_url: Option<String>,
}

/// The strong and cheap models (flags win over the config file; `--llm` sets both),
/// each parsed and, outside fleet mode, its credentials present.
fn models_of(args: &RunArgs, file: &config::FileConfig, fleet: bool) -> Result<Models, Failure> {
    let llm = args
        .llm
        .clone()
        .or(file.llm.clone())
        .unwrap_or_else(|| "offline".into());
    let pick = |flag: &Option<String>, key: &Option<String>| {
        flag.clone()
            .or(args.llm.clone())
            .or(key.clone())
            .unwrap_or_else(|| llm.clone())
    };
    let strong = pick(&args.llm_strong, &file.llm_strong);
    let cheap = pick(&args.llm_cheap, &file.llm_cheap);
    let base_url = args.llm_base_url.clone().or(file.llm_base_url.clone());
    // In fleet mode the workers' keys count, not the submitter's (keys never travel).
    for spec in [&strong, &cheap] {
        let parsed = deepr_providers::LlmSpec::parse(spec).map_err(usage)?;
        if !fleet {
            crate::wiring::check_credentials(&parsed, base_url.as_deref())?;
        }
    }
    if let Some(base) = &base_url {
        if !is_http_url(base) {
            return Err(usage(format!(
                "--llm-base-url {base:?} is not an http(s) URL; e.g. http://127.0.0.1:8080/v1"
            )));
        }
    }
    Ok(Models {
        strong,
        cheap,
        base_url,
    })
}

fn is_http_url(text: &str) -> bool {
    url::Url::parse(text)
        .map(|u| matches!(u.scheme(), "http" | "https"))
        .unwrap_or(false)
}

/// The search sources (default: the corpus when one is given, else Wikipedia, arXiv
/// and HN) and their configured base URLs, each usable: known, with a base URL where
/// it has no default, and with its key in the environment.
fn sources_of(
    args: &RunArgs,
) -> Result<(Vec<String>, std::collections::BTreeMap<String, String>), Failure> {
    let sources: Vec<String> = match &args.sources {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None if args.corpus.is_some() => vec!["corpus".to_string()],
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
            if !is_http_url(url) {
                return Err(usage(format!("--{name}-url {url:?} is not an http(s) URL")));
            }
            source_urls.insert(name.to_string(), url.clone());
        }
    }
    for source in &sources {
        if source == "corpus" {
            if args.corpus.is_none() {
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
    Ok((sources, source_urls))
}

/// Every `--allow-host` is `HOST` or `HOST:PORT`.
fn check_allow_hosts(hosts: &[String]) -> Result<(), Failure> {
    for host in hosts {
        if host.is_empty() || host.contains('/') || host.chars().any(char::is_whitespace) {
            return Err(usage(format!(
                "--allow-host {host:?} is not HOST or HOST:PORT"
            )));
        }
    }
    Ok(())
}

/// The report's path: `--out`, else the topic's slug `.md`; a file path, not a folder.
pub fn out_of(out: Option<&Path>, topic: &str) -> Result<PathBuf, Failure> {
    let out = match out {
        Some(out) => out.to_path_buf(),
        None => PathBuf::from(format!("{}.md", state::slug(topic))),
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
    Ok(out)
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

/// The run's simulated latencies: flags (which win) and the config file; every latency
/// is checked here, once.
pub fn simulation(
    args: &crate::SimulationArgs,
    file: &crate::config::FileConfig,
) -> Result<Simulation, Failure> {
    let pick = |flag: &Option<String>, key: &Option<String>| flag.clone().or(key.clone());
    let simulation = Simulation {
        offline: pick(&args.offline_latency, &file.offline_latency),
        search: pick(&args.search_latency, &file.search_latency),
        fetch: pick(&args.fetch_latency, &file.fetch_latency),
        seed: args.latency_seed.or(file.latency_seed).unwrap_or(0),
    };
    if let Some(text) = &simulation.offline {
        ModelLatency::parse(text).map_err(|e| {
            usage(format!(
                "--offline-latency: {e}; e.g. 200ms or 800ms+60tok/s"
            ))
        })?;
    }
    for (flag, value) in [
        ("--search-latency", &simulation.search),
        ("--fetch-latency", &simulation.fetch),
    ] {
        if let Some(text) = value {
            Latency::parse(text).map_err(|e| {
                usage(format!(
                    "{flag}: {e}; e.g. 400ms, 300ms..900ms or 600ms~200ms"
                ))
            })?;
        }
    }
    Ok(simulation)
}
