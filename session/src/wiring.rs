//! Wiring: from a run's record to what its pipeline talks to — per tier the model
//! stack (model → prices → budget → response cache + call journal), the heuristic
//! fallback, the search providers and fetchers (with simulated latencies when set),
//! the prompts — and the fingerprint of what is searched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use deepr_checkpoints::{AnswerCache, CachedLlm, CallJournal, CallLog, FileArchive, ResponseCache};
use deepr_orchestrator::clock::{Clock, TokioClock};
use deepr_orchestrator::{Budget, BudgetedLlm, LlmProvider};
use deepr_prompts::PromptSet;
use deepr_providers::llm::Api;
use deepr_providers::{CorpusFetcher, CorpusIndex, CorpusSearch, LlmSpec, RemoteLlm};
use deepr_stages::ResearchProviders;

use crate::record::RunRecord;
use crate::{usage, Failure};

pub use crate::credentials::{check_credentials, key_variable};

/// This session's budget limits (`--max-tokens`, `--max-cost`, `--max-time`).
pub struct BudgetLimits {
    pub max_tokens: Option<u64>,
    pub max_cost: Option<f64>,
    pub max_time: Option<Duration>,
}

/// What a session runs the pipeline with.
pub struct Wiring {
    pub providers: ResearchProviders,
    /// The run's budget, shared by every model call (and stopped on by the executor).
    pub budget: Arc<Budget>,
    pub search_fingerprint: String,
}

/// On a fleet worker: the fleet's response cache and call journal, and what the run
/// spent before this session (on any worker), in place of the local files.
pub struct SharedCalls {
    pub answers: Arc<dyn AnswerCache>,
    pub calls: Arc<dyn CallLog>,
    pub spent: (u64, f64),
    /// Provider rate limits held for the whole fleet.
    pub rate: Arc<dyn deepr_orchestrator::SharedRateGate>,
}

/// What a fleet worker gives a session in place of the run's local store, response
/// cache, journal and signal handling.
pub struct FleetLink {
    /// The run's checkpoints in the fleet database, written under the worker's claim.
    pub store: Arc<dyn deepr_orchestrator::CheckpointStore>,
    pub answers: Arc<dyn deepr_checkpoints::AnswerCache>,
    pub calls: Arc<dyn deepr_checkpoints::CallLog>,
    /// Provider rate limits held for the whole fleet.
    pub rate: Arc<dyn deepr_orchestrator::SharedRateGate>,
    /// The fleet's copy of archived texts (written through, read on a local miss).
    pub archive: Arc<dyn deepr_checkpoints::ArchiveMirror>,
    /// Tokens and dollars the run spent in earlier sessions, on any worker.
    pub spent: (u64, f64),
    /// Where this worker writes the reports (the run's own `--out` may not exist here).
    pub out: std::path::PathBuf,
    /// Set by the worker (Ctrl-C, a lost lease): stop starting steps.
    pub stop: Arc<AtomicBool>,
}

/// Build the providers of one session of `record`.
pub fn wire(
    record: &RunRecord,
    state_dir: &Path,
    dir: &Path,
    limits: &BudgetLimits,
    archive: &Arc<FileArchive>,
    index: Option<Arc<CorpusIndex>>,
    shared: Option<SharedCalls>,
) -> Result<Wiring, Failure> {
    let search_fingerprint = search_fingerprint(record, index.as_deref());
    let prompts = Arc::new(load_prompts(record.prompts.as_deref())?);
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let cache = Arc::new(ResponseCache::open(state_dir).context("cannot open the response cache")?);
    let calls = Calls::open(dir, &cache, shared)?;
    let budget = Budget::new(
        limits.max_tokens,
        limits.max_cost,
        limits.max_time,
        calls.spent.0,
        calls.spent.1,
        Arc::clone(&clock),
    );
    let (strong, cheap) = models(record, &budget, &calls)?;
    let web_cache = deepr_providers::WebCache {
        cache: Arc::clone(&cache),
        namespace: record.run_id.clone(),
    };
    let earlier = earlier_documents(record, archive.as_ref())?;
    let search = search_providers(record, index.as_ref(), earlier.as_ref(), &web_cache, &clock)?;
    let mut fetcher = fetcher(record, index.as_ref(), archive, &web_cache, &clock)?;
    if let Some(read) = earlier {
        // What the parent read is served from the archive, never fetched again.
        fetcher = Arc::new(deepr_providers::ArchivedFirst {
            read,
            inner: fetcher,
        });
    }
    let providers = ResearchProviders {
        strong,
        cheap,
        // An unusable answer is replaced by the heuristic's: local, free, instant.
        fallback: Arc::new(deepr_heuristic::HeuristicModel::default()),
        search,
        fetcher,
        archive: archive.clone(),
        prompts,
        clock,
        embedder: crate::embedder::recorded_embedder(
            record,
            &state_dir.join("cache").join("embed"),
        )?,
    };
    Ok(Wiring {
        providers,
        budget,
        search_fingerprint,
    })
}

