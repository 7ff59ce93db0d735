//! A run request validated once, before anything is created: the flag, else the
//! environment, else the config file, else the default, for every value — then the
//! run's record built from them ([`ValidRun`]). Every check gives a one-line usage
//! error (exit 2) that says what was wrong and what to pass instead.

use std::path::{Path, PathBuf};
use std::time::Duration;

use deepr_orchestrator::simulate::{Latency, ModelLatency};
use deepr_settings::FileConfig;
use deepr_stages::research::PlannedQuestion;
use deepr_stages::{Depth, Strategy};

use super::{Budget, Globals, Latencies, RunRequest};
use crate::record::{self, now_secs, RunRecord, Simulation};
use crate::{state, usage, Failure};

const MAX_TOPIC_CHARS: usize = 2000;

/// A request that passed every check: the run's record, and what only starting it
/// needs (where runs live, the fleet database, the time budget).
#[derive(Debug)]
pub struct ValidRun {
    pub record: RunRecord,
    pub state_dir: PathBuf,
    /// Fleet mode: the database the run is queued in (`--db`, `DEEPR_DB` or the config
    /// file's `db`).
    pub db: Option<String>,
    /// `--max-time`, parsed.
    pub max_time: Option<Duration>,
}

/// The request, merged with the environment and the config file, checked, and built
/// into the run's record.
pub fn validate(globals: &Globals, request: &RunRequest) -> Result<ValidRun, Failure> {
    let file = super::load_config(globals.config.as_deref())?;
    let (topic, depth, user_plan) = match &request.plan {
        Some(path) => planned(path, request)?,
        None => (
            check_topic(request.topic.as_deref().unwrap_or_default())?,
            request.depth.or(file.depth).unwrap_or(Depth::Standard),
            None,
        ),
    };
    let strategy = request
        .strategy
        .or(file.strategy)
        .unwrap_or(Strategy::Linear);
    let db = db_url_in(globals, &file);
    let models = models_of(request, &file, db.is_some())?;
    let price_as = check_price_as(request, &file)?;
    let concurrency = check_concurrency(
        request
            .concurrency
            .or(file.concurrency)
            .unwrap_or(deepr_stages::concurrent::DEFAULT_CONCURRENCY),
    )?;
    let io_concurrency = check_io_concurrency(
        request
            .io_concurrency
            .or(file.io_concurrency)
            .unwrap_or(deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY),
    )?;
    check_model_pool(request.model_pool)?;
    let (sources, source_urls) = sources_of(request)?;
    check_allow_hosts(&request.allow_hosts)?;
    let out = out_of(request.out.as_deref(), &topic)?;
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    let run_id = state::chosen_run_id(request.run_id.as_deref(), &topic)?;
    let simulation = simulation_of(&request.latencies, &file)?;
    let max_time = check_budget(&request.budget)?;
    let prompts = request
        .prompts
        .clone()
        .or(file.prompts.clone().map(PathBuf::from));
    if let Some(dir) = &prompts {
        crate::wiring::load_prompts(Some(dir))?;
    }
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut record = RunRecord {
        schema: record::RECORD_SCHEMA.into(),
        run_id,
        brief: record::brief_of(&topic),
        topic,
        depth,
        strategy,
        corpus: request.corpus.as_deref().map(absolute),
        sources,
        source_urls,
        allow_hosts: request.allow_hosts.clone(),
        out: absolute(&out),
        llm_strong: models.strong,
        llm_cheap: models.cheap,
        llm_base_url: models.base_url,
        price_as,
        limits: file.limits.clone().unwrap_or_default(),
        prices: file.prices.clone(),
        concurrency,
        offline_latency_ms: 0,
        prompts: prompts.as_deref().map(absolute),
        created: now_secs(),
        cache_namespace: String::new(),
        search_latency_ms: 0,
        fetch_latency_ms: 0,
        simulation,
        io_concurrency,
        follow_links: request.follow_links,
        model_pool: request.model_pool,
        reading: request.reading.or(file.reading).unwrap_or_default(),
        formats: super::extra_files(&request.formats),
        embed: None,
        user_plan,
        plan_only: None,
        lineage: None,
    };
    // The means, for readers of older records; the distributions are in `simulation`.
    record.offline_latency_ms = record::mean_ms(&record.model_latency()?.first_token);
    record.search_latency_ms = record::mean_ms(&record.search_latency()?);
    record.fetch_latency_ms = record::mean_ms(&record.fetch_latency()?);
    Ok(ValidRun {
        record,
        state_dir,
        db,
        max_time,
    })
}

/// The fleet database: `--db`, else `DEEPR_DB`, else the config file's `db`.
pub fn db_url(globals: &Globals) -> Result<Option<String>, Failure> {
    let file = super::load_config(globals.config.as_deref())?;
    Ok(db_url_in(globals, &file))
}

/// [`db_url`] with the config file already read.
pub fn db_url_in(globals: &Globals, file: &FileConfig) -> Option<String> {
    if let Some(url) = globals.db.as_ref().filter(|u| !u.is_empty()) {
        return Some(url.clone());
    }
    if let Some(url) = std::env::var("DEEPR_DB").ok().filter(|u| !u.is_empty()) {
        return Some(url);
    }
    file.db.clone()
}

/// `--concurrency`: parallel steps, 1 to 64.
pub fn check_concurrency(value: usize) -> Result<usize, Failure> {
    if (1..=64).contains(&value) {
        Ok(value)
    } else {
        Err(usage(format!(
            "--concurrency {value} is out of range; use 1 to 64"
        )))
    }
}

/// `--io-concurrency` (or `io_concurrency` in the config): 1 to 64.
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

/// `--model-pool`: 1 to 200 candidates.
fn check_model_pool(value: usize) -> Result<(), Failure> {
    match (1..=200).contains(&value) {
        true => Ok(()),
        false => Err(usage(format!(
            "--model-pool {value} is out of range; use 1 to 200"
        ))),
    }
}

/// `--price-as`, else the config file's: a model the price table knows.
fn check_price_as(request: &RunRequest, file: &FileConfig) -> Result<Option<String>, Failure> {
    let prices = deepr_providers::PriceTable::with_overrides(&file.prices)
        .map_err(|e| usage(format!("config prices: {e}")))?;
    let price_as = request.price_as.clone().or(file.price_as.clone());
    if let Some(model) = &price_as {
        if prices.price(model).is_none() {
            let known: Vec<&String> = prices.models.keys().collect();
            return Err(usage(format!("--price-as {model:?} has no price; known: {known:?} (add it under [prices] in deepr.toml)")));
        }
    }
    Ok(price_as)
}

/// `--plan FILE`: the plan's topic, depth and subquestions. A topic or `--depth` also
/// given must agree with the plan (which one would win is not for deepr to guess).
fn planned(
    path: &Path,
    request: &RunRequest,
) -> Result<(String, Depth, Option<Vec<PlannedQuestion>>), Failure> {
    let shown = path.display();
    let text = read_plan_file(path)?;
    let plan =
        deepr_settings::parse_plan(&text).map_err(|e| usage(format!("--plan {shown}: {e}")))?;
    let topic = check_topic(&plan.topic).map_err(|e| usage(format!("--plan {shown}: {e}")))?;
    if let Some(given) = &request.topic {
        let same = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        if same(given) != same(&topic) {
            return Err(usage(format!("the topic given differs from the one in --plan {shown}; drop it (the plan's is researched) or edit the plan's topic")));
        }
    }
    if let Some(given) = request.depth {
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

/// The run's models and the base URL of an OpenAI-compatible server.
struct Models {
    strong: String,
    cheap: String,
    base_url: Option<String>,
}

/// The strong and cheap models (flags win over the config file; `--llm` sets both),
/// each parsed and, outside fleet mode, its credentials present.
fn models_of(request: &RunRequest, file: &FileConfig, fleet: bool) -> Result<Models, Failure> {
    let llm = request
        .llm
        .clone()
        .or(file.llm.clone())
        .unwrap_or_else(|| "offline".into());
    let pick = |flag: &Option<String>, key: &Option<String>| {
        flag.clone()
            .or(request.llm.clone())
            .or(key.clone())
            .unwrap_or_else(|| llm.clone())
    };
    let strong = pick(&request.llm_strong, &file.llm_strong);
    let cheap = pick(&request.llm_cheap, &file.llm_cheap);
    let base_url = request.llm_base_url.clone().or(file.llm_base_url.clone());
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

type Sources = (Vec<String>, std::collections::BTreeMap<String, String>);

/// The search sources (default: the corpus when one is given, else Wikipedia, arXiv
/// and HN) and their configured base URLs, each usable: known, with a base URL where
/// it has no default, and with its key in the environment.
fn sources_of(request: &RunRequest) -> Result<Sources, Failure> {
    let sources: Vec<String> = match &request.sources {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None if request.corpus.is_some() => vec!["corpus".to_string()],
        None => vec!["wikipedia".into(), "arxiv".into(), "hn".into()],
    };
    if sources.is_empty() {
        return Err(usage(
            "--sources is empty; e.g. --sources wikipedia,arxiv,hn or --sources corpus",
        ));
    }
    let mut source_urls = std::collections::BTreeMap::new();
    for (name, flag) in request.source_urls.pairs() {
        if let Some(url) = flag {
            if !is_http_url(url) {
                return Err(usage(format!("--{name}-url {url:?} is not an http(s) URL")));
            }
            source_urls.insert(name.to_string(), url.clone());
        }
    }
    for source in &sources {
        check_source(source, request.corpus.is_some(), &source_urls)?;
    }
    Ok((sources, source_urls))
}

/// One source is usable: known, with a base URL where it has no default, with its key
/// in the environment; `corpus` only with a corpus.
fn check_source(
    source: &str,
    has_corpus: bool,
    source_urls: &std::collections::BTreeMap<String, String>,
) -> Result<(), Failure> {
    if source == "corpus" {
        return match has_corpus {
            true => Ok(()),
            false => Err(usage("--sources corpus needs --corpus DIR")),
        };
    }
    let api = deepr_providers::WebApi::parse(source).ok_or_else(|| {
        usage(format!(
            "source {source:?} is unknown; use {}",
            crate::wiring::source_names().join(", ")
        ))
    })?;
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
    Ok(())
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

/// The corpus folder exists, is a folder and can be read (the corpus index's own check).
pub fn check_corpus(corpus: &Path) -> Result<(), Failure> {
    deepr_providers::corpus::check_corpus_folder(corpus)
        .map(|_| ())
        .map_err(|e| usage(e.to_string()))
}

/// The folder of `--out`, created.
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

/// The budget values are positive; returns `--max-time` parsed (run and resume alike).
pub fn check_budget(budget: &Budget) -> Result<Option<Duration>, Failure> {
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

/// The run's simulated latencies: the request's (which win) and the config file's;
/// every latency is checked here, once.
pub fn simulation_of(asked: &Latencies, file: &FileConfig) -> Result<Simulation, Failure> {
    let pick = |flag: &Option<String>, key: &Option<String>| flag.clone().or(key.clone());
    let simulation = Simulation {
        offline: pick(&asked.offline_latency, &file.offline_latency),
        search: pick(&asked.search_latency, &file.search_latency),
        fetch: pick(&asked.fetch_latency, &file.fetch_latency),
        seed: asked.latency_seed.or(file.latency_seed).unwrap_or(0),
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