/// Where a session's model answers and calls go: the local response cache and call
/// journal, or on a fleet worker the fleet's; and what the run spent before.
struct Calls {
    answers: Arc<dyn AnswerCache>,
    journal: Arc<dyn CallLog>,
    rate: Option<Arc<dyn deepr_orchestrator::SharedRateGate>>,
    /// Tokens and dollars spent in earlier sessions.
    spent: (u64, f64),
}

impl Calls {
    fn open(
        dir: &Path,
        cache: &Arc<ResponseCache>,
        shared: Option<SharedCalls>,
    ) -> Result<Self, Failure> {
        if let Some(shared) = shared {
            return Ok(Self {
                answers: shared.answers,
                journal: shared.calls,
                rate: Some(shared.rate),
                spent: shared.spent,
            });
        }
        let journal_path = dir.join("calls.jsonl");
        Ok(Self {
            spent: CallJournal::spent(&journal_path),
            answers: Arc::clone(cache) as Arc<dyn AnswerCache>,
            journal: Arc::new(
                CallJournal::open(&journal_path).context("cannot open the call journal")?,
            ),
            rate: None,
        })
    }
}

/// A model behind its stack (limits, cache, journal, pricing).
type Model = Arc<dyn LlmProvider>;

/// The strong and the cheap model, each behind its stack (one provider, one limiter,
/// when both tiers use the same model).
fn models(
    record: &RunRecord,
    budget: &Arc<Budget>,
    calls: &Calls,
) -> Result<(Model, Model), Failure> {
    let prices = Arc::new(
        deepr_providers::PriceTable::with_overrides(&record.prices)
            .map_err(|e| usage(format!("config prices: {e}")))?,
    );
    let mut models: BTreeMap<String, Arc<dyn LlmProvider>> = BTreeMap::new();
    for spec in [&record.llm_strong, &record.llm_cheap] {
        if models.contains_key(spec.as_str()) {
            continue;
        }
        let model = model_stack(
            record,
            spec,
            budget,
            &calls.answers,
            &calls.journal,
            &prices,
            calls.rate.as_ref(),
        )?;
        models.insert(spec.clone(), model);
    }
    let strong = Arc::clone(&models[record.llm_strong.as_str()]);
    let cheap = Arc::clone(&models[record.llm_cheap.as_str()]);
    Ok((strong, cheap))
}

/// Time limit of one search or fetch call.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A follow-up's parent documents (`deepr ask`), indexed from the archive; `None`
/// for every other run.
fn earlier_documents(
    record: &RunRecord,
    archive: &FileArchive,
) -> Result<Option<Arc<deepr_providers::ReadBefore>>, Failure> {
    let Some(lineage) = record.lineage.as_ref().filter(|l| !l.documents.is_empty()) else {
        return Ok(None);
    };
    let (read, missing) =
        deepr_providers::ReadBefore::new(&lineage.documents, archive).map_err(|e| {
            Failure::Run(anyhow::anyhow!(
                "cannot index run {}'s documents: {e}",
                lineage.parent
            ))
        })?;
    if read.is_empty() {
        return Err(usage(format!(
            "the archive no longer holds any document run {} read ({missing} missing); ask with --search to search its sources again",
            lineage.parent
        )));
    }
    Ok(Some(Arc::new(read)))
}

/// One search provider per recorded source (the corpus, a web API, or a follow-up's
/// parent documents: `earlier`), each behind its simulated latency when the run has one.
fn search_providers(
    record: &RunRecord,
    index: Option<&Arc<CorpusIndex>>,
    earlier: Option<&Arc<deepr_providers::ReadBefore>>,
    web_cache: &deepr_providers::WebCache,
    clock: &Arc<dyn Clock>,
) -> Result<Vec<Arc<dyn deepr_orchestrator::SearchProvider>>, Failure> {
    let search_latency = record.search_latency()?;
    let mut searches: Vec<Arc<dyn deepr_orchestrator::SearchProvider>> = Vec::new();
    for source in &record.sources {
        let provider: Arc<dyn deepr_orchestrator::SearchProvider> =
            if source == deepr_providers::EARLIER {
                let Some(read) = earlier else {
                    return Err(usage(
                        "source \"earlier\" belongs to a follow-up (deepr ask RUN_ID QUESTION)",
                    ));
                };
                Arc::clone(read) as Arc<dyn deepr_orchestrator::SearchProvider>
            } else if source == "corpus" {
                let Some(index) = index else {
                    return Err(usage("--sources corpus needs --corpus DIR"));
                };
                Arc::new(CorpusSearch(Arc::clone(index)))
            } else {
                let api = deepr_providers::WebApi::parse(source).ok_or_else(|| {
                    usage(format!(
                        "source {source:?} is unknown; use {}",
                        source_names().join(", ")
                    ))
                })?;
                let key = api.key_var().and_then(|var| std::env::var(var).ok());
                Arc::new(
                    deepr_providers::WebSearch::new(
                        api,
                        record.source_urls.get(source).map(String::as_str),
                        key,
                        CALL_TIMEOUT,
                    )
                    .map_err(usage)?
                    .with_cache(web_cache.clone()),
                )
            };
        searches.push(if !search_latency.is_zero() {
            Arc::new(deepr_orchestrator::simulate::SlowSearch {
                inner: provider,
                latency: search_latency,
                seed: record.simulation.seed,
                clock: Arc::clone(clock),
            })
        } else {
            provider
        });
    }
    Ok(searches)
}

/// The fetcher: corpus documents from the index, web pages through the guarded web
/// fetcher (only when a web source is used), behind the simulated latency if any.
fn fetcher(
    record: &RunRecord,
    index: Option<&Arc<CorpusIndex>>,
    archive: &Arc<FileArchive>,
    web_cache: &deepr_providers::WebCache,
    clock: &Arc<dyn Clock>,
) -> Result<Arc<dyn deepr_orchestrator::Fetcher>, Failure> {
    let corpus_fetcher: Option<Arc<dyn deepr_orchestrator::Fetcher>> = index
        .map(|i| Arc::new(CorpusFetcher(Arc::clone(i))) as Arc<dyn deepr_orchestrator::Fetcher>);
    let web_fetcher: Option<Arc<dyn deepr_orchestrator::Fetcher>> = if record
        .sources
        .iter()
        .any(|s| s != "corpus" && s != deepr_providers::EARLIER)
    {
        Some(Arc::new(
            deepr_providers::WebFetcher::new(
                archive.clone(),
                record.allow_hosts.clone(),
                CALL_TIMEOUT,
                20 << 20,
                8,
            )
            .map_err(|e| Failure::Run(anyhow::anyhow!(e)))?
            .with_cache(web_cache.clone()),
        ))
    } else {
        None
    };
    let mut fetcher: Arc<dyn deepr_orchestrator::Fetcher> =
        Arc::new(deepr_providers::RoutingFetcher {
            corpus: corpus_fetcher,
            web: web_fetcher,
        });
    let fetch_latency = record.fetch_latency()?;
    if !fetch_latency.is_zero() {
        fetcher = Arc::new(deepr_orchestrator::simulate::SlowFetcher {
            inner: fetcher,
            latency: fetch_latency,
            seed: record.simulation.seed,
            clock: Arc::clone(clock),
        });
    }
    Ok(fetcher)
}

/// What identifies what the search providers search: every corpus document's key,
/// content hash, title, date and outline (everything a stage reads of a document), and
/// each web source with its base URL. A change recomputes retrieval and what follows.
pub fn search_fingerprint(record: &RunRecord, index: Option<&CorpusIndex>) -> String {
    let mut fingerprint = blake3::Hasher::new();
    for doc in index.map(CorpusIndex::documents).unwrap_or_default() {
        let outline = serde_json::to_string(&doc.outline).unwrap_or_default();
        for part in [
            doc.doc_key.as_str(),
            &doc.content_sha256,
            &doc.title,
            doc.date.as_deref().unwrap_or(""),
            &outline,
        ] {
            fingerprint.update(part.as_bytes());
            fingerprint.update(b"\0");
        }
    }
    // A follow-up searches what its parent read: those texts, by content hash.
    for doc in record.lineage.iter().flat_map(|l| &l.documents) {
        fingerprint.update(format!("earlier:{}:{}\0", doc.locator, doc.content_sha256).as_bytes());
    }
    for source in &record.sources {
        fingerprint.update(
            format!(
                "source:{source}:{}\0",
                record
                    .source_urls
                    .get(source)
                    .map(String::as_str)
                    .unwrap_or("")
            )
            .as_bytes(),
        );
    }
    fingerprint.finalize().to_hex().to_string()
}

/// The built-in prompts with the run's overrides (`<id>.txt` in its prompts folder).
pub fn load_prompts(dir: Option<&Path>) -> Result<PromptSet, Failure> {
    let mut prompts = PromptSet::default();
    let Some(dir) = dir else { return Ok(prompts) };
    let entries = std::fs::read_dir(dir).map_err(|e| {
        usage(format!(
            "cannot read prompts folder {}: {e}; check the --prompts path",
            dir.display()
        ))
    })?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    for file in files {
        let id = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let text = std::fs::read_to_string(&file)
            .map_err(|e| usage(format!("cannot read prompt {}: {e}", file.display())))?;
        prompts
            .set_template(&id, text)
            .map_err(|e| usage(format!("{}: {e}", file.display())))?;
    }
    Ok(prompts)
}

/// One tier's model: the model itself, priced, budgeted, cached and journaled.
fn model_stack(
    record: &RunRecord,
    spec_text: &str,
    budget: &Arc<Budget>,
    cache: &Arc<dyn AnswerCache>,
    journal: &Arc<dyn CallLog>,
    prices: &Arc<deepr_providers::PriceTable>,
    rate: Option<&Arc<dyn deepr_orchestrator::SharedRateGate>>,
) -> Result<Arc<dyn LlmProvider>, Failure> {
    let spec = LlmSpec::parse(spec_text).map_err(usage)?;
    check_credentials(&spec, record.llm_base_url.as_deref())?;
    let model: Arc<dyn LlmProvider> = match &spec {
        LlmSpec::Offline => Arc::new(deepr_heuristic::HeuristicModel {
            latency: record.model_latency()?,
            latency_seed: record.simulation.seed,
        }),
        LlmSpec::Remote { api, provider, .. } => {
            let (key_var, base_var) = match api {
                Api::OpenAi => ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
                Api::Anthropic => ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
            };
            let env_base = if provider == "ollama" {
                None
            } else {
                std::env::var(base_var).ok().filter(|v| !v.is_empty())
            };
            let base = record.llm_base_url.clone().or(env_base);
            let key = if provider == "ollama" {
                None
            } else {
                std::env::var(key_var).ok()
            };
            let remote = RemoteLlm::new(&spec, base.as_deref(), key, record.limits.clone())
                .map_err(usage)?;
            Arc::new(match rate {
                Some(gate) => remote.with_shared_limits(Arc::clone(gate)),
                None => remote,
            })
        }
    };
    let priced = Arc::new(deepr_providers::PricedLlm {
        inner: model,
        table: Arc::clone(prices),
        price_as: record.price_as.clone(),
    });
    let budgeted = Arc::new(BudgetedLlm {
        inner: priced,
        budget: Arc::clone(budget),
    });
    Ok(Arc::new(CachedLlm {
        inner: budgeted,
        cache: Arc::clone(cache),
        journal: Some(Arc::clone(journal)),
        namespace: record.cache_namespace.clone(),
    }))
}

/// Every source a run may search, by name: the corpus and each web search API (the
/// request validates `--sources` against it; wiring names it in its errors).
pub fn source_names() -> Vec<&'static str> {
    std::iter::once("corpus")
        .chain(deepr_providers::WebApi::ALL.iter().map(|api| api.name()))
        .collect()
}
